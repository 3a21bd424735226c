//! `list_entity_types`: the schema registry as agents see it.

use crate::registry;
use neotoma_core::actions::entities::*;
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
    let active = registry::all_active(user.unwrap_or(Uuid::nil()))?;
    let entries: Vec<&registry::Active> = active.values().collect();
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
                schema_version: s.schema_version.clone(),
                description: s.description.clone(),
                field_names: s.fields.keys().cloned().collect(),
                field_summary: summary,
                identity_fields: s.identity.iter().map(|r| json!(r)).collect(),
                scope: a.scope.to_string(),
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
