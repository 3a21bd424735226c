//! Ranking entity types for `list_entity_types { keyword }`.
//!
//! First by keyword: the keyword's words are looked for in type names, field
//! names and description words. When nothing matches well (score < 3, as the
//! specification puts it), a fuzzy fallback ranks types by string similarity
//! (Sørensen–Dice over character bigrams) between the keyword's words and the
//! words of names, fields and descriptions, so a typo like "invoce" still finds
//! `invoice`. Both are deterministic: same keyword, same schemas, same answer.

use crate::schema::EntitySchema;

/// How a type was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    Keyword,
    Similarity,
}

impl MatchType {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchType::Keyword => "keyword",
            MatchType::Similarity => "similarity",
        }
    }
}

/// A keyword score at or above this is a good match.
pub const GOOD_KEYWORD_SCORE: f64 = 3.0;
/// Least similarity the fallback keeps.
pub const MIN_SIMILARITY: f64 = 0.5;

fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn keyword_score(schema: &EntitySchema, keyword: &str, tokens: &[String]) -> f64 {
    let name = schema.entity_type.to_lowercase();
    let description = words(&schema.description);
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
        if description
            .iter()
            .any(|w| w == t || (t.len() >= 4 && w.starts_with(t.as_str())))
        {
            best = best.max(3.0);
        }
        score += best;
    }
    score
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
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| schemas[a.0].entity_type.cmp(&schemas[b.0].entity_type))
    });
    let out = out
        .into_iter()
        .map(|(i, s)| (i, (s * 1000.0).round() / 1000.0))
        .collect();
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
    fn descriptions_carry_synonyms() {
        let r = names("bill");
        assert_eq!(r[0].0, "invoice");
        assert!(names("payment").iter().any(|(n, _)| n == "transaction"));
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
