//! The action catalog: every action the extension serves, with what an MCP
//! client needs to call it. The gateway builds its tool list from this (read
//! through `neotoma.action_catalog()`), so adding an action never touches it.

use crate::actions::{
    analytics, annotations, bulk, contests, contradictions, duplicates, engram, entities, graph,
    graphmem, legacy, lifecycle, memory_server, metrics, plaid, providers, reclassify, resources,
    schemas, store, subgraph, system, workspace_server, workspaces,
};
use crate::canonical::{canonical_json, sha256_hex};
use crate::request::schema_for;
use crate::tool_sets::{ToolGroup, ToolSet};
use crate::workspace::{Requested, WorkspaceContext};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// Version of the MCP contract this catalog implements (seed 000 section 8).
pub const API_VERSION: &str = "1.0.0";

/// A request: every action accepts the `user_id` it acts for; an action of
/// workspaces (marked `[read]` or `[write]` in the catalog) its `workspace`.
pub trait Request: DeserializeOwned + JsonSchema {
    fn user_id(&self) -> Option<&str>;
    fn workspace(&self) -> Requested<'_> {
        Requested::NotScoped
    }
}

/// How an action relates to workspaces (docs/design/workspaces.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoping {
    /// About the user or the server, not stored memory: no workspace.
    None,
    /// Answers from the selected workspaces (`workspace`: a name, `*`, a list).
    Read,
    /// Writes in one workspace (`workspace`: a name).
    Write,
}

macro_rules! scoping {
    () => {
        Scoping::None
    };
    (read) => {
        Scoping::Read
    };
    (write) => {
        Scoping::Write
    };
}

macro_rules! requested {
    (read, $s:ident) => {
        Requested::Read($s.workspace.as_ref())
    };
    (write, $s:ident) => {
        Requested::Write($s.workspace.as_ref())
    };
}

/// An action: its identity and the types of its request and response. The
/// catalog publishes their JSON Schemas, and the extension's dispatcher
/// accepts for it only a handler taking and returning exactly these types,
/// so what is published is what is served.
pub trait Action {
    const ID: ActionId;
    type Request: Request;
    type Response: Serialize + JsonSchema;
}

/// Declares every action once: its enum variant, name, request and response
/// types. A response of type `Value` has no fixed shape (no output schema).
macro_rules! declare_actions {
    ($($id:ident = $name:literal $([$scope:ident])?: $req:ty => $resp:ty;)*) => {
        /// Every action, in catalog order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ActionId { $($id,)* }

        impl ActionId {
            pub const ALL: &'static [ActionId] = &[$(ActionId::$id,)*];

            pub const fn name(self) -> &'static str {
                match self { $(ActionId::$id => $name,)* }
            }

            pub fn input_schema(self) -> Value {
                match self { $(ActionId::$id => schema_for::<$req>(),)* }
            }

            /// The schema of the response, where it has a fixed shape (an
            /// action of workspaces also says `workspace_context`).
            pub fn output_schema(self) -> Option<Value> {
                let schema = match self { $(ActionId::$id => fixed_shape(schema_for::<$resp>()),)* };
                match self.scoping() {
                    Scoping::None => schema,
                    _ => schema.map(with_workspace_context),
                }
            }

            pub const fn scoping(self) -> Scoping {
                match self { $(ActionId::$id => scoping!($($scope)?),)* }
            }
        }

        /// One type per action, naming its request and response types.
        pub mod action {
            use super::*;
            $(
                pub struct $id;
                impl Action for $id {
                    const ID: ActionId = ActionId::$id;
                    type Request = $req;
                    type Response = $resp;
                }
            )*
        }

        $(impl Request for $req {
            fn user_id(&self) -> Option<&str> { self.user_id.as_deref() }
            $(fn workspace(&self) -> Requested<'_> { requested!($scope, self) })?
        })*
    };
}

declare_actions! {
    GetVersion = "get_version": system::GetVersionRequest => system::GetVersionResponse;
    GetCurrentTime = "get_current_time": system::GetCurrentTimeRequest => system::GetCurrentTimeResponse;
    Store = "store" [write]: store::StoreRequest => store::StoreResponse;
    RetrieveEntitySnapshot = "retrieve_entity_snapshot" [read]: entities::RetrieveEntitySnapshotRequest => entities::EntitySnapshotResponse;
    ListObservations = "list_observations" [read]: entities::ListObservationsRequest => entities::ListObservationsResponse;
    RetrieveFieldProvenance = "retrieve_field_provenance" [read]: entities::RetrieveFieldProvenanceRequest => entities::RetrieveFieldProvenanceResponse;
    RetrieveEntities = "retrieve_entities" [read]: entities::RetrieveEntitiesRequest => entities::RetrieveEntitiesResponse;
    RetrieveEntityByIdentifier = "retrieve_entity_by_identifier" [read]: entities::RetrieveEntityByIdentifierRequest => entities::RetrieveEntityByIdentifierResponse;
    ListEntityTypes = "list_entity_types": entities::ListEntityTypesRequest => entities::ListEntityTypesResponse;
    Correct = "correct" [write]: entities::CorrectRequest => entities::CorrectResponse;
    CreateRelationship = "create_relationship" [write]: graph::CreateRelationshipRequest => graph::RelationshipOut;
    ListRelationships = "list_relationships" [read]: graph::ListRelationshipsRequest => graph::ListRelationshipsResponse;
    GetRelationshipSnapshot = "get_relationship_snapshot" [read]: graph::GetRelationshipSnapshotRequest => graph::GetRelationshipSnapshotResponse;
    RetrieveRelatedEntities = "retrieve_related_entities" [read]: graph::RetrieveRelatedEntitiesRequest => graph::RetrieveRelatedEntitiesResponse;
    RetrieveGraphNeighborhood = "retrieve_graph_neighborhood" [read]: graph::RetrieveGraphNeighborhoodRequest => Value;
    ListTimelineEvents = "list_timeline_events" [read]: graph::ListTimelineEventsRequest => graph::ListTimelineEventsResponse;
    MergeEntities = "merge_entities" [write]: graph::MergeEntitiesRequest => graph::MergeEntitiesResponse;
    DeleteEntity = "delete_entity" [write]: lifecycle::DeleteEntityRequest => lifecycle::LifecycleResponse;
    RestoreEntity = "restore_entity" [write]: lifecycle::RestoreEntityRequest => lifecycle::LifecycleResponse;
    DeleteRelationship = "delete_relationship" [write]: lifecycle::DeleteRelationshipRequest => lifecycle::RelationshipLifecycleResponse;
    RestoreRelationship = "restore_relationship" [write]: lifecycle::RestoreRelationshipRequest => lifecycle::RelationshipLifecycleResponse;
    Erase = "erase" [write]: lifecycle::EraseRequest => lifecycle::EraseResponse;
    ListRecentChanges = "list_recent_changes" [read]: lifecycle::ListRecentChangesRequest => lifecycle::ListRecentChangesResponse;
    ListPotentialDuplicates = "list_potential_duplicates" [read]: duplicates::ListPotentialDuplicatesRequest => duplicates::ListPotentialDuplicatesResponse;
    SplitEntity = "split_entity" [write]: duplicates::SplitEntityRequest => duplicates::SplitEntityResponse;
    SearchSubgraph = "search_subgraph" [read]: subgraph::SearchSubgraphRequest => subgraph::SubgraphResponse;
    GetSubgraphByIds = "get_subgraph_by_ids" [read]: subgraph::GetSubgraphByIdsRequest => subgraph::SubgraphResponse;
    Bulk = "bulk" [write]: bulk::BulkRequest => bulk::BulkResponse;
    CreateRelationships = "create_relationships" [write]: bulk::CreateRelationshipsRequest => bulk::CreateRelationshipsResponse;
    ListContradictions = "list_contradictions" [read]: contradictions::ListContradictionsRequest => contradictions::ListContradictionsResponse;
    Annotate = "annotate" [write]: annotations::AnnotateRequest => annotations::AnnotationOut;
    Contest = "contest" [write]: contests::ContestRequest => contests::ContestResponse;
    Reclassify = "reclassify" [write]: reclassify::ReclassifyRequest => reclassify::ReclassifyResponse;
    ListWorkspaces = "list_workspaces": workspaces::ListWorkspacesRequest => workspaces::ListWorkspacesResponse;
    SetContext = "set_context": workspaces::SetContextRequest => workspaces::ContextResponse;
    GetContext = "get_context": workspaces::GetContextRequest => workspaces::ContextResponse;
    ClearContext = "clear_context": workspaces::ClearContextRequest => workspaces::ContextResponse;
    AnalyzeSchemaCandidates = "analyze_schema_candidates": schemas::AnalyzeSchemaCandidatesRequest => schemas::AnalyzeSchemaCandidatesResponse;
    GetSchemaRecommendations = "get_schema_recommendations": schemas::GetSchemaRecommendationsRequest => schemas::GetSchemaRecommendationsResponse;
    UpdateSchemaIncremental = "update_schema_incremental": schemas::UpdateSchemaIncrementalRequest => schemas::UpdateSchemaIncrementalResponse;
    RegisterSchema = "register_schema": schemas::RegisterSchemaRequest => schemas::RegisterSchemaResponse;
    Reinterpret = "reinterpret": store::ReinterpretRequest => store::ReinterpretResponse;
    RetrieveFileUrl = "retrieve_file_url" [read]: store::RetrieveFileUrlRequest => store::RetrieveFileUrlResponse;
    RecordInterpretation = "record_interpretation": store::RecordInterpretationRequest => Value;
    SubmitPayload = "submit_payload" [write]: legacy::SubmitPayloadRequest => Value;
    UploadFile = "upload_file" [write]: legacy::UploadFileRequest => Value;
    GetProductAnalytics = "get_product_analytics": analytics::GetProductAnalyticsRequest => Value;
    GetTechnicalMetrics = "get_technical_metrics": metrics::GetTechnicalMetricsRequest => Value;
    PlaidCreateLinkToken = "plaid_create_link_token": plaid::PlaidCreateLinkTokenRequest => Value;
    PlaidExchangePublicToken = "plaid_exchange_public_token" [write]: plaid::PlaidExchangePublicTokenRequest => Value;
    PlaidSync = "plaid_sync": plaid::PlaidSyncRequest => Value;
    PlaidListItems = "plaid_list_items": plaid::PlaidListItemsRequest => Value;
    RecordPlaidItem = "record_plaid_item" [write]: plaid::RecordPlaidItemRequest => Value;
    RecordPlaidSync = "record_plaid_sync": plaid::RecordPlaidSyncRequest => Value;
    ListProviderCatalog = "list_provider_catalog": providers::ListProviderCatalogRequest => Value;
    ConnectProvider = "connect_provider" [write]: providers::ConnectProviderRequest => Value;
    ListConnectors = "list_connectors": providers::ListConnectorsRequest => Value;
    SyncProviderImports = "sync_provider_imports": providers::SyncProviderImportsRequest => Value;
    RecordConnector = "record_connector" [write]: providers::RecordConnectorRequest => Value;
    RecordProviderSync = "record_provider_sync": providers::RecordProviderSyncRequest => Value;
    UpdateRecord = "update_record" [write]: legacy::UpdateRecordRequest => Value;
    RetrieveRecords = "retrieve_records" [read]: legacy::RetrieveRecordsRequest => Value;
    DeleteRecord = "delete_record" [write]: legacy::DeleteRecordRequest => Value;
    ListResources = "list_resources" [read]: resources::ListResourcesRequest => Value;
    ReadResource = "read_resource" [read]: resources::ReadResourceRequest => Value;
    MemoryCreateEntities = "memory_create_entities": memory_server::CreateEntitiesRequest => memory_server::CreateEntitiesResponse;
    MemoryCreateRelations = "memory_create_relations": memory_server::CreateRelationsRequest => memory_server::CreateRelationsResponse;
    MemoryAddObservations = "memory_add_observations": memory_server::AddObservationsRequest => memory_server::AddObservationsResponse;
    MemoryDeleteEntities = "memory_delete_entities": memory_server::DeleteEntitiesRequest => memory_server::SuccessResponse;
    MemoryDeleteObservations = "memory_delete_observations": memory_server::DeleteObservationsRequest => memory_server::SuccessResponse;
    MemoryDeleteRelations = "memory_delete_relations": memory_server::DeleteRelationsRequest => memory_server::SuccessResponse;
    MemoryReadGraph = "memory_read_graph": memory_server::ReadGraphRequest => memory_server::GraphResponse;
    MemorySearchNodes = "memory_search_nodes": memory_server::SearchNodesRequest => memory_server::GraphResponse;
    MemoryOpenNodes = "memory_open_nodes": memory_server::OpenNodesRequest => memory_server::GraphResponse;
    WorkspaceReadGraph = "workspace_read_graph": workspace_server::ReadGraphRequest => workspace_server::ReadGraphResponse;
    WorkspaceUpsertEntity = "workspace_upsert_entity": workspace_server::UpsertEntityRequest => workspace_server::UpsertEntityResponse;
    WorkspaceUpsertRelation = "workspace_upsert_relation": workspace_server::UpsertRelationRequest => workspace_server::UpsertRelationResponse;
    WorkspaceGetEntityRelations = "workspace_get_entity_relations": workspace_server::GetEntityRelationsRequest => workspace_server::GetEntityRelationsResponse;
    EngramSendMemory = "engram_send_memory": engram::SendMemoryRequest => engram::SendMemoryResult;
    EngramGetMemory = "engram_get_memory": engram::GetMemoryRequest => engram::GetMemoryResult;
    EngramCorrectMemory = "engram_correct_memory": engram::CorrectMemoryRequest => engram::CorrectMemoryResult;
    GraphmemGetVersion = "graphmem_get_version": graphmem::GetVersionRequest => graphmem::VersionResponse;
    GraphmemGetCurrentTime = "graphmem_get_current_time": graphmem::GetCurrentTimeRequest => graphmem::CurrentTimeResponse;
    GraphmemCreateEntity = "graphmem_create_entity": graphmem::CreateEntityRequest => graphmem::CreateEntityResponse;
    GraphmemGetEntity = "graphmem_get_entity": graphmem::GetEntityRequest => graphmem::EntityDetail;
    GraphmemUpdateEntity = "graphmem_update_entity": graphmem::UpdateEntityRequest => graphmem::EntityDetail;
    GraphmemDeleteEntity = "graphmem_delete_entity": graphmem::DeleteEntityRequest => graphmem::DeletedResponse;
    GraphmemCreateObservation = "graphmem_create_observation": graphmem::CreateObservationRequest => graphmem::ObservationOut;
    GraphmemDeleteObservation = "graphmem_delete_observation": graphmem::DeleteObservationRequest => graphmem::DeletedResponse;
    GraphmemCreateRelation = "graphmem_create_relation": graphmem::CreateRelationRequest => graphmem::RelationOut;
    GraphmemDeleteRelation = "graphmem_delete_relation": graphmem::DeleteRelationRequest => graphmem::DeletedResponse;
    GraphmemFindRelations = "graphmem_find_relations": graphmem::FindRelationsRequest => graphmem::RelationsResponse;
    GraphmemSearchEntities = "graphmem_search_entities": graphmem::SearchEntitiesRequest => graphmem::SearchEntitiesResponse;
    GraphmemListEntities = "graphmem_list_entities": graphmem::ListEntitiesRequest => graphmem::ListEntitiesResponse;
    GraphmemSearchSubgraph = "graphmem_search_subgraph": graphmem::SearchSubgraphRequest => graphmem::SubgraphResponse;
    GraphmemGetSubgraphByIds = "graphmem_get_subgraph_by_ids": graphmem::GetSubgraphByIdsRequest => graphmem::SubgraphResponse;
    GraphmemSetContext = "graphmem_set_context": graphmem::SetContextRequest => graphmem::ContextResponse;
    GraphmemGetContext = "graphmem_get_context": graphmem::GetContextRequest => graphmem::ContextResponse;
    GraphmemClearContext = "graphmem_clear_context": graphmem::ClearContextRequest => graphmem::ContextResponse;
    GraphmemBulkUpdate = "graphmem_bulk_update": graphmem::BulkUpdateRequest => graphmem::BulkUpdateResponse;
    GraphmemSuggestMerges = "graphmem_suggest_merges": graphmem::SuggestMergesRequest => graphmem::SuggestMergesResponse;
}

/// An output schema with the `workspace_context` every response of an
/// action of workspaces has (the dispatcher adds it).
fn with_workspace_context(mut schema: Value) -> Value {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("workspace_context".into(), schema_for::<WorkspaceContext>());
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.push(json!("workspace_context"));
    }
    schema
}

/// A schema that constrains nothing (that of `Value`) is no output schema.
fn fixed_shape(schema: Value) -> Option<Value> {
    let free = schema == Value::Bool(true) || schema.as_object().is_some_and(|m| m.is_empty());
    (!free).then_some(schema)
}

/// One action.
pub struct ActionSpec {
    pub id: ActionId,
    pub title: &'static str,
    /// Written for an agent: when to use it and what it returns.
    pub description: &'static str,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    /// Older names (seed 001) that keep working.
    pub aliases: &'static [&'static str],
    /// Callable as an MCP tool. The resource functions are not: the gateway
    /// serves them as MCP resources.
    pub tool: bool,
    /// An action of the earlier specification: callable, but not listed.
    pub legacy: bool,
    /// The tool set listing it (`--tools`), under [`ActionSpec::tool_name`].
    pub tool_set: ToolSet,
}

impl ActionSpec {
    pub fn name(&self) -> &'static str {
        self.id.name()
    }

    /// An action listed as a tool that writes, idempotently, destroying
    /// nothing; the methods below change what differs.
    fn new(id: ActionId, title: &'static str, description: &'static str) -> Self {
        ActionSpec {
            id,
            title,
            description,
            read_only: false,
            idempotent: true,
            destructive: false,
            aliases: &[],
            tool: true,
            legacy: false,
            tool_set: ToolSet::Neotoma,
        }
    }

    fn read_only(self) -> Self {
        ActionSpec {
            read_only: true,
            ..self
        }
    }

    fn not_idempotent(self) -> Self {
        ActionSpec {
            idempotent: false,
            ..self
        }
    }

    fn destructive(self) -> Self {
        ActionSpec {
            destructive: true,
            ..self
        }
    }

    fn aliases(self, aliases: &'static [&'static str]) -> Self {
        ActionSpec { aliases, ..self }
    }

    /// Not a tool: served otherwise (resources) or used by the gateway.
    fn internal(self) -> Self {
        ActionSpec {
            tool: false,
            ..self
        }
    }

    /// A tool of another server's set: its action name is `<set>_<tool>`.
    fn in_set(self, tool_set: ToolSet) -> Self {
        debug_assert!(self.name().starts_with(tool_set.name()));
        ActionSpec { tool_set, ..self }
    }

    /// The name its tool set lists it under.
    pub fn tool_name(&self) -> &'static str {
        match self.tool_set {
            ToolSet::Neotoma => self.name(),
            set => &self.name()[set.name().len() + 1..],
        }
    }

    fn legacy(self) -> Self {
        ActionSpec {
            legacy: true,
            ..self
        }
    }

    /// The SQL function serving this action; it takes and returns jsonb.
    pub fn sql_function(&self) -> String {
        format!("neotoma.{}", self.name())
    }

    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name(),
            "title": self.title,
            "description": self.description,
            "input_schema": self.id.input_schema(),
            "output_schema": self.id.output_schema(),
            "annotations": {
                "read_only": self.read_only,
                "idempotent": self.idempotent,
                "destructive": self.destructive,
            },
            "sql_function": self.sql_function(),
            "aliases": self.aliases,
            "tool": self.tool,
            "legacy": self.legacy,
            "tool_set": self.tool_set.name(),
            "tool_name": self.tool_name(),
            "tool_group": group_of(self.id).name(),
            "measured_as": measured_as(self.id),
        })
    }
}

/// An input schema as an agent reads it in `tools/list`: what a model
/// needs to call the tool (types, enums, bounds, required, descriptions),
/// without what it does not: the `user_id` every action takes (the gateway
/// sets it), `workspace` unless `with_workspace` (the workspaces group is
/// served), nullability of optional fields, null defaults, integer widths,
/// the gateway's own annotations, titles. The catalog keeps the full
/// schema for SQL callers; the gateway lists this.
pub fn agent_schema(schema: &Value, with_workspace: bool) -> Value {
    let mut out = lean_schema(schema);
    if let Some(props) = out.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("user_id");
        if !with_workspace {
            props.remove("workspace");
        }
    }
    out
}

fn lean_schema(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(lean_schema).collect()),
        Value::Object(map) => {
            // `T | null` (an optional field): `T`.
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let not_null: Vec<&Value> = any.iter().filter(|a| a["type"] != "null").collect();
                if let ([only], 2) = (not_null.as_slice(), any.len()) {
                    let mut merged = lean_schema(only);
                    if let (Some(d), Some(m)) = (map.get("description"), merged.as_object_mut()) {
                        m.insert("description".into(), lean_schema(d));
                    }
                    return merged;
                }
            }
            let mut out = serde_json::Map::new();
            for (k, val) in map {
                let keep = match k.as_str() {
                    "$schema" | "title" | "x-neotoma-read-file" => false,
                    "default" => !val.is_null(),
                    "format" => !matches!(
                        val.as_str(),
                        Some(
                            "int32"
                                | "int64"
                                | "uint"
                                | "uint32"
                                | "uint64"
                                | "uint8"
                                | "double"
                                | "float"
                        )
                    ),
                    "additionalProperties" => val != &Value::Bool(true),
                    _ => true,
                };
                if !keep {
                    continue;
                }
                let lean = match (k.as_str(), val) {
                    ("type", Value::Array(types)) => {
                        let t: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                        match t.as_slice() {
                            [one] => (*one).clone(),
                            _ => val.clone(),
                        }
                    }
                    ("description", Value::String(d)) => {
                        Value::String(d.split_whitespace().collect::<Vec<_>>().join(" "))
                    }
                    // Names, not schemas: kept as they are.
                    ("required" | "enum", _) => val.clone(),
                    ("properties", Value::Object(props)) => Value::Object(
                        props
                            .iter()
                            .map(|(name, p)| (name.clone(), lean_schema(p)))
                            .collect(),
                    ),
                    _ => lean_schema(val),
                };
                out.insert(k.clone(), lean);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The group of Neotoma's tools an action is listed in (`--tools`): `core`
/// is what an agent needs to store, find, read with provenance, correct,
/// relate and follow time (seed 000 §2 but schema administration). The
/// other sets' actions are listed with their set.
pub fn group_of(id: ActionId) -> ToolGroup {
    use ActionId::*;
    match id {
        Store
        | ListEntityTypes
        | RetrieveEntities
        | RetrieveEntitySnapshot
        | RetrieveEntityByIdentifier
        | RetrieveFieldProvenance
        | ListObservations
        | Correct
        | MergeEntities
        | CreateRelationship
        | ListRelationships
        | GetRelationshipSnapshot
        | RetrieveRelatedEntities
        | RetrieveGraphNeighborhood
        | ListTimelineEvents
        | RetrieveFileUrl
        | Reinterpret => ToolGroup::Core,
        DeleteEntity
        | RestoreEntity
        | DeleteRelationship
        | RestoreRelationship
        | Erase
        | ListRecentChanges
        | ListPotentialDuplicates
        | SplitEntity => ToolGroup::Lifecycle,
        Contest | Annotate | ListContradictions | Reclassify => ToolGroup::Review,
        ListWorkspaces | SetContext | GetContext | ClearContext => ToolGroup::Workspaces,
        Bulk | CreateRelationships => ToolGroup::Bulk,
        SearchSubgraph | GetSubgraphByIds => ToolGroup::Subgraphs,
        AnalyzeSchemaCandidates
        | GetSchemaRecommendations
        | UpdateSchemaIncremental
        | RegisterSchema => ToolGroup::Schema,
        PlaidCreateLinkToken
        | PlaidExchangePublicToken
        | PlaidSync
        | PlaidListItems
        | RecordPlaidItem
        | RecordPlaidSync
        | ListProviderCatalog
        | ConnectProvider
        | ListConnectors
        | SyncProviderImports
        | RecordConnector
        | RecordProviderSync => ToolGroup::Connectors,
        GetVersion | GetCurrentTime | GetProductAnalytics | GetTechnicalMetrics => ToolGroup::Admin,
        // Not listed (legacy names, resources, the gateway's own), or
        // listed with their own set.
        RecordInterpretation | SubmitPayload | UploadFile | UpdateRecord | RetrieveRecords
        | DeleteRecord | ListResources | ReadResource => ToolGroup::Admin,
        _ => ToolGroup::Core,
    }
}

/// Which of the seed's gateway metrics (seed 001 §3.28) time an action:
/// `record_upload` (storing source material) or `search`.
pub fn measured_as(id: ActionId) -> Option<&'static str> {
    use ActionId::*;
    match id {
        Store | SubmitPayload | UploadFile => Some("record_upload"),
        RetrieveEntities
        | RetrieveEntityByIdentifier
        | ListTimelineEvents
        | RetrieveRelatedEntities
        | RetrieveGraphNeighborhood
        | ListRelationships
        | RetrieveRecords => Some("search"),
        _ => None,
    }
}

/// Every action, in catalog order.
pub fn actions() -> Vec<ActionSpec> {
    ActionId::ALL.iter().map(|&id| spec(id)).collect()
}

/// What the catalog says of `id` (a match, so no action goes without).
pub fn spec(id: ActionId) -> ActionSpec {
    match id {
        ActionId::GetVersion => ActionSpec::new(
            id,
            "Get version",
            "Report the versions of the Neotoma extension, its action catalog, \
                the MCP contract and Postgres. Use it to check that the memory is reachable \
                and which features it has. Returns {extension_version, catalog_version, \
                api_version, server_version, postgres_version}.",
        )
        .read_only(),
        ActionId::GetCurrentTime => ActionSpec::new(
            id,
            "Get current time",
            "Return the memory's clock (the database's), in UTC. Use it to \
                timestamp what you store (`provenance.extracted_at`) or to ask about \
                'today' consistently with stored data. Returns {now, unix_ms, timezone}.",
        )
        .read_only()
        .not_idempotent(),
        ActionId::Store => ActionSpec::new(
            id,
            "Store source material",
            "Store what you learned. Structured: `entities`, an array of objects each \
                with an `entity_type` (call list_entity_types first to pick it) and ALL the fields \
                of the source data; fields the schema lacks are kept in raw_fragments \
                (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with \
                `mime_type`, interpreted by the server (do not extract fields yourself). Content is \
                hashed: storing the same content again returns the same source_id with \
                `deduplicated: true` and creates nothing. The same real-world thing stored twice \
                (same identity fields, e.g. an invoice number and vendor, a person's e-mail) lands \
                on one entity. Returns {source_id, content_hash, deduplicated, interpretation, \
                entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.",
        )
        .aliases(&["ingest", "ingest_structured"]),
        ActionId::RetrieveEntitySnapshot => ActionSpec::new(
            id,
            "Retrieve entity snapshot",
            "Get the current truth about one entity: its snapshot (field → value) \
                computed by the reducer from all its observations, with provenance for every field \
                (which observation and source it came from). Pass `at` (ISO 8601) for the snapshot \
                as it was at that time. A merged entity redirects to the entity it was merged into \
                (`redirected_from`). include_contradictions also answers the fields whose \
                observations disagree, as list_contradictions does; include_annotations the notes \
                attached to it (annotate).",
        )
        .read_only()
        .aliases(&["get_entity_snapshot"]),
        ActionId::ListObservations => ActionSpec::new(
            id,
            "List observations",
            "List the observations (what each source said) about one entity, newest \
                first, with their fields, source, priority and specificity. Use it to see how a \
                snapshot was built or what changed. Paginated with limit/offset; returns \
                {observations, total, limit, offset}.",
        )
        .read_only(),
        ActionId::RetrieveFieldProvenance => ActionSpec::new(
            id,
            "Retrieve field provenance",
            "Explain one field of an entity's snapshot: its value, the observation \
                that supplied it (priority, specificity, time), the source material it came from \
                and the interpretation run, if any. Use it to answer 'where does this come from?'.",
        )
        .read_only()
        .aliases(&["get_field_provenance"]),
        ActionId::RetrieveEntities => ActionSpec::new(
            id,
            "Retrieve entities",
            "List entities, optionally of one `entity_type`, most recently observed \
                first, with their snapshots (include_snapshots, default true). Merged entities are \
                left out unless include_merged. Paginated with limit (max 1000) and offset; returns \
                {entities:[{id, entity_type, canonical_name, snapshot, observation_count, \
                last_observation_at}], total, excluded_merged}. With `search` (free text) it finds \
                entities by their names (typos forgiven), every snapshot value and the names of \
                entities merged into them, best first (then by id), each with relevance_score and \
                matched_fields; search_mode: lexical (words, stems, names with typos), semantic \
                (by meaning: embeddings), hybrid (both, fused by rank) or auto (hybrid when \
                embeddings exist, else lexical); search_method says which mode answered; \
                include_observations also matches values since corrected or outranked and the \
                words of the stored text files an entity was observed from.",
        )
        .read_only(),
        ActionId::RetrieveEntityByIdentifier => ActionSpec::new(
            id,
            "Find entity by identifier",
            "Find entities by something that identifies them: a name, e-mail, phone \
                number, web site, invoice number… The identifier is normalised (case, spaces, \
                phone and URL forms) and matched against the identity fields of every entity, \
                optionally of one entity_type; when nothing matches exactly, partial matches are \
                returned (match_type tells which).",
        )
        .read_only()
        .aliases(&["get_entity_by_identifier"]),
        ActionId::ListEntityTypes => ActionSpec::new(
            id,
            "List entity types",
            "The entity types you can store, one line each (name, what it is for, the \
                fields that identify it). `keyword` ranks them by name, fields and meaning \
                ('payment' finds transaction and invoice); `entity_type` gives one type in full \
                (its fields, types, merge policies); `detail: true` gives every type in full.",
        )
        .read_only(),
        ActionId::Correct => ActionSpec::new(
            id,
            "Correct a field",
            "Fix one field of an entity: records a correction observation (priority \
                1000) that wins over every other observation immediately and stays the truth \
                until corrected again; nothing is deleted. Give entity_id, its entity_type, the \
                schema field and the right value (null clears it). Returns the correction's \
                observation_id.",
        ),
        ActionId::CreateRelationship => ActionSpec::new(
            id,
            "Create relationship",
            "Link two entities with a typed, directed relationship: PART_OF, \
                DEPENDS_ON, SUPERSEDES, CORRECTS, SETTLES (none of these may form a cycle: \
                CYCLE_DETECTED with the path), REFERS_TO or DUPLICATE_OF. Optional metadata is \
                recorded as an observation with provenance. Same type and entities → same \
                relationship id; asserting it again is idempotent.",
        ),
        ActionId::ListRelationships => ActionSpec::new(
            id,
            "List relationships",
            "List an entity's relationships (direction inbound, outbound or both; \
                optionally one relationship_type), newest first, paginated. Returns \
                {relationships:[{id, relationship_type, source_entity_id, target_entity_id, \
                metadata, created_at}], total}.",
        )
        .read_only(),
        ActionId::GetRelationshipSnapshot => ActionSpec::new(
            id,
            "Get relationship snapshot",
            "Get one relationship (by type, source and target entity) with its \
                metadata reduced from every assertion of it, provenance per metadata field, and \
                the observations themselves.",
        )
        .read_only(),
        ActionId::RetrieveRelatedEntities => ActionSpec::new(
            id,
            "Retrieve related entities",
            "Walk the relationship graph from an entity up to max_hops (default 1, \
                at most 5) in a direction, optionally only through some relationship_types. \
                Returns the entities reached (with snapshots unless include_entities is false) \
                and the relationships walked, each once, in a stable order.",
        )
        .read_only()
        .aliases(&["get_related_entities"]),
        ActionId::RetrieveGraphNeighborhood => ActionSpec::new(
            id,
            "Retrieve graph neighborhood",
            "Everything around one node (an entity, or a source with \
                node_type 'source'): its snapshot or source material, its relationships and \
                related entities, the sources it came from, its timeline events and, on request, \
                its observations. Use it to get full context in one call.",
        )
        .read_only()
        .aliases(&["get_graph_neighborhood"]),
        ActionId::ListTimelineEvents => ActionSpec::new(
            id,
            "List timeline events",
            "List dated events derived from entities' date fields (e.g. \
                InvoiceIssued, InvoiceDue, TaskDue, TransactionDate), newest first, filtered by \
                event_type, a date range (after_date inclusive, before_date exclusive), source_id \
                or entity_id, paginated.",
        )
        .read_only(),
        ActionId::MergeEntities => ActionSpec::new(
            id,
            "Merge entities",
            "Merge a duplicate entity (from_entity_id) into another of the same type \
                (to_entity_id): its observations, relationships and events count for the target \
                from now on, the target's snapshot is recomputed, and the duplicate is hidden \
                (retrieving it redirects to the target). Nothing is deleted; the merge is logged \
                with its reason. Merging an entity twice is ENTITY_ALREADY_MERGED.",
        )
        .not_idempotent()
        .destructive(),
        ActionId::DeleteEntity => ActionSpec::new(
            id,
            "Delete an entity",
            "Delete an entity: it disappears from retrieve_entities, lookups and snapshots \
                (include_deleted shows it, with deleted_at and the reason) until restore_entity \
                brings it back exactly as it was. Nothing is erased: the deletion is an \
                observation of its own (list_observations shows it). Deleting a deleted entity is \
                an error. Returns {entity_id, entity_type, deleted, deleted_at, reason, \
                observation_id}.",
        )
        .destructive(),
        ActionId::RestoreEntity => ActionSpec::new(
            id,
            "Restore an entity",
            "Bring back a deleted entity exactly as it was before its deletion (recorded as a \
                restoration observation). Restoring an entity that is not deleted is an error. \
                Returns {entity_id, entity_type, deleted: false, deleted_at: null, reason, \
                observation_id}.",
        ),
        ActionId::DeleteRelationship => ActionSpec::new(
            id,
            "Delete a relationship",
            "Delete the relationship of relationship_type from source_entity_id to \
                target_entity_id: it disappears from list_relationships, traversals, \
                neighborhoods and store's related_* (include_deleted shows it, with deleted_at \
                and the reason) until restore_relationship brings it back exactly as it was. \
                Nothing is erased: the deletion is an observation of the relationship. The \
                entities stay. Deleting a deleted relationship is an error; an unknown one is \
                NOT_FOUND. Returns {relationship_id, relationship_type, source_entity_id, \
                target_entity_id, deleted, deleted_at, reason, observation_id}.",
        )
        .destructive(),
        ActionId::ListPotentialDuplicates => ActionSpec::new(
            id,
            "List potential duplicates",
            "Pairs of current entities of entity_type that may be the same thing, best first: \
                names (the snapshot's name or title) whose trigram similarity (as pg_trgm computes it) is at least threshold \
                (default 0.6), or the same normalised identifier (e-mail, phone, …; score 1). \
                Each pair once, with its evidence (which field matched how). Read-only: merge \
                the ones that are duplicates with merge_entities. Returns {pairs: \
                [{entity_id, other_entity_id, name, other_name, score, \
                evidence: [{field, method, score, values}]}], entity_type, threshold, \
                entities_compared, truncated}.",
        )
        .read_only(),
        ActionId::SearchSubgraph => ActionSpec::new(
            id,
            "Search a subgraph",
            "Search the memory and get a subgraph: the entities that match query (names with \
                typos forgiven, entity types, names of entities merged into them, every snapshot \
                value; each search_in_* turns one off), best first and paginated (page, per_page \
                up to 100), each with its snapshot, its latest observations, relevance_score and \
                matched_fields, and the current relationships among them. Returns {entities: \
                [{entity_id, entity_type, canonical_name, snapshot, observation_count, \
                observations, relevance_score, matched_fields}], relationships: [{id, \
                relationship_type, source_entity_id, target_entity_id, snapshot}], total, page, \
                per_page, search_method}.",
        )
        .read_only(),
        ActionId::GetSubgraphByIds => ActionSpec::new(
            id,
            "Get a subgraph by ids",
            "The entities named by entity_ids (1–100, in that order), each with its snapshot and \
                latest observations, and the current relationships among them; ids that name no \
                current entity are listed in missing. Returns {entities, relationships, missing}.",
        )
        .read_only(),
        ActionId::Bulk => ActionSpec::new(
            id,
            "Bulk writes",
            "Run several writes in one transaction, all or nothing: operations \
                [{action, args, ref?}] (1–500), each action one of store, correct, \
                create_relationship, delete_entity, restore_entity, delete_relationship, \
                restore_relationship, merge_entities, with that action's own args. An operation \
                with ref: \"alice\" names the entity it yields (a store's first entity; the \
                entity corrected, deleted or restored; a merge's target), and later operations \
                write \"$alice\" wherever an entity id goes (entity_id, source_entity_id, \
                target_entity_id, from_entity_id, to_entity_id): two entities and the \
                relationship between them in one call. If one fails nothing is kept and the \
                error names it (details.operation, from 1; operation_index, from 0). Returns \
                {results:[{index, action, ref, entity_id, result}], operations}.",
        )
        .not_idempotent()
        .destructive(),
        ActionId::CreateRelationships => ActionSpec::new(
            id,
            "Create relationships",
            "Create several relationships at once (1–500), each as create_relationship \
                takes it ({relationship_type, source_entity_id, target_entity_id, metadata?}), \
                in one transaction: all or none (the error names the failing one: \
                details.relationship, from 1). Returns {relationships:[…as created], count}.",
        ),
        ActionId::ListContradictions => ActionSpec::new(
            id,
            "List contradictions",
            "The fields where observations of one entity disagree: two or more \
                distinct values from two or more sources (merge_array fields are joined, not \
                contradicted). For one entity_id, the entities of an entity_type, or all, a page \
                of entities (limit 1–100, default 20; offset) in id order. Each contradiction: \
                {entity_id, entity_type, field, values:[{value, observations:[{observation_id, \
                source_id, observed_at, source_priority, specificity_score, correction}]}], \
                chosen_value, chosen_observation_id, strategy, tie_breaker, reason, resolved}: \
                the value the reducer chose (the snapshot's) and why; resolved when a correction \
                decided it (include_resolved: false leaves those out). Returns {contradictions, \
                entities_checked, limit, offset, has_more}.",
        )
        .read_only(),
        ActionId::Annotate => ActionSpec::new(
            id,
            "Annotate",
            "Attach a note to an entity (entity_id) or to one of its observations \
                (observation_id), beside the truth model: no snapshot, value or provenance \
                changes. The same note on the same target is one annotation (annotating again \
                changes nothing). Logged in neotoma.audit_trail; retrieve_entity_snapshot \
                {include_annotations} answers them. Returns {annotation_id, entity_id, \
                observation_id, note, created_at}.",
        ),
        ActionId::Contest => ActionSpec::new(
            id,
            "Contest an observation",
            "Dispute one observation (observation_id) and say why (reason). The observation \
                stays as it was; the contest is recorded and lowers its confidence rating one \
                step of credibility (B2 becomes B3, down to 6), so fields merged by \
                highest_confidence may choose another value and min_confidence filters may \
                leave it out. The entity's snapshot is recomputed at once. The same reason \
                again changes nothing. Logged in neotoma.audit_trail. Returns {contest_id, \
                observation_id, entity_id, reason, confidence_before, confidence, contests, \
                already_contested, created_at}.",
        ),
        ActionId::ListWorkspaces => ActionSpec::new(
            id,
            "List workspaces",
            "List the workspaces your memory is divided into (`default` first), with how \
                many entities and sources each holds and which one actions without `workspace` \
                use now (in_context; set_context chooses it). Reads take `workspace`: a name, \
                \"*\" for all, or a list. Returns {workspaces:[{name, entities, \
                entities_including_merged, sources, created_at, in_context}], context:{workspace, \
                from}}.",
        )
        .read_only(),
        ActionId::SetContext => ActionSpec::new(
            id,
            "Set context",
            "Choose the workspace every later action without `workspace` uses, by name \
                (`workspace`, created if new) or by a project entity (`project_entity_id`: its \
                workspace). It is kept in the memory, so it holds across requests, connections \
                and gateways: for the token you came with (level token, the default with a \
                token), or for you (level user, the default without one, e.g. over stdio). \
                Returns {token, user, effective:{workspace, from}, has_token}.",
        ),
        ActionId::GetContext => ActionSpec::new(
            id,
            "Get context",
            "Show which workspace actions without `workspace` use, and why: the context of \
                the token you came with, else yours, else `default`. Returns {token, user, \
                effective:{workspace, from}, has_token}.",
        )
        .read_only(),
        ActionId::ClearContext => ActionSpec::new(
            id,
            "Clear context",
            "Forget a context set by set_context (level token or user; by default the one \
                set_context would set), so actions without `workspace` fall back to the next: \
                the user's context, then `default`. Returns {token, user, effective, has_token, \
                cleared}.",
        )
        .destructive(),
        ActionId::Reclassify => ActionSpec::new(
            id,
            "Reclassify an entity",
            "Move an entity (entity_id) to another type (new_entity_type, with an active \
                schema) and say why (reason), its history kept: the entity of the new type is \
                the one its current snapshot identifies under that type's identity rules (found \
                or made), and the old entity is merged into it, so every observation, \
                relationship and event counts there and the old id redirects there. Later \
                stores under either type reach it. Logged in neotoma.audit_trail as reclassify. \
                Returns {entity_id, entity_type, previous_entity_id, previous_entity_type, \
                joined_existing, observations_moved, relationships_moved, reason, \
                reclassified_at}.",
        )
        .not_idempotent()
        .destructive(),
        ActionId::SplitEntity => ActionSpec::new(
            id,
            "Split an entity",
            "The inverse of merge_entities: move some observations of entity_id (by \
                observation_ids, or every one from source_ids) to another entity of its type \
                (to_entity_id) or to a new one. The observations themselves never change: \
                copies with the same source, time and fields count for the target, the originals \
                no longer count for entity_id; both snapshots are recomputed; relationships stay \
                with entity_id. Logged in neotoma.audit_trail. Returns {split_id, from_entity_id, \
                to_entity_id, created, observations_moved, split_at, reason}.",
        )
        .not_idempotent()
        .destructive(),
        ActionId::ListRecentChanges => ActionSpec::new(
            id,
            "List recent changes",
            "The change feed of this user's memory: entities observed, corrected, deleted, \
                restored or merged; relationships asserted, deleted or restored; sources created; \
                schemas registered or updated; erasures. Oldest first, in an order that never skips \
                a change: pass the answer's next_cursor as `since` to read on (polling with it \
                returns nothing until something changes). entity_type keeps entity changes of \
                that type. Returns {changes: [{cursor, kind, operation, entity_id, entity_type, \
                relationship_id, relationship_type, source_entity_id, target_entity_id, \
                source_id, changed_at}], next_cursor, has_more}; MCP resource subscriptions are \
                driven by this feed.",
        )
        .read_only(),
        ActionId::Erase => ActionSpec::new(
            id,
            "Erase for good (GDPR)",
            "Erase an entity (entity_id) or a source (source_id) for good, with confirm: true. \
                An entity goes with its observations, relationships, timeline events, raw \
                fragments and merges, and the sources only it came from (sources that also fed \
                other entities lose their stored content and file bytes). A source goes with \
                everything it gave; its entities are recomputed from what other sources say, \
                and erased if nothing else does. Signed file URLs stop working. Unlike \
                delete_entity this cannot be undone; an audit row of counts (no content) stays \
                in neotoma.audit_trail. Returns {erased, erasure_id, erased_at, counts}.",
        )
        .not_idempotent()
        .destructive(),
        ActionId::RestoreRelationship => ActionSpec::new(
            id,
            "Restore a relationship",
            "Bring back a deleted relationship exactly as it was (recorded as a restoration \
                observation of it). Restoring a relationship that is not deleted is an error. \
                Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, \
                deleted: false, deleted_at: null, reason, observation_id}.",
        ),
        ActionId::AnalyzeSchemaCandidates => ActionSpec::new(
            id,
            "Analyze schema candidates",
            "Look at the fields kept in raw_fragments (stored data the schema \
                lacks) and recommend which should become schema fields: per field its \
                frequency, distinct sources, dominant type and type consistency, format \
                consistency, up to 10 sample values and a confidence. Filtered by min_frequency \
                (default 5) and min_confidence (default 0.8); recommendations are kept as \
                pending (get_schema_recommendations).",
        ),
        ActionId::GetSchemaRecommendations => ActionSpec::new(
            id,
            "Get schema recommendations",
            "List the stored schema recommendations for an entity type: pending ones \
                from analyze_schema_candidates, and those applied automatically (auto_applied) \
                with the evidence they rest on. Filter by source and status.",
        )
        .read_only(),
        ActionId::UpdateSchemaIncremental => ActionSpec::new(
            id,
            "Add fields to a schema",
            "Add fields to an entity type's schema as a new version, active at once \
                by default, so the next stores keep those fields in observations (and \
                snapshots) instead of raw_fragments. user_specific makes a variant for this user \
                only. migrate_existing turns the raw_fragments already stored for those fields \
                into observations (provenance kept) and updates the snapshots.",
        ),
        ActionId::RegisterSchema => ActionSpec::new(
            id,
            "Register a schema",
            "Define a new entity type, or a new version of one: its fields (type, \
                required), identity fields, temporal fields and a merge policy per field \
                (last_write, highest_priority, most_specific, merge_array, highest_confidence; tie breaker \
                observed_at or source_priority). A new type is usable by store at once; a new \
                version of an existing type becomes active with activate=true (snapshots are \
                recomputed under the new policies).",
        )
        .not_idempotent(),
        ActionId::Reinterpret => ActionSpec::new(
            id,
            "Reinterpret a source",
            "Interpret a stored source again with a new interpretation_config \
                (provider, model_id, temperature, prompt_hash, code_version, feature_flags; \
                entity_type for CSV). It is a new interpretation run: the observations of earlier \
                runs stay, and the reducer decides what snapshots show. The same source and \
                config give the same run and observations.",
        ),
        ActionId::RetrieveFileUrl => ActionSpec::new(
            id,
            "Retrieve file URL",
            "Get a signed, expiring URL (expires_in seconds, default 3600) to \
                download a stored file (by its storage_path or source id) from the MCP server's \
                HTTP endpoint. Returns {signed_url, expires_at}.",
        )
        .read_only()
        .not_idempotent()
        .aliases(&["get_file_url"]),
        ActionId::RecordInterpretation => ActionSpec::new(
            id,
            "Record an interpretation",
            "Record what an external model read from a file (entities, or an \
                error) for a pending interpretation run. Used by the MCP server's model \
                interpreter, not an agent tool.",
        )
        .internal(),
        ActionId::SubmitPayload => ActionSpec::new(
            id,
            "Submit payload (earlier specification)",
            "Earlier name: stores `body` as an entity of the capability's type \
                (neotoma:store_invoice:v1 → invoice) with `provenance`. Use store.",
        )
        .legacy(),
        ActionId::UploadFile => ActionSpec::new(
            id,
            "Upload file (earlier specification)",
            "Earlier name: stores a local file (file_path) like store does; with \
                `properties` the file is not interpreted. Use store.",
        )
        .legacy(),
        ActionId::GetProductAnalytics => ActionSpec::new(
            id,
            "Product analytics (operators)",
            "Product metrics computed from the memory itself, across users, for operators only: \
                activation (e.g. activation_first_upload_rate), retention (day_1_retention, \
                week_1_retention, month_1_retention), usage (daily_active_users, \
                weekly_active_users, avg_uploads_per_user_per_week), the signup → upload → \
                extraction → entity → timeline funnel, and weekly cohorts, over time_range \
                (default the last 30 days). Aggregates only. Returns {metric_type, metric_name, \
                value (a number or [{date, value}]), time_range, metadata}.",
        )
        .read_only(),
        ActionId::GetTechnicalMetrics => ActionSpec::new(
            id,
            "Technical metrics (operators)",
            "Operational metrics of this server from its Prometheus, for operators only: \
                neotoma_record_upload_duration_ms and neotoma_search_duration_ms (histograms, \
                label action), neotoma_record_upload_total (labels action, status), \
                neotoma_extraction_errors_total (label error_code), neotoma_mcp_error_rate, \
                neotoma_graph_orphan_nodes_total, neotoma_db_connection_pool_usage. Aggregation \
                avg (default), p50, p95, p99, sum, count, max or min over time_range (default the \
                last hour) in steps of `step` (e.g. 1m, 1h). Returns {metric_name, values: \
                [{timestamp, value}], aggregation, time_range, metadata: {unit, description, \
                query}}.",
        )
        .read_only()
        .not_idempotent(),
        ActionId::PlaidCreateLinkToken => ActionSpec::new(
            id,
            "Plaid: create a Link token",
            "Start connecting a bank account through Plaid: returns a short-lived \
                {link_token, expiration} for Plaid Link (products default [\"transactions\"]; \
                pass access_token for Link's update mode). Then call \
                plaid_exchange_public_token with the public token Link gives. PLAID_NOT_CONFIGURED \
                when the server has no Plaid credentials.",
        )
        .not_idempotent(),
        ActionId::PlaidExchangePublicToken => ActionSpec::new(
            id,
            "Plaid: connect an item",
            "Finish connecting a bank through Plaid: exchanges Link's public_token for an \
                access token (stored encrypted, never returned), records the item, its \
                institution and accounts (as entities), and with trigger_initial_sync also syncs \
                its transactions. Returns {plaid_item: {id, item_id, institution_name, \
                accounts}, sync_summary?}.",
        ),
        ActionId::PlaidSync => ActionSpec::new(
            id,
            "Plaid: sync transactions",
            "Sync the transactions of a connected Plaid item (plaid_item_id or item_id), or of \
                every item (sync_all), from where the last sync stopped (force_full_sync reads \
                everything again). New transactions become `transaction` entities (identified by \
                Plaid's transaction_id, so nothing is duplicated), changes add observations, \
                removed ones are deleted (their history stays). Returns {syncs: [{plaid_item_id, \
                item_id, status, summary: {added, modified, removed}, next_cursor, error?}], \
                total_synced_items}.",
        )
        .not_idempotent(),
        ActionId::PlaidListItems => ActionSpec::new(
            id,
            "Plaid: list items",
            "List the connected Plaid items (banks), without their access tokens: {items: \
                [{id, item_id, institution_id, institution_name, products, \
                last_successful_sync, status}]}.",
        )
        .read_only(),
        ActionId::RecordPlaidItem => ActionSpec::new(
            id,
            "Record a Plaid item",
            "Used by the MCP gateway: records an item it linked with Plaid.",
        )
        .internal(),
        ActionId::RecordPlaidSync => ActionSpec::new(
            id,
            "Record a Plaid sync",
            "Used by the MCP gateway: records what a sync of an item read from Plaid.",
        )
        .internal()
        .not_idempotent(),
        ActionId::ListProviderCatalog => ActionSpec::new(
            id,
            "List providers",
            "List the outside sources this memory can import from, with their status \
                (available, beta, coming_soon), capabilities and how they authenticate: plaid \
                (banks), imap (any e-mail account), gmail (IMAP with an app password), and what \
                is coming. Returns {providers: [{id, name, description, capabilities, auth_type, \
                oauth_scopes?, popularity_score, status}]}.",
        )
        .read_only(),
        ActionId::ConnectProvider => ActionSpec::new(
            id,
            "Connect a provider",
            "Connect an e-mail account to import its messages: provider imap with settings \
                {host, port?, tls? (default true), username, password, mailbox? (default INBOX)}, or \
                gmail with {username, password: an app password}. The login is checked first; the \
                password is stored encrypted and never returned. Returns {connector_id, provider, \
                external_id, settings, status}. Then call sync_provider_imports.",
        ),
        ActionId::ListConnectors => ActionSpec::new(
            id,
            "List connectors",
            "List your connectors (e-mail accounts, Plaid items), optionally of one provider, \
                without secrets: {connectors: [{connector_id, provider, external_id, settings, \
                status, last_error, last_successful_sync, created_at}]}.",
        )
        .read_only(),
        ActionId::SyncProviderImports => ActionSpec::new(
            id,
            "Sync provider imports",
            "Import what is new from a provider: for imap/gmail every message since the last \
                sync (sync_type initial: from the first) becomes a source read by the e-mail \
                interpreter (a note and its contacts), at most limit × max_pages messages per call \
                (default 50 × 10; the rest next time); for plaid, plaid_sync of every item. One \
                connector with connector_id, else all of the provider's. Returns {sync_run_id, \
                provider, status, stats: {records_added, records_updated, errors}, started_at, \
                completed_at}.",
        )
        .not_idempotent(),
        ActionId::RecordConnector => ActionSpec::new(
            id,
            "Record a connector",
            "Used by the MCP gateway: records a connector whose login it checked.",
        )
        .internal(),
        ActionId::RecordProviderSync => ActionSpec::new(
            id,
            "Record a provider sync",
            "Used by the MCP gateway: records what a sync read from the provider.",
        )
        .internal()
        .not_idempotent(),
        ActionId::UpdateRecord => ActionSpec::new(
            id,
            "Update record (deprecated)",
            "Deprecated (earlier specification): sets the properties of a record \
                (an entity: `id`) by corrections, one per property. Use correct.",
        )
        .legacy(),
        ActionId::RetrieveRecords => ActionSpec::new(
            id,
            "Retrieve records (deprecated)",
            "Deprecated (earlier specification): entities as records, filtered by \
                `type`, `properties` and keyword `search` terms. Use retrieve_entities.",
        )
        .read_only()
        .legacy(),
        ActionId::DeleteRecord => ActionSpec::new(
            id,
            "Delete record (deprecated)",
            "Deprecated (earlier specification): deletes a record (an entity) as \
                delete_entity does; its history stays. Use delete_entity.",
        )
        .destructive()
        .legacy(),
        ActionId::ListResources => ActionSpec::new(
            id,
            "List resources",
            "The neotoma:// resources the user's data offers: the source collection, \
                one collection per entity type, one timeline per year and month with events. \
                Served as MCP resources/list, not as a tool.",
        )
        .read_only()
        .internal(),
        ActionId::ReadResource => ActionSpec::new(
            id,
            "Read resource",
            "The body of one neotoma:// resource (entity collection, entity, its \
                observations or relationships, a year or month of timeline, a source, the \
                sources). Served as MCP resources/read, not as a tool.",
        )
        .read_only()
        .internal(),
        ActionId::MemoryCreateEntities => ActionSpec::new(
            id,
            "Create Entities",
            "Create multiple new entities in the knowledge graph. (An entity whose name the \
                graph has already is left as it is; the entities created are returned.)",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        ActionId::MemoryCreateRelations => ActionSpec::new(
            id,
            "Create Relations",
            "Create multiple new relations between entities in the knowledge graph. Relations \
                should be in active voice. (Both entities must exist; a relation the graph has \
                already is left out of the answer.)",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        ActionId::MemoryAddObservations => ActionSpec::new(
            id,
            "Add Observations",
            "Add new observations to existing entities in the knowledge graph",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        ActionId::MemoryDeleteEntities => ActionSpec::new(
            id,
            "Delete Entities",
            "Delete multiple entities and their associated relations from the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        ActionId::MemoryDeleteObservations => ActionSpec::new(
            id,
            "Delete Observations",
            "Delete specific observations from entities in the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        ActionId::MemoryDeleteRelations => ActionSpec::new(
            id,
            "Delete Relations",
            "Delete multiple relations from the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        ActionId::MemoryReadGraph => ActionSpec::new(
            id,
            "Read Graph",
            "Read the entire knowledge graph, a page at a time: up to `limit` entities (100 \
                unless given, at most 1000) in the order they were created, with the relations \
                starting at them; while more follow, pass the answer's nextCursor as `cursor`.",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        ActionId::MemorySearchNodes => ActionSpec::new(
            id,
            "Search Nodes",
            "Search for nodes in the knowledge graph based on a query (matched, case \
                folded, against entity names, types, and observation content; at most 1000 \
                entities, with the relations touching them)",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        ActionId::MemoryOpenNodes => ActionSpec::new(
            id,
            "Open Nodes",
            "Open specific nodes in the knowledge graph by their names (with the relations \
                touching them)",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        ActionId::WorkspaceReadGraph => ActionSpec::new(
            id,
            "Read graph",
            "Returns all entities and relations for a workspace (workspaceName), a page at a \
                time: up to `limit` entities (at most 1000) in the order they were created, \
                with the relations starting at them, and nextCursor (pass it as `cursor`) while \
                more follow.",
        )
        .read_only()
        .in_set(ToolSet::Workspace),
        ActionId::WorkspaceUpsertEntity => ActionSpec::new(
            id,
            "Upsert entity",
            "Creates or updates an entity by name within a workspace: entityType, \
                observations (replacing the entity's when given) and metadata (a JSON text). \
                Returns {success, id, workspace, name}.",
        )
        .in_set(ToolSet::Workspace),
        ActionId::WorkspaceUpsertRelation => ActionSpec::new(
            id,
            "Upsert relation",
            "Creates or updates a relation between two existing entities of a workspace, \
                named by fromEntityId/toEntityId or by the legacy from/to names, with an \
                optional metadata JSON text. Returns {success, relationId, workspace, \
                fromEntityId, toEntityId, relationType}.",
        )
        .in_set(ToolSet::Workspace),
        ActionId::WorkspaceGetEntityRelations => ActionSpec::new(
            id,
            "Get entity relations",
            "Lists all relations originating from a given entity of a workspace (entityId, \
                preferred, or entityName). Returns {success, workspaceName, entityId, \
                relations:[{id, relationType, toEntityId, metadata}]}.",
        )
        .read_only()
        .in_set(ToolSet::Workspace),
        ActionId::EngramSendMemory => ActionSpec::new(
            id,
            "Send memory",
            "Write one memory: an affirmation, fact or observation (content), with where it \
                came from (source {type, ref, citation}), the source's reliability letter A-F \
                (confidence_hint: the memory is rated <letter>3, uncorroborated; F3 without one) \
                and the calling agent (agent_id). The same content again corroborates the same \
                memory. Returns {memory_id, status}.",
        )
        .in_set(ToolSet::Engram),
        ActionId::EngramGetMemory => ActionSpec::new(
            id,
            "Get memory",
            "Read the memories matching a natural language query, best first: each with its \
                NATO confidence rating, sources, causal chain (relations up to max_depth steps) \
                and participants, plus the contradictions among their sources. min_confidence \
                keeps memories whose letter and number both pass (F6: all); compact leaves out \
                sources, chains, participants and contradictions. Returns {memories, \
                contradictions, meta}.",
        )
        .read_only()
        .in_set(ToolSet::Engram),
        ActionId::EngramCorrectMemory => ActionSpec::new(
            id,
            "Correct memory",
            "Correct a memory (target_id) by one action with its payload: contest {reason} \
                (lowers its rating a step), annotate {note}, merge_entities {source_id} (that \
                memory joins this one), split_entity {observation_ids | source_ids, \
                to_entity_id?} or reclassify {new_type, reason?}. History is kept and the \
                correction audited. Returns {target_id, action, status (applied, not_found), \
                details}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Engram),
        ActionId::GraphmemGetVersion => ActionSpec::new(
            id,
            "Get version",
            "Returns the current version of the GraphMem server (here: the Neotoma \
                extension's). Returns {version, server}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemGetCurrentTime => ActionSpec::new(
            id,
            "Get current time",
            "Returns the current server time as an ISO 8601 string: {current_time}.",
        )
        .read_only()
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemCreateEntity => ActionSpec::new(
            id,
            "Create entity",
            "Creates a new entity (name, entity_type auto-canonicalized e.g. workspace \
                becomes Project, pipe-separated aliases, description, initial observations). \
                Performs auto-deduplication: if an entity of the same name, or a semantically \
                similar one (cosine distance < 0.25), exists, returns status duplicate_warning \
                with the existing entity instead of creating a duplicate. Returns {status, \
                entity | warning, existing_entity, cosine_distance}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemGetEntity => ActionSpec::new(
            id,
            "Get entity",
            "Retrieves an entity by ID (an integer), including observations and relations.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemUpdateEntity => ActionSpec::new(
            id,
            "Update entity",
            "Updates entity name (must be unique), type (auto-canonicalized), aliases and/or \
                description (an empty string clears). Returns the entity with observations and \
                relations.",
        )
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemDeleteEntity => ActionSpec::new(
            id,
            "Delete entity",
            "Deletes an entity and all associated observations and relations (its history is \
                kept). Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemCreateObservation => ActionSpec::new(
            id,
            "Create observation",
            "Adds an observation (text_content) to an existing entity; it is searchable by \
                meaning at once. Returns {observation_id, entity_id, text_content}.",
        )
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemDeleteObservation => ActionSpec::new(
            id,
            "Delete observation",
            "Deletes an observation by ID. Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemCreateRelation => ActionSpec::new(
            id,
            "Create relation",
            "Creates a typed relationship between two entities (relation_type e.g. part_of, \
                depends_on). Returns {relation_id, from_entity_id, to_entity_id, relation_type}.",
        )
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemDeleteRelation => ActionSpec::new(
            id,
            "Delete relation",
            "Deletes a relation by ID. Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemFindRelations => ActionSpec::new(
            id,
            "Find relations",
            "Finds relations by optional filters (from_entity_id, to_entity_id, \
                relation_type). Returns {relations}, at most 1000.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemSearchEntities => ActionSpec::new(
            id,
            "Search entities",
            "Hybrid search combining text tokenization with vector semantic similarity, \
                merged by Reciprocal Rank Fusion. Returns {results:[{entity_id, name, \
                entity_type, description, aliases, memory_observations_count, relevance_score, \
                matched_fields}]}, at most 50.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemListEntities => ActionSpec::new(
            id,
            "List entities",
            "Paginated listing of all entities (page, default 1; per_page, default 20, max \
                100), in the order they were created. Returns {entities, page, per_page, \
                total_count, total_pages}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemSearchSubgraph => ActionSpec::new(
            id,
            "Search subgraph",
            "Searches across entity names, types, aliases and observations (each can be \
                turned off) and returns a paginated subgraph: the matching entities with their \
                observations and the relations among them. Returns {entities, relations, page, \
                per_page, total_count}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemGetSubgraphByIds => ActionSpec::new(
            id,
            "Get subgraph by IDs",
            "Retrieves a set of entities by their IDs (at most 100) with observations and the \
                relations among them. Returns {entities, relations}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemSetContext => ActionSpec::new(
            id,
            "Set context",
            "Sets the active project context (project_id: the ID of the project entity) for \
                subsequent operations; it is kept in the memory, so it holds across connections. \
                Returns {status, project_id, project_name, project_type}.",
        )
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemGetContext => ActionSpec::new(
            id,
            "Get context",
            "Returns the currently active project context {status: active, project_id, \
                project_name, project_type, description}, or {status: no_context}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemClearContext => ActionSpec::new(
            id,
            "Clear context",
            "Clears the active project context. Returns {status: context_cleared}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemBulkUpdate => ActionSpec::new(
            id,
            "Bulk update",
            "Performs multiple operations in a single atomic transaction, at most 50: \
                entities to create ({name, entity_type, aliases?, description?, observations?}), \
                observations to add ({entity_id, text_content}), relations to create \
                ({from_entity_id, to_entity_id, relation_type}). Rolls back entirely on any \
                error. Returns {status, operations, entities, observations, relations}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        ActionId::GraphmemSuggestMerges => ActionSpec::new(
            id,
            "Suggest merges",
            "Finds potential duplicate entities by vector cosine similarity: pairs within \
                threshold (maximum cosine distance, default 0.3), at most limit (default 20), \
                optionally of one entity_type. Returns {suggestions:[{entity_a, entity_b, \
                cosine_distance, recommendation}]}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
    }
}

/// The action called `name`, which may be an alias.
pub fn resolve(name: &str) -> Option<ActionId> {
    actions()
        .into_iter()
        .find(|a| a.name() == name || a.aliases.contains(&name))
        .map(|a| a.id)
}

/// The SQL functions of the actions (`sql/actions.sql`): one per
/// action and per legacy alias, `neotoma.<name>(args jsonb) RETURNS jsonb`.
/// Each hands the request's text to the Rust dispatcher (parsed there, so
/// input serde cannot read is a VALIDATION_ERROR, not a crash) and raises an
/// error result as NT001 with the envelope, so one action is one
/// transaction. Checked in, so upgrade scripts see every change.
pub fn action_functions_sql() -> String {
    let mut out = String::from(
        "-- One SQL function per action of the catalog and per legacy alias:\n\
         --   neotoma.<action>(args jsonb DEFAULT '{}') RETURNS jsonb\n\
         -- Each hands the request's text to the Rust dispatcher (parsed there, so\n\
         -- that input serde cannot read is a VALIDATION_ERROR, not a crash) and\n\
         -- raises an error result as NT001 carrying the envelope, so the whole\n\
         -- action is one transaction.\n\
         --\n\
         -- Generated from the action catalog (core/src/catalog.rs): do not edit.\n\
         -- `NEOTOMA_BLESS=1 cargo test -p neotoma-core action_functions` rewrites\n\
         -- it; that test fails while this file and the catalog disagree.\n",
    );
    for a in actions() {
        let names = std::iter::once(a.name()).chain(a.aliases.iter().copied());
        for name in names {
            let comment = if name == a.name() {
                a.description.to_string()
            } else {
                format!("Legacy name of neotoma.{}: {}", a.name(), a.description)
            };
            out.push_str(&format!(
                "\nCREATE OR REPLACE FUNCTION neotoma.{name}(args jsonb DEFAULT '{{}}'::jsonb) RETURNS jsonb\n\
                 LANGUAGE plpgsql VOLATILE AS $body$\n\
                 DECLARE r jsonb := neotoma._invoke('{name}', coalesce(args, 'null')::text);\n\
                 BEGIN\n  \
                   IF r ? 'error' THEN PERFORM neotoma._raise(r->'error'); END IF;\n  \
                   RETURN r->'ok';\n\
                 END $body$;\n\
                 COMMENT ON FUNCTION neotoma.{name}(jsonb) IS\n  {};\n",
                sql_literal(&comment)
            ));
        }
    }
    out
}

/// `s` as a standard SQL string literal.
fn sql_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The whole catalog as served by `neotoma.action_catalog()`.
pub fn catalog_json(extension_version: &str) -> Value {
    let actions: Vec<Value> = actions().iter().map(ActionSpec::to_json).collect();
    let digest = sha256_hex(canonical_json(&Value::Array(actions.clone())).as_bytes());
    json!({
        "catalog_version": format!("{extension_version}+{}", &digest[..12]),
        "extension_version": extension_version,
        "api_version": API_VERSION,
        "actions": actions,
        "interpretation": {
            "record_function": "neotoma.record_interpretation",
        },
        "resources": {
            "list_function": "neotoma.list_resources",
            "read_function": "neotoma.read_resource",
            "templates": resources::templates(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for a in actions() {
            assert!(seen.insert(a.name()), "duplicate {}", a.name());
            for alias in a.aliases {
                assert!(seen.insert(alias), "duplicate alias {alias}");
            }
        }
    }

    #[test]
    fn every_action_has_an_object_input_schema_and_a_description() {
        for a in actions() {
            let schema = a.id.input_schema();
            assert_eq!(schema["type"], "object", "{}", a.name());
            assert!(
                a.description.len() > 40,
                "{} needs a real description",
                a.name()
            );
            if let Some(out) = a.id.output_schema() {
                assert_eq!(out["type"], "object", "{}", a.name());
            }
            assert!(!(a.read_only && a.destructive), "{}", a.name());
        }
    }

    /// An action the catalog marks takes `workspace` (a read: a name, `*`
    /// or a list; a write: a name) and says `workspace_context` in its
    /// output; no other does (set_context's `workspace` is what it sets).
    #[test]
    fn marked_actions_take_a_workspace_and_say_where_they_answered() {
        let mut reads = 0;
        for a in actions() {
            let input = a.id.input_schema();
            let takes = input["properties"].get("workspace");
            let says =
                a.id.output_schema()
                    .map(|o| o["properties"].get("workspace_context").is_some());
            match a.id.scoping() {
                Scoping::None => {
                    assert!(
                        takes.is_none() || a.id == ActionId::SetContext,
                        "{}",
                        a.name()
                    );
                    assert_ne!(says, Some(true), "{}", a.name());
                }
                scoping => {
                    let takes = takes.unwrap_or_else(|| panic!("{} takes no workspace", a.name()));
                    assert_eq!(
                        takes.get("anyOf").is_some(),
                        scoping == Scoping::Read,
                        "{}",
                        a.name()
                    );
                    assert_ne!(says, Some(false), "{}", a.name());
                    assert!(!(scoping == Scoping::Write && a.read_only), "{}", a.name());
                    reads += (scoping == Scoping::Read) as usize;
                }
            }
        }
        assert!(reads >= 17);
    }

    /// sql/actions.sql is what the catalog generates.
    #[test]
    fn action_functions_sql_is_checked_in() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../sql/actions.sql");
        let generated = action_functions_sql();
        if std::env::var_os("NEOTOMA_BLESS").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "sql/actions.sql differs from the catalog: run \
             NEOTOMA_BLESS=1 cargo test -p neotoma-core action_functions, and add \
             the change to an upgrade script"
        );
        for a in actions() {
            assert!(!a.description.contains('\\'), "{}", a.name());
        }
    }

    /// What the default profile costs an agent: its tools' name,
    /// description and input schema as `tools/list` shows them, as compact
    /// JSON.
    pub fn core_profile() -> (usize, usize) {
        let tools: Vec<Value> = actions()
            .into_iter()
            .filter(|a| a.tool && !a.legacy && a.tool_set == ToolSet::Neotoma)
            .filter(|a| group_of(a.id) == ToolGroup::Core)
            .map(|a| {
                json!({"name": a.tool_name(), "description": a.description,
                       "inputSchema": agent_schema(&a.id.input_schema(), false)})
            })
            .collect();
        (tools.len(), serde_json::to_string(&tools).unwrap().len())
    }

    #[test]
    fn the_default_profile_is_within_its_budgets() {
        let (tools, bytes) = core_profile();
        eprintln!("default profile: {tools} tools, {bytes} bytes");
        assert!(
            tools <= 24,
            "{tools} tools in the default profile (budget 24)"
        );
        assert!(
            bytes <= 24 * 1024,
            "{bytes} bytes of tools in the default profile (budget 24 KB)"
        );
    }

    #[test]
    fn every_seed_action_an_agent_needs_is_in_the_default_profile() {
        for name in [
            "store",
            "list_entity_types",
            "retrieve_entities",
            "retrieve_entity_snapshot",
            "retrieve_entity_by_identifier",
            "retrieve_field_provenance",
            "list_observations",
            "correct",
            "merge_entities",
            "create_relationship",
            "list_relationships",
            "get_relationship_snapshot",
            "retrieve_related_entities",
            "retrieve_graph_neighborhood",
            "list_timeline_events",
            "retrieve_file_url",
            "reinterpret",
        ] {
            let id = resolve(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(group_of(id), ToolGroup::Core, "{name}");
        }
        // And every other listed tool of Neotoma's is in a group of its own.
        let others = actions()
            .into_iter()
            .filter(|a| a.tool && !a.legacy && a.tool_set == ToolSet::Neotoma)
            .filter(|a| group_of(a.id) != ToolGroup::Core)
            .count();
        assert!(others >= 30, "{others}");
    }

    #[test]
    fn agent_schemas_keep_what_a_model_needs() {
        let store = agent_schema(&ActionId::Store.input_schema(), false);
        let props = store["properties"].as_object().unwrap();
        assert!(props.get("user_id").is_none() && props.get("workspace").is_none());
        assert_eq!(props["entities"]["type"], "array");
        assert_eq!(
            props["file_path"]["type"], "string",
            "optional, not nullable"
        );
        assert!(props["file_path"].get("x-neotoma-read-file").is_none());
        assert_eq!(
            store["required"],
            json!(["entities"])
                .as_array()
                .map(|_| store["required"].clone())
                .unwrap()
        );
        let search = agent_schema(&ActionId::RetrieveEntities.input_schema(), true);
        assert!(search["properties"].get("workspace").is_some());
        assert!(
            search["properties"]["search_mode"]
                .to_string()
                .contains("hybrid"),
            "enums kept"
        );
        let text = serde_json::to_string(&store).unwrap();
        assert!(
            !text.contains("\"null\"") && !text.contains("int32") && !text.contains("\\n"),
            "{text}"
        );
    }

    #[test]
    fn catalog_version_is_stable_and_tracks_content() {
        let a = catalog_json("1.2.3");
        assert_eq!(a, catalog_json("1.2.3"));
        let v = a["catalog_version"].as_str().unwrap();
        assert!(v.starts_with("1.2.3+"), "{v}");
        assert_eq!(a["actions"][0]["sql_function"], "neotoma.get_version");
        assert_eq!(resolve("get_version"), Some(ActionId::GetVersion));
        assert_eq!(resolve("ingest"), Some(ActionId::Store));
        assert_eq!(resolve("nope"), None);
    }
}
