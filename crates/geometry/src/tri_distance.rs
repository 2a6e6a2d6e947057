//! Exact closest points between points, segments and triangles in f64.
//!
//! [`triangle_distance`] enumerates every feature pair that can realise the minimum between two
//! disjoint triangles — 6 vertex–face and 9 edge–edge pairs — and, for triangles that cross, finds
//! an intersection point with exact orientation signs ([`robust::orient3d`]) and reports 0.
//! Every candidate is a genuine pair (point on `a`, point on `b`), so the reported distance is
//! always achieved by the reported points; touching contacts found up to rounding are confirmed
//! by the exact [`triangles_intersect`] and reported as exactly 0. Degenerate triangles (segments, points) are handled:
//! their edges cover them, and a face projection is only used when the normal is non-zero.

use crate::tri_tri::triangles_intersect;
use glam::DVec3;
use robust::{orient3d, Coord3D};

/// Closest points between two triangles and their distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriDistance {
    /// Euclidean distance `|point_a - point_b|` (0 when the closed triangles intersect).
    pub distance: f64,
    /// Closest point on the first triangle.
    pub point_a: DVec3,
    /// Closest point on the second triangle.
    pub point_b: DVec3,
}

/// Closest points of segments `[p0, p1]` and `[q0, q1]`: returns `(s, t, point_p, point_q)`
/// with `point_p = p0 + s (p1 - p0)`, `point_q = q0 + t (q1 - q0)`, `s, t ∈ [0, 1]`.
///
/// Zero-length and parallel segments are handled (an endpoint pair is chosen).
///
/// ```
/// use gprox_geometry::glam::DVec3;
/// use gprox_geometry::tri_distance::segment_segment_closest;
/// let (s, t, p, q) = segment_segment_closest(
///     DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0),
///     DVec3::new(0.0, -1.0, 1.0), DVec3::new(0.0, 1.0, 1.0));
/// assert_eq!((s, t), (0.5, 0.5));
/// assert_eq!(p.distance(q), 1.0);
/// ```
#[inline]
pub fn segment_segment_closest(
    p0: DVec3,
    p1: DVec3,
    q0: DVec3,
    q1: DVec3,
) -> (f64, f64, DVec3, DVec3) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let (s, t);
    if a <= f64::MIN_POSITIVE && e <= f64::MIN_POSITIVE {
        s = 0.0;
        t = 0.0;
    } else if a <= f64::MIN_POSITIVE {
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
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    (s, t, p0 + d1 * s, q0 + d2 * t)
}

/// Closest point of segment `[a, b]` to `p` (robust for `a == b`).
#[inline]
fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let d = b - a;
    let l2 = d.length_squared();
    if l2 <= f64::MIN_POSITIVE {
        return a;
    }
    a + d * ((p - a).dot(d) / l2).clamp(0.0, 1.0)
}

/// A triangle's plane, set up for projecting several points into it: the normal
/// `n = e0 × e1` and the edge normals `n × e0`, `e1 × n` whose dot products with `p − t0` are the
/// barycentric weights of `t[2]` and `t[1]` (times `|n|²`).
#[derive(Clone, Copy, Debug)]
struct FacePlane {
    t0: DVec3,
    n: DVec3,
    n2: f64,
    m0: DVec3,
    m1: DVec3,
}

impl FacePlane {
    /// None for degenerate triangles (zero normal).
    #[inline]
    fn new(t: &[DVec3; 3]) -> Option<Self> {
        let e0 = t[1] - t[0];
        let e1 = t[2] - t[0];
        let n = e0.cross(e1);
        let n2 = n.length_squared();
        (n2 > f64::MIN_POSITIVE).then(|| Self {
            t0: t[0],
            n,
            n2,
            m0: n.cross(e0),
            m1: e1.cross(n),
        })
    }

    /// Projection of `p` into the closed triangle when it falls inside, else None.
    #[inline]
    fn project(&self, p: DVec3) -> Option<DVec3> {
        let w = p - self.t0;
        let c1 = w.dot(self.m0); // weight of t[2] * n2
        let c2 = w.dot(self.m1); // weight of t[1] * n2
        let c0 = self.n2 - c1 - c2;
        if c0 < 0.0 || c1 < 0.0 || c2 < 0.0 {
            return None;
        }
        Some(p - self.n * (w.dot(self.n) / self.n2))
    }
}

/// A triangle set up for the distances of many points ([`point_triangle_distance`] of each,
/// bit for bit, with the plane's set-up done once).
///
/// ```
/// use gprox_geometry::glam::DVec3;
/// use gprox_geometry::tri_distance::{point_triangle_distance, PointTriangle};
/// let t = [DVec3::ZERO, DVec3::X, DVec3::Y];
/// let prepared = PointTriangle::new(&t);
/// for p in [DVec3::new(0.25, 0.25, 2.0), DVec3::new(2.0, 3.0, -1.0)] {
///     assert_eq!(prepared.distance(p), point_triangle_distance(p, &t));
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PointTriangle {
    t: [DVec3; 3],
    /// None for degenerate triangles (zero normal): only their edges are used.
    plane: Option<FacePlane>,
}

impl PointTriangle {
    /// Sets up triangle `t`.
    #[inline]
    pub fn new(t: &[DVec3; 3]) -> Self {
        Self {
            t: *t,
            plane: FacePlane::new(t),
        }
    }

    /// Closest point of the closed triangle to `p`, and the distance: the same values as
    /// [`point_triangle_distance`].
    #[inline]
    pub fn distance(&self, p: DVec3) -> (f64, DVec3) {
        if let Some(q) = self.plane.as_ref().and_then(|f| f.project(p)) {
            return (p.distance(q), q);
        }
        let t = &self.t;
        let mut best = (f64::INFINITY, t[0]);
        for i in 0..3 {
            let q = closest_on_segment(p, t[i], t[(i + 1) % 3]);
            let d2 = p.distance_squared(q);
            if d2 < best.0 {
                best = (d2, q);
            }
        }
        (best.0.sqrt(), best.1)
    }
}

/// Closest point of the closed triangle `t` to `p`, and the distance.
///
/// ```
/// use gprox_geometry::glam::DVec3;
/// use gprox_geometry::tri_distance::point_triangle_distance;
/// let t = [DVec3::ZERO, DVec3::X, DVec3::Y];
/// let (d, q) = point_triangle_distance(DVec3::new(0.25, 0.25, 2.0), &t);
/// assert_eq!((d, q), (2.0, DVec3::new(0.25, 0.25, 0.0)));
/// ```
#[inline]
pub fn point_triangle_distance(p: DVec3, t: &[DVec3; 3]) -> (f64, DVec3) {
    PointTriangle::new(t).distance(p)
}

#[inline]
fn c3(p: DVec3) -> Coord3D<f64> {
    Coord3D {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

/// Exact sign of `orient3d(a, b, c, d)`.
#[inline]
fn o3(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> f64 {
    orient3d(c3(a), c3(b), c3(c), c3(d))
}

/// If segment `[p, q]` crosses the plane of triangle `t` (not coplanar) at a point inside the
/// closed triangle — decided with exact signs — returns an approximation of that point.
fn segment_crosses_triangle(p: DVec3, q: DVec3, t: &[DVec3; 3], sp: f64, sq: f64) -> Option<DVec3> {
    if (sp > 0.0 && sq > 0.0) || (sp < 0.0 && sq < 0.0) || (sp == 0.0 && sq == 0.0) {
        return None;
    }
    let u = [
        o3(p, q, t[0], t[1]),
        o3(p, q, t[1], t[2]),
        o3(p, q, t[2], t[0]),
    ];
    let pos = u.iter().any(|&x| x > 0.0);
    let neg = u.iter().any(|&x| x < 0.0);
    if pos && neg {
        return None;
    }
    // Parameter of the crossing from the (exactly signed, approximately valued) plane distances.
    let s = (sp / (sp - sq)).clamp(0.0, 1.0);
    Some(p + (q - p) * s)
}

/// Whether the points `p` lie strictly on one side of the plane of `t`, decided in floating
/// point where that is certain: each side `det[t1 − t0, t2 − t0, p − t0]` is computed from the
/// rounded differences and accepted only when it exceeds Shewchuk's error bound for such a
/// determinant (`(7 + 56ε)ε` times its permanent; taken here as `1e-14` times the permanent, a
/// margin of twelve). False means "not certain" (the exact predicates then decide), never
/// "not on one side".
#[inline]
fn strictly_one_side(t: &[DVec3; 3], p: &[DVec3; 3]) -> bool {
    let e0 = t[1] - t[0];
    let e1 = t[2] - t[0];
    let n = e0.cross(e1);
    // The permanent's per-component factors |e0_j e1_k| + |e0_k e1_j|.
    let f = DVec3::new(
        (e0.y * e1.z).abs() + (e0.z * e1.y).abs(),
        (e0.z * e1.x).abs() + (e0.x * e1.z).abs(),
        (e0.x * e1.y).abs() + (e0.y * e1.x).abs(),
    );
    let side = |q: DVec3| {
        let w = q - t[0];
        let d = w.dot(n);
        let bound = 1e-14 * w.abs().dot(f);
        if d > bound {
            1
        } else if d < -bound {
            -1
        } else {
            0
        }
    };
    let s = p.map(side);
    s[0] != 0 && s[0] == s[1] && s[1] == s[2]
}

/// Exact test for a proper crossing (one triangle's edge through the other, non-coplanar);
/// returns an intersection point. Coplanar and touching-by-feature cases are left to the
/// feature enumeration (which then finds distance ≈ 0 by construction).
fn crossing_point(a: &[DVec3; 3], b: &[DVec3; 3]) -> Option<DVec3> {
    if strictly_one_side(b, a) || strictly_one_side(a, b) {
        return None;
    }
    let sa = a.map(|p| o3(b[0], b[1], b[2], p));
    if sa.iter().all(|&s| s > 0.0) || sa.iter().all(|&s| s < 0.0) {
        return None;
    }
    let sb = b.map(|p| o3(a[0], a[1], a[2], p));
    if sb.iter().all(|&s| s > 0.0) || sb.iter().all(|&s| s < 0.0) {
        return None;
    }
    for i in 0..3 {
        let j = (i + 1) % 3;
        if let Some(x) = segment_crosses_triangle(a[i], a[j], b, sa[i], sa[j]) {
            return Some(x);
        }
        if let Some(x) = segment_crosses_triangle(b[i], b[j], a, sb[i], sb[j]) {
            return Some(x);
        }
    }
    None
}

/// Closest points of two closed triangles (exact feature enumeration; 0 when they intersect).
///
/// ```
/// use gprox_geometry::glam::DVec3;
/// use gprox_geometry::tri_distance::triangle_distance;
/// let a = [DVec3::ZERO, DVec3::X, DVec3::Y];
/// let b = [DVec3::new(0.2, 0.2, 0.5), DVec3::new(1.0, 0.2, 0.5), DVec3::new(0.2, 1.0, 0.5)];
/// let r = triangle_distance(&a, &b);
/// assert_eq!(r.distance, 0.5);
/// assert_eq!(r.point_a.distance(r.point_b), r.distance);
/// ```
pub fn triangle_distance(a: &[DVec3; 3], b: &[DVec3; 3]) -> TriDistance {
    let mut best_d2 = f64::INFINITY;
    let (mut pa, mut pb) = (a[0], b[0]);
    let mut offer = |p: DVec3, q: DVec3| {
        let d2 = p.distance_squared(q);
        if d2 < best_d2 {
            (best_d2, pa, pb) = (d2, p, q);
        }
    };
    // 9 edge–edge pairs (they also cover vertex–edge and vertex–vertex).
    for i in 0..3 {
        let (a0, a1) = (a[i], a[(i + 1) % 3]);
        for j in 0..3 {
            let (_, _, p, q) = segment_segment_closest(a0, a1, b[j], b[(j + 1) % 3]);
            offer(p, q);
        }
    }
    // 6 vertex–face pairs (interior projections; boundary cases are edge–edge above).
    if let Some(plane) = FacePlane::new(b) {
        for &v in a {
            if let Some(q) = plane.project(v) {
                offer(v, q);
            }
        }
    }
    if let Some(plane) = FacePlane::new(a) {
        for &v in b {
            if let Some(q) = plane.project(v) {
                offer(q, v);
            }
        }
    }
    if best_d2 > 0.0 {
        if let Some(x) = crossing_point(a, b) {
            return TriDistance {
                distance: 0.0,
                point_a: x,
                point_b: x,
            };
        }
        // Touching (coplanar overlap, a vertex on the other triangle): the features found it up
        // to rounding; the exact test decides whether it is a true contact.
        let scale = a
            .iter()
            .chain(b)
            .map(|p| p.abs().max_element())
            .fold(0.0, f64::max);
        if best_d2 <= (1e-12 * scale) * (1e-12 * scale) && triangles_intersect(a, b) {
            return TriDistance {
                distance: 0.0,
                point_a: pa,
                point_b: pa,
            };
        }
    }
    TriDistance {
        distance: pa.distance(pb),
        point_a: pa,
        point_b: pb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn point() -> impl Strategy<Value = DVec3> {
        prop::array::uniform3(-1.0f64..1.0).prop_map(DVec3::from_array)
    }

    /// Points on the plane of `t` (barycentric `(u, v)`), lifted by `h` along its normal: with
    /// `h` down to 1e-18 the float sides are uncertain and must say so.
    fn near(t: &[DVec3; 3], u: f64, v: f64, h: f64) -> DVec3 {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v + n * h
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The float filter only ever claims "one side" where the exact signs agree and are not
        /// zero; far from the plane it does claim it.
        #[test]
        fn one_side_filter_agrees_with_exact_signs(
            t in prop::array::uniform3(point()),
            uv in prop::array::uniform3(prop::array::uniform2(-1.0f64..2.0)),
            exp in prop::array::uniform3(-18i32..0),
            sign in prop::array::uniform3(any::<bool>()),
            scale in -3i32..4,
        ) {
            let k = 10f64.powi(scale);
            let t = t.map(|p| p * k);
            let p: [DVec3; 3] = std::array::from_fn(|i| {
                let h = 10f64.powi(exp[i]) * if sign[i] { 1.0 } else { -1.0 };
                near(&t, uv[i][0], uv[i][1], h)
            });
            let exact = p.map(|q| o3(t[0], t[1], t[2], q));
            let one_side = exact.iter().all(|&s| s > 0.0) || exact.iter().all(|&s| s < 0.0);
            if strictly_one_side(&t, &p) {
                prop_assert!(one_side, "{:?}", exact);
            }
            // Clearly off the plane (relative height ≥ 1e-6 on one side): the filter decides.
            let n = (t[1] - t[0]).cross(t[2] - t[0]);
            if n.length() > 1e-9 * k * k && exp.iter().all(|&e| e >= -6) && sign.iter().all(|&s| s == sign[0]) {
                prop_assert!(strictly_one_side(&t, &p));
            }
        }
    }
}
