//! Request and response types of every action, one module per concern.

pub mod analytics;
pub mod annotations;
pub mod bulk;
pub mod common;
pub mod contests;
pub mod contradictions;
pub mod duplicates;
pub mod engram;
pub mod entities;
pub mod graph;
pub mod graphmem;
pub mod legacy;
pub mod lifecycle;
pub mod memory_server;
pub mod metrics;
pub mod plaid;
pub mod providers;
pub mod reclassify;
pub mod resources;
pub mod schemas;
pub mod store;
pub mod subgraph;
pub mod system;
pub mod workspace_server;
pub mod workspaces;
