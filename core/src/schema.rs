//! Entity schemas: the fields an entity type has, their types, how identity is
//! derived, how each field is merged by the reducer, and which date fields
//! become timeline events. The registry in the database stores these as JSON;
//! the seeded (built-in) ones come from `schemas/builtin.json`.

use crate::error::{NeotomaError, Result};
use crate::time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    String,
    Number,
    Date,
    Boolean,
    Array,
    Object,
}

impl FieldType {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Number => "number",
            FieldType::Date => "date",
            FieldType::Boolean => "boolean",
            FieldType::Array => "array",
            FieldType::Object => "object",
        }
    }

    /// Whether `value` is of this type. `null` always is: an explicit null
    /// clears a field. Dates are ISO 8601 strings (a date or a date-time).
    pub fn accepts(self, value: &Value) -> bool {
        match (self, value) {
            (_, Value::Null) => true,
            (FieldType::String, Value::String(_)) => true,
            (FieldType::Number, Value::Number(_)) => true,
            (FieldType::Boolean, Value::Bool(_)) => true,
            (FieldType::Array, Value::Array(_)) => true,
            (FieldType::Object, Value::Object(_)) => true,
            (FieldType::Date, Value::String(s)) => time::parse_date_or_datetime(s).is_some(),
            _ => false,
        }
    }

    /// The type a raw value looks like (for raw_fragments), recognising dates.
    pub fn infer(value: &Value) -> Option<FieldType> {
        match value {
            Value::Null => None,
            Value::Bool(_) => Some(FieldType::Boolean),
            Value::Number(_) => Some(FieldType::Number),
            Value::String(s) if time::parse_date_or_datetime(s).is_some() => Some(FieldType::Date),
            Value::String(_) => Some(FieldType::String),
            Value::Array(_) => Some(FieldType::Array),
            Value::Object(_) => Some(FieldType::Object),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldDef {
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Informational: observations are partial by nature, so a store that
    /// lacks a required field is not refused.
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Name of a validator (reserved; not enforced yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validator: Option<String>,
    /// Identity matching keeps this field's letter case.
    #[serde(
        default,
        rename = "preserveCase",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub preserve_case: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    #[default]
    LastWrite,
    HighestPriority,
    MostSpecific,
    MergeArray,
    HighestConfidence,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum TieBreaker {
    #[default]
    ObservedAt,
    SourcePriority,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct MergePolicy {
    pub strategy: Strategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie_breaker: Option<TieBreaker>,
}

/// One level of the identity precedence: a single field, or a composite of
/// fields that must all be present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IdentityRule {
    Field(String),
    Composite { composite: Vec<String> },
}

impl IdentityRule {
    pub fn fields(&self) -> Vec<&str> {
        match self {
            IdentityRule::Field(f) => vec![f.as_str()],
            IdentityRule::Composite { composite } => composite.iter().map(String::as_str).collect(),
        }
    }
}

/// A date field whose value is an event on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemporalField {
    pub field: String,
    pub event_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntitySchema {
    pub entity_type: String,
    pub schema_version: String,
    #[serde(default)]
    pub description: String,
    pub fields: BTreeMap<String, FieldDef>,
    /// Per-field merge policy; fields not listed use `last_write`.
    #[serde(default)]
    pub merge_policies: BTreeMap<String, MergePolicy>,
    /// Identity precedence: the first rule whose fields are all present
    /// decides the entity's id.
    #[serde(default)]
    pub identity: Vec<IdentityRule>,
    /// Date fields that produce timeline events; other date fields produce
    /// events named after the field in CamelCase.
    #[serde(default)]
    pub temporal_fields: Vec<TemporalField>,
}

impl EntitySchema {
    /// What of the schema decides the data derived from observations:
    /// merge policies (snapshots), identity rules and case handling
    /// (identifiers), date fields and their event types (timeline). Two
    /// schemas with the same derivation derive the same data, so changing
    /// anything else (descriptions, new non-date fields) recomputes nothing.
    pub fn derivation(&self) -> serde_json::Value {
        let dates: Vec<&String> = self
            .fields
            .iter()
            .filter(|(_, d)| d.field_type == FieldType::Date)
            .map(|(k, _)| k)
            .collect();
        let preserve_case: Vec<&String> = self
            .fields
            .iter()
            .filter(|(_, d)| d.preserve_case)
            .map(|(k, _)| k)
            .collect();
        serde_json::json!({
            "merge_policies": self.merge_policies,
            "identity": self.identity,
            "temporal_fields": self.temporal_fields,
            "date_fields": dates,
            "preserve_case": preserve_case,
        })
    }

    pub fn policy(&self, field: &str) -> MergePolicy {
        self.merge_policies.get(field).copied().unwrap_or_default()
    }

    /// The event type a date field produces, if it is a date field.
    pub fn event_type(&self, field: &str) -> Option<String> {
        if self.fields.get(field)?.field_type != FieldType::Date {
            return None;
        }
        Some(
            self.temporal_fields
                .iter()
                .find(|t| t.field == field)
                .map(|t| t.event_type.clone())
                .unwrap_or_else(|| camel_case(field)),
        )
    }

    /// Checks that the definition is coherent: names are sane, every field
    /// named by a policy, identity rule or temporal field exists, temporal
    /// fields are dates. Errors name the offending field.
    pub fn validate(&self) -> Result<()> {
        check_name("entity_type", &self.entity_type)?;
        if self.schema_version.trim().is_empty() {
            return Err(NeotomaError::invalid_field(
                "schema_version",
                "schema_version must not be empty",
            ));
        }
        if self.schema_version.len() > crate::limits::MAX_VERSION_BYTES {
            return Err(NeotomaError::invalid_field(
                "schema_version",
                format!(
                    "schema_version is at most {} bytes",
                    crate::limits::MAX_VERSION_BYTES
                ),
            ));
        }
        if self.fields.is_empty() {
            return Err(NeotomaError::invalid_field(
                "fields",
                "a schema needs at least one field",
            ));
        }
        for name in self.fields.keys() {
            check_name("fields", name)?;
            if name == "entity_type" {
                return Err(NeotomaError::invalid_field(
                    "fields.entity_type",
                    "`entity_type` is reserved and cannot be a field",
                ));
            }
        }
        let known = |place: &str, f: &str| -> Result<()> {
            if self.fields.contains_key(f) {
                Ok(())
            } else {
                Err(NeotomaError::invalid_field(
                    &format!("{place}.{f}"),
                    format!("{place} names `{f}`, which is not a field of the schema"),
                ))
            }
        };
        for f in self.merge_policies.keys() {
            known("merge_policies", f)?;
        }
        for rule in &self.identity {
            if rule.fields().is_empty() {
                return Err(NeotomaError::invalid_field(
                    "identity",
                    "an identity composite needs fields",
                ));
            }
            for f in rule.fields() {
                known("identity", f)?;
            }
        }
        for t in &self.temporal_fields {
            known("temporal_fields", &t.field)?;
            if self.fields[&t.field].field_type != FieldType::Date {
                return Err(NeotomaError::invalid_field(
                    &format!("temporal_fields.{}", t.field),
                    format!("temporal field `{}` must have type date", t.field),
                ));
            }
            check_name("temporal_fields.event_type", &t.event_type)?;
        }
        Ok(())
    }

    /// Number of schema fields `fields` gives a non-null value, over the
    /// number of fields in the schema: the observation's specificity.
    pub fn specificity(&self, fields: &serde_json::Map<String, Value>) -> f64 {
        let given = fields
            .iter()
            .filter(|(k, v)| !v.is_null() && self.fields.contains_key(*k))
            .count();
        given as f64 / self.fields.len().max(1) as f64
    }
}

/// Checks a schema row as it is stored (`entity_schemas`: its type, its
/// version and its definition), as an import reads it: the definition
/// must read as a schema, be coherent ([`EntitySchema::validate`]) and be
/// of the row's type and version. Answers the schema.
pub fn check_stored(
    entity_type: &str,
    schema_version: &str,
    definition: &Value,
) -> Result<EntitySchema> {
    let schema: EntitySchema = serde_json::from_value(definition.clone()).map_err(|e| {
        NeotomaError::invalid_field("definition", format!("the definition is not a schema: {e}"))
    })?;
    schema.validate()?;
    if schema.entity_type != entity_type || schema.schema_version != schema_version {
        return Err(NeotomaError::invalid_field(
            "definition",
            format!(
                "the definition is of {} version {}, the row of {entity_type} version {schema_version}",
                schema.entity_type, schema.schema_version
            ),
        ));
    }
    Ok(schema)
}

/// Names of types, fields and events: letters, digits and `_`, starting with
/// a letter, at most 100 characters.
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(NeotomaError::invalid_field(
            what,
            format!("`{name}` is not a valid name for {what} (letters, digits and _, starting with a letter)"),
        ))
    }
}

/// `invoice_date` → `InvoiceDate`.
pub fn camel_case(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The schemas seeded into every database: the types of the specification.
pub fn builtin_schemas() -> Vec<EntitySchema> {
    serde_json::from_str(include_str!("../schemas/builtin.json"))
        .expect("schemas/builtin.json is valid (checked by unit tests)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_schemas_are_valid_and_cover_the_spec_types() {
        let schemas = builtin_schemas();
        for s in &schemas {
            s.validate()
                .unwrap_or_else(|e| panic!("{}: {e}", s.entity_type));
            assert!(
                !s.description.is_empty(),
                "{} needs a description",
                s.entity_type
            );
            assert!(
                !s.identity.is_empty(),
                "{} needs identity rules",
                s.entity_type
            );
        }
        let names: Vec<&str> = schemas.iter().map(|s| s.entity_type.as_str()).collect();
        for t in [
            "invoice",
            "transaction",
            "receipt",
            "contract",
            "note",
            "person",
            "company",
            "contact",
            "task",
            "feature_unit",
            "release",
            "agent_decision",
            "agent_session",
            "validation_result",
            "codebase_entity",
            "architectural_decision",
        ] {
            assert!(names.contains(&t), "missing seeded type {t}");
        }
    }

    #[test]
    fn docs_list_every_seeded_type_and_its_timeline_events() {
        let doc = include_str!("../../docs/entity-types.md");
        for s in builtin_schemas() {
            assert!(
                doc.contains(&format!("## {}\n", s.entity_type)),
                "docs/entity-types.md lacks {}",
                s.entity_type
            );
            for (field, def) in &s.fields {
                if def.field_type == FieldType::Date {
                    let event = s.event_type(field).unwrap();
                    let line = format!("`{field}` → `{event}`");
                    assert!(
                        doc.contains(&line),
                        "docs/entity-types.md lacks {line} for {}",
                        s.entity_type
                    );
                }
            }
        }
    }

    #[test]
    fn field_types_accept_their_values_and_null() {
        assert!(FieldType::String.accepts(&json!("x")));
        assert!(!FieldType::String.accepts(&json!(1)));
        assert!(FieldType::Number.accepts(&json!(1.5)));
        assert!(!FieldType::Number.accepts(&json!("1.5")));
        assert!(FieldType::Date.accepts(&json!("2024-01-15")));
        assert!(FieldType::Date.accepts(&json!("2024-01-15T10:00:00Z")));
        assert!(!FieldType::Date.accepts(&json!("15/01/2024")));
        assert!(!FieldType::Date.accepts(&json!(20240115)));
        assert!(FieldType::Boolean.accepts(&json!(true)));
        assert!(FieldType::Array.accepts(&json!([1])));
        assert!(FieldType::Object.accepts(&json!({})));
        for t in [FieldType::String, FieldType::Date, FieldType::Object] {
            assert!(t.accepts(&Value::Null));
        }
        assert_eq!(
            FieldType::infer(&json!("2024-02-01")),
            Some(FieldType::Date)
        );
        assert_eq!(FieldType::infer(&json!("hello")), Some(FieldType::String));
        assert_eq!(FieldType::infer(&Value::Null), None);
    }

    #[test]
    fn invalid_definitions_name_the_field() {
        let mut s = builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == "invoice")
            .unwrap();
        s.merge_policies
            .insert("nope".into(), MergePolicy::default());
        assert_eq!(
            s.validate().unwrap_err().details["field"],
            "merge_policies.nope"
        );

        let mut s = builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == "invoice")
            .unwrap();
        s.temporal_fields.push(TemporalField {
            field: "currency".into(),
            event_type: "X".into(),
        });
        assert_eq!(
            s.validate().unwrap_err().details["field"],
            "temporal_fields.currency"
        );

        assert!(check_name("entity_type", "9lives").is_err());
        assert!(check_name("entity_type", "has space").is_err());
        assert!(check_name("entity_type", "meal_plan").is_ok());
    }

    #[test]
    fn event_types_come_from_temporal_fields_or_the_field_name() {
        let s = builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == "invoice")
            .unwrap();
        assert_eq!(
            s.event_type("invoice_date").as_deref(),
            Some("InvoiceIssued")
        );
        assert_eq!(s.event_type("date_due").as_deref(), Some("InvoiceDue"));
        assert_eq!(s.event_type("currency"), None);
        assert_eq!(camel_case("first_contact_date"), "FirstContactDate");
    }

    #[test]
    fn specificity_counts_non_null_schema_fields() {
        let s = builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == "invoice")
            .unwrap();
        let n = s.fields.len() as f64;
        let fields = json!({"invoice_number": "1", "currency": null, "bogus": 1});
        assert_eq!(s.specificity(fields.as_object().unwrap()), 1.0 / n);
    }
}
