//! Deterministic ids for SQL: the same derivation the Rust code uses.

use pgrx::prelude::*;

/// `neotoma._derived_uuid(kind, parts)`: a UUID from SHA-256 over the kind
/// and parts (see neotoma_core::ids::derived_uuid).
#[pg_extern(immutable, parallel_safe, strict, name = "_derived_uuid")]
fn derived_uuid(kind: &str, parts: Vec<String>) -> pgrx::Uuid {
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    pgrx::Uuid::from_bytes(*neotoma_core::ids::derived_uuid(kind, &refs).as_bytes())
}
