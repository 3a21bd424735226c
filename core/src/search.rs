//! Search of a user's entities (`retrieve_entities` with `search`): the
//! query's checks and forms, and which mode answers. Pure: no database.
//!
//! Lexical search matches the query's words against each snapshot's
//! full-text vector (`entity_snapshots.search_vector`: every string and
//! number, as `simple` words and as `english` stems, names weighted) and its
//! trigrams against the name's (`entity_snapshots.name_trigrams`, pg_trgm's
//! trigrams, so typos are forgiven; one row each in
//! `entity_name_trigrams`, the index that finds the names sharing enough).

use crate::error::{NeotomaError, Result};
use crate::similarity::trigrams;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Least trigram similarity for a name to match.
pub const NAME_THRESHOLD: f64 = 0.3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Hybrid when embeddings exist, else lexical.
    #[default]
    Auto,
    Lexical,
    Semantic,
    Hybrid,
}

/// The mode that answers a request, and why it differs from the one asked
/// for (when it does). No embeddings exist yet: every mode answers
/// lexically, and says so when another was asked for.
pub fn answering_mode(asked: SearchMode) -> (&'static str, Option<String>) {
    match asked {
        SearchMode::Auto | SearchMode::Lexical => ("lexical", None),
        SearchMode::Semantic | SearchMode::Hybrid => (
            "lexical",
            Some(
                "no embeddings are configured for this database: answered by lexical search"
                    .to_string(),
            ),
        ),
    }
}

/// The query, trimmed; refused when empty or too long.
pub fn check_query(search: &str) -> Result<&str> {
    let q = search.trim();
    if q.is_empty() || q.chars().count() > MAX_QUERY_CHARS {
        return Err(NeotomaError::invalid_field(
            "search",
            format!("search must be 1 to {MAX_QUERY_CHARS} characters of text"),
        ));
    }
    Ok(q)
}

/// Whether the query has anything to match (a letter or digit).
pub fn has_words(q: &str) -> bool {
    q.chars().any(char::is_alphanumeric)
}

/// The query's trigrams (as pg_trgm makes them).
pub fn query_trigrams(q: &str) -> Vec<String> {
    trigrams(q).into_iter().collect()
}

/// The fewest of a query's `n` trigrams a name must share to be
/// [`NAME_THRESHOLD`] similar: similarity = shared / (n + name's − shared) is
/// at most shared / n. The index finds names sharing that many.
pub fn least_shared(n: usize) -> i64 {
    ((NAME_THRESHOLD * n as f64).ceil() as i64).max(1)
}

/// A type name for free text (a query naming a type, a memory server's
/// `entityType`): lower case, runs of anything but letters and digits as
/// `_`, starting with a letter:
/// `Person` → `person`, `AI Model` → `ai_model`, `3D print` → `t_3d_print`.
pub fn type_name(entity_type: &str) -> String {
    let mut name = String::new();
    for c in entity_type.trim().chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_matches('_');
    let name = match name.chars().next() {
        None => "entity".to_string(),
        Some(c) if c.is_ascii_alphabetic() => name.to_string(),
        Some(_) => format!("t_{name}"),
    };
    name.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_checked() {
        assert_eq!(check_query("  Grace ").unwrap(), "Grace");
        assert!(check_query("   ").is_err());
        assert!(check_query(&"x".repeat(MAX_QUERY_CHARS + 1)).is_err());
        assert!(check_query(&"é".repeat(MAX_QUERY_CHARS)).is_ok());
        assert!(!has_words("?! -"));
        assert!(has_words("R2"));
    }

    #[test]
    fn names_must_share_enough_trigrams() {
        let grams = query_trigrams("Grace");
        assert_eq!(grams.len(), 6);
        assert_eq!(least_shared(grams.len()), 2);
        assert_eq!(least_shared(1), 1);
        assert!(query_trigrams("?!").is_empty());
        // The bound holds: a name at the threshold shares at least that many.
        let (a, b) = (trigrams("grace hopper"), trigrams("grce hoppr"));
        let shared = a.intersection(&b).count() as i64;
        assert!(crate::similarity::similarity(&a, &b) >= NAME_THRESHOLD);
        assert!(shared >= least_shared(b.len()));
    }

    #[test]
    fn other_modes_say_they_fell_back() {
        assert_eq!(answering_mode(SearchMode::Auto), ("lexical", None));
        let (method, why) = answering_mode(SearchMode::Semantic);
        assert_eq!(method, "lexical");
        assert!(why.unwrap().contains("lexical"));
    }
}
