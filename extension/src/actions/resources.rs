//! `list_resources` and `read_resource`: the neotoma:// resources, served by
//! the gateway as MCP resources. Bodies reuse the reading actions.

use super::{entities, relationships, timeline};
use crate::db::{self, Arg};
use neotoma_core::actions::entities::{
    ListObservationsRequest, RetrieveEntitiesRequest, RetrieveEntitySnapshotRequest,
};
use neotoma_core::actions::relationships::ListRelationshipsRequest;
use neotoma_core::actions::resources::*;
use neotoma_core::actions::timeline::{ListTimelineEventsRequest, ListTimelineEventsResponse};
use neotoma_core::workspace::{Requested, WorkspaceArg};
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Value};
use uuid::Uuid;

/// Most items a collection resource holds (the actions paginate further).
const MAX_ITEMS: i64 = 1000;
/// Matches a search resource holds (best first).
const SEARCH_ITEMS: i64 = 100;

/// The resources of the action's workspaces, their URIs pinned to the
/// workspace when one other than `default` is listed.
pub fn list_resources(user: Uuid, _req: ListResourcesRequest) -> Result<Value, NeotomaError> {
    let scope = crate::scope::current();
    let names = scope.names();
    let prefix = match names.as_slice() {
        [one] => prefix_of(one),
        _ => SCHEME.to_string(),
    };
    let mut listed = db::json(
        &scope.adapt(LIST_RESOURCES)?,
        &[Arg::uuid(user), scope.arg(), Arg::Text(&prefix)],
    )?;
    // The reference memory server's resource (the gateway lists it with
    // that tool set).
    if let Some(resources) = listed["resources"].as_array_mut() {
        resources.push(json!({"uri": KNOWLEDGE_GRAPH, "name": "knowledge-graph",
            "title": "Knowledge Graph",
            "description": "The full knowledge graph with all entities and relations",
            "mime_type": "application/json"}));
    }
    Ok(listed)
}

/// A resource; a URI pinned to a workspace (`neotoma://workspace/{name}/…`)
/// is read there, and says so.
pub fn read_resource(user: Uuid, req: ReadResourceRequest) -> Result<Value, NeotomaError> {
    let (pin, _) = split_pin(&req.uri)?;
    let Some(pin) = pin else {
        return read(user, req);
    };
    let scope = crate::scope::establish(
        Some(&user),
        Requested::Read(Some(&WorkspaceArg::One(pin.to_string()))),
    )?;
    let context = scope.as_ref().map(|s| s.context());
    let mut body = crate::scope::within(scope, || read(user, req))?;
    body["workspace_context"] = json!(context);
    Ok(body)
}

/// Most entities `memory://knowledge-graph` holds (read_graph pages on).
const KNOWLEDGE_GRAPH_ENTITIES: usize = 10_000;

/// `memory://knowledge-graph`: the whole graph, as the reference memory
/// server reads it (its read_graph's pages, joined; at most
/// [`KNOWLEDGE_GRAPH_ENTITIES`] entities, then `truncated`).
fn knowledge_graph(user: Uuid) -> Result<Value, NeotomaError> {
    use neotoma_core::actions::graph_servers::memory::ReadGraphRequest;
    let (mut entities, mut relations) = (Vec::new(), Vec::new());
    let mut cursor = None;
    loop {
        let page = super::graph_servers::memory::read_graph(
            user,
            ReadGraphRequest {
                limit: Some(1000),
                cursor,
                valid_at: None,
                user_id: None,
            },
        )?;
        entities.extend(page.entities);
        relations.extend(page.relations);
        cursor = page.next_cursor;
        if cursor.is_none() || entities.len() >= KNOWLEDGE_GRAPH_ENTITIES {
            break;
        }
    }
    let mut graph = json!({"entities": entities, "relations": relations});
    if cursor.is_some() {
        graph["truncated"] = json!(true);
    }
    Ok(graph)
}

fn read(user: Uuid, req: ReadResourceRequest) -> Result<Value, NeotomaError> {
    let uri = req.uri.clone();
    let kind = ResourceUri::parse(&uri)?;
    if kind == ResourceUri::KnowledgeGraph {
        return knowledge_graph(user);
    }
    let page = Some(MAX_ITEMS);
    let mut body = match &kind {
        ResourceUri::Entities(t) => {
            let r = entities::retrieve_entities(
                user,
                RetrieveEntitiesRequest {
                    entity_type: Some(t.clone()),
                    limit: page,
                    ..Default::default()
                },
            )?;
            json!({"type": "entity_collection", "entity_type": t, "entities": r.entities,
                   "total": r.total, "truncated": r.total > MAX_ITEMS})
        }
        ResourceUri::Entity(id) => {
            let r = entities::retrieve_entity_snapshot(
                user,
                RetrieveEntitySnapshotRequest {
                    entity_id: id.clone(),
                    ..Default::default()
                },
            )?;
            let mut r = json!(r);
            r["type"] = json!("entity");
            r
        }
        ResourceUri::EntityObservations(id) => {
            let r = entities::list_observations(
                user,
                ListObservationsRequest {
                    entity_id: id.clone(),
                    limit: page,
                    ..Default::default()
                },
            )?;
            json!({"type": "entity_observations", "entity_id": id,
                   "observations": r.observations, "total": r.total})
        }
        ResourceUri::EntityRelationships(id) => {
            let r = relationships::list_relationships(
                user,
                ListRelationshipsRequest {
                    entity_id: id.clone(),
                    limit: page,
                    ..Default::default()
                },
            )?;
            json!({"type": "entity_relationships", "entity_id": id,
                   "relationships": r.relationships, "total": r.total})
        }
        ResourceUri::TimelineYear(y) => {
            // The last year has no next one to stop before.
            let before = (*y < 9999).then(|| format!("{:04}-01-01", y + 1));
            let r = events_between(user, format!("{y:04}-01-01"), before)?;
            json!({"type": "timeline", "year": format!("{y:04}"), "events": r.events, "total": r.total})
        }
        ResourceUri::TimelineMonth(y, m) => {
            let (ny, nm) = if *m == 12 { (y + 1, 1) } else { (*y, m + 1) };
            let before = (ny <= 9999).then(|| format!("{ny:04}-{nm:02}-01"));
            let r = events_between(user, format!("{y:04}-{m:02}-01"), before)?;
            json!({"type": "timeline", "year": format!("{y:04}"), "month": format!("{m:02}"),
                   "events": r.events, "total": r.total})
        }
        ResourceUri::Source(id) => {
            let scope = crate::scope::current();
            let r = db::json(
                &scope.adapt(SOURCE)?,
                &[Arg::uuid(user), Arg::uuid(id), scope.arg()],
            )?;
            if r.is_null() {
                return Err(NeotomaError::new(
                    ErrorCode::SourceNotFound,
                    format!("no source {id}"),
                )
                .with("source_id", id.to_string()));
            }
            r
        }
        ResourceUri::Sources => {
            let scope = crate::scope::current();
            db::json(
                &scope.adapt(SOURCES)?,
                &[Arg::uuid(user), Arg::Int(MAX_ITEMS), scope.arg()],
            )?
        }
        ResourceUri::KnowledgeGraph => knowledge_graph(user)?,
        ResourceUri::Search(q) => {
            let r = entities::retrieve_entities(
                user,
                RetrieveEntitiesRequest {
                    search: Some(q.clone()),
                    limit: Some(SEARCH_ITEMS),
                    include_snapshots: Some(false),
                    ..Default::default()
                },
            )?;
            json!({"type": "search", "query": q, "search_method": r.search_method,
                   "entities": r.entities, "total": r.total})
        }
    };
    body["uri"] = json!(uri);
    Ok(body)
}

/// The first events of the period `[after, before)`.
fn events_between(
    user: Uuid,
    after: String,
    before: Option<String>,
) -> Result<ListTimelineEventsResponse, NeotomaError> {
    timeline::list_timeline_events(
        user,
        ListTimelineEventsRequest {
            after_date: Some(after),
            before_date: before,
            limit: Some(MAX_ITEMS),
            ..Default::default()
        },
    )
}

const SOURCE: &str = "
    SELECT jsonb_build_object('type', 'source', 'source_id', s.id, 'source_type', s.source_type,
             'mime_type', s.mime_type, 'original_filename', s.original_filename,
             'content_hash', s.content_hash, 'file_size', s.file_size, 'source_priority', s.source_priority,
             'provenance', s.provenance, 'created_at', neotoma._iso(s.created_at),
             'entities', coalesce((SELECT jsonb_agg(DISTINCT jsonb_build_object('entity_id', o.entity_id,
                                     'entity_type', o.entity_type, 'observation_id', o.id))
                                   FROM neotoma.observations o
                                   WHERE o.user_id = s.user_id AND o.source_id = s.id
                                     AND o.entity_id NOT IN (SELECT d.id FROM neotoma.entities d
                                                             WHERE d.user_id = s.user_id AND d.deleted_at IS NOT NULL)
                                     ), '[]'))
    FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid
      AND s.workspace = ANY($3::text[])
    ";

const SOURCES: &str = "
    SELECT jsonb_build_object('type', 'source_collection',
             'sources', coalesce((SELECT jsonb_agg(jsonb_build_object('source_id', p.id,
                 'source_type', p.source_type, 'mime_type', p.mime_type,
                 'original_filename', p.original_filename, 'content_hash', p.content_hash,
                 'file_size', p.file_size, 'created_at', neotoma._iso(p.created_at))
               ORDER BY p.created_at DESC, p.id)
               FROM (SELECT * FROM neotoma.sources WHERE user_id = $1::uuid
                       AND workspace = ANY($3::text[])
                     ORDER BY created_at DESC, id LIMIT $2) p), '[]'),
             'total', (SELECT count(*) FROM neotoma.sources WHERE user_id = $1::uuid
                         AND workspace = ANY($3::text[])
                      ))";

const LIST_RESOURCES: &str = include_str!("../../../sql/queries/list_resources.sql");
