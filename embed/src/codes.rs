//! Compact copies of embeddings: each component of the unit-length vector
//! as 8 bits of one scale (scalar quantisation). A semantic search scans
//! the codes of the lists nearest its query from an index alone, a quarter
//! of the bytes of the embeddings, and re-ranks the best exactly
//! (sql/queries/search_entities.sql).

/// The most components a code is made for: codes are kept in a btree
/// index, whose entries hold at most 2,704 bytes. A longer embedding has
/// no code and is compared exactly.
pub const MAX_DIMENSIONS: usize = 2048;

/// The code of `v`: its scale (f32, little-endian), then each component of
/// its unit-length copy divided by the scale, rounded to an i8 (the largest
/// is ±127). None for an empty, zero, non-finite or too long vector.
pub fn encode(v: &[f32]) -> Option<Vec<u8>> {
    if v.is_empty() || v.len() > MAX_DIMENSIONS || v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let u = crate::lists::unit(v);
    let largest = u.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return None;
    }
    let scale = largest / 127.0;
    let mut code = Vec::with_capacity(4 + u.len());
    code.extend_from_slice(&scale.to_le_bytes());
    code.extend(
        u.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    Some(code)
}

/// The cosine of `query` with the vector `code` was made of, within the
/// rounding of its components (about 0.4 % of the largest); 0 when the
/// sizes differ, the code is malformed or the query is zero.
pub fn similarity(code: &[u8], query: &[f32]) -> f64 {
    let Some((scale, components)) = code.split_first_chunk::<4>() else {
        return 0.0;
    };
    if components.len() != query.len() {
        return 0.0;
    }
    // Eight running sums, not one: a single sum waits for each addition
    // before the next (a search scans tens of thousands of codes); the
    // order of the additions is fixed, so the result is too.
    let (mut dot, mut norm) = ([0f32; 8], [0f32; 8]);
    let (cs, qs) = (components.chunks_exact(8), query.chunks_exact(8));
    let (c_rest, q_rest) = (cs.remainder(), qs.remainder());
    for (c, q) in cs.zip(qs) {
        for i in 0..8 {
            dot[i] += (c[i] as i8) as f32 * q[i];
            norm[i] += q[i] * q[i];
        }
    }
    for (i, (c, q)) in c_rest.iter().zip(q_rest).enumerate() {
        dot[i] += (*c as i8) as f32 * q;
        norm[i] += q * q;
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
            assert!((exact - approx).abs() < 0.01, "{seed}: {exact} vs {approx}");
        }
    }

    #[test]
    fn the_same_vector_gives_the_same_code_whatever_its_length() {
        let v = vector(3, 64);
        let doubled: Vec<f32> = v.iter().map(|x| x * 2.0).collect();
        assert_eq!(encode(&v), encode(&doubled));
        assert_eq!(encode(&v).unwrap().len(), 4 + 64);
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
