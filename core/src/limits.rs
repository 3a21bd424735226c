//! Limits every request shares, checked before anything is written, so that
//! no input reaches Postgres in a shape it would refuse with an error of its
//! own (index rows too large, strings with NUL, recursion): such input gets a
//! `VALIDATION_ERROR` that names the field instead.

use crate::error::{NeotomaError, Result};
use serde_json::Value;

/// Deepest nesting of arrays and objects in a request.
pub const MAX_DEPTH: usize = 32;
/// Longest object key (field names, metadata keys), in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest identity value (what `retrieve_entity_by_identifier` looks up),
/// in bytes.
pub const MAX_IDENTIFIER_BYTES: usize = 1000;
/// Longest schema version, in bytes.
pub const MAX_VERSION_BYTES: usize = 64;

/// Checks nesting depth, key lengths and the absence of NUL characters
/// (Postgres text and jsonb cannot hold them) anywhere in `args`.
pub fn check_input(args: &Value) -> Result<()> {
    check(args, &mut String::new(), 0)
}

fn check(v: &Value, path: &mut String, depth: usize) -> Result<()> {
    let field = |path: &str| {
        if path.is_empty() {
            "arguments".to_string()
        } else {
            path.to_string()
        }
    };
    match v {
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            Err(NeotomaError::invalid_field(
                &field(path),
                format!("the input nests deeper than {MAX_DEPTH} levels of arrays and objects"),
            )
            .with("max_depth", MAX_DEPTH)
            .with("got", items_depth(v)))
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check(item, path, depth + 1)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&shorten(key));
                if key.contains('\0') {
                    return Err(nul(path));
                }
                if key.len() > MAX_KEY_BYTES {
                    return Err(NeotomaError::invalid_field(
                        path,
                        format!(
                            "field names are at most {MAX_KEY_BYTES} bytes; this one is {}",
                            key.len()
                        ),
                    )
                    .with("max_bytes", MAX_KEY_BYTES));
                }
                check(item, path, depth + 1)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::String(s) if s.contains('\0') => Err(nul(&field(path))),
        _ => Ok(()),
    }
}

fn nul(path: &str) -> NeotomaError {
    NeotomaError::invalid_field(path, "text must not contain the NUL character (\\u0000)")
}

/// A key as it appears in an error: at most 64 characters, NUL shown as
/// U+FFFD (an error's text must be storable as Postgres text too).
fn shorten(key: &str) -> String {
    let key = key.replace('\0', "\u{FFFD}");
    match key.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &key[..i]),
        None => key,
    }
}

/// How deep a value nests (for the error's details), counted without
/// recursion so that any depth serde produced can be measured.
fn items_depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Parses the JSON text of a request: a syntax error, a number out of
/// range or nesting deeper than serde follows is a `VALIDATION_ERROR`, never
/// a crash; then [`check_input`].
pub fn parse_input(text: &str) -> Result<Value> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let reason = if message.contains("recursion limit") {
            format!("the input nests deeper than {MAX_DEPTH} levels of arrays and objects")
        } else if message.contains("number out of range") {
            "a number is out of range (numbers must fit a 64-bit float)".to_string()
        } else {
            format!("the arguments are not valid JSON: {message}")
        };
        NeotomaError::validation(reason).with("field", "arguments")
    })?;
    check_input(&v)?;
    Ok(v)
}

/// Replaces NUL characters in every string and key of `v` with U+FFFD:
/// what an interpreter read from a file is stored, not refused, even when
/// the file holds bytes Postgres text cannot.
pub fn scrub_nul(v: &mut Value) {
    const REPLACEMENT: &str = "\u{FFFD}";
    match v {
        Value::String(s) if s.contains('\0') => *s = s.replace('\0', REPLACEMENT),
        Value::Array(items) => items.iter_mut().for_each(scrub_nul),
        Value::Object(map) => {
            if map.keys().any(|k| k.contains('\0')) {
                let entries = std::mem::take(map);
                for (k, mut item) in entries {
                    scrub_nul(&mut item);
                    map.insert(k.replace('\0', REPLACEMENT), item);
                }
            } else {
                map.values_mut().for_each(scrub_nul);
            }
        }
        _ => {}
    }
}

/// `value` cut to at most `max` bytes at a character boundary.
pub fn truncate_bytes(value: &str, max: usize) -> &str {
    if value.len() <= max {
        return value;
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..levels {
            v = json!([v]);
        }
        v
    }

    #[test]
    fn depth_is_bounded() {
        assert!(check_input(&json!({"a": nested(MAX_DEPTH - 1)})).is_ok());
        let e = check_input(&json!({"entities": [{"x": nested(MAX_DEPTH)}]})).unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationError);
        assert!(
            e.details["field"]
                .as_str()
                .unwrap()
                .starts_with("entities[0].x"),
            "{e:?}"
        );
    }

    #[test]
    fn nul_and_long_keys_are_refused_with_the_field() {
        let e = check_input(&json!({"entities": [{"name": "a\u{0}b"}]})).unwrap_err();
        assert_eq!(e.details["field"], "entities[0].name");
        let e = check_input(&json!({"a\u{0}": 1})).unwrap_err();
        assert_eq!(e.details["field"], "a\u{FFFD}");
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        let e = check_input(&json!({ "entities": [{ long.clone(): 1 }] })).unwrap_err();
        assert!(e.message.contains("at most"), "{}", e.message);
        assert!(check_input(&json!({ "x": { "k".repeat(MAX_KEY_BYTES): "fine" } })).is_ok());
    }

    #[test]
    fn text_that_serde_refuses_is_a_validation_error() {
        for bad in [
            "{\"a\": 1e400}",
            "{\"a\": ",
            &"[".repeat(200),
            &"[".repeat(100_000),
        ] {
            let e = parse_input(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationError, "{bad:.20}");
        }
        assert_eq!(parse_input("{\"a\": 1e300}").unwrap()["a"], json!(1e300));
    }

    #[test]
    fn nul_is_scrubbed_from_strings_and_keys() {
        let mut v = json!({"a\u{0}b": ["x\u{0}", {"k": "\u{0}"}], "ok": 1});
        scrub_nul(&mut v);
        assert!(check_input(&v).is_ok());
        assert_eq!(v["a\u{FFFD}b"][0], "x\u{FFFD}");
        assert_eq!(v["ok"], 1);
    }

    #[test]
    fn truncates_at_char_boundaries() {
        assert_eq!(truncate_bytes("héllo", 2), "h");
        assert_eq!(truncate_bytes("héllo", 3), "hé");
        assert_eq!(truncate_bytes("hi", 10), "hi");
    }
}
