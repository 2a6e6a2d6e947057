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

/// Projection of `p` into the interior of triangle `t` when it falls inside (closed), else None.
/// Returns None for degenerate triangles (zero normal).
#[inline]
fn face_projection(p: DVec3, t: &[DVec3; 3]) -> Option<DVec3> {
    let e0 = t[1] - t[0];
    let e1 = t[2] - t[0];
    let n = e0.cross(e1);
    let n2 = n.length_squared();
    if n2 <= f64::MIN_POSITIVE {
        return None;
    }
    let w = p - t[0];
    // Barycentric coordinates of the projection through signed sub-areas.
    let c1 = e0.cross(w).dot(n); // weight of t[2] * n2
    let c2 = w.cross(e1).dot(n); // weight of t[1] * n2
    let c0 = n2 - c1 - c2;
    if c0 < 0.0 || c1 < 0.0 || c2 < 0.0 {
        return None;
    }
    Some(p - n * (w.dot(n) / n2))
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
    if let Some(q) = face_projection(p, t) {
        return (p.distance(q), q);
    }
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

/// Exact test for a proper crossing (one triangle's edge through the other, non-coplanar);
/// returns an intersection point. Coplanar and touching-by-feature cases are left to the
/// feature enumeration (which then finds distance ≈ 0 by construction).
fn crossing_point(a: &[DVec3; 3], b: &[DVec3; 3]) -> Option<DVec3> {
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
    let mut pa = a[0];
    let mut pb = b[0];
    // 9 edge–edge pairs (they also cover vertex–edge and vertex–vertex).
    for i in 0..3 {
        let (a0, a1) = (a[i], a[(i + 1) % 3]);
        for j in 0..3 {
            let (_, _, p, q) = segment_segment_closest(a0, a1, b[j], b[(j + 1) % 3]);
            let d2 = p.distance_squared(q);
            if d2 < best_d2 {
                best_d2 = d2;
                pa = p;
                pb = q;
            }
        }
    }
    // 6 vertex–face pairs (interior projections; boundary cases are edge–edge above).
    for &v in a {
        if let Some(q) = face_projection(v, b) {
            let d2 = v.distance_squared(q);
            if d2 < best_d2 {
                best_d2 = d2;
                pa = v;
                pb = q;
            }
        }
    }
    for &v in b {
        if let Some(q) = face_projection(v, a) {
            let d2 = v.distance_squared(q);
            if d2 < best_d2 {
                best_d2 = d2;
                pa = q;
                pb = v;
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
