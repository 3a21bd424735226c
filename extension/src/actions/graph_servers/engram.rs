//! The `engram` tool set: EngraMCP's send_memory, get_memory and
//! correct_memory (seed 004, `neotoma_core::actions::engram`), in the
//! workspace of the caller's context. A memory is a graph entity of type
//! `Memory` named by its content, rated by its writer's reliability hint;
//! corrections are Neotoma's contest, annotate, merge, split and reclassify.

use super::Node;
use crate::db::{self, Arg};
use neotoma_core::actions::engram::*;
use neotoma_core::catalog::ActionId;
use neotoma_core::confidence::Confidence;
use neotoma_core::memory_graph as graph;
use neotoma_core::reducer;
use neotoma_core::NeotomaError;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// The label memories are stored under.
const MEMORY: &str = "Memory";
/// Candidates a query reads before the confidence filter.
const CANDIDATES: i64 = 100;
/// Links of a causal chain, participants and sources per memory, at most.
const MAX_LINKS: usize = 50;
const MAX_PARTICIPANTS: usize = 20;

pub fn send_memory(user: Uuid, req: SendMemoryRequest) -> Result<SendMemoryResult, NeotomaError> {
    let content = req.content.trim();
    if content.is_empty() || content.len() > MAX_CONTENT {
        return Err(NeotomaError::invalid_field(
            "content",
            format!("content is 1 to {MAX_CONTENT} bytes of text"),
        ));
    }
    let confidence = hinted_confidence(req.confidence_hint.as_deref())
        .map_err(|m| NeotomaError::invalid_field("confidence_hint", m))?;
    let workspace = super::writing(&user)?;
    let known = super::node_named(&user, &workspace, content)?.is_some();
    let entity_type = super::graph_type(&user, MEMORY, &mut BTreeMap::new())?;
    let mut fields = Map::new();
    fields.insert("name".into(), json!(content));
    fields.insert(graph::LABEL.into(), json!(MEMORY));
    let source = req.source.unwrap_or_default();
    for (field, value) in [
        ("source_type", source.source_type),
        ("source_ref", source.reference),
        ("source_citation", source.citation),
        ("agent_id", req.agent_id),
    ] {
        if let Some(v) = value {
            fields.insert(field.into(), json!(v));
        }
    }
    let mut with = Map::new();
    with.insert("confidence".into(), json!(confidence.to_string()));
    let memory_id = super::store_node(&user, &workspace, &entity_type, fields, with)?;
    if !known && super::node_by_id(&user, &workspace, &memory_id)?.is_none() {
        // A memory deleted earlier, sent again: it comes back.
        super::call(
            ActionId::RestoreEntity,
            json!({"entity_id": memory_id, "workspace": workspace, "user_id": user.to_string(),
                   "reason": "sent again through send_memory"}),
        )?;
    }
    Ok(SendMemoryResult {
        memory_id,
        status: if known { "already_stored" } else { "stored" }.into(),
        error_code: None,
        message: None,
    })
}

fn check_request(req: &GetMemoryRequest) -> Result<Confidence, NeotomaError> {
    if req.query.trim().is_empty() || req.query.len() > 1000 {
        return Err(NeotomaError::invalid_field(
            "query",
            "query is 1 to 1000 bytes of text",
        ));
    }
    if !(0..=5).contains(&req.max_depth) {
        return Err(NeotomaError::invalid_field(
            "max_depth",
            "max_depth is 0 to 5",
        ));
    }
    if !(1..=100).contains(&req.limit) {
        return Err(NeotomaError::invalid_field("limit", "limit is 1 to 100"));
    }
    Confidence::parse(&req.min_confidence)
        .map_err(|m| NeotomaError::invalid_field("min_confidence", m))
}

pub fn get_memory(user: Uuid, req: GetMemoryRequest) -> Result<GetMemoryResult, NeotomaError> {
    let min = check_request(&req)?;
    let workspace = super::context_workspace(&user)?;
    let found = super::call(
        ActionId::RetrieveEntities,
        json!({"search": req.query, "limit": CANDIDATES, "workspace": workspace,
               "user_id": user.to_string()}),
    )?;
    let mut passing: Vec<(Node, Confidence)> = Vec::new();
    for e in found["entities"].as_array().into_iter().flatten() {
        let Some(id) = e["id"].as_str() else { continue };
        let Some(node) = super::node_by_id(&user, &workspace, id)? else {
            continue;
        };
        let rating = reducer::of_field(&node.name_provenance);
        if rating.passes(min) {
            passing.push((node, rating));
        }
    }
    let total_found = passing.len() as i64;
    passing.truncate(req.limit as usize);
    let full = !req.compact;
    let mut memories = Vec::new();
    let mut contradictions = Vec::new();
    for (node, confidence) in passing {
        if full && req.include_contradictions {
            contradictions.extend(contradictions_of(&user, &workspace, &node.id)?);
        }
        memories.push(MemoryEntry {
            sources: if full && req.include_sources {
                sources_of(&user, &node.id)?
            } else {
                Vec::new()
            },
            causal_chain: if full {
                chain_of(&user, &node.id, req.max_depth)?
            } else {
                Vec::new()
            },
            participants: if full {
                participants_of(&user, &workspace, &node.id)?
            } else {
                Vec::new()
            },
            id: node.id,
            content: node.name,
            memory_type: node.label,
            confidence,
        });
    }
    Ok(GetMemoryResult {
        meta: MetaInfo {
            query: req.query,
            total_found,
            returned: memories.len() as i64,
            max_depth: req.max_depth,
            min_confidence: min.to_string(),
            compact: req.compact,
            search_method: found["search_method"].as_str().map(str::to_string),
            workspace,
        },
        memories,
        contradictions,
        error_code: None,
        message: None,
    })
}

/// Where the memory's observations came from, each source once, oldest
/// first, with what the writer said of it.
fn sources_of(user: &Uuid, id: &str) -> Result<Vec<SourceEntry>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(x ORDER BY x->>'observed_at', x->>'source_id'), '[]') FROM (
           SELECT DISTINCT ON (o.source_id) jsonb_build_object(
                    'source_id', o.source_id::text, 'observed_at', neotoma._iso(o.observed_at),
                    'type', o.fields->>'source_type', 'ref', o.fields->>'source_ref',
                    'citation', o.fields->>'source_citation', 'agent_id', o.fields->>'agent_id') AS x
           FROM neotoma.observations o
           WHERE o.user_id = $1::uuid AND o.entity_id = $2 AND o.kind <> 'deletion' AND o.kind <> 'restoration'
           ORDER BY o.source_id, o.observed_at LIMIT 200) y",
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    let mut sources: Vec<SourceEntry> = db::from_json(v, "sources")?;
    sources.truncate(MAX_LINKS);
    Ok(sources)
}

/// The relations leading on from the memory, breadth first, up to
/// `max_depth` steps.
fn chain_of(user: &Uuid, id: &str, max_depth: i64) -> Result<Vec<CausalLink>, NeotomaError> {
    let mut links: Vec<(String, String, String, i64)> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::from([id.to_string()]);
    let mut frontier = vec![id.to_string()];
    for depth in 1..=max_depth {
        if frontier.is_empty() || links.len() >= MAX_LINKS {
            break;
        }
        let mut next = Vec::new();
        for r in super::relations_of(user, &frontier, true)? {
            if links.len() >= MAX_LINKS {
                break;
            }
            if seen.insert(r.to_id.clone()) {
                next.push(r.to_id.clone());
            }
            links.push((r.from_id, r.to_id, r.relation_type, depth));
        }
        frontier = next;
    }
    let ids: Vec<String> = links.iter().map(|l| l.1.clone()).collect();
    let names = super::names_of(user, &ids)?;
    Ok(links
        .into_iter()
        .map(|(from_id, to_id, relation, depth)| CausalLink {
            to_content: names.get(&to_id).cloned().unwrap_or_default(),
            from_id,
            to_id,
            relation,
            depth,
        })
        .collect())
}

/// The entities related to the memory directly (either way).
fn participants_of(
    user: &Uuid,
    workspace: &str,
    id: &str,
) -> Result<Vec<Participant>, NeotomaError> {
    let mut out: Vec<Participant> = Vec::new();
    for r in super::relations_of(user, &[id.to_string()], false)? {
        if out.len() >= MAX_PARTICIPANTS {
            break;
        }
        let other = if r.from_id == id {
            &r.to_id
        } else {
            &r.from_id
        };
        if out.iter().any(|p| &p.id == other) {
            continue;
        }
        if let Some(n) = super::node_by_id(user, workspace, other)? {
            out.push(Participant {
                id: n.id,
                name: n.name,
                entity_type: n.label,
                relation: r.relation_type,
            });
        }
    }
    Ok(out)
}

fn contradictions_of(
    user: &Uuid,
    workspace: &str,
    id: &str,
) -> Result<Vec<ContradictionEntry>, NeotomaError> {
    let listed = super::call(
        ActionId::ListContradictions,
        json!({"entity_id": id, "workspace": workspace, "user_id": user.to_string()}),
    )?;
    Ok(listed["contradictions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ContradictionEntry {
            memory_id: id.to_string(),
            field: c["field"].as_str().unwrap_or_default().to_string(),
            nature: "source_disagreement".into(),
            values: c["values"].as_array().cloned().unwrap_or_default(),
            chosen_value: c["chosen_value"].clone(),
            reason: c["reason"].as_str().unwrap_or_default().to_string(),
            resolved: c["resolved"].as_bool().unwrap_or(false),
        })
        .collect())
}

/// A text the payload must hold.
fn required<'a>(payload: &'a Map<String, Value>, field: &str) -> Result<&'a str, NeotomaError> {
    payload
        .get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            NeotomaError::invalid_field(
                &format!("payload.{field}"),
                format!("this correction's payload needs `{field}` (text)"),
            )
        })
}

pub fn correct_memory(
    user: Uuid,
    req: CorrectMemoryRequest,
) -> Result<CorrectMemoryResult, NeotomaError> {
    let workspace = super::writing(&user)?;
    let payload = req.payload.unwrap_or_default();
    let answer = |status: &str, details: Value| CorrectMemoryResult {
        target_id: req.target_id.clone(),
        action: req.action,
        status: status.into(),
        details,
        error_code: None,
        message: None,
    };
    let Some(node) = super::node_by_id(&user, &workspace, &req.target_id)? else {
        return Ok(answer("not_found", json!({})));
    };
    let who = user.to_string();
    let details = match req.action {
        CorrectionAction::Contest => {
            let observation = node.name_provenance["observation_id"]
                .as_str()
                .ok_or_else(|| {
                    NeotomaError::validation(format!("{} has no content to contest", node.id))
                })?;
            super::call(
                ActionId::Contest,
                json!({"observation_id": observation, "reason": required(&payload, "reason")?,
                       "workspace": workspace, "user_id": who}),
            )?
        }
        CorrectionAction::Annotate => super::call(
            ActionId::Annotate,
            json!({"entity_id": node.id, "note": required(&payload, "note")?,
                   "workspace": workspace, "user_id": who}),
        )?,
        CorrectionAction::MergeEntities => super::call(
            ActionId::MergeEntities,
            json!({"from_entity_id": required(&payload, "source_id")?, "to_entity_id": node.id,
                   "merge_reason": payload.get("reason"), "workspace": workspace, "user_id": who}),
        )?,
        CorrectionAction::SplitEntity => super::call(
            ActionId::SplitEntity,
            json!({"entity_id": node.id, "observation_ids": payload.get("observation_ids"),
                   "source_ids": payload.get("source_ids"), "to_entity_id": payload.get("to_entity_id"),
                   "reason": payload.get("reason"), "workspace": workspace, "user_id": who}),
        )?,
        CorrectionAction::Reclassify => {
            let label = required(&payload, "new_type")?;
            let entity_type = super::graph_type(&user, label, &mut BTreeMap::new())?;
            let reason = payload
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("reclassified through correct_memory");
            let done = super::call(
                ActionId::Reclassify,
                json!({"entity_id": node.id, "new_entity_type": entity_type, "reason": reason,
                       "workspace": workspace, "user_id": who}),
            )?;
            if let Some(moved) = done["entity_id"]
                .as_str()
                .and_then(|id| super::node_by_id(&user, &workspace, id).transpose())
            {
                super::set_field(&user, &workspace, &moved?, graph::LABEL, json!(label))?;
            }
            done
        }
    };
    Ok(answer("applied", details))
}
