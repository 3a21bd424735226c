//! Canonical JSON and content hashes.
//!
//! Identity in Neotoma is derived from content, so the same JSON must always
//! serialise to the same bytes: object keys sorted, no insignificant
//! whitespace, numbers as serde_json prints them. This does not depend on
//! serde_json's `preserve_order` feature, which another crate in a build may
//! switch on.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Serialises `value` canonically (sorted keys, compact).
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 over parts joined with a unit separator, so ("ab","c") and
/// ("a","bc") differ.
pub fn sha256_parts(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0x1f]);
        }
        h.update(p.as_bytes());
    }
    h.finalize().into()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":"é"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{ "a": {"x":"é", "y":[1, 2]}, "b":1 }"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"é","y":[1,2]},"b":1}"#);
    }

    #[test]
    fn array_order_and_number_form_matter() {
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
        assert_ne!(canonical_json(&json!(1)), canonical_json(&json!(1.5)));
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(
            canonical_json(&json!({"a\"b": "c\nd"})),
            r#"{"a\"b":"c\nd"}"#
        );
    }

    #[test]
    fn sha256_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(sha256_parts(&["ab", "c"]), sha256_parts(&["a", "bc"]));
    }
}
