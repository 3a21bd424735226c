//! The valid time a graph server's read answers at (issue 44): its
//! `valid_at` (Neotoma's addition to the peers' read tools: none of their
//! documents has a time), else now. A read sets it for its call
//! ([`answer_at`]); the graph layer reads it: the relations holding then
//! (`relations_of`, `relations_in`) and the nodes' fields as true then
//! ([`render_nodes`]). A write that looks for a relation to change looks
//! at every one, whatever its valid time ([`regardless`]).

use super::Node;
use crate::actions::entities::value_timelines_of;
use neotoma_core::actions::common;
use neotoma_core::valid_time;
use neotoma_core::NeotomaError;
use serde_json::Value;
use std::cell::Cell;
use uuid::Uuid;

/// Which relations and values the graph layer shows.
#[derive(Clone, Copy)]
enum When {
    /// What holds now (a read without `valid_at`).
    Now,
    /// What holds at this instant (microseconds).
    At(i64),
    /// Every relation, whatever its valid time (a write's lookup).
    Any,
}

thread_local! {
    /// The valid time of the call running.
    static ASKED: Cell<When> = const { Cell::new(When::Now) };
}

/// A call at a valid time; when it ends (dropped), the time before it
/// holds again.
pub struct Reading(When);

impl Drop for Reading {
    fn drop(&mut self) {
        ASKED.set(self.0);
    }
}

/// Answers the read that holds the result at `valid_at` (ISO 8601), else
/// now.
pub fn answer_at(valid_at: &Option<String>) -> Result<Reading, NeotomaError> {
    let when = match common::optional_micros("valid_at", valid_at)? {
        Some(t) => When::At(t),
        None => When::Now,
    };
    Ok(Reading(ASKED.replace(when)))
}

/// Lets a write see every relation, whatever its valid time (deleting a
/// relation that held only in the past).
pub fn regardless() -> Reading {
    Reading(ASKED.replace(When::Any))
}

/// The instant asked for (None: now, or any time).
pub fn asked() -> Option<i64> {
    match ASKED.get() {
        When::At(t) => Some(t),
        When::Now | When::Any => None,
    }
}

/// Whether every relation is shown, whatever its valid time.
pub fn any_time() -> bool {
    matches!(ASKED.get(), When::Any)
}

/// Each node's fields as true at the valid time asked for (the stored
/// snapshot is what holds now): a field that holds over valid time takes
/// its value then, or leaves when none holds; the name, label and
/// observations shown follow them (a name that holds at no instant keeps
/// the current one).
pub fn render_nodes(user: &Uuid, nodes: &mut [Node]) -> Result<(), NeotomaError> {
    let Some(t) = asked() else {
        return Ok(());
    };
    let timelines = value_timelines_of(user, nodes.iter().map(|n| n.id.clone()).collect())?;
    for node in nodes {
        let Some(timelines) = timelines.get(&node.id) else {
            continue;
        };
        valid_time::overlay_at(&mut node.snapshot, timelines, t, |_| true);
        let text = |field: &str| {
            node.snapshot
                .get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        if timelines.contains_key("name") || timelines.contains_key("title") {
            if let Some(name) = text("name").or_else(|| text("title")) {
                node.name = name;
            }
        }
        if timelines.contains_key("entity_type_label") {
            node.label = text("entity_type_label").unwrap_or_else(|| node.entity_type.clone());
        }
        if timelines.contains_key(neotoma_core::memory_graph::OBSERVATIONS) {
            node.observations = node
                .snapshot
                .get(neotoma_core::memory_graph::OBSERVATIONS)
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    Ok(())
}
