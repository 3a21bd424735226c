//! Relationships, graph traversal, timeline events and merges.

use crate::actions::entities::{find_entity, resolve_entity, EntityRow};
use crate::catalog::to_value;
use crate::db::{self, Arg};
use crate::snapshots;
use crate::tenancy;
use neotoma_core::actions::common;
use neotoma_core::actions::graph::*;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::graph::RelationshipType;
use neotoma_core::ids::{derived_uuid, relationship_id, source_id};
use neotoma_core::reducer::{self, Observation, SnapshotState};
use neotoma_core::request::parse;
use neotoma_core::schema::check_name;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// Most entities one traversal returns.
const MAX_TRAVERSAL: usize = 10_000;
/// Deepest traversal.
const MAX_HOPS: i64 = 5;
/// Largest relationship metadata (canonical JSON bytes).
const MAX_METADATA_BYTES: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Inbound,
    Outbound,
    Both,
}

impl Direction {
    fn parse(value: Option<&str>) -> Result<Direction, NeotomaError> {
        match value.unwrap_or("both") {
            "inbound" => Ok(Direction::Inbound),
            "outbound" => Ok(Direction::Outbound),
            "both" => Ok(Direction::Both),
            other => Err(NeotomaError::invalid_field(
                "direction",
                format!("direction must be inbound, outbound or both, not `{other}`"),
            )),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Direction::Inbound => "inbound",
            Direction::Outbound => "outbound",
            Direction::Both => "both",
        }
    }
}

/// An edge of the graph.
#[derive(Debug, Clone, Deserialize)]
struct Edge {
    id: String,
    relationship_type: String,
    source_entity_id: String,
    target_entity_id: String,
}

/// Edges of these types touching `nodes` in `direction`, by id.
fn edges(
    user: &str,
    nodes: Vec<String>,
    types: Option<Vec<String>>,
    direction: Direction,
) -> Result<Vec<Edge>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id), '[]') FROM (
           SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id
           FROM neotoma.relationships r
           WHERE $4 <> 'inbound' AND r.user_id = $1::uuid AND r.source_entity_id = ANY($2)
             AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))
           UNION
           SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id
           FROM neotoma.relationships r
           WHERE $4 <> 'outbound' AND r.user_id = $1::uuid AND r.target_entity_id = ANY($2)
             AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3))) x",
        &[
            Arg::Text(user),
            Arg::Texts(nodes),
            Arg::OptTexts(types),
            Arg::Text(direction.as_str()),
        ],
    )?;
    db::from_json(v, "relationships")
}

/// A path of `rtype` relationships from `from` to `to`, if any (breadth
/// first, so the shortest).
fn find_path(
    user: &str,
    rtype: RelationshipType,
    from: &str,
    to: &str,
) -> Result<Option<Vec<String>>, NeotomaError> {
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::from([from.to_string()]);
    let mut frontier = vec![from.to_string()];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for e in edges(
            user,
            frontier,
            Some(vec![rtype.as_str().to_string()]),
            Direction::Outbound,
        )? {
            if seen.insert(e.target_entity_id.clone()) {
                parent.insert(e.target_entity_id.clone(), e.source_entity_id.clone());
                if e.target_entity_id == to {
                    let mut path = vec![to.to_string()];
                    let mut at = to.to_string();
                    while let Some(p) = parent.get(&at) {
                        path.push(p.clone());
                        at = p.clone();
                    }
                    path.reverse();
                    return Ok(Some(path));
                }
                next.push(e.target_entity_id);
            }
        }
        frontier = next;
    }
    Ok(None)
}

/// Serialises cycle checks of one user and type, so two concurrent
/// transactions cannot each add half of a cycle. The lock is a row update
/// (not an advisory lock): under READ COMMITTED the second writer waits and
/// then sees the first one's edges; under REPEATABLE READ or SERIALIZABLE,
/// whose snapshot could not see them, it fails with a serialization error
/// instead of closing a cycle.
fn lock_type(user: &str, rtype: RelationshipType) -> Result<(), NeotomaError> {
    db::run(
        "INSERT INTO neotoma.graph_write_locks AS g (user_id, relationship_type, writes)
         VALUES ($1::uuid, $2, 1)
         ON CONFLICT (user_id, relationship_type) DO UPDATE SET writes = g.writes + 1",
        &[Arg::Text(user), Arg::Text(rtype.as_str())],
    )
}

/// Refuses `source → target` when it would close a cycle of an acyclic type.
fn check_cycle(
    user: &str,
    rtype: RelationshipType,
    source: &str,
    target: &str,
) -> Result<(), NeotomaError> {
    if !rtype.acyclic() {
        return Ok(());
    }
    lock_type(user, rtype)?;
    if let Some(mut path) = find_path(user, rtype, target, source)? {
        path.insert(0, source.to_string());
        return Err(NeotomaError::new(
            ErrorCode::CycleDetected,
            format!(
                "{} from {source} to {target} would close a cycle",
                rtype.as_str()
            ),
        )
        .with("relationship_type", rtype.as_str())
        .with("cycle", path));
    }
    Ok(())
}

/// Folds new observations into a relationship's snapshot.
fn apply_to_relationship(
    user: &str,
    id: &str,
    observations: &[Observation],
    fresh: bool,
) -> Result<(), NeotomaError> {
    let row = db::json(
        "SELECT reducer_state FROM neotoma.relationships WHERE user_id = $1::uuid AND id = $2::uuid FOR UPDATE",
        &[Arg::Text(user), Arg::Text(id)],
    )?;
    let mut state: SnapshotState = if fresh || row.is_null() || row == json!({}) {
        SnapshotState::default()
    } else {
        db::from_json(row, "relationship state")?
    };
    for o in observations {
        reducer::apply(&mut state, o, &Default::default());
    }
    let r = reducer::render(&state);
    db::run(
        "UPDATE neotoma.relationships SET snapshot = $3, provenance = $4, reducer_state = $5,
                observation_count = $6, last_observation_at = neotoma._from_micros($7)
         WHERE user_id = $1::uuid AND id = $2::uuid",
        &[
            Arg::Text(user),
            Arg::Text(id),
            Arg::Json(&Value::Object(r.snapshot)),
            Arg::Json(&Value::Object(r.provenance)),
            Arg::Json(&serde_json::to_value(&state).unwrap_or_default()),
            Arg::Int(state.observation_count as i64),
            Arg::Int(state.last_observation_at.unwrap_or(0)),
        ],
    )
}

/// Records one assertion of `source → target` (creating the relationship if
/// new); asserting the same thing again adds nothing.
fn assert_relationship(
    user: &Uuid,
    rtype: RelationshipType,
    source: &str,
    target: &str,
    metadata: &Map<String, Value>,
) -> Result<Value, NeotomaError> {
    let user_s = user.to_string();
    check_cycle(&user_s, rtype, source, target)?;
    let id = relationship_id(user, rtype.as_str(), source, target).to_string();
    db::run(
        "INSERT INTO neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[Arg::Text(&user_s), Arg::Text(&id), Arg::Text(rtype.as_str()), Arg::Text(source), Arg::Text(target)],
    )?;
    let content = json!({"relationship": {"relationship_type": rtype.as_str(), "source_entity_id": source,
                                          "target_entity_id": target, "metadata": metadata}});
    let content_hash = sha256_hex(canonical_json(&content).as_bytes());
    let source_s = source_id(user, &content_hash).to_string();
    db::run(
        "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, content)
         VALUES ($1::uuid, $2::uuid, $3, 'relationship', 'application/json', $4) ON CONFLICT DO NOTHING",
        &[Arg::Text(&user_s), Arg::Text(&source_s), Arg::Text(&content_hash), Arg::Json(&content)],
    )?;
    let observation_id =
        derived_uuid("relationship_observation", &[&user_s, &id, &source_s]).to_string();
    let inserted = db::json(
        "WITH ins AS (
           INSERT INTO neotoma.relationship_observations (user_id, id, relationship_id, source_id, observed_at, metadata)
           VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, clock_timestamp(), $5)
           ON CONFLICT DO NOTHING
           RETURNING neotoma._micros(observed_at) AS t)
         SELECT to_jsonb(t) FROM ins",
        &[
            Arg::Text(&user_s),
            Arg::Text(&observation_id),
            Arg::Text(&id),
            Arg::Text(&source_s),
            Arg::Json(&Value::Object(metadata.clone())),
        ],
    )?;
    if let Some(t) = inserted.as_i64() {
        let o = Observation {
            id: observation_id,
            source_id: source_s,
            observed_at: t,
            source_priority: 100,
            specificity_score: 1.0,
            fields: metadata.clone(),
        };
        apply_to_relationship(&user_s, &id, &[o], false)?;
    }
    relationship_out(&user_s, &id)
}

fn relationship_out(user: &str, id: &str) -> Result<Value, NeotomaError> {
    db::json(
        "SELECT jsonb_build_object('id', id, 'relationship_type', relationship_type,
                  'source_entity_id', source_entity_id, 'target_entity_id', target_entity_id,
                  'metadata', snapshot, 'created_at', neotoma._iso(created_at))
         FROM neotoma.relationships WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::Text(user), Arg::Text(id)],
    )
}

fn metadata_of(m: Option<Map<String, Value>>) -> Result<Map<String, Value>, NeotomaError> {
    let m = m.unwrap_or_default();
    if canonical_json(&Value::Object(m.clone())).len() > MAX_METADATA_BYTES {
        return Err(NeotomaError::invalid_field(
            "metadata",
            format!("metadata is larger than {MAX_METADATA_BYTES} bytes"),
        ));
    }
    for k in m.keys() {
        check_name("metadata", k)?;
    }
    Ok(m)
}

pub fn create_relationship(args: &Value) -> Result<Value, NeotomaError> {
    let req: CreateRelationshipRequest = parse(args)?;
    let rtype = RelationshipType::parse("relationship_type", &req.relationship_type)?;
    let source = common::entity_id("source_entity_id", &req.source_entity_id)?;
    let target = common::entity_id("target_entity_id", &req.target_entity_id)?;
    let metadata = metadata_of(req.metadata)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let (s, _) = resolve_entity(&user, &source)?;
        let (t, _) = resolve_entity(&user, &target)?;
        if s.id == t.id {
            return Err(
                NeotomaError::validation("an entity cannot be related to itself")
                    .with("field", "target_entity_id")
                    .with("entity_id", s.id),
            );
        }
        assert_relationship(&user, rtype, &s.id, &t.id, &metadata)
    })
}

pub fn list_relationships(args: &Value) -> Result<Value, NeotomaError> {
    let req: ListRelationshipsRequest = parse(args)?;
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    let direction = Direction::parse(req.direction.as_deref())?;
    let rtype = req
        .relationship_type
        .as_deref()
        .map(|t| RelationshipType::parse("relationship_type", t))
        .transpose()?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let (entity, _) = resolve_entity(&user, &entity_id)?;
        db::json(
            "WITH r AS (
               SELECT * FROM neotoma.relationships r
               WHERE r.user_id = $1::uuid AND r.merged_into IS NULL
                 AND (($3 <> 'inbound' AND r.source_entity_id = $2) OR ($3 <> 'outbound' AND r.target_entity_id = $2))
                 AND ($4::text IS NULL OR r.relationship_type = $4))
             SELECT jsonb_build_object(
               'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object(
                   'id', p.id, 'relationship_type', p.relationship_type,
                   'source_entity_id', p.source_entity_id, 'target_entity_id', p.target_entity_id,
                   'metadata', p.snapshot, 'created_at', neotoma._iso(p.created_at))
                 ORDER BY p.created_at DESC, p.id)
                 FROM (SELECT * FROM r ORDER BY created_at DESC, id LIMIT $5 OFFSET $6) p), '[]'),
               'total', (SELECT count(*) FROM r), 'limit', $5, 'offset', $6)",
            &[
                Arg::Text(&user.to_string()),
                Arg::Text(&entity.id),
                Arg::Text(direction.as_str()),
                Arg::OptText(rtype.map(|t| t.as_str())),
                Arg::Int(limit),
                Arg::Int(offset),
            ],
        )
    })
}

pub fn get_relationship_snapshot(args: &Value) -> Result<Value, NeotomaError> {
    let req: GetRelationshipSnapshotRequest = parse(args)?;
    let rtype = RelationshipType::parse("relationship_type", &req.relationship_type)?;
    let source = common::entity_id("source_entity_id", &req.source_entity_id)?;
    let target = common::entity_id("target_entity_id", &req.target_entity_id)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let (s, _) = resolve_entity(&user, &source)?;
        let (t, _) = resolve_entity(&user, &target)?;
        let id = relationship_id(&user, rtype.as_str(), &s.id, &t.id).to_string();
        let found = db::json(
            "SELECT jsonb_build_object(
               'snapshot', jsonb_build_object(
                  'relationship_key', r.relationship_type || ':' || r.source_entity_id || ':' || r.target_entity_id,
                  'id', r.id, 'relationship_type', r.relationship_type,
                  'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
                  'schema_version', '1.0', 'snapshot', r.snapshot,
                  'computed_at', neotoma._iso(r.last_observation_at),
                  'observation_count', r.observation_count,
                  'last_observation_at', neotoma._iso(r.last_observation_at),
                  'provenance', r.provenance, 'user_id', r.user_id),
               'observations', coalesce((SELECT jsonb_agg(jsonb_build_object(
                   'id', o.id, 'source_id', o.source_id, 'observed_at', neotoma._iso(o.observed_at),
                   'specificity_score', o.specificity_score, 'source_priority', o.source_priority,
                   'metadata', o.metadata) ORDER BY o.observed_at DESC, o.id)
                 FROM neotoma.relationship_observations o
                 WHERE o.user_id = r.user_id AND o.relationship_id = r.id), '[]'))
             FROM neotoma.relationships r WHERE r.user_id = $1::uuid AND r.id = $2::uuid",
            &[Arg::Text(&user.to_string()), Arg::Text(&id)],
        )?;
        if found.is_null() {
            return Err(NeotomaError::new(
                ErrorCode::NotFound,
                format!(
                    "no {} relationship from {} to {}",
                    rtype.as_str(),
                    s.id,
                    t.id
                ),
            )
            .with("relationship_type", rtype.as_str())
            .with("source_entity_id", s.id)
            .with("target_entity_id", t.id));
        }
        Ok(found)
    })
}

/// id → {id, entity_type, canonical_name[, snapshot]} of these entities.
fn entity_summaries(
    user: &str,
    ids: Vec<String>,
    with_snapshots: bool,
) -> Result<Map<String, Value>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_object_agg(e.id, jsonb_build_object('id', e.id, 'entity_type', e.entity_type,
                   'canonical_name', e.canonical_name)
                 || CASE WHEN $3 = 'true' THEN jsonb_build_object('snapshot', coalesce(s.snapshot, '{}')) ELSE '{}' END), '{}')
         FROM neotoma.entities e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
         WHERE e.user_id = $1::uuid AND e.id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(ids), Arg::Text(if with_snapshots { "true" } else { "false" })],
    )?;
    Ok(v.as_object().cloned().unwrap_or_default())
}

pub fn retrieve_related_entities(args: &Value) -> Result<Value, NeotomaError> {
    let req: RetrieveRelatedEntitiesRequest = parse(args)?;
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
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let user_s = user.to_string();
        let (start, _) = resolve_entity(&user, &entity_id)?;
        let mut visited: BTreeSet<String> = BTreeSet::from([start.id.clone()]);
        let mut seen_edges: BTreeSet<String> = BTreeSet::new();
        let mut found: Vec<(String, i64)> = Vec::new();
        let mut walked: Vec<(Edge, i64)> = Vec::new();
        let mut frontier = vec![start.id.clone()];
        let mut hops = 0;
        let mut truncated = false;
        while hops < max_hops && !frontier.is_empty() && !truncated {
            hops += 1;
            let in_frontier: BTreeSet<&String> = frontier.iter().collect();
            let mut next = BTreeSet::new();
            for e in edges(&user_s, frontier.clone(), types.clone(), direction)? {
                if !seen_edges.insert(e.id.clone()) {
                    continue;
                }
                for node in [&e.source_entity_id, &e.target_entity_id] {
                    if !in_frontier.contains(node) && !visited.contains(node) {
                        next.insert(node.clone());
                    }
                }
                walked.push((e, hops));
            }
            for node in &next {
                if found.len() >= MAX_TRAVERSAL {
                    truncated = true;
                    break;
                }
                visited.insert(node.clone());
                found.push((node.clone(), hops));
            }
            frontier = next.into_iter().collect();
        }
        let summaries = entity_summaries(
            &user_s,
            found.iter().map(|(id, _)| id.clone()).collect(),
            include_entities,
        )?;
        let entities: Vec<RelatedEntity> = found
            .iter()
            .filter_map(|(id, hop)| {
                let s = summaries.get(id)?;
                Some(RelatedEntity {
                    id: id.clone(),
                    entity_type: s["entity_type"].as_str()?.to_string(),
                    canonical_name: s["canonical_name"].as_str()?.to_string(),
                    snapshot: s.get("snapshot").and_then(Value::as_object).cloned(),
                    hop: *hop,
                })
            })
            .collect();
        let relationships: Vec<RelationshipRef> = walked
            .into_iter()
            .map(|(e, _)| RelationshipRef {
                id: e.id,
                relationship_type: e.relationship_type,
                source_entity_id: e.source_entity_id,
                target_entity_id: e.target_entity_id,
            })
            .collect();
        to_value(&RetrieveRelatedEntitiesResponse {
            total_entities: entities.len() as i64,
            total_relationships: relationships.len() as i64,
            entities,
            relationships,
            hops_traversed: hops,
            truncated,
        })
    })
}

/// JSON objects, as listed in a response.
type Objects = Vec<Map<String, Value>>;

/// Relationships touching these entities (one hop, both directions) and the
/// entities at their other ends: the `related_*` fields of `store`.
pub fn related_to(user: &Uuid, ids: &[String]) -> Result<(Objects, Objects), NeotomaError> {
    let user_s = user.to_string();
    let mut rels = edges(&user_s, ids.to_vec(), None, Direction::Both)?;
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
    let summaries = entity_summaries(&user_s, others.iter().cloned().collect(), true)?;
    let metadata = db::json(
        "SELECT coalesce(jsonb_object_agg(id, snapshot), '{}') FROM neotoma.relationships
         WHERE user_id = $1::uuid AND id::text = ANY($2)",
        &[
            Arg::Text(&user_s),
            Arg::Texts(rels.iter().map(|e| e.id.clone()).collect()),
        ],
    )?;
    let entities = others
        .iter()
        .filter_map(|id| summaries.get(id).and_then(Value::as_object).cloned())
        .collect();
    let relationships = rels
        .into_iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert(
                "metadata".into(),
                metadata.get(&e.id).cloned().unwrap_or(json!({})),
            );
            m.insert("id".into(), json!(e.id));
            m.insert("relationship_type".into(), json!(e.relationship_type));
            m.insert("source_entity_id".into(), json!(e.source_entity_id));
            m.insert("target_entity_id".into(), json!(e.target_entity_id));
            m
        })
        .collect();
    Ok((entities, relationships))
}

pub fn retrieve_graph_neighborhood(args: &Value) -> Result<Value, NeotomaError> {
    let req: RetrieveGraphNeighborhoodRequest = parse(args)?;
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
    match node_type {
        "entity" => {
            let entity_id = common::entity_id("node_id", &req.node_id)?;
            tenancy::with_user(req.user_id.as_deref(), |user| {
                let (entity, redirected) = resolve_entity(&user, &entity_id)?;
                let mut out = db::json(
                    ENTITY_NEIGHBORHOOD,
                    &[
                        Arg::Text(&user.to_string()),
                        Arg::Text(&entity.id),
                        Arg::Text(rels),
                        Arg::Text(sources),
                        Arg::Text(events),
                        Arg::Text(observations),
                    ],
                )?;
                if let Some(from) = redirected {
                    out["redirected_from"] = json!(from);
                }
                Ok(out)
            })
        }
        "source" => {
            let source = common::uuid("node_id", &req.node_id)?;
            tenancy::with_user(req.user_id.as_deref(), |user| {
                let out = db::json(
                    SOURCE_NEIGHBORHOOD,
                    &[
                        Arg::Text(&user.to_string()),
                        Arg::Text(&source.to_string()),
                        Arg::Text(rels),
                        Arg::Text(events),
                        Arg::Text(observations),
                    ],
                )?;
                if out.is_null() {
                    return Err(NeotomaError::new(
                        ErrorCode::SourceNotFound,
                        format!("no source {source}"),
                    )
                    .with("source_id", source.to_string()));
                }
                Ok(out)
            })
        }
        other => Err(NeotomaError::invalid_field(
            "node_type",
            format!("node_type must be entity or source, not `{other}`"),
        )),
    }
}

const ENTITY_NEIGHBORHOOD: &str = "
    WITH rel AS (
      SELECT r.* FROM neotoma.relationships r
      WHERE $3 = 'true' AND r.user_id = $1::uuid AND r.merged_into IS NULL
        AND (r.source_entity_id = $2 OR r.target_entity_id = $2)),
    own AS (
      SELECT o.* FROM neotoma.observations o
      WHERE o.user_id = $1::uuid
        AND o.entity_id = ANY(ARRAY[$2::text] || ARRAY(SELECT id FROM neotoma.entities
                                   WHERE user_id = $1::uuid AND merged_into = $2)))
    SELECT jsonb_build_object(
      'node_id', e.id, 'node_type', 'entity',
      'entity', jsonb_build_object('id', e.id, 'entity_type', e.entity_type, 'canonical_name', e.canonical_name,
                                   'observation_count', coalesce(s.observation_count, 0),
                                   'last_observation_at', neotoma._iso(s.last_observation_at)),
      'entity_snapshot', coalesce(s.snapshot, '{}'))
    || CASE WHEN $3 = 'true' THEN jsonb_build_object(
         'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id,
             'relationship_type', r.relationship_type, 'source_entity_id', r.source_entity_id,
             'target_entity_id', r.target_entity_id, 'metadata', r.snapshot,
             'created_at', neotoma._iso(r.created_at)) ORDER BY r.id) FROM rel r), '[]'),
         'related_entities', coalesce((SELECT jsonb_agg(jsonb_build_object('id', x.id,
             'entity_type', x.entity_type, 'canonical_name', x.canonical_name,
             'snapshot', coalesce(xs.snapshot, '{}')) ORDER BY x.id)
           FROM neotoma.entities x
           LEFT JOIN neotoma.entity_snapshots xs ON xs.user_id = x.user_id AND xs.entity_id = x.id
           WHERE x.user_id = $1::uuid AND x.id IN (SELECT CASE WHEN source_entity_id = $2 THEN target_entity_id
                                                               ELSE source_entity_id END FROM rel)), '[]'))
       ELSE '{}' END
    || CASE WHEN $4 = 'true' THEN jsonb_build_object(
         'related_sources', coalesce((SELECT jsonb_agg(jsonb_build_object('id', src.id,
             'source_type', src.source_type, 'mime_type', src.mime_type,
             'original_filename', src.original_filename, 'content_hash', src.content_hash,
             'created_at', neotoma._iso(src.created_at)) ORDER BY src.created_at, src.id)
           FROM neotoma.sources src
           WHERE src.user_id = $1::uuid AND src.id IN (SELECT source_id FROM own)), '[]'))
       ELSE '{}' END
    || CASE WHEN $5 = 'true' THEN jsonb_build_object(
         'timeline_events', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id,
             'event_type', t.event_type, 'event_timestamp', neotoma._iso(t.event_timestamp),
             'source_id', t.source_id, 'entity_ids', to_jsonb(t.entity_ids), 'properties', t.properties)
             ORDER BY t.event_timestamp DESC, t.id)
           FROM neotoma.timeline_events t WHERE t.user_id = $1::uuid AND t.entity_id = $2), '[]'))
       ELSE '{}' END
    || CASE WHEN $6 = 'true' THEN jsonb_build_object(
         'observations', coalesce((SELECT jsonb_agg(jsonb_build_object('id', o.id, 'entity_id', o.entity_id,
             'source_id', o.source_id, 'kind', o.kind, 'observed_at', neotoma._iso(o.observed_at),
             'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
             'fields', o.fields) ORDER BY o.observed_at DESC, o.id) FROM own o), '[]'))
       ELSE '{}' END
    FROM neotoma.entities e
    LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
    WHERE e.user_id = $1::uuid AND e.id = $2";

const SOURCE_NEIGHBORHOOD: &str = "
    WITH obs AS (
      SELECT o.* FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.source_id = $2::uuid),
    ents AS (
      SELECT DISTINCT coalesce(e.merged_into, e.id) AS id FROM obs
      JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = obs.entity_id)
    SELECT jsonb_build_object(
      'node_id', src.id, 'node_type', 'source',
      'source_material', jsonb_build_object('id', src.id, 'source_type', src.source_type,
          'mime_type', src.mime_type, 'original_filename', src.original_filename,
          'content_hash', src.content_hash, 'file_size', src.file_size, 'provenance', src.provenance,
          'created_at', neotoma._iso(src.created_at)),
      'related_entities', coalesce((SELECT jsonb_agg(jsonb_build_object('id', x.id,
          'entity_type', x.entity_type, 'canonical_name', x.canonical_name,
          'snapshot', coalesce(xs.snapshot, '{}')) ORDER BY x.id)
        FROM neotoma.entities x
        LEFT JOIN neotoma.entity_snapshots xs ON xs.user_id = x.user_id AND xs.entity_id = x.id
        WHERE x.user_id = $1::uuid AND x.id IN (SELECT id FROM ents)), '[]'))
    || CASE WHEN $3 = 'true' THEN jsonb_build_object(
         'relationships', coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id,
             'relationship_type', r.relationship_type, 'source_entity_id', r.source_entity_id,
             'target_entity_id', r.target_entity_id, 'metadata', r.snapshot,
             'created_at', neotoma._iso(r.created_at)) ORDER BY r.id)
           FROM neotoma.relationships r
           WHERE r.user_id = $1::uuid AND r.merged_into IS NULL
             AND (r.id IN (SELECT relationship_id FROM neotoma.relationship_observations ro
                           WHERE ro.user_id = $1::uuid AND ro.source_id = $2::uuid)
                  OR r.source_entity_id IN (SELECT id FROM ents) AND r.target_entity_id IN (SELECT id FROM ents))), '[]'))
       ELSE '{}' END
    || CASE WHEN $4 = 'true' THEN jsonb_build_object(
         'timeline_events', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id,
             'event_type', t.event_type, 'event_timestamp', neotoma._iso(t.event_timestamp),
             'source_id', t.source_id, 'entity_ids', to_jsonb(t.entity_ids), 'properties', t.properties)
             ORDER BY t.event_timestamp DESC, t.id)
           FROM neotoma.timeline_events t WHERE t.user_id = $1::uuid AND t.source_id = $2::uuid), '[]'))
       ELSE '{}' END
    || CASE WHEN $5 = 'true' THEN jsonb_build_object(
         'observations', coalesce((SELECT jsonb_agg(jsonb_build_object('id', o.id, 'entity_id', o.entity_id,
             'source_id', o.source_id, 'kind', o.kind, 'observed_at', neotoma._iso(o.observed_at),
             'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
             'fields', o.fields) ORDER BY o.observed_at DESC, o.id) FROM obs o), '[]'))
       ELSE '{}' END
    FROM neotoma.sources src WHERE src.user_id = $1::uuid AND src.id = $2::uuid";

pub fn list_timeline_events(args: &Value) -> Result<Value, NeotomaError> {
    let req: ListTimelineEventsRequest = parse(args)?;
    if let Some(t) = &req.event_type {
        check_name("event_type", t)?;
    }
    let after = req
        .after_date
        .as_deref()
        .map(|d| common::timestamp("after_date", d))
        .transpose()?;
    let before = req
        .before_date
        .as_deref()
        .map(|d| common::timestamp("before_date", d))
        .transpose()?;
    let source = req
        .source_id
        .as_deref()
        .map(|s| common::uuid("source_id", s))
        .transpose()?
        .map(|u| u.to_string());
    let entity = req
        .entity_id
        .as_deref()
        .map(|e| common::entity_id("entity_id", e))
        .transpose()?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let entity = match entity {
            Some(e) => Some(resolve_entity(&user, &e)?.0.id),
            None => None,
        };
        db::json(
            "WITH t AS (
               SELECT * FROM neotoma.timeline_events t
               WHERE t.user_id = $1::uuid
                 AND ($2::text IS NULL OR t.event_type = $2)
                 AND ($3::text IS NULL OR t.event_timestamp >= $3::timestamptz)
                 AND ($4::text IS NULL OR t.event_timestamp < $4::timestamptz)
                 AND ($5::text IS NULL OR t.source_id = $5::uuid)
                 AND ($6::text IS NULL OR t.entity_id = $6))
             SELECT jsonb_build_object(
               'events', coalesce((SELECT jsonb_agg(jsonb_build_object('id', p.id, 'event_type', p.event_type,
                   'event_timestamp', neotoma._iso(p.event_timestamp), 'source_id', p.source_id,
                   'entity_ids', to_jsonb(p.entity_ids), 'properties', p.properties)
                 ORDER BY p.event_timestamp DESC, p.id)
                 FROM (SELECT * FROM t ORDER BY event_timestamp DESC, id LIMIT $7 OFFSET $8) p), '[]'),
               'total', (SELECT count(*) FROM t), 'limit', $7, 'offset', $8)",
            &[
                Arg::Text(&user.to_string()),
                Arg::OptText(req.event_type.as_deref()),
                Arg::OptText(after.as_deref()),
                Arg::OptText(before.as_deref()),
                Arg::OptText(source.as_deref()),
                Arg::OptText(entity.as_deref()),
                Arg::Int(limit),
                Arg::Int(offset),
            ],
        )
    })
}

pub fn merge_entities(args: &Value) -> Result<Value, NeotomaError> {
    let req: MergeEntitiesRequest = parse(args)?;
    let from = common::entity_id("from_entity_id", &req.from_entity_id)?;
    let to = common::entity_id("to_entity_id", &req.to_entity_id)?;
    if from == to {
        return Err(NeotomaError::invalid_field(
            "to_entity_id",
            "an entity cannot be merged into itself",
        ));
    }
    if req.merge_reason.as_ref().is_some_and(|r| r.len() > 2000) {
        return Err(NeotomaError::invalid_field(
            "merge_reason",
            "merge_reason is longer than 2000 characters",
        ));
    }
    tenancy::with_user(req.user_id.as_deref(), |user| {
        merge(&user, &from, &to, req.merge_reason.as_deref())
    })
}

fn merged_already(e: &EntityRow, field: &str) -> Option<NeotomaError> {
    e.merged_into.as_ref().map(|into| {
        NeotomaError::new(
            ErrorCode::EntityAlreadyMerged,
            format!("{} was already merged into {into}", e.id),
        )
        .with("field", field)
        .with("entity_id", e.id.clone())
        .with("merged_into", into.clone())
    })
}

fn merge(user: &Uuid, from: &str, to: &str, reason: Option<&str>) -> Result<Value, NeotomaError> {
    let user_s = user.to_string();
    // Merges of this user's entities wait for every fold in progress (and
    // folds for the merge); then locks in the order every writer uses: the
    // entity type (shared), then the entities by id. NO KEY UPDATE, like the
    // snapshot trigger: a FOR UPDATE would also wait for the key-share locks
    // of a concurrent store's foreign keys, taken in its input order, and
    // could deadlock with it. See snapshots.
    snapshots::lock_user(&user_s, true)?;
    snapshots::lock_types_of(&user_s, &[from.to_string(), to.to_string()])?;
    // The entities already merged into `from` are re-pointed too: they are
    // locked in the same ordered pass.
    db::run(
        "SELECT 1 FROM neotoma.entities WHERE user_id = $1::uuid AND (id = ANY($2) OR merged_into = $3)
         ORDER BY id FOR NO KEY UPDATE",
        &[
            Arg::Text(&user_s),
            Arg::Texts(vec![from.to_string(), to.to_string()]),
            Arg::Text(from),
        ],
    )?;
    let not_found = |id: &str, field: &str| {
        NeotomaError::new(
            ErrorCode::EntityNotFound,
            format!("no entity {id} (for this user)"),
        )
        .with("field", field)
        .with("entity_id", id)
    };
    let f = find_entity(user, from)?.ok_or_else(|| not_found(from, "from_entity_id"))?;
    let t = find_entity(user, to)?.ok_or_else(|| not_found(to, "to_entity_id"))?;
    if let Some(e) =
        merged_already(&f, "from_entity_id").or_else(|| merged_already(&t, "to_entity_id"))
    {
        return Err(e);
    }
    if f.entity_type != t.entity_type {
        return Err(NeotomaError::invalid_field(
            "to_entity_id",
            format!(
                "cannot merge a {} into a {}: entities must have the same type",
                f.entity_type, t.entity_type
            ),
        ));
    }
    let moved = db::json(
        "SELECT jsonb_build_object(
           'observations', (SELECT count(*) FROM neotoma.observations o WHERE o.user_id = $1::uuid
                              AND o.entity_id = ANY(ARRAY[$2::text] || ARRAY(SELECT id FROM neotoma.entities
                                   WHERE user_id = $1::uuid AND merged_into = $2))),
           'snapshot', (SELECT to_jsonb(s) - 'user_id' - 'reducer_state' FROM neotoma.entity_snapshots s
                        WHERE s.user_id = $1::uuid AND s.entity_id = $2))",
        &[Arg::Text(&user_s), Arg::Text(from)],
    )?;
    db::run(
        "UPDATE neotoma.entities SET merged_into = $3, merged_at = coalesce(merged_at, now())
         WHERE user_id = $1::uuid AND (id = $2 OR merged_into = $2)",
        &[Arg::Text(&user_s), Arg::Text(from), Arg::Text(to)],
    )?;
    let relationships_moved = move_relationships(user, from, to)?;
    // `from` loses its timeline events; `to` folds both entities' observations.
    snapshots::recompute(user, &[from.to_string(), to.to_string()])?;
    let merge_id = derived_uuid("merge", &[&user_s, from, to]).to_string();
    let merged_at = db::text(
        "INSERT INTO neotoma.entity_merges (user_id, id, from_entity_id, to_entity_id, merge_reason,
             observations_moved, relationships_moved, from_snapshot)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8)
         RETURNING neotoma._iso(merged_at)",
        &[
            Arg::Text(&user_s),
            Arg::Text(&merge_id),
            Arg::Text(from),
            Arg::Text(to),
            Arg::OptText(reason),
            Arg::Int(moved["observations"].as_i64().unwrap_or(0)),
            Arg::Int(relationships_moved),
            Arg::Json(&moved["snapshot"]),
        ],
    )?
    .unwrap_or_default();
    to_value(&MergeEntitiesResponse {
        from_entity_id: from.to_string(),
        to_entity_id: to.to_string(),
        observations_moved: moved["observations"].as_i64().unwrap_or(0),
        relationships_moved,
        merged_at,
        merge_reason: reason.map(str::to_string),
    })
}

/// Re-keys the relationships of `from` onto `to`: each becomes (or joins) the
/// relationship with `to` in its place, with copies of its observations; the
/// old one points at it. A relationship between `from` and `to` themselves
/// would become a self-loop and is dissolved (it points at the nil UUID).
fn move_relationships(user: &Uuid, from: &str, to: &str) -> Result<i64, NeotomaError> {
    let user_s = user.to_string();
    let old = edges(&user_s, vec![from.to_string()], None, Direction::Both)?;
    let mut rekeyed: BTreeMap<String, (RelationshipType, String, String)> = BTreeMap::new();
    let mut moves = 0;
    for e in &old {
        let rtype = RelationshipType::parse("relationship_type", &e.relationship_type)?;
        let swap = |id: &String| {
            if id == from {
                to.to_string()
            } else {
                id.clone()
            }
        };
        let (s, t) = (swap(&e.source_entity_id), swap(&e.target_entity_id));
        let new_id = if s == t {
            Uuid::nil().to_string()
        } else {
            let id = relationship_id(user, rtype.as_str(), &s, &t).to_string();
            db::run(
                "INSERT INTO neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id)
                 VALUES ($1::uuid, $2::uuid, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[Arg::Text(&user_s), Arg::Text(&id), Arg::Text(rtype.as_str()), Arg::Text(&s), Arg::Text(&t)],
            )?;
            db::run(
                "INSERT INTO neotoma.relationship_observations (user_id, id, relationship_id, source_id,
                     observed_at, source_priority, specificity_score, metadata)
                 SELECT o.user_id, neotoma._derived_uuid('moved_relationship_observation', ARRAY[o.id::text, $3]),
                        $3::uuid, o.source_id, o.observed_at, o.source_priority, o.specificity_score, o.metadata
                 FROM neotoma.relationship_observations o
                 WHERE o.user_id = $1::uuid AND o.relationship_id = $2::uuid
                 ON CONFLICT DO NOTHING",
                &[Arg::Text(&user_s), Arg::Text(&e.id), Arg::Text(&id)],
            )?;
            rekeyed.insert(id.clone(), (rtype, s, t));
            id
        };
        db::run(
            "UPDATE neotoma.relationships SET merged_into = $3::uuid WHERE user_id = $1::uuid AND id = $2::uuid",
            &[Arg::Text(&user_s), Arg::Text(&e.id), Arg::Text(&new_id)],
        )?;
        moves += 1;
    }
    for (id, (rtype, s, t)) in &rekeyed {
        let observations = relationship_observations(&user_s, id)?;
        apply_to_relationship(&user_s, id, &observations, true)?;
        if rtype.acyclic() {
            lock_type(&user_s, *rtype)?;
            if let Some(mut path) = find_path(&user_s, *rtype, t, s)? {
                path.insert(0, s.clone());
                return Err(NeotomaError::new(
                    ErrorCode::CycleDetected,
                    format!("merging would close a {} cycle", rtype.as_str()),
                )
                .with("relationship_type", rtype.as_str())
                .with("cycle", path));
            }
        }
    }
    Ok(moves)
}

fn relationship_observations(user: &str, id: &str) -> Result<Vec<Observation>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'source_id', o.source_id,
                   'observed_at', neotoma._micros(o.observed_at), 'source_priority', o.source_priority,
                   'specificity_score', o.specificity_score, 'fields', o.metadata) ORDER BY o.id), '[]')
         FROM neotoma.relationship_observations o WHERE o.user_id = $1::uuid AND o.relationship_id = $2::uuid",
        &[Arg::Text(user), Arg::Text(id)],
    )?;
    db::from_json(v, "relationship observations")
}
