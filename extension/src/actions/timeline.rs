//! Timeline events: dated events derived from entities' date fields.

use crate::actions::entities::resolve_live_entity;
use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::timeline::*;
use neotoma_core::schema::check_name;
use neotoma_core::NeotomaError;
use uuid::Uuid;

pub fn list_timeline_events(
    user: Uuid,
    req: ListTimelineEventsRequest,
) -> Result<ListTimelineEventsResponse, NeotomaError> {
    if let Some(t) = &req.event_type {
        check_name("event_type", t)?;
    }
    let after = req
        .after_date
        .as_deref()
        .map(|d| common::micros("after_date", d))
        .transpose()?;
    let before = req
        .before_date
        .as_deref()
        .map(|d| common::micros("before_date", d))
        .transpose()?;
    let source = req
        .source_id
        .as_deref()
        .map(|s| common::uuid("source_id", s))
        .transpose()?
        .map(|u| u.to_string());
    let entity = req
        .entity_id
        .as_deref()
        .map(|e| common::entity_id("entity_id", e))
        .transpose()?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    let entity = match entity {
        Some(e) => Some(resolve_live_entity(&user, &e)?.0.id),
        None => None,
    };
    let scope = crate::scope::current();
    // Planned for its values: a generic plan, not knowing the page's LIMIT
    // nor the range, sorted every event of a month to answer 20 of them
    // (8 ms for 3,215 events) where the ordered index reads 20 (1.9 ms
    // with the total).
    db::with_custom_plans(|| {
        db::parsed(
            &scope.adapt(LIST_TIMELINE_EVENTS)?,
            &[
                Arg::uuid(user),
                Arg::OptText(req.event_type.as_deref()),
                Arg::OptInt(after),
                Arg::OptInt(before),
                Arg::OptText(source.as_deref()),
                Arg::OptText(entity.as_deref()),
                Arg::Int(limit),
                Arg::Int(offset),
                scope.arg(),
            ],
            "timeline events",
        )
    })
}

const LIST_TIMELINE_EVENTS: &str = include_str!("../../../sql/queries/list_timeline_events.sql");
