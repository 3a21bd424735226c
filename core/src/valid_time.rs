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
//! touches, not the field's observations. Not yet wired to storage.

use crate::reducer::{apply_field, FieldState, Provenance};
use crate::schema::MergePolicy;
use crate::NeotomaError;
use serde_json::Value;
use std::cmp::Ordering;

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

    /// Whether the instant `t` lies in it (its start included, its end not).
    pub fn contains(&self, t: i64) -> bool {
        self.from.is_none_or(|f| f <= t) && self.to.is_none_or(|e| t < e)
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

/// A stretch `[from, to)` of the time line and the field's state over it
/// (None: no observation of the field is valid there).
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub state: Option<FieldState>,
}

/// A field's states over valid time: segments in order, covering the whole
/// line, no two neighbours equal.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldTimeline {
    segments: Vec<Segment>,
}

impl Default for FieldTimeline {
    fn default() -> Self {
        FieldTimeline {
            segments: vec![Segment {
                from: None,
                to: None,
                state: None,
            }],
        }
    }
}

impl FieldTimeline {
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The field's state at the instant `t`.
    pub fn at(&self, t: i64) -> Option<&FieldState> {
        let i = self
            .segments
            .partition_point(|s| s.to.is_some_and(|e| e <= t));
        self.segments.get(i).and_then(|s| s.state.as_ref())
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
        let i = self
            .segments
            .partition_point(|s| s.to.is_some_and(|e| e <= t));
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
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
