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
//!
//! **Directions.** Per-axis ranges cannot separate features that stay close to a tilted plane
//! (parallel motion at a small height, sliding in the plane just outside an edge, tangent
//! approaches): the image of a box is long on every axis. So a box that the axes keep alive is
//! also projected onto directions taken from the geometry at its centre — the direction of
//! `F` at the centre, the normal `h × k`, the in-plane normals of the edges, and the parts of
//! `F` orthogonal to `h` and to `k` (zero-area faces, parallel edges). For a fixed `w`,
//! `w · F` is multilinear too, so its range is spanned by the corners; a rigorous bound on the
//! rounding of the projection (`dir_error` in the source) keeps the exclusion certified.
//!
//! **Certainty.** An accepted box is a *certified* contact: its range contains 0 (within `δ`)
//! and is at most `tolerance` wide on every axis, so every point of it, in particular the
//! reported witness, is within `δ + tolerance` (+ the rounding bound) of contact. The earliest
//! live box is also accepted at once when the corner witness `(t_lo, u_lo, v_lo)`, or the
//! least-squares `(u, v)` at `t_lo` (moved into the domain), is within that bound.
//!
//! **Root isolation.** Without a minimum separation the search runs only over the time
//! intervals where the coplanarity cubic may vanish ([`super::coplanar`]), earliest first. When the check budget runs out (or a box cannot be split further) the answer is
//! *undecided*: no contact before `t_lo`, and the best witness found so far bounds the
//! separation from above.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

use super::{coplanar, CcdOptions, CcdStatus, Toi};

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
    /// Largest coordinate magnitude per axis (rounding bounds of the projections).
    m: DVec3,
}

/// Unit roundoff `2^-53`.
const U: f64 = f64::EPSILON * 0.5;

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
            m,
        }
    }

    /// `g, h, k` at time `t` (per axis, rounded as analysed in [`error_bound`]).
    #[inline]
    fn ghk(&self, t: f64) -> [DVec3; 3] {
        let x = [0, 1, 2, 3].map(|i| self.start[i] + t * self.delta[i]);
        self.terms.map(|(p, q)| x[p] - x[q])
    }

    /// Widened range of `F` over the box, per axis: `(lo, hi)`, from `g, h, k` at both ends of
    /// its time interval.
    #[inline]
    fn range(&self, at: &[[DVec3; 3]; 2], u: [f64; 2], v: [f64; 2]) -> (DVec3, DVec3) {
        let mut lo = DVec3::INFINITY;
        let mut hi = DVec3::NEG_INFINITY;
        for [g, h, k] in at {
            let (hu_lo, hu_hi) = scaled_range(*h, u);
            let (kv_lo, kv_hi) = scaled_range(*k, v);
            lo = lo.min(*g + hu_lo + kv_lo);
            hi = hi.max(*g + hu_hi + kv_hi);
        }
        (lo - self.eps, hi + self.eps)
    }

    /// The range of `w · F` over the box misses `[-δ |w|₁, δ |w|₁]` (certified): then no
    /// point of the box is within `δ` of contact (`|w · F| ≤ |w|₁ |F|∞`).
    ///
    /// Rounding (`ρ = 2^-53`, `w` scaled to `max |w_k| = 1`, `m_k` the largest coordinate on
    /// axis `k`, `S = Σ |w_k| m_k`): each component of `g, h, k` errs by ≤ 12 m_k ρ and is
    /// ≤ 2 m_k, so `fl(w · g)` errs by ≤ 12ρS + 3ρ·2S (+O(ρ²)) = 18ρS, as do `w · h`, `w · k`;
    /// the two products by `u, v ∈ [0, 1]` add ≤ 2ρ·2S, the two sums (|·| ≤ 6S) ≤ 12ρS:
    /// ≤ 70ρS in all. We use 128ρS, plus `4 MIN_POSITIVE` for underflow.
    #[inline]
    fn separated_along(&self, w: DVec3, at: &[[DVec3; 3]; 2], u: [f64; 2], v: [f64; 2]) -> bool {
        let m = w.abs().max_element();
        if !(m > 0.0 && m <= f64::MAX) {
            return false;
        }
        let w = w / m;
        let wa = w.abs();
        let err = 128.0 * U * wa.dot(self.m) + 4.0 * f64::MIN_POSITIVE;
        let need = self.sep * (wa.x + wa.y + wa.z) * (1.0 + 4.0 * U);
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for [g, h, k] in at {
            let (dg, dh, dk) = (w.dot(*g), w.dot(*h), w.dot(*k));
            let (a, b) = (dh * u[0], dh * u[1]);
            let (c, d) = (dk * v[0], dk * v[1]);
            lo = lo.min(dg + a.min(b) + c.min(d));
            hi = hi.max(dg + a.max(b) + c.max(d));
        }
        lo - err > need || hi + err < -need
    }

    /// The box's directions (see the module docs), from `g, h, k` at both ends of its time
    /// interval; unused slots are zero (and separate nothing).
    #[inline]
    fn directions(&self, at: &[[DVec3; 3]; 2], u: [f64; 2], v: [f64; 2]) -> [DVec3; 7] {
        let [[g0, h0, k0], [g1, h1, k1]] = *at;
        let (gm, hm, km) = ((g0 + g1) * 0.5, (h0 + h1) * 0.5, (k0 + k1) * 0.5);
        let c = gm + hm * (0.5 * (u[0] + u[1])) + km * (0.5 * (v[0] + v[1]));
        let n = hm.cross(km);
        let third = if self.kind == Kind::VertexFace {
            n.cross(hm - km)
        } else {
            DVec3::ZERO
        };
        [
            c,
            n,
            n.cross(hm),
            n.cross(km),
            third,
            hm.cross(c.cross(hm)),
            km.cross(c.cross(km)),
        ]
    }

    /// Whether one of the box's directions separates it.
    #[inline]
    fn separated_directions(&self, at: &[[DVec3; 3]; 2], u: [f64; 2], v: [f64; 2]) -> bool {
        self.directions(at, u, v)
            .iter()
            .any(|&w| self.separated_along(w, at, u, v))
    }

    /// Split weights of the direction that comes closest to separating the box (0 nearest
    /// an end of its range), or `None` when every direction's range is well centred on 0:
    /// what each of `t`, `u`, `v` adds to the width of that range. Splitting the dimension
    /// that widens it most is what separates soonest (e.g. `t` for a zero-area face, whose
    /// contacts at one time form a curve in `(u, v)`).
    fn separation_weights(&self, b: &Box3) -> Option<[f64; 3]> {
        let at = [self.ghk(b.t[0]), self.ghk(b.t[1])];
        // Only for (nearly) zero-area faces and parallel edges: elsewhere the image sizes
        // steer better.
        let (h, k) = (at[0][1] + at[1][1], at[0][2] + at[1][2]);
        let (hm, km) = (h.abs().max_element(), k.abs().max_element());
        let n = h.cross(k).abs().max_element();
        // A zero-length `h` or `k` (a vertex–edge test) has isolated contacts: not degenerate.
        let degenerate = hm > 0.0 && km > 0.0 && n <= 1e-3 * hm * km;
        if !degenerate {
            return None;
        }
        let mut best = 0.25;
        let mut out = None;
        for w in self.directions(&at, b.u, b.v) {
            let m = w.abs().max_element();
            if !(m > 0.0 && m <= f64::MAX) {
                continue;
            }
            let w = w / m;
            let d = at.map(|[g, h, k]| [w.dot(g), w.dot(h), w.dot(k)]);
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for [dg, dh, dk] in d {
                let (x, y) = (dh * b.u[0], dh * b.u[1]);
                let (z, q) = (dk * b.v[0], dk * b.v[1]);
                lo = lo.min(dg + x.min(y) + z.min(q));
                hi = hi.max(dg + x.max(y) + z.max(q));
            }
            let width = hi - lo;
            if width.is_nan() || width <= 0.0 {
                continue;
            }
            let close = (-lo).min(hi) / width;
            if close < best {
                best = close;
                out = Some([
                    (d[1][0] - d[0][0]).abs()
                        + (d[1][1] - d[0][1]).abs() * b.u[1]
                        + (d[1][2] - d[0][2]).abs() * b.v[1],
                    (b.u[1] - b.u[0]) * d[0][1].abs().max(d[1][1].abs()),
                    (b.v[1] - b.v[0]) * d[0][2].abs().max(d[1][2].abs()),
                ]);
            }
        }
        out
    }

    /// A witness at time `t`: the `(u, v)` nearest to a zero of `F(t, ·, ·)` (least squares,
    /// then moved into the domain) and the rigorous upper bound of `|F|∞` there, rounding
    /// included (evaluated like a box corner, so within `eps` per axis).
    fn witness_at(&self, t: f64) -> ([f64; 3], f64) {
        let [g, h, k] = self.ghk(t);
        let (hh, kk, hk) = (h.dot(h), k.dot(k), h.dot(k));
        let (hg, kg) = (h.dot(g), k.dot(g));
        let det = hh * kk - hk * hk;
        let (mut u, mut v) = if det > 1e-12 * hh * kk && det.is_finite() {
            ((hk * kg - kk * hg) / det, (hk * hg - hh * kg) / det)
        } else if hh >= kk && hh > 0.0 {
            (-hg / hh, 0.0)
        } else if kk > 0.0 {
            (0.0, -kg / kk)
        } else {
            (0.0, 0.0)
        };
        let unit = |x: f64| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        (u, v) = (unit(u), unit(v));
        if self.kind == Kind::VertexFace {
            if u + v > 1.0 {
                (u, v) = (unit(u / (u + v)), unit(v / (u + v)));
            }
            // `u + v ≤ 1` exactly (the witness must lie in the domain): `v ≤ 1 - u` rounded
            // down (`1 - u` errs by at most half an ulp, so one step down is enough).
            let exceeds = |v: f64| {
                let (s, e) = super::exact::two_sum(u, v);
                s > 1.0 || (s == 1.0 && e > 0.0)
            };
            if exceeds(v) {
                let mut r = 1.0 - u;
                if r > 0.0 && exceeds(r) {
                    r = f64::from_bits(r.to_bits() - 1);
                }
                v = r;
            }
        }
        let f = g + h * u + k * v;
        ([t, u, v], (f.abs() + self.eps).max_element())
    }

    /// The coplanarity cubic `det(g, h, k)` over `[t0, t1]` ([`coplanar`]): free (one strict
    /// sign, certified: no contact in that time interval), flat or open. Only meaningful
    /// without a minimum separation. `g, h, k` from [`Problem::ghk`] err by ≤ 12 u `m_k` per component
    /// (see [`error_bound`]); 16 u `max m` (+ underflow) is the input error passed on.
    fn coplanar(&self, t: [f64; 2]) -> coplanar::Cubic {
        let (x0, x1) = (self.ghk(t[0]), self.ghk(t[1]));
        let a = [0, 1, 2].map(|i| x0[i].abs().max(x1[i].abs()).max_element());
        let delta = 16.0 * U * self.m.max_element() + f64::MIN_POSITIVE;
        coplanar::classify(
            coplanar::bernstein_dets(&x0, &x1),
            coplanar::dets_error(a, delta),
        )
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
    /// Upper bound of `|F|∞` at the corner `(t_lo, u_lo, v_lo)` (in the domain).
    wsep: f64,
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
    /// then the deepest (a dive to an accepted box, even where the contacts at one time form
    /// a curve, as with a zero-area face), then the best-centred box.
    fn cmp(&self, o: &Self) -> Ordering {
        o.t[0]
            .total_cmp(&self.t[0])
            .then(self.depth.cmp(&o.depth))
            .then(o.score.total_cmp(&self.score))
    }
}

/// Deepest bisection per dimension (widths stay ≥ 2^-48, far above f64 resolution on [0, 1]).
const MAX_DEPTH: u32 = 48;

/// The smallest upper bound of `|F|∞` seen so far, and where (`(t, u, v)`).
struct Witness {
    sep: f64,
    at: [f64; 3],
}

/// Evaluates a box; `None` when it is outside the domain or certainly holds no contact.
/// Updates `best` with the box's corner witness.
#[inline]
fn evaluate(
    p: &Problem,
    t: [f64; 2],
    u: [f64; 2],
    v: [f64; 2],
    depth: u32,
    best: &mut Witness,
) -> Option<Box3> {
    let mut b = Box3 {
        t,
        u,
        v,
        lo: DVec3::ZERO,
        hi: DVec3::ZERO,
        score: 0.0,
        wsep: 0.0,
        depth,
    };
    if !p.in_domain(&b) {
        return None;
    }
    let at = [p.ghk(t[0]), p.ghk(t[1])];
    let (lo, hi) = p.range(&at, u, v);
    if !p.may_contain_root(lo, hi) || p.separated_directions(&at, u, v) {
        return None;
    }
    // F at the corner (t0, u0, v0), rounded like a range corner: errs by ≤ eps per axis.
    let [g, h, k] = at[0];
    let f = g + h * u[0] + k * v[0];
    b.wsep = (f.abs() + p.eps).max_element();
    if b.wsep < best.sep {
        best.sep = b.wsep;
        best.at = [t[0], u[0], v[0]];
    }
    let w = (hi - lo).max(DVec3::splat(f64::MIN_POSITIVE));
    b.score = ((lo + hi).abs() / w).max_element();
    b.lo = lo;
    b.hi = hi;
    Some(b)
}

/// An undecided answer at the earliest live box `b`, with the best witness.
fn undecided(b: &Box3, best: &Witness) -> Option<Toi> {
    Some(Toi {
        t_lo: b.t[0],
        t_hi: b.t[1],
        status: CcdStatus::Undecided,
        separation: best.sep,
        witness: best.at,
    })
}

/// Runs the bisection; `None` when the whole domain is certified contact-free.
///
/// Without a minimum separation the search runs only over the time intervals where the
/// coplanarity cubic may vanish ([`coplanar::candidate_times`]), one after the other.
pub(crate) fn solve(p: &Problem, opts: &CcdOptions) -> Option<Toi> {
    let mut best = Witness {
        sep: f64::INFINITY,
        at: [0.0; 3],
    };
    // Most queries end here, before any root isolation.
    evaluate(p, [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], 0, &mut best)?;
    let mut checks = 1usize;
    let ranges = if p.sep == 0.0 {
        coplanar::candidate_times(|t| p.coplanar(t), ISOLATION_BUDGET)
    } else {
        vec![[0.0, 1.0]]
    };
    for t in ranges {
        let r = solve_range(p, opts, t, &mut checks, &mut best);
        if r.is_some() {
            return r;
        }
    }
    None
}

/// Calls of the coplanarity test per query in the root isolation.
const ISOLATION_BUDGET: usize = 128;

/// The bisection over `[t0, t1] × [0, 1]²`, sharing the check count and the best witness
/// with the other intervals of the query.
fn solve_range(
    p: &Problem,
    opts: &CcdOptions,
    t: [f64; 2],
    checks: &mut usize,
    best: &mut Witness,
) -> Option<Toi> {
    let root = evaluate(p, t, [0.0, 1.0], [0.0, 1.0], 0, best)?;
    let tol = opts.tolerance.max(0.0) + 2.0 * p.eps.max_element();
    // A corner witness this close certifies a contact as an accepted box does.
    let near = tol + p.sep;
    let min_width = 0.5f64.powi(MAX_DEPTH as i32);
    let mut heap = BinaryHeap::new();
    heap.push(root);
    *checks += 1;
    while let Some(b) = heap.pop() {
        // The image is within the tolerance on every axis: an (approximate) contact.
        let small = (b.hi - b.lo).max_element() <= tol;
        let widths = [b.t[1] - b.t[0], b.u[1] - b.u[0], b.v[1] - b.v[0]];
        let t_ok = widths[0] <= opts.max_time_width;
        if small && t_ok {
            // Every point of the box is within max(|lo|, |hi|) of contact on every axis.
            return Some(Toi {
                t_lo: b.t[0],
                t_hi: b.t[1],
                status: CcdStatus::Contact,
                separation: b.lo.abs().max(b.hi.abs()).max_element(),
                witness: [b.t[0], b.u[0], b.v[0]],
            });
        }
        if b.wsep <= near {
            // The earliest live box touches (within the tolerance) at its start.
            return Some(Toi {
                t_lo: b.t[0],
                t_hi: b.t[0],
                status: CcdStatus::Contact,
                separation: b.wsep,
                witness: [b.t[0], b.u[0], b.v[0]],
            });
        }
        // The nearest point at the box's start: a contact as soon as it is close enough.
        let (at, sep) = p.witness_at(b.t[0]);
        if sep < best.sep {
            best.sep = sep;
            best.at = at;
        }
        if sep <= near {
            return Some(Toi {
                t_lo: b.t[0],
                t_hi: b.t[0],
                status: CcdStatus::Contact,
                separation: sep,
                witness: at,
            });
        }
        if *checks >= opts.max_checks {
            return undecided(&b, best);
        }
        // Split the dimension whose image is widest (t when only time is too coarse).
        let wts = p
            .separation_weights(&b)
            .unwrap_or_else(|| p.split_weights(&b));
        let mut dim = usize::MAX;
        let mut widest = -1.0;
        for (i, &w) in wts.iter().enumerate() {
            if widths[i] > min_width && w > widest {
                widest = w;
                dim = i;
            }
        }
        if small && widths[0] > min_width {
            dim = 0;
        }
        if dim == usize::MAX {
            // Nothing left to split: undecided (conservatively a contact).
            return undecided(&b, best);
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
            *checks += 1;
            if let Some(c) = evaluate(p, t, u, v, b.depth + 1, best) {
                heap.push(c);
            }
        }
    }
    None
}
