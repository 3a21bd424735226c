//! The `memory` tool set: the reference MCP memory server's tools
//! (`neotoma_core::actions::graph_servers::memory`). Names are unique in its graph:
//! a name finds the oldest live entity of that name in the workspace.

use super::{Node, Relation};
use neotoma_core::actions::graph_servers::memory::*;
use neotoma_core::memory_graph as graph;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Entities a call may name, and texts per entity, at most.
const MAX_ITEMS: usize = 1000;
/// read_graph's page, unless `limit` says otherwise, and its largest.
const PAGE: i64 = 100;
const MAX_PAGE: i64 = 1000;
/// search_nodes answers at most this many entities.
const MAX_MATCHES: i64 = 1000;

fn check_count(field: &str, n: usize) -> Result<(), NeotomaError> {
    if n > MAX_ITEMS {
        return Err(NeotomaError::invalid_field(
            field,
            format!("at most {MAX_ITEMS} items per call"),
        ));
    }
    Ok(())
}

fn check_name(field: &str, name: &str) -> Result<(), NeotomaError> {
    if name.trim().is_empty() {
        return Err(NeotomaError::invalid_field(field, "a name cannot be empty"));
    }
    if name.len() > 1000 {
        return Err(NeotomaError::invalid_field(
            field,
            "a name is at most 1000 bytes",
        ));
    }
    Ok(())
}

fn not_found(name: &str) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::EntityNotFound,
        format!("Entity with name {name} not found"),
    )
    .with("name", name)
}

pub fn entity_of(node: &Node) -> MemoryEntity {
    MemoryEntity {
        name: node.name.clone(),
        entity_type: node.label.clone(),
        observations: node.observations.clone(),
    }
}

/// Relations as the memory server shows them (by the names of their ends).
fn shown(user: &Uuid, relations: &[Relation]) -> Result<Vec<MemoryRelation>, NeotomaError> {
    let ids: Vec<String> = relations
        .iter()
        .flat_map(|r| [r.from_id.clone(), r.to_id.clone()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let names = super::names_of(user, &ids)?;
    let mut out: Vec<MemoryRelation> = relations
        .iter()
        .map(|r| MemoryRelation {
            from: names.get(&r.from_id).cloned().unwrap_or_default(),
            to: names.get(&r.to_id).cloned().unwrap_or_default(),
            relation_type: r.relation_type.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// Entities and the relations touching them.
fn graph_of(user: &Uuid, nodes: &[Node], from_only: bool) -> Result<GraphResponse, NeotomaError> {
    let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
    let relations = super::relations_of(user, &ids, from_only)?;
    Ok(GraphResponse {
        entities: nodes.iter().map(entity_of).collect(),
        relations: shown(user, &relations)?,
        ..GraphResponse::default()
    })
}

pub fn create_entities(
    user: Uuid,
    req: CreateEntitiesRequest,
) -> Result<CreateEntitiesResponse, NeotomaError> {
    check_count("entities", req.entities.len())?;
    for e in &req.entities {
        check_name("name", &e.name)?;
        check_name("entityType", &e.entity_type)?;
        check_count("observations", e.observations.len())?;
    }
    let workspace = super::writing(&user)?;
    let names: Vec<String> = req.entities.iter().map(|e| e.name.clone()).collect();
    let existing: BTreeSet<String> = super::nodes_named(&user, &workspace, &names)?
        .into_iter()
        .map(|n| n.name)
        .collect();
    let mut types = BTreeMap::new();
    let mut created: Vec<MemoryEntity> = Vec::new();
    for e in req.entities {
        if existing.contains(&e.name) || created.iter().any(|c| c.name == e.name) {
            continue;
        }
        let entity_type = super::graph_type(&user, &e.entity_type, &mut types)?;
        let (observations, _) = graph::with_added(&[], &e.observations);
        let mut fields = Map::new();
        fields.insert("name".into(), json!(e.name));
        fields.insert(graph::LABEL.into(), json!(e.entity_type));
        fields.insert(graph::OBSERVATIONS.into(), json!(observations));
        let mut with = Map::new();
        if let Some(p) = &req.provenance {
            with.insert("provenance".into(), p.clone());
        }
        if let super::Created::Existing(_) =
            super::create_node(&user, &workspace, &entity_type, fields, with)?
        {
            // The same entity by its type's identity rules: there already.
            continue;
        }
        created.push(MemoryEntity { observations, ..e });
    }
    Ok(CreateEntitiesResponse { entities: created })
}

/// The entities named, each once (the oldest of a name).
fn nodes_by_name(
    user: &Uuid,
    workspace: &str,
    names: &[String],
) -> Result<BTreeMap<String, Node>, NeotomaError> {
    let mut by_name: BTreeMap<String, Node> = BTreeMap::new();
    for n in super::nodes_named(user, workspace, names)? {
        by_name.entry(n.name.clone()).or_insert(n);
    }
    Ok(by_name)
}

pub fn add_observations(
    user: Uuid,
    req: AddObservationsRequest,
) -> Result<AddObservationsResponse, NeotomaError> {
    check_count("observations", req.observations.len())?;
    for o in &req.observations {
        check_count("contents", o.contents.len())?;
        if o.contents.iter().any(|c| c.len() > 100_000) {
            return Err(NeotomaError::invalid_field(
                "contents",
                "an observation is at most 100000 bytes",
            ));
        }
    }
    let workspace = super::writing(&user)?;
    let names: Vec<String> = req
        .observations
        .iter()
        .map(|o| o.entity_name.clone())
        .collect();
    let mut nodes = nodes_by_name(&user, &workspace, &names)?;
    if let Some(missing) = names.iter().find(|n| !nodes.contains_key(*n)) {
        return Err(not_found(missing));
    }
    let mut results = Vec::new();
    for o in req.observations {
        let node = nodes.get_mut(&o.entity_name).expect("checked above");
        let (list, added) = graph::with_added(&node.observations, &o.contents);
        if !added.is_empty() {
            super::set_observations(&user, &workspace, node, &list)?;
            node.observations = list;
        }
        results.push(AddedObservations {
            entity_name: o.entity_name,
            added_observations: added,
        });
    }
    Ok(AddObservationsResponse { results })
}

pub fn delete_entities(
    user: Uuid,
    req: DeleteEntitiesRequest,
) -> Result<SuccessResponse, NeotomaError> {
    check_count("entityNames", req.entity_names.len())?;
    let workspace = super::writing(&user)?;
    let nodes = super::nodes_named(&user, &workspace, &req.entity_names)?;
    for n in nodes {
        super::delete_node(&user, &workspace, &n.id, "deleted through the memory tools")?;
    }
    Ok(SuccessResponse {
        success: true,
        message: "Entities deleted successfully".into(),
    })
}

pub fn delete_observations(
    user: Uuid,
    req: DeleteObservationsRequest,
) -> Result<SuccessResponse, NeotomaError> {
    check_count("deletions", req.deletions.len())?;
    let workspace = super::writing(&user)?;
    let names: Vec<String> = req
        .deletions
        .iter()
        .map(|d| d.entity_name.clone())
        .collect();
    let mut nodes = nodes_by_name(&user, &workspace, &names)?;
    for d in req.deletions {
        // The original passes over a name it does not find.
        let Some(node) = nodes.get_mut(&d.entity_name) else {
            continue;
        };
        let list: Vec<String> = node
            .observations
            .iter()
            .filter(|o| !d.observations.contains(o))
            .cloned()
            .collect();
        if list.len() != node.observations.len() {
            super::set_observations(&user, &workspace, node, &list)?;
            node.observations = list;
        }
    }
    Ok(SuccessResponse {
        success: true,
        message: "Observations deleted successfully".into(),
    })
}

/// The ids of the entities named by relations; each must exist.
fn ends(
    user: &Uuid,
    workspace: &str,
    relations: &[MemoryRelation],
    required: bool,
) -> Result<BTreeMap<String, String>, NeotomaError> {
    let names: Vec<String> = relations
        .iter()
        .flat_map(|r| [r.from.clone(), r.to.clone()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut ids = BTreeMap::new();
    for n in super::nodes_named(user, workspace, &names)? {
        ids.entry(n.name).or_insert(n.id);
    }
    if required {
        if let Some(missing) = names.iter().find(|n| !ids.contains_key(*n)) {
            return Err(not_found(missing));
        }
    }
    Ok(ids)
}

pub fn create_relations(
    user: Uuid,
    req: CreateRelationsRequest,
) -> Result<CreateRelationsResponse, NeotomaError> {
    check_count("relations", req.relations.len())?;
    // A relation from an entity to itself is accepted, as the reference
    // server accepts it: a REFERS_TO relationship from the entity to itself.
    for r in &req.relations {
        check_name("relationType", &r.relation_type)?;
    }
    let workspace = super::writing(&user)?;
    let ids = ends(&user, &workspace, &req.relations, true)?;
    let mut created = Vec::new();
    for r in req.relations {
        let made = super::assert_relation(
            &user,
            &workspace,
            &super::Assertion {
                from_id: &ids[&r.from],
                to_id: &ids[&r.to],
                relation_type: &r.relation_type,
                active: true,
                metadata: None,
                provenance: req.provenance.as_ref(),
            },
        )?;
        if made && !created.contains(&r) {
            created.push(r);
        }
    }
    Ok(CreateRelationsResponse { relations: created })
}

pub fn delete_relations(
    user: Uuid,
    req: DeleteRelationsRequest,
) -> Result<SuccessResponse, NeotomaError> {
    check_count("relations", req.relations.len())?;
    let workspace = super::writing(&user)?;
    let ids = ends(&user, &workspace, &req.relations, false)?;
    for r in req.relations {
        let (Some(from), Some(to)) = (ids.get(&r.from), ids.get(&r.to)) else {
            continue;
        };
        // One of Neotoma's own relationship types, named as such (whatever
        // its valid time).
        let typed = {
            let _any = super::valid_at::regardless();
            super::relations_of(&user, std::slice::from_ref(from), true)?
        }
        .into_iter()
        .find(|x| {
            &x.to_id == to
                && x.relation_type == r.relation_type
                && x.relationship_type != graph::RELATIONSHIP_TYPE
        });
        match typed {
            Some(t) => super::delete_typed_relationship(&user, &workspace, &t)?,
            None => {
                super::assert_relation(
                    &user,
                    &workspace,
                    &super::Assertion {
                        from_id: from,
                        to_id: to,
                        relation_type: &r.relation_type,
                        active: false,
                        metadata: None,
                        provenance: None,
                    },
                )?;
            }
        }
    }
    Ok(SuccessResponse {
        success: true,
        message: "Relations deleted successfully".into(),
    })
}

pub fn read_graph(user: Uuid, req: ReadGraphRequest) -> Result<GraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let limit = req.limit.unwrap_or(PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(NeotomaError::invalid_field(
            "limit",
            format!("limit is 1 to {MAX_PAGE}"),
        ));
    }
    let after = req.cursor.as_deref().map(super::parse_cursor).transpose()?;
    let workspace = super::context_workspace(&user)?;
    // One more than asked: whether a next page exists.
    let mut nodes = super::nodes_page(&user, &workspace, after, limit + 1)?;
    let more = nodes.len() as i64 > limit;
    nodes.truncate(limit as usize);
    // Each relation once: with the page of the entity it starts at.
    let mut g = graph_of(&user, &nodes, true)?;
    if more {
        g.next_cursor = nodes.last().map(super::cursor_of);
    }
    Ok(g)
}

pub fn search_nodes(user: Uuid, req: SearchNodesRequest) -> Result<GraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    if req.query.len() > 1000 {
        return Err(NeotomaError::invalid_field(
            "query",
            "a query is at most 1000 bytes",
        ));
    }
    let workspace = super::context_workspace(&user)?;
    // Where the original looks: names, types, observations.
    let fields = super::Fields {
        aliases: false,
        ..super::Fields::all()
    };
    let mut nodes =
        super::nodes_matching(&user, &workspace, &req.query, &fields, 0, MAX_MATCHES + 1)?;
    let truncated = nodes.len() as i64 > MAX_MATCHES;
    nodes.truncate(MAX_MATCHES as usize);
    let mut g = graph_of(&user, &nodes, false)?;
    g.truncated = truncated;
    Ok(g)
}

pub fn open_nodes(user: Uuid, req: OpenNodesRequest) -> Result<GraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    check_count("names", req.names.len())?;
    let workspace = super::context_workspace(&user)?;
    let mut seen = BTreeSet::new();
    let nodes: Vec<Node> = super::nodes_named(&user, &workspace, &req.names)?
        .into_iter()
        .filter(|n| seen.insert(n.name.clone()))
        .collect();
    graph_of(&user, &nodes, false)
}
