//! Ranking entity types for `list_entity_types { keyword }`.
//!
//! First by keyword: the keyword's words are looked for in type names and
//! field names (seed 000 §3.2). When nothing matches well (score < 3, as the
//! specification puts it), types are ranked by meaning: the cosine
//! similarity of the keyword's embedding to each type's ([`type_text`]:
//! name, description, fields), computed by the caller's model
//! ([`rank_by_vector`]), so "payment" finds `transaction` and `invoice`.
//! Without a model, or when no type is near enough, a fuzzy fallback ranks
//! types by string similarity (Sørensen–Dice over character bigrams) between
//! the keyword's words and the words of names, fields and descriptions, so a
//! typo like "invoce" still finds `invoice`. All are deterministic: same
//! keyword, same schemas, same answer.

use crate::schema::EntitySchema;

/// How a type was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    Keyword,
    Similarity,
    Vector,
}

impl MatchType {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchType::Keyword => "keyword",
            MatchType::Similarity => "similarity",
            MatchType::Vector => "vector",
        }
    }
}

/// A keyword score at or above this is a good match.
pub const GOOD_KEYWORD_SCORE: f64 = 3.0;
/// Least similarity the fallback keeps.
pub const MIN_SIMILARITY: f64 = 0.5;
/// Least cosine similarity of embeddings the vector fallback keeps.
pub const MIN_VECTOR_SIMILARITY: f64 = 0.25;

fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn keyword_score(schema: &EntitySchema, keyword: &str, tokens: &[String]) -> f64 {
    let name = schema.entity_type.to_lowercase();
    let mut score = if name == keyword { 10.0 } else { 0.0 };
    for t in tokens {
        let mut best: f64 = 0.0;
        if name.contains(t.as_str()) {
            best = best.max(5.0);
        }
        for f in schema.fields.keys() {
            if f == t {
                best = best.max(4.0);
            } else if f.contains(t.as_str()) {
                best = best.max(2.0);
            }
        }
        score += best;
    }
    score
}

/// The text a type's embedding is made of: its name in words, its
/// description, its field names in words.
pub fn type_text(schema: &EntitySchema) -> String {
    let fields: Vec<String> = schema.fields.keys().map(|f| f.replace('_', " ")).collect();
    format!(
        "{}. {}. fields: {}",
        schema.entity_type.replace('_', " "),
        schema.description.trim(),
        fields.join(", ")
    )
}

/// Ranks types by meaning: `similarities[i]` is the cosine similarity of
/// the keyword's embedding to `type_text(&schemas[i])`'s. Those at
/// [`MIN_VECTOR_SIMILARITY`] or above, best first, ties by type name.
pub fn rank_by_vector(schemas: &[EntitySchema], similarities: &[f64]) -> Vec<(usize, f64)> {
    let mut out: Vec<(usize, f64)> = similarities
        .iter()
        .enumerate()
        .filter(|(_, s)| **s >= MIN_VECTOR_SIMILARITY)
        .map(|(i, s)| (i, *s))
        .collect();
    sorted(schemas, &mut out);
    out
}

fn sorted(schemas: &[EntitySchema], out: &mut [(usize, f64)]) {
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| schemas[a.0].entity_type.cmp(&schemas[b.0].entity_type))
    });
    for (_, s) in out.iter_mut() {
        *s = (*s * 1000.0).round() / 1000.0;
    }
}

/// Whether a keyword matched well enough by [`rank`] needs no fallback.
pub fn keyword_found(ranked: &[(usize, f64)], how: MatchType) -> bool {
    how == MatchType::Keyword && !ranked.is_empty()
}

fn similarity(schema: &EntitySchema, tokens: &[String]) -> f64 {
    let mut vocabulary = words(&schema.entity_type.replace('_', " "));
    vocabulary.push(schema.entity_type.to_lowercase());
    vocabulary.extend(
        schema
            .fields
            .keys()
            .flat_map(|f| words(&f.replace('_', " "))),
    );
    vocabulary.extend(
        words(&schema.description)
            .into_iter()
            .filter(|w| w.len() > 3),
    );
    let per_token: Vec<f64> = tokens
        .iter()
        .map(|t| {
            vocabulary
                .iter()
                .map(|w| strsim::sorensen_dice(t, w))
                .fold(0.0, f64::max)
        })
        .collect();
    per_token.iter().sum::<f64>() / per_token.len().max(1) as f64
}

/// Ranks `schemas` for `keyword`: (index into schemas, score in 0..=1), best
/// first, ties by type name, and how they were found (keyword, or similarity
/// when no keyword match was good enough).
pub fn rank(schemas: &[EntitySchema], keyword: &str) -> (Vec<(usize, f64)>, MatchType) {
    let keyword = keyword.trim().to_lowercase();
    let tokens = words(&keyword);
    if tokens.is_empty() {
        return (vec![], MatchType::Keyword);
    }
    let scored: Vec<(usize, f64)> = schemas
        .iter()
        .enumerate()
        .map(|(i, s)| (i, keyword_score(s, &keyword, &tokens)))
        .filter(|(_, s)| *s >= GOOD_KEYWORD_SCORE)
        .collect();
    let (mut out, kind): (Vec<(usize, f64)>, MatchType) = if scored.is_empty() {
        let sims = schemas
            .iter()
            .enumerate()
            .map(|(i, s)| (i, similarity(s, &tokens)))
            .filter(|(_, s)| *s >= MIN_SIMILARITY)
            .collect();
        (sims, MatchType::Similarity)
    } else {
        let max = scored.iter().map(|(_, s)| *s).fold(0.0, f64::max);
        (
            scored.into_iter().map(|(i, s)| (i, s / max)).collect(),
            MatchType::Keyword,
        )
    };
    sorted(schemas, &mut out);
    (out, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::builtin_schemas;

    fn names(keyword: &str) -> Vec<(String, MatchType)> {
        let s = builtin_schemas();
        let (ranked, how) = rank(&s, keyword);
        ranked
            .into_iter()
            .map(|(i, _)| (s[i].entity_type.clone(), how))
            .collect()
    }

    #[test]
    fn exact_type_name_comes_first() {
        let r = names("invoice");
        assert_eq!(r[0], ("invoice".to_string(), MatchType::Keyword));
    }

    #[test]
    fn keywords_match_names_and_fields_only() {
        // "bill" is in invoice's description, not its name or fields: the
        // keyword does not find it (the vector fallback does, by meaning).
        let s = builtin_schemas();
        let (ranked, how) = rank(&s, "bill");
        assert!(!keyword_found(&ranked, how));
        assert!(keyword_found(&rank(&s, "invoice").0, MatchType::Keyword));
    }

    #[test]
    fn vectors_rank_by_similarity() {
        let s = builtin_schemas();
        let mut sims = vec![0.0; s.len()];
        sims[0] = 0.3;
        sims[1] = 0.9;
        sims[2] = 0.2;
        assert_eq!(rank_by_vector(&s, &sims), vec![(1, 0.9), (0, 0.3)]);
        assert!(type_text(&s[1]).starts_with(&s[1].entity_type.replace('_', " ")));
    }

    #[test]
    fn field_names_match() {
        let r = names("email");
        for t in ["person", "company", "contact"] {
            assert!(
                r.iter().any(|(n, _)| n == t),
                "{t} has an email field: {r:?}"
            );
        }
    }

    #[test]
    fn typos_fall_back_to_similarity() {
        let r = names("invoce");
        assert_eq!(r[0], ("invoice".to_string(), MatchType::Similarity));
        let (none, how) = rank(&builtin_schemas(), "zzzqqq");
        assert!(none.is_empty());
        assert_eq!(how, MatchType::Similarity);
    }

    #[test]
    fn ranking_is_deterministic_and_scores_are_in_range() {
        let s = builtin_schemas();
        let (a, _) = rank(&s, "date");
        assert_eq!(a, rank(&s, "date").0);
        assert!(a.iter().all(|(_, score)| *score > 0.0 && *score <= 1.0));
        assert!(rank(&s, "   ").0.is_empty());
    }
}
