//! The GJK simplex and Johnson's distance sub-algorithm (with van den Bergen's backup).
//!
//! For a simplex `Y` of at most 4 Minkowski-difference points, Johnson's sub-algorithm finds the
//! smallest subset `X ⊆ Y` whose affine hull contains the point of `conv(Y)` closest to the
//! origin, together with its barycentric weights, through the cofactor recursion
//! `Δ_j(X ∪ {j}) = Σ_{i∈X} Δ_i(X) (y_i·y_k − y_i·y_j)` (k = min X). When rounding makes no subset pass the
//! exact test, the backup procedure takes the subset with all-positive cofactors that gives the
//! nearest point.

use glam::DVec3;

/// One simplex vertex: `w = a - b` with the support points and feature ids of both shapes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vertex {
    /// Minkowski-difference point `a - b`.
    pub w: DVec3,
    /// Support point on shape A.
    pub a: DVec3,
    /// Support point on shape B.
    pub b: DVec3,
    /// Feature id on A.
    pub ia: u32,
    /// Feature id on B.
    pub ib: u32,
}

/// A GJK simplex: up to 4 vertices with barycentric weights of the current closest point.
#[derive(Clone, Debug, Default)]
pub(crate) struct Simplex {
    pub verts: Vec<Vertex>,
    pub weights: Vec<f64>,
}

impl Simplex {
    /// Closest point `v = Σ λ_i w_i` of the simplex to the origin.
    pub fn point(&self) -> DVec3 {
        self.verts
            .iter()
            .zip(&self.weights)
            .fold(DVec3::ZERO, |s, (v, &l)| s + v.w * l)
    }

    /// Closest point on A (`Σ λ_i a_i`).
    pub fn point_a(&self) -> DVec3 {
        self.verts
            .iter()
            .zip(&self.weights)
            .fold(DVec3::ZERO, |s, (v, &l)| s + v.a * l)
    }

    /// Closest point on B (`Σ λ_i b_i`).
    pub fn point_b(&self) -> DVec3 {
        self.verts
            .iter()
            .zip(&self.weights)
            .fold(DVec3::ZERO, |s, (v, &l)| s + v.b * l)
    }

    /// Largest squared norm of a vertex (the scale for absolute tolerances).
    pub fn max_norm2(&self) -> f64 {
        self.verts
            .iter()
            .map(|v| v.w.length_squared())
            .fold(0.0, f64::max)
    }

    /// Whether `w` is already a vertex (to the bit).
    pub fn contains(&self, w: DVec3) -> bool {
        self.verts.iter().any(|v| v.w == w)
    }

    /// Adds `v`, then reduces to the minimal sub-simplex nearest the origin (Johnson).
    pub fn add_and_reduce(&mut self, v: Vertex) {
        self.verts.push(v);
        let n = self.verts.len();
        let mut w = [DVec3::ZERO; 4];
        for (w, v) in w.iter_mut().zip(&self.verts) {
            *w = v.w;
        }
        let (mask, lambdas) = johnson(&w[..n]);
        // Keep the chosen vertices in order, in place.
        let mut kept = 0;
        self.weights.clear();
        for i in bits(mask) {
            self.verts[kept] = self.verts[i];
            self.weights.push(lambdas[i]);
            kept += 1;
        }
        self.verts.truncate(kept);
    }
}

/// Johnson's sub-algorithm on `y` (1..=4 points): the chosen subset as a bit mask and the
/// barycentric weight of every point (0 outside the subset).
pub(crate) fn johnson(y: &[DVec3]) -> (usize, [f64; 4]) {
    let n = y.len();
    debug_assert!((1..=4).contains(&n));
    let mut dp = [[0.0f64; 4]; 4];
    for i in 0..n {
        for j in 0..n {
            dp[i][j] = y[i].dot(y[j]);
        }
    }
    // delta[mask][i]: cofactor Δ_i(X) for subset `mask` (sums in ascending `i`).
    let mut delta = [[0.0f64; 4]; 16];
    let full = (1usize << n) - 1;
    for mask in 1..=full {
        if mask.count_ones() == 1 {
            delta[mask][mask.trailing_zeros() as usize] = 1.0;
            continue;
        }
        for j in bits(mask) {
            let x = mask & !(1 << j);
            let k = x.trailing_zeros() as usize;
            let mut s = 0.0;
            for i in bits(x) {
                s += delta[x][i] * (dp[i][k] - dp[i][j]);
            }
            delta[mask][j] = s;
        }
    }
    let weights_of = |mask: usize| -> [f64; 4] {
        let total: f64 = bits(mask).map(|i| delta[mask][i]).sum();
        let mut l = [0.0; 4];
        for i in bits(mask) {
            l[i] = delta[mask][i] / total;
        }
        l
    };
    // The newest point (last) always belongs to the answer in exact arithmetic; test subsets
    // containing it first, smallest first, like the classic algorithm.
    for &mask in ORDER[n - 1] {
        if !bits(mask).all(|i| delta[mask][i] > 0.0) {
            continue;
        }
        if bits(full & !mask).all(|j| delta[mask | (1 << j)][j] <= 0.0) {
            return (mask, weights_of(mask));
        }
    }
    // Backup: the nearest point among all subsets with positive cofactors.
    let mut best = (1usize << (n - 1), f64::INFINITY, [0.0; 4]);
    for (mask, dm) in delta.iter().enumerate().take(full + 1).skip(1) {
        if !bits(mask).all(|i| dm[i] > 0.0) {
            continue;
        }
        let l = weights_of(mask);
        let v = (0..n).fold(DVec3::ZERO, |s, i| s + y[i] * l[i]);
        let d = v.length_squared();
        if d < best.1 {
            best = (mask, d, l);
        }
    }
    if best.1.is_finite() {
        (best.0, best.2)
    } else {
        let mut l = [0.0; 4];
        l[n - 1] = 1.0;
        (1 << (n - 1), l)
    }
}

/// The set bits of `mask`, lowest first.
#[inline]
fn bits(mask: usize) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// For `n` points (index `n − 1`): the subsets in the order Johnson's test tries them — those
/// holding the newest point first, then by size, then by mask.
const ORDER: [&[usize]; 4] = [
    &[1],
    &[2, 3, 1],
    &[4, 5, 6, 7, 1, 2, 3],
    &[8, 9, 10, 12, 11, 13, 14, 15, 1, 2, 4, 3, 5, 6, 7],
];

#[cfg(test)]
mod tests {
    use super::*;

    /// `ORDER` is the sort of every subset by (without the newest point, size), stable.
    #[test]
    fn order_table() {
        for n in 1..=4usize {
            let last = 1 << (n - 1);
            let mut order: Vec<usize> = (1..1 << n).collect();
            order.sort_by_key(|&m| (m & last == 0, m.count_ones()));
            assert_eq!(ORDER[n - 1], order.as_slice());
        }
    }

    #[test]
    fn segment_interior() {
        let (m, l) = johnson(&[DVec3::new(-1.0, 1.0, 0.0), DVec3::new(1.0, 1.0, 0.0)]);
        assert_eq!(m, 3);
        assert_eq!((l[0], l[1]), (0.5, 0.5));
    }

    #[test]
    fn tetra_containing_origin() {
        let y = [
            DVec3::new(1.0, 0.0, -0.5),
            DVec3::new(-1.0, 1.0, -0.5),
            DVec3::new(-1.0, -1.0, -0.5),
            DVec3::new(0.0, 0.0, 1.0),
        ];
        let (m, l) = johnson(&y);
        assert_eq!(m, 15);
        let v = (0..4).fold(DVec3::ZERO, |s, i| s + y[i] * l[i]);
        assert!(v.length() < 1e-12);
    }
}
