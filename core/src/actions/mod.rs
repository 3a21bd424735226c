//! Request and response types of every action, one module per concern.

pub mod system;
