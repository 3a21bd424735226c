//! The `workspace` tool set: the workspace-partitioned graph server's
//! tools (seed 003, `neotoma_core::actions::graph_servers::workspace`). Entities
//! are matched by name within the workspace `workspaceName` selects.

use super::{Node, Relation};
use neotoma_core::actions::graph_servers::workspace::*;
use neotoma_core::ids::relationship_id;
use neotoma_core::memory_graph as graph;
use neotoma_core::workspace::WorkspaceName;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map};
use std::collections::BTreeMap;
use uuid::Uuid;

/// read_graph's page, by default and at most.
const PAGE: i64 = 1000;

/// The workspace `workspaceName` selects, if the call's token may use it.
fn workspace_of(label: &str) -> Result<String, NeotomaError> {
    let name = WorkspaceName::from_label("workspaceName", label)?
        .as_str()
        .to_string();
    crate::tenancy::call_limits().permit_workspace("workspaceName", &name)?;
    Ok(name)
}

fn metadata_of(node: &Node) -> Option<String> {
    node.snapshot
        .get("metadata")
        .and_then(|m| m.as_str())
        .map(str::to_string)
}

fn relation_model(workspace_name: &str, r: Relation) -> RelationModel {
    RelationModel {
        id: r.relationship_id,
        workspace_name: workspace_name.to_string(),
        from_entity_id: r.from_id,
        to_entity_id: r.to_id,
        relation_type: r.relation_type,
        metadata: r.metadata,
    }
}

pub fn read_graph(user: Uuid, req: ReadGraphRequest) -> Result<ReadGraphResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let workspace = workspace_of(&req.workspace_name)?;
    let limit = req.limit.unwrap_or(PAGE);
    if !(1..=PAGE).contains(&limit) {
        return Err(NeotomaError::invalid_field(
            "limit",
            format!("limit is 1 to {PAGE}"),
        ));
    }
    let after = req.cursor.as_deref().map(super::parse_cursor).transpose()?;
    let mut nodes = super::nodes_page(&user, &workspace, after, limit + 1)?;
    let more = nodes.len() as i64 > limit;
    nodes.truncate(limit as usize);
    let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
    let relations = super::relations_of(&user, &ids, true)?;
    let name = req.workspace_name;
    Ok(ReadGraphResponse {
        entities: nodes
            .iter()
            .map(|n| EntityModel {
                workspace_name: name.clone(),
                name: n.name.clone(),
                entity_type: n.label.clone(),
                observations: n.observations.clone(),
                metadata: metadata_of(n),
                id: n.id.clone(),
            })
            .collect(),
        relations: relations
            .into_iter()
            .map(|r| relation_model(&name, r))
            .collect(),
        next_cursor: if more {
            nodes.last().map(super::cursor_of)
        } else {
            None
        },
        workspace_name: name,
    })
}

pub fn upsert_entity(
    user: Uuid,
    req: UpsertEntityRequest,
) -> Result<UpsertEntityResponse, NeotomaError> {
    if [&req.workspace_name, &req.name, &req.entity_type]
        .iter()
        .any(|s| s.trim().is_empty())
    {
        return Err(NeotomaError::validation(
            "Invalid entity payload. Require workspaceName, name and entityType.",
        ));
    }
    if let Some(m) = &req.metadata {
        if serde_json::from_str::<serde_json::Value>(m).is_err() {
            return Err(NeotomaError::invalid_field(
                "metadata",
                "metadata is a JSON text, e.g. \"{\\\"dept\\\":\\\"Engineering\\\"}\"",
            ));
        }
    }
    let workspace = workspace_of(&req.workspace_name)?;
    super::lock_graph(&user)?;
    let id = match super::node_named(&user, &workspace, &req.name)? {
        Some(node) => update_node(&user, &workspace, node, &req)?,
        None => {
            let entity_type = super::graph_type(&user, &req.entity_type, &mut BTreeMap::new())?;
            let mut fields = Map::new();
            fields.insert("name".into(), json!(req.name));
            fields.insert(graph::LABEL.into(), json!(req.entity_type));
            let (observations, _) =
                graph::with_added(&[], req.observations.as_deref().unwrap_or_default());
            fields.insert(graph::OBSERVATIONS.into(), json!(observations));
            if let Some(m) = &req.metadata {
                fields.insert("metadata".into(), json!(m));
            }
            match super::create_node(&user, &workspace, &entity_type, fields, Map::new())? {
                // The same entity by its type's identity rules: updated.
                super::Created::Existing(node) => update_node(&user, &workspace, node, &req)?,
                super::Created::New(node) | super::Created::Restored(node) => node.id,
            }
        }
    };
    Ok(UpsertEntityResponse {
        success: true,
        id,
        workspace: req.workspace_name,
        name: req.name,
    })
}

/// Upserts what the request says into an existing entity: its label, its
/// observations and metadata when given. Answers its id.
fn update_node(
    user: &Uuid,
    workspace: &str,
    node: Node,
    req: &UpsertEntityRequest,
) -> Result<String, NeotomaError> {
    if node.label != req.entity_type {
        super::set_field(user, workspace, &node, graph::LABEL, json!(req.entity_type))?;
    }
    if let Some(list) = &req.observations {
        let (list, _) = graph::with_added(&[], list);
        if list != node.observations {
            super::set_observations(user, workspace, &node, &list)?;
        }
    }
    if let Some(m) = &req.metadata {
        if metadata_of(&node).as_ref() != Some(m) {
            super::set_field(user, workspace, &node, "metadata", json!(m))?;
        }
    }
    Ok(node.id)
}

fn invalid_relation() -> NeotomaError {
    NeotomaError::validation(
        "Invalid relation payload. Provide fromEntityId/toEntityId or from/to names that exist.",
    )
}

/// One end of a relation, by id (preferred) or by name.
fn end(
    user: &Uuid,
    workspace: &str,
    id: Option<&str>,
    name: Option<&str>,
    which: &str,
) -> Result<Node, NeotomaError> {
    let (found, given) = match (id, name) {
        (Some(id), _) => (super::node_by_id(user, workspace, id)?, id),
        (None, Some(name)) => (super::node_named(user, workspace, name)?, name),
        (None, None) => return Err(invalid_relation()),
    };
    found.ok_or_else(|| {
        NeotomaError::new(
            ErrorCode::EntityNotFound,
            format!("{which} entity '{given}' not found."),
        )
        .with("entity", given)
    })
}

pub fn upsert_relation(
    user: Uuid,
    req: UpsertRelationRequest,
) -> Result<UpsertRelationResponse, NeotomaError> {
    if req.relation_type.trim().is_empty() || req.workspace_name.trim().is_empty() {
        return Err(invalid_relation());
    }
    let workspace = workspace_of(&req.workspace_name)?;
    super::lock_graph(&user)?;
    let from = end(
        &user,
        &workspace,
        req.from_entity_id.as_deref(),
        req.from.as_deref(),
        "Source",
    )?;
    let to = end(
        &user,
        &workspace,
        req.to_entity_id.as_deref(),
        req.to.as_deref(),
        "Target",
    )?;
    if from.id == to.id {
        return Err(NeotomaError::validation(
            "A relation joins two entities, not one to itself.",
        ));
    }
    super::assert_relation(
        &user,
        &workspace,
        &super::Assertion {
            from_id: &from.id,
            to_id: &to.id,
            relation_type: &req.relation_type,
            active: true,
            metadata: req.metadata.as_deref(),
            provenance: None,
        },
    )?;
    Ok(UpsertRelationResponse {
        success: true,
        relation_id: relationship_id(&user, graph::RELATIONSHIP_TYPE, &from.id, &to.id).to_string(),
        workspace: req.workspace_name,
        from_entity_id: from.id,
        to_entity_id: to.id,
        relation_type: req.relation_type,
    })
}

pub fn get_entity_relations(
    user: Uuid,
    req: GetEntityRelationsRequest,
) -> Result<GetEntityRelationsResponse, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let workspace = workspace_of(&req.workspace_name)?;
    let given = req
        .entity_id
        .as_deref()
        .or(req.entity_name.as_deref())
        .ok_or_else(|| NeotomaError::validation("Provide entityId or entityName."))?;
    let node = match &req.entity_id {
        Some(id) => super::node_by_id(&user, &workspace, id)?,
        None => super::node_named(&user, &workspace, given)?,
    }
    .ok_or_else(|| {
        NeotomaError::new(
            ErrorCode::EntityNotFound,
            format!(
                "Entity '{given}' not found in workspace '{}'.",
                req.workspace_name
            ),
        )
        .with("entity", given)
    })?;
    let relations = super::relations_of(&user, std::slice::from_ref(&node.id), true)?;
    Ok(GetEntityRelationsResponse {
        success: true,
        workspace_name: req.workspace_name,
        entity_id: node.id,
        relations: relations
            .into_iter()
            .map(|r| OutgoingRelation {
                id: r.relationship_id,
                relation_type: r.relation_type,
                to_entity_id: r.to_id,
                metadata: r.metadata,
            })
            .collect(),
    })
}
