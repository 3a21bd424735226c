//! A search read as a question (`retrieve_entities {search}`): its words,
//! without the stop words of its language, each a term any matching entity
//! may have (entities having more of them, and rarer ones, rank higher);
//! and the character pairs of scripts written without spaces (Chinese,
//! Japanese, Thai…), so a word inside a sentence is found. Pure: the
//! database does the matching (sql/queries/search_entities.sql).

use unicode_script::{Script, UnicodeScript};

/// Most terms a question is read into (words and character pairs).
pub const MAX_TERMS: usize = 32;
/// Most character pairs kept of a text for its search vector.
pub const MAX_TEXT_GRAMS: usize = 4000;

/// The languages whose stop words a question loses, each with the Postgres
/// text search configuration that stems its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    German,
    French,
    Spanish,
    Italian,
    Portuguese,
    Dutch,
    Swedish,
    Danish,
    Norwegian,
    Finnish,
    Russian,
    Hungarian,
    Turkish,
}

impl Language {
    pub const ALL: &'static [Language] = &[
        Language::English,
        Language::German,
        Language::French,
        Language::Spanish,
        Language::Italian,
        Language::Portuguese,
        Language::Dutch,
        Language::Swedish,
        Language::Danish,
        Language::Norwegian,
        Language::Finnish,
        Language::Russian,
        Language::Hungarian,
        Language::Turkish,
    ];

    /// Its Postgres text search configuration.
    pub const fn config(self) -> &'static str {
        match self {
            Language::English => "pg_catalog.english",
            Language::German => "pg_catalog.german",
            Language::French => "pg_catalog.french",
            Language::Spanish => "pg_catalog.spanish",
            Language::Italian => "pg_catalog.italian",
            Language::Portuguese => "pg_catalog.portuguese",
            Language::Dutch => "pg_catalog.dutch",
            Language::Swedish => "pg_catalog.swedish",
            Language::Danish => "pg_catalog.danish",
            Language::Norwegian => "pg_catalog.norwegian",
            Language::Finnish => "pg_catalog.finnish",
            Language::Russian => "pg_catalog.russian",
            Language::Hungarian => "pg_catalog.hungarian",
            Language::Turkish => "pg_catalog.turkish",
        }
    }

    fn stop_words(self) -> &'static std::collections::HashSet<String> {
        use std::collections::HashSet;
        use std::sync::OnceLock;
        static LISTS: OnceLock<Vec<HashSet<String>>> = OnceLock::new();
        let lists = LISTS.get_or_init(|| {
            Language::ALL
                .iter()
                .map(|l| {
                    stop_list(*l)
                        .into_iter()
                        .map(|w| w.to_lowercase())
                        .collect()
                })
                .collect()
        });
        &lists[Language::ALL.iter().position(|l| *l == self).unwrap_or(0)]
    }
}

/// A language's stop words (NLTK's lists, from the stop-words crate).
fn stop_list(language: Language) -> Vec<String> {
    use stop_words::LANGUAGE as L;
    stop_words::get(match language {
        Language::English => L::English,
        Language::German => L::German,
        Language::French => L::French,
        Language::Spanish => L::Spanish,
        Language::Italian => L::Italian,
        Language::Portuguese => L::Portuguese,
        Language::Dutch => L::Dutch,
        Language::Swedish => L::Swedish,
        Language::Danish => L::Danish,
        Language::Norwegian => L::Norwegian,
        Language::Finnish => L::Finnish,
        Language::Russian => L::Russian,
        Language::Hungarian => L::Hungarian,
        Language::Turkish => L::Turkish,
    })
    .iter()
    .map(|w| w.to_string())
    .collect()
}

/// A query read as a question.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// Its words, lower case, each once, in order, without the stop words
    /// of its language (all of them when it has only stop words).
    pub words: Vec<String>,
    /// The character pairs of its runs of scripts written without spaces.
    pub grams: Vec<String>,
    /// The language whose stop words it lost (the one it has most of;
    /// English when it has none).
    pub language: Language,
}

/// Whether a character belongs to a script written without spaces between
/// words, whose words are found by character pairs.
pub fn unspaced(c: char) -> bool {
    matches!(
        c.script(),
        Script::Han
            | Script::Hiragana
            | Script::Katakana
            | Script::Thai
            | Script::Lao
            | Script::Khmer
            | Script::Myanmar
            | Script::Tibetan
    ) || matches!(c, '\u{30FC}' | '\u{3005}')
}

/// The runs of a text: its words (letters and digits of spaced scripts),
/// and its runs of unspaced scripts, in order.
fn runs(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut words, mut unspaced_runs) = (Vec::new(), Vec::new());
    let (mut word, mut run) = (String::new(), String::new());
    for c in text.chars() {
        if unspaced(c) || (!run.is_empty() && is_mark(c)) {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            run.push(c);
        } else if c.is_alphanumeric() || (!word.is_empty() && is_mark(c)) {
            if !run.is_empty() {
                unspaced_runs.push(std::mem::take(&mut run));
            }
            word.extend(c.to_lowercase());
        } else {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if !run.is_empty() {
                unspaced_runs.push(std::mem::take(&mut run));
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    if !run.is_empty() {
        unspaced_runs.push(run);
    }
    (words, unspaced_runs)
}

/// A combining mark (a Thai vowel or tone mark, an accent given apart).
fn is_mark(c: char) -> bool {
    matches!(c.script(), Script::Inherited) || ('\u{0E31}'..='\u{0E4E}').contains(&c)
}

/// The overlapping character pairs of a run (the run itself when it is one
/// character).
fn pairs(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() < 2 {
        return vec![run.to_string()];
    }
    chars.windows(2).map(|w| w.iter().collect()).collect()
}

/// Reads a query as a question.
pub fn read(q: &str) -> Question {
    let (words, unspaced_runs) = runs(q);
    let language = Language::ALL
        .iter()
        .copied()
        .map(|l| {
            let stops = l.stop_words();
            (words.iter().filter(|w| stops.contains(*w)).count(), l)
        })
        .filter(|(n, _)| *n > 0)
        // Most stop words; the first language of ALL on a tie.
        .fold(None::<(usize, Language)>, |best, (n, l)| match best {
            Some((m, _)) if m >= n => best,
            _ => Some((n, l)),
        })
        .map_or(Language::English, |(_, l)| l);
    let stops = language.stop_words();
    let mut kept: Vec<String> = Vec::new();
    for w in words.iter().filter(|w| !stops.contains(*w)) {
        if !kept.contains(w) {
            kept.push(w.clone());
        }
    }
    // A question of stop words alone ("who are you?") keeps them.
    if kept.is_empty() {
        for w in &words {
            if !kept.contains(w) {
                kept.push(w.clone());
            }
        }
    }
    let mut grams: Vec<String> = Vec::new();
    for g in unspaced_runs.iter().flat_map(|r| pairs(r)) {
        if !grams.contains(&g) {
            grams.push(g);
        }
    }
    kept.truncate(MAX_TERMS);
    grams.truncate(MAX_TERMS.saturating_sub(kept.len()));
    Question {
        words: kept,
        grams,
        language,
    }
}

/// The character pairs of a text's unspaced runs, each once, sorted (what
/// its search vector adds, so a word inside a sentence is found).
pub fn text_grams(text: &str) -> Vec<String> {
    let (_, unspaced_runs) = runs(text);
    let mut grams: Vec<String> = unspaced_runs.iter().flat_map(|r| pairs(r)).collect();
    grams.sort();
    grams.dedup();
    grams.truncate(MAX_TEXT_GRAMS);
    grams
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_lose_the_stop_words_of_their_language() {
        let q = read("When did I adopt Baxter?");
        assert_eq!(q.words, ["adopt", "baxter"]);
        assert_eq!(q.language, Language::English);
        let q = read("Did Maria go to the beach or the mountains?");
        assert_eq!(
            q.words,
            ["maria", "go", "beach", "mountains"],
            "`or` is a word, not an operator"
        );
        let de = read("Wann hat Anna ihren Hund bekommen?");
        assert_eq!(de.language, Language::German);
        assert!(de.words.contains(&"hund".to_string()) && !de.words.contains(&"ihren".to_string()));
        let fr = read("Où est-ce que Julie a passé ses vacances?");
        assert_eq!(fr.language, Language::French);
        assert!(
            fr.words.contains(&"vacances".to_string()) && !fr.words.contains(&"ses".to_string())
        );
        let es = read("¿Dónde vive el hermano de Carlos?");
        assert_eq!(es.language, Language::Spanish);
        assert!(es.words.contains(&"hermano".to_string()) && !es.words.contains(&"el".to_string()));
        // Keywords only: nothing lost.
        assert_eq!(read("engine program").words, ["engine", "program"]);
        assert_eq!(read("who are you").words, ["who", "are", "you"]);
    }

    #[test]
    fn unspaced_scripts_are_read_by_character_pairs() {
        let zh = read("我下个月去东京");
        assert!(zh.grams.contains(&"东京".to_string()), "{zh:?}");
        assert!(zh.words.is_empty());
        let ja = read("東京に行きます");
        assert!(ja.grams.contains(&"東京".to_string()));
        let th = read("ฉันชอบแมว");
        assert!(
            th.grams.contains(&"แม".to_string()) && th.grams.contains(&"มว".to_string()),
            "{th:?}"
        );
        // Mixed: words and pairs.
        let mixed = read("Meeting in 東京 tomorrow");
        assert_eq!(mixed.words, ["meeting", "tomorrow"]);
        assert_eq!(mixed.grams, ["東京"]);
        // A text's pairs include its words': 东京 inside a sentence.
        assert!(text_grams("我住在东京的公寓").contains(&"东京".to_string()));
        assert!(text_grams("plain English").is_empty());
    }
}
