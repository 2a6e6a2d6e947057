//! Inclusion-based root finding over `(t, u, v)` boxes (in the spirit of Tight-Inclusion,
//! Wang et al. 2021), shared by the vertex–face and edge–edge tests.
//!
//! Both elementary queries reduce to one function, affine in each of `t`, `u`, `v` separately:
//!
//! ```text
//! F(t, u, v) = g(t) + u h(t) + v k(t),      g, h, k = differences of two linearly moving points
//! ```
//!
//! A contact is a zero of `F` in the domain (`t ∈ [0,1]`, and `(u, v)` in the unit square for
//! edge–edge, in the triangle `u, v ≥ 0, u + v ≤ 1` for vertex–face). `F` is multilinear, so its
//! exact range over a box is spanned by its values at the box corners; we evaluate those in f64
//! and widen by a rigorous a-priori rounding bound `ε` (see `error_bound` in the source). A box whose widened
//! range misses the `δ`-neighbourhood of 0 on some axis holds no contact and is dropped; the
//! others are bisected, always taking the live box with the smallest `t` first. So when a box is
//! accepted, every time before its `t_lo` is certified contact-free.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

use super::{CcdOptions, Toi};

/// The two elementary queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `(u, v)` in the triangle `u, v ≥ 0, u + v ≤ 1`.
    VertexFace,
    /// `(u, v)` in the unit square.
    EdgeEdge,
}

/// One elementary query: the three difference vectors `g, h, k` as pairs of point indices
/// `(plus, minus)` into the four moving points, at `t = 0` and `t = 1`.
pub(crate) struct Problem {
    kind: Kind,
    /// `start[i]`, `delta[i] = end[i] - start[i]` (rounded) of the four points.
    start: [DVec3; 4],
    delta: [DVec3; 4],
    /// `(plus, minus)` index pairs of `g`, `h`, `k`.
    terms: [(usize, usize); 3],
    /// Minimum separation `δ ≥ 0` (L∞ per axis, so a superset of the Euclidean condition).
    sep: f64,
    /// Per-axis rounding bound.
    eps: DVec3,
}

/// Rigorous bound on `|fl(F) - F|` at any corner, per axis, for points whose coordinates are at
/// most `m` in magnitude on that axis and `t, u, v ∈ [0, 1]` exactly representable.
///
/// Forward error analysis with `u = 2^-53` (no FMA, round to nearest): `d = x1 - x0` errs by
/// ≤ 2mu, `x(t) = x0 + t d` by ≤ 5mu, a difference of two such points (|·| ≤ 2m) by ≤ 12mu, a
/// product `u h` by ≤ 14mu, `g + u h` (|·| ≤ 4m) by ≤ 30mu, `g + u h + v k` (|·| ≤ 6m) by
/// ≤ 50mu, plus `O(u²)` terms. We use 128mu, and add `f64::MIN_POSITIVE` for underflow (each
/// subnormal rounding errs by at most 2^-1075).
pub(crate) fn error_bound(m: f64) -> f64 {
    m * (128.0 * f64::EPSILON * 0.5) + f64::MIN_POSITIVE
}

impl Problem {
    /// Vertex `p` against the face `(a, b, c)`: `F = (p - a) + u (a - b) + v (a - c)`.
    pub(crate) fn vertex_face(start: [DVec3; 4], end: [DVec3; 4], min_separation: f64) -> Self {
        Self::new(
            Kind::VertexFace,
            start,
            end,
            [(0, 1), (1, 2), (1, 3)],
            min_separation,
        )
    }

    /// Edge `(a0, a1)` against edge `(b0, b1)`: `F = (a0 - b0) + u (a1 - a0) + v (b0 - b1)`.
    pub(crate) fn edge_edge(start: [DVec3; 4], end: [DVec3; 4], min_separation: f64) -> Self {
        Self::new(
            Kind::EdgeEdge,
            start,
            end,
            [(0, 2), (1, 0), (2, 3)],
            min_separation,
        )
    }

    fn new(
        kind: Kind,
        start: [DVec3; 4],
        end: [DVec3; 4],
        terms: [(usize, usize); 3],
        min_separation: f64,
    ) -> Self {
        let mut m = DVec3::ZERO;
        for p in start.iter().chain(end.iter()) {
            m = m.max(p.abs());
        }
        let eps = DVec3::new(error_bound(m.x), error_bound(m.y), error_bound(m.z));
        let delta = [0, 1, 2, 3].map(|i| end[i] - start[i]);
        Self {
            kind,
            start,
            delta,
            terms,
            sep: min_separation.max(0.0),
            eps,
        }
    }

    /// `g, h, k` at time `t` (per axis, rounded as analysed in [`error_bound`]).
    #[inline]
    fn ghk(&self, t: f64) -> [DVec3; 3] {
        let x = [0, 1, 2, 3].map(|i| self.start[i] + t * self.delta[i]);
        self.terms.map(|(p, q)| x[p] - x[q])
    }

    /// Widened range of `F` over the box, per axis: `(lo, hi)`.
    #[inline]
    fn range(&self, b: &Box3) -> (DVec3, DVec3) {
        let mut lo = DVec3::INFINITY;
        let mut hi = DVec3::NEG_INFINITY;
        for t in [b.t[0], b.t[1]] {
            let [g, h, k] = self.ghk(t);
            let (hu_lo, hu_hi) = scaled_range(h, b.u);
            let (kv_lo, kv_hi) = scaled_range(k, b.v);
            lo = lo.min(g + hu_lo + kv_lo);
            hi = hi.max(g + hu_hi + kv_hi);
        }
        (lo - self.eps, hi + self.eps)
    }

    /// Whether the widened range of `F` over `b` may hold a point within the minimum separation
    /// of 0 on every axis.
    #[inline]
    fn may_contain_root(&self, lo: DVec3, hi: DVec3) -> bool {
        let s = self.sep;
        lo.x <= s && lo.y <= s && lo.z <= s && hi.x >= -s && hi.y >= -s && hi.z >= -s
    }

    /// Whether the box meets the `(u, v)` domain.
    #[inline]
    fn in_domain(&self, b: &Box3) -> bool {
        // Dyadic box corners: the sum is exact.
        self.kind == Kind::EdgeEdge || b.u[0] + b.v[0] <= 1.0
    }

    /// Rough sizes of the image of each box dimension (only steers the bisection).
    fn split_weights(&self, b: &Box3) -> [f64; 3] {
        let [g0, h0, k0] = self.ghk(b.t[0]);
        let [g1, h1, k1] = self.ghk(b.t[1]);
        let motion = (g1 - g0).abs() + (h1 - h0).abs() * b.u[1] + (k1 - k0).abs() * b.v[1];
        let wh = h0.abs().max(h1.abs()).max_element();
        let wk = k0.abs().max(k1.abs()).max_element();
        [
            motion.max_element(),
            (b.u[1] - b.u[0]) * wh,
            (b.v[1] - b.v[0]) * wk,
        ]
    }
}

/// Range of `s * x` per axis for `s ∈ [s0, s1] ⊂ [0, 1]`.
#[inline]
fn scaled_range(x: DVec3, s: [f64; 2]) -> (DVec3, DVec3) {
    let a = x * s[0];
    let b = x * s[1];
    (a.min(b), a.max(b))
}

/// A box in `(t, u, v)`; corners are dyadic rationals in `[0, 1]`, with its widened range.
#[derive(Clone, Copy, Debug)]
struct Box3 {
    t: [f64; 2],
    u: [f64; 2],
    v: [f64; 2],
    lo: DVec3,
    hi: DVec3,
    /// How far 0 sits from the middle of the range (0 centred, 1 at an end); steers the
    /// search towards likely contacts among boxes starting at the same time.
    score: f64,
    depth: u32,
}

impl PartialEq for Box3 {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Box3 {}
impl PartialOrd for Box3 {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Box3 {
    /// Max-heap order: the smallest `t_lo` is the greatest (this is what certifies `t_lo`),
    /// then the best-centred, then the deepest box.
    fn cmp(&self, o: &Self) -> Ordering {
        o.t[0]
            .total_cmp(&self.t[0])
            .then(o.score.total_cmp(&self.score))
            .then(self.depth.cmp(&o.depth))
    }
}

/// Deepest bisection per dimension (widths stay ≥ 2^-48, far above f64 resolution on [0, 1]).
const MAX_DEPTH: u32 = 48;

/// Evaluates a box; `None` when it is outside the domain or certainly holds no contact.
#[inline]
fn evaluate(p: &Problem, t: [f64; 2], u: [f64; 2], v: [f64; 2], depth: u32) -> Option<Box3> {
    let mut b = Box3 {
        t,
        u,
        v,
        lo: DVec3::ZERO,
        hi: DVec3::ZERO,
        score: 0.0,
        depth,
    };
    if !p.in_domain(&b) {
        return None;
    }
    let (lo, hi) = p.range(&b);
    if !p.may_contain_root(lo, hi) {
        return None;
    }
    let w = (hi - lo).max(DVec3::splat(f64::MIN_POSITIVE));
    b.score = ((lo + hi).abs() / w).max_element();
    b.lo = lo;
    b.hi = hi;
    Some(b)
}

/// Runs the bisection; `None` when the whole domain is certified contact-free.
pub(crate) fn solve(p: &Problem, opts: &CcdOptions) -> Option<Toi> {
    let root = evaluate(p, [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], 0)?;
    let tol = opts.tolerance.max(0.0) + 2.0 * p.eps.max_element();
    let min_width = 0.5f64.powi(MAX_DEPTH as i32);
    let mut heap = BinaryHeap::new();
    heap.push(root);
    let mut checks = 1usize;
    while let Some(b) = heap.pop() {
        // The image is within the tolerance on every axis: an (approximate) contact.
        let small = (b.hi - b.lo).max_element() <= tol;
        let widths = [b.t[1] - b.t[0], b.u[1] - b.u[0], b.v[1] - b.v[0]];
        let t_ok = widths[0] <= opts.max_time_width;
        let accept = Some(Toi {
            t_lo: b.t[0],
            t_hi: b.t[1],
        });
        if (small && t_ok) || checks >= opts.max_checks {
            return accept;
        }
        // Split the dimension whose image is widest (t when only time is too coarse).
        let wts = p.split_weights(&b);
        let mut dim = usize::MAX;
        let mut best = -1.0;
        for (i, &w) in wts.iter().enumerate() {
            if widths[i] > min_width && w > best {
                best = w;
                dim = i;
            }
        }
        if small && widths[0] > min_width {
            dim = 0;
        }
        if dim == usize::MAX {
            // Nothing left to split: accept conservatively.
            return accept;
        }
        let (mut ta, mut tb, mut ua, mut ub, mut va, mut vb) = (b.t, b.t, b.u, b.u, b.v, b.v);
        let (x, y) = match dim {
            0 => (&mut ta, &mut tb),
            1 => (&mut ua, &mut ub),
            _ => (&mut va, &mut vb),
        };
        let mid = 0.5 * (x[0] + x[1]);
        x[1] = mid;
        y[0] = mid;
        for (t, u, v) in [(ta, ua, va), (tb, ub, vb)] {
            checks += 1;
            if let Some(c) = evaluate(p, t, u, v, b.depth + 1) {
                heap.push(c);
            }
        }
    }
    None
}
