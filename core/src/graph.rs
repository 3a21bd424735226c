//! Relationship types and timeline event derivation.

use crate::error::{ErrorCode, NeotomaError, Result};
use crate::ids::derived_uuid;
use crate::reducer::{Rendered, SnapshotState};
use crate::schema::EntitySchema;
use crate::time::parse_date_or_datetime;
use crate::valid_time;
use serde_json::{json, Value};
use strum::{Display, EnumIter, EnumString, IntoEnumIterator, IntoStaticStr};
use uuid::Uuid;

/// The seven relationship types of the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Display, EnumString, IntoStaticStr, EnumIter)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum RelationshipType {
    PartOf,
    Corrects,
    RefersTo,
    Settles,
    DuplicateOf,
    DependsOn,
    Supersedes,
}

impl RelationshipType {
    pub fn all() -> Vec<&'static str> {
        RelationshipType::iter().map(Into::into).collect()
    }

    /// Types where a cycle is meaningless (hierarchy, dependency, succession,
    /// correction, settlement): a relationship that would close one is
    /// refused. `REFERS_TO` (mutual references) and `DUPLICATE_OF`
    /// (symmetric) may form cycles.
    pub fn acyclic(self) -> bool {
        !matches!(
            self,
            RelationshipType::RefersTo | RelationshipType::DuplicateOf
        )
    }

    /// Parses a type argument; anything else is `INVALID_RELATIONSHIP_TYPE`.
    pub fn parse(field: &str, s: &str) -> Result<RelationshipType> {
        s.parse().map_err(|_| {
            NeotomaError::new(
                ErrorCode::InvalidRelationshipType,
                format!(
                    "`{s}` is not a relationship type; use one of {}",
                    RelationshipType::all().join(", ")
                ),
            )
            .with("field", field)
            .with("allowed", RelationshipType::all())
        })
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A timeline event derived from an entity snapshot's date field.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedEvent {
    pub id: Uuid,
    pub event_type: String,
    /// Microseconds since the epoch.
    pub timestamp: i64,
    pub source_id: String,
    pub observation_id: String,
    pub source_field: String,
    pub properties: Value,
}

/// The events an entity's snapshot implies: one per date field with a value
/// (event type from the schema's temporal_fields, else the field name in
/// CamelCase), from the source that supplied that value. The id depends on
/// (user, entity, field) only, so correcting a date moves its event.
pub fn derive_events(
    user: &Uuid,
    schema: &EntitySchema,
    entity_id: &str,
    rendered: &Rendered,
) -> Vec<DerivedEvent> {
    let mut out = Vec::new();
    for (field, value) in &rendered.snapshot {
        let Some(event_type) = schema.event_type(field) else {
            continue;
        };
        let Some(timestamp) = value.as_str().and_then(parse_date_or_datetime) else {
            continue;
        };
        out.push(DerivedEvent::of_value(
            derived_uuid("event", &[&user.to_string(), entity_id, field]),
            event_type,
            timestamp,
            field,
            &rendered.field_provenance[field],
            json!({"field": field, "value": value, "entity_type": schema.entity_type}),
        ));
    }
    out
}

impl DerivedEvent {
    /// An event of a field's value, from the provenance of that value
    /// (the snapshot's `field_provenance` form: its source and observation).
    fn of_value(
        id: Uuid,
        event_type: String,
        timestamp: i64,
        field: &str,
        prov: &Value,
        properties: Value,
    ) -> DerivedEvent {
        let text = |key: &str| prov[key].as_str().unwrap_or_default().to_string();
        DerivedEvent {
            id,
            event_type,
            timestamp,
            source_id: text("source_id"),
            observation_id: text("observation_id"),
            source_field: field.to_string(),
            properties,
        }
    }
}

/// The events of an entity's values over valid time (issue 44): where a
/// value of a field begins to hold (`ValidFrom`) and where it stops
/// (`ValidTo`), each with the observation it came from. Not where one
/// stretch of a value meets another of the same value (only its source
/// changed). A field whose observations all hold always has none.
pub fn derive_validity_events(
    user: &Uuid,
    entity_type: &str,
    entity_id: &str,
    state: &SnapshotState,
) -> Vec<DerivedEvent> {
    let mut out = Vec::new();
    for field in state.timelines.keys() {
        let stretches = valid_time::history(state, field);
        let continues = |a: &valid_time::Stretch, b: &valid_time::Stretch| {
            a.to.is_some() && a.to == b.from && a.value == b.value
        };
        for (i, stretch) in stretches.iter().enumerate() {
            let starts = i == 0 || !continues(&stretches[i - 1], stretch);
            let stops = stretches
                .get(i + 1)
                .is_none_or(|next| !continues(stretch, next));
            let ends = [
                ("ValidFrom", stretch.from.filter(|_| starts)),
                ("ValidTo", stretch.to.filter(|_| stops)),
            ];
            for (event_type, at) in ends {
                let Some(at) = at else { continue };
                let id_parts = [
                    &user.to_string(),
                    entity_id,
                    field,
                    event_type,
                    &at.to_string(),
                ];
                out.push(DerivedEvent::of_value(
                    derived_uuid("event", &id_parts),
                    event_type.to_string(),
                    at,
                    field,
                    &stretch.provenance,
                    json!({"field": field, "value": stretch.value, "entity_type": entity_type}),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reducer::{reduce, render, Observation};
    use crate::schema::builtin_schemas;

    #[test]
    fn relationship_types() {
        assert_eq!(RelationshipType::all().len(), 7);
        assert_eq!(
            RelationshipType::parse("t", "PART_OF").unwrap(),
            RelationshipType::PartOf
        );
        let e = RelationshipType::parse("relationship_type", "LIKES").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRelationshipType);
        assert!(RelationshipType::PartOf.acyclic());
        assert!(RelationshipType::DependsOn.acyclic());
        assert!(RelationshipType::Supersedes.acyclic());
        assert!(!RelationshipType::RefersTo.acyclic());
        assert!(!RelationshipType::DuplicateOf.acyclic());
    }

    fn invoice_snapshot(fields: Value) -> Rendered {
        let o = Observation {
            id: "o1".into(),
            source_id: "s1".into(),
            observed_at: 1,
            source_priority: 100,
            specificity_score: 0.5,
            fields: fields.as_object().unwrap().clone(),
            confidence: None,
            contests: 0,
            write_order: 0,
            valid_from: None,
            valid_to: None,
        };
        render(&reduce([&o], &Default::default()))
    }

    #[test]
    fn date_fields_become_typed_events() {
        let schema = builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == "invoice")
            .unwrap();
        let user = Uuid::nil();
        let r = invoice_snapshot(
            json!({"invoice_date": "2024-01-15", "date_due": "2024-02-15T00:00:00Z", "currency": "EUR"}),
        );
        let mut events = derive_events(&user, &schema, "ent_x", &r);
        events.sort_by(|a, b| a.event_type.cmp(&b.event_type));
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(types, ["InvoiceDue", "InvoiceIssued"]);
        assert_eq!(
            events[1].timestamp,
            parse_date_or_datetime("2024-01-15").unwrap()
        );
        assert_eq!(events[1].source_id, "s1");
        assert_eq!(events[1].source_field, "invoice_date");
        // Same entity and field, another date: same event, moved.
        let moved = derive_events(
            &user,
            &schema,
            "ent_x",
            &invoice_snapshot(json!({"invoice_date": "2024-03-01"})),
        );
        assert_eq!(moved[0].id, events[1].id);
        assert_ne!(moved[0].timestamp, events[1].timestamp);
    }

    #[test]
    fn a_succession_over_valid_time_is_its_starts_and_ends() {
        let obs = |id: &str, role: &str, from: Option<i64>, to: Option<i64>| Observation {
            valid_from: from,
            valid_to: to,
            ..crate::reducer::tests::obs(id, 1, 100, 0.5, json!({"role": role, "name": "Ann"}))
        };
        let user = Uuid::nil();
        let state = crate::valid_time::reduce(
            &[
                obs("m", "manager", Some(2022), None),
                obs("e", "engineer", Some(2019), Some(2022)),
            ],
            &Default::default(),
        );
        let events: Vec<(String, i64, String, Value)> =
            derive_validity_events(&user, "person", "ent_1", &state)
                .into_iter()
                .filter(|e| e.source_field == "role")
                .map(|e| {
                    (
                        e.event_type,
                        e.timestamp,
                        e.observation_id,
                        e.properties["value"].clone(),
                    )
                })
                .collect();
        assert_eq!(
            events,
            vec![
                ("ValidFrom".into(), 2019, "e".into(), json!("engineer")),
                ("ValidTo".into(), 2022, "e".into(), json!("engineer")),
                ("ValidFrom".into(), 2022, "m".into(), json!("manager")),
            ]
        );
        // The same value from another source where one ends: no event there.
        let state = crate::valid_time::reduce(
            &[
                obs("m", "manager", Some(2022), None),
                obs("e", "engineer", Some(2019), Some(2022)),
                obs("e2", "engineer", Some(2017), Some(2019)),
            ],
            &Default::default(),
        );
        let starts_and_ends: Vec<(String, i64)> =
            derive_validity_events(&user, "person", "ent_1", &state)
                .into_iter()
                .filter(|e| e.source_field == "role")
                .map(|e| (e.event_type, e.timestamp))
                .collect();
        assert_eq!(
            starts_and_ends,
            vec![
                ("ValidFrom".into(), 2017),
                ("ValidTo".into(), 2022),
                ("ValidFrom".into(), 2022),
            ]
        );
        // Fields that hold always have none; ids are distinct and stable.
        let plain = crate::reducer::reduce(
            &[crate::reducer::tests::obs(
                "a",
                1,
                100,
                0.5,
                json!({"role": "x"}),
            )],
            &Default::default(),
        );
        assert!(derive_validity_events(&user, "person", "ent_1", &plain).is_empty());
        let ids: std::collections::BTreeSet<Uuid> =
            derive_validity_events(&user, "person", "ent_1", &state)
                .into_iter()
                .map(|e| e.id)
                .collect();
        // Role: three; name: from 2019 on (the same value since).
        assert_eq!(ids.len(), 4);
    }
}
