//! The `graphmem` tool set: GraphMem's tools (seed 002,
//! `neotoma_core::actions::graph_servers::graphmem`) with integer ids (`neotoma.graph_ids`,
//! given the first time something is shown) and entity types canonicalized
//! through `neotoma.entity_type_mappings`.

use super::ids::{carry as carry_ids, resolve, Kind, Numbering};
use super::{Node, Relation};
use crate::db::{self, Arg};
use neotoma_core::actions::graph_servers::graphmem::*;
use neotoma_core::canonical::sha256_hex;
use neotoma_core::catalog::ActionId;
use neotoma_core::memory_graph as graph;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// A dedup warning below this cosine distance (GraphMem's 0.25).
const DUPLICATE_DISTANCE: f64 = 0.25;
/// Entities suggest_merges compares, at most (the most recent).
const MERGE_CANDIDATES: i64 = 500;
const MAX_RELATIONS: usize = 1000;
const MAX_HITS: usize = 50;

fn text_digest(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

/// What GraphMem shows of the graph, by its numbers.
impl Numbering {
    fn want_node(&mut self, node: &Node, with_observations: bool) {
        self.want(Kind::Entity, &node.id, "");
        if with_observations {
            for o in &node.observations {
                self.want(Kind::Observation, &node.id, &text_digest(o));
            }
        }
    }

    fn want_relation(&mut self, r: &Relation) {
        self.want(Kind::Entity, &r.from_id, "");
        self.want(Kind::Entity, &r.to_id, "");
        self.want(Kind::Relation, &r.relationship_id, &r.relation_type);
    }

    fn entity(&self, node: &Node) -> EntityOut {
        EntityOut {
            entity_id: self.id(Kind::Entity, &node.id, ""),
            name: node.name.clone(),
            entity_type: node.label.clone(),
            aliases: text_field(node, "aliases"),
            description: text_field(node, "description"),
            memory_observations_count: node.observations.len() as i64,
        }
    }

    fn observations(&self, node: &Node) -> Vec<ObservationOut> {
        let entity_id = self.id(Kind::Entity, &node.id, "");
        node.observations
            .iter()
            .map(|o| ObservationOut {
                observation_id: self.id(Kind::Observation, &node.id, &text_digest(o)),
                entity_id,
                text_content: o.clone(),
            })
            .collect()
    }

    fn relation(&self, r: &Relation) -> RelationOut {
        RelationOut {
            relation_id: self.id(Kind::Relation, &r.relationship_id, &r.relation_type),
            from_entity_id: self.id(Kind::Entity, &r.from_id, ""),
            to_entity_id: self.id(Kind::Entity, &r.to_id, ""),
            relation_type: r.relation_type.clone(),
        }
    }
}

fn text_field(node: &Node, field: &str) -> Option<String> {
    node.snapshot
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn not_found(what: &str, id: i64) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::NotFound,
        format!("{what} with ID {id} not found"),
    )
    .with("id", id)
}

/// The live entity an integer id names, in `workspace`.
fn entity_node(user: &Uuid, workspace: &str, id: i64) -> Result<Node, NeotomaError> {
    let Some((reference, _)) = resolve(user, Kind::Entity, id)? else {
        return Err(not_found("Entity", id));
    };
    super::node_by_id(user, workspace, &reference)?.ok_or_else(|| not_found("Entity", id))
}

/// The canonical form of an entity type: the user's mapping of its folded
/// form, else the global one, else the type as given (trimmed).
fn canonical_type(user: &Uuid, given: &str) -> Result<String, NeotomaError> {
    let given = given.trim();
    if given.is_empty() || given.len() > 200 {
        return Err(NeotomaError::invalid_field(
            "entity_type",
            "entity_type is 1 to 200 characters",
        ));
    }
    let v = db::json(
        "SELECT to_jsonb(m.canonical) FROM neotoma.entity_type_mappings m
         WHERE m.variant = lower(btrim($2)) AND m.user_id IN ($1::uuid, neotoma.global_user_id())
         ORDER BY m.user_id = $1::uuid DESC LIMIT 1",
        &[Arg::uuid(user), Arg::Text(given)],
    )?;
    Ok(v.as_str().unwrap_or(given).to_string())
}

fn check_text(field: &str, text: &str, max: usize) -> Result<(), NeotomaError> {
    if text.trim().is_empty() || text.len() > max {
        return Err(NeotomaError::invalid_field(
            field,
            format!("{field} is 1 to {max} bytes of text"),
        ));
    }
    Ok(())
}

fn detail_of(user: &Uuid, node: &Node) -> Result<EntityDetail, NeotomaError> {
    let relations = super::relations_of(user, std::slice::from_ref(&node.id), false)?;
    let mut n = Numbering::default();
    n.want_node(node, true);
    relations.iter().for_each(|r| n.want_relation(r));
    n.assign(user)?;
    Ok(EntityDetail {
        entity: n.entity(node),
        observations: n.observations(node),
        relations: relations.iter().map(|r| n.relation(r)).collect(),
    })
}

fn entities_out(user: &Uuid, nodes: &[Node]) -> Result<Vec<EntityOut>, NeotomaError> {
    let mut n = Numbering::default();
    nodes.iter().for_each(|node| n.want_node(node, false));
    n.assign(user)?;
    Ok(nodes.iter().map(|node| n.entity(node)).collect())
}

/// Entities with their observations, and the relations among them.
fn subgraph(
    user: &Uuid,
    nodes: &[Node],
) -> Result<(Vec<EntityDetail>, Vec<RelationOut>), NeotomaError> {
    let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
    let inside: BTreeSet<&String> = ids.iter().collect();
    let relations: Vec<Relation> = super::relations_of(user, &ids, true)?
        .into_iter()
        .filter(|r| inside.contains(&r.to_id))
        .collect();
    let mut n = Numbering::default();
    nodes.iter().for_each(|node| n.want_node(node, true));
    relations.iter().for_each(|r| n.want_relation(r));
    n.assign(user)?;
    let entities = nodes
        .iter()
        .map(|node| EntityDetail {
            entity: n.entity(node),
            observations: n.observations(node),
            relations: relations
                .iter()
                .filter(|r| r.from_id == node.id || r.to_id == node.id)
                .map(|r| n.relation(r))
                .collect(),
        })
        .collect();
    Ok((entities, relations.iter().map(|r| n.relation(r)).collect()))
}

pub fn get_version(
    _user: Option<Uuid>,
    _req: GetVersionRequest,
) -> Result<VersionResponse, NeotomaError> {
    Ok(VersionResponse {
        version: super::super::EXTENSION_VERSION.to_string(),
        server: "neotoma".into(),
    })
}

pub fn get_current_time(
    _user: Option<Uuid>,
    _req: GetCurrentTimeRequest,
) -> Result<CurrentTimeResponse, NeotomaError> {
    Ok(CurrentTimeResponse {
        current_time: super::now()?,
    })
}

/// Creates an entity (its type registered or extended for the user), unless
/// its type's identity rules reach one that exists ([`super::create_node`]).
fn make_entity(
    user: &Uuid,
    workspace: &str,
    e: &NewEntity,
    types: &mut BTreeMap<String, String>,
) -> Result<super::Created, NeotomaError> {
    check_text("name", &e.name, 1000)?;
    let label = canonical_type(user, &e.entity_type)?;
    let entity_type = super::graph_type(user, &label, types)?;
    let mut fields = Map::new();
    fields.insert("name".into(), json!(e.name));
    fields.insert(graph::LABEL.into(), json!(label));
    let (observations, _) = graph::with_added(&[], e.observations.as_deref().unwrap_or_default());
    fields.insert(graph::OBSERVATIONS.into(), json!(observations));
    for (field, value) in [("aliases", &e.aliases), ("description", &e.description)] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            fields.insert(field.into(), json!(v));
        }
    }
    super::create_node(user, workspace, &entity_type, fields, Map::new())
}

/// The closest live entity of the workspace by meaning (the built-in
/// embeddings), or of the same name, within GraphMem's distance.
fn similar_entity(
    user: &Uuid,
    workspace: &str,
    e: &NewEntity,
    entity_type: &str,
) -> Result<Option<(Node, f64)>, NeotomaError> {
    if let Some(same) = super::node_named(user, workspace, &e.name)? {
        return Ok(Some((same, 0.0)));
    }
    let candidate = json!({"name": e.name, "aliases": e.aliases, "description": e.description});
    let v = db::json(
        "WITH q AS (SELECT neotoma._entity_embedding($3, $4) AS v)
         SELECT jsonb_build_object('id', x.entity_id, 'distance', 1 - neotoma._cosine(x.embedding, q.v))
         FROM neotoma.entity_embeddings x
         JOIN neotoma.entities e ON e.user_id = x.user_id AND e.id = x.entity_id, q
         WHERE x.user_id = $1::uuid AND q.v IS NOT NULL AND x.model = neotoma._embedding_model()
           AND e.workspace = $2 AND e.merged_into IS NULL AND e.deleted_at IS NULL
         ORDER BY 1 - neotoma._cosine(x.embedding, q.v), x.entity_id LIMIT 1",
        &[
            Arg::uuid(user),
            Arg::Text(workspace),
            Arg::Text(entity_type),
            Arg::Json(&candidate),
        ],
    )?;
    let Some(distance) = v["distance"].as_f64().filter(|d| *d < DUPLICATE_DISTANCE) else {
        return Ok(None);
    };
    let id = v["id"].as_str().unwrap_or_default();
    Ok(super::node_by_id(user, workspace, id)?.map(|n| (n, distance)))
}

/// create_entity's answer when a similar entity exists: nothing created.
fn duplicate(
    user: &Uuid,
    existing: &Node,
    distance: f64,
) -> Result<CreateEntityResponse, NeotomaError> {
    let existing_entity = entities_out(user, std::slice::from_ref(existing))?.remove(0);
    Ok(CreateEntityResponse {
        status: "duplicate_warning".into(),
        warning: Some(format!(
            "A similar entity exists: {} (ID {}, cosine distance {distance:.3}); nothing was created. \
             Add observations to it, or create the entity under a more distinct name.",
            existing.name, existing_entity.entity_id
        )),
        existing_entity: Some(existing_entity),
        cosine_distance: Some(distance),
        entity: None,
    })
}

pub fn create_entity(
    user: Uuid,
    req: CreateEntityRequest,
) -> Result<CreateEntityResponse, NeotomaError> {
    let e = req.entity();
    check_text("name", &e.name, 1000)?;
    let workspace = super::writing(&user)?;
    let label = canonical_type(&user, &e.entity_type)?;
    if let Some((existing, distance)) =
        similar_entity(&user, &workspace, &e, &graph::type_name(&label))?
    {
        return duplicate(&user, &existing, distance);
    }
    let node = match make_entity(&user, &workspace, &e, &mut BTreeMap::new())? {
        super::Created::Existing(existing) => return duplicate(&user, &existing, 0.0),
        super::Created::New(node) | super::Created::Restored(node) => node,
    };
    Ok(CreateEntityResponse {
        status: "created".into(),
        entity: Some(detail_of(&user, &node)?),
        warning: None,
        existing_entity: None,
        cosine_distance: None,
    })
}

pub fn get_entity(user: Uuid, req: GetEntityRequest) -> Result<EntityDetail, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let workspace = super::context_workspace(&user)?;
    let node = entity_node(&user, &workspace, req.entity_id)?;
    detail_of(&user, &node)
}

pub fn update_entity(user: Uuid, req: UpdateEntityRequest) -> Result<EntityDetail, NeotomaError> {
    let workspace = super::writing(&user)?;
    let mut node = entity_node(&user, &workspace, req.entity_id)?;
    if let Some(name) = req.name.as_deref().filter(|n| *n != node.name) {
        check_text("name", name, 1000)?;
        if super::node_named(&user, &workspace, name)?.is_some() {
            return Err(NeotomaError::invalid_field(
                "name",
                format!("an entity named {name} exists already: names are unique"),
            ));
        }
        super::set_field(&user, &workspace, &node, "name", json!(name))?;
    }
    if let Some(given) = &req.entity_type {
        let label = canonical_type(&user, given)?;
        let entity_type = super::graph_type(&user, &label, &mut BTreeMap::new())?;
        if entity_type != node.entity_type {
            // Another type: the entity moves there, its history kept.
            let moved = super::call(
                ActionId::Reclassify,
                json!({"entity_id": node.id, "new_entity_type": entity_type, "workspace": workspace,
                       "reason": format!("entity_type set to {label} through graphmem"),
                       "user_id": user.to_string()}),
            )?;
            let id = moved["entity_id"].as_str().unwrap_or_default().to_string();
            carry_ids(&user, &node.id, &id)?;
            node = super::node_by_id(&user, &workspace, &id)?
                .ok_or_else(|| not_found("Entity", req.entity_id))?;
        }
        if node.label != label {
            super::set_field(&user, &workspace, &node, graph::LABEL, json!(label))?;
        }
    }
    for (field, value) in [("aliases", &req.aliases), ("description", &req.description)] {
        if let Some(v) = value {
            // An empty string clears the field.
            let v = if v.is_empty() { Value::Null } else { json!(v) };
            super::set_field(&user, &workspace, &node, field, v)?;
        }
    }
    let node = super::node_by_id(&user, &workspace, &node.id)?
        .ok_or_else(|| not_found("Entity", req.entity_id))?;
    detail_of(&user, &node)
}

pub fn delete_entity(
    user: Uuid,
    req: DeleteEntityRequest,
) -> Result<DeletedResponse, NeotomaError> {
    let workspace = super::writing(&user)?;
    let node = entity_node(&user, &workspace, req.entity_id)?;
    super::delete_node(&user, &workspace, &node.id, "deleted through graphmem")?;
    Ok(DeletedResponse {
        status: "deleted".into(),
        id: req.entity_id,
    })
}

fn add_observation(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    text: &str,
) -> Result<(Node, ObservationOut), NeotomaError> {
    check_text("text_content", text, 100_000)?;
    let (list, added) = graph::with_added(&node.observations, &[text.to_string()]);
    let node = if added.is_empty() {
        node.clone()
    } else {
        super::set_observations(user, workspace, node, &list)?;
        Node {
            observations: list,
            ..node.clone()
        }
    };
    let mut n = Numbering::default();
    n.want(Kind::Entity, &node.id, "");
    n.want(Kind::Observation, &node.id, &text_digest(text));
    n.assign(user)?;
    let out = ObservationOut {
        observation_id: n.id(Kind::Observation, &node.id, &text_digest(text)),
        entity_id: n.id(Kind::Entity, &node.id, ""),
        text_content: text.to_string(),
    };
    Ok((node, out))
}

pub fn create_observation(
    user: Uuid,
    req: CreateObservationRequest,
) -> Result<ObservationOut, NeotomaError> {
    let workspace = super::writing(&user)?;
    let node = entity_node(&user, &workspace, req.entity_id)?;
    Ok(add_observation(&user, &workspace, &node, &req.text_content)?.1)
}

pub fn delete_observation(
    user: Uuid,
    req: DeleteObservationRequest,
) -> Result<DeletedResponse, NeotomaError> {
    let workspace = super::writing(&user)?;
    let (entity, digest) = resolve(&user, Kind::Observation, req.observation_id)?
        .ok_or_else(|| not_found("Observation", req.observation_id))?;
    let node = super::node_by_id(&user, &workspace, &entity)?
        .ok_or_else(|| not_found("Observation", req.observation_id))?;
    let list: Vec<String> = node
        .observations
        .iter()
        .filter(|o| text_digest(o) != digest)
        .cloned()
        .collect();
    if list.len() == node.observations.len() {
        return Err(not_found("Observation", req.observation_id));
    }
    super::set_observations(&user, &workspace, &node, &list)?;
    Ok(DeletedResponse {
        status: "deleted".into(),
        id: req.observation_id,
    })
}

fn add_relation(
    user: &Uuid,
    workspace: &str,
    r: &NewRelation,
) -> Result<RelationOut, NeotomaError> {
    check_text("relation_type", &r.relation_type, 200)?;
    let from = entity_node(user, workspace, r.from_entity_id)?;
    let to = entity_node(user, workspace, r.to_entity_id)?;
    if from.id == to.id {
        return Err(NeotomaError::invalid_field(
            "to_entity_id",
            "a relation joins two entities, not one to itself",
        ));
    }
    super::assert_relation(
        user,
        workspace,
        &super::Assertion {
            from_id: &from.id,
            to_id: &to.id,
            relation_type: &r.relation_type,
            active: true,
            metadata: None,
            provenance: None,
        },
    )?;
    let relation = Relation {
        relationship_id: neotoma_core::ids::relationship_id(
            user,
            graph::RELATIONSHIP_TYPE,
            &from.id,
            &to.id,
        )
        .to_string(),
        relationship_type: graph::RELATIONSHIP_TYPE.into(),
        from_id: from.id,
        to_id: to.id,
        relation_type: r.relation_type.clone(),
        metadata: None,
    };
    let mut n = Numbering::default();
    n.want_relation(&relation);
    n.assign(user)?;
    Ok(n.relation(&relation))
}

pub fn create_relation(
    user: Uuid,
    req: CreateRelationRequest,
) -> Result<RelationOut, NeotomaError> {
    let workspace = super::writing(&user)?;
    add_relation(
        &user,
        &workspace,
        &NewRelation {
            from_entity_id: req.from_entity_id,
            to_entity_id: req.to_entity_id,
            relation_type: req.relation_type,
        },
    )
}

pub fn delete_relation(
    user: Uuid,
    req: DeleteRelationRequest,
) -> Result<DeletedResponse, NeotomaError> {
    let workspace = super::writing(&user)?;
    let (relationship, relation_type) = resolve(&user, Kind::Relation, req.relation_id)?
        .ok_or_else(|| not_found("Relation", req.relation_id))?;
    let v = db::json(
        "SELECT jsonb_build_object('from', source_entity_id, 'to', target_entity_id, 'type', relationship_type)
         FROM neotoma.relationships WHERE user_id = $1::uuid AND id = $2::uuid AND deleted_at IS NULL",
        &[Arg::uuid(user), Arg::Text(&relationship)],
    )?;
    let (Some(from), Some(to)) = (v["from"].as_str(), v["to"].as_str()) else {
        return Err(not_found("Relation", req.relation_id));
    };
    // One beyond the token's workspaces: as one that does not exist.
    if crate::actions::entities::beyond_limit(&user, from)? {
        return Err(not_found("Relation", req.relation_id));
    }
    // Whatever its valid time.
    let live = {
        let _any = super::valid_at::regardless();
        super::relations_of(&user, &[from.to_string()], true)?
    }
    .into_iter()
    .find(|r| r.relationship_id == relationship && r.relation_type == relation_type)
    .ok_or_else(|| not_found("Relation", req.relation_id))?;
    if live.relationship_type == graph::RELATIONSHIP_TYPE {
        super::assert_relation(
            &user,
            &workspace,
            &super::Assertion {
                from_id: from,
                to_id: to,
                relation_type: &relation_type,
                active: false,
                metadata: None,
                provenance: None,
            },
        )?;
    } else {
        super::delete_typed_relationship(&user, &workspace, &live)?;
    }
    Ok(DeletedResponse {
        status: "deleted".into(),
        id: req.relation_id,
    })
}

pub fn find_relations(
    user: Uuid,
    req: FindRelationsRequest,
) -> Result<RelationsResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let workspace = super::context_workspace(&user)?;
    let end = |id: Option<i64>| -> Result<Option<String>, NeotomaError> {
        id.map(|id| entity_node(&user, &workspace, id).map(|n| n.id))
            .transpose()
    };
    let (from, to) = (end(req.from_entity_id)?, end(req.to_entity_id)?);
    let mut relations = match (&from, &to) {
        (Some(f), _) => super::relations_of(&user, std::slice::from_ref(f), true)?,
        (None, Some(t)) => super::relations_of(&user, std::slice::from_ref(t), false)?,
        (None, None) => super::relations_in(&user, &workspace)?,
    };
    relations.retain(|r| {
        to.as_ref().is_none_or(|t| &r.to_id == t)
            && from.as_ref().is_none_or(|f| &r.from_id == f)
            && req
                .relation_type
                .as_ref()
                .is_none_or(|t| &r.relation_type == t)
    });
    relations.truncate(MAX_RELATIONS);
    let mut n = Numbering::default();
    relations.iter().for_each(|r| n.want_relation(r));
    n.assign(&user)?;
    Ok(RelationsResponse {
        relations: relations.iter().map(|r| n.relation(r)).collect(),
    })
}

/// Which fields of the node hold a word of the query.
fn matched_fields(node: &Node, words: &[String]) -> Vec<String> {
    let holds = |text: &str| {
        let text = text.to_lowercase();
        words.iter().any(|w| text.contains(w.as_str()))
    };
    let mut fields = Vec::new();
    for (field, text) in [
        ("name", Some(node.name.clone())),
        ("entity_type", Some(node.label.clone())),
        ("aliases", text_field(node, "aliases")),
        ("description", text_field(node, "description")),
    ] {
        if text.as_deref().is_some_and(holds) {
            fields.push(field.to_string());
        }
    }
    if node.observations.iter().any(|o| holds(o)) {
        fields.push("observations".into());
    }
    fields
}

pub fn search_entities(
    user: Uuid,
    req: SearchEntitiesRequest,
) -> Result<SearchEntitiesResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    check_text("query", &req.query, 1000)?;
    let workspace = super::context_workspace(&user)?;
    // Neotoma's search (text and meaning, fused by rank), then entities
    // holding the query in aliases or observations it did not rank.
    let found = super::call(
        ActionId::RetrieveEntities,
        json!({"search": req.query, "limit": MAX_HITS, "workspace": workspace, "user_id": user.to_string()}),
    )?;
    let mut ranked: Vec<(String, f64)> = Vec::new();
    for (rank, e) in found["entities"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(id) = e["id"].as_str() {
            let score = e["relevance_score"]
                .as_f64()
                .unwrap_or(1.0 / (60.0 + rank as f64 + 1.0));
            ranked.push((id.to_string(), score));
        }
    }
    let fields = super::Fields::all();
    for node in super::nodes_matching(&user, &workspace, &req.query, &fields, 0, MAX_HITS as i64)? {
        if !ranked.iter().any(|(id, _)| *id == node.id) {
            let score = 1.0 / (60.0 + ranked.len() as f64 + 1.0);
            ranked.push((node.id, score));
        }
    }
    ranked.truncate(MAX_HITS);
    let words = words(&req.query);
    let mut nodes = Vec::new();
    for (id, score) in ranked {
        if let Some(node) = super::node_by_id(&user, &workspace, &id)? {
            nodes.push((node, score));
        }
    }
    let mut n = Numbering::default();
    nodes.iter().for_each(|(node, _)| n.want_node(node, false));
    n.assign(&user)?;
    Ok(SearchEntitiesResponse {
        results: nodes
            .iter()
            .map(|(node, score)| {
                let e = n.entity(node);
                SearchHit {
                    entity_id: e.entity_id,
                    name: e.name,
                    entity_type: e.entity_type,
                    description: e.description,
                    aliases: e.aliases,
                    memory_observations_count: e.memory_observations_count,
                    relevance_score: *score,
                    matched_fields: matched_fields(node, &words),
                }
            })
            .collect(),
    })
}

fn check_page(page: i64, per_page: i64) -> Result<(), NeotomaError> {
    if !(1..=1_000_000).contains(&page) {
        return Err(NeotomaError::invalid_field("page", "page is 1 or more"));
    }
    if !(1..=100).contains(&per_page) {
        return Err(NeotomaError::invalid_field(
            "per_page",
            "per_page is 1 to 100",
        ));
    }
    Ok(())
}

pub fn list_entities(
    user: Uuid,
    req: ListEntitiesRequest,
) -> Result<ListEntitiesResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    check_page(req.page, req.per_page)?;
    let workspace = super::context_workspace(&user)?;
    let total = super::count_nodes(&user, &workspace)?;
    let nodes = super::nodes_at(
        &user,
        &workspace,
        (req.page - 1) * req.per_page,
        req.per_page,
    )?;
    Ok(ListEntitiesResponse {
        entities: entities_out(&user, &nodes)?,
        page: req.page,
        per_page: req.per_page,
        total_count: total,
        total_pages: (total + req.per_page - 1) / req.per_page,
    })
}

pub fn search_subgraph(
    user: Uuid,
    req: SearchSubgraphRequest,
) -> Result<SubgraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    check_text("query", &req.query, 1000)?;
    check_page(req.page, req.per_page)?;
    let workspace = super::context_workspace(&user)?;
    let fields = super::Fields {
        name: req.search_in_name,
        label: req.search_in_type,
        aliases: req.search_in_aliases,
        observations: req.search_in_observations,
    };
    let offset = (req.page - 1) * req.per_page;
    let total = super::count_matching(&user, &workspace, &req.query, &fields)?;
    let nodes =
        super::nodes_matching(&user, &workspace, &req.query, &fields, offset, req.per_page)?;
    let (entities, relations) = subgraph(&user, &nodes)?;
    Ok(SubgraphResponse {
        entities,
        relations,
        page: Some(req.page),
        per_page: Some(req.per_page),
        total_count: Some(total),
    })
}

pub fn get_subgraph_by_ids(
    user: Uuid,
    req: GetSubgraphByIdsRequest,
) -> Result<SubgraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    if req.entity_ids.len() > 100 {
        return Err(NeotomaError::invalid_field("entity_ids", "at most 100 ids"));
    }
    let workspace = super::context_workspace(&user)?;
    let mut nodes: Vec<Node> = Vec::new();
    for id in &req.entity_ids {
        let node = entity_node(&user, &workspace, *id)?;
        if !nodes.iter().any(|n| n.id == node.id) {
            nodes.push(node);
        }
    }
    let (entities, relations) = subgraph(&user, &nodes)?;
    Ok(SubgraphResponse {
        entities,
        relations,
        page: None,
        per_page: None,
        total_count: None,
    })
}

fn context_of(user: &Uuid, node: &Node, status: &str) -> Result<ContextResponse, NeotomaError> {
    let e = entities_out(user, std::slice::from_ref(node))?.remove(0);
    Ok(ContextResponse {
        status: status.into(),
        project_id: Some(e.entity_id),
        project_name: Some(e.name),
        project_type: Some(e.entity_type),
        description: e.description,
    })
}

pub fn set_context(user: Uuid, req: SetContextRequest) -> Result<ContextResponse, NeotomaError> {
    let workspace = super::context_workspace(&user)?;
    let node = entity_node(&user, &workspace, req.project_id)?;
    super::call(
        ActionId::SetContext,
        json!({"project_entity_id": node.id, "user_id": user.to_string()}),
    )?;
    let mut answer = context_of(&user, &node, "context_set")?;
    answer.description = None;
    Ok(answer)
}

pub fn get_context(user: Uuid, _req: GetContextRequest) -> Result<ContextResponse, NeotomaError> {
    let context = super::call(ActionId::GetContext, json!({"user_id": user.to_string()}))?;
    // The level that applies: the token's, else the user's.
    let project = ["token", "user"]
        .iter()
        .find_map(|level| context.get(*level).filter(|c| c.is_object()))
        .and_then(|c| c["project_entity_id"].as_str().map(str::to_string));
    let workspace = super::context_workspace(&user)?;
    match project.and_then(|id| super::node_by_id(&user, &workspace, &id).transpose()) {
        Some(node) => context_of(&user, &node?, "active"),
        None => Ok(ContextResponse {
            status: "no_context".into(),
            project_id: None,
            project_name: None,
            project_type: None,
            description: None,
        }),
    }
}

pub fn clear_context(
    user: Uuid,
    _req: ClearContextRequest,
) -> Result<ContextResponse, NeotomaError> {
    super::call(ActionId::ClearContext, json!({"user_id": user.to_string()}))?;
    Ok(ContextResponse {
        status: "context_cleared".into(),
        project_id: None,
        project_name: None,
        project_type: None,
        description: None,
    })
}

pub fn bulk_update(user: Uuid, req: BulkUpdateRequest) -> Result<BulkUpdateResponse, NeotomaError> {
    let entities = req.entities.unwrap_or_default();
    let observations = req.observations.unwrap_or_default();
    let relations = req.relations.unwrap_or_default();
    let total = entities.len() + observations.len() + relations.len();
    if total > MAX_BULK {
        return Err(NeotomaError::invalid_field(
            "entities",
            format!("at most {MAX_BULK} operations per call ({total} given)"),
        ));
    }
    let workspace = super::writing(&user)?;
    let mut types = BTreeMap::new();
    let mut created = Vec::new();
    for e in &entities {
        // An entity that exists already is answered as it is.
        created.push(match make_entity(&user, &workspace, e, &mut types)? {
            super::Created::New(n) | super::Created::Existing(n) | super::Created::Restored(n) => n,
        });
    }
    let mut added = Vec::new();
    for o in &observations {
        let node = entity_node(&user, &workspace, o.entity_id)?;
        added.push(add_observation(&user, &workspace, &node, &o.text_content)?.1);
    }
    let mut related = Vec::new();
    for r in &relations {
        related.push(add_relation(&user, &workspace, r)?);
    }
    Ok(BulkUpdateResponse {
        status: "ok".into(),
        operations: total as i64,
        entities: entities_out(&user, &created)?,
        observations: added,
        relations: related,
    })
}

pub fn suggest_merges(
    user: Uuid,
    req: SuggestMergesRequest,
) -> Result<SuggestMergesResponse, NeotomaError> {
    if !(0.0..=1.0).contains(&req.threshold) {
        return Err(NeotomaError::invalid_field(
            "threshold",
            "threshold is 0 to 1",
        ));
    }
    if !(1..=100).contains(&req.limit) {
        return Err(NeotomaError::invalid_field("limit", "limit is 1 to 100"));
    }
    let workspace = super::context_workspace(&user)?;
    // Of one type as the agents name it (its label), wherever it is stored.
    let label = req
        .entity_type
        .as_deref()
        .map(|t| canonical_type(&user, t))
        .transpose()?;
    let v = db::json(
        "WITH c AS (SELECT x.entity_id, x.embedding FROM neotoma.entity_embeddings x
                    JOIN neotoma.entities e ON e.user_id = x.user_id AND e.id = x.entity_id
                    JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
                    WHERE x.user_id = $1::uuid AND x.model = neotoma._embedding_model() AND e.workspace = $2
                      AND e.merged_into IS NULL AND e.deleted_at IS NULL
                      AND ($3::text IS NULL OR lower(coalesce(s.snapshot->>'entity_type_label', e.entity_type)) = lower($3))
                    ORDER BY e.created_at DESC, e.id LIMIT $6),
              p AS (SELECT a.entity_id AS a, b.entity_id AS b, 1 - neotoma._cosine(a.embedding, b.embedding) AS d
                    FROM c a JOIN c b ON a.entity_id < b.entity_id)
         SELECT coalesce(jsonb_agg(jsonb_build_array(a, b, d) ORDER BY d, a, b), '[]')
         FROM (SELECT * FROM p WHERE d <= $4::float8 ORDER BY d, a, b LIMIT $5) y",
        &[
            Arg::uuid(user),
            Arg::Text(&workspace),
            Arg::OptText(label.as_deref()),
            Arg::Text(&req.threshold.to_string()),
            Arg::Int(req.limit),
            Arg::Int(MERGE_CANDIDATES),
        ],
    )?;
    let pairs: Vec<(String, String, f64)> = db::from_json(v, "pairs")?;
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    for (a, b, _) in &pairs {
        for id in [a, b] {
            if !nodes.contains_key(id) {
                if let Some(n) = super::node_by_id(&user, &workspace, id)? {
                    nodes.insert(id.clone(), n);
                }
            }
        }
    }
    let mut n = Numbering::default();
    nodes.values().for_each(|node| n.want_node(node, false));
    n.assign(&user)?;
    Ok(SuggestMergesResponse {
        suggestions: pairs
            .iter()
            .filter_map(|(a, b, d)| {
                let d = (d * 1e6).round() / 1e6;
                Some(MergeSuggestion {
                    entity_a: n.entity(nodes.get(a)?),
                    entity_b: n.entity(nodes.get(b)?),
                    cosine_distance: d,
                    recommendation: recommendation(d).into(),
                })
            })
            .collect(),
    })
}
