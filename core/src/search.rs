//! Search of a user's entities (`retrieve_entities` with `search`): the
//! query's checks and forms, and which mode answers. Pure: no database.
//!
//! Lexical search matches the query's words against each snapshot's
//! full-text vector (`entity_snapshots.search_vector`: every string and
//! number, as `simple` words and as `english` stems, names weighted) and its
//! trigrams against the name's (`entity_snapshots.name_trigrams`, pg_trgm's
//! trigrams, so typos are forgiven; one row each in
//! `entity_name_trigrams`, the index that finds the names sharing enough).

use crate::error::Result;
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
    /// Words (exact and stemmed) and names (typos forgiven).
    Lexical,
    /// Meaning: the cosine similarity of embeddings.
    Semantic,
    /// Both, fused by Reciprocal Rank Fusion.
    Hybrid,
}

/// The mode that answers a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answering {
    Lexical,
    Semantic,
    /// Reciprocal Rank Fusion of the lexical and the semantic ranking.
    Hybrid,
}

impl Answering {
    pub fn as_str(self) -> &'static str {
        match self {
            Answering::Lexical => "lexical",
            Answering::Semantic => "semantic",
            Answering::Hybrid => "hybrid",
        }
    }
}

/// The mode that answers a request, given why semantic search cannot
/// (`unavailable`: no model, no embeddings, a query the model has no words
/// for), and why it differs from the one asked for when it does: `auto` is
/// hybrid when it can be and lexical otherwise (search_method says which);
/// `semantic` and `hybrid` fall back to lexical and say why.
pub fn answering_mode(asked: SearchMode, unavailable: Option<&str>) -> (Answering, Option<String>) {
    match (asked, unavailable) {
        (SearchMode::Lexical, _) => (Answering::Lexical, None),
        (SearchMode::Auto, None) | (SearchMode::Hybrid, None) => (Answering::Hybrid, None),
        (SearchMode::Semantic, None) => (Answering::Semantic, None),
        (SearchMode::Auto, Some(_)) => (Answering::Lexical, None),
        (SearchMode::Semantic | SearchMode::Hybrid, Some(why)) => (
            Answering::Lexical,
            Some(format!("{why}: answered by lexical search")),
        ),
    }
}

/// Least cosine similarity between a query's embedding and an entity's for
/// the entity to match semantically (potion-base-8M: unrelated texts score
/// below it, a word and the entities it names above).
pub const SEMANTIC_THRESHOLD: f64 = 0.2;
/// Most entities semantic search ranks: the nearest this many (above
/// [`SEMANTIC_THRESHOLD`]); every similarity read is computed, only these
/// are ranked, fused and counted in `total`. 200, not 1,000: hybrid's
/// recall@10 and MRR@10 (benches/retrieval.py) did not change, and reading
/// the entities of 800 more took 9 ms of a hybrid search at 50,000.
pub const SEMANTIC_CANDIDATES: i64 = 200;
/// Most entities a term of a question may match and still be rare: a
/// rarer term finds the entities that have it (all of them), a commoner
/// one only adds its weight to those (sql/queries/search_entities.sql).
pub const RARE_TERM_ENTITIES: i64 = 2000;
/// Most names a word no entity has (a typo) brings, the likest to it first:
/// a short word shares a few trigrams with a great many names.
pub const FUZZY_NAME_CANDIDATES: i64 = 200;
/// Reciprocal Rank Fusion's constant: a result ranked r-th in a ranking
/// counts 1 / (RRF_K + r) (Cormack et al.).
pub const RRF_K: i64 = 60;
/// Most characters of an entity's text that go into its embedding (the
/// model reads at most 512 tokens anyway).
pub const MAX_EMBEDDING_CHARS: usize = 4000;

/// The text an entity's embedding is made of: its type in words, its name
/// or title, then each other field as `field words: values` (strings and
/// numbers, nested ones too), fields in name order.
/// `transaction`, {"merchant": "Cafe Roma", "amount": 12.5} →
/// "transaction. amount: 12.5. merchant: Cafe Roma".
pub fn embedding_text(entity_type: &str, snapshot: &serde_json::Value) -> String {
    fn values(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_string()),
            serde_json::Value::Number(n) => out.push(n.to_string()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| values(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| values(x, out)),
            _ => {}
        }
    }
    let words = |name: &str| name.replace(['_', '-'], " ");
    let mut parts = vec![words(entity_type)];
    let fields = snapshot.as_object();
    let name_field = ["name", "title"]
        .into_iter()
        .find(|f| fields.is_some_and(|o| o.get(*f).is_some_and(|v| v.is_string())));
    if let Some(f) = name_field {
        let mut name = vec![];
        values(&snapshot[f], &mut name);
        parts.extend(name);
    }
    let mut keys: Vec<&String> = fields.map(|o| o.keys().collect()).unwrap_or_default();
    keys.sort();
    for key in keys {
        if Some(key.as_str()) == name_field {
            continue;
        }
        let mut vals = vec![];
        values(&snapshot[key.as_str()], &mut vals);
        if !vals.is_empty() {
            parts.push(format!("{}: {}", words(key), vals.join(", ")));
        }
    }
    let text = parts.join(". ");
    match text.char_indices().nth(MAX_EMBEDDING_CHARS) {
        Some((end, _)) => text[..end].to_string(),
        None => text,
    }
}

/// Most bytes of a stored file whose words are searched (its start): the
/// words of 128 KiB of text stay well under a `tsvector`'s 1 MB, whatever
/// the text.
pub const MAX_FILE_TEXT_BYTES: usize = 128 * 1024;

/// The text of a stored file that search reads: its first
/// [`MAX_FILE_TEXT_BYTES`] when they are UTF-8 text (a byte-order mark
/// dropped, a character cut at the end forgiven); nothing for a binary file
/// (a NUL byte, bytes that are not UTF-8, or a PDF, whose words are inside
/// compressed streams: what its interpretation stored is searched instead).
pub fn file_text(bytes: &[u8]) -> &str {
    let head = &bytes[..bytes.len().min(MAX_FILE_TEXT_BYTES)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if head.starts_with(b"%PDF-") || head.contains(&0) {
        return "";
    }
    match std::str::from_utf8(head) {
        Ok(text) => text,
        // Cut inside a character by the limit (or by the file's end): the
        // text before it.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => "",
    }
}

/// The query, trimmed; refused when empty or too long.
pub fn check_query(search: &str) -> Result<&str> {
    crate::actions::common::text("search", search, MAX_QUERY_CHARS)
}

/// Whether the query has anything to match (a letter or digit).
pub fn has_words(q: &str) -> bool {
    q.chars().any(char::is_alphanumeric)
}

/// The query's trigrams (as pg_trgm makes them).
pub fn query_trigrams(q: &str) -> Vec<String> {
    trigrams(q).into_iter().collect()
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
    fn files_text_is_their_utf8_start() {
        assert_eq!(file_text(b"Meeting notes: Grace"), "Meeting notes: Grace");
        assert_eq!(file_text(b"\xEF\xBB\xBFcaf\xC3\xA9"), "caf\u{e9}");
        // Binary: NUL bytes, invalid UTF-8, PDFs.
        assert_eq!(file_text(b"\x89PNG\r\n\x1a\n\0\0"), "");
        assert_eq!(file_text(b"abc \xFF\xFE def"), "");
        assert_eq!(file_text(b"%PDF-1.4 stream"), "");
        // The limit cuts a long file, inside a character too.
        let mut long = vec![b'a'; MAX_FILE_TEXT_BYTES - 1];
        long.extend("\u{e9}\u{e9}".as_bytes());
        assert_eq!(file_text(&long).len(), MAX_FILE_TEXT_BYTES - 1);
        let cut = "\u{e9}".as_bytes();
        assert_eq!(file_text(&cut[..1]), "");
    }

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
        assert!(query_trigrams("?!").is_empty());
        // The bound the index search uses (sql/queries/search_entities.sql):
        // similarity = shared / (n + name's − shared) is at most shared / n,
        // so a name at the threshold shares at least ⌈threshold × n⌉.
        let (a, b) = (trigrams("grace hopper"), trigrams("grce hoppr"));
        let shared = a.intersection(&b).count() as f64;
        assert!(crate::similarity::similarity(&a, &b) >= NAME_THRESHOLD);
        assert!(shared >= (NAME_THRESHOLD * b.len() as f64).ceil());
    }

    #[test]
    fn modes_answer_or_say_why_not() {
        use Answering::*;
        assert_eq!(answering_mode(SearchMode::Auto, None), (Hybrid, None));
        assert_eq!(
            answering_mode(SearchMode::Auto, Some("no model")),
            (Lexical, None)
        );
        assert_eq!(answering_mode(SearchMode::Lexical, None), (Lexical, None));
        assert_eq!(answering_mode(SearchMode::Semantic, None), (Semantic, None));
        let (method, why) = answering_mode(SearchMode::Hybrid, Some("no model"));
        assert_eq!(method, Lexical);
        assert_eq!(why.unwrap(), "no model: answered by lexical search");
    }

    #[test]
    fn embedding_text_is_type_name_then_fields() {
        let snapshot = serde_json::json!({
            "merchant": "Cafe Roma", "amount": 12.5, "title": "Lunch",
            "tags": ["food", "work"], "paid": true, "note": " ", "address": {"city": "Rome"}});
        assert_eq!(
            embedding_text("bank_transaction", &snapshot),
            "bank transaction. Lunch. address: Rome. amount: 12.5. merchant: Cafe Roma. tags: food, work"
        );
        assert_eq!(embedding_text("note", &serde_json::json!({})), "note");
        let long = serde_json::json!({"name": "x".repeat(10 * MAX_EMBEDDING_CHARS)});
        assert_eq!(
            embedding_text("t", &long).chars().count(),
            MAX_EMBEDDING_CHARS
        );
    }
}
