//! Cheap conservative rejection tests run before the inclusion solver. Each returns `true`
//! only when contact (within the minimum separation) is impossible during the step.
//!
//! Separation along a fixed direction `w` at both ends of the step is enough: every pair of
//! points (one per primitive) moves linearly, so `w · (b(t) - a(t))` is linear in `t` and
//! positive at `t = 0` and `t = 1` implies positive throughout.

use glam::DVec3;
use gprox_bvh::Aabb;

use super::coplanar::bernstein_dets;

const U: f64 = f64::EPSILON * 0.5;

/// Node test for the dual-box BVTT: `a` and `b` (boxes at `t = 0` and `t = 1`) are separated
/// by more than `sep` (the minimum separation, L∞ like the elementary tests) on one axis, in
/// the same order, at both ends. Rounding of the f64 difference is monotone, so a rounded gap
/// above `sep` certifies an exact gap above `sep`; with `sep = 0` the sign is exact.
#[inline]
pub(crate) fn boxes_separated_both_ends(
    a0: &Aabb,
    a1: &Aabb,
    b0: &Aabb,
    b1: &Aabb,
    sep: f64,
) -> bool {
    // Differences of two f32 values are exact in f64, so the comparison with `sep` is exact.
    let gap = |lo: f32, hi: f32| lo as f64 - hi as f64 > sep;
    (0..3).any(|k| {
        (gap(a0.min[k], b0.max[k]) && gap(a1.min[k], b1.max[k]))
            || (gap(b0.min[k], a0.max[k]) && gap(b1.min[k], a1.max[k]))
    })
}

/// The four points of an elementary query split into two groups: `..split` and `split..`.
pub(crate) struct Groups<'a> {
    pub start: &'a [DVec3; 4],
    pub end: &'a [DVec3; 4],
    pub split: usize,
    pub sep: f64,
}

impl Groups<'_> {
    /// Separated on a coordinate axis by more than `sep`, same order, at both ends (exact).
    #[inline]
    pub(crate) fn axis_separated(&self) -> bool {
        let s = self.split;
        let bx = |pts: &[DVec3]| {
            let mut lo = pts[0];
            let mut hi = pts[0];
            for p in &pts[1..] {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
            (lo, hi)
        };
        let (a0l, a0h) = bx(&self.start[..s]);
        let (b0l, b0h) = bx(&self.start[s..]);
        let (a1l, a1h) = bx(&self.end[..s]);
        let (b1l, b1h) = bx(&self.end[s..]);
        let d = self.sep;
        (0..3).any(|k| {
            // `x - y > d` for exact f64 values: when the rounded difference exceeds `d` the
            // exact one does too only up to rounding, so compare with the widened `d`.
            let gt = |x: f64, y: f64| x - y > d * (1.0 + 4.0 * U) + f64::MIN_POSITIVE && x > y;
            (gt(a0l[k], b0h[k]) && gt(a1l[k], b1h[k])) || (gt(b0l[k], a0h[k]) && gt(b1l[k], a1h[k]))
        })
    }

    /// Separated along `w` (any direction) by more than `sep` at both ends, certified with a
    /// rigorous bound on the rounding of the dot products.
    #[inline]
    pub(crate) fn separated_along(&self, w: DVec3) -> bool {
        if !w.is_finite() || w == DVec3::ZERO {
            return false;
        }
        let wa = w.abs();
        let s = self.split;
        let mut ok_pos = true;
        let mut ok_neg = true;
        for pts in [self.start, self.end] {
            let mut m = 0.0f64;
            let mut alo = f64::INFINITY;
            let mut ahi = f64::NEG_INFINITY;
            let mut blo = f64::INFINITY;
            let mut bhi = f64::NEG_INFINITY;
            for (i, p) in pts.iter().enumerate() {
                let v = w.x * p.x + w.y * p.y + w.z * p.z;
                m = m.max(wa.dot(p.abs()));
                if i < s {
                    alo = alo.min(v);
                    ahi = ahi.max(v);
                } else {
                    blo = blo.min(v);
                    bhi = bhi.max(v);
                }
            }
            // |fl(w·p) - w·p| ≤ 3u Σ|w_k p_k| (+u²); two values, one subtraction: ≤ 8u m,
            // we use 12u m. Minimum separation: distance ≥ gap / |w|₂ and |w|₂ ≤ |w|₁.
            let need = 12.0 * U * m
                + self.sep * (wa.x + wa.y + wa.z) * (1.0 + 4.0 * U)
                + f64::MIN_POSITIVE;
            ok_pos &= blo - ahi > need;
            ok_neg &= alo - bhi > need;
            if !ok_pos && !ok_neg {
                return false;
            }
        }
        ok_pos || ok_neg
    }
}

/// Closest point to `p` on triangle `(a, b, c)` (Ericson's region walk; approximate, it only
/// picks a direction).
pub(crate) fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return a + v * ab;
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return a + w * ac;
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return b + w * (c - b);
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// Closest points of segments `(p0, p1)` and `(q0, q1)` (approximate; picks a direction).
pub(crate) fn closest_segments(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (DVec3, DVec3) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(r);
    let (s, t);
    if a <= f64::MIN_POSITIVE && e <= f64::MIN_POSITIVE {
        return (p0, q0);
    }
    if a <= f64::MIN_POSITIVE {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e <= f64::MIN_POSITIVE {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let mut s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t0 = 0.0;
                s0 = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t0 = 1.0;
                s0 = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = s0;
            t = t0;
        }
    }
    (p0 + d1 * s, q0 + d2 * t)
}

/// No coplanarity of the four points during the step (certified): the Bernstein coefficients
/// of the cubic `det(e1(t), e2(t), e3(t))` all have the same strict sign. Only valid without
/// minimum separation. `e` vectors are differences to point 0 of `[p0, p1, p2, p3]`.
pub(crate) fn never_coplanar(start: &[DVec3; 4], end: &[DVec3; 4]) -> bool {
    let e0 = [
        start[1] - start[0],
        start[2] - start[0],
        start[3] - start[0],
    ];
    let e1 = [end[1] - end[0], end[2] - end[0], end[3] - end[0]];
    let [b0, b1, b2, b3] = bernstein_dets(&e0, &e1);
    // Bound: the points' coordinates ≤ M, differences ≤ 2M exact to u·2M; a determinant is a
    // sum of 6 triple products ≤ (2M)³ each: error ≤ 6·8M³·(3u + 5u)(1 + O(u)) ≈ 384uM³;
    // averaging adds ≤ 3u of the value. Use 1024uM³ (per difference vector magnitudes).
    let mut m = [0.0f64; 3];
    for k in 0..3 {
        m[k] = e0[k].abs().max(e1[k].abs()).max_element();
    }
    let eps = 1024.0 * U * m[0] * m[1] * m[2] * (1.0 + 16.0 * U) + f64::MIN_POSITIVE;
    let all_pos = b0 > eps && b1 > eps && b2 > eps && b3 > eps;
    let all_neg = b0 < -eps && b1 < -eps && b2 < -eps && b3 < -eps;
    all_pos || all_neg
}

/// Projections of the six corners of a face pair onto one direction at both ends of the step,
/// with a rigorous rounding margin: a feature pair whose projections are apart by more than the
/// margin, in the same order, at both ends never touches (each projected difference is linear
/// in `t`).
pub(crate) struct Projected {
    start: [f64; 6],
    end: [f64; 6],
    need: f64,
}

impl Projected {
    /// Projections onto the direction between the face centroids (over both ends), or `None`
    /// when it is degenerate.
    #[inline]
    pub(crate) fn new(
        corners0: &[DVec3; 6],
        corners1: &[DVec3; 6],
        sep: f64,
        big: f64,
    ) -> Option<Self> {
        let mut w = DVec3::ZERO;
        for k in 0..3 {
            w += (corners0[k + 3] + corners1[k + 3]) - (corners0[k] + corners1[k]);
        }
        if !w.is_finite() || w == DVec3::ZERO {
            return None;
        }
        let mut start = [0.0; 6];
        let mut end = [0.0; 6];
        for k in 0..6 {
            let (p, q) = (corners0[k], corners1[k]);
            start[k] = w.x * p.x + w.y * p.y + w.z * p.z;
            end[k] = w.x * q.x + w.y * q.y + w.z * q.z;
        }
        // `big` bounds every coordinate of both meshes at both ends.
        // As in `Groups::separated_along`: |fl(w·p) - w·p| ≤ 3u Σ|w_k p_k| ≤ 3u |w|₁ max|p|;
        // two values and one subtraction ≤ 8u m, we use 12u m; minimum separation: distance
        // ≥ gap / |w|₂ ≥ gap / |w|₁.
        let w1 = w.abs().element_sum();
        let need =
            (12.0 * U * big + sep * (1.0 + 4.0 * U)) * w1 * (1.0 + 4.0 * U) + f64::MIN_POSITIVE;
        need.is_finite().then_some(Self { start, end, need })
    }

    /// Whether slots `s[..split]` and `s[split..]` are separated at both ends, in one order.
    /// Branch-free: the groups are read as `{s0, s[split-1]}` and `{s[split], s2, s3}` (a
    /// repeated slot changes no range). The projections are finite (`need` is), so the plain
    /// min/max are the ranges.
    #[inline]
    pub(crate) fn separated(&self, s: &[u8; 4], split: usize) -> bool {
        let (a, b) = ([s[0], s[split - 1]], [s[split], s[2], s[3]]);
        let ends = |v: &[f64; 6]| {
            let at = |k: u8| v[k as usize];
            let (a0, a1) = (at(a[0]), at(a[1]));
            let (b0, b1, b2) = (at(b[0]), at(b[1]), at(b[2]));
            (
                (a0.min(a1), a0.max(a1)),
                (b0.min(b1).min(b2), b0.max(b1).max(b2)),
            )
        };
        let (a0, b0) = ends(&self.start);
        let (a1, b1) = ends(&self.end);
        let pos = (b0.0 - a0.1 > self.need) & (b1.0 - a1.1 > self.need);
        let neg = (a0.0 - b0.1 > self.need) & (a1.0 - b1.1 > self.need);
        pos | neg
    }
}

/// Cheap certified exclusion of an elementary query whose points `..split` form one
/// primitive and `split..` the other: axis separation, separation along the closest features'
/// direction at either end, then (without a minimum separation) the coplanarity test.
#[inline]
pub(crate) fn excluded(start: &[DVec3; 4], end: &[DVec3; 4], split: usize, sep: f64) -> bool {
    let g = Groups {
        start,
        end,
        split,
        sep,
    };
    if g.axis_separated() {
        return true;
    }
    for pts in [start, end] {
        let w = if split == 1 {
            pts[0] - closest_on_triangle(pts[0], pts[1], pts[2], pts[3])
        } else {
            let (a, b) = closest_segments(pts[0], pts[1], pts[2], pts[3]);
            b - a
        };
        if g.separated_along(w) {
            return true;
        }
    }
    sep == 0.0 && never_coplanar(start, end)
}
