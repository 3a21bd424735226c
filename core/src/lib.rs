//! Pure logic of Neotoma, free of Postgres so it can be unit-tested with
//! `cargo test`: error envelope, canonical JSON and ids, request parsing and
//! the action catalog. The `neotoma` extension and the `neotoma-mcp` gateway
//! both build on it.

pub mod actions;
pub mod canonical;
pub mod catalog;
pub mod catalog_entry;
pub mod confidence;
pub mod contradictions;
pub mod error;
pub mod evolution;
pub mod graph;
pub mod identity;
pub mod ids;
pub mod interpret;
pub mod lean;
pub mod limits;
pub mod memory_graph;
pub mod question;
pub mod reducer;
pub mod request;
pub mod routing;
pub mod schema;
pub mod search;
pub mod similarity;
pub mod time;
pub mod token_limits;
pub mod tool_sets;
pub mod typesearch;
pub mod valid_time;
pub mod workspace;

pub use error::{ErrorCode, NeotomaError, Result};

/// What several modules' tests share.
#[cfg(test)]
pub(crate) mod test_support {
    /// `items` in an order drawn from `seed` (a Fisher-Yates with a
    /// xorshift), the same for the same seed.
    pub fn shuffle<T>(items: &mut [T], seed: u64) {
        let mut x = seed | 1;
        for i in (1..items.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            items.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
}
