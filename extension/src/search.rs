//! What search keeps with each snapshot: the trigrams of its name, for the
//! generated column `entity_snapshots.name_trigrams` (sql/search.sql).

use pgrx::prelude::*;

/// The trigrams of `name` as pg_trgm makes them (neotoma_core::similarity).
#[pg_extern(immutable, parallel_safe, strict, name = "_name_trigrams")]
pub(crate) fn name_trigrams(name: &str) -> Vec<String> {
    neotoma_core::similarity::trigrams(name)
        .into_iter()
        .collect()
}
