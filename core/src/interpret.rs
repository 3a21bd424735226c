//! Built-in interpreters: deterministic readers that turn a file's bytes into
//! entities (JSON objects with an `entity_type`), with no network and no
//! model. Same bytes and config, same entities in the same order.
//!
//! | MIME type | reader | entities |
//! | --- | --- | --- |
//! | application/json | JSON | objects (or `entities` array, or array of objects); the type is `entity_type`, else inferred from the fields |
//! | text/csv, text/tab-separated-values | CSV/TSV | one per row; type from `interpretation_config.entity_type`, an `entity_type` column, or inferred from the headers |
//! | text/vcard | vCard | one `contact` per card |
//! | text/calendar | iCalendar | an `event` per VEVENT, a `task` per VTODO |
//! | message/rfc822 | e-mail | a `note` (subject, body, date) and a `contact` per address |
//! | text/plain, text/markdown | text | one `note` (title from the first heading or line) |

use crate::schema::{EntitySchema, FieldType};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::io::BufReader;

/// The built-in interpreter for a MIME type, if there is one.
pub fn interpreter_for(mime_type: &str) -> Option<&'static str> {
    Some(match mime_type {
        "application/json" | "text/json" => "json",
        "text/csv" => "csv",
        "text/tab-separated-values" => "tsv",
        "text/vcard" | "text/x-vcard" | "text/directory" => "vcard",
        "text/calendar" => "icalendar",
        "message/rfc822" => "email",
        "text/plain" | "text/markdown" | "text/x-markdown" => "text",
        _ => return None,
    })
}

/// Lower-case, parameters dropped: `Text/CSV; charset=utf-8` → `text/csv`.
pub fn normalize_mime(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The MIME type of a file: from its content when recognisable (magic
/// numbers), else from its name's extension, else text/plain for UTF-8 text,
/// else application/octet-stream.
pub fn detect_mime(bytes: &[u8], filename: Option<&str>) -> String {
    if let Some(kind) = infer::get(bytes) {
        return kind.mime_type().to_string();
    }
    let ext = filename
        .and_then(|f| f.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase());
    let by_ext = match ext.as_deref() {
        Some("json") => Some("application/json"),
        Some("csv") => Some("text/csv"),
        Some("tsv" | "tab") => Some("text/tab-separated-values"),
        Some("vcf" | "vcard") => Some("text/vcard"),
        Some("ics" | "ical") => Some("text/calendar"),
        Some("eml") => Some("message/rfc822"),
        Some("md" | "markdown") => Some("text/markdown"),
        Some("txt" | "text" | "log") => Some("text/plain"),
        Some("pdf") => Some("application/pdf"),
        Some("png") => Some("image/png"),
        Some("jpg" | "jpeg") => Some("image/jpeg"),
        Some("html" | "htm") => Some("text/html"),
        _ => None,
    };
    if let Some(m) = by_ext {
        return m.to_string();
    }
    let text = std::str::from_utf8(bytes).ok();
    match text.map(str::trim_start) {
        Some(t) if t.starts_with("BEGIN:VCARD") => "text/vcard".into(),
        Some(t) if t.starts_with("BEGIN:VCALENDAR") => "text/calendar".into(),
        Some(t)
            if (t.starts_with('{') || t.starts_with('['))
                && serde_json::from_str::<Value>(t).is_ok() =>
        {
            "application/json".into()
        }
        Some(_) => "text/plain".into(),
        None => "application/octet-stream".into(),
    }
}

/// Decodes base64 (standard or URL-safe alphabet, padding optional,
/// whitespace ignored).
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{
        GeneralPurpose, GeneralPurposeConfig, STANDARD, URL_SAFE,
    };
    use base64::engine::DecodePaddingMode;
    let compact: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let lenient =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    GeneralPurpose::new(&base64::alphabet::STANDARD, lenient)
        .decode(&compact)
        .or_else(|_| GeneralPurpose::new(&base64::alphabet::URL_SAFE, lenient).decode(&compact))
        .or_else(|_| STANDARD.decode(&compact))
        .or_else(|_| URL_SAFE.decode(&compact))
        .ok()
}

pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What an interpreter gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpretation {
    pub entities: Vec<Map<String, Value>>,
    /// Parts that could not be typed or read (counted, not fatal).
    pub skipped: u64,
}

/// Runs the built-in interpreter `name` on `bytes`. `schemas` are the types
/// the user can store (for type inference); `config` is the
/// interpretation_config (`entity_type` sets the type of CSV rows).
pub fn interpret(
    name: &str,
    bytes: &[u8],
    config: &Map<String, Value>,
    schemas: &[EntitySchema],
) -> Result<Interpretation, String> {
    let text = || String::from_utf8_lossy(bytes).into_owned();
    let forced = config.get("entity_type").and_then(Value::as_str);
    match name {
        "json" => json_entities(&text(), forced, schemas),
        "csv" => delimited(bytes, b',', forced, schemas),
        "tsv" => delimited(bytes, b'\t', forced, schemas),
        "vcard" => vcard(bytes),
        "icalendar" => icalendar(bytes),
        "email" => email(bytes),
        "text" => Ok(plain_text(&text())),
        other => Err(format!("no built-in interpreter `{other}`")),
    }
}

/// The type whose schema best fits these keys: one of whose identity rules
/// is satisfied, with the most matching fields; ties by name.
pub fn infer_type<'a>(keys: &[&str], schemas: &'a [EntitySchema]) -> Option<&'a str> {
    schemas
        .iter()
        .filter(|s| {
            s.identity
                .iter()
                .any(|r| r.fields().iter().all(|f| keys.contains(f)))
        })
        .map(|s| {
            (
                s.fields
                    .keys()
                    .filter(|f| keys.contains(&f.as_str()))
                    .count(),
                s,
            )
        })
        .max_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| b.1.entity_type.cmp(&a.1.entity_type))
        })
        .map(|(_, s)| s.entity_type.as_str())
}

fn typed(
    mut obj: Map<String, Value>,
    forced: Option<&str>,
    schemas: &[EntitySchema],
) -> Option<Map<String, Value>> {
    let given = obj
        .get("entity_type")
        .and_then(Value::as_str)
        .map(str::to_string);
    let t = match (forced, given) {
        (Some(t), _) => t.to_string(),
        (None, Some(t)) => t,
        (None, None) => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            infer_type(&keys, schemas)?.to_string()
        }
    };
    obj.insert("entity_type".into(), Value::String(t));
    Some(obj)
}

fn json_entities(
    text: &str,
    forced: Option<&str>,
    schemas: &[EntitySchema],
) -> Result<Interpretation, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let items = match v {
        Value::Object(mut o) if o.get("entities").is_some_and(Value::is_array) => {
            match o.remove("entities") {
                Some(Value::Array(a)) => a,
                _ => vec![],
            }
        }
        Value::Object(o) => vec![Value::Object(o)],
        Value::Array(a) => a,
        _ => return Err("JSON must be an object or an array of objects".into()),
    };
    let mut out = Interpretation {
        entities: vec![],
        skipped: 0,
    };
    for item in items {
        match item {
            Value::Object(o) => match typed(o, forced, schemas) {
                Some(e) => out.entities.push(e),
                None => out.skipped += 1,
            },
            _ => out.skipped += 1,
        }
    }
    Ok(out)
}

/// `Invoice Number` → `invoice_number`.
fn field_name(header: &str) -> String {
    let mut out = String::new();
    for c in header.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

fn delimited(
    bytes: &[u8],
    delimiter: u8,
    forced: Option<&str>,
    schemas: &[EntitySchema],
) -> Result<Interpretation, String> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(bytes);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("unreadable header row: {e}"))?
        .iter()
        .map(field_name)
        .collect();
    let keys: Vec<&str> = headers.iter().map(String::as_str).collect();
    let inferred = if forced.is_none() && !keys.contains(&"entity_type") {
        infer_type(&keys, schemas)
    } else {
        None
    };
    let mut out = Interpretation {
        entities: vec![],
        skipped: 0,
    };
    for record in reader.records() {
        let Ok(record) = record else {
            out.skipped += 1;
            continue;
        };
        let mut obj = Map::new();
        for (h, v) in headers.iter().zip(record.iter()) {
            if !h.is_empty() && !v.trim().is_empty() {
                obj.insert(h.clone(), Value::String(v.trim().to_string()));
            }
        }
        if obj.is_empty() {
            continue;
        }
        match typed(obj, forced.or(inferred), schemas) {
            Some(e) => out.entities.push(e),
            None => out.skipped += 1,
        }
    }
    Ok(out)
}

fn prop<'a>(props: &'a [ical::property::Property], name: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .and_then(|p| p.value.as_deref())
}

/// iCalendar dates: `20240115` → `2024-01-15`, `20240115T093000Z` →
/// `2024-01-15T09:30:00Z` (floating times are kept as local, without offset).
pub fn ical_date(v: &str) -> String {
    let v = v.trim();
    let d = |s: &str| format!("{}-{}-{}", &s[0..4], &s[4..6], &s[6..8]);
    match v.len() {
        8 if v.bytes().all(|b| b.is_ascii_digit()) => d(v),
        15 | 16 if v.as_bytes().get(8) == Some(&b'T') => {
            let t = &v[9..15];
            let z = if v.ends_with('Z') { "Z" } else { "" };
            format!("{}T{}:{}:{}{z}", d(&v[..8]), &t[0..2], &t[2..4], &t[4..6])
        }
        _ => v.to_string(),
    }
}

fn vcard(bytes: &[u8]) -> Result<Interpretation, String> {
    let mut out = Interpretation {
        entities: vec![],
        skipped: 0,
    };
    for card in ical::VcardParser::new(BufReader::new(bytes)) {
        let card = card.map_err(|e| format!("unreadable vCard: {e}"))?;
        let p = &card.properties;
        let mut obj = Map::new();
        obj.insert("entity_type".into(), json!("contact"));
        let n = prop(p, "N").map(|n| n.split(';').map(str::trim).collect::<Vec<_>>());
        let name = prop(p, "FN").map(str::to_string).or_else(|| {
            n.as_ref().map(|parts| {
                [parts.get(1), parts.first()]
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        });
        for (field, value) in [
            ("name", name),
            ("email", prop(p, "EMAIL").map(str::to_string)),
            ("phone", prop(p, "TEL").map(str::to_string)),
            (
                "organization",
                prop(p, "ORG").map(|o| o.replace(';', " ").trim().to_string()),
            ),
            ("title", prop(p, "TITLE").map(str::to_string)),
            ("website", prop(p, "URL").map(str::to_string)),
            (
                "address",
                prop(p, "ADR").map(|a| {
                    a.split(';')
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(", ")
                }),
            ),
            ("notes", prop(p, "NOTE").map(str::to_string)),
            ("contact_id", prop(p, "UID").map(str::to_string)),
            (
                "first_name",
                n.as_ref()
                    .and_then(|parts| parts.get(1))
                    .map(|s| s.to_string()),
            ),
            (
                "last_name",
                n.as_ref()
                    .and_then(|parts| parts.first())
                    .map(|s| s.to_string()),
            ),
        ] {
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                obj.insert(field.into(), Value::String(v));
            }
        }
        if obj.len() > 1 {
            out.entities.push(obj);
        } else {
            out.skipped += 1;
        }
    }
    Ok(out)
}

fn todo_status(s: Option<&str>) -> &'static str {
    match s.map(str::to_ascii_uppercase).as_deref() {
        Some("COMPLETED") => "done",
        Some("IN-PROCESS") => "in_progress",
        Some("CANCELLED") => "cancelled",
        _ => "open",
    }
}

fn icalendar(bytes: &[u8]) -> Result<Interpretation, String> {
    let mut out = Interpretation {
        entities: vec![],
        skipped: 0,
    };
    for cal in ical::IcalParser::new(BufReader::new(bytes)) {
        let cal = cal.map_err(|e| format!("unreadable iCalendar: {e}"))?;
        for event in &cal.events {
            let p = &event.properties;
            let (Some(title), Some(start)) = (prop(p, "SUMMARY"), prop(p, "DTSTART")) else {
                out.skipped += 1;
                continue;
            };
            let mut obj = Map::new();
            obj.insert("entity_type".into(), json!("event"));
            obj.insert("title".into(), json!(title));
            obj.insert("start".into(), json!(ical_date(start)));
            obj.insert("all_day".into(), json!(start.trim().len() == 8));
            for (field, name, date) in [
                ("end", "DTEND", true),
                ("location", "LOCATION", false),
                ("description", "DESCRIPTION", false),
                ("organizer", "ORGANIZER", false),
                ("uid", "UID", false),
                ("status", "STATUS", false),
            ] {
                if let Some(v) = prop(p, name) {
                    let v = if date {
                        ical_date(v)
                    } else {
                        v.trim_start_matches("mailto:").to_string()
                    };
                    obj.insert(field.into(), json!(v));
                }
            }
            let attendees: Vec<Value> = p
                .iter()
                .filter(|x| x.name.eq_ignore_ascii_case("ATTENDEE"))
                .filter_map(|x| x.value.as_deref())
                .map(|v| json!(v.trim_start_matches("mailto:")))
                .collect();
            if !attendees.is_empty() {
                obj.insert("attendees".into(), Value::Array(attendees));
            }
            out.entities.push(obj);
        }
        for todo in &cal.todos {
            let p = &todo.properties;
            let Some(title) = prop(p, "SUMMARY") else {
                out.skipped += 1;
                continue;
            };
            let mut obj = Map::new();
            obj.insert("entity_type".into(), json!("task"));
            obj.insert("title".into(), json!(title));
            obj.insert("status".into(), json!(todo_status(prop(p, "STATUS"))));
            for (field, name) in [
                ("due_date", "DUE"),
                ("completed_date", "COMPLETED"),
                ("created_date", "CREATED"),
            ] {
                if let Some(v) = prop(p, name) {
                    obj.insert(field.into(), json!(ical_date(v)));
                }
            }
            for (field, name) in [
                ("description", "DESCRIPTION"),
                ("priority", "PRIORITY"),
                ("uid", "UID"),
            ] {
                if let Some(v) = prop(p, name) {
                    obj.insert(field.into(), json!(v));
                }
            }
            out.entities.push(obj);
        }
    }
    Ok(out)
}

fn email(bytes: &[u8]) -> Result<Interpretation, String> {
    let msg = mail_parser::MessageParser::default()
        .parse(bytes)
        .ok_or("unreadable e-mail message")?;
    let mut note = Map::new();
    note.insert("entity_type".into(), json!("note"));
    note.insert(
        "title".into(),
        json!(msg.subject().unwrap_or("(no subject)")),
    );
    note.insert(
        "content".into(),
        json!(msg
            .body_text(0)
            .map(|b| b.trim().to_string())
            .unwrap_or_default()),
    );
    note.insert("source".into(), json!("email"));
    if let Some(d) = msg.date() {
        note.insert("created_date".into(), json!(d.to_rfc3339()));
    }
    if let Some(id) = msg.message_id() {
        note.insert("message_id".into(), json!(id));
    }
    let mut contacts = Vec::new();
    for (role, addresses) in [("from", msg.from()), ("to", msg.to()), ("cc", msg.cc())] {
        let list: Vec<Value> = addresses
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|a| {
                let email = a.address()?.to_string();
                let mut c = Map::new();
                c.insert("entity_type".into(), json!("contact"));
                c.insert("email".into(), json!(email));
                if let Some(n) = a.name().filter(|n| !n.is_empty()) {
                    c.insert("name".into(), json!(n));
                }
                c.insert("data_source".into(), json!("email"));
                contacts.push(c);
                Some(json!(email))
            })
            .collect();
        if !list.is_empty() {
            note.insert(role.into(), Value::Array(list));
        }
    }
    let mut entities = vec![note];
    entities.extend(contacts);
    Ok(Interpretation {
        entities,
        skipped: 0,
    })
}

fn plain_text(text: &str) -> Interpretation {
    let title = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches('#').trim())
        .unwrap_or("(untitled)");
    let title: String = title.chars().take(200).collect();
    let mut note = Map::new();
    note.insert("entity_type".into(), json!("note"));
    note.insert("title".into(), json!(title));
    note.insert("content".into(), json!(text.trim()));
    Interpretation {
        entities: vec![note],
        skipped: 0,
    }
}

/// Lenient reading of a value for a schema field (interpreted files carry
/// text): numbers and booleans from strings; None when it does not fit.
pub fn coerce(field_type: FieldType, value: &Value) -> Option<Value> {
    if field_type.accepts(value) {
        return Some(value.clone());
    }
    let s = value.as_str()?.trim();
    match field_type {
        FieldType::Number => {
            let clean: String = s
                .chars()
                .filter(|c| !matches!(c, ',' | ' ' | '$' | '€' | '£'))
                .collect();
            if let Ok(i) = clean.parse::<i64>() {
                return Some(json!(i));
            }
            clean
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| json!(f))
        }
        FieldType::Boolean => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" => Some(json!(true)),
            "false" | "no" | "n" | "0" => Some(json!(false)),
            _ => None,
        },
        FieldType::Array => Some(Value::Array(
            s.split([',', ';'])
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(|x| json!(x))
                .collect(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::builtin_schemas;

    fn run(name: &str, bytes: &[u8]) -> Interpretation {
        interpret(name, bytes, &Map::new(), &builtin_schemas()).unwrap()
    }

    #[test]
    fn json_objects_arrays_and_inference() {
        let r = run("json", br#"[{"entity_type": "note", "content": "x"}, {"invoice_number": "I-1", "vendor_name": "V", "amount_due": 5}, 7]"#);
        assert_eq!(r.entities.len(), 2);
        assert_eq!(r.entities[1]["entity_type"], "invoice");
        assert_eq!(r.skipped, 1);
        let r = run(
            "json",
            br#"{"entities": [{"entity_type": "person", "name": "A"}]}"#,
        );
        assert_eq!(r.entities[0]["name"], "A");
        assert!(interpret("json", b"not json", &Map::new(), &[]).is_err());
    }

    #[test]
    fn csv_rows_with_headers_and_forced_type() {
        let csv = b"Invoice Number,Vendor Name,Amount Due,Due\nINV-1,Acme,\"1,200.50\",2024-02-01\nINV-2,Acme,10,\n";
        let r = run("csv", csv);
        assert_eq!(r.entities.len(), 2);
        assert_eq!(r.entities[0]["entity_type"], "invoice");
        assert_eq!(r.entities[0]["amount_due"], "1,200.50");
        assert!(!r.entities[1].contains_key("due"));
        let mut config = Map::new();
        config.insert("entity_type".into(), json!("note"));
        let tsv = interpret(
            "tsv",
            b"title\tcontent\nA\tbody\n",
            &config,
            &builtin_schemas(),
        )
        .unwrap();
        assert_eq!(tsv.entities[0]["entity_type"], "note");
        assert_eq!(tsv.entities[0]["content"], "body");
    }

    #[test]
    fn vcard_contacts() {
        let v = b"BEGIN:VCARD\r\nVERSION:3.0\r\nN:Lovelace;Ada;;;\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.com\r\nTEL:+44 20 0000\r\nORG:Analytical Engines\r\nEND:VCARD\r\n";
        let r = run("vcard", v);
        let c = &r.entities[0];
        assert_eq!(c["entity_type"], "contact");
        assert_eq!(c["name"], "Ada Lovelace");
        assert_eq!(c["email"], "ada@example.com");
        assert_eq!(c["first_name"], "Ada");
        assert_eq!(c["organization"], "Analytical Engines");
    }

    #[test]
    fn icalendar_events_and_tasks() {
        let ics = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e1\r\nSUMMARY:Standup\r\nDTSTART:20240115T093000Z\r\nDTEND:20240115T094500Z\r\nATTENDEE:mailto:bo@example.com\r\nEND:VEVENT\r\nBEGIN:VTODO\r\nSUMMARY:File taxes\r\nDUE:20240415\r\nSTATUS:NEEDS-ACTION\r\nEND:VTODO\r\nEND:VCALENDAR\r\n";
        let r = run("icalendar", ics);
        assert_eq!(r.entities[0]["entity_type"], "event");
        assert_eq!(r.entities[0]["start"], "2024-01-15T09:30:00Z");
        assert_eq!(r.entities[0]["attendees"], json!(["bo@example.com"]));
        assert_eq!(r.entities[1]["entity_type"], "task");
        assert_eq!(r.entities[1]["due_date"], "2024-04-15");
        assert_eq!(r.entities[1]["status"], "open");
    }

    #[test]
    fn email_note_and_contacts() {
        let eml = b"From: Ada <ada@example.com>\r\nTo: bo@example.com, Cy <cy@example.com>\r\nSubject: Lunch\r\nDate: Mon, 15 Jan 2024 10:00:00 +0000\r\nMessage-ID: <m1@example.com>\r\n\r\nNoon at the cafe?\r\n";
        let r = run("email", eml);
        assert_eq!(r.entities[0]["entity_type"], "note");
        assert_eq!(r.entities[0]["title"], "Lunch");
        assert_eq!(r.entities[0]["content"], "Noon at the cafe?");
        assert_eq!(r.entities[0]["created_date"], "2024-01-15T10:00:00Z");
        let emails: Vec<&Value> = r.entities[1..].iter().map(|c| &c["email"]).collect();
        assert_eq!(
            emails,
            [
                &json!("ada@example.com"),
                &json!("bo@example.com"),
                &json!("cy@example.com")
            ]
        );
    }

    #[test]
    fn text_and_markdown_notes() {
        let r = run("text", b"\n# Trip plan\n\nPack the tent.\n");
        assert_eq!(r.entities[0]["title"], "Trip plan");
        assert_eq!(r.entities[0]["content"], "# Trip plan\n\nPack the tent.");
    }

    #[test]
    fn deterministic() {
        let csv = b"title,content\na,b\nc,d\n";
        assert_eq!(run("csv", csv), run("csv", csv));
    }

    #[test]
    fn mime_detection_and_base64() {
        assert_eq!(detect_mime(b"%PDF-1.4 ...", None), "application/pdf");
        assert_eq!(detect_mime(b"a,b\n1,2", Some("x.csv")), "text/csv");
        assert_eq!(detect_mime(b"BEGIN:VCARD\n", None), "text/vcard");
        assert_eq!(detect_mime(br#"{"a": 1}"#, None), "application/json");
        assert_eq!(detect_mime(b"hello", None), "text/plain");
        assert_eq!(
            detect_mime(&[0xff, 0xfe, 0x00, 0x81], None),
            "application/octet-stream"
        );
        assert_eq!(normalize_mime("Text/CSV; charset=utf-8"), "text/csv");
        assert_eq!(interpreter_for("message/rfc822"), Some("email"));
        assert_eq!(interpreter_for("application/pdf"), None);
        assert_eq!(decode_base64("aGVs bG8=\n").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert!(decode_base64("%%%").is_none());
        assert_eq!(encode_base64(b"hello"), "aGVsbG8=");
    }

    #[test]
    fn lenient_coercion() {
        assert_eq!(
            coerce(FieldType::Number, &json!("1,200.50")),
            Some(json!(1200.5))
        );
        assert_eq!(coerce(FieldType::Number, &json!("12")), Some(json!(12)));
        assert_eq!(coerce(FieldType::Number, &json!("twelve")), None);
        assert_eq!(coerce(FieldType::Boolean, &json!("yes")), Some(json!(true)));
        assert_eq!(coerce(FieldType::Date, &json!("soon")), None);
        assert_eq!(
            coerce(FieldType::Array, &json!("a, b")),
            Some(json!(["a", "b"]))
        );
        assert_eq!(coerce(FieldType::String, &json!("x")), Some(json!("x")));
    }
}
