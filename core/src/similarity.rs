//! Trigram similarity as pg_trgm computes it (`similarity(a, b)`), and the
//! candidate pairs of `list_potential_duplicates` built from it and from
//! shared identifiers. Pure: no database.

use crate::actions::duplicates::{DuplicateEvidence, DuplicatePair};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The trigrams of `text` as pg_trgm makes them: lower-cased words of
/// letters and digits, each padded with two spaces before and one after.
pub fn trigrams(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let padded: Vec<char> = format!("  {} ", word.to_lowercase()).chars().collect();
        for w in padded.windows(3) {
            out.insert(w.iter().collect());
        }
    }
    out
}

/// Words shorter than this have no deletion variants: one character less
/// of a three-letter word is a pair most names share.
pub const VARIANT_MIN_CHARS: usize = 4;
/// Nor words longer than this (a name's word rarely is; each variant is an
/// index row).
pub const VARIANT_MAX_CHARS: usize = 20;
/// Nor more words than this of a name (a long title's words would each add
/// their rows: about 12 a word, which slowed batches of stores by 12 %).
pub const VARIANT_MAX_WORDS: usize = 4;

/// The deletion variants of each word of `text` (the words of
/// [`trigrams`], in lower case, of 4 to 20 characters, without digits,
/// the first 4 of them): the word and the
/// word less any one character, each marked with a leading `~` so it never
/// equals a trigram. Two words within one typo (a character left out,
/// added, changed or two swapped) share a variant (as SymSpell finds
/// corrections): how search finds a misspelt word whose trigrams every
/// name has (sql/queries/search_entities.sql).
pub fn deletion_variants(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let words = text
        .split(|c: char| !c.is_alphanumeric())
        .map(|w| w.to_lowercase().chars().collect::<Vec<char>>())
        // A number's typos are not a name's (and its variants would be
        // most rows of an invoice's or a ticket's title).
        .filter(|w| {
            (VARIANT_MIN_CHARS..=VARIANT_MAX_CHARS).contains(&w.len())
                && !w.iter().any(|c| c.is_numeric())
        })
        .take(VARIANT_MAX_WORDS);
    for chars in words {
        let word: String = chars.iter().collect();
        out.insert(format!("~{word}"));
        for skip in 0..chars.len() {
            let rest: String = chars
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, c)| c)
                .collect();
            out.insert(format!("~{rest}"));
        }
    }
    out
}

/// Shared trigrams over all distinct trigrams (0 when either has none).
pub fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let shared = a.intersection(b).count();
    let all = a.len() + b.len() - shared;
    if all == 0 {
        0.0
    } else {
        shared as f64 / all as f64
    }
}

/// Trigrams shared by more names than this do not make candidate pairs.
const COMMON: usize = 500;

/// An entity as duplicate detection sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: String,
    pub name: String,
    /// Normalised identity values: (field, value).
    pub identifiers: Vec<(String, String)>,
    /// Only candidates of one group pair (their workspace: entities of two
    /// workspaces are never merged).
    pub group: String,
}

/// Pairs of `candidates` whose names are at least `threshold` similar or
/// that share an identifier, best first (then by ids), at most `limit`.
/// Pairs are found through shared trigrams (those not in more than
/// [`COMMON`] names) and identifiers, an inverted index, not by comparing
/// every two entities.
pub fn duplicate_pairs(
    candidates: &[Candidate],
    threshold: f64,
    limit: usize,
) -> Vec<DuplicatePair> {
    let grams: Vec<BTreeSet<String>> = candidates.iter().map(|c| trigrams(&c.name)).collect();
    let mut by_gram: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, g) in grams.iter().enumerate() {
        for t in g {
            by_gram.entry(t.as_str()).or_default().push(i);
        }
    }
    let mut by_identifier: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, c) in candidates.iter().enumerate() {
        for (f, v) in &c.identifiers {
            by_identifier
                .entry((f.as_str(), v.as_str()))
                .or_default()
                .push(i);
        }
    }
    // Candidate pairs: sharing a trigram that at most COMMON names have (a
    // trigram most names share says little, and would pair them all).
    let mut shared: HashSet<(usize, usize)> = HashSet::new();
    for ids in by_gram.values().filter(|ids| ids.len() <= COMMON) {
        for (k, &i) in ids.iter().enumerate() {
            for &j in &ids[k + 1..] {
                shared.insert((i.min(j), i.max(j)));
            }
        }
    }
    let mut exact: BTreeMap<(usize, usize), Vec<(&str, &str)>> = BTreeMap::new();
    for ((f, v), ids) in &by_identifier {
        for (k, &i) in ids.iter().enumerate() {
            for &j in &ids[k + 1..] {
                if i != j {
                    exact.entry((i.min(j), i.max(j))).or_default().push((f, v));
                }
            }
        }
    }
    // Scores first (no copies), the best `limit` kept; evidence for those.
    let keys: BTreeSet<(usize, usize)> = shared
        .iter()
        .chain(exact.keys())
        .copied()
        .filter(|&(i, j)| candidates[i].group == candidates[j].group)
        .collect();
    let name_score = |i: usize, j: usize| round(similarity(&grams[i], &grams[j]));
    let ordered = |i: usize, j: usize| {
        if candidates[i].id <= candidates[j].id {
            (i, j)
        } else {
            (j, i)
        }
    };
    let mut scored: Vec<(f64, usize, usize)> = keys
        .into_iter()
        .filter_map(|(i, j)| {
            let name = name_score(i, j);
            let score = if exact.contains_key(&(i, j)) {
                1.0
            } else {
                name
            };
            let (a, b) = ordered(i, j);
            (score >= threshold).then_some((score, a, b))
        })
        .collect();
    scored.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then_with(|| candidates[x.1].id.cmp(&candidates[y.1].id))
            .then_with(|| candidates[x.2].id.cmp(&candidates[y.2].id))
    });
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, a, b)| {
            let mut evidence = Vec::new();
            let name = name_score(a, b);
            if name >= threshold {
                evidence.push(DuplicateEvidence {
                    field: "name".into(),
                    method: "trigram".into(),
                    score: name,
                    values: vec![candidates[a].name.clone(), candidates[b].name.clone()],
                });
            }
            for (f, v) in exact.get(&(a.min(b), a.max(b))).into_iter().flatten() {
                evidence.push(DuplicateEvidence {
                    field: f.to_string(),
                    method: "exact".into(),
                    score: 1.0,
                    values: vec![v.to_string()],
                });
            }
            // Strongest first.
            evidence.sort_by(|x, y| {
                y.score
                    .total_cmp(&x.score)
                    .then_with(|| x.field.cmp(&y.field))
            });
            DuplicatePair {
                entity_id: candidates[a].id.clone(),
                other_entity_id: candidates[b].id.clone(),
                name: candidates[a].name.clone(),
                other_name: candidates[b].name.clone(),
                score,
                evidence,
            }
        })
        .collect()
}

/// Four decimals: a score is evidence to read, not a float to compare.
fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, name: &str, ids: &[(&str, &str)]) -> Candidate {
        Candidate {
            id: id.into(),
            name: name.into(),
            identifiers: ids
                .iter()
                .map(|(f, v)| (f.to_string(), v.to_string()))
                .collect(),
            group: String::new(),
        }
    }

    #[test]
    fn only_candidates_of_one_group_pair() {
        let mut a = c("ent_a", "Ada Lovelace", &[("email", "ada@example.com")]);
        let mut b = c("ent_b", "Ada Lovelace", &[("email", "ada@example.com")]);
        a.group = "default".into();
        b.group = "work".into();
        assert!(duplicate_pairs(&[a.clone(), b.clone()], 0.5, 10).is_empty());
        b.group = "default".into();
        assert_eq!(duplicate_pairs(&[a, b], 0.5, 10).len(), 1);
    }

    #[test]
    fn trigrams_match_pg_trgm() {
        // SELECT show_trgm('word') → {"  w"," wo","ord","rd ",wor}
        let t: Vec<String> = trigrams("Word").into_iter().collect();
        assert_eq!(t, ["  w", " wo", "ord", "rd ", "wor"]);
        // similarity('word', 'two words') = 0.3636... in pg_trgm (4 / 11).
        let s = similarity(&trigrams("word"), &trigrams("two words"));
        assert!((s - 4.0 / 11.0).abs() < 1e-9, "{s}");
        assert_eq!(similarity(&trigrams(""), &trigrams("")), 0.0);
    }

    #[test]
    fn deletion_variants_meet_within_one_typo() {
        let v: Vec<String> = deletion_variants("Anna").into_iter().collect();
        assert_eq!(v, ["~ana", "~ann", "~anna", "~nna"]);
        // Short and long words have none; words are lower-cased.
        assert!(deletion_variants("Al Ng").is_empty());
        assert!(deletion_variants(&"x".repeat(21)).is_empty());
        assert!(deletion_variants("Invoice 10234 b2b2")
            .iter()
            .all(|v| !v.chars().any(|c| c.is_numeric())));
        // The first four words that have variants.
        let long = deletion_variants("Quarterly review of the budget draft for the board");
        assert!(long.contains("~draft") && !long.contains("~board"));
        let shared = |a: &str, b: &str| !deletion_variants(a).is_disjoint(&deletion_variants(b));
        // Left out, added, changed, swapped: one typo away.
        assert!(shared("Anran", "Anaran"));
        assert!(shared("Quarterbrook", "Quartrbrook"));
        assert!(shared("Jonas", "Jomas"));
        assert!(shared("Jonas", "Jnoas"));
        assert!(!shared("Jonas", "Maria"));
        // Never a trigram.
        assert!(deletion_variants("Quarterbrook")
            .iter()
            .all(|v| v.starts_with('~') && v.chars().count() > 3));
    }

    #[test]
    fn pairs_by_name_and_identifier_best_first() {
        let cands = [
            c("ent_b", "Ada Lovelace", &[]),
            c("ent_a", "Ada Lovelase", &[]),
            c("ent_c", "Charles Babbage", &[("email", "cb@example.com")]),
            c("ent_d", "C. Babbage", &[("email", "cb@example.com")]),
            c("ent_e", "Grace Hopper", &[]),
        ];
        let p = duplicate_pairs(&cands, 0.5, 10);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].entity_id.as_str(), p[0].other_entity_id.as_str()),
            ("ent_c", "ent_d")
        );
        assert_eq!(p[0].score, 1.0);
        assert_eq!(p[0].evidence[0].method, "exact");
        assert_eq!(
            (p[1].entity_id.as_str(), p[1].other_entity_id.as_str()),
            ("ent_a", "ent_b")
        );
        assert!(p[1].score >= 0.5 && p[1].score < 1.0);
        // Deterministic: the same input in another order gives the same pairs.
        let mut rev = cands.to_vec();
        rev.reverse();
        assert_eq!(duplicate_pairs(&rev, 0.5, 10), p);
        assert_eq!(duplicate_pairs(&cands, 0.5, 1).len(), 1);
        assert!(duplicate_pairs(&cands, 0.99, 10)
            .iter()
            .all(|x| x.score == 1.0));
    }
}
