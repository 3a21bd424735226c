//! The requests and responses of other memory servers' tool sets
//! (`crate::tool_sets`), one module per server, as the extension's
//! `actions::graph_servers` serves them (the same module names on both
//! sides).

pub mod engram;
pub mod graphmem;
pub mod memory;
pub mod workspace;
