//! The tool sets of other graph memory servers (`neotoma_core::tool_sets`),
//! one module per server, over one graph layer (this module): entities
//! with a name, a type as the agent named it and a list of text
//! observations, related by typed relations (`neotoma_core::memory_graph`).
//!
//! Every write goes through Neotoma's own actions (`store`, `correct`,
//! `create_relationship`, `delete_*`), in the workspace of the caller's
//! context, so provenance, snapshots, RLS and audit are theirs. Any entity
//! of the user is a node (its name: `name`, else `title`, else its
//! canonical name), so what Neotoma's tools store shows here too.

pub mod engram;
pub mod graphmem;
pub mod ids;
pub mod memory;
pub mod valid_at;
pub mod workspace;

use crate::db::{self, Arg};
use crate::scope;
use neotoma_core::catalog::ActionId;
use neotoma_core::memory_graph::{self as graph, Fit};
use neotoma_core::schema::EntitySchema;
use neotoma_core::workspace::Requested;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::rc::Rc;
use uuid::Uuid;

/// One entity as the graph servers see it.
#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    pub id: String,
    pub entity_type: String,
    pub name: String,
    /// The type as the agent named it (else the entity's type).
    pub label: String,
    #[serde(default)]
    pub observations: Vec<String>,
    /// The rest of the snapshot (description, aliases, metadata…).
    #[serde(default)]
    pub snapshot: Map<String, Value>,
    /// Microseconds: the order of creation, and read_graph's cursor.
    pub created: i64,
    /// The field provenance of its name (`name`, else `title`).
    #[serde(default)]
    pub name_provenance: Value,
}

/// One relation: a relationship and one of its relation types.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relation {
    pub relationship_id: String,
    /// Neotoma's type (`REFERS_TO` for the graph servers' own relations).
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    pub relation_type: String,
    /// What the writer said of it (a relation's `metadata` string).
    pub metadata: Option<String>,
}

/// The workspace of the caller's context (`set_context`), else `default`.
pub fn context_workspace(user: &Uuid) -> Result<String, NeotomaError> {
    Ok(scope::establish(Some(user), Requested::Write(None))?
        .map(|s| s.write_workspace())
        .unwrap_or_else(|| neotoma_core::workspace::DEFAULT.to_string()))
}

pub(crate) use super::call;

/// The columns every node query answers, from `e` (entities) and `s`
/// (snapshots).
const NODE: &str = "jsonb_build_object(
    'id', e.id, 'entity_type', e.entity_type,
    'name', coalesce(s.snapshot->>'name', s.snapshot->>'title', e.canonical_name),
    'label', coalesce(s.snapshot->>'entity_type_label', e.entity_type),
    'observations', CASE WHEN jsonb_typeof(s.snapshot->'observations') = 'array'
                         THEN (SELECT coalesce(jsonb_agg(o), '[]') FROM jsonb_array_elements_text(s.snapshot->'observations') o)
                         ELSE '[]' END,
    'snapshot', s.snapshot,
    'name_provenance', coalesce(s.field_provenance->'name', s.field_provenance->'title'),
    'created', neotoma._micros(e.created_at))";

/// Nodes as answered, their fields as true at the read's valid time.
fn nodes_of(user: &Uuid, v: Value) -> Result<Vec<Node>, NeotomaError> {
    let mut nodes: Vec<Node> = db::from_json(v, "nodes")?;
    valid_at::render_nodes(user, &mut nodes)?;
    Ok(nodes)
}

/// The live entities (neither merged nor deleted) of `workspace` named
/// exactly one of `names`, oldest first.
pub fn nodes_named(
    user: &Uuid,
    workspace: &str,
    names: &[String],
) -> Result<Vec<Node>, NeotomaError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    // Identity values are stored normalised: case kept, or folded.
    let mut candidates: Vec<String> = Vec::new();
    for n in names {
        for preserve in [true, false] {
            if let Some(v) = neotoma_core::identity::normalize_value("name", &json!(n), preserve) {
                candidates.push(v);
            }
        }
    }
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg(n ORDER BY (n->>'created')::bigint, n->>'id'), '[]') FROM (
               SELECT DISTINCT ON (e.id) {NODE} AS n
               FROM neotoma.entity_identifiers i
               JOIN neotoma.entities e ON e.user_id = i.user_id AND e.id = i.entity_id
               JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
               WHERE i.user_id = $1::uuid AND i.value = ANY($2) AND i.field IN ('name', 'title')
                 AND e.merged_into IS NULL AND e.deleted_at IS NULL AND e.workspace = $3
                 AND coalesce(s.snapshot->>'name', s.snapshot->>'title', e.canonical_name) = ANY($4)) x"
        ),
        &[
            Arg::uuid(user),
            Arg::Texts(candidates),
            Arg::Text(workspace),
            Arg::Texts(names.to_vec()),
        ],
    )?;
    nodes_of(user, v)
}

/// The oldest live entity named `name`, by name (what the memory server
/// finds an entity by: names are unique there).
pub fn node_named(user: &Uuid, workspace: &str, name: &str) -> Result<Option<Node>, NeotomaError> {
    Ok(nodes_named(user, workspace, &[name.to_string()])?
        .into_iter()
        .next())
}

/// The live entity `id` of `workspace` (following a merge).
pub fn node_by_id(user: &Uuid, workspace: &str, id: &str) -> Result<Option<Node>, NeotomaError> {
    let v = db::json(
        &format!(
            "SELECT {NODE}
             FROM neotoma.entities m
             -- (CASE, not coalesce: see lifecycle::deletion.)
             JOIN neotoma.entities e ON e.user_id = m.user_id
                                    AND e.id = CASE WHEN m.merged_into IS NULL THEN m.id ELSE m.merged_into END
             JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
             WHERE m.user_id = $1::uuid AND m.id = $2 AND e.deleted_at IS NULL AND e.workspace = $3"
        ),
        &[Arg::uuid(user), Arg::Text(id), Arg::Text(workspace)],
    )?;
    if v.is_null() {
        Ok(None)
    } else {
        Ok(nodes_of(user, Value::Array(vec![v]))?.pop())
    }
}

/// `nextCursor`: the (creation time, id) of a page's last entity.
pub fn cursor_of(node: &Node) -> String {
    format!("{}:{}", node.created, node.id)
}

pub fn parse_cursor(cursor: &str) -> Result<(i64, &str), NeotomaError> {
    // A creation time between the years 1 and 9999 (microseconds since
    // 1970): outside it the database could not read it as a timestamp.
    const TIMES: std::ops::RangeInclusive<i64> = -62_135_596_800_000_000..=253_402_300_799_999_999;
    cursor
        .split_once(':')
        .and_then(|(t, id)| Some((t.parse().ok()?, id)))
        .filter(|(t, id)| TIMES.contains(t) && neotoma_core::ids::is_entity_id(id))
        .ok_or_else(|| NeotomaError::invalid_field("cursor", "not a cursor read_graph answered"))
}

/// The live entities of a workspace ($1 the user, $2 the workspace), as
/// `e` (entities) and `s` (snapshots).
const LIVE: &str = "FROM neotoma.entities e
    JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
    WHERE e.user_id = $1::uuid AND e.workspace = $2 AND e.merged_into IS NULL AND e.deleted_at IS NULL";

/// Nodes in order of creation, of `LIVE` narrowed by `filter`.
fn nodes_where(user: &Uuid, filter: &str, args: &[Arg]) -> Result<Vec<Node>, NeotomaError> {
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg(n ORDER BY (n->>'created')::bigint, n->>'id'), '[]') FROM (
               SELECT {NODE} AS n {LIVE} {filter}) x"
        ),
        args,
    )?;
    nodes_of(user, v)
}

fn count_where(filter: &str, args: &[Arg]) -> Result<i64, NeotomaError> {
    let v = db::json(&format!("SELECT to_jsonb(count(*)) {LIVE} {filter}"), args)?;
    Ok(v.as_i64().unwrap_or_default())
}

/// A page of the live entities of `workspace` in order of creation, after
/// `after` ((created, id) of the last one read).
pub fn nodes_page(
    user: &Uuid,
    workspace: &str,
    after: Option<(i64, &str)>,
    limit: i64,
) -> Result<Vec<Node>, NeotomaError> {
    // The cursor compared with the column itself (a function of the column
    // is no index condition under row level security), and planned for its
    // values: the index entities_live_created then serves the page in order.
    // (_from_micros(_micros(t)) = t: timestamps keep microseconds.)
    let (t, id) = after.unwrap_or((i64::MIN, ""));
    let from = if after.is_some() {
        "AND (e.created_at, e.id) > (neotoma._from_micros($3), $4)"
    } else {
        "" // (the first page: $3 and $4, typed by their arguments, go unused)
    };
    db::with_custom_plans(|| {
        nodes_where(
            user,
            &format!("{from} ORDER BY e.created_at, e.id LIMIT $5"),
            &[
                Arg::uuid(user),
                Arg::Text(workspace),
                Arg::Int(t),
                Arg::Text(id),
                Arg::Int(limit),
            ],
        )
    })
}

/// The live entities of `workspace` in order of creation, from `offset`.
pub fn nodes_at(
    user: &Uuid,
    workspace: &str,
    offset: i64,
    limit: i64,
) -> Result<Vec<Node>, NeotomaError> {
    db::with_custom_plans(|| {
        nodes_where(
            user,
            "ORDER BY e.created_at, e.id OFFSET $3 LIMIT $4",
            &[
                Arg::uuid(user),
                Arg::Text(workspace),
                Arg::Int(offset),
                Arg::Int(limit),
            ],
        )
    })
}

/// How many live entities `workspace` has: the counts kept per type and
/// workspace (`neotoma.entity_counts`, as list_workspaces reads them), not a
/// count of every entity (109 ms at 200,000).
pub fn count_nodes(user: &Uuid, workspace: &str) -> Result<i64, NeotomaError> {
    let v = db::json(
        "SELECT to_jsonb(coalesce(sum(c.current), 0)::bigint) FROM neotoma.entity_counts c
         WHERE c.user_id = $1::uuid AND c.workspace = $2",
        &[Arg::uuid(user), Arg::Text(workspace)],
    )?;
    Ok(v.as_i64().unwrap_or_default())
}

/// Where a text search looks.
pub struct Fields {
    pub name: bool,
    /// The type as the agent named it.
    pub label: bool,
    pub aliases: bool,
    pub observations: bool,
}

impl Fields {
    pub fn all() -> Fields {
        Fields {
            name: true,
            label: true,
            aliases: true,
            observations: true,
        }
    }
}

/// The condition "one of `fields` contains $3 (a LIKE pattern, folded)".
fn matching(fields: &Fields) -> String {
    let mut any = vec!["false".to_string()];
    if fields.name {
        any.push(
            "lower(coalesce(s.snapshot->>'name', s.snapshot->>'title', e.canonical_name)) LIKE $3"
                .into(),
        );
    }
    if fields.label {
        any.push("lower(coalesce(s.snapshot->>'entity_type_label', e.entity_type)) LIKE $3".into());
    }
    if fields.aliases {
        any.push("lower(coalesce(s.snapshot->>'aliases', '')) LIKE $3".into());
    }
    if fields.observations {
        any.push(
            "(jsonb_typeof(s.snapshot->'observations') = 'array'
              AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(s.snapshot->'observations') o
                          WHERE lower(o) LIKE $3))"
                .into(),
        );
    }
    format!("AND ({})", any.join(" OR "))
}

fn like_pattern(query: &str) -> String {
    format!(
        "%{}%",
        query
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    )
}

/// The live entities of `workspace` one of whose `fields` contains `query`
/// (case folded), in order of creation, from `offset`, at most `limit`.
pub fn nodes_matching(
    user: &Uuid,
    workspace: &str,
    query: &str,
    fields: &Fields,
    offset: i64,
    limit: i64,
) -> Result<Vec<Node>, NeotomaError> {
    let pattern = like_pattern(query);
    nodes_where(
        user,
        &format!(
            "{} ORDER BY e.created_at, e.id OFFSET $4 LIMIT $5",
            matching(fields)
        ),
        &[
            Arg::uuid(user),
            Arg::Text(workspace),
            Arg::Text(&pattern),
            Arg::Int(offset),
            Arg::Int(limit),
        ],
    )
}

pub fn count_matching(
    user: &Uuid,
    workspace: &str,
    query: &str,
    fields: &Fields,
) -> Result<i64, NeotomaError> {
    let pattern = like_pattern(query);
    count_where(
        &matching(fields),
        &[Arg::uuid(user), Arg::Text(workspace), Arg::Text(&pattern)],
    )
}

/// Relationships one read shows at most: a hub's relations are read
/// whole up to this many, never without bound.
pub const RELATIONSHIPS_READ: i64 = 10_000;

/// The relations of the workspace's live relationships (holding at the
/// read's valid time, else now) between live entities (at most [`RELATIONSHIPS_READ`] relationships).
pub fn relations_in(user: &Uuid, workspace: &str) -> Result<Vec<Relation>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(
            "SELECT coalesce(jsonb_agg(DISTINCT r.source_entity_id), '[]') FROM (
           SELECT r.source_entity_id FROM neotoma.relationships r
           JOIN neotoma.entities a ON a.user_id = r.user_id AND a.id = r.source_entity_id
           WHERE r.user_id = $1::uuid AND r.merged_into IS NULL AND r.deleted_at IS NULL AND a.workspace = $2
             AND ($5 OR r.valid_during @> coalesce(neotoma._from_micros($4), now())) -- new
           ORDER BY r.source_entity_id LIMIT $3) r",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(workspace),
            Arg::Int(RELATIONSHIPS_READ),
            Arg::OptInt(valid_at::asked()),
            Arg::Bool(valid_at::any_time()),
        ],
    )?;
    let starts: Vec<String> = db::from_json(v, "relationship starts")?;
    relations_of(user, &starts, true)
}

/// The relations of the live relationships (holding at the read's valid
/// time, else now) starting (`from_only`) or
/// starting or ending at one of `ids`, both ends live: a `REFERS_TO`
/// relationship gives one relation per active type of its metadata, any
/// other one relation named by its type. At most [`RELATIONSHIPS_READ`]
/// relationships (by their ends' ids).
pub fn relations_of(
    user: &Uuid,
    ids: &[String],
    from_only: bool,
) -> Result<Vec<Relation>, NeotomaError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    #[derive(Deserialize)]
    struct Row {
        id: String,
        relationship_type: String,
        source_entity_id: String,
        target_entity_id: String,
        metadata: Value,
        /// An assertion of it holds over an interval: its metadata is
        /// rendered at the valid time shown.
        #[serde(default)]
        timed: bool,
    }
    let v = db::json(
        &crate::installed::adapt(
        "SELECT coalesce(jsonb_agg(x ORDER BY x->>'source_entity_id', x->>'target_entity_id', x->>'relationship_type'), '[]')
         FROM (SELECT jsonb_build_object('id', r.id, 'relationship_type', r.relationship_type,
                  'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
                  'metadata', r.snapshot
                  , 'timed', neotoma._relationship_timed(r.user_id, r.id) -- new
                  ) AS x
               FROM neotoma.relationships r
               JOIN neotoma.entities a ON a.user_id = r.user_id AND a.id = r.source_entity_id
               JOIN neotoma.entities b ON b.user_id = r.user_id AND b.id = r.target_entity_id
               WHERE r.user_id = $1::uuid AND r.merged_into IS NULL AND r.deleted_at IS NULL
                 AND (r.source_entity_id = ANY($2) OR (NOT $3 AND r.target_entity_id = ANY($2)))
                 AND a.merged_into IS NULL AND a.deleted_at IS NULL
                 AND b.merged_into IS NULL AND b.deleted_at IS NULL
                 AND ($6 OR r.valid_during @> coalesce(neotoma._from_micros($5), now())) -- new
               ORDER BY r.source_entity_id, r.target_entity_id, r.relationship_type LIMIT $4) y",
        )?,
        &[
            Arg::uuid(user),
            Arg::Texts(ids.to_vec()),
            Arg::Bool(from_only),
            Arg::Int(RELATIONSHIPS_READ),
            Arg::OptInt(valid_at::asked()),
            Arg::Bool(valid_at::any_time()),
        ],
    )?;
    let rows: Vec<Row> = db::from_json(v, "relationships")?;
    let mut out = Vec::new();
    for mut r in rows {
        let t = valid_at::asked().unwrap_or_else(db::transaction_start_micros);
        let timed = r.timed && !valid_at::any_time();
        if let Some(rendered) = crate::actions::relationships::rendered_at(user, &r.id, timed, t)? {
            r.metadata = Value::Object(rendered.snapshot);
        }
        let types = if r.relationship_type == graph::RELATIONSHIP_TYPE
            && graph::holds_relation_types(&r.metadata)
        {
            graph::active_relation_types(&r.metadata)
        } else {
            vec![r.relationship_type.clone()]
        };
        for t in types {
            let metadata = r.metadata[graph::relation_key(&t)]["metadata"]
                .as_str()
                .map(str::to_string);
            out.push(Relation {
                relationship_id: r.id.clone(),
                relationship_type: r.relationship_type.clone(),
                from_id: r.source_entity_id.clone(),
                to_id: r.target_entity_id.clone(),
                relation_type: t,
                metadata,
            });
        }
    }
    out.sort();
    Ok(out)
}

/// The names of the entities `ids` (live or not), for showing relations.
pub fn names_of(user: &Uuid, ids: &[String]) -> Result<BTreeMap<String, String>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_object_agg(e.id, coalesce(s.snapshot->>'name', s.snapshot->>'title', e.canonical_name)), '{}')
         FROM neotoma.entities e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
         WHERE e.user_id = $1::uuid AND e.id = ANY($2)",
        &[Arg::uuid(user), Arg::Texts(ids.to_vec())],
    )?;
    db::from_json(v, "names")
}

/// Makes this call the only graph-tool write of the user until the end of
/// its transaction: a list read, changed and written whole is never changed
/// by another call in between, and two calls never wait on each other's
/// rows in a cycle. Taken before anything is read.
pub fn lock_graph(user: &Uuid) -> Result<(), NeotomaError> {
    db::run(
        "SELECT pg_advisory_xact_lock(hashtextextended('neotoma.graph:' || $1::text, 0))",
        &[Arg::uuid(user)],
    )
}

/// [`lock_graph`], then the workspace of the caller's context: where a
/// graph-tool write goes.
pub fn writing(user: &Uuid) -> Result<String, NeotomaError> {
    lock_graph(user)?;
    context_workspace(user)
}

/// The type graph entities of type `label` are stored as, with a schema
/// that holds them (registered, or given the fields it lacks, for this
/// user): `type_name(label)`, else `memory_<that>` when its schema
/// identifies entities otherwise. `known` remembers the answers of a call.
pub fn graph_type(
    user: &Uuid,
    label: &str,
    known: &mut BTreeMap<String, String>,
) -> Result<String, NeotomaError> {
    if let Some(t) = known.get(label) {
        return Ok(t.clone());
    }
    let base = graph::type_name(label);
    for name in [base.clone(), graph::fallback_type_name(&base)] {
        match graph::fit(active_schema(user, &name)?.as_deref()) {
            Fit::Missing => {
                let mut args = graph::register_args(&name, label);
                args["user_id"] = json!(user.to_string());
                call(ActionId::RegisterSchema, args)?;
            }
            Fit::Fits { add } if !add.is_empty() => {
                let mut args = graph::add_fields_args(&name, &add);
                args["user_id"] = json!(user.to_string());
                call(ActionId::UpdateSchemaIncremental, args)?;
            }
            Fit::Fits { .. } => {}
            Fit::Unfit => continue,
        }
        known.insert(label.to_string(), name.clone());
        return Ok(name);
    }
    Err(NeotomaError::validation(format!(
        "neither {base} nor {} can hold entities identified by name",
        graph::fallback_type_name(&base)
    )))
}

/// The active schema of `entity_type` the user stores with: theirs, else
/// the global one (the registry's, parsed once per backend).
fn active_schema(user: &Uuid, entity_type: &str) -> Result<Option<Rc<EntitySchema>>, NeotomaError> {
    Ok(crate::registry::active(*user, &[entity_type.to_string()])?
        .remove(entity_type)
        .map(|a| a.schema))
}

/// Gives the type (whose active schema is `schema`) the fields of `fields`
/// it lacks (for this user; a text is a string field, a list an array
/// field), so they are kept in the snapshot rather than waiting for
/// promotion.
fn ensure_fields(
    user: &Uuid,
    entity_type: &str,
    schema: Option<&EntitySchema>,
    fields: &Map<String, Value>,
) -> Result<(), NeotomaError> {
    let Some(schema) = schema else {
        return Ok(());
    };
    let missing: Vec<Value> = fields
        .iter()
        .filter(|(k, _)| !schema.fields.contains_key(*k))
        .map(|(k, v)| {
            let t = if v.is_array() { "array" } else { "string" };
            json!({"field_name": k, "field_type": t})
        })
        .collect();
    if !missing.is_empty() {
        call(
            ActionId::UpdateSchemaIncremental,
            json!({"entity_type": entity_type, "user_specific": true, "fields_to_add": missing,
                   "user_id": user.to_string()}),
        )?;
    }
    Ok(())
}

/// Stores one graph entity (its fields besides the type) in `workspace`,
/// with `store`'s other arguments `with` (provenance, confidence); answers
/// its id.
pub fn store_node(
    user: &Uuid,
    workspace: &str,
    entity_type: &str,
    fields: Map<String, Value>,
    with: Map<String, Value>,
) -> Result<String, NeotomaError> {
    let schema = active_schema(user, entity_type)?;
    store_with(
        user,
        workspace,
        entity_type,
        schema.as_deref(),
        fields,
        with,
    )
}

/// [`store_node`], the type's active schema read already.
fn store_with(
    user: &Uuid,
    workspace: &str,
    entity_type: &str,
    schema: Option<&EntitySchema>,
    fields: Map<String, Value>,
    with: Map<String, Value>,
) -> Result<String, NeotomaError> {
    ensure_fields(user, entity_type, schema, &fields)?;
    let mut object = fields;
    object.insert("entity_type".into(), json!(entity_type));
    let mut args =
        json!({"entities": [object], "workspace": workspace, "user_id": user.to_string()});
    if let Some(map) = args.as_object_mut() {
        map.extend(with);
    }
    let stored = call(ActionId::Store, args)?;
    stored["entities"][0]["entity_id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| NeotomaError::new(ErrorCode::DbInsertFailed, "the entity was not stored"))
}

/// What creating a graph entity came to.
pub enum Created {
    /// A new entity.
    New(Node),
    /// The type's identity rules make the same entity of these fields (a
    /// name differing only in spacing, or in case where the type folds
    /// it): that one, unchanged.
    Existing(Node),
    /// That entity was deleted: it is restored, with these fields stated.
    Restored(Node),
}

/// Creates a graph entity of `entity_type` with `fields` in `workspace`
/// (`store`'s other arguments `with`), unless the type's identity rules
/// reach an entity that exists: a live one is answered as it is, a deleted
/// one is restored and given the fields.
pub fn create_node(
    user: &Uuid,
    workspace: &str,
    entity_type: &str,
    fields: Map<String, Value>,
    with: Map<String, Value>,
) -> Result<Created, NeotomaError> {
    let schema = active_schema(user, entity_type)?;
    let reached = match schema.as_deref() {
        Some(schema) => {
            let id = neotoma_core::identity::resolve_in(user, workspace, schema, &fields).entity_id;
            db::json(
                "SELECT jsonb_build_object('id', coalesce(merged_into, id), 'deleted', deleted_at IS NOT NULL)
                 FROM neotoma.entities WHERE user_id = $1::uuid AND id = $2",
                &[Arg::uuid(user), Arg::Text(&id)],
            )?
        }
        None => Value::Null,
    };
    let gone = || NeotomaError::new(ErrorCode::DbInsertFailed, "the entity was not stored");
    if reached["deleted"] == Value::Bool(false) {
        let id = reached["id"].as_str().unwrap_or_default();
        return node_by_id(user, workspace, id)?
            .map(Created::Existing)
            .ok_or_else(gone);
    }
    let id = store_with(
        user,
        workspace,
        entity_type,
        schema.as_deref(),
        fields.clone(),
        with,
    )?;
    if reached["deleted"] != Value::Bool(true) {
        return node_by_id(user, workspace, &id)?
            .map(Created::New)
            .ok_or_else(gone);
    }
    call(
        ActionId::RestoreEntity,
        json!({"entity_id": id, "workspace": workspace, "user_id": user.to_string(),
               "reason": "created again through a graph tool"}),
    )?;
    let node = node_by_id(user, workspace, &id)?.ok_or_else(gone)?;
    // What is stated now wins over what was stated before the deletion.
    for (field, value) in fields.into_iter().filter(|(f, _)| f != "name") {
        set_field(user, workspace, &node, &field, value)?;
    }
    node_by_id(user, workspace, &id)?
        .map(Created::Restored)
        .ok_or_else(gone)
}

/// States one field of an existing entity (a correction, so it wins over
/// what was stored before; the latest statement wins among them).
pub fn set_field(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    field: &str,
    value: Value,
) -> Result<(), NeotomaError> {
    let schema = active_schema(user, &node.entity_type)?;
    set_field_with(user, workspace, node, schema.as_deref(), field, value)
}

/// [`set_field`], the type's active schema read already.
fn set_field_with(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    schema: Option<&EntitySchema>,
    field: &str,
    value: Value,
) -> Result<(), NeotomaError> {
    let mut f = Map::new();
    f.insert(field.to_string(), value.clone());
    ensure_fields(user, &node.entity_type, schema, &f)?;
    call(
        ActionId::Correct,
        json!({"entity_id": node.id, "entity_type": node.entity_type, "field": field,
               "value": value, "workspace": workspace, "user_id": user.to_string()}),
    )?;
    Ok(())
}

/// States an entity's observations list whole. A type keeping them as a
/// union (a 0.12 import's) cannot drop a text an earlier statement made:
/// that is refused rather than answered as done.
pub fn set_observations(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    list: &[String],
) -> Result<(), NeotomaError> {
    let schema = active_schema(user, &node.entity_type)?;
    set_field_with(
        user,
        workspace,
        node,
        schema.as_deref(),
        graph::OBSERVATIONS,
        json!(list),
    )?;
    // A list merged as a union can keep a text; any other is the list stated.
    if !schema.as_deref().is_some_and(graph::observations_by_union) {
        return Ok(());
    }
    let now = node_by_id(user, workspace, &node.id)?;
    let kept = now.map(|n| n.observations).unwrap_or_default();
    if let Some(stale) = kept.iter().find(|o| !list.contains(o)) {
        return Err(NeotomaError::validation(format!(
            "the observation `{stale}` of {} cannot be removed: its type {} keeps observations \
             as a union (registered by a memory.jsonl import before 0.13.0); reclassify the \
             entity to a type registered since",
            node.name, node.entity_type
        ))
        .with("entity_id", node.id.as_str()));
    }
    Ok(())
}

/// The time an assertion is made at: the provenance's (so an import made
/// again asserts nothing new), else now.
pub fn assertion_time(provenance: Option<&Value>) -> Result<String, NeotomaError> {
    match provenance.and_then(|p| p["extracted_at"].as_str()) {
        Some(t) => Ok(t.to_string()),
        None => now(),
    }
}

/// The time now, as Neotoma writes times (ISO 8601, UTC, microseconds).
pub fn now() -> Result<String, NeotomaError> {
    let v = db::json("SELECT to_jsonb(neotoma._iso(clock_timestamp()))", &[])?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// One relation type between two entities, asserted (active) or retracted.
pub struct Assertion<'a> {
    pub from_id: &'a str,
    pub to_id: &'a str,
    pub relation_type: &'a str,
    pub active: bool,
    /// What the writer says of the relation (a JSON text), if anything.
    pub metadata: Option<&'a str>,
    /// The import's provenance: its time is the assertion's.
    pub provenance: Option<&'a Value>,
}

/// Records an [`Assertion`]. Answers false when that changed nothing
/// (already so).
pub fn assert_relation(
    user: &Uuid,
    workspace: &str,
    assertion: &Assertion,
) -> Result<bool, NeotomaError> {
    let Assertion {
        from_id,
        to_id,
        relation_type,
        active,
        metadata,
        provenance,
    } = *assertion;
    let existing = relationship_between(user, from_id, to_id)?;
    let is_active = existing.as_ref().is_some_and(|r| {
        r.deleted_at.is_none()
            && graph::active_relation_types(&r.metadata)
                .iter()
                .any(|t| t == relation_type)
    });
    if active == is_active && metadata.is_none() {
        return Ok(false);
    }
    if !active && existing.is_none() {
        return Ok(false);
    }
    let who = json!(user.to_string());
    if let Some(r) = &existing {
        if r.deleted_at.is_some() && active {
            call(
                ActionId::RestoreRelationship,
                json!({"relationship_type": graph::RELATIONSHIP_TYPE, "source_entity_id": from_id,
                       "target_entity_id": to_id, "workspace": workspace, "user_id": who}),
            )?;
        }
    }
    let at = assertion_time(provenance)?;
    let mut meta = graph::relation_metadata(relation_type, active, &at);
    if let Some(m) = metadata {
        meta[graph::relation_key(relation_type)]["metadata"] = json!(m);
    }
    call(
        ActionId::CreateRelationship,
        json!({"relationship_type": graph::RELATIONSHIP_TYPE, "source_entity_id": from_id,
               "target_entity_id": to_id, "metadata": meta, "workspace": workspace, "user_id": who}),
    )?;
    if !active {
        let now = relationship_between(user, from_id, to_id)?;
        if let Some(r) = now.filter(|r| r.deleted_at.is_none()) {
            if graph::active_relation_types(&r.metadata).is_empty() {
                call(
                    ActionId::DeleteRelationship,
                    json!({"relationship_type": graph::RELATIONSHIP_TYPE, "source_entity_id": from_id,
                           "target_entity_id": to_id, "workspace": workspace, "user_id": who,
                           "reason": format!("its last relation type ({relation_type}) was deleted")}),
                )?;
            }
        }
    }
    Ok(true)
}

/// Deletes a relation that is a relationship of another type than
/// `REFERS_TO` (one of Neotoma's own).
pub fn delete_typed_relationship(
    user: &Uuid,
    workspace: &str,
    relation: &Relation,
) -> Result<(), NeotomaError> {
    call(
        ActionId::DeleteRelationship,
        json!({"relationship_type": relation.relation_type, "source_entity_id": relation.from_id,
               "target_entity_id": relation.to_id, "workspace": workspace, "user_id": user.to_string()}),
    )?;
    Ok(())
}

pub struct Relationship {
    pub metadata: Value,
    pub deleted_at: Option<String>,
}

/// The `REFERS_TO` relationship from one entity to another, if any.
fn relationship_between(
    user: &Uuid,
    from_id: &str,
    to_id: &str,
) -> Result<Option<Relationship>, NeotomaError> {
    let v = db::json(
        "SELECT jsonb_build_object('metadata', snapshot, 'deleted_at', neotoma._iso(deleted_at))
         FROM neotoma.relationships
         WHERE user_id = $1::uuid AND relationship_type = $2 AND source_entity_id = $3 AND target_entity_id = $4",
        &[
            Arg::uuid(user),
            Arg::Text(graph::RELATIONSHIP_TYPE),
            Arg::Text(from_id),
            Arg::Text(to_id),
        ],
    )?;
    if v.is_null() {
        return Ok(None);
    }
    Ok(Some(Relationship {
        deleted_at: v["deleted_at"].as_str().map(str::to_string),
        metadata: v["metadata"].clone(),
    }))
}

/// Deletes an entity (its history stays; restore_entity brings it back).
pub fn delete_node(
    user: &Uuid,
    workspace: &str,
    id: &str,
    reason: &str,
) -> Result<(), NeotomaError> {
    call(
        ActionId::DeleteEntity,
        json!({"entity_id": id, "workspace": workspace, "user_id": user.to_string(), "reason": reason}),
    )?;
    Ok(())
}
