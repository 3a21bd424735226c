//! `list_entity_types`: the schema registry as agents see it.

use crate::registry;
use neotoma_core::actions::types::*;
use neotoma_core::schema::IdentityRule;
use neotoma_core::typesearch;
use neotoma_core::NeotomaError;
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use uuid::Uuid;

pub fn list_entity_types(
    user: Option<Uuid>,
    req: ListEntityTypesRequest,
) -> Result<ListEntityTypesResponse, NeotomaError> {
    let keyword = req
        .keyword
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty());
    if keyword.is_some_and(|k| k.len() > 200) {
        return Err(NeotomaError::invalid_field(
            "keyword",
            "keyword must be at most 200 characters",
        ));
    }
    let one = req
        .entity_type
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let full = one.is_some() || req.detail.unwrap_or(false);
    let active = registry::all_active(user.unwrap_or(Uuid::nil()))?;
    if let Some(t) = one {
        if !active.contains_key(t) {
            return Err(NeotomaError::new(
                neotoma_core::ErrorCode::SchemaNotFound,
                format!("no entity type `{t}` (list_entity_types lists them)"),
            )
            .with("field", "entity_type")
            .with("entity_type", t));
        }
    }
    let entries: Vec<&registry::Active> = active
        .values()
        .filter(|a| one.is_none_or(|t| a.schema.entity_type == t))
        .collect();
    let schemas: Vec<_> = entries.iter().map(|a| (*a.schema).clone()).collect();
    // (index, score) in answer order, and how they were found.
    let (picked, how): (Vec<(usize, Option<f64>)>, Option<typesearch::MatchType>) = match keyword {
        None => ((0..entries.len()).map(|i| (i, None)).collect(), None),
        Some(k) => {
            let (mut ranked, mut how) = typesearch::rank(&schemas, k);
            if !typesearch::keyword_found(&ranked, how) {
                let by_meaning = by_vector(&schemas, k);
                if !by_meaning.is_empty() {
                    (ranked, how) = (by_meaning, typesearch::MatchType::Vector);
                }
            }
            (
                ranked.into_iter().map(|(i, s)| (i, Some(s))).collect(),
                Some(how),
            )
        }
    };
    let method = match how {
        None => "all",
        Some(typesearch::MatchType::Keyword) => "keyword_exact",
        Some(typesearch::MatchType::Similarity) => "similarity",
        Some(typesearch::MatchType::Vector) => "vector_semantic",
    };
    let entity_types: Vec<EntityTypeOut> = picked
        .into_iter()
        .map(|(i, score)| {
            let a = entries[i];
            let s = &a.schema;
            let summary: Map<String, Value> = s
                .fields
                .iter()
                .map(|(k, d)| {
                    // Fields without a policy fold by last_write.
                    let policy = s
                        .merge_policies
                        .get(k)
                        .map_or_else(|| json!({"strategy": "last_write"}), |p| json!(p));
                    (
                        k.clone(),
                        json!({"type": d.field_type.as_str(), "required": d.required, "merge_policy": policy}),
                    )
                })
                .collect();
            EntityTypeOut {
                entity_type: s.entity_type.clone(),
                description: if full {
                    s.description.clone()
                } else {
                    one_line(&s.entity_type, &s.description)
                },
                identity_fields: s
                    .identity
                    .iter()
                    .map(|r| match r {
                        // A composite as one line: `a+b`.
                        IdentityRule::Composite { .. } if !full => json!(r.fields().join("+")),
                        _ => json!(r),
                    })
                    .collect(),
                schema_version: full.then(|| s.schema_version.clone()),
                field_names: full.then(|| s.fields.keys().cloned().collect()),
                field_summary: full.then_some(summary),
                scope: full.then(|| a.scope.to_string()),
                similarity_score: score,
                match_type: how.map(|h| h.as_str().to_string()),
            }
        })
        .collect();
    Ok(ListEntityTypesResponse {
        total: entity_types.len() as i64,
        entity_types,
        keyword: keyword.map(str::to_string),
        search_method: method.to_string(),
    })
}

/// A type's description as the compact catalogue shows it: its first
/// sentence, without an opening clause that only names the type ("A
/// person: an individual human…" → "An individual human…").
fn one_line(entity_type: &str, description: &str) -> String {
    let line = description.lines().next().unwrap_or_default().trim();
    let line = match line.find(". ") {
        Some(end) => &line[..=end],
        None => line,
    };
    let named = entity_type.replace('_', " ");
    match line.split_once(": ") {
        Some((head, rest)) if head.len() < 45 && head.to_lowercase().contains(&named) => {
            let mut chars = rest.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        _ => line.to_string(),
    }
}

/// Most type texts whose embeddings a backend keeps (then it starts over).
const TYPE_VECTORS_KEPT: usize = 4096;

/// Embeddings by (model, text); None when the model knows no word of it.
type Embeddings = HashMap<(String, String), Option<Vec<f32>>>;

thread_local! {
    /// The embeddings of types' texts, kept per backend: a type's text
    /// changes only with its schema (then it is another key), so each is
    /// computed once (about 50 µs a type), not on every call.
    static TYPE_VECTORS: RefCell<Embeddings> = RefCell::new(HashMap::new());
}

/// The types near `keyword` in meaning, by the server's embedding model
/// (none without one).
fn by_vector(schemas: &[neotoma_core::schema::EntitySchema], keyword: &str) -> Vec<(usize, f64)> {
    crate::embeddings::with_model(|m| {
        let Some(query) = m.embed(keyword) else {
            return vec![];
        };
        let similarities: Vec<f64> = TYPE_VECTORS.with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.len() + schemas.len() > TYPE_VECTORS_KEPT {
                kept.clear();
            }
            schemas
                .iter()
                .map(|s| {
                    let text = typesearch::type_text(s);
                    kept.entry((m.name().to_string(), text))
                        .or_insert_with_key(|(_, text)| m.embed(text))
                        .as_ref()
                        .map_or(0.0, |t| neotoma_embed::cosine(&query, t))
                })
                .collect()
        });
        typesearch::rank_by_vector(schemas, &similarities)
    })
    .unwrap_or_default()
}
