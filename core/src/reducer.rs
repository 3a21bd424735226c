//! The reducer: folds an entity's observations into its snapshot.
//!
//! The result is a total function of the *set* of observations: every field is
//! decided by a total order over candidate observations (strategy key, then the
//! tie-breaker, then the other tie-breaker, then the write order, then the
//! observation id), so the
//! order observations arrive in never changes the snapshot. That is what lets
//! the database maintain snapshots incrementally (`apply` one observation to
//! the stored state) and still agree with a full recomputation (`reduce`).
//!
//! Rules:
//! * a correction (source priority >= 1000) beats every non-correction, for
//!   every strategy ("corrections always win");
//! * at one instant the later write wins: candidates alike in everything
//!   their policy asks are decided by their write order (the order the
//!   database wrote them in), and only then by the smaller id;
//! * `last_write`: newest observed_at; `highest_priority`: highest source
//!   priority; `most_specific`: highest specificity score;
//!   `highest_confidence`: the best confidence rating (the source's
//!   reliability, then the information's credibility, each lowered by the
//!   contests of the observation: [`crate::confidence`]);
//! * `merge_array`: the de-duplicated union of the values given at the highest
//!   source priority present (so a correction replaces an array), in order of
//!   first appearance;
//! * a field an observation does not carry is ignored; an explicit null clears
//!   the field (it leaves the snapshot).

use crate::confidence::Confidence;
use crate::schema::{MergePolicy, Strategy, TieBreaker};
use crate::time::format_micros;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Source priority of corrections.
pub const CORRECTION_PRIORITY: i32 = 1000;

/// One observation as the reducer sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub id: String,
    pub source_id: String,
    /// Microseconds since the epoch.
    pub observed_at: i64,
    pub source_priority: i32,
    pub specificity_score: f64,
    pub fields: Map<String, Value>,
    /// The rating its caller gave (none: its kind's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// How many times it was contested (`contest`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contests: u32,
    /// Its place in the order the database wrote observations in
    /// (`observations.write_order`, from a sequence; 0 for observations
    /// written before there was one): at one instant, the later write wins.
    #[serde(default, skip_serializing_if = "is_zero_order")]
    pub write_order: i64,
    /// When in the world it holds: `[valid_from, valid_to)`, microseconds
    /// since the epoch, either end open (None: unbounded). An observation
    /// without either holds at every instant, as every observation did
    /// before valid time ([`crate::valid_time`] folds the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<i64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_order(n: &i64) -> bool {
    *n == 0
}

impl Observation {
    /// Its rating: the given one or its kind's default, lowered by its
    /// contests.
    pub fn effective_confidence(&self) -> Confidence {
        self.confidence
            .unwrap_or(Confidence::default_for(
                self.source_priority >= CORRECTION_PRIORITY,
            ))
            .contested(self.contests)
    }
}

/// Where a field's value came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    #[serde(rename = "o")]
    pub observation_id: String,
    #[serde(rename = "s")]
    pub source_id: String,
    #[serde(rename = "t")]
    pub observed_at: i64,
    #[serde(rename = "p")]
    pub source_priority: i32,
    #[serde(rename = "x")]
    pub specificity_score: f64,
    /// The observation's rating when it is not its kind's default (a
    /// caller rated it, or it was contested): a snapshot folded before
    /// ratings existed reads the same.
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// The observation's write order (kept only when not 0, so states
    /// folded before write orders existed read the same).
    #[serde(rename = "w", default, skip_serializing_if = "is_zero_order")]
    pub write_order: i64,
}

impl Provenance {
    pub fn of(o: &Observation) -> Self {
        Provenance {
            observation_id: o.id.clone(),
            source_id: o.source_id.clone(),
            observed_at: o.observed_at,
            source_priority: o.source_priority,
            specificity_score: o.specificity_score,
            confidence: (o.confidence.is_some() || o.contests > 0)
                .then(|| o.effective_confidence()),
            write_order: o.write_order,
        }
    }

    /// The observation's rating (its kind's default when none is kept).
    pub fn confidence(&self) -> Confidence {
        self.confidence
            .unwrap_or(Confidence::default_for(self.is_correction()))
    }

    fn to_json(&self) -> Value {
        json!({
            "observation_id": self.observation_id,
            "source_id": self.source_id,
            "observed_at": format_micros(self.observed_at),
            "source_priority": self.source_priority,
            "specificity_score": self.specificity_score,
            "confidence": self.confidence().to_string(),
        })
    }

    pub fn is_correction(&self) -> bool {
        self.source_priority >= CORRECTION_PRIORITY
    }
}

/// An element of a merged array and where it first appeared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrayItem {
    #[serde(rename = "v")]
    pub value: Value,
    /// Canonical JSON of `value`: the de-duplication key.
    #[serde(rename = "k")]
    pub key: String,
    /// Position in the observation's array, for a stable order.
    #[serde(rename = "i")]
    pub position: usize,
    #[serde(rename = "by")]
    pub prov: Provenance,
}

impl ArrayItem {
    /// Order of first appearance: oldest observation, then id, then position.
    fn order(&self, other: &Self) -> Ordering {
        (
            self.prov.observed_at,
            &self.prov.observation_id,
            self.position,
        )
            .cmp(&(
                other.prov.observed_at,
                &other.prov.observation_id,
                other.position,
            ))
    }
}

/// The reducer's state for one field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldState {
    /// The winning candidate of a scalar strategy.
    Value {
        #[serde(rename = "v")]
        value: Value,
        #[serde(rename = "by")]
        prov: Provenance,
        /// What the field's observations disagree on ([`Differs`]): kept
        /// only when they do, so agreeing fields' states read as before.
        #[serde(rename = "d", default, skip_serializing_if = "Differs::is_none")]
        differs: Differs,
    },
    /// `merge_array`: items given at `priority`, the highest seen.
    Set {
        priority: i32,
        items: Vec<ArrayItem>,
        /// The newest observation at `priority` (it may have added nothing).
        #[serde(rename = "by")]
        latest: Provenance,
    },
}

/// What the observations of one field disagree on, each bit once any two
/// of them do: their values (canonical JSON) and their sources. Both is a
/// candidate contradiction (`neotoma_core::contradictions` decides), kept
/// with the fold so a listing of them reads an index of the entities with
/// one (`entity_snapshots_disagreeing`), not every observation. Each new
/// observation is compared with the field's winner so far, one of those
/// seen, so the bits do not depend on the order of arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Differs(u8);

impl Differs {
    const VALUES: u8 = 1;
    const SOURCES: u8 = 2;

    fn is_none(&self) -> bool {
        self.0 == 0
    }

    /// Two or more values from two or more sources.
    pub fn both(&self) -> bool {
        self.0 == Self::VALUES | Self::SOURCES
    }

    /// With an observation of `value` from `source`, compared with the
    /// winner's.
    fn with(self, value: &Value, source: &str, winner: &Value, winner_source: &str) -> Self {
        let mut bits = self.0;
        if bits & Self::VALUES == 0
            && value != winner
            && crate::canonical::canonical_json(value) != crate::canonical::canonical_json(winner)
        {
            bits |= Self::VALUES;
        }
        if source != winner_source {
            bits |= Self::SOURCES;
        }
        Differs(bits)
    }
}

/// The reducer's state for one entity: what is stored in
/// `entity_snapshots.reducer_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SnapshotState {
    /// The fields whose observations all hold at every instant.
    pub fields: BTreeMap<String, FieldState>,
    pub observation_count: u64,
    pub last_observation_at: Option<i64>,
    /// The fields of which some observation holds over an interval only,
    /// over valid time ([`crate::valid_time`]); absent when none, so a
    /// state without intervals reads and writes as before valid time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub timelines: BTreeMap<String, FieldTimeline>,
}

/// A stretch `[from, to)` of valid time and a field's state over it (None:
/// no observation of the field holds there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub from: Option<i64>,
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub to: Option<i64>,
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<FieldState>,
}

/// A field's states over valid time: segments in order, covering the whole
/// line, no two neighbours equal (folded by [`crate::valid_time`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FieldTimeline {
    pub(crate) segments: Vec<Segment>,
}

impl SnapshotState {
    /// Some field has two or more values from two or more sources (the
    /// indexes `entity_snapshots_disagreeing` and `…_over_time` hold such
    /// entities: their predicates read the same bits).
    pub fn disagrees(&self) -> bool {
        let both =
            |f: &FieldState| matches!(f, FieldState::Value { differs, .. } if differs.both());
        // And over valid time, where values hold together (the index
        // entity_snapshots_disagreeing_over_time).
        self.fields.values().any(both)
            || self
                .timelines
                .values()
                .flat_map(|t| t.segments.iter())
                .any(|s| s.state.as_ref().is_some_and(both))
    }
}

/// Merge policies by field; fields not listed use the default (`last_write`).
pub type Policies = BTreeMap<String, MergePolicy>;

/// What decides between two candidates for a field, in the order it is
/// asked: a correction beats what is not one, then the strategy's key, then
/// the tie-breaker's two keys, then the later write, last the smaller
/// observation id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    Correction,
    Strategy,
    ObservedAt,
    SourcePriority,
    WriteOrder,
    ObservationId,
}

/// Each decider's verdict on candidate `a` against `b` under `policy`, in
/// the order asked: the first that is not `Equal` decides ([`compare`]).
pub fn deciders(a: &Provenance, b: &Provenance, policy: MergePolicy) -> [(Decider, Ordering); 6] {
    let observed = (Decider::ObservedAt, a.observed_at.cmp(&b.observed_at));
    let priority = (
        Decider::SourcePriority,
        a.source_priority.cmp(&b.source_priority),
    );
    let primary = match policy.strategy {
        Strategy::LastWrite => observed.1,
        Strategy::HighestPriority | Strategy::MergeArray => priority.1,
        Strategy::MostSpecific => a.specificity_score.total_cmp(&b.specificity_score),
        Strategy::HighestConfidence => a.confidence().rank(b.confidence()),
    };
    let (first, second) = match policy.tie_breaker.unwrap_or_default() {
        TieBreaker::ObservedAt => (observed, priority),
        TieBreaker::SourcePriority => (priority, observed),
    };
    [
        (
            Decider::Correction,
            a.is_correction().cmp(&b.is_correction()),
        ),
        (Decider::Strategy, primary),
        first,
        second,
        // At one instant the later write wins (bulk's operations in order,
        // two stores given the same time).
        (Decider::WriteOrder, a.write_order.cmp(&b.write_order)),
        // The smaller id wins the last tie, so the order is total.
        (
            Decider::ObservationId,
            b.observation_id.cmp(&a.observation_id),
        ),
    ]
}

/// `Greater` when candidate `a` beats `b` under `policy`.
pub fn compare(a: &Provenance, b: &Provenance, policy: MergePolicy) -> Ordering {
    deciders(a, b, policy)
        .into_iter()
        .map(|(_, verdict)| verdict)
        .find(|verdict| verdict.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn contribution(value: &Value) -> Vec<Value> {
    match value {
        Value::Null => vec![],
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    }
}

fn newer(a: &Provenance, b: &Provenance) -> bool {
    (a.observed_at, a.write_order, &b.observation_id)
        > (b.observed_at, b.write_order, &a.observation_id)
}

fn merge_set(state: Option<FieldState>, prov: &Provenance, value: &Value) -> FieldState {
    let mut fresh: Vec<ArrayItem> = Vec::new();
    for (position, v) in contribution(value).into_iter().enumerate() {
        let key = crate::canonical::canonical_json(&v);
        if !fresh.iter().any(|i| i.key == key) {
            fresh.push(ArrayItem {
                value: v,
                key,
                position,
                prov: prov.clone(),
            });
        }
    }
    match state {
        Some(FieldState::Set {
            priority,
            mut items,
            latest,
        }) if priority == prov.source_priority => {
            for item in fresh {
                match items.iter_mut().find(|i| i.key == item.key) {
                    Some(existing) if item.order(existing) == Ordering::Less => *existing = item,
                    Some(_) => {}
                    None => items.push(item),
                }
            }
            items.sort_by(ArrayItem::order);
            let latest = if newer(prov, &latest) {
                prov.clone()
            } else {
                latest
            };
            FieldState::Set {
                priority,
                items,
                latest,
            }
        }
        Some(set @ FieldState::Set { priority, .. }) if priority > prov.source_priority => set,
        // Higher priority than before (or no state, or a state of another
        // strategy): this observation starts the set.
        _ => FieldState::Set {
            priority: prov.source_priority,
            items: fresh,
            latest: prov.clone(),
        },
    }
}

/// Adds one observation to `state`.
pub fn apply(state: &mut SnapshotState, obs: &Observation, policies: &Policies) {
    state.observation_count += 1;
    state.last_observation_at = Some(
        state
            .last_observation_at
            .map_or(obs.observed_at, |t| t.max(obs.observed_at)),
    );
    let prov = Provenance::of(obs);
    for (field, value) in &obs.fields {
        let policy = policies.get(field).copied().unwrap_or_default();
        let next = apply_field(state.fields.remove(field), &prov, value, policy);
        state.fields.insert(field.clone(), next);
    }
}

/// A field's state (None: no observation of it yet) with one more
/// observation's `value`, by the field's `policy`.
pub fn apply_field(
    current: Option<FieldState>,
    prov: &Provenance,
    value: &Value,
    policy: MergePolicy,
) -> FieldState {
    match policy.strategy {
        Strategy::MergeArray => merge_set(current, prov, value),
        _ => match current {
            Some(FieldState::Value {
                value: v,
                prov: p,
                differs,
            }) => {
                let differs = differs.with(value, &prov.source_id, &v, &p.source_id);
                let (value, prov) = if compare(prov, &p, policy) != Ordering::Greater {
                    (v, p)
                } else {
                    (value.clone(), prov.clone())
                };
                FieldState::Value {
                    value,
                    prov,
                    differs,
                }
            }
            _ => FieldState::Value {
                value: value.clone(),
                prov: prov.clone(),
                differs: Differs::default(),
            },
        },
    }
}

/// Folds every observation into a fresh state.
pub fn reduce<'a>(
    observations: impl IntoIterator<Item = &'a Observation>,
    policies: &Policies,
) -> SnapshotState {
    let mut state = SnapshotState::default();
    for o in observations {
        apply(&mut state, o, policies);
    }
    state
}

/// What a snapshot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// field → value (cleared fields are absent).
    pub snapshot: Map<String, Value>,
    /// field → observation id (the seed's `provenance`).
    pub provenance: Map<String, Value>,
    /// field → {observation_id, source_id, observed_at, source_priority,
    /// specificity_score, confidence[, observation_ids]}.
    pub field_provenance: Map<String, Value>,
}

pub fn render(state: &SnapshotState) -> Rendered {
    let mut r = Rendered {
        snapshot: Map::new(),
        provenance: Map::new(),
        field_provenance: Map::new(),
    };
    for (field, fs) in &state.fields {
        match fs {
            FieldState::Value { value, prov, .. } => {
                if value.is_null() {
                    continue;
                }
                r.snapshot.insert(field.clone(), value.clone());
                r.provenance
                    .insert(field.clone(), Value::String(prov.observation_id.clone()));
                r.field_provenance.insert(field.clone(), prov.to_json());
            }
            FieldState::Set { items, latest, .. } => {
                if items.is_empty() {
                    continue;
                }
                r.snapshot.insert(
                    field.clone(),
                    Value::Array(items.iter().map(|i| i.value.clone()).collect()),
                );
                r.provenance
                    .insert(field.clone(), Value::String(latest.observation_id.clone()));
                let mut contributors: Vec<&str> = items
                    .iter()
                    .map(|i| i.prov.observation_id.as_str())
                    .collect();
                contributors.dedup();
                let mut p = latest.to_json();
                p["observation_ids"] = json!(contributors);
                r.field_provenance.insert(field.clone(), p);
            }
        }
    }
    r
}

/// A snapshot field's rating, from its field_provenance entry: the
/// `confidence` it has, else (a snapshot folded before ratings existed)
/// the default of its source priority.
pub fn of_field(field_provenance: &Value) -> Confidence {
    field_provenance["confidence"]
        .as_str()
        .and_then(|c| Confidence::parse(c).ok())
        .unwrap_or_else(|| {
            let priority = field_provenance["source_priority"].as_i64().unwrap_or(0);
            Confidence::default_for(priority >= i64::from(CORRECTION_PRIORITY))
        })
}

/// Keeps, of a snapshot and its provenance, the fields whose rating passes
/// `min` (`min_confidence`).
pub fn keep_passing(
    min: Confidence,
    snapshot: &mut Map<String, Value>,
    provenance: &mut Map<String, Value>,
    field_provenance: &mut Map<String, Value>,
) {
    field_provenance.retain(|_, fp| of_field(fp).passes(min));
    snapshot.retain(|field, _| field_provenance.contains_key(field));
    provenance.retain(|field, _| field_provenance.contains_key(field));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::schema::Strategy;
    use proptest::prelude::{
        any, prop, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig,
    };
    use proptest::strategy::Strategy as _;

    pub(crate) fn obs(id: &str, t: i64, priority: i32, spec: f64, fields: Value) -> Observation {
        Observation {
            id: id.to_string(),
            source_id: format!("src-{id}"),
            observed_at: t,
            source_priority: priority,
            specificity_score: spec,
            fields: fields.as_object().unwrap().clone(),
            confidence: None,
            contests: 0,
            write_order: 0,
            valid_from: None,
            valid_to: None,
        }
    }

    fn policies(pairs: &[(&str, Strategy, Option<TieBreaker>)]) -> Policies {
        pairs
            .iter()
            .map(|(f, s, t)| {
                (
                    f.to_string(),
                    MergePolicy {
                        strategy: *s,
                        tie_breaker: *t,
                    },
                )
            })
            .collect()
    }

    fn snap(state: &SnapshotState) -> Value {
        Value::Object(render(state).snapshot)
    }

    #[test]
    fn last_write_takes_the_newest() {
        let o = [
            obs("a", 1, 100, 0.1, json!({"x": 1})),
            obs("b", 2, 50, 0.1, json!({"x": 2})),
        ];
        assert_eq!(snap(&reduce(&o, &Policies::new())), json!({"x": 2}));
    }

    #[test]
    fn highest_priority_takes_the_most_trusted_source() {
        let p = policies(&[("x", Strategy::HighestPriority, None)]);
        let o = [
            obs("a", 1, 100, 0.1, json!({"x": 1})),
            obs("b", 2, 50, 0.1, json!({"x": 2})),
        ];
        assert_eq!(snap(&reduce(&o, &p)), json!({"x": 1}));
    }

    #[test]
    fn most_specific_takes_the_most_detailed_observation() {
        let p = policies(&[("x", Strategy::MostSpecific, None)]);
        let o = [
            obs("a", 1, 100, 0.9, json!({"x": 1})),
            obs("b", 2, 100, 0.2, json!({"x": 2})),
        ];
        assert_eq!(snap(&reduce(&o, &p)), json!({"x": 1}));
    }

    #[test]
    fn tie_breakers_then_id() {
        // Same priority: observed_at decides by default...
        let p = policies(&[("x", Strategy::HighestPriority, None)]);
        let o = [
            obs("a", 1, 100, 0.0, json!({"x": 1})),
            obs("b", 2, 100, 0.0, json!({"x": 2})),
        ];
        assert_eq!(snap(&reduce(&o, &p)), json!({"x": 2}));
        // ...source_priority as the tie-breaker of last_write...
        let p = policies(&[("x", Strategy::LastWrite, Some(TieBreaker::SourcePriority))]);
        let o = [
            obs("a", 5, 200, 0.0, json!({"x": 1})),
            obs("b", 5, 100, 0.0, json!({"x": 2})),
        ];
        assert_eq!(snap(&reduce(&o, &p)), json!({"x": 1}));
        // ...and with everything equal the smaller id wins, whatever the order.
        let o = [
            obs("b", 5, 100, 0.0, json!({"x": "b"})),
            obs("a", 5, 100, 0.0, json!({"x": "a"})),
        ];
        assert_eq!(snap(&reduce(&o, &Policies::new())), json!({"x": "a"}));
        assert_eq!(
            snap(&reduce(o.iter().rev(), &Policies::new())),
            json!({"x": "a"})
        );
    }

    #[test]
    fn highest_confidence_takes_the_best_rating_contests_counted() {
        let p = policies(&[("x", Strategy::HighestConfidence, None)]);
        let rated = |id: &str, t: i64, c: Option<&str>, contests: u32, x: i64| Observation {
            confidence: c.map(|c| Confidence::parse(c).unwrap()),
            contests,
            ..obs(id, t, 100, 0.0, json!({"x": x}))
        };
        // B1 beats a newer C1, and an unrated (F3) newer still.
        let o = [
            rated("a", 1, Some("B1"), 0, 1),
            rated("b", 2, Some("C1"), 0, 2),
            rated("c", 3, None, 0, 3),
        ];
        let r = render(&reduce(&o, &p));
        assert_eq!(r.snapshot["x"], json!(1));
        assert_eq!(r.field_provenance["x"]["confidence"], "B1");
        // Contested twice, B1 becomes B3: still ahead of C1 (reliability first).
        let o2 = [
            rated("a", 1, Some("B1"), 2, 1),
            rated("b", 2, Some("B2"), 0, 2),
        ];
        let r = render(&reduce(&o2, &p));
        assert_eq!(r.snapshot["x"], json!(2));
        assert_eq!(r.field_provenance["x"]["confidence"], "B2");
        // Equal ratings: the tie-breaker (newest) decides.
        let o3 = [
            rated("a", 1, Some("B2"), 0, 1),
            rated("b", 2, Some("B2"), 0, 2),
        ];
        assert_eq!(snap(&reduce(&o3, &p)), json!({"x": 2}));
        // Unrated observations keep no rating in the state, and show their default.
        let s = reduce([&rated("u", 3, None, 0, 3)], &p);
        assert!(!serde_json::to_string(&s).unwrap().contains("\"c\""));
        assert_eq!(render(&s).field_provenance["x"]["confidence"], "F3");
    }

    #[test]
    fn corrections_always_win() {
        for strategy in [
            Strategy::LastWrite,
            Strategy::HighestPriority,
            Strategy::MostSpecific,
        ] {
            let p = policies(&[("x", strategy, None)]);
            let o = [
                obs("fix", 1, CORRECTION_PRIORITY, 0.0, json!({"x": "fixed"})),
                obs("later", 9, 900, 1.0, json!({"x": "wrong"})),
            ];
            assert_eq!(snap(&reduce(&o, &p)), json!({"x": "fixed"}), "{strategy:?}");
        }
    }

    #[test]
    fn merge_array_unions_at_the_highest_priority() {
        let p = policies(&[("tags", Strategy::MergeArray, None)]);
        let o = [
            obs("a", 1, 100, 0.0, json!({"tags": ["x", "y"]})),
            obs("b", 2, 100, 0.0, json!({"tags": ["y", "z"]})),
            obs("c", 3, 50, 0.0, json!({"tags": ["low"]})),
        ];
        let s = reduce(&o, &p);
        assert_eq!(snap(&s), json!({"tags": ["x", "y", "z"]}));
        let fp = &render(&s).field_provenance["tags"];
        assert_eq!(fp["observation_id"], "b");
        assert_eq!(fp["observation_ids"], json!(["a", "b"]));
        // A correction replaces the array instead of adding to it.
        let mut with_fix = o.to_vec();
        with_fix.push(obs(
            "fix",
            0,
            CORRECTION_PRIORITY,
            0.0,
            json!({"tags": ["only"]}),
        ));
        assert_eq!(snap(&reduce(&with_fix, &p)), json!({"tags": ["only"]}));
    }

    #[test]
    fn absent_fields_are_ignored_and_null_clears() {
        let o = [
            obs("a", 1, 100, 0.0, json!({"x": 1, "y": 1})),
            obs("b", 2, 100, 0.0, json!({"y": null})),
        ];
        let s = reduce(&o, &Policies::new());
        assert_eq!(snap(&s), json!({"x": 1}));
        assert!(!render(&s).provenance.contains_key("y"));
        assert_eq!(s.observation_count, 2);
        assert_eq!(s.last_observation_at, Some(2));
    }

    #[test]
    fn provenance_points_at_the_winning_observation() {
        let o = [
            obs("a", 1, 100, 0.5, json!({"x": 1, "y": 1})),
            obs("b", 2, 100, 0.5, json!({"x": 2})),
        ];
        let r = render(&reduce(&o, &Policies::new()));
        assert_eq!(r.provenance["x"], "b");
        assert_eq!(r.provenance["y"], "a");
        assert_eq!(r.field_provenance["y"]["source_id"], "src-a");
        assert_eq!(r.field_provenance["y"]["source_priority"], 100);
        assert_eq!(
            r.field_provenance["y"]["observed_at"],
            "1970-01-01T00:00:00.000001Z"
        );
    }

    #[test]
    fn state_survives_a_round_trip_through_json() {
        let p = policies(&[("tags", Strategy::MergeArray, None)]);
        let o = [obs(
            "a",
            1,
            100,
            0.5,
            json!({"x": {"n": 1}, "tags": [1, 2]}),
        )];
        let s = reduce(&o, &p);
        let back: SnapshotState =
            serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    // Property: the snapshot is a function of the set of observations.
    pub(crate) fn arb_observations() -> impl proptest::strategy::Strategy<Value = Vec<Observation>>
    {
        let value = prop_oneof![
            Just(Value::Null),
            (0i64..3).prop_map(|n| json!(n)),
            prop::sample::select(vec!["a", "b"]).prop_map(|s| json!(s)),
            prop::collection::vec(0i64..4, 0..3).prop_map(|v| json!(v)),
        ];
        let fields = prop::collection::btree_map(
            prop::sample::select(vec!["f1", "f2", "f3", "tags"]),
            value,
            0..4,
        );
        let rating = prop::option::of(prop::sample::select(vec!["A1", "B2", "B3", "F3", "C1"]));
        let one = (
            0i64..4,
            prop::sample::select(vec![50, 100, 1000]),
            prop::sample::select(vec![0.0, 0.5, 1.0]),
            fields,
            (rating, 0u32..3),
        );
        prop::collection::vec(one, 0..12).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (t, p, s, f, (c, n)))| Observation {
                    id: format!("obs{i:02}"),
                    source_id: format!("src{}", i % 3),
                    observed_at: t,
                    source_priority: p,
                    specificity_score: s,
                    fields: f.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    confidence: c.map(|c| Confidence::parse(c).unwrap()),
                    contests: n,
                    // Distinct, in no order of their ids; the first one
                    // written before write orders existed (0).
                    write_order: (i as i64 * 37) % 101,
                    valid_from: None,
                    valid_to: None,
                })
                .collect()
        })
    }

    pub(crate) fn all_policies() -> Vec<Policies> {
        let mut out = vec![];
        for s in [
            Strategy::LastWrite,
            Strategy::HighestPriority,
            Strategy::MostSpecific,
            Strategy::HighestConfidence,
        ] {
            for t in [None, Some(TieBreaker::SourcePriority)] {
                out.push(policies(&[
                    ("f1", s, t),
                    ("f2", Strategy::LastWrite, None),
                    ("tags", Strategy::MergeArray, None),
                ]));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn arrival_order_never_changes_the_snapshot(
            observations in arb_observations(),
            shuffle in any::<prop::sample::Index>(),
            seed in any::<u64>(),
        ) {
            let mut shuffled = observations.clone();
            crate::test_support::shuffle(&mut shuffled, seed);
            if !shuffled.is_empty() {
                let k = shuffle.index(shuffled.len());
                shuffled.rotate_left(k);
            }
            for p in all_policies() {
                let a = reduce(&observations, &p);
                let b = reduce(&shuffled, &p);
                prop_assert_eq!(render(&a), render(&b));
                prop_assert_eq!(a, b);
            }
        }

        #[test]
        fn at_one_instant_the_later_write_wins(
            values in prop::collection::vec(0i64..1000, 1..12),
            seed in any::<u64>(),
            at in 0i64..3,
        ) {
            // Observations alike in everything but their value and write
            // order (one transaction's, or two stores given the same time),
            // in any arrival order: under every policy the value written
            // last is the snapshot's, whatever the ids.
            let mut written: Vec<Observation> = values
                .iter()
                .enumerate()
                .map(|(i, v)| Observation {
                    write_order: 10 + i as i64,
                    ..obs(&format!("o{:02}", (i * 7919) % 97), at, 100, 0.5, json!({"f": v}))
                })
                .collect();
            let last = json!(values[values.len() - 1]);
            crate::test_support::shuffle(&mut written, seed);
            for strategy in [Strategy::LastWrite, Strategy::HighestPriority, Strategy::MostSpecific, Strategy::HighestConfidence] {
                for tie in [None, Some(TieBreaker::SourcePriority)] {
                    let r = render(&reduce(&written, &policies(&[("f", strategy, tie)])));
                    prop_assert_eq!(r.snapshot.get("f"), Some(&last));
                }
            }
        }

        #[test]
        fn incremental_equals_full(observations in arb_observations(), split in any::<prop::sample::Index>(), which in 0usize..8) {
            let p = &all_policies()[which];
            let full = reduce(&observations, p);
            // Stored state, serialised and read back, then the rest applied.
            let k = if observations.is_empty() { 0 } else { split.index(observations.len()) };
            let first = reduce(&observations[..k], p);
            let mut stored: SnapshotState = serde_json::from_value(serde_json::to_value(&first).unwrap()).unwrap();
            for o in &observations[k..] {
                apply(&mut stored, o, p);
            }
            prop_assert_eq!(stored, full);
        }
    }

    #[test]
    fn disagreement_is_kept_only_when_there_is_some() {
        let p = Policies::new();
        let mut a = obs("o1", 1, 100, 0.0, json!({"f": "x", "g": 1}));
        a.source_id = "s1".into();
        let mut b = obs("o2", 2, 100, 0.0, json!({"f": "x", "g": 2}));
        b.source_id = "s1".into();
        // One source, two values: not yet.
        let state = reduce([&a, &b], &p);
        assert!(!state.disagrees());
        let stored = serde_json::to_value(&state).unwrap();
        assert!(
            stored["fields"]["f"].get("d").is_none(),
            "agreeing: as before"
        );
        assert_eq!(stored["fields"]["g"]["d"], json!(1));
        // Another source giving the winner's value: two values, two sources.
        let mut c = obs("o3", 3, 100, 0.0, json!({"g": 2}));
        c.source_id = "s2".into();
        let state = reduce([&a, &b, &c], &p);
        assert!(state.disagrees());
        assert_eq!(
            serde_json::to_value(&state).unwrap()["fields"]["g"]["d"],
            json!(3)
        );
        // A merged array's values are joined, never a disagreement.
        let tags = policies(&[("g", Strategy::MergeArray, None)]);
        assert!(!reduce([&a, &b, &c], &tags).disagrees());
    }

    #[test]
    fn min_confidence_keeps_the_passing_fields() {
        let mut snapshot =
            serde_json::from_value(serde_json::json!({"a": 1, "b": 2, "c": 3})).unwrap();
        let mut provenance =
            serde_json::from_value(serde_json::json!({"a": "o1", "b": "o2", "c": "o3"})).unwrap();
        let mut fp = serde_json::from_value(serde_json::json!({
            "a": {"confidence": "B2", "source_priority": 100},
            "b": {"confidence": "C1", "source_priority": 100},
            // Folded before ratings: a correction's default, A1.
            "c": {"source_priority": 1000}}))
        .unwrap();
        keep_passing(
            Confidence::parse("B2").unwrap(),
            &mut snapshot,
            &mut provenance,
            &mut fp,
        );
        assert_eq!(
            serde_json::Value::Object(snapshot),
            serde_json::json!({"a": 1, "c": 3})
        );
        assert_eq!(provenance.len(), 2);
        assert_eq!(fp.len(), 2);
    }
}
