//! Contradictions: a field of one entity to which observations from
//! different sources give different values. For each, the competing values
//! with the observations that gave them, the value the reducer chose and
//! why (its strategy, and what broke a tie). Pure: computed from the same
//! observations and merge policies the reducer folds, with its own order
//! ([`reducer::compare`]), so the value said chosen is the snapshot's.

use crate::canonical::canonical_json;
use crate::confidence::Confidence;
use crate::reducer::{self, Decider, Observation, Policies, Provenance, CORRECTION_PRIORITY};
use crate::schema::{MergePolicy, Strategy, TieBreaker};
use crate::time::format_micros;
use crate::valid_time::Interval;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Contradiction {
    pub field: String,
    /// Each distinct value given, the chosen one first, then by how the
    /// reducer ranks their best observation.
    pub values: Vec<CompetingValue>,
    /// The value the snapshot shows (null: the field was cleared).
    pub chosen_value: Value,
    pub chosen_observation_id: String,
    /// The field's merge strategy: last_write, highest_priority,
    /// most_specific or highest_confidence.
    pub strategy: String,
    /// What decides between candidates equal by the strategy: observed_at
    /// or source_priority (then the smaller observation id).
    pub tie_breaker: String,
    /// Why the chosen value won, in words.
    pub reason: String,
    /// True when a correction decided it (a correction beats every other
    /// observation): the contradiction is resolved.
    pub resolved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompetingValue {
    pub value: Value,
    /// The observations that gave this value, best first.
    pub observations: Vec<CompetingObservation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompetingObservation {
    pub observation_id: String,
    pub source_id: String,
    pub observed_at: String,
    pub source_priority: i32,
    pub specificity_score: f64,
    /// Its confidence rating (admiralty code, contests counted).
    pub confidence: Confidence,
    /// A correction (source priority 1000 or more).
    pub correction: bool,
}

fn competing(p: &Provenance) -> CompetingObservation {
    CompetingObservation {
        observation_id: p.observation_id.clone(),
        source_id: p.source_id.clone(),
        observed_at: format_micros(p.observed_at),
        source_priority: p.source_priority,
        specificity_score: p.specificity_score,
        confidence: p.confidence(),
        correction: p.source_priority >= CORRECTION_PRIORITY,
    }
}

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::LastWrite => "last_write",
        Strategy::HighestPriority => "highest_priority",
        Strategy::MostSpecific => "most_specific",
        Strategy::MergeArray => "merge_array",
        Strategy::HighestConfidence => "highest_confidence",
    }
}

fn tie_breaker_name(t: TieBreaker) -> &'static str {
    match t {
        TieBreaker::ObservedAt => "observed_at",
        TieBreaker::SourcePriority => "source_priority",
    }
}

/// Why `winner` beat `runner_up` under `policy`, in words: the first of
/// the reducer's deciders that tells them apart.
fn reason(winner: &Provenance, runner_up: &Provenance, policy: MergePolicy) -> String {
    let decider = reducer::deciders(winner, runner_up, policy)
        .into_iter()
        .find(|(_, verdict)| verdict.is_ne())
        .map_or(Decider::ObservationId, |(decider, _)| decider);
    let what = match policy.strategy {
        Strategy::LastWrite => "the newest observation",
        Strategy::HighestPriority | Strategy::MergeArray => "the highest source priority",
        Strategy::MostSpecific => "the highest specificity score",
        Strategy::HighestConfidence => "the best confidence rating",
    };
    let broken = match decider {
        Decider::Correction => {
            return "a correction: it beats every observation that is not one".into()
        }
        Decider::Strategy => return format!("{}: {what}", strategy_name(policy.strategy)),
        Decider::ObservedAt => "newer",
        Decider::SourcePriority => "higher source priority",
        Decider::WriteOrder => "written later",
        Decider::ObservationId => "the smaller observation id",
    };
    format!(
        "{}: tied on {what}; broken by {broken} (tie_breaker {})",
        strategy_name(policy.strategy),
        tie_breaker_name(policy.tie_breaker.unwrap_or_default())
    )
}

/// The contradictions among `observations` (those the reducer folds for
/// one entity), by field name. A field is contradicted when its
/// observations give two or more distinct values and come from two or more
/// sources; `merge_array` fields are not (their values are joined, not
/// chosen between). Over valid time, only observations that hold at a
/// common instant compete: values over disjoint intervals are a
/// succession, not a contradiction.
pub fn find(observations: &[Observation], policies: &Policies) -> Vec<Contradiction> {
    let mut by_field: BTreeMap<&str, Vec<(Provenance, &Value, Interval)>> = BTreeMap::new();
    for o in observations {
        for (field, value) in &o.fields {
            by_field.entry(field.as_str()).or_default().push((
                Provenance::of(o),
                value,
                Interval::of(o),
            ));
        }
    }
    let mut found = Vec::new();
    for (field, timed) in by_field {
        // Those that hold at some instant with another value (all of them
        // when they hold always, as before valid time).
        let mut candidates: Vec<(Provenance, &Value)> =
            if timed.iter().all(|(_, _, i)| *i == Interval::ALWAYS) {
                timed.into_iter().map(|(p, v, _)| (p, v)).collect()
            } else {
                let keys: Vec<String> = timed.iter().map(|(_, v, _)| canonical_json(v)).collect();
                let competes = |a: usize| {
                    (0..timed.len()).any(|b| keys[a] != keys[b] && timed[a].2.overlaps(&timed[b].2))
                };
                (0..timed.len())
                    .filter(|&a| competes(a))
                    .map(|a| (timed[a].0.clone(), timed[a].1))
                    .collect()
            };
        let policy = policies.get(field).copied().unwrap_or_default();
        if policy.strategy == Strategy::MergeArray {
            continue;
        }
        let distinct: BTreeSet<String> =
            candidates.iter().map(|(_, v)| canonical_json(v)).collect();
        let sources: BTreeSet<&str> = candidates
            .iter()
            .map(|(p, _)| p.source_id.as_str())
            .collect();
        if distinct.len() < 2 || sources.len() < 2 {
            continue;
        }
        // Best first, as the reducer ranks them.
        candidates.sort_by(|a, b| reducer::compare(&b.0, &a.0, policy));
        let mut values: Vec<(String, CompetingValue)> = Vec::new();
        for (p, v) in &candidates {
            let key = canonical_json(v);
            match values.iter_mut().find(|(k, _)| *k == key) {
                Some((_, cv)) => cv.observations.push(competing(p)),
                None => values.push((
                    key,
                    CompetingValue {
                        value: (*v).clone(),
                        observations: vec![competing(p)],
                    },
                )),
            }
        }
        let (winner, chosen) = &candidates[0];
        let chosen_key = canonical_json(chosen);
        let runner_up = candidates
            .iter()
            .find(|(_, v)| canonical_json(v) != chosen_key)
            .map(|(p, _)| p)
            .expect("two distinct values");
        found.push(Contradiction {
            field: field.to_string(),
            chosen_value: (*chosen).clone(),
            chosen_observation_id: winner.observation_id.clone(),
            strategy: strategy_name(policy.strategy).into(),
            tie_breaker: tie_breaker_name(policy.tie_breaker.unwrap_or_default()).into(),
            reason: reason(winner, runner_up, policy),
            resolved: winner.source_priority >= CORRECTION_PRIORITY,
            values: values.into_iter().map(|(_, cv)| cv).collect(),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn obs(id: &str, source: &str, at: i64, priority: i32, fields: Value) -> Observation {
        let fields: Map<String, Value> = fields.as_object().cloned().unwrap();
        Observation {
            id: id.into(),
            source_id: source.into(),
            observed_at: at,
            source_priority: priority,
            specificity_score: 0.0,
            fields,
            confidence: None,
            contests: 0,
            write_order: 0,
            valid_from: None,
            valid_to: None,
        }
    }

    #[test]
    fn different_values_from_different_sources_contradict() {
        let o = [
            obs("a", "s1", 10, 100, json!({"phone": "1", "name": "Ann"})),
            obs("b", "s2", 20, 100, json!({"phone": "2", "name": "Ann"})),
            obs("c", "s2", 30, 100, json!({"email": "x"})),
        ];
        let found = find(&o, &Policies::new());
        assert_eq!(found.len(), 1, "{found:?}");
        let c = &found[0];
        assert_eq!((c.field.as_str(), &c.chosen_value), ("phone", &json!("2")));
        assert_eq!(c.chosen_observation_id, "b");
        assert_eq!(
            c.values.iter().map(|v| v.value.clone()).collect::<Vec<_>>(),
            vec![json!("2"), json!("1")]
        );
        assert_eq!(c.reason, "last_write: the newest observation");
        assert!(!c.resolved);
        // The chosen value is the reducer's.
        let snapshot = reducer::render(&reducer::reduce(&o, &Policies::new())).snapshot;
        assert_eq!(snapshot["phone"], c.chosen_value);
    }

    #[test]
    fn one_source_changing_its_mind_is_no_contradiction() {
        let o = [
            obs("a", "s1", 10, 100, json!({"phone": "1"})),
            obs("b", "s1", 20, 100, json!({"phone": "2"})),
        ];
        assert!(find(&o, &Policies::new()).is_empty());
    }

    #[test]
    fn ties_and_corrections_are_explained() {
        let policies = Policies::from([(
            "phone".to_string(),
            MergePolicy {
                strategy: Strategy::HighestPriority,
                tie_breaker: Some(TieBreaker::ObservedAt),
            },
        )]);
        let o = [
            obs("a", "s1", 10, 100, json!({"phone": "1"})),
            obs("b", "s2", 20, 100, json!({"phone": "2"})),
        ];
        let c = &find(&o, &policies)[0];
        assert_eq!(c.chosen_value, json!("2"));
        assert_eq!(
            c.reason,
            "highest_priority: tied on the highest source priority; broken by newer (tie_breaker observed_at)"
        );
        let corrected = [
            o[0].clone(),
            o[1].clone(),
            obs("k", "s3", 5, 1000, json!({"phone": "3"})),
        ];
        let c = &find(&corrected, &policies)[0];
        assert_eq!((c.chosen_value.clone(), c.resolved), (json!("3"), true));
        assert!(c.reason.starts_with("a correction"));
        assert!(c.values[0].observations[0].correction);
    }

    #[test]
    fn merged_arrays_are_joined_not_contradicted() {
        let policies = Policies::from([(
            "tags".to_string(),
            MergePolicy {
                strategy: Strategy::MergeArray,
                tie_breaker: None,
            },
        )]);
        let o = [
            obs("a", "s1", 10, 100, json!({"tags": ["x"]})),
            obs("b", "s2", 20, 100, json!({"tags": ["y"]})),
        ];
        assert!(find(&o, &policies).is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// The reducer keeps, per field, whether its observations disagree
        /// (values and sources): the index of entities with a contradiction
        /// reads those bits, so they must say exactly what `find` finds.
        #[test]
        fn the_fold_knows_exactly_when_there_is_one(
            observations in crate::reducer::tests::arb_observations(),
            which in 0usize..8,
        ) {
            let p = &crate::reducer::tests::all_policies()[which];
            proptest::prop_assert_eq!(
                reducer::reduce(&observations, p).disagrees(),
                !find(&observations, p).is_empty()
            );
        }
    }

    #[test]
    fn a_succession_over_valid_time_is_no_contradiction() {
        let timed =
            |id: &str, source: &str, v: &str, from: Option<i64>, to: Option<i64>| Observation {
                valid_from: from,
                valid_to: to,
                ..obs(id, source, 1, 100, json!({"employer": v}))
            };
        let succession = [
            timed("a", "s1", "Acme", Some(10), Some(20)),
            timed("b", "s2", "Initech", Some(20), None),
        ];
        assert!(find(&succession, &Policies::new()).is_empty());
        // Overlapping, with different values from different sources: one.
        let overlap = [
            timed("a", "s1", "Acme", Some(10), Some(21)),
            timed("b", "s2", "Initech", Some(20), None),
            timed("c", "s3", "Hooli", Some(0), Some(5)),
        ];
        let found = find(&overlap, &Policies::new());
        assert_eq!(found.len(), 1);
        let ids: Vec<&str> = found[0]
            .values
            .iter()
            .flat_map(|v| v.observations.iter().map(|o| o.observation_id.as_str()))
            .collect();
        assert_eq!(ids.len(), 2, "Hooli held alone: {ids:?}");
        // The fold's bits say the same.
        let policies = Policies::new();
        assert!(!crate::valid_time::reduce(&succession, &policies).disagrees());
        assert!(crate::valid_time::reduce(&overlap, &policies).disagrees());
    }
}
