//! Valid time (issue 44, docs/design/valid-time.md): a field's state over
//! the time line of the world, as segments, each the ordinary reducer state
//! ([`FieldState`]) of the observations valid throughout it.
//!
//! An observation is valid over a half-open interval `[from, to)` (either
//! end open: unbounded), so a value valid to the 1st is not valid on the
//! 1st and successions meet without overlapping. Applying one splits the
//! segments at its ends and folds it, with the reducer's own
//! [`apply_field`], into each segment inside its interval; adjacent
//! segments left equal are joined. The segments are therefore a function
//! of the set of observations (their ends are the union of the intervals'
//! ends, each state the fold of the observations covering it), whatever
//! the order they arrive in, and a store costs the segments its interval
//! touches, not the field's observations.
//!
//! An entity's state ([`SnapshotState`]) keeps a field's plain state while
//! every observation of it holds always, and its timeline once one holds
//! over an interval (so which form a field has depends on its
//! observations, not on their order): [`apply`] is the fold of both,
//! [`render_at`] the snapshot at one instant, [`valid_until`] how long that
//! snapshot stays true, [`history`] a field's values over valid time.

use crate::reducer::{
    self, apply_field, FieldState, FieldTimeline, Observation, Policies, Provenance, Rendered,
    Segment, SnapshotState,
};
use crate::schema::MergePolicy;
use crate::NeotomaError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// `[from, to)` in microseconds since the epoch; None: unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl Interval {
    /// Valid at every instant (an observation without an interval).
    pub const ALWAYS: Interval = Interval {
        from: None,
        to: None,
    };

    /// The interval, refused when it holds no instant (`from >= to`).
    pub fn new(from: Option<i64>, to: Option<i64>) -> Result<Self, NeotomaError> {
        if let (Some(f), Some(t)) = (from, to) {
            if f >= t {
                return Err(NeotomaError::invalid_field(
                    "valid_to",
                    "valid_to must be after valid_from (the interval is [valid_from, valid_to))",
                ));
            }
        }
        Ok(Interval { from, to })
    }

    /// An observation's interval.
    pub fn of(o: &Observation) -> Self {
        Interval {
            from: o.valid_from,
            to: o.valid_to,
        }
    }

    /// A source's `content` with the interval's given ends beside what it
    /// holds (`valid_from`, `valid_to`): only when given, so content stored
    /// without valid time keeps its hash (and its source id).
    pub fn stamped(&self, mut content: serde_json::Value) -> serde_json::Value {
        for (key, end) in [("valid_from", self.from), ("valid_to", self.to)] {
            if let Some(us) = end {
                content[key] = serde_json::json!(crate::time::format_micros(us));
            }
        }
        content
    }

    /// Whether the instant `t` lies in it (its start included, its end not).
    pub fn contains(&self, t: i64) -> bool {
        self.from.is_none_or(|f| f <= t) && self.to.is_none_or(|e| t < e)
    }

    /// Whether it and `other` share an instant.
    pub fn overlaps(&self, other: &Interval) -> bool {
        let before = |end: Option<i64>, start: Option<i64>| matches!((end, start), (Some(e), Some(s)) if e <= s);
        !before(self.to, other.from) && !before(other.to, self.from)
    }

    /// Whether all of `[from, to)` lies in it.
    fn covers(&self, from: Option<i64>, to: Option<i64>) -> bool {
        starts_by(self.from, from) && ends_by(to, self.to)
    }
}

/// Whether a start `a` is no later than a start `b` (None: the beginning).
fn starts_by(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(a), Some(b)) => a <= b,
    }
}

/// Whether an end `a` is no later than an end `b` (None: never).
fn ends_by(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a <= b,
    }
}

/// Adds one observation to `state`: a field whose observations all hold
/// always is folded as the reducer folds it; a field with an observation
/// over an interval, over valid time (its plain state, if any, becomes
/// the one segment of its timeline: those observations hold throughout).
pub fn apply(state: &mut SnapshotState, obs: &Observation, policies: &Policies) {
    let interval = Interval::of(obs);
    let timed = |field: &str, state: &SnapshotState| {
        interval != Interval::ALWAYS || state.timelines.contains_key(field)
    };
    if !obs.fields.keys().any(|f| timed(f, state)) {
        reducer::apply(state, obs, policies);
        return;
    }
    let (over_time, plain): (Vec<_>, Vec<_>) =
        obs.fields.iter().partition(|(f, _)| timed(f, state));
    // Counts the observation once, and folds its plain fields.
    let mut rest = obs.clone();
    rest.fields = plain
        .into_iter()
        .map(|(f, v)| (f.clone(), v.clone()))
        .collect();
    reducer::apply(state, &rest, policies);
    let prov = Provenance::of(obs);
    for (field, value) in over_time {
        let policy = policies.get(field).copied().unwrap_or_default();
        let plain_state = state.fields.remove(field);
        state
            .timelines
            .entry(field.clone())
            .or_insert_with(|| FieldTimeline::always(plain_state))
            .apply(interval, &prov, value, policy);
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

/// The state as the observations valid at the instant `t` make it: each
/// timeline's state then, as a plain field.
pub fn state_at(state: &SnapshotState, t: i64) -> SnapshotState {
    let mut fields = state.fields.clone();
    for (field, timeline) in &state.timelines {
        if let Some(s) = timeline.at(t) {
            fields.insert(field.clone(), s.clone());
        }
    }
    SnapshotState {
        fields,
        observation_count: state.observation_count,
        last_observation_at: state.last_observation_at,
        timelines: Default::default(),
    }
}

/// What the snapshot shows at the instant `t` of valid time.
pub fn render_at(state: &SnapshotState, t: i64) -> Rendered {
    if state.timelines.is_empty() {
        return reducer::render(state);
    }
    reducer::render(&state_at(state, t))
}

/// The first instant after `t` at which some field's state changes: the
/// snapshot rendered at `t` holds until then (None: for ever).
pub fn valid_until(state: &SnapshotState, t: i64) -> Option<i64> {
    state
        .timelines
        .values()
        .filter_map(|timeline| timeline.segment_at(t).to)
        .min()
}

/// The snapshot rendered at the instant `t` and until when it holds.
pub fn rendered_at(state: &SnapshotState, t: i64) -> (Rendered, Option<i64>) {
    (render_at(state, t), valid_until(state, t))
}

/// A stretch of valid time over which a field has one value.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub value: Value,
    /// As the snapshot's `field_provenance` gives it.
    pub provenance: Value,
}

/// A field's values over valid time, earliest first: one stretch per
/// segment that has a value (a field whose observations all hold always:
/// one unbounded stretch; a field never observed: none).
pub fn history(state: &SnapshotState, field: &str) -> Vec<Stretch> {
    let segments = match (state.timelines.get(field), state.fields.get(field)) {
        (Some(timeline), _) => timeline.segments.clone(),
        (None, Some(plain)) => FieldTimeline::always(Some(plain.clone())).segments,
        (None, None) => vec![],
    };
    segments
        .into_iter()
        .filter_map(|s| {
            let one = SnapshotState {
                fields: [(field.to_string(), s.state?)].into_iter().collect(),
                ..Default::default()
            };
            let mut r = reducer::render(&one);
            Some(Stretch {
                from: s.from,
                to: s.to,
                value: r.snapshot.remove(field)?,
                provenance: r.field_provenance.remove(field).unwrap_or_default(),
            })
        })
        .collect()
}

/// A field's value over one stretch, compact (`[from, to, value,
/// confidence]` in JSON): what a listing needs to show the field at an
/// instant without the reducer's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueStretch(
    pub Option<i64>,
    pub Option<i64>,
    pub Value,
    pub crate::confidence::Confidence,
);

/// The values of an entity's fields that hold over valid time, by field
/// (`entity_snapshots.valid_values`); empty when every field holds always.
pub type ValueTimelines = BTreeMap<String, Vec<ValueStretch>>;

/// The value timelines of a state ([`ValueTimelines`]).
pub fn value_timelines(state: &SnapshotState) -> ValueTimelines {
    state
        .timelines
        .keys()
        .map(|field| {
            let stretches = history(state, field)
                .into_iter()
                .map(|s| {
                    let rating = reducer::of_field(&s.provenance);
                    ValueStretch(s.from, s.to, s.value, rating)
                })
                .collect();
            (field.clone(), stretches)
        })
        .collect()
}

/// The value of each field of `timelines` at the instant `t` (None: no
/// value holds then), with its rating.
pub fn values_at(
    timelines: &ValueTimelines,
    t: i64,
) -> impl Iterator<Item = (&String, Option<&ValueStretch>)> {
    timelines.iter().map(move |(field, stretches)| {
        let holding = stretches
            .iter()
            .find(|s| Interval { from: s.0, to: s.1 }.contains(t));
        (field, holding)
    })
}

/// A snapshot rendered now (`snapshot`) as at the instant `t`: each field
/// of `timelines` takes its value then when one holds and `shown` keeps
/// it, and leaves otherwise; the other fields hold at every instant.
pub fn overlay_at(
    snapshot: &mut serde_json::Map<String, Value>,
    timelines: &ValueTimelines,
    t: i64,
    shown: impl Fn(&ValueStretch) -> bool,
) {
    for (field, holding) in values_at(timelines, t) {
        match holding.filter(|s| shown(s)) {
            Some(s) => snapshot.insert(field.clone(), s.2.clone()),
            None => snapshot.remove(field),
        };
    }
}

impl Default for FieldTimeline {
    fn default() -> Self {
        FieldTimeline::always(None)
    }
}

impl FieldTimeline {
    /// One segment, the whole line, in `state`.
    pub fn always(state: Option<FieldState>) -> Self {
        FieldTimeline {
            segments: vec![Segment {
                from: None,
                to: None,
                state,
            }],
        }
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The segment the instant `t` lies in.
    fn segment_at(&self, t: i64) -> &Segment {
        // The segments cover the line: the last one has no end.
        &self.segments[self.index_at(t).min(self.segments.len() - 1)]
    }

    /// The index of the segment the instant `t` lies in: the first that
    /// ends after it.
    fn index_at(&self, t: i64) -> usize {
        self.segments
            .partition_point(|s| s.to.is_some_and(|e| e <= t))
    }

    /// The field's state at the instant `t`.
    pub fn at(&self, t: i64) -> Option<&FieldState> {
        self.segment_at(t).state.as_ref()
    }

    /// Folds in an observation of `value` valid over `interval`.
    pub fn apply(
        &mut self,
        interval: Interval,
        prov: &Provenance,
        value: &Value,
        policy: MergePolicy,
    ) {
        for end in [interval.from, interval.to].into_iter().flatten() {
            self.split_at(end);
        }
        for s in &mut self.segments {
            if interval.covers(s.from, s.to) {
                s.state = Some(apply_field(s.state.take(), prov, value, policy));
            }
        }
        self.join();
    }

    /// Splits the segment `t` falls strictly inside at `t`, each half with
    /// its state.
    fn split_at(&mut self, t: i64) {
        let i = self.index_at(t);
        let Some(s) = self.segments.get_mut(i) else {
            return;
        };
        if s.from.map_or(Ordering::Less, |f| f.cmp(&t)) != Ordering::Less {
            return;
        }
        let later = Segment {
            from: Some(t),
            to: s.to,
            state: s.state.clone(),
        };
        s.to = Some(t);
        self.segments.insert(i + 1, later);
    }

    /// Joins neighbours whose states are equal: what comes after either
    /// applies to both alike, so the joined form is the one canonical form.
    fn join(&mut self) {
        let mut joined: Vec<Segment> = Vec::with_capacity(self.segments.len());
        for s in self.segments.drain(..) {
            match joined.last_mut() {
                Some(last) if last.state == s.state => last.to = s.to,
                _ => joined.push(s),
            }
        }
        self.segments = joined;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reducer::Observation;
    use crate::schema::{Strategy as Merge, TieBreaker};
    use proptest::prelude::*;
    use serde_json::json;

    fn prov(id: &str, observed_at: i64, priority: i32) -> Provenance {
        Provenance::of(&Observation {
            id: id.to_string(),
            source_id: format!("src-{id}"),
            observed_at,
            source_priority: priority,
            specificity_score: 0.5,
            fields: Default::default(),
            confidence: None,
            contests: 0,
            write_order: 0,
            valid_from: None,
            valid_to: None,
        })
    }

    fn value_at(t: &FieldTimeline, at: i64) -> Option<Value> {
        match t.at(at)? {
            FieldState::Value { value, .. } => Some(value.clone()),
            FieldState::Set { items, .. } => Some(json!(items.len())),
        }
    }

    #[test]
    fn a_succession_answers_by_instant_start_included_end_not() {
        let mut employer = FieldTimeline::default();
        let policy = MergePolicy::default();
        let acme = Interval::new(Some(2019), Some(2022)).unwrap();
        let initech = Interval::new(Some(2022), None).unwrap();
        employer.apply(acme, &prov("a", 1, 100), &json!("Acme"), policy);
        employer.apply(initech, &prov("b", 2, 100), &json!("Initech"), policy);
        assert_eq!(value_at(&employer, 2018), None);
        assert_eq!(value_at(&employer, 2019), Some(json!("Acme")));
        assert_eq!(value_at(&employer, 2021), Some(json!("Acme")));
        assert_eq!(value_at(&employer, 2022), Some(json!("Initech")));
        assert_eq!(value_at(&employer, i64::MAX), Some(json!("Initech")));
        assert_eq!(employer.segments().len(), 3);
        // Disjoint values are a succession, not a disagreement.
        for s in employer.segments() {
            if let Some(FieldState::Value { differs, .. }) = &s.state {
                assert!(!differs.both());
            }
        }
    }

    #[test]
    fn an_unbounded_value_holds_where_no_interval_beats_it() {
        let mut city = FieldTimeline::default();
        let policy = MergePolicy::default();
        city.apply(
            Interval::ALWAYS,
            &prov("a", 1, 100),
            &json!("Paris"),
            policy,
        );
        city.apply(
            Interval::new(Some(10), Some(20)).unwrap(),
            &prov("b", 5, 100),
            &json!("Lyon"),
            policy,
        );
        assert_eq!(value_at(&city, 9), Some(json!("Paris")));
        assert_eq!(value_at(&city, 10), Some(json!("Lyon")));
        assert_eq!(value_at(&city, 20), Some(json!("Paris")));
        // An older observation over the same stretch loses (last_write).
        city.apply(
            Interval::new(Some(0), Some(30)).unwrap(),
            &prov("c", 0, 100),
            &json!("Nice"),
            policy,
        );
        assert_eq!(value_at(&city, 15), Some(json!("Lyon")));
        assert_eq!(value_at(&city, 25), Some(json!("Paris")));
        // Where they overlap with different values: a disagreement.
        let Some(FieldState::Value { differs, .. }) = city.at(15) else {
            panic!("a value");
        };
        assert!(differs.both());
    }

    #[test]
    fn a_fields_history_is_its_values_by_stretch() {
        let policies = Policies::new();
        let mut state = SnapshotState::default();
        let obs = |id: &str, v: Value, from: Option<i64>, to: Option<i64>| Observation {
            valid_from: from,
            valid_to: to,
            ..crate::reducer::tests::obs(id, 1, 100, 0.5, json!({"employer": v, "name": "Alice"}))
        };
        apply(
            &mut state,
            &obs("b", json!("Initech"), Some(2022), None),
            &policies,
        );
        apply(
            &mut state,
            &obs("a", json!("Acme"), Some(2019), Some(2022)),
            &policies,
        );
        let employer: Vec<_> = history(&state, "employer")
            .into_iter()
            .map(|s| {
                (
                    s.from,
                    s.to,
                    s.value,
                    s.provenance["observation_id"].clone(),
                )
            })
            .collect();
        assert_eq!(
            employer,
            vec![
                (Some(2019), Some(2022), json!("Acme"), json!("a")),
                (Some(2022), None, json!("Initech"), json!("b")),
            ]
        );
        assert_eq!(history(&state, "nickname"), vec![]);
        // Rendered now (2025): Initech, for ever; in 2020: Acme, until 2022.
        let (now, until) = rendered_at(&state, 2025);
        assert_eq!(
            (now.snapshot["employer"].clone(), until),
            (json!("Initech"), None)
        );
        let (then, until) = rendered_at(&state, 2020);
        assert_eq!(
            (then.snapshot["employer"].clone(), until),
            (json!("Acme"), Some(2022))
        );
        // Before 2019 no employer is known, and the name neither (stored
        // with the same intervals).
        let (before, until) = rendered_at(&state, 2000);
        assert_eq!((before.snapshot.get("employer"), until), (None, Some(2019)));
        let always = obs("c", json!("Globex"), None, None);
        let plain = reduce([&always], &policies);
        assert_eq!(history(&plain, "employer").len(), 1);
        assert_eq!(history(&plain, "employer")[0].from, None);
    }

    #[test]
    fn value_timelines_answer_what_the_render_shows_at_every_instant() {
        let policies = Policies::new();
        let obs = |id: &str, v: &str, from: Option<i64>, to: Option<i64>| Observation {
            valid_from: from,
            valid_to: to,
            ..crate::reducer::tests::obs(id, 1, 100, 0.5, json!({"role": v, "name": "Ann"}))
        };
        let state = reduce(
            &[
                obs("a", "engineer", Some(10), Some(20)),
                obs("b", "manager", Some(20), None),
                crate::reducer::tests::obs(
                    "c",
                    1,
                    100,
                    0.5,
                    json!({"name": "Ann", "city": "Oslo"}),
                ),
            ],
            &policies,
        );
        let timelines = value_timelines(&state);
        assert_eq!(timelines.keys().collect::<Vec<_>>(), vec!["name", "role"]);
        for t in [0, 9, 10, 15, 19, 20, 25, i64::MAX] {
            let rendered = render_at(&state, t);
            for (field, holding) in values_at(&timelines, t) {
                assert_eq!(
                    holding.map(|s| &s.2),
                    rendered.snapshot.get(field),
                    "{field} at {t}"
                );
            }
        }
        // The snapshot rendered at 25 (now), overlaid as at each instant,
        // is the snapshot rendered then; what `shown` refuses leaves.
        let now = render_at(&state, 25).snapshot;
        for t in [0, 9, 10, 15, 19, 20, 25] {
            let mut overlaid = now.clone();
            overlay_at(&mut overlaid, &timelines, t, |_| true);
            assert_eq!(overlaid, render_at(&state, t).snapshot, "at {t}");
        }
        let mut hidden = now.clone();
        overlay_at(&mut hidden, &timelines, 15, |s| s.2 != json!("engineer"));
        assert!(!hidden.contains_key("role") && hidden.contains_key("name"));
        let text = serde_json::to_string(&timelines["role"]).unwrap();
        assert_eq!(
            text,
            r#"[[10,20,"engineer","F3"],[20,null,"manager","F3"]]"#
        );
        assert!(value_timelines(&reduce(
            &[crate::reducer::tests::obs(
                "d",
                1,
                100,
                0.5,
                json!({"x": 1})
            )],
            &policies
        ))
        .is_empty());
    }

    #[test]
    fn intervals_overlap_when_they_share_an_instant() {
        let i = |f: Option<i64>, t: Option<i64>| Interval::new(f, t).unwrap();
        assert!(i(Some(1), Some(5)).overlaps(&i(Some(4), Some(9))));
        assert!(
            !i(Some(1), Some(5)).overlaps(&i(Some(5), Some(9))),
            "the end is excluded"
        );
        assert!(!i(Some(5), None).overlaps(&i(None, Some(5))));
        assert!(Interval::ALWAYS.overlaps(&i(Some(5), Some(6))));
        assert!(i(None, Some(6)).overlaps(&i(Some(5), None)));
    }

    #[test]
    fn an_empty_interval_is_refused() {
        assert!(Interval::new(Some(5), Some(5)).is_err());
        assert!(Interval::new(Some(6), Some(5)).is_err());
        assert!(Interval::new(None, Some(5)).unwrap().contains(4));
        assert!(!Interval::new(None, Some(5)).unwrap().contains(5));
    }

    fn arb_interval() -> impl Strategy<Value = Interval> {
        (prop::option::of(0i64..40), prop::option::of(0i64..40)).prop_map(|(a, b)| match (a, b) {
            (Some(a), Some(b)) if a >= b => Interval {
                from: Some(b),
                to: Some(a + 1),
            },
            (from, to) => Interval { from, to },
        })
    }

    fn arb_observations() -> impl Strategy<Value = Vec<(Interval, Provenance, Value)>> {
        prop::collection::vec(
            (
                arb_interval(),
                0i64..5,
                prop_oneof![Just(100), Just(1000)],
                0i64..4,
            ),
            0..10,
        )
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (interval, t, priority, value))| {
                    (
                        interval,
                        prov(&format!("o{i:02}"), t, priority),
                        json!(value),
                    )
                })
                .collect()
        })
    }

    fn policies() -> Vec<MergePolicy> {
        vec![
            MergePolicy::default(),
            MergePolicy {
                strategy: Merge::HighestPriority,
                tie_breaker: Some(TieBreaker::SourcePriority),
            },
            MergePolicy {
                strategy: Merge::MergeArray,
                tie_breaker: None,
            },
        ]
    }

    /// The reducer's generated observations, some given an interval.
    fn arb_timed_observations() -> impl Strategy<Value = Vec<Observation>> {
        (
            crate::reducer::tests::arb_observations(),
            prop::collection::vec(prop::option::of(arb_interval()), 12),
        )
            .prop_map(|(mut observations, intervals)| {
                for (o, interval) in observations.iter_mut().zip(intervals) {
                    if let Some(i) = interval {
                        o.valid_from = i.from;
                        o.valid_to = i.to;
                    }
                }
                observations
            })
    }

    fn entity_policies() -> Vec<Policies> {
        let with = |field: &str, policy: MergePolicy| Policies::from([(field.to_string(), policy)]);
        let [_, priority, array] = policies().try_into().expect("three policies");
        vec![Policies::new(), with("f1", priority), with("tags", array)]
    }

    #[test]
    fn a_state_with_timelines_reads_back_as_written() {
        let mut alice = SnapshotState::default();
        let policies = Policies::new();
        let mut o = |id: &str, employer: &str, from: Option<i64>, to: Option<i64>| {
            let mut obs = crate::reducer::tests::obs(
                id,
                1,
                100,
                0.5,
                json!({"employer": employer, "name": "Alice"}),
            );
            (obs.valid_from, obs.valid_to) = (from, to);
            apply(&mut alice, &obs, &policies);
        };
        o("a", "Acme", Some(2019), Some(2022));
        o("b", "Initech", Some(2022), None);
        assert_eq!(alice.observation_count, 2);
        // The name's observations hold over intervals too: a timeline.
        assert_eq!(alice.timelines.len(), 2);
        assert!(alice.fields.is_empty());
        let json = serde_json::to_value(&alice).unwrap();
        assert_eq!(
            serde_json::from_value::<SnapshotState>(json.clone()).unwrap(),
            alice
        );
        assert_eq!(render_at(&alice, 2020).snapshot["employer"], json!("Acme"));
        assert_eq!(
            render_at(&alice, 2023).snapshot["employer"],
            json!("Initech")
        );
        assert!(!render_at(&alice, 2018).snapshot.contains_key("employer"));
        assert_eq!(valid_until(&alice, 2020), Some(2022));
        assert_eq!(valid_until(&alice, 2022), None);
        assert_eq!(valid_until(&alice, 0), Some(2019));
        // A state without intervals has no timelines, and its JSON none.
        let plain = reduce(
            &[crate::reducer::tests::obs(
                "c",
                1,
                100,
                0.5,
                json!({"x": 1}),
            )],
            &policies,
        );
        assert!(!serde_json::to_string(&plain).unwrap().contains("timelines"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn an_entity_over_valid_time_is_the_fold_of_what_holds_at_each_instant(
            observations in arb_timed_observations(),
            seed in any::<u64>(),
        ) {
            let mut shuffled = observations.clone();
            crate::test_support::shuffle(&mut shuffled, seed);
            for policies in entity_policies() {
                let state = reduce(&observations, &policies);
                prop_assert_eq!(&state, &reduce(&shuffled, &policies));
                // Without any interval: exactly the reducer's state.
                let always: Vec<Observation> = observations.iter().cloned().map(|mut o| {
                    (o.valid_from, o.valid_to) = (None, None);
                    o
                }).collect();
                prop_assert_eq!(reduce(&always, &policies), reducer::reduce(&always, &policies));
                for at in -1i64..42 {
                    let holding: Vec<Observation> = always.iter().zip(&observations)
                        .filter(|(_, o)| Interval::of(o).contains(at))
                        .map(|(a, _)| a.clone())
                        .collect();
                    let expected = reducer::reduce(&holding, &policies);
                    prop_assert_eq!(&state_at(&state, at).fields, &expected.fields, "at {}", at);
                    let rendered = render_at(&state, at);
                    prop_assert_eq!(&rendered, &reducer::render(&expected));
                    // Until valid_until, the same snapshot.
                    let until = valid_until(&state, at).unwrap_or(i64::MAX).min(42);
                    prop_assert!(until > at);
                    for later in at..until {
                        prop_assert_eq!(&render_at(&state, later), &rendered, "{} until {}", later, until);
                    }
                }
            }
        }

        #[test]
        fn arrival_order_never_changes_the_segments(
            observations in arb_observations(),
            seed in any::<u64>(),
        ) {
            let mut shuffled = observations.clone();
            crate::test_support::shuffle(&mut shuffled, seed);
            for policy in policies() {
                let fold = |obs: &[(Interval, Provenance, Value)]| {
                    let mut t = FieldTimeline::default();
                    for (interval, prov, value) in obs {
                        t.apply(*interval, prov, value, policy);
                    }
                    t
                };
                let a = fold(&observations);
                prop_assert_eq!(&a, &fold(&shuffled));
                // At every instant: the fold of the observations valid then.
                for at in -1i64..42 {
                    let mut state = None;
                    for (interval, prov, value) in &observations {
                        if interval.contains(at) {
                            state = Some(apply_field(state, prov, value, policy));
                        }
                    }
                    prop_assert_eq!(a.at(at), state.as_ref(), "at {}", at);
                }
                // Canonical: no two neighbours alike, the whole line covered.
                let s = a.segments();
                prop_assert!(s.windows(2).all(|w| w[0].state != w[1].state && w[0].to == w[1].from));
                prop_assert!(s.first().unwrap().from.is_none() && s.last().unwrap().to.is_none());
            }
        }
    }
}
