//! Pure logic of Neotoma, free of Postgres so it can be unit-tested with
//! `cargo test`: error envelope, canonical JSON and ids, request parsing and
//! the action catalog. The `neotoma` extension and the `neotoma-mcp` gateway
//! both build on it.

pub mod actions;
pub mod canonical;
pub mod catalog;
pub mod error;
pub mod ids;
pub mod request;

pub use error::{ErrorCode, NeotomaError, Result};
