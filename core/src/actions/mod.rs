//! Request and response types of every action, one module per concern.

pub mod analytics;
pub mod annotations;
pub mod bulk;
pub mod common;
pub mod contests;
pub mod contradictions;
pub mod duplicates;
pub mod entities;
pub mod graph_servers;
pub mod legacy;
pub mod lifecycle;
pub mod merge;
pub mod metrics;
pub mod plaid;
pub mod providers;
pub mod reclassify;
pub mod relationships;
pub mod resources;
pub mod schemas;
pub mod store;
pub mod subgraph;
pub mod system;
pub mod timeline;
pub mod traversal;
pub mod workspaces;
