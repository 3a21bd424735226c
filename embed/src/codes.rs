//! Compact copies of embeddings: each component of the unit-length vector
//! as 4 bits of one scale (scalar quantisation, two components a byte). A
//! semantic search scores the codes of the lists nearest its query (packed
//! a list to a row, [`Query`], [`Nearest`]; those written since from an
//! index alone), an eighth of the bytes of the embeddings, and re-ranks the
//! best exactly (sql/queries/search_entities.sql). Four bits, not eight:
//! at a million entities the 200 likest by a 4-bit code held the exact 10
//! nearest of the 80 lists read as the 8-bit codes did (benches/million.py
//! measures recall), with half the bytes to read (docs/decisions.md).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most components a code is made for (a provider's widest common
/// models have 3,072): codes not yet packed are kept in a btree index
/// (entity_embeddings_unpacked), whose entries hold at most 2,704 bytes
/// (4 + 1,536 here, beside the user, model, list, entity and type). A
/// longer embedding has no code and is compared exactly.
pub const MAX_DIMENSIONS: usize = 3072;

/// The largest level of a component: levels run from -7 to 7, kept as 1
/// to 15 in a nibble (8 is zero).
const LEVELS: f32 = 7.0;

/// The code of `v`: its scale (f32, little-endian), then each component of
/// its unit-length copy divided by the scale, rounded to a level (the
/// largest is ±7), two to a byte (the first in the low nibble; an odd
/// last component's partner is zero). None for an empty, zero, non-finite
/// or too long vector.
pub fn encode(v: &[f32]) -> Option<Vec<u8>> {
    if v.is_empty() || v.len() > MAX_DIMENSIONS || v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let u = crate::lists::unit(v);
    let largest = u.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return None;
    }
    let scale = largest / LEVELS;
    let level = |x: f32| ((x / scale).round().clamp(-LEVELS, LEVELS) as i8 + 8) as u8;
    let mut code = Vec::with_capacity(4 + u.len().div_ceil(2));
    code.extend_from_slice(&scale.to_le_bytes());
    code.extend(
        u.chunks(2)
            .map(|pair| level(pair[0]) | pair.get(1).map_or(8, |x| level(*x)) << 4),
    );
    Some(code)
}

/// The cosine of `query` with the vector `code` was made of, within the
/// rounding of its components (half a level each: for the built-in
/// model's 256 components 0.009 on average, at most 0.053 over 90,000
/// pairs measured; the best 200 are then ranked exactly); 0 when the sizes
/// differ, the code is malformed or the query is zero.
pub fn similarity(code: &[u8], query: &[f32]) -> f64 {
    Query::new(query).similarity(code)
}

/// The bytes of the code of a vector of `dimensions` components.
pub fn code_len(dimensions: usize) -> usize {
    4 + dimensions.div_ceil(2)
}

/// The largest level of a query's component once scaled to an integer:
/// a code's sum (at most 3,072 components × 7 × this) stays within an
/// i32, and the rounding (one part in 32,000) is far below a code's own.
const QUERY_LEVELS: f32 = 16_383.0;

/// A query compared with many codes: its components scaled to integers
/// and its norm computed once, so a code's similarity is an integer dot
/// product of its levels, exact whatever the order of its additions. The
/// levels are split by parity, as a code's byte holds them (low nibble,
/// high nibble), which compilers vectorise well: 22 ns a code of 256
/// components with AVX2, 56 without, against 92 for the pairs read
/// together (2 cores of this project's machines, 73,000 codes).
pub struct Query {
    dimensions: usize,
    /// The scaled components of even index, and of odd index (the last
    /// one's partner zero, as in a code).
    even: Vec<i16>,
    odd: Vec<i16>,
    /// A code's nibbles are its levels plus 8: eight times the sum of the
    /// scaled components, taken off once.
    offset: i32,
    /// What turns a code's scale times its sum into the cosine: one over
    /// the query's scaling times its norm (0 for a zero query).
    factor: f32,
}

impl Query {
    pub fn new(query: &[f32]) -> Self {
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        let largest = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scaling = if largest > 0.0 && largest.is_finite() {
            QUERY_LEVELS / largest
        } else {
            0.0
        };
        let mut levels: Vec<i16> = query.iter().map(|x| (x * scaling).round() as i16).collect();
        levels.resize(query.len().div_ceil(2) * 2, 0);
        let factor = if scaling > 0.0 && norm > 0.0 {
            1.0 / (scaling * norm)
        } else {
            0.0
        };
        Query {
            dimensions: query.len(),
            even: levels.iter().step_by(2).copied().collect(),
            odd: levels.iter().skip(1).step_by(2).copied().collect(),
            offset: 8 * levels.iter().map(|&l| l as i32).sum::<i32>(),
            factor,
        }
    }

    /// As [`similarity`].
    pub fn similarity(&self, code: &[u8]) -> f64 {
        let Some((scale, packed)) = code.split_first_chunk::<4>() else {
            return 0.0;
        };
        if packed.len() != self.dimensions.div_ceil(2) || self.factor == 0.0 {
            return 0.0;
        }
        let sum = nibble_dot(packed, &self.even, &self.odd) - self.offset;
        (f32::from_le_bytes(*scale) * sum as f32 * self.factor) as f64
    }
}

/// The sum over a code's bytes of its low nibble times `even` and its high
/// nibble times `odd` (at most 1,536 × 2 × 15 × 16,383: within an i32).
fn nibble_dot(packed: &[u8], even: &[i16], odd: &[i16]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, as just checked.
        return unsafe { nibble_dot_avx2(packed, even, odd) };
    }
    nibble_dot_portable(packed, even, odd)
}

/// [`nibble_dot`] compiled for AVX2 (the same code, wider vectors).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn nibble_dot_avx2(packed: &[u8], even: &[i16], odd: &[i16]) -> i32 {
    nibble_dot_portable(packed, even, odd)
}

#[inline(always)]
fn nibble_dot_portable(packed: &[u8], even: &[i16], odd: &[i16]) -> i32 {
    packed
        .iter()
        .zip(even)
        .zip(odd)
        .map(|((b, e), o)| (b & 15) as i32 * *e as i32 + (b >> 4) as i32 * *o as i32)
        .sum()
}

/// The `n` likest of the codes offered, likest first, ties by id (the
/// order a search's SQL ranks them in): what a search keeps of the packed
/// codes of the lists it reads (neotoma.embedding_list_codes).
pub struct Nearest {
    n: usize,
    kept: BinaryHeap<Reverse<Candidate>>,
}

/// An id and its similarity; greater is likelier (then the smaller id).
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    sim: f64,
    id: String,
}

impl Eq for Candidate {}

/// How (`a_sim`, `a_id`) compares with (`b_sim`, `b_id`): greater is
/// likelier, then the smaller id.
fn likeness(a_sim: f64, a_id: &str, b_sim: f64, b_id: &str) -> std::cmp::Ordering {
    a_sim.total_cmp(&b_sim).then_with(|| b_id.cmp(a_id))
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        likeness(self.sim, &self.id, other.sim, &other.id)
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Nearest {
    pub fn new(n: usize) -> Self {
        Nearest {
            n,
            kept: BinaryHeap::with_capacity(n + 1),
        }
    }

    /// Keeps `id` if it is among the `n` likest so far (its id is copied
    /// only then).
    pub fn offer(&mut self, sim: f64, id: &str) {
        if self.n == 0 {
            return;
        }
        if self.kept.len() == self.n {
            let worst = &self.kept.peek().expect("n > 0 kept").0;
            if !likeness(sim, id, worst.sim, &worst.id).is_gt() {
                return;
            }
            self.kept.pop();
        }
        self.kept.push(Reverse(Candidate {
            sim,
            id: id.to_string(),
        }));
    }

    /// The kept, likest first.
    pub fn into_sorted(self) -> Vec<(String, f64)> {
        self.kept
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(c)| (c.id, c.sim))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: u32, n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((seed as usize * 7919 + i * 104_729) % 2001) as f32 - 1000.0) / 1000.0)
            .collect()
    }

    #[test]
    fn a_code_ranks_as_the_cosine_does_within_its_rounding() {
        let query = vector(1, 259);
        for seed in 2..200 {
            let v = vector(seed, 259);
            let exact = crate::cosine(&v, &query);
            let approx = similarity(&encode(&v).unwrap(), &query);
            assert!((exact - approx).abs() < 0.03, "{seed}: {exact} vs {approx}");
        }
    }

    #[test]
    fn the_same_vector_gives_the_same_code_whatever_its_length() {
        let v = vector(3, 64);
        let doubled: Vec<f32> = v.iter().map(|x| x * 2.0).collect();
        assert_eq!(encode(&v), encode(&doubled));
        assert_eq!(encode(&v).unwrap().len(), 4 + 32);
        // An odd length: the last component's partner is zero.
        assert_eq!(encode(&v[..63]).unwrap().len(), 4 + 32);
        assert!((similarity(&encode(&v[..63]).unwrap(), &v[..63]) - 1.0).abs() < 0.03);
    }

    #[test]
    fn no_code_for_what_cannot_be_compared() {
        assert_eq!(encode(&[]), None);
        assert_eq!(encode(&[0.0, 0.0]), None);
        assert_eq!(encode(&[1.0, f32::NAN]), None);
        assert_eq!(encode(&vec![1.0; MAX_DIMENSIONS + 1]), None);
        assert!(encode(&vec![1.0; MAX_DIMENSIONS]).is_some());
        let code = encode(&[1.0, 2.0]).unwrap();
        assert_eq!(similarity(&code, &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(similarity(&code, &[0.0, 0.0]), 0.0);
        assert_eq!(similarity(&code[..3], &[]), 0.0);
    }

    #[test]
    fn the_nearest_are_the_likest_first_ties_by_id() {
        let mut n = Nearest::new(3);
        for (sim, id) in [
            (0.5, "b"),
            (0.9, "z"),
            (0.5, "a"),
            (0.1, "c"),
            (0.7, "d"),
            (0.5, "0"),
        ] {
            n.offer(sim, id);
        }
        let kept: Vec<_> = n.into_sorted().into_iter().map(|(id, _)| id).collect();
        assert_eq!(kept, ["z", "d", "0"]);
        let mut none = Nearest::new(0);
        none.offer(1.0, "a");
        assert!(none.into_sorted().is_empty());
    }

    #[test]
    fn the_nearest_do_not_depend_on_the_order_offered() {
        let offers: Vec<(f64, String)> = (0..300u32)
            .map(|i| {
                (
                    ((i * 7919) % 101) as f64 / 100.0,
                    format!("e{:03}", (i * 31) % 300),
                )
            })
            .collect();
        let mut expected = offers.clone();
        expected.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for rotate in [0, 17, 150] {
            let mut n = Nearest::new(20);
            let mut o = offers.clone();
            o.rotate_left(rotate);
            o.iter().rev().for_each(|(sim, id)| n.offer(*sim, id));
            let kept: Vec<_> = n
                .into_sorted()
                .into_iter()
                .map(|(id, sim)| (sim, id))
                .collect();
            assert_eq!(kept, expected[..20]);
        }
    }

    /// A code's sum as the levels give it, pair by pair (before the
    /// parity split): the split must not change a single score.
    fn sum_by_pairs(code: &[u8], query: &[f32]) -> i32 {
        let largest = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scaling = QUERY_LEVELS / largest;
        let mut levels: Vec<i16> = query.iter().map(|x| (x * scaling).round() as i16).collect();
        levels.resize(query.len().div_ceil(2) * 2, 0);
        let level = |nibble: u8| nibble as i32 - 8;
        code[4..]
            .iter()
            .zip(levels.chunks_exact(2))
            .map(|(b, q)| level(b & 15) * q[0] as i32 + level(b >> 4) * q[1] as i32)
            .sum()
    }

    #[test]
    fn the_split_sums_are_the_pairs_sums_on_every_path() {
        for (seed, n) in [(7, 256), (8, 259), (9, 3072), (10, 1), (11, 2)] {
            let query = vector(seed, n);
            let q = Query::new(&query);
            for other in 0..20 {
                let mut code = encode(&vector(seed * 31 + other, n)).unwrap();
                // Every nibble, the extremes included.
                for (i, b) in code[4..]
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| i % 7 == other as usize % 7)
                {
                    *b = [0x00, 0xff, 0x0f, 0xf0, 0x88][i % 5];
                }
                let expected = sum_by_pairs(&code, &query);
                assert_eq!(
                    nibble_dot_portable(&code[4..], &q.even, &q.odd) - q.offset,
                    expected
                );
                assert_eq!(nibble_dot(&code[4..], &q.even, &q.odd) - q.offset, expected);
            }
        }
    }

    #[test]
    fn a_prepared_query_scores_as_similarity_does() {
        let query = vector(5, 259);
        let q = Query::new(&query);
        for seed in 6..40 {
            let code = encode(&vector(seed, 259)).unwrap();
            assert_eq!(code.len(), code_len(259));
            assert_eq!(q.similarity(&code), similarity(&code, &query));
        }
    }
}
