//! Lists of nearby embeddings (an inverted file, as IVF indexes call it):
//! the centroids of spherical k-means over a sample of one user's
//! embeddings, and which list an embedding falls in. A semantic search then
//! compares the query with the centroids and reads only the embeddings of
//! the nearest lists, re-ranking them exactly.
//!
//! Deterministic: the same points in the same order give the same
//! centroids (no random start; ties go to the lower list).

/// The unit-length copy of `v` (a zero vector stays zero).
pub fn unit(v: &[f32]) -> Vec<f32> {
    let mut u = v.to_vec();
    crate::normalize(&mut u);
    u
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The index of the centroid nearest `v` (unit length): the greatest
/// cosine, the lower index on a tie. None without centroids.
pub fn nearest(centroids: &[Vec<f32>], v: &[f32]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, c) in centroids.iter().enumerate() {
        let s = dot(c, v);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

/// `k` centroids (unit length) of `points` (unit length, one size), by
/// `rounds` rounds of spherical k-means. The start is `k` points evenly
/// spaced through `points`, so the caller orders them by something
/// unrelated to their content (a hash of their keys) to make that a
/// sample. A list left empty keeps its centroid. Fewer points than `k`:
/// one centroid per point.
pub fn train(points: &[Vec<f32>], k: usize, rounds: usize) -> Vec<Vec<f32>> {
    let n = points.len();
    let k = k.min(n);
    if k == 0 {
        return vec![];
    }
    let mut centroids: Vec<Vec<f32>> = (0..k).map(|i| points[i * n / k].clone()).collect();
    let size = centroids[0].len();
    for _ in 0..rounds {
        let mut sums = vec![vec![0f32; size]; k];
        for p in points.iter().filter(|p| p.len() == size) {
            if let Some(i) = nearest(&centroids, p) {
                sums[i].iter_mut().zip(p).for_each(|(s, x)| *s += x);
            }
        }
        let mut moved = false;
        for (c, s) in centroids.iter_mut().zip(&sums) {
            let next = unit(s);
            if next.iter().any(|x| *x != 0.0) && next != *c {
                *c = next;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    centroids
}

/// How many lists suit `n` embeddings: about √n (so a list holds about √n
/// too), at least 1, at most `max`.
pub fn list_count(n: usize, max: usize) -> usize {
    ((n as f64).sqrt().round() as usize).clamp(1, max.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points around `centers`, `each` per center, interleaved.
    fn clustered(centers: &[Vec<f32>], each: usize) -> Vec<Vec<f32>> {
        let mut out = vec![];
        for j in 0..each {
            for c in centers {
                let jitter = (j as f32 + 1.0) * 0.001;
                let p: Vec<f32> = c
                    .iter()
                    .enumerate()
                    .map(|(d, x)| x + if d % 2 == j % 2 { jitter } else { -jitter })
                    .collect();
                out.push(unit(&p));
            }
        }
        out
    }

    #[test]
    fn finds_separate_clusters_and_assigns_their_points() {
        let centers = vec![
            unit(&[1.0, 0.0, 0.0, 0.0]),
            unit(&[0.0, 1.0, 0.0, 0.0]),
            unit(&[0.0, 0.0, 1.0, 0.0]),
        ];
        let points = clustered(&centers, 20);
        let lists = train(&points, 3, 10);
        assert_eq!(lists.len(), 3);
        // Each center's points all fall in one list, a different one each.
        let mut seen = std::collections::BTreeSet::new();
        for c in &centers {
            let of: std::collections::BTreeSet<usize> = points
                .iter()
                .filter(|p| dot(p, c) > 0.9)
                .map(|p| nearest(&lists, p).unwrap())
                .collect();
            assert_eq!(of.len(), 1, "one list per cluster");
            seen.extend(of);
        }
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn same_points_same_centroids() {
        let centers = vec![unit(&[1.0, 2.0, 0.5]), unit(&[-1.0, 0.3, 2.0])];
        let points = clustered(&centers, 15);
        assert_eq!(train(&points, 4, 6), train(&points, 4, 6));
    }

    #[test]
    fn edge_cases() {
        assert!(train(&[], 4, 3).is_empty());
        let one = vec![unit(&[3.0, 4.0])];
        assert_eq!(train(&one, 4, 3), one);
        assert_eq!(nearest(&[], &[1.0]), None);
        // A tie goes to the lower list.
        assert_eq!(
            nearest(&[vec![1.0, 0.0], vec![1.0, 0.0]], &[1.0, 0.0]),
            Some(0)
        );
        assert_eq!(unit(&[0.0, 0.0]), vec![0.0, 0.0]);
        assert_eq!(list_count(0, 100), 1);
        assert_eq!(list_count(50_000, 4096), 224);
        assert_eq!(list_count(100_000_000, 4096), 4096);
    }
}
