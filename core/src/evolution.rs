//! Schema evolution: statistics of raw fragments (fields stored that a
//! schema lacks), the confidence that one should become a schema field, the
//! auto-promotion rule, and schema version numbering. Deterministic: the same
//! fragments give the same numbers, samples and decisions.

use crate::canonical::canonical_json;
use crate::schema::FieldType;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One raw fragment, as the statistics see it.
#[derive(Debug, Clone)]
pub struct Fragment {
    pub value: Value,
    /// `string`, `number`, `date`, `boolean`, `array`, `object` or `null`.
    pub inferred_type: String,
    pub source_id: String,
}

/// What the fragments of one (entity type, key) say.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldStats {
    pub frequency: u64,
    pub distinct_sources: u64,
    /// The most common non-null type (ties: the first in type order).
    pub field_type: FieldType,
    /// Share of non-null values of `field_type` (0–1).
    pub type_consistency: f64,
    /// Share of values of `field_type` that have the dominant shape (0–1).
    pub format_consistency: f64,
    /// Up to 10 distinct values, in canonical-JSON order.
    pub sample_values: Vec<Value>,
    /// The key looks like a field name (snake_case).
    pub naming_pattern_match: bool,
    pub confidence: f64,
}

const TYPES: [FieldType; 6] = [
    FieldType::String,
    FieldType::Number,
    FieldType::Date,
    FieldType::Boolean,
    FieldType::Array,
    FieldType::Object,
];

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The "shape" of a value: letters → a, digits → 9, runs collapsed; numbers
/// by integer or decimal. Values of one format share a shape.
pub fn shape(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let mut out = String::new();
            for c in s.chars() {
                let class = if c.is_alphabetic() {
                    'a'
                } else if c.is_ascii_digit() {
                    '9'
                } else {
                    c
                };
                if !out.ends_with(class) || !(class == 'a' || class == '9') {
                    out.push(class);
                }
            }
            out
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer".into(),
        Value::Number(_) => "decimal".into(),
        other => crate::request::json_type(other).to_string(),
    }
}

/// Confidence that a field belongs in the schema: type consistency, scaled
/// down below 2 distinct sources and below 3 occurrences, and halved for a
/// key that is not a usable field name.
pub fn confidence(
    type_consistency: f64,
    frequency: u64,
    distinct_sources: u64,
    usable_name: bool,
) -> f64 {
    let sources = distinct_sources.min(2) as f64 / 2.0;
    let occurrences = frequency.min(3) as f64 / 3.0;
    let name = if usable_name { 1.0 } else { 0.5 };
    round3(type_consistency * sources * occurrences * name)
}

pub fn stats(key: &str, fragments: &[Fragment]) -> Option<FieldStats> {
    let frequency = fragments.len() as u64;
    let sources: BTreeSet<&str> = fragments.iter().map(|f| f.source_id.as_str()).collect();
    let mut by_type: BTreeMap<usize, u64> = BTreeMap::new();
    for f in fragments {
        if let Some(i) = TYPES.iter().position(|t| t.as_str() == f.inferred_type) {
            *by_type.entry(i).or_default() += 1;
        }
    }
    let non_null: u64 = by_type.values().sum();
    let (&dominant, &count) = by_type
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
    let field_type = TYPES[dominant];
    let typed: Vec<&Value> = fragments
        .iter()
        .filter(|f| f.inferred_type == field_type.as_str())
        .map(|f| &f.value)
        .collect();
    let mut shapes: BTreeMap<String, u64> = BTreeMap::new();
    for v in &typed {
        *shapes.entry(shape(v)).or_default() += 1;
    }
    let top_shape = shapes.values().copied().max().unwrap_or(0);
    let mut samples: BTreeMap<String, Value> = BTreeMap::new();
    for f in fragments {
        samples
            .entry(canonical_json(&f.value))
            .or_insert_with(|| f.value.clone());
    }
    let type_consistency = round3(count as f64 / non_null.max(1) as f64);
    let naming_pattern_match = crate::schema::check_name("field", key).is_ok()
        && key.chars().all(|c| !c.is_ascii_uppercase());
    Some(FieldStats {
        frequency,
        distinct_sources: sources.len() as u64,
        field_type,
        type_consistency,
        format_consistency: round3(top_shape as f64 / typed.len().max(1) as f64),
        sample_values: samples.into_values().take(10).collect(),
        naming_pattern_match,
        confidence: confidence(
            type_consistency,
            frequency,
            sources.len() as u64,
            naming_pattern_match,
        ),
    })
}

/// When a field is promoted into the schema without anyone asking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoPromotion {
    pub min_type_consistency: f64,
    pub min_sources: u64,
    pub min_occurrences: u64,
}

impl Default for AutoPromotion {
    fn default() -> Self {
        AutoPromotion {
            min_type_consistency: 0.95,
            min_sources: 2,
            min_occurrences: 3,
        }
    }
}

impl AutoPromotion {
    pub fn qualifies(&self, s: &FieldStats) -> bool {
        s.type_consistency >= self.min_type_consistency
            && s.distinct_sources >= self.min_sources
            && s.frequency >= self.min_occurrences
    }
}

/// The next version after `base` that is not taken: 1.0 → 1.1 → 1.2…; a
/// version without a numeric minor gets `.1` appended.
pub fn next_version(base: &str, taken: &[String]) -> String {
    let (stem, mut minor) = match base.rsplit_once('.') {
        Some((stem, minor)) => match minor.parse::<u64>() {
            Ok(m) => (stem.to_string(), m),
            Err(_) => (base.to_string(), 0),
        },
        None => (base.to_string(), 0),
    };
    loop {
        minor += 1;
        let candidate = format!("{stem}.{minor}");
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frag(v: Value, t: &str, s: &str) -> Fragment {
        Fragment {
            value: v,
            inferred_type: t.into(),
            source_id: s.into(),
        }
    }

    fn numbers(n: usize, sources: usize) -> Vec<Fragment> {
        (0..n)
            .map(|i| frag(json!(i), "number", &format!("s{}", i % sources)))
            .collect()
    }

    #[test]
    fn thresholds_of_auto_promotion() {
        let rule = AutoPromotion::default();
        // 3 occurrences from 2 sources, all numbers: promoted.
        assert!(rule.qualifies(&stats("po", &numbers(3, 2)).unwrap()));
        // 2 occurrences: not yet.
        assert!(!rule.qualifies(&stats("po", &numbers(2, 2)).unwrap()));
        // 1 source: not yet.
        assert!(!rule.qualifies(&stats("po", &numbers(5, 1)).unwrap()));
        // 95% consistency qualifies, 94% does not.
        let mut f95 = numbers(19, 2);
        f95.push(frag(json!("x"), "string", "s0"));
        let s95 = stats("po", &f95).unwrap();
        assert_eq!(s95.type_consistency, 0.95);
        assert!(rule.qualifies(&s95));
        let mut f94 = numbers(47, 2);
        f94.extend((0..3).map(|_| frag(json!("x"), "string", "s1")));
        let s94 = stats("po", &f94).unwrap();
        assert_eq!(s94.type_consistency, 0.94);
        assert!(!rule.qualifies(&s94));
    }

    #[test]
    fn statistics_are_deterministic() {
        let f = vec![
            frag(json!("2024-01-01"), "date", "a"),
            frag(json!("2024-02-01"), "date", "b"),
            frag(json!("soon"), "string", "a"),
            frag(json!(null), "null", "b"),
        ];
        let s = stats("due_on", &f).unwrap();
        assert_eq!(s.field_type, FieldType::Date);
        assert_eq!(s.type_consistency, 0.667);
        assert_eq!(s.format_consistency, 1.0);
        assert_eq!(s.frequency, 4);
        assert_eq!(s.distinct_sources, 2);
        assert!(s.naming_pattern_match);
        assert_eq!(
            s.sample_values,
            vec![
                json!("2024-01-01"),
                json!("2024-02-01"),
                json!("soon"),
                json!(null)
            ]
        );
        let mut reversed = f.clone();
        reversed.reverse();
        assert_eq!(stats("due_on", &reversed).unwrap(), s);
        let odd = stats("Due On", &f).unwrap();
        assert!(!odd.naming_pattern_match);
        assert!((odd.confidence - s.confidence / 2.0).abs() < 0.001);
        assert!(stats("x", &[frag(json!(null), "null", "a")]).is_none());
    }

    #[test]
    fn samples_are_at_most_ten() {
        let s = stats("n", &numbers(25, 3)).unwrap();
        assert_eq!(s.sample_values.len(), 10);
        assert_eq!(s.confidence, 1.0);
    }

    #[test]
    fn shapes_and_versions() {
        assert_eq!(shape(&json!("AB-123")), "a-9");
        assert_eq!(shape(&json!("x@y.com")), "a@a.a");
        assert_eq!(shape(&json!(3)), "integer");
        assert_eq!(shape(&json!(3.5)), "decimal");
        assert_eq!(next_version("1.0", &[]), "1.1");
        assert_eq!(next_version("1.0", &["1.1".into(), "1.2".into()]), "1.3");
        assert_eq!(next_version("2", &[]), "2.1");
        assert_eq!(next_version("1.0-beta", &[]), "1.0-beta.1");
    }
}
