//! What search keeps with each snapshot: the trigrams of its name, for the
//! generated column `entity_snapshots.name_trigrams`, and the character
//! pairs of its text in scripts written without spaces, for the search
//! vectors (sql/search.sql).

use pgrx::prelude::*;

/// The trigrams of `name` as pg_trgm makes them (neotoma_core::similarity).
#[pg_extern(immutable, parallel_safe, strict, name = "_name_trigrams")]
pub(crate) fn name_trigrams(name: &str) -> Vec<String> {
    neotoma_core::similarity::trigrams(name)
        .into_iter()
        .collect()
}

/// The deletion variants of the words of `name`
/// (neotoma_core::similarity::deletion_variants), kept with its trigrams in
/// `entity_name_trigrams` so a typo is found among names whose trigrams
/// are all common.
#[pg_extern(immutable, parallel_safe, strict, name = "_name_variants")]
pub(crate) fn name_variants(name: &str) -> Vec<String> {
    neotoma_core::similarity::deletion_variants(name)
        .into_iter()
        .collect()
}

/// The text of a stored file that search reads (neotoma_core::search::file_text),
/// for the generated column `files.search_vector` (sql/search.sql).
#[pg_extern(immutable, parallel_safe, strict, name = "_file_text")]
pub(crate) fn file_text(content: &[u8]) -> &str {
    neotoma_core::search::file_text(content)
}

/// The character pairs of `text`'s runs of scripts written without spaces
/// (neotoma_core::question::text_grams): what the search vectors of
/// snapshots, observations and files add, so a Chinese, Japanese or Thai
/// word inside a sentence is found.
#[pg_extern(immutable, parallel_safe, strict, name = "_text_grams")]
pub(crate) fn text_grams(text: &str) -> Vec<String> {
    neotoma_core::question::text_grams(text)
}

/// The runs of three characters of an identifier value
/// (neotoma_core::identity::value_grams): the index a partial identifier
/// lookup narrows its candidates with (sql/search_grams.sql).
#[pg_extern(immutable, parallel_safe, strict, name = "_value_grams")]
pub(crate) fn value_grams(value: &str) -> Vec<String> {
    neotoma_core::identity::value_grams(value)
}
