//! Turning a JSON request into a typed one, and a typed one into JSON Schema.
//!
//! Each action's request is a Rust struct. The same struct validates input
//! (serde, with the path of the bad field in the error) and publishes the
//! input schema in the action catalog (schemars), so the two cannot drift.

use crate::error::{NeotomaError, Result};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses `args` into `T`, mapping serde's complaint to a `VALIDATION_ERROR`
/// that names the field.
pub fn parse<T: DeserializeOwned>(args: &Value) -> Result<T> {
    if !args.is_object() {
        return Err(NeotomaError::validation(format!(
            "arguments must be a JSON object, got {}",
            json_type(args)
        )));
    }
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde reports a missing field at the parent's path; name the field.
        let missing = inner
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
            .map(str::to_string);
        let field = match (path.as_str(), missing) {
            (".", m) => m,
            (p, Some(m)) => Some(format!("{p}.{m}")),
            (p, None) => Some(p.to_string()),
        };
        let message = match &field {
            Some(f) => format!("invalid argument `{f}`: {inner}"),
            None => format!("invalid arguments: {inner}"),
        };
        let err = NeotomaError::validation(message).with("reason", inner);
        match field {
            Some(f) => err.with("field", f),
            None => err,
        }
    })
}

/// The JSON type name of a value, for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// JSON Schema (draft 2020-12, sub-schemas inlined, no `$schema`/`title`
/// noise) for `T`, as MCP clients expect in `inputSchema`/`outputSchema`.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
    }
    objects_for_any(&mut schema);
    schema
}

/// schemars writes "any value" as the boolean schema `true`; some MCP clients
/// and validators accept only object schemas for properties and items, so
/// those become `{}` (which means the same).
fn objects_for_any(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for p in props.values_mut() {
            if *p == Value::Bool(true) {
                *p = Value::Object(Default::default());
            }
            objects_for_any(p);
        }
    }
    if let Some(items) = map.get_mut("items") {
        if *items == Value::Bool(true) {
            *items = Value::Object(Default::default());
        }
        objects_for_any(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alternatives)) = map.get_mut(key) {
            alternatives.iter_mut().for_each(objects_for_any);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only parsed and described
    struct Example {
        /// How many.
        limit: Option<u32>,
        name: String,
    }

    #[test]
    fn names_the_bad_field() {
        let err = parse::<Example>(&json!({"name": "x", "limit": "ten"})).unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::ValidationError);
        assert_eq!(err.details["field"], "limit");
        assert!(err.message.contains("limit"), "{}", err.message);
    }

    #[test]
    fn refuses_unknown_and_missing_fields_and_non_objects() {
        let e = parse::<Example>(&json!({"name": "x", "bogus": 1})).unwrap_err();
        assert!(e.message.contains("bogus"), "{}", e.message);
        let e = parse::<Example>(&json!({})).unwrap_err();
        assert!(e.message.contains("name"), "{}", e.message);
        assert_eq!(e.details["field"], "name");
        let e = parse::<Example>(&json!([1])).unwrap_err();
        assert!(e.message.contains("array"), "{}", e.message);
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct AnyValue {
        value: Value,
        values: Vec<Value>,
    }

    #[test]
    fn any_value_is_an_object_schema() {
        let s = schema_for::<AnyValue>();
        assert_eq!(s["properties"]["value"], json!({}));
        assert_eq!(s["properties"]["values"]["items"], json!({}));
    }

    #[test]
    fn schema_is_an_object_schema_with_descriptions() {
        let s = schema_for::<Example>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["name"]));
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["limit"]["description"], "How many.");
        assert!(s.get("$schema").is_none());
    }
}
