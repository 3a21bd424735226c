//! Relationships: asserting them (with cycle checks for the acyclic
//! types), their snapshots (metadata reduced from every assertion), and
//! listing them. The graph primitives here (`edges`, `find_path`) serve
//! traversal and merge too.

use crate::actions::entities::resolve_live_entity;
use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::relationships::*;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::graph::RelationshipType;
use neotoma_core::ids::{derived_uuid, relationship_id, source_id};
use neotoma_core::reducer::{self, Observation, Rendered, SnapshotState};
use neotoma_core::schema::check_name;
use neotoma_core::valid_time::Interval;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

const MAX_METADATA_BYTES: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Inbound,
    Outbound,
    Both,
}

impl Direction {
    pub fn parse(value: Option<&str>) -> Result<Direction, NeotomaError> {
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

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Inbound => "inbound",
            Direction::Outbound => "outbound",
            Direction::Both => "both",
        }
    }
}

/// An edge of the graph.
#[derive(Debug, Clone, Deserialize)]
pub struct Edge {
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
}

/// Edges of these types touching `nodes` in `direction`, by id (all of
/// them: cycle checks and merges see the whole graph).
pub fn edges(
    user: &Uuid,
    nodes: Vec<String>,
    types: Option<Vec<String>>,
    direction: Direction,
) -> Result<Vec<Edge>, NeotomaError> {
    edges_where(user, nodes, types, direction, "")
}

/// [`edges`] that are not deleted themselves (what a merge moves).
pub fn undeleted_edges(
    user: &Uuid,
    nodes: Vec<String>,
    direction: Direction,
) -> Result<Vec<Edge>, NeotomaError> {
    edges_where(
        user,
        nodes,
        None,
        direction,
        &crate::installed::adapt(UNDELETED)?,
    )
}

const UNDELETED: &str = "
     AND r.deleted_at IS NULL
     ";

/// [`edges`] between entities that are not deleted, holding now in valid
/// time (what retrievals show).
pub fn live_edges(
    user: &Uuid,
    nodes: Vec<String>,
    types: Option<Vec<String>>,
    direction: Direction,
) -> Result<Vec<Edge>, NeotomaError> {
    edges_where(
        user,
        nodes,
        types,
        direction,
        &crate::installed::adapt(LIVE)?,
    )
}

/// Relationship `r` is not deleted, nor is either of its ends, and holds
/// now.
const LIVE: &str = "
     AND r.source_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
     AND r.target_entity_id NOT IN (SELECT d.id FROM neotoma.entities d WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)
     AND r.deleted_at IS NULL
     AND r.valid_during @> now() -- new
     ";

fn edges_where(
    user: &Uuid,
    nodes: Vec<String>,
    types: Option<Vec<String>>,
    direction: Direction,
    filter: &str,
) -> Result<Vec<Edge>, NeotomaError> {
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id), '[]') FROM (
           SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id
           FROM neotoma.relationships r
           WHERE $4 <> 'inbound' AND r.user_id = $1::uuid AND r.source_entity_id = ANY($2)
             AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3)) {filter}
           UNION
           SELECT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id
           FROM neotoma.relationships r
           WHERE $4 <> 'outbound' AND r.user_id = $1::uuid AND r.target_entity_id = ANY($2)
             AND r.merged_into IS NULL AND ($3::text[] IS NULL OR r.relationship_type = ANY($3)) {filter}) x"
        ),
        &[
            Arg::uuid(user),
            Arg::Texts(nodes),
            Arg::OptTexts(types),
            Arg::Text(direction.as_str()),
        ],
    )?;
    db::from_json(v, "relationships")
}

/// A path of `rtype` relationships from `from` to `to`, if any (breadth
/// first, so the shortest).
pub fn find_path(
    user: &Uuid,
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
pub fn lock_type(user: &Uuid, rtype: RelationshipType) -> Result<(), NeotomaError> {
    db::run(
        "INSERT INTO neotoma.graph_write_locks AS g (user_id, relationship_type, writes)
         VALUES ($1::uuid, $2, 1)
         ON CONFLICT (user_id, relationship_type) DO UPDATE SET writes = g.writes + 1",
        &[Arg::uuid(user), Arg::Text(rtype.as_str())],
    )
}

/// Refuses `source → target` when it would close a cycle of an acyclic type.
fn check_cycle(
    user: &Uuid,
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
pub fn apply_to_relationship(
    user: &Uuid,
    id: &str,
    observations: &[Observation],
    fresh: bool,
) -> Result<(), NeotomaError> {
    let row = db::json(
        // NO KEY UPDATE: the assertion's insert holds a key-share lock on
        // this row (its foreign key), which FOR UPDATE would wait for, so
        // two writers of one relationship would each wait for the other.
        "SELECT reducer_state FROM neotoma.relationships WHERE user_id = $1::uuid AND id = $2::uuid FOR NO KEY UPDATE",
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    let mut state: SnapshotState = if fresh || row.is_null() || row == json!({}) {
        SnapshotState::default()
    } else {
        db::from_json(row, "relationship state")?
    };
    // None folded before (new, or folded afresh): when it holds is these
    // assertions' union alone.
    let first = state.observation_count == 0;
    for o in observations {
        reducer::apply(&mut state, o, &Default::default());
    }
    let r = reducer::render(&state);
    let intervals: Vec<[Option<i64>; 2]> = observations
        .iter()
        .map(|o| [o.valid_from, o.valid_to])
        .collect();
    db::run(
        &crate::installed::adapt(UPDATE_RELATIONSHIP)?,
        &[
            Arg::uuid(user),
            Arg::Text(id),
            Arg::Json(&Value::Object(r.snapshot)),
            Arg::Json(&Value::Object(r.provenance)),
            Arg::Json(&serde_json::to_value(&state).unwrap_or_default()),
            Arg::Int(state.observation_count as i64),
            Arg::Int(state.last_observation_at.unwrap_or(0)),
            Arg::Json(&json!(intervals)),
            Arg::Bool(first),
        ],
    )
}

/// A relationship's snapshot, and when it holds: the union of its
/// assertions' intervals ($8, `[[from, to], …]` in microseconds, null
/// ends unbounded) with the stored one, or alone when none was folded
/// before ($9). Without assertions it holds always, as the column's
/// default says.
const UPDATE_RELATIONSHIP: &str = "
    UPDATE neotoma.relationships SET snapshot = $3, provenance = $4, reducer_state = $5,
           observation_count = $6, last_observation_at = neotoma._from_micros($7)
           , valid_during = CASE WHEN $9 THEN coalesce(n.during, '{(,)}') ELSE valid_during + coalesce(n.during, '{}') END -- new
    FROM (SELECT range_agg(tstzrange(neotoma._from_micros((x->>0)::bigint), neotoma._from_micros((x->>1)::bigint))) AS during
          FROM jsonb_array_elements($8) x) n
    WHERE user_id = $1::uuid AND id = $2::uuid";

/// Records one assertion of `source → target` (creating the relationship if
/// new); asserting the same thing again adds nothing.
fn assert_relationship(
    user: &Uuid,
    rtype: RelationshipType,
    source: &str,
    target: &str,
    metadata: &Map<String, Value>,
    valid: Interval,
) -> Result<RelationshipOut, NeotomaError> {
    let user_s = user.to_string();
    check_cycle(user, rtype, source, target)?;
    let id = relationship_id(user, rtype.as_str(), source, target).to_string();
    db::run(
        "INSERT INTO neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[Arg::uuid(user), Arg::Text(&id), Arg::Text(rtype.as_str()), Arg::Text(source), Arg::Text(target)],
    )?;
    let content = valid.stamped(
        json!({"relationship": {"relationship_type": rtype.as_str(), "source_entity_id": source,
                                "target_entity_id": target, "metadata": metadata}}),
    );
    let content_hash = sha256_hex(canonical_json(&content).as_bytes());
    let source_uuid = source_id(user, &content_hash);
    let source_s = source_uuid.to_string();
    // In the workspace of its ends.
    db::run(
        &crate::installed::adapt(
            "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, content
                                         , workspace
                                         )
             SELECT $1::uuid, $2::uuid, $3, 'relationship', 'application/json', $4
                    , (SELECT e.workspace FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = $5)
             ON CONFLICT DO NOTHING",
        )?,
        &[
            Arg::uuid(user),
            Arg::uuid(source_uuid),
            Arg::Text(&content_hash),
            Arg::Json(&content),
            Arg::Text(source),
        ],
    )?;
    let observation_id =
        derived_uuid("relationship_observation", &[&user_s, &id, &source_s]).to_string();
    let inserted = db::json(
        &crate::installed::adapt(INSERT_ASSERTION)?,
        &[
            Arg::uuid(user),
            Arg::Text(&observation_id),
            Arg::Text(&id),
            Arg::uuid(source_uuid),
            Arg::Json(&Value::Object(metadata.clone())),
            Arg::OptInt(valid.from),
            Arg::OptInt(valid.to),
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
            confidence: None,
            contests: 0,
            write_order: 0,
            valid_from: valid.from,
            valid_to: valid.to,
        };
        apply_to_relationship(user, &id, &[o], false)?;
    }
    relationship_out(user, &id)
}

const INSERT_ASSERTION: &str = "
    WITH ins AS (
      INSERT INTO neotoma.relationship_observations (user_id, id, relationship_id, source_id, observed_at, metadata
                                                    , valid_from, valid_to -- new
                                                    )
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, clock_timestamp(), $5
              , neotoma._from_micros($6), neotoma._from_micros($7) -- new
              )
      ON CONFLICT DO NOTHING
      RETURNING neotoma._micros(observed_at) AS t)
    SELECT to_jsonb(t) FROM ins";

/// A relationship as written, its metadata as true now.
fn relationship_out(user: &Uuid, id: &str) -> Result<RelationshipOut, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(RELATIONSHIP_OUT)?,
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    let mut out: RelationshipOut = db::from_json(v, "relationship")?;
    if let Some(r) = rendered_at(user, id, out.timed, db::transaction_start_micros())? {
        out.metadata = r.snapshot;
    }
    Ok(out)
}

/// A relationship's metadata as true in the world at `t`: reduced from
/// its assertions valid then (None when none is). Read only when an
/// assertion of it holds over an interval (`timed`; else None): the stored
/// snapshot folds every assertion, which is the metadata at any instant
/// when all hold always.
pub fn rendered_at(
    user: &Uuid,
    id: &str,
    timed: bool,
    t: i64,
) -> Result<Option<Rendered>, NeotomaError> {
    if !timed {
        return Ok(None);
    }
    let valid: Vec<Observation> = relationship_observations(user, id)?
        .into_iter()
        .filter(|o| Interval::of(o).contains(t))
        .collect();
    if valid.is_empty() {
        return Ok(None);
    }
    Ok(Some(reducer::render(&reducer::reduce(
        &valid,
        &Default::default(),
    ))))
}

/// Sets the `metadata` of each relationship answered (an object with its
/// `id`, and `timed: true` when an assertion of it holds over an interval,
/// which leaves the answer) to its metadata at `t`, when an assertion of
/// it is valid then.
pub fn metadata_at<'a>(
    user: &Uuid,
    t: i64,
    relationships: impl IntoIterator<Item = &'a mut Map<String, Value>>,
) -> Result<(), NeotomaError> {
    for r in relationships {
        let timed = r.remove("timed") == Some(Value::Bool(true));
        let Some(id) = r.get("id").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        if let Some(rendered) = rendered_at(user, &id, timed, t)? {
            r.insert("metadata".into(), Value::Object(rendered.snapshot));
        }
    }
    Ok(())
}

const RELATIONSHIP_OUT: &str =
    "SELECT jsonb_build_object('id', id, 'relationship_type', relationship_type,
                  'source_entity_id', source_entity_id, 'target_entity_id', target_entity_id,
                  'metadata', snapshot, 'created_at', neotoma._iso(created_at)
                  , 'deleted_at', neotoma._iso(deleted_at), 'deleted_reason', deleted_reason
                  , 'valid_during', neotoma._valid_during(valid_during), 'timed', neotoma._relationship_timed(user_id, id) -- new
                  )
         FROM neotoma.relationships WHERE user_id = $1::uuid AND id = $2::uuid";

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

pub fn create_relationship(
    user: Uuid,
    req: CreateRelationshipRequest,
) -> Result<RelationshipOut, NeotomaError> {
    let rtype = RelationshipType::parse("relationship_type", &req.relationship_type)?;
    let source = common::entity_id("source_entity_id", &req.source_entity_id)?;
    let target = common::entity_id("target_entity_id", &req.target_entity_id)?;
    let metadata = metadata_of(req.metadata)?;
    let valid = crate::installed::served_interval(&req.valid_from, &req.valid_to)?;
    let (s, _) = resolve_live_entity(&user, &source)?;
    let (t, _) = resolve_live_entity(&user, &target)?;
    // Only a mention may point back at its own entity (the reference
    // memory server's self-relations are REFERS_TO): a part, dependency,
    // duplicate or correction of itself is no relationship.
    if s.id == t.id && rtype != RelationshipType::RefersTo {
        return Err(NeotomaError::validation(format!(
            "an entity cannot be related to itself by {} (only REFERS_TO may point back at its own entity)",
            rtype.as_str()
        ))
        .with("field", "target_entity_id")
        .with("entity_id", s.id));
    }
    assert_relationship(&user, rtype, &s.id, &t.id, &metadata, valid)
}

pub fn list_relationships(
    user: Uuid,
    req: ListRelationshipsRequest,
) -> Result<ListRelationshipsResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    let direction = Direction::parse(req.direction.as_deref())?;
    let rtype = req
        .relationship_type
        .as_deref()
        .map(|t| RelationshipType::parse("relationship_type", t))
        .transpose()?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    let valid_at = valid_at_or_now(&req.valid_at)?;
    let (entity, _) = resolve_live_entity(&user, &entity_id)?;
    let scope = crate::scope::current();
    let v = db::json(
        &scope.adapt(LIST_RELATIONSHIPS)?,
        &[
            Arg::uuid(user),
            Arg::Text(&entity.id),
            Arg::Text(direction.as_str()),
            Arg::OptText(rtype.map(|t| t.as_str())),
            Arg::Int(limit),
            Arg::Int(offset),
            Arg::Text(if req.include_deleted.unwrap_or(false) {
                "true"
            } else {
                "false"
            }),
            scope.arg(),
            Arg::Bool(req.current_only.unwrap_or(true)),
            Arg::Int(valid_at),
        ],
    )?;
    let mut page: ListRelationshipsResponse = db::from_json(v, "relationships")?;
    for r in page.relationships.iter_mut() {
        if let Some(rendered) = rendered_at(&user, &r.id, r.timed, valid_at)? {
            r.metadata = rendered.snapshot;
        }
    }
    Ok(page)
}

pub fn get_relationship_snapshot(
    user: Uuid,
    req: GetRelationshipSnapshotRequest,
) -> Result<GetRelationshipSnapshotResponse, NeotomaError> {
    let rtype = RelationshipType::parse("relationship_type", &req.relationship_type)?;
    let source = common::entity_id("source_entity_id", &req.source_entity_id)?;
    let target = common::entity_id("target_entity_id", &req.target_entity_id)?;
    let (s, _) = resolve_live_entity(&user, &source)?;
    let (t, _) = resolve_live_entity(&user, &target)?;
    let id = relationship_id(&user, rtype.as_str(), &s.id, &t.id).to_string();
    let valid_at = valid_at_or_now(&req.valid_at)?;
    let found = db::json(
        &crate::installed::adapt(RELATIONSHIP_SNAPSHOT)?,
        &[Arg::uuid(user), Arg::Text(&id)],
    )?;
    if let (Some(at), false) = (
        found["snapshot"]["deleted_at"].as_str(),
        req.include_deleted.unwrap_or(false),
    ) {
        return Err(NeotomaError::new(
            ErrorCode::NotFound,
            format!(
                "the {} relationship from {} to {} is deleted (restore_relationship brings it back; include_deleted shows it)",
                rtype.as_str(),
                s.id,
                t.id
            ),
        )
        .with("relationship_id", id.as_str())
        .with("deleted_at", at));
    }
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
    let mut out: GetRelationshipSnapshotResponse = db::from_json(found, "relationship snapshot")?;
    if let Some(r) = rendered_at(&user, &id, out.snapshot.timed, valid_at)? {
        out.snapshot.snapshot = r.snapshot;
        out.snapshot.provenance = r.provenance;
    }
    Ok(out)
}

/// A read's valid time (`valid_at`, ISO 8601) in microseconds, else now:
/// the relationships it answers are those holding then.
pub fn valid_at_or_now(value: &Option<String>) -> Result<i64, NeotomaError> {
    Ok(common::optional_micros("valid_at", value)?.unwrap_or_else(db::transaction_start_micros))
}

pub fn relationship_observations(user: &Uuid, id: &str) -> Result<Vec<Observation>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(
            "SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id, 'source_id', o.source_id,
                   'observed_at', neotoma._micros(o.observed_at), 'source_priority', o.source_priority,
                   'specificity_score', o.specificity_score, 'fields', o.metadata
                   , 'valid_from', neotoma._micros(o.valid_from), 'valid_to', neotoma._micros(o.valid_to) -- new
                   ) ORDER BY o.id), '[]')
         FROM neotoma.relationship_observations o WHERE o.user_id = $1::uuid AND o.relationship_id = $2::uuid
           AND o.kind = 'assertion'
           ",
        )?,
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    db::from_json(v, "relationship observations")
}

const LIST_RELATIONSHIPS: &str = include_str!("../../../sql/queries/list_relationships.sql");
const RELATIONSHIP_SNAPSHOT: &str = include_str!("../../../sql/queries/relationship_snapshot.sql");
