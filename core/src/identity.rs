//! Entity resolution: which entity a set of fields is about.
//!
//! A schema lists identity rules in precedence order (e.g. person: email, then
//! phone, then external_id, then first+last name, then name). The first rule
//! whose fields are all present decides the identity key, built from the
//! *normalised* values (trimmed, lower-cased, whitespace collapsed; e-mails,
//! phones and web addresses in their canonical forms), so "Alice@Example.com "
//! and "alice@example.com" are the same person. With no rule satisfied the key
//! is the canonical JSON of the schema fields: same content, same entity.

use crate::canonical::{canonical_json, sha256_hex};
use crate::ids;
use crate::schema::EntitySchema;
use serde_json::{Map, Value};
use uuid::Uuid;

/// Who an entity is: its id, the key it was derived from and a display name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub entity_id: String,
    pub identity_key: String,
    pub canonical_name: String,
}

impl Identity {
    /// Whether no identity rule held: the content identifies it.
    pub fn by_content(&self) -> bool {
        self.identity_key.starts_with(CONTENT_KEY)
    }
}

/// How the key of an entity identified by its content starts.
const CONTENT_KEY: &str = "content=";

/// Collapses whitespace and trims; lower-cases unless `preserve_case`.
pub fn normalize_text(s: &str, preserve_case: bool) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if preserve_case {
        collapsed
    } else {
        collapsed.to_lowercase()
    }
}

/// `+1 (555) 010-2030` → `+15550102030`.
pub fn normalize_phone(s: &str) -> String {
    let plus = s.trim_start().starts_with('+');
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if plus {
        format!("+{digits}")
    } else {
        digits
    }
}

/// `https://www.Example.com/` → `example.com`.
pub fn normalize_url(s: &str) -> String {
    let lower = normalize_text(s, false);
    let no_scheme = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .unwrap_or(&lower);
    let no_www = no_scheme.strip_prefix("www.").unwrap_or(no_scheme);
    no_www.trim_end_matches('/').to_string()
}

/// Which normalisation a field's values get (and so which form of a typed
/// identifier can match them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum IdentifierKind {
    Text,
    Phone,
    Url,
}

impl IdentifierKind {
    pub fn of(field: &str) -> IdentifierKind {
        if field == "phone" || field.ends_with("_phone") {
            IdentifierKind::Phone
        } else if field == "website" || field.ends_with("_url") || field == "url" {
            IdentifierKind::Url
        } else {
            IdentifierKind::Text
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            IdentifierKind::Text => "text",
            IdentifierKind::Phone => "phone",
            IdentifierKind::Url => "url",
        }
    }
}

fn is_phone_field(field: &str) -> bool {
    IdentifierKind::of(field) == IdentifierKind::Phone
}

fn is_url_field(field: &str) -> bool {
    IdentifierKind::of(field) == IdentifierKind::Url
}

/// The form of a typed identifier that each kind of field is searched with
/// for a partial match (a phone form only when it has five digits or more).
pub fn partial_forms(identifier: &str) -> Vec<(IdentifierKind, String)> {
    let mut out = vec![
        (IdentifierKind::Text, normalize_text(identifier, false)),
        (IdentifierKind::Url, normalize_url(identifier)),
    ];
    let phone = normalize_phone(identifier);
    if phone.trim_start_matches('+').len() >= 5 {
        out.push((IdentifierKind::Phone, phone));
    }
    out.retain(|(_, s)| !s.is_empty());
    out
}

/// Characters in a gram of an identifier value (see [`value_grams`]).
const GRAM: usize = 3;
/// The most grams of one form a partial lookup asks the index for: any of
/// them narrows the candidates, and the LIKE that follows decides.
const MOST_QUERY_GRAMS: usize = 32;

/// The distinct runs of three characters of an identifier value, sorted:
/// what the index of partial identifier lookups keeps of each value
/// (`neotoma._value_grams`), so that a value containing a form has every
/// gram of the form.
pub fn value_grams(value: &str) -> Vec<String> {
    let chars: Vec<char> = value.chars().collect();
    let grams: std::collections::BTreeSet<String> =
        chars.windows(GRAM).map(|w| w.iter().collect()).collect();
    grams.into_iter().collect()
}

/// The text search query (tsquery text) a value's grams must answer to
/// contain one of `forms`: for each form, its grams all present, the forms
/// alternatives. None when a form is shorter than a gram: the index cannot
/// narrow that one, and every value is read.
pub fn grams_query<'a>(forms: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut alternatives = Vec::new();
    for form in forms {
        let grams = value_grams(form);
        if grams.is_empty() {
            return None;
        }
        let all: Vec<String> = grams
            .iter()
            .take(MOST_QUERY_GRAMS)
            .map(|g| format!("'{}'", g.replace('\\', "\\\\").replace('\'', "''")))
            .collect();
        alternatives.push(format!("({})", all.join(" & ")));
    }
    (!alternatives.is_empty()).then(|| alternatives.join(" | "))
}

/// The normalised form of one field's value, or None when the value cannot
/// identify anything (null, empty, arrays, objects).
pub fn normalize_value(field: &str, value: &Value, preserve_case: bool) -> Option<String> {
    let s = match value {
        Value::String(s) => {
            if is_phone_field(field) {
                normalize_phone(s)
            } else if is_url_field(field) {
                normalize_url(s)
            } else {
                normalize_text(s, preserve_case)
            }
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

fn preserve_case(schema: &EntitySchema, field: &str) -> bool {
    schema.fields.get(field).is_some_and(|f| f.preserve_case)
}

/// Derives the identity of an entity of `schema` with these (schema) fields,
/// in the `default` workspace.
pub fn resolve(user_id: &Uuid, schema: &EntitySchema, fields: &Map<String, Value>) -> Identity {
    resolve_in(user_id, crate::workspace::DEFAULT, schema, fields)
}

/// How a person names the thing: its `name`, else its `title` (spaces
/// tidied, at most 200 characters), when it has one. A person stored with
/// a name and an e-mail is named by the name, though the e-mail identifies
/// them.
fn display_name(fields: &Map<String, Value>) -> Option<String> {
    ["name", "title"].iter().find_map(|f| {
        let s = fields.get(*f)?.as_str()?;
        let tidy = s.split_whitespace().collect::<Vec<_>>().join(" ");
        (!tidy.is_empty()).then(|| tidy.chars().take(200).collect())
    })
}

/// [`resolve`] within `workspace`: the same identity in two workspaces is
/// two entities (ids::entity_id_in).
pub fn resolve_in(
    user_id: &Uuid,
    workspace: &str,
    schema: &EntitySchema,
    fields: &Map<String, Value>,
) -> Identity {
    for rule in &schema.identity {
        let parts: Option<Vec<(&str, String, String)>> = rule
            .fields()
            .into_iter()
            .map(|f| {
                let v = fields.get(f)?;
                let norm = normalize_value(f, v, preserve_case(schema, f))?;
                let display = match v {
                    Value::String(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
                    other => other.to_string(),
                };
                Some((f, norm, display))
            })
            .collect();
        if let Some(parts) = parts {
            let identity_key = parts
                .iter()
                .map(|(f, n, _)| format!("{f}={n}"))
                .collect::<Vec<_>>()
                .join("|");
            let canonical_name = display_name(fields).unwrap_or_else(|| {
                parts
                    .iter()
                    .map(|(_, _, d)| d.as_str())
                    .collect::<Vec<_>>()
                    .join(" · ")
            });
            return Identity {
                entity_id: ids::entity_id_in(
                    user_id,
                    workspace,
                    &schema.entity_type,
                    &identity_key,
                ),
                identity_key,
                canonical_name,
            };
        }
    }
    let content = canonical_json(&Value::Object(fields.clone()));
    let digest = sha256_hex(content.as_bytes());
    let identity_key = format!("{CONTENT_KEY}{digest}");
    let canonical_name = display_name(fields)
        .or_else(|| {
            fields
                .values()
                .find_map(|v| v.as_str().filter(|s| !s.trim().is_empty()))
                .map(|s| s.chars().take(80).collect::<String>())
        })
        .unwrap_or_else(|| format!("{} {}", schema.entity_type, &digest[..8]));
    Identity {
        entity_id: ids::entity_id_in(user_id, workspace, &schema.entity_type, &identity_key),
        identity_key,
        canonical_name,
    }
}

/// The identifiers an entity can be found by: every identity-rule field the
/// snapshot has, normalised, as (field, value) pairs, sorted and unique.
pub fn identifiers(schema: &EntitySchema, snapshot: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = schema
        .identity
        .iter()
        .flat_map(|r| r.fields())
        .filter_map(|f| {
            let v = snapshot.get(f)?;
            Some((
                f.to_string(),
                normalize_value(f, v, preserve_case(schema, f))?,
            ))
        })
        // An identifier longer than any lookup may be is not indexed (the
        // value stays in the snapshot).
        .filter(|(_, v)| v.len() <= crate::limits::MAX_IDENTIFIER_BYTES)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The forms an identifier typed by someone may match: as text, as a phone
/// number and as a web address.
pub fn identifier_candidates(identifier: &str) -> Vec<String> {
    let mut c = vec![normalize_text(identifier, false), normalize_url(identifier)];
    let phone = normalize_phone(identifier);
    if phone.trim_start_matches('+').len() >= 5 {
        c.push(phone);
    }
    c.retain(|s| !s.is_empty());
    c.sort();
    c.dedup();
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::builtin_schemas;
    use serde_json::json;

    #[test]
    fn value_grams_are_the_distinct_runs_of_three_characters() {
        assert_eq!(value_grams("abcab"), vec!["abc", "bca", "cab"]);
        assert_eq!(value_grams("ab"), Vec::<String>::new());
        assert_eq!(value_grams("éßx"), vec!["éßx"]);
        // A form inside a value: its grams are among the value's.
        let value = value_grams("ops-g17z02bcc58b@example.com");
        assert!(value_grams("17z02").iter().all(|g| value.contains(g)));
    }

    #[test]
    fn grams_query_asks_every_gram_of_a_form_and_any_form() {
        assert_eq!(
            grams_query(["abcd", "xyz"]).as_deref(),
            Some("('abc' & 'bcd') | ('xyz')")
        );
        // Quotes and backslashes are escaped as tsquery reads them.
        assert_eq!(grams_query(["a'\\"]).as_deref(), Some("('a''\\\\')"));
        // A form too short for a gram: no narrowing.
        assert_eq!(grams_query(["abc", "ab"]), None);
        assert_eq!(grams_query([]), None);
        let long = "x".repeat(10) + &"abcdefghijklmnopqrstuvwxyz0123456789".repeat(2);
        assert!(grams_query([long.as_str()]).unwrap().matches(" & ").count() < MOST_QUERY_GRAMS);
    }

    fn schema(t: &str) -> EntitySchema {
        builtin_schemas()
            .into_iter()
            .find(|s| s.entity_type == t)
            .unwrap()
    }

    fn fields(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn user() -> Uuid {
        Uuid::from_bytes([7; 16])
    }

    #[test]
    fn normalisation_forms() {
        assert_eq!(normalize_text("  Alice   SMITH ", false), "alice smith");
        assert_eq!(normalize_text(" Alice  Smith", true), "Alice Smith");
        assert_eq!(normalize_phone("+1 (555) 010-2030"), "+15550102030");
        assert_eq!(normalize_url("https://www.Example.com/"), "example.com");
        assert_eq!(
            normalize_value("amount", &json!(100.0), false).as_deref(),
            Some("100")
        );
        assert_eq!(
            normalize_value("amount", &json!(100.5), false).as_deref(),
            Some("100.5")
        );
        assert_eq!(normalize_value("name", &json!("  "), false), None);
        assert_eq!(normalize_value("name", &json!(null), false), None);
    }

    #[test]
    fn the_first_satisfied_rule_decides() {
        let p = schema("person");
        let by_email = resolve(
            &user(),
            &p,
            &fields(json!({"email": " Alice@Example.com", "name": "Alice"})),
        );
        assert_eq!(by_email.identity_key, "email=alice@example.com");
        // Identified by the e-mail, named by the name.
        assert_eq!(by_email.canonical_name, "Alice");
        let no_name = resolve(&user(), &p, &fields(json!({"email": " Alice@Example.com"})));
        assert_eq!(no_name.canonical_name, "Alice@Example.com");
        let by_name = resolve(&user(), &p, &fields(json!({"name": "Alice  Smith"})));
        assert_eq!(by_name.identity_key, "name=alice smith");
        let composite = resolve(
            &user(),
            &p,
            &fields(json!({"first_name": "A", "last_name": "S", "name": "x"})),
        );
        assert_eq!(composite.identity_key, "first_name=a|last_name=s");
    }

    #[test]
    fn same_thing_from_two_sources_is_one_entity() {
        let inv = schema("invoice");
        let a = resolve(
            &user(),
            &inv,
            &fields(
                json!({"invoice_number": "INV-001", "vendor_name": "Acme Corp", "amount_due": 10}),
            ),
        );
        let b = resolve(
            &user(),
            &inv,
            &fields(
                json!({"invoice_number": "inv-001 ", "vendor_name": "ACME  corp", "currency": "EUR"}),
            ),
        );
        assert_eq!(a.entity_id, b.entity_id);
        let other_vendor = resolve(
            &user(),
            &inv,
            &fields(json!({"invoice_number": "INV-001", "vendor_name": "Globex"})),
        );
        assert_ne!(a.entity_id, other_vendor.entity_id);
    }

    #[test]
    fn without_identity_fields_content_decides() {
        let n = schema("note");
        let a = resolve(&user(), &n, &fields(json!({"content": "buy milk"})));
        let b = resolve(&user(), &n, &fields(json!({"content": "buy milk"})));
        let c = resolve(&user(), &n, &fields(json!({"content": "buy bread"})));
        assert_eq!(a, b);
        assert_ne!(a.entity_id, c.entity_id);
        assert!(a.identity_key.starts_with("content=") && a.by_content());
        assert_eq!(a.canonical_name, "buy milk");
    }

    #[test]
    fn identifiers_and_candidates_meet() {
        let p = schema("person");
        let ids = identifiers(
            &p,
            &fields(
                json!({"email": "A@B.co", "phone": "+44 20 1234 5678", "name": "Ann Lee", "role": "x"}),
            ),
        );
        assert_eq!(
            ids,
            vec![
                ("email".to_string(), "a@b.co".to_string()),
                ("name".to_string(), "ann lee".to_string()),
                ("phone".to_string(), "+442012345678".to_string()),
            ]
        );
        assert!(identifier_candidates(" ANN  lee").contains(&"ann lee".to_string()));
        assert!(identifier_candidates("+44 (20) 1234-5678").contains(&"+442012345678".to_string()));
        assert!(identifier_candidates("http://www.acme.com/").contains(&"acme.com".to_string()));
        // Each kind of field is searched with its own form: a name fragment
        // with digits is text, not a phone number.
        let forms = partial_forms("g17z02bcc58b");
        assert!(forms.contains(&(IdentifierKind::Text, "g17z02bcc58b".to_string())));
        assert!(forms.contains(&(IdentifierKind::Phone, "170258".to_string())));
        assert_eq!(IdentifierKind::of("mobile_phone"), IdentifierKind::Phone);
        assert_eq!(IdentifierKind::of("website"), IdentifierKind::Url);
        assert_eq!(IdentifierKind::of("email"), IdentifierKind::Text);
    }
}
