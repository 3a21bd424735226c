//! Action handlers, one module per concern, and the one adapter that serves
//! them all: parse the request into the action's request type, establish
//! the user (tenancy), call the handler, serialise its typed response.
//!
//! A handler is `fn(user, Request) -> Result<Response, NeotomaError>` with
//! the request and response types the catalog declares for its action
//! (`neotoma_core::catalog::Action`), so a missing handler, or one that
//! answers another shape than the published output schema, does not compile.

use crate::{db, scope, statistics, tenancy};
use neotoma_core::catalog::{self, action, Action, ActionId, Request};
use neotoma_core::request::parse;
use neotoma_core::tool_sets::ToolSet;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::Value;
use uuid::Uuid;

pub(crate) mod analytics;
mod annotations;
mod bulk;
mod contests;
pub(crate) mod contradictions;
mod duplicates;
mod entities;
mod erasure;
mod files;
mod graph_servers;
mod legacy;
mod lifecycle;
mod merge;
mod metrics;
mod plaid;
mod providers;
mod reclassify;
mod records;
mod relationships;
mod resources;
mod schemas;
mod search;
mod store;
mod subgraph;
mod system;
mod timeline;
mod traversal;
mod types;
mod workspaces;

pub use system::EXTENSION_VERSION;

/// Whom a handler acts for: a user it requires (`Uuid`), or a user if the
/// session or the request names one (`Option<Uuid>`).
pub trait Tenant: Sized {
    fn user(&self) -> Option<&Uuid>;
    fn establish<T>(
        user_arg: Option<&str>,
        body: impl FnOnce(Self) -> Result<T, NeotomaError>,
    ) -> Result<T, NeotomaError>;
}

impl Tenant for Uuid {
    fn user(&self) -> Option<&Uuid> {
        Some(self)
    }
    fn establish<T>(
        user_arg: Option<&str>,
        body: impl FnOnce(Self) -> Result<T, NeotomaError>,
    ) -> Result<T, NeotomaError> {
        tenancy::with_user(user_arg, body)
    }
}

impl Tenant for Option<Uuid> {
    fn user(&self) -> Option<&Uuid> {
        self.as_ref()
    }
    fn establish<T>(
        user_arg: Option<&str>,
        body: impl FnOnce(Self) -> Result<T, NeotomaError>,
    ) -> Result<T, NeotomaError> {
        tenancy::with_optional_user(user_arg, body)
    }
}

/// The handler of action `A`, acting for `U`.
pub type Handler<A, U> =
    fn(U, <A as Action>::Request) -> Result<<A as Action>::Response, NeotomaError>;

/// Parse → tenancy → workspaces → call → serialise (an action of
/// workspaces saying where it answered from).
fn serve<A: Action, U: Tenant>(
    handler: Handler<A, U>,
    args: &Value,
) -> Result<String, NeotomaError> {
    let req: A::Request = parse(args)?;
    let user_arg = req.user_id().map(str::to_string);
    let unserialisable = |e: serde_json::Error| {
        NeotomaError::new(
            ErrorCode::DbQueryFailed,
            format!("response serialisation: {e}"),
        )
    };
    U::establish(user_arg.as_deref(), |user| {
        if let (Some(u), Some(exclusive)) = (user.user(), user_lock(A::ID)) {
            crate::snapshots::lock_user(&u.to_string(), exclusive)?;
        }
        let Some(scope) = scope::establish(user.user(), req.workspace())? else {
            return serde_json::to_string(&handler(user, req)?).map_err(unserialisable);
        };
        let context = scope.context();
        let response = scope::within(Some(scope), || handler(user, req))?;
        let mut value = serde_json::to_value(&response).map_err(unserialisable)?;
        if let Value::Object(map) = &mut value {
            // A resource pinned to a workspace said where it was read.
            if !map.contains_key("workspace_context") {
                map.insert(
                    "workspace_context".into(),
                    serde_json::to_value(context).map_err(unserialisable)?,
                );
            }
        }
        serde_json::to_string(&value).map_err(unserialisable)
    })
}

/// How a write holds its user's lock ([`crate::snapshots::lock_user`])
/// from its first statement to its commit: `Some(false)` shared, so that
/// the writes that take it exclusively (`Some(true)`: erasures, merges,
/// splits, reclassifications and every write of several steps) run
/// between writers, never among them. An erasure then never removes what
/// a write is about to refer to, and a write of several steps never holds
/// a row another waits for while it waits for one the other holds: a
/// deadlock needs two writers holding locks, and an exclusive writer holds
/// them alone. Reads take no lock. Nested actions (bulk's steps) take it
/// again, which their transaction already holds.
fn user_lock(id: ActionId) -> Option<bool> {
    use ActionId::*;
    let spec = catalog::spec(id);
    if spec.read_only {
        return None;
    }
    let several_steps = matches!(
        id,
        Bulk | CreateRelationships | MergeEntities | Erase | SplitEntity | Reclassify
    ) || spec.tool_set != ToolSet::Neotoma;
    Some(several_steps)
}

/// Runs a catalog action as a step of another (its own validation,
/// tenancy and audit) and answers its response.
pub(crate) fn call(id: ActionId, args: Value) -> Result<Value, NeotomaError> {
    let text = route(id, &args)?;
    serde_json::from_str(&text)
        .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable answer: {e}")))
}

/// Runs action `id` with the request `args`; answers the response as JSON
/// text. Actions run with generic plans (see [`db::with_generic_plans`]);
/// writes then keep the planner's statistics current with what they wrote.
pub fn dispatch(id: ActionId, args: &Value) -> Result<String, NeotomaError> {
    crate::installed::sql()?;
    // Another server's tool makes several writes through Neotoma's actions:
    // a failure undoes them all even when the dispatcher is called without
    // the SQL function's raise (neotoma._invoke).
    let whole = || {
        if catalog::spec(id).tool_set == ToolSet::Neotoma {
            route(id, args)
        } else {
            db::all_or_nothing(|| route(id, args))
        }
    };
    if catalog::spec(id).read_only {
        return db::with_generic_plans(db::Work::Reads, whole);
    }
    let answer = db::with_generic_plans(db::Work::Writes, whole)?;
    statistics::keep_current()?;
    Ok(answer)
}

/// The handler of each action.
fn route(id: ActionId, args: &Value) -> Result<String, NeotomaError> {
    use action as a;
    match id {
        ActionId::GetVersion => serve::<a::GetVersion, _>(system::get_version, args),
        ActionId::GetCurrentTime => serve::<a::GetCurrentTime, _>(system::get_current_time, args),
        ActionId::Store => serve::<a::Store, _>(store::store, args),
        ActionId::RetrieveEntitySnapshot => {
            serve::<a::RetrieveEntitySnapshot, _>(entities::retrieve_entity_snapshot, args)
        }
        ActionId::ListObservations => {
            serve::<a::ListObservations, _>(entities::list_observations, args)
        }
        ActionId::RetrieveFieldHistory => {
            serve::<a::RetrieveFieldHistory, _>(entities::retrieve_field_history, args)
        }
        ActionId::RetrieveFieldProvenance => {
            serve::<a::RetrieveFieldProvenance, _>(entities::retrieve_field_provenance, args)
        }
        ActionId::RetrieveEntities => {
            serve::<a::RetrieveEntities, _>(entities::retrieve_entities, args)
        }
        ActionId::RetrieveEntityByIdentifier => {
            serve::<a::RetrieveEntityByIdentifier, _>(entities::retrieve_entity_by_identifier, args)
        }
        ActionId::ListEntityTypes => serve::<a::ListEntityTypes, _>(types::list_entity_types, args),
        ActionId::Correct => serve::<a::Correct, _>(entities::correct, args),
        ActionId::CreateRelationship => {
            serve::<a::CreateRelationship, _>(relationships::create_relationship, args)
        }
        ActionId::ListRelationships => {
            serve::<a::ListRelationships, _>(relationships::list_relationships, args)
        }
        ActionId::GetRelationshipSnapshot => {
            serve::<a::GetRelationshipSnapshot, _>(relationships::get_relationship_snapshot, args)
        }
        ActionId::RetrieveRelatedEntities => {
            serve::<a::RetrieveRelatedEntities, _>(traversal::retrieve_related_entities, args)
        }
        ActionId::RetrieveGraphNeighborhood => {
            serve::<a::RetrieveGraphNeighborhood, _>(traversal::retrieve_graph_neighborhood, args)
        }
        ActionId::ListTimelineEvents => {
            serve::<a::ListTimelineEvents, _>(timeline::list_timeline_events, args)
        }
        ActionId::MergeEntities => serve::<a::MergeEntities, _>(merge::merge_entities, args),
        ActionId::DeleteEntity => serve::<a::DeleteEntity, _>(lifecycle::delete_entity, args),
        ActionId::RestoreEntity => serve::<a::RestoreEntity, _>(lifecycle::restore_entity, args),
        ActionId::DeleteRelationship => {
            serve::<a::DeleteRelationship, _>(lifecycle::delete_relationship, args)
        }
        ActionId::RestoreRelationship => {
            serve::<a::RestoreRelationship, _>(lifecycle::restore_relationship, args)
        }
        ActionId::Erase => serve::<a::Erase, _>(lifecycle::erase, args),
        ActionId::ListPotentialDuplicates => {
            serve::<a::ListPotentialDuplicates, _>(duplicates::list_potential_duplicates, args)
        }
        ActionId::SplitEntity => serve::<a::SplitEntity, _>(duplicates::split_entity, args),
        ActionId::SearchSubgraph => serve::<a::SearchSubgraph, _>(subgraph::search_subgraph, args),
        ActionId::GetSubgraphByIds => {
            serve::<a::GetSubgraphByIds, _>(subgraph::get_subgraph_by_ids, args)
        }
        ActionId::Bulk => serve::<a::Bulk, _>(bulk::bulk, args),
        ActionId::CreateRelationships => {
            serve::<a::CreateRelationships, _>(bulk::create_relationships, args)
        }
        ActionId::ListContradictions => {
            serve::<a::ListContradictions, _>(contradictions::list_contradictions, args)
        }
        ActionId::Annotate => serve::<a::Annotate, _>(annotations::annotate, args),
        ActionId::Contest => serve::<a::Contest, _>(contests::contest, args),
        ActionId::Reclassify => serve::<a::Reclassify, _>(reclassify::reclassify, args),
        ActionId::ListWorkspaces => {
            serve::<a::ListWorkspaces, _>(workspaces::list_workspaces, args)
        }
        ActionId::SetContext => serve::<a::SetContext, _>(workspaces::set_context, args),
        ActionId::GetContext => serve::<a::GetContext, _>(workspaces::get_context, args),
        ActionId::ClearContext => serve::<a::ClearContext, _>(workspaces::clear_context, args),
        ActionId::ListRecentChanges => {
            serve::<a::ListRecentChanges, _>(lifecycle::list_recent_changes, args)
        }
        ActionId::AnalyzeSchemaCandidates => {
            serve::<a::AnalyzeSchemaCandidates, _>(schemas::analyze_schema_candidates, args)
        }
        ActionId::GetSchemaRecommendations => {
            serve::<a::GetSchemaRecommendations, _>(schemas::get_schema_recommendations, args)
        }
        ActionId::UpdateSchemaIncremental => {
            serve::<a::UpdateSchemaIncremental, _>(schemas::update_schema_incremental, args)
        }
        ActionId::RegisterSchema => serve::<a::RegisterSchema, _>(schemas::register_schema, args),
        ActionId::Reinterpret => serve::<a::Reinterpret, _>(files::reinterpret, args),
        ActionId::RetrieveFileUrl => serve::<a::RetrieveFileUrl, _>(files::retrieve_file_url, args),
        ActionId::RecordInterpretation => {
            serve::<a::RecordInterpretation, _>(files::record_interpretation, args)
        }
        ActionId::SubmitPayload => serve::<a::SubmitPayload, _>(legacy::submit_payload, args),
        ActionId::UploadFile => serve::<a::UploadFile, _>(legacy::upload_file, args),
        ActionId::GetProductAnalytics => {
            serve::<a::GetProductAnalytics, _>(analytics::get_product_analytics, args)
        }
        ActionId::GetTechnicalMetrics => {
            serve::<a::GetTechnicalMetrics, _>(metrics::get_technical_metrics, args)
        }
        ActionId::PlaidCreateLinkToken => {
            serve::<a::PlaidCreateLinkToken, _>(plaid::plaid_create_link_token, args)
        }
        ActionId::PlaidExchangePublicToken => {
            serve::<a::PlaidExchangePublicToken, _>(plaid::plaid_exchange_public_token, args)
        }
        ActionId::PlaidSync => serve::<a::PlaidSync, _>(plaid::plaid_sync, args),
        ActionId::PlaidListItems => serve::<a::PlaidListItems, _>(plaid::plaid_list_items, args),
        ActionId::RecordPlaidItem => serve::<a::RecordPlaidItem, _>(plaid::record_plaid_item, args),
        ActionId::RecordPlaidSync => serve::<a::RecordPlaidSync, _>(plaid::record_plaid_sync, args),
        ActionId::ListProviderCatalog => {
            serve::<a::ListProviderCatalog, _>(providers::list_provider_catalog, args)
        }
        ActionId::ConnectProvider => {
            serve::<a::ConnectProvider, _>(providers::connect_provider, args)
        }
        ActionId::ListConnectors => serve::<a::ListConnectors, _>(providers::list_connectors, args),
        ActionId::SyncProviderImports => {
            serve::<a::SyncProviderImports, _>(providers::sync_provider_imports, args)
        }
        ActionId::RecordConnector => {
            serve::<a::RecordConnector, _>(providers::record_connector, args)
        }
        ActionId::RecordProviderSync => {
            serve::<a::RecordProviderSync, _>(providers::record_provider_sync, args)
        }
        ActionId::UpdateRecord => serve::<a::UpdateRecord, _>(records::update_record, args),
        ActionId::RetrieveRecords => {
            serve::<a::RetrieveRecords, _>(records::retrieve_records, args)
        }
        ActionId::DeleteRecord => serve::<a::DeleteRecord, _>(records::delete_record, args),
        ActionId::ListResources => serve::<a::ListResources, _>(resources::list_resources, args),
        ActionId::ReadResource => serve::<a::ReadResource, _>(resources::read_resource, args),
        ActionId::MemoryCreateEntities => {
            serve::<a::MemoryCreateEntities, _>(graph_servers::memory::create_entities, args)
        }
        ActionId::MemoryCreateRelations => {
            serve::<a::MemoryCreateRelations, _>(graph_servers::memory::create_relations, args)
        }
        ActionId::MemoryAddObservations => {
            serve::<a::MemoryAddObservations, _>(graph_servers::memory::add_observations, args)
        }
        ActionId::MemoryDeleteEntities => {
            serve::<a::MemoryDeleteEntities, _>(graph_servers::memory::delete_entities, args)
        }
        ActionId::MemoryDeleteObservations => serve::<a::MemoryDeleteObservations, _>(
            graph_servers::memory::delete_observations,
            args,
        ),
        ActionId::MemoryDeleteRelations => {
            serve::<a::MemoryDeleteRelations, _>(graph_servers::memory::delete_relations, args)
        }
        ActionId::MemoryReadGraph => {
            serve::<a::MemoryReadGraph, _>(graph_servers::memory::read_graph, args)
        }
        ActionId::MemorySearchNodes => {
            serve::<a::MemorySearchNodes, _>(graph_servers::memory::search_nodes, args)
        }
        ActionId::MemoryOpenNodes => {
            serve::<a::MemoryOpenNodes, _>(graph_servers::memory::open_nodes, args)
        }
        ActionId::WorkspaceReadGraph => {
            serve::<a::WorkspaceReadGraph, _>(graph_servers::workspace::read_graph, args)
        }
        ActionId::WorkspaceUpsertEntity => {
            serve::<a::WorkspaceUpsertEntity, _>(graph_servers::workspace::upsert_entity, args)
        }
        ActionId::WorkspaceUpsertRelation => {
            serve::<a::WorkspaceUpsertRelation, _>(graph_servers::workspace::upsert_relation, args)
        }
        ActionId::WorkspaceGetEntityRelations => serve::<a::WorkspaceGetEntityRelations, _>(
            graph_servers::workspace::get_entity_relations,
            args,
        ),
        ActionId::EngramSendMemory => {
            serve::<a::EngramSendMemory, _>(graph_servers::engram::send_memory, args)
        }
        ActionId::EngramGetMemory => {
            serve::<a::EngramGetMemory, _>(graph_servers::engram::get_memory, args)
        }
        ActionId::EngramCorrectMemory => {
            serve::<a::EngramCorrectMemory, _>(graph_servers::engram::correct_memory, args)
        }
        ActionId::GraphmemGetVersion => {
            serve::<a::GraphmemGetVersion, _>(graph_servers::graphmem::get_version, args)
        }
        ActionId::GraphmemGetCurrentTime => {
            serve::<a::GraphmemGetCurrentTime, _>(graph_servers::graphmem::get_current_time, args)
        }
        ActionId::GraphmemCreateEntity => {
            serve::<a::GraphmemCreateEntity, _>(graph_servers::graphmem::create_entity, args)
        }
        ActionId::GraphmemGetEntity => {
            serve::<a::GraphmemGetEntity, _>(graph_servers::graphmem::get_entity, args)
        }
        ActionId::GraphmemUpdateEntity => {
            serve::<a::GraphmemUpdateEntity, _>(graph_servers::graphmem::update_entity, args)
        }
        ActionId::GraphmemDeleteEntity => {
            serve::<a::GraphmemDeleteEntity, _>(graph_servers::graphmem::delete_entity, args)
        }
        ActionId::GraphmemCreateObservation => serve::<a::GraphmemCreateObservation, _>(
            graph_servers::graphmem::create_observation,
            args,
        ),
        ActionId::GraphmemDeleteObservation => serve::<a::GraphmemDeleteObservation, _>(
            graph_servers::graphmem::delete_observation,
            args,
        ),
        ActionId::GraphmemCreateRelation => {
            serve::<a::GraphmemCreateRelation, _>(graph_servers::graphmem::create_relation, args)
        }
        ActionId::GraphmemDeleteRelation => {
            serve::<a::GraphmemDeleteRelation, _>(graph_servers::graphmem::delete_relation, args)
        }
        ActionId::GraphmemFindRelations => {
            serve::<a::GraphmemFindRelations, _>(graph_servers::graphmem::find_relations, args)
        }
        ActionId::GraphmemSearchEntities => {
            serve::<a::GraphmemSearchEntities, _>(graph_servers::graphmem::search_entities, args)
        }
        ActionId::GraphmemListEntities => {
            serve::<a::GraphmemListEntities, _>(graph_servers::graphmem::list_entities, args)
        }
        ActionId::GraphmemSearchSubgraph => {
            serve::<a::GraphmemSearchSubgraph, _>(graph_servers::graphmem::search_subgraph, args)
        }
        ActionId::GraphmemGetSubgraphByIds => serve::<a::GraphmemGetSubgraphByIds, _>(
            graph_servers::graphmem::get_subgraph_by_ids,
            args,
        ),
        ActionId::GraphmemSetContext => {
            serve::<a::GraphmemSetContext, _>(graph_servers::graphmem::set_context, args)
        }
        ActionId::GraphmemGetContext => {
            serve::<a::GraphmemGetContext, _>(graph_servers::graphmem::get_context, args)
        }
        ActionId::GraphmemClearContext => {
            serve::<a::GraphmemClearContext, _>(graph_servers::graphmem::clear_context, args)
        }
        ActionId::GraphmemBulkUpdate => {
            serve::<a::GraphmemBulkUpdate, _>(graph_servers::graphmem::bulk_update, args)
        }
        ActionId::GraphmemSuggestMerges => {
            serve::<a::GraphmemSuggestMerges, _>(graph_servers::graphmem::suggest_merges, args)
        }
    }
}
