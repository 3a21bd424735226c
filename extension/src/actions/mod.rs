//! Action handlers, one module per concern. Each takes the request JSON and
//! returns the response JSON or a `NeotomaError`.

use neotoma_core::NeotomaError;
use serde_json::Value;

mod entities;
mod files;
mod graph;
mod legacy;
mod resources;
mod schemas;
mod store;
mod system;
mod types;

/// Runs the action `name` (a canonical catalog name).
pub fn dispatch(name: &str, args: &Value) -> Result<Value, NeotomaError> {
    match name {
        "get_version" => system::get_version(args),
        "get_current_time" => system::get_current_time(args),
        "store" => store::store(args),
        "retrieve_entity_snapshot" => entities::retrieve_entity_snapshot(args),
        "list_observations" => entities::list_observations(args),
        "retrieve_field_provenance" => entities::retrieve_field_provenance(args),
        "retrieve_entities" => entities::retrieve_entities(args),
        "retrieve_entity_by_identifier" => entities::retrieve_entity_by_identifier(args),
        "list_entity_types" => types::list_entity_types(args),
        "correct" => entities::correct(args),
        "create_relationship" => graph::create_relationship(args),
        "list_relationships" => graph::list_relationships(args),
        "get_relationship_snapshot" => graph::get_relationship_snapshot(args),
        "retrieve_related_entities" => graph::retrieve_related_entities(args),
        "retrieve_graph_neighborhood" => graph::retrieve_graph_neighborhood(args),
        "list_timeline_events" => graph::list_timeline_events(args),
        "merge_entities" => graph::merge_entities(args),
        "analyze_schema_candidates" => schemas::analyze_schema_candidates(args),
        "get_schema_recommendations" => schemas::get_schema_recommendations(args),
        "update_schema_incremental" => schemas::update_schema_incremental(args),
        "register_schema" => schemas::register_schema(args),
        "reinterpret" => files::reinterpret(args),
        "retrieve_file_url" => files::retrieve_file_url(args),
        "record_interpretation" => files::record_interpretation(args),
        "submit_payload" => legacy::submit_payload(args),
        "upload_file" => legacy::upload_file(args),
        "list_resources" => resources::list_resources(args),
        "read_resource" => resources::read_resource(args),
        other => Err(NeotomaError::new(
            neotoma_core::ErrorCode::ServiceUnavailable,
            format!("action `{other}` is in the catalog but this build has no handler for it"),
        )),
    }
}
