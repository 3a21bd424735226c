//! The action catalog: every action the extension serves, with what an MCP
//! client needs to call it. The gateway builds its tool list from this (read
//! through `neotoma.action_catalog()`), so adding an action never touches it.

use crate::actions::graph_servers::{engram, graphmem, memory, workspace};
use crate::actions::{
    analytics, annotations, bulk, contests, contradictions, duplicates, entities, files, legacy,
    lifecycle, merge, metrics, plaid, providers, reclassify, records, relationships, resources,
    schemas, store, subgraph, system, timeline, traversal, types, workspaces,
};
use crate::canonical::{canonical_json, sha256_hex};
use crate::catalog_entry::Entry;
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
    ListEntityTypes = "list_entity_types": types::ListEntityTypesRequest => types::ListEntityTypesResponse;
    Correct = "correct" [write]: entities::CorrectRequest => entities::CorrectResponse;
    CreateRelationship = "create_relationship" [write]: relationships::CreateRelationshipRequest => relationships::RelationshipOut;
    ListRelationships = "list_relationships" [read]: relationships::ListRelationshipsRequest => relationships::ListRelationshipsResponse;
    GetRelationshipSnapshot = "get_relationship_snapshot" [read]: relationships::GetRelationshipSnapshotRequest => relationships::GetRelationshipSnapshotResponse;
    RetrieveRelatedEntities = "retrieve_related_entities" [read]: traversal::RetrieveRelatedEntitiesRequest => traversal::RetrieveRelatedEntitiesResponse;
    RetrieveGraphNeighborhood = "retrieve_graph_neighborhood" [read]: traversal::RetrieveGraphNeighborhoodRequest => Value;
    ListTimelineEvents = "list_timeline_events" [read]: timeline::ListTimelineEventsRequest => timeline::ListTimelineEventsResponse;
    MergeEntities = "merge_entities" [write]: merge::MergeEntitiesRequest => merge::MergeEntitiesResponse;
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
    RetrieveFieldHistory = "retrieve_field_history" [read]: entities::RetrieveFieldHistoryRequest => entities::RetrieveFieldHistoryResponse;
    ListWorkspaces = "list_workspaces": workspaces::ListWorkspacesRequest => workspaces::ListWorkspacesResponse;
    SetContext = "set_context": workspaces::SetContextRequest => workspaces::ContextResponse;
    GetContext = "get_context": workspaces::GetContextRequest => workspaces::ContextResponse;
    ClearContext = "clear_context": workspaces::ClearContextRequest => workspaces::ContextResponse;
    AnalyzeSchemaCandidates = "analyze_schema_candidates": schemas::AnalyzeSchemaCandidatesRequest => schemas::AnalyzeSchemaCandidatesResponse;
    GetSchemaRecommendations = "get_schema_recommendations": schemas::GetSchemaRecommendationsRequest => schemas::GetSchemaRecommendationsResponse;
    UpdateSchemaIncremental = "update_schema_incremental": schemas::UpdateSchemaIncrementalRequest => schemas::UpdateSchemaIncrementalResponse;
    RegisterSchema = "register_schema": schemas::RegisterSchemaRequest => schemas::RegisterSchemaResponse;
    Reinterpret = "reinterpret": files::ReinterpretRequest => files::ReinterpretResponse;
    RetrieveFileUrl = "retrieve_file_url" [read]: files::RetrieveFileUrlRequest => files::RetrieveFileUrlResponse;
    RecordInterpretation = "record_interpretation": files::RecordInterpretationRequest => Value;
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
    UpdateRecord = "update_record" [write]: records::UpdateRecordRequest => Value;
    RetrieveRecords = "retrieve_records" [read]: records::RetrieveRecordsRequest => Value;
    DeleteRecord = "delete_record" [write]: records::DeleteRecordRequest => Value;
    ListResources = "list_resources" [read]: resources::ListResourcesRequest => Value;
    ReadResource = "read_resource" [read]: resources::ReadResourceRequest => Value;
    MemoryCreateEntities = "memory_create_entities": memory::CreateEntitiesRequest => memory::CreateEntitiesResponse;
    MemoryCreateRelations = "memory_create_relations": memory::CreateRelationsRequest => memory::CreateRelationsResponse;
    MemoryAddObservations = "memory_add_observations": memory::AddObservationsRequest => memory::AddObservationsResponse;
    MemoryDeleteEntities = "memory_delete_entities": memory::DeleteEntitiesRequest => memory::SuccessResponse;
    MemoryDeleteObservations = "memory_delete_observations": memory::DeleteObservationsRequest => memory::SuccessResponse;
    MemoryDeleteRelations = "memory_delete_relations": memory::DeleteRelationsRequest => memory::SuccessResponse;
    MemoryReadGraph = "memory_read_graph": memory::ReadGraphRequest => memory::GraphResponse;
    MemorySearchNodes = "memory_search_nodes": memory::SearchNodesRequest => memory::GraphResponse;
    MemoryOpenNodes = "memory_open_nodes": memory::OpenNodesRequest => memory::GraphResponse;
    WorkspaceReadGraph = "workspace_read_graph": workspace::ReadGraphRequest => workspace::ReadGraphResponse;
    WorkspaceUpsertEntity = "workspace_upsert_entity": workspace::UpsertEntityRequest => workspace::UpsertEntityResponse;
    WorkspaceUpsertRelation = "workspace_upsert_relation": workspace::UpsertRelationRequest => workspace::UpsertRelationResponse;
    WorkspaceGetEntityRelations = "workspace_get_entity_relations": workspace::GetEntityRelationsRequest => workspace::GetEntityRelationsResponse;
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

/// One action: its id and what its family's entry says of it (title,
/// description, behaviour, tool set), read through it as fields.
pub struct ActionSpec {
    pub id: ActionId,
    entry: Entry,
}

impl std::ops::Deref for ActionSpec {
    type Target = Entry;

    fn deref(&self) -> &Entry {
        &self.entry
    }
}

impl ActionSpec {
    pub fn name(&self) -> &'static str {
        self.id.name()
    }

    /// The action `id` as its family's entry says.
    fn of(id: ActionId, entry: Entry) -> Self {
        debug_assert!(
            entry.tool_set == ToolSet::Neotoma || id.name().starts_with(entry.tool_set.name())
        );
        ActionSpec { id, entry }
    }

    /// The name its tool set lists it under.
    pub fn tool_name(&self) -> &'static str {
        match self.tool_set {
            ToolSet::Neotoma => self.name(),
            set => &self.name()[set.name().len() + 1..],
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
        Contest | Annotate | ListContradictions | Reclassify | RetrieveFieldHistory => {
            ToolGroup::Review
        }
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

/// What the catalog says of `id`: its family's entry (`spec` in each
/// module of `crate::actions`; a test lists every action).
pub fn spec(id: ActionId) -> ActionSpec {
    use crate::actions::*;
    let families: [fn(&str) -> Option<Entry>; 30] = [
        analytics::spec,
        annotations::spec,
        bulk::spec,
        contests::spec,
        contradictions::spec,
        duplicates::spec,
        entities::spec,
        files::spec,
        merge::spec,
        relationships::spec,
        timeline::spec,
        traversal::spec,
        types::spec,
        graph_servers::engram::spec,
        graph_servers::graphmem::spec,
        graph_servers::memory::spec,
        graph_servers::workspace::spec,
        legacy::spec,
        lifecycle::spec,
        metrics::spec,
        plaid::spec,
        providers::spec,
        reclassify::spec,
        records::spec,
        resources::spec,
        schemas::spec,
        store::spec,
        subgraph::spec,
        system::spec,
        workspaces::spec,
    ];
    let entry = families
        .iter()
        .find_map(|family| family(id.name()))
        .expect("every action's family has its entry");
    ActionSpec::of(id, entry)
}

/// The action called `name`, which may be an alias.
pub fn resolve(name: &str) -> Option<ActionId> {
    actions()
        .into_iter()
        .find(|a| a.name() == name || a.aliases.contains(&name))
        .map(|a| a.id)
}

/// The action named `name` (or a legacy alias of it), or the
/// VALIDATION_ERROR that names the unknown one.
pub fn action_named(name: &str) -> Result<ActionId, crate::NeotomaError> {
    resolve(name).ok_or_else(|| {
        crate::NeotomaError::validation(format!("unknown action `{name}`")).with("action", name)
    })
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
