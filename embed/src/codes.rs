//! Compact copies of embeddings: each component of the unit-length vector
//! as 4 bits of one scale (scalar quantisation, two components a byte). A
//! semantic search scans the codes of the lists nearest its query from an
//! index alone, an eighth of the bytes of the embeddings, and re-ranks the
//! best exactly (sql/queries/search_entities.sql). Four bits, not eight:
//! at a million entities the 200 likest by a 4-bit code held the exact 10
//! nearest of the 80 lists read as the 8-bit codes did (benches/million.py
//! measures recall), with half the index to read (docs/decisions.md).

/// The most components a code is made for (a provider's widest common
/// models have 3,072): codes are kept in a btree index, whose entries hold
/// at most 2,704 bytes (4 + 1,536 here, beside the user, model, list,
/// entity and type). A longer embedding has no code and is compared
/// exactly.
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
    let Some((scale, packed)) = code.split_first_chunk::<4>() else {
        return 0.0;
    };
    if packed.len() != query.len().div_ceil(2) {
        return 0.0;
    }
    let level = |nibble: u8| nibble as f32 - 8.0;
    // Eight running sums, not one: a single sum waits for each addition
    // before the next (a search scans tens of thousands of codes); the
    // order of the additions is fixed, so the result is too.
    let (mut dot, mut norm) = ([0f32; 8], [0f32; 8]);
    let whole = query.len() / 8;
    let (c_main, c_rest) = packed.split_at(whole * 4);
    let (q_main, q_rest) = query.split_at(whole * 8);
    for (c, q) in c_main.chunks_exact(4).zip(q_main.chunks_exact(8)) {
        for i in 0..4 {
            let (lo, hi) = (level(c[i] & 15), level(c[i] >> 4));
            dot[2 * i] += lo * q[2 * i];
            dot[2 * i + 1] += hi * q[2 * i + 1];
            norm[2 * i] += q[2 * i] * q[2 * i];
            norm[2 * i + 1] += q[2 * i + 1] * q[2 * i + 1];
        }
    }
    for (j, q) in q_rest.iter().enumerate() {
        let byte = c_rest[j / 2];
        let l = level(if j % 2 == 0 { byte & 15 } else { byte >> 4 });
        dot[j] += l * q;
        norm[j] += q * q;
    }
    let (dot, norm) = (dot.iter().sum::<f32>(), norm.iter().sum::<f32>());
    if norm == 0.0 {
        return 0.0;
    }
    (f32::from_le_bytes(*scale) * dot / norm.sqrt()) as f64
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
}
