//! Walking the graph: related entities up to n hops, the neighborhood of
//! an entity or a source, and the one-hop `related_*` output of `store`.

use crate::actions::entities::resolve_live_entity;
use crate::actions::relationships::{live_edges, metadata_at, valid_at_or_now, Direction};
use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::traversal::*;
use neotoma_core::graph::RelationshipType;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use uuid::Uuid;

/// Most entities one traversal returns.
const MAX_TRAVERSAL: i64 = 10_000;
/// Deepest traversal.
const MAX_HOPS: i64 = 5;
/// id → {id, entity_type, canonical_name, snapshot} of these entities.
fn entity_summaries(user: &Uuid, ids: Vec<String>) -> Result<Map<String, Value>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_object_agg(e.id, jsonb_build_object('id', e.id, 'entity_type', e.entity_type,
                   'canonical_name', e.canonical_name, 'snapshot', coalesce(s.snapshot, '{}'))), '{}')
         FROM neotoma.entities e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
         WHERE e.user_id = $1::uuid AND e.id = ANY($2)",
        &[Arg::uuid(user), Arg::Texts(ids)],
    )?;
    Ok(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

pub fn retrieve_related_entities(
    user: Uuid,
    req: RetrieveRelatedEntitiesRequest,
) -> Result<RetrieveRelatedEntitiesResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    let direction = Direction::parse(req.direction.as_deref())?;
    let max_hops = req.max_hops.unwrap_or(1);
    if !(1..=MAX_HOPS).contains(&max_hops) {
        return Err(NeotomaError::invalid_field(
            "max_hops",
            format!("max_hops must be between 1 and {MAX_HOPS}"),
        ));
    }
    let types = req
        .relationship_types
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    RelationshipType::parse("relationship_types", t).map(|r| r.as_str().to_string())
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let include_entities = req.include_entities.unwrap_or(true);
    let valid_at = valid_at_or_now(&req.valid_at)?;
    let (start, _) = resolve_live_entity(&user, &entity_id)?;
    let scope = crate::scope::current();
    db::parsed(
        &scope.adapt(RELATED_ENTITIES)?,
        &[
            Arg::uuid(user),
            Arg::Text(&start.id),
            Arg::OptTexts(types),
            Arg::Text(direction.as_str()),
            Arg::Int(max_hops),
            Arg::Int(MAX_TRAVERSAL),
            Arg::Bool(include_entities),
            scope.arg(),
            Arg::Int(valid_at),
        ],
        "traversal",
    )
}

/// The walk of `retrieve_related_entities`, answered as the response's JSON.
const RELATED_ENTITIES: &str = include_str!("../../../sql/queries/related_entities.sql");

/// JSON objects, as listed in a response.
type Objects = Vec<Map<String, Value>>;

/// Relationships touching these entities (one hop, both directions) and the
/// entities at their other ends: the `related_*` fields of `store`.
pub fn related_to(user: &Uuid, ids: &[String]) -> Result<(Objects, Objects), NeotomaError> {
    let mut rels = live_edges(user, ids.to_vec(), None, Direction::Both)?;
    rels.truncate(100);
    if rels.is_empty() {
        return Ok((vec![], vec![]));
    }
    let own: BTreeSet<&String> = ids.iter().collect();
    let others: BTreeSet<String> = rels
        .iter()
        .flat_map(|e| [e.source_entity_id.clone(), e.target_entity_id.clone()])
        .filter(|id| !own.contains(id))
        .collect();
    let summaries = entity_summaries(user, others.iter().cloned().collect())?;
    let metadata = db::json(
        &crate::installed::adapt(
            "SELECT coalesce(jsonb_object_agg(id, jsonb_build_object('id', id, 'metadata', snapshot
                      , 'timed', neotoma._relationship_timed(user_id, id) -- new
                      )), '{}')
         FROM neotoma.relationships WHERE user_id = $1::uuid AND id = ANY($2)",
        )?,
        &[
            Arg::uuid(user),
            Arg::uuid_texts(&rels.iter().map(|e| e.id.clone()).collect::<Vec<_>>()),
        ],
    )?;
    let entities = others
        .iter()
        .filter_map(|id| summaries.get(id).and_then(Value::as_object).cloned())
        .collect();
    let mut relationships: Objects = rels
        .into_iter()
        .map(|e| {
            // {id, metadata, timed} (timed leaves in metadata_at).
            let mut m = metadata
                .get(&e.id)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            m.entry("metadata").or_insert_with(|| json!({}));
            m.insert("id".into(), json!(e.id));
            m.insert("relationship_type".into(), json!(e.relationship_type));
            m.insert("source_entity_id".into(), json!(e.source_entity_id));
            m.insert("target_entity_id".into(), json!(e.target_entity_id));
            m
        })
        .collect();
    // What holds now: their metadata now.
    metadata_at(
        user,
        db::transaction_start_micros(),
        relationships.iter_mut(),
    )?;
    Ok((entities, relationships))
}

pub fn retrieve_graph_neighborhood(
    user: Uuid,
    req: RetrieveGraphNeighborhoodRequest,
) -> Result<Value, NeotomaError> {
    let node_type = req.node_type.as_deref().unwrap_or("entity");
    let with = |flag: Option<bool>, default: bool| {
        if flag.unwrap_or(default) {
            "true"
        } else {
            "false"
        }
    };
    let (rels, sources, events, observations) = (
        with(req.include_relationships, true),
        with(req.include_sources, true),
        with(req.include_events, true),
        with(req.include_observations, false),
    );
    let valid_at = valid_at_or_now(&req.valid_at)?;
    let scope = crate::scope::current();
    match node_type {
        "entity" => {
            let entity_id = common::entity_id("node_id", &req.node_id)?;
            let (entity, redirected) = resolve_live_entity(&user, &entity_id)?;
            let mut out = db::json(
                &scope.adapt(ENTITY_NEIGHBORHOOD)?,
                &[
                    Arg::uuid(user),
                    Arg::Text(&entity.id),
                    Arg::Text(rels),
                    Arg::Text(sources),
                    Arg::Text(events),
                    Arg::Text(observations),
                    scope.arg(),
                    Arg::Int(valid_at),
                ],
            )?;
            if let Some(from) = redirected {
                out["redirected_from"] = json!(from);
            }
            relationships_at(&user, valid_at, &mut out)?;
            Ok(out)
        }
        "source" => {
            let source = common::uuid("node_id", &req.node_id)?;
            let mut out = db::json(
                &scope.adapt(SOURCE_NEIGHBORHOOD)?,
                &[
                    Arg::uuid(user),
                    Arg::uuid(source),
                    Arg::Text(rels),
                    Arg::Text(events),
                    Arg::Text(observations),
                    scope.arg(),
                    Arg::Int(valid_at),
                ],
            )?;
            if out.is_null() {
                return Err(NeotomaError::new(
                    ErrorCode::SourceNotFound,
                    format!("no source {source}"),
                )
                .with("source_id", source.to_string()));
            }
            relationships_at(&user, valid_at, &mut out)?;
            Ok(out)
        }
        other => Err(NeotomaError::invalid_field(
            "node_type",
            format!("node_type must be entity or source, not `{other}`"),
        )),
    }
}

/// A neighborhood's relationships with their metadata as true at `t`.
fn relationships_at(user: &Uuid, t: i64, out: &mut Value) -> Result<(), NeotomaError> {
    if let Some(rels) = out.get_mut("relationships").and_then(Value::as_array_mut) {
        metadata_at(user, t, rels.iter_mut().filter_map(Value::as_object_mut))?;
    }
    Ok(())
}

const ENTITY_NEIGHBORHOOD: &str = include_str!("../../../sql/queries/entity_neighborhood.sql");
const SOURCE_NEIGHBORHOOD: &str = include_str!("../../../sql/queries/source_neighborhood.sql");
