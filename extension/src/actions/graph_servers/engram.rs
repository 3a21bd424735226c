//! The `engram` tool set: EngraMCP's send_memory, get_memory and
//! correct_memory (seed 004, `neotoma_core::actions::graph_servers::engram`), in the
//! workspace of the caller's context. A memory is a graph entity labelled
//! `Fact` named by its content, rated by its writer's reliability hint; its
//! id is `mem_<hex16>`, the entity's graph number (`super::ids`);
//! corrections are Neotoma's contest, annotate, merge, split and
//! reclassify. A refusal of readable arguments is a normal result, as the
//! original answers it (`status` `rejected` or `error`), and writes nothing.

use super::ids::{self, Kind};
use super::Node;
use crate::db::{self, Arg};
use neotoma_core::actions::graph_servers::engram::*;
use neotoma_core::catalog::ActionId;
use neotoma_core::confidence::Confidence;
use neotoma_core::memory_graph as graph;
use neotoma_core::reducer;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// The label new memories are stored under (the original's default type).
const FACT: &str = "Fact";
/// Candidates a query reads before the confidence filter.
const CANDIDATES: i64 = 100;
/// Links of a causal chain, participants and sources per memory, at most.
const MAX_LINKS: usize = 50;
const MAX_PARTICIPANTS: usize = 20;
/// The original's largest `max_depth`.
const MAX_DEPTH: i64 = 10;

/// Whether a failure is the caller's (a refusal, answered as a result)
/// rather than the server's (an error).
fn refusal(e: &NeotomaError) -> bool {
    (400..500).contains(&e.code.http_status())
}

/// Runs `body` as one subtransaction: a refusal undoes what it wrote and
/// becomes `refused(error)`; a server failure stays an error.
fn answered<T>(
    body: impl FnOnce() -> Result<T, NeotomaError>,
    refused: impl FnOnce(&NeotomaError) -> T,
) -> Result<T, NeotomaError> {
    match db::all_or_nothing(body) {
        Err(e) if refusal(&e) => Ok(refused(&e)),
        other => other,
    }
}

/// The memory id of each entity (numbered on first sight).
fn memory_ids(user: &Uuid, entity_ids: &[&str]) -> Result<BTreeMap<String, String>, NeotomaError> {
    Ok(ids::entities(user, entity_ids)?
        .into_iter()
        .map(|(entity, n)| (entity, memory_id(n)))
        .collect())
}

/// The entity a memory id (or an entity id) names.
fn entity_of(user: &Uuid, id: &str) -> Result<Option<String>, NeotomaError> {
    if neotoma_core::ids::is_entity_id(id) {
        return Ok(Some(id.to_string()));
    }
    let Some(n) = graph_id_of(id) else {
        return Ok(None);
    };
    // A number of something beyond the token's workspaces: no memory.
    match ids::resolve(user, Kind::Entity, n)? {
        Some((entity, _)) if !crate::actions::entities::beyond_limit(user, &entity)? => {
            Ok(Some(entity))
        }
        _ => Ok(None),
    }
}

pub fn send_memory(user: Uuid, req: SendMemoryRequest) -> Result<SendMemoryResult, NeotomaError> {
    answered(
        || send(&user, req),
        |e| SendMemoryResult {
            memory_id: String::new(),
            status: "rejected".into(),
            error_code: Some(error_code_of(e)),
            message: Some(e.message.clone()),
        },
    )
}

fn send(user: &Uuid, req: SendMemoryRequest) -> Result<SendMemoryResult, NeotomaError> {
    let content = req.content.trim();
    if content.is_empty() || content.len() > MAX_CONTENT {
        return Err(NeotomaError::invalid_field(
            "content",
            format!("content is 1 to {MAX_CONTENT} bytes of text"),
        ));
    }
    let confidence = hinted_confidence(req.confidence_hint.as_deref())
        .map_err(|m| NeotomaError::invalid_field("confidence_hint", m))?;
    let workspace = super::writing(user)?;
    let source = req.source.unwrap_or_default();
    let entity = store_memory(
        user,
        &workspace,
        content,
        &[
            ("source_type", source.source_type),
            ("source_ref", source.reference),
            ("source_citation", source.citation),
            ("agent_id", req.agent_id),
        ],
        confidence,
    )?;
    Ok(SendMemoryResult {
        memory_id: memory_ids(user, &[&entity])?
            .remove(&entity)
            .unwrap_or_default(),
        status: "accepted".into(),
        error_code: None,
        message: None,
    })
}

/// Stores a memory of `content` (its source fields given), rated
/// `confidence`; a memory deleted earlier comes back. Its entity id.
fn store_memory(
    user: &Uuid,
    workspace: &str,
    content: &str,
    source: &[(&str, Option<String>)],
    confidence: Confidence,
) -> Result<String, NeotomaError> {
    let known = super::node_named(user, workspace, content)?.is_some();
    let entity_type = super::graph_type(user, FACT, &mut BTreeMap::new())?;
    let mut fields = Map::new();
    fields.insert("name".into(), json!(content));
    fields.insert(graph::LABEL.into(), json!(FACT));
    for (field, value) in source {
        if let Some(v) = value {
            fields.insert(field.to_string(), json!(v));
        }
    }
    let mut with = Map::new();
    with.insert("confidence".into(), json!(confidence.to_string()));
    let entity = super::store_node(user, workspace, &entity_type, fields, with)?;
    if !known && super::node_by_id(user, workspace, &entity)?.is_none() {
        // A memory deleted earlier, sent again: it comes back.
        super::call(
            ActionId::RestoreEntity,
            json!({"entity_id": entity, "workspace": workspace, "user_id": user.to_string(),
                   "reason": "sent again through send_memory"}),
        )?;
    }
    Ok(entity)
}

fn check_request(req: &GetMemoryRequest) -> Result<Confidence, NeotomaError> {
    if req.query.trim().is_empty() || req.query.len() > 1000 {
        return Err(NeotomaError::invalid_field(
            "query",
            "query is 1 to 1000 bytes of text",
        ));
    }
    if !(0..=MAX_DEPTH).contains(&req.max_depth) {
        return Err(NeotomaError::invalid_field(
            "max_depth",
            format!("max_depth is 0 to {MAX_DEPTH}"),
        ));
    }
    if !(1..=100).contains(&req.limit) {
        return Err(NeotomaError::invalid_field("limit", "limit is 1 to 100"));
    }
    Confidence::parse(&req.min_confidence)
        .map_err(|m| NeotomaError::invalid_field("min_confidence", m))
}

fn meta(
    req: &GetMemoryRequest,
    total_found: i64,
    returned: i64,
    workspace: String,
    method: Option<String>,
) -> MetaInfo {
    MetaInfo {
        query: req.query.clone(),
        total_found,
        returned,
        truncated: total_found > returned,
        max_depth_used: req.max_depth,
        min_confidence_applied: req.min_confidence.clone(),
        retrieval_ms: None,
        working_memory_hits: 0,
        graph_hits: total_found,
        max_depth: req.max_depth,
        min_confidence: req.min_confidence.clone(),
        compact: req.compact,
        search_method: method,
        workspace,
    }
}

pub fn get_memory(user: Uuid, req: GetMemoryRequest) -> Result<GetMemoryResult, NeotomaError> {
    let failed = |e: &NeotomaError, req: &GetMemoryRequest| GetMemoryResult {
        status: "error".into(),
        memories: Vec::new(),
        contradictions: Vec::new(),
        meta: meta(req, 0, 0, String::new(), None),
        error_code: Some(error_code_of(e)),
        message: Some(e.message.clone()),
    };
    if let Err(e) = check_request(&req) {
        return Ok(failed(&e, &req));
    }
    match retrieve(&user, &req) {
        Err(e) if refusal(&e) => Ok(failed(&e, &req)),
        other => other,
    }
}

fn retrieve(user: &Uuid, req: &GetMemoryRequest) -> Result<GetMemoryResult, NeotomaError> {
    let _at = super::valid_at::answer_at(&req.valid_at)?;
    let min = check_request(req)?;
    let workspace = super::context_workspace(user)?;
    let found = super::call(
        ActionId::RetrieveEntities,
        json!({"search": req.query, "limit": CANDIDATES, "workspace": workspace,
               "user_id": user.to_string()}),
    )?;
    let mut passing: Vec<(Node, Confidence)> = Vec::new();
    for e in found["entities"].as_array().into_iter().flatten() {
        let Some(id) = e["id"].as_str() else { continue };
        let Some(node) = super::node_by_id(user, &workspace, id)? else {
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
    let mut entries = Vec::new();
    let mut contradictions = Vec::new();
    for (node, confidence) in passing {
        if full && req.include_contradictions {
            contradictions.extend(contradictions_of(user, &workspace, &node.id)?);
        }
        entries.push((
            MemoryEntry {
                sources: if full && req.include_sources {
                    sources_of(user, &node.id)?
                } else {
                    Vec::new()
                },
                causal_chain: if full {
                    chain_of(user, &node.id, req.max_depth)?
                } else {
                    Vec::new()
                },
                participants: if full {
                    participants_of(user, &workspace, &node.id)?
                } else {
                    Vec::new()
                },
                properties: properties_of(user, &node)?,
                id: node.id.clone(),
                content: node.name,
                memory_type: node.label,
                dynamic_type: None,
                confidence,
            },
            node.id,
        ));
    }
    // Every entity the answer names, by its memory id.
    let mut named: BTreeSet<&str> = BTreeSet::new();
    for (m, _) in &entries {
        named.insert(&m.id);
        named.extend(
            m.causal_chain
                .iter()
                .flat_map(|l| [l.from_id.as_str(), l.to_id.as_str()]),
        );
        named.extend(m.participants.iter().map(|p| p.id.as_str()));
    }
    named.extend(contradictions.iter().map(|c| c.memory_id.as_str()));
    let ids = memory_ids(user, &named.into_iter().collect::<Vec<_>>())?;
    let shown = |id: &str| ids.get(id).cloned().unwrap_or_else(|| id.to_string());
    let memories: Vec<MemoryEntry> = entries
        .into_iter()
        .map(|(mut m, _)| {
            m.id = shown(&m.id);
            for l in &mut m.causal_chain {
                l.from_id = shown(&l.from_id);
                l.to_id = shown(&l.to_id);
            }
            for p in &mut m.participants {
                p.id = shown(&p.id);
            }
            m
        })
        .collect();
    for c in &mut contradictions {
        c.memory_id = shown(&c.memory_id);
    }
    Ok(GetMemoryResult {
        status: "ok".into(),
        meta: meta(
            req,
            total_found,
            memories.len() as i64,
            workspace,
            found["search_method"].as_str().map(str::to_string),
        ),
        memories,
        contradictions,
        error_code: None,
        message: None,
    })
}

/// What corrections marked on a memory, as the original shows them in
/// `properties`: the latest contest of its content (`status` `contested`,
/// `contest_reason`, `contested_at`) and its notes (`annotations`), times
/// in seconds since the epoch.
fn properties_of(user: &Uuid, node: &Node) -> Result<Map<String, Value>, NeotomaError> {
    let observation = node.name_provenance["observation_id"]
        .as_str()
        .unwrap_or_default();
    let v = db::json(
        "SELECT jsonb_strip_nulls(jsonb_build_object(
           'contest', (SELECT jsonb_build_object('reason', c.reason,
                                                 'at', extract(epoch FROM c.created_at)::float8)
                       FROM neotoma.observation_contests c
                       WHERE c.user_id = $1::uuid AND c.observation_id = ANY($3)
                       ORDER BY c.created_at DESC, c.id LIMIT 1),
           'annotations', (SELECT jsonb_agg(jsonb_build_object('note', a.note,
                                                               'created_at', extract(epoch FROM a.created_at)::float8)
                                            ORDER BY a.created_at, a.id)
                           FROM neotoma.annotations a WHERE a.user_id = $1::uuid AND a.entity_id = $2)))",
        // The observation as uuid[] (none when the name has no provenance):
        // a cast of the column would read every contest of the user.
        &[
            Arg::uuid(user),
            Arg::Text(&node.id),
            Arg::uuid_texts(&[observation.to_string()]),
        ],
    )?;
    let mut properties = Map::new();
    if let Some(c) = v.get("contest") {
        properties.insert("status".into(), json!("contested"));
        properties.insert("contest_reason".into(), c["reason"].clone());
        properties.insert("contested_at".into(), c["at"].clone());
    }
    if let Some(a) = v.get("annotations") {
        properties.insert("annotations".into(), a.clone());
    }
    Ok(properties)
}

/// Where the memory's observations (and those of the memories merged into
/// it) came from, as their writers said (type, ref, citation), each source
/// once, oldest first; none when no writer said where it came from.
fn sources_of(user: &Uuid, id: &str) -> Result<Vec<SourceEntry>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(x ORDER BY x->>'observed_at', x->>'source_id'), '[]') FROM (
           SELECT DISTINCT ON (o.source_id) jsonb_build_object(
                    'source_id', o.source_id::text, 'observed_at', neotoma._iso(o.observed_at),
                    'type', o.fields->>'source_type', 'ref', o.fields->>'source_ref',
                    'citation', o.fields->>'source_citation', 'agent_id', o.fields->>'agent_id') AS x
           FROM neotoma.observations o
           WHERE o.user_id = $1::uuid AND o.kind <> 'deletion' AND o.kind <> 'restoration'
             -- (One IN of a UNION, not an OR: under row level security a
             -- subquery inside OR is no index condition.)
             AND o.entity_id IN (SELECT $2::text UNION ALL SELECT e.id FROM neotoma.entities e
                                 WHERE e.user_id = $1::uuid AND e.merged_into = $2)
             AND (o.fields ? 'source_type' OR o.fields ? 'source_ref' OR o.fields ? 'source_citation')
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
    let (target_id, action) = (req.target_id.clone(), req.action.clone());
    answered(
        || correct(&user, req),
        |e| CorrectMemoryResult {
            target_id,
            action,
            status: "rejected".into(),
            details: json!({}),
            error_code: Some(error_code_of(e)),
            message: Some(e.message.clone()),
        },
    )
}

fn correct(user: &Uuid, req: CorrectMemoryRequest) -> Result<CorrectMemoryResult, NeotomaError> {
    let action = CorrectionAction::parse(&req.action).ok_or_else(|| {
        NeotomaError::invalid_field(
            "action",
            format!(
                "action is one of contest, annotate, merge_entities, split_entity, reclassify, not `{}`",
                req.action
            ),
        )
    })?;
    let workspace = super::writing(user)?;
    let payload = req.payload.unwrap_or_default();
    let answer = |status: &str, details: Value| CorrectMemoryResult {
        target_id: req.target_id.clone(),
        action: req.action.clone(),
        status: status.into(),
        details,
        error_code: None,
        message: None,
    };
    let found = match entity_of(user, &req.target_id)? {
        Some(entity) => super::node_by_id(user, &workspace, &entity)?,
        None => None,
    };
    let Some(node) = found else {
        return Ok(answer("not_found", json!({})));
    };
    let who = user.to_string();
    let details = match action {
        CorrectionAction::Contest => {
            let observation = node.name_provenance["observation_id"]
                .as_str()
                .ok_or_else(|| {
                    NeotomaError::validation(format!("{} has no content to contest", req.target_id))
                })?;
            let before = reducer::of_field(&node.name_provenance);
            let done = super::call(
                ActionId::Contest,
                json!({"observation_id": observation, "reason": required(&payload, "reason")?,
                       "workspace": workspace, "user_id": who}),
            )?;
            json!({"reason": required(&payload, "reason")?, "old_confidence": before.to_string(),
                   "new_confidence": done["confidence"], "contest": done})
        }
        CorrectionAction::Annotate => {
            let note = required(&payload, "note")?;
            let done = super::call(
                ActionId::Annotate,
                json!({"entity_id": node.id, "note": note, "workspace": workspace, "user_id": who}),
            )?;
            let count = db::json(
                "SELECT to_jsonb(count(*)) FROM neotoma.annotations WHERE user_id = $1::uuid AND entity_id = $2",
                &[Arg::uuid(user), Arg::Text(&node.id)],
            )?;
            json!({"note": note, "annotation_count": count, "annotation": done})
        }
        CorrectionAction::MergeEntities => {
            merge(user, &workspace, &node, &req.target_id, &payload)?
        }
        CorrectionAction::SplitEntity => split(user, &workspace, &node, &payload)?,
        CorrectionAction::Reclassify => {
            let label = required(&payload, "new_type")?;
            let entity_type = super::graph_type(user, label, &mut BTreeMap::new())?;
            let reason = payload
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("reclassified through correct_memory");
            let mut done = super::call(
                ActionId::Reclassify,
                json!({"entity_id": node.id, "new_entity_type": entity_type, "reason": reason,
                       "workspace": workspace, "user_id": who}),
            )?;
            if let Some(moved) = done["entity_id"].as_str().map(str::to_string) {
                // The memory keeps its id in its new type.
                ids::carry(user, &node.id, &moved)?;
                if let Some(n) = super::node_by_id(user, &workspace, &moved)? {
                    super::set_field(user, &workspace, &n, graph::LABEL, json!(label))?;
                }
            }
            done["old_type"] = json!(node.label);
            done["new_type"] = json!(label);
            done
        }
    };
    Ok(answer("applied", details))
}

/// `merge_with` (or `source_id`, as before): that memory is merged into the
/// target, which keeps its id; the other's content and sources are the
/// target's from then on.
fn merge(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    target_id: &str,
    payload: &Map<String, Value>,
) -> Result<Value, NeotomaError> {
    let other_id = payload
        .get("merge_with")
        .or_else(|| payload.get("source_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            NeotomaError::invalid_field(
                "payload.merge_with",
                "this correction's payload needs `merge_with` (a memory id)",
            )
        })?;
    let Some(other) = entity_of(user, other_id)? else {
        return Err(
            NeotomaError::new(ErrorCode::NotFound, format!("no memory {other_id}"))
                .with("field", "payload.merge_with"),
        );
    };
    if other == node.id {
        return Err(NeotomaError::new(
            ErrorCode::ValidationError,
            "merge_with must be different from target_id.",
        )
        .with("field", "payload.merge_with")
        .with("error_code", "invalid_merge_target"));
    }
    let done = super::call(
        ActionId::MergeEntities,
        json!({"from_entity_id": other, "to_entity_id": node.id, "merge_reason": payload.get("reason"),
               "workspace": workspace, "user_id": user.to_string()}),
    )?;
    let confidence = super::node_by_id(user, workspace, &node.id)?
        .map(|n| reducer::of_field(&n.name_provenance).to_string());
    Ok(
        json!({"merged_into": target_id, "merged_from": other_id, "confidence": confidence, "merge": done}),
    )
}

/// `split_into: [content, …]`: each becomes a memory with the target's
/// first source and reliability (uncorroborated), and the target is
/// deleted. Or, as before, `observation_ids` / `source_ids`: those move to
/// another entity (Neotoma's split_entity).
fn split(
    user: &Uuid,
    workspace: &str,
    node: &Node,
    payload: &Map<String, Value>,
) -> Result<Value, NeotomaError> {
    let who = user.to_string();
    let Some(parts) = payload.get("split_into") else {
        return super::call(
            ActionId::SplitEntity,
            json!({"entity_id": node.id, "observation_ids": payload.get("observation_ids"),
                   "source_ids": payload.get("source_ids"), "to_entity_id": payload.get("to_entity_id"),
                   "reason": payload.get("reason"), "workspace": workspace, "user_id": who}),
        );
    };
    let parts: Vec<&str> = parts
        .as_array()
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .ok_or_else(|| {
            NeotomaError::invalid_field(
                "payload.split_into",
                "split_into is a list of at least one text",
            )
        })?;
    let first = sources_of(user, &node.id)?.into_iter().next();
    let letter = reducer::of_field(&node.name_provenance).to_string();
    let confidence = hinted_confidence(letter.get(..1))
        .map_err(|m| NeotomaError::invalid_field("payload.split_into", m))?;
    let agent = node
        .snapshot
        .get("agent_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut created = Vec::new();
    for content in &parts {
        let content = content.trim();
        if content.is_empty() || content.len() > MAX_CONTENT {
            return Err(NeotomaError::invalid_field(
                "payload.split_into",
                format!("each part is 1 to {MAX_CONTENT} bytes of text"),
            ));
        }
        let source = first.clone().unwrap_or_else(|| SourceEntry {
            source_id: String::new(),
            source_type: None,
            reference: None,
            citation: None,
            agent_id: None,
            observed_at: String::new(),
        });
        created.push(store_memory(
            user,
            workspace,
            content,
            &[
                ("source_type", source.source_type),
                ("source_ref", source.reference),
                ("source_citation", source.citation),
                ("agent_id", agent.clone()),
            ],
            confidence,
        )?);
    }
    super::call(
        ActionId::DeleteEntity,
        json!({"entity_id": node.id, "reason": "split through correct_memory",
               "workspace": workspace, "user_id": who}),
    )?;
    let ids = memory_ids(
        user,
        &created.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let created_ids: Vec<&String> = created.iter().filter_map(|e| ids.get(e)).collect();
    Ok(json!({"split_into": parts, "created_memory_ids": created_ids}))
}
