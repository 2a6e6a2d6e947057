//! Exact intersection test of two closed triangles in f64 ([`triangles_intersect`]).
//!
//! Every decision is an exact sign ([`orient3d`], [`orient2d`]) or an exact comparison of input
//! coordinates, so the answer is exact for the given f64 corners: triangles are closed (touching
//! at a vertex or along an edge counts), coplanar overlap is handled, and degenerate
//! (zero-area: segment or point) triangles are treated as the segment or point they are.
//!
//! # Algorithm (orientation-only, in the spirit of Guigue–Devillers 2003)
//! Write `S(a, b, c, d)` for [`orient3d`] (positive when `d` is below the plane of `a, b, c`).
//!
//! 1. **Plane sides** ([`plane_sides`]): `sq[i] = S(p0, p1, p2, q_i)`. If all three are non-zero
//!    with one sign, `Q` misses the plane of `P`: no intersection. Same with `sp[i] = S(q0, q1, q2, p_i)`.
//!    (A degenerate `P` gives `sq = 0, 0, 0`, so this early-out is always sound.)
//! 2. If neither `sq` nor `sp` is all zero, both triangles are proper and their planes cross
//!    along a line `L`; each triangle meets `L` in a closed interval. **Crossing case**
//!    ([`crossing_case`]): [`apex`] picks in each triangle the vertex alone on its side (`a` in
//!    `P`, `d` in `Q`) and whether the *other* triangle must be flipped so that the apex is on
//!    the non-positive side and the two others on the non-negative side. With `P = (a, b, c)`
//!    and `Q = (d, e, f)` rotated to start at the apex and the two last corners swapped when
//!    flipped, the intervals overlap iff `S(a, b, d, e) >= 0` and `S(a, c, d, f) <= 0`.
//!    (Along `L` oriented by `n_P × n_Q`, `P`'s interval is `[X_ac, X_ab]` and `Q`'s
//!    `[X_de, X_df]` where `X_xy` is the point of edge `xy` on the other plane; and
//!    `sign S(a, x, d, y) = sign(X_ax - X_dy)` for `x ∈ {b, c}, y ∈ {e, f}`, because
//!    `det[x - a, d - a, y - d] = det[x - a, X_dy - X_ax, y - d]` and the remaining factor has a
//!    fixed sign in this canonical configuration.)
//! 3. If `sq` is all zero but `sp` is not, `P` is degenerate (a point or segment) and not in
//!    the plane of `Q` (which is proper). **Segment case** ([`segment_case`]): take the
//!    segment `[s, t]` spanned by `P` ([`extreme_pair`]); it meets the plane of `Q` in one point
//!    `X` unless both ends are strictly on one side; `X` lies in the closed triangle iff the
//!    three signs `S(s, t, q_i, q_{i+1})` are all `>= 0` or all `<= 0`. Symmetric when `sp` is
//!    all zero but `sq` is not.
//! 4. If both are all zero, everything lies in one plane (or both triangles are degenerate,
//!    then two skew segments are rejected with one `orient3d`). **Coplanar case**
//!    ([`coplanar_case`]): drop the coordinate axis ([`dominant_axis`]) that maps the common
//!    plane one-to-one onto a coordinate plane and decide in 2-D ([`hulls_intersect_2d`]): two
//!    closed (possibly degenerate) triangles meet iff one of the 9 edge pairs meets
//!    ([`segments_intersect_2d`], which also handles point-like and collinear segments) or a
//!    vertex of one lies inside the other proper triangle ([`point_in_triangle_2d`]).
//!
//! The CUDA kernels mirror these functions one by one (same names), with an f64 floating filter
//! in front of each orientation that may answer "undecided" and defer the pair to this code.

use glam::{DVec2, DVec3};

use crate::predicates::{
    collinear3, dominant_axis, orient2d, orient3d, project, sign, O3D_ERRBOUND_A,
};

/// Whether the closed triangles `p` and `q` intersect, exactly for the given f64 corners.
///
/// Touching (shared vertex, vertex on face, edge on edge) counts as intersecting; coplanar and
/// degenerate (segment or point) triangles are handled. Corners must be finite (as every
/// [`TriMesh`](crate::TriMesh) under a pose is); non-finite input gives an unspecified answer,
/// never a panic.
///
/// ```
/// use gprox_geometry::{glam::DVec3, tri_tri::triangles_intersect};
/// let p = [DVec3::ZERO, DVec3::X, DVec3::Y];
/// // Q's corner touches P's interior: counts.
/// let q = [DVec3::new(0.25, 0.25, 0.0), DVec3::new(0.0, 0.0, 1.0), DVec3::new(1.0, 1.0, 1.0)];
/// assert!(triangles_intersect(&p, &q));
/// // Lifted by a hair: misses.
/// let lift = DVec3::new(0.0, 0.0, 1e-30);
/// assert!(!triangles_intersect(&p, &q.map(|v| v + lift)));
/// ```
#[inline]
pub fn triangles_intersect(p: &[DVec3; 3], q: &[DVec3; 3]) -> bool {
    let sq = plane_sides(p, q);
    if strictly_one_side(sq) {
        return false;
    }
    let sp = plane_sides(q, p);
    if strictly_one_side(sp) {
        return false;
    }
    let q_flat = sq == [0; 3];
    let p_flat = sp == [0; 3];
    match (p_flat, q_flat) {
        (false, false) => crossing_case(p, q, sp, sq),
        // `sq` all zero, `sp` not: `P` is degenerate and `Q` proper.
        (false, true) => segment_case(p, sp, q),
        (true, false) => segment_case(q, sq, p),
        (true, true) => coplanar_case(p, q),
    }
}

/// Signs of [`orient3d`]`(t0, t1, t2, v)` for each corner `v` of `pts` (`-1`, `0`, `1`); all zero
/// when `t` is degenerate.
///
/// Floating filter first: the normal `n = (t1 - t0) × (t2 - t0)` is computed once and
/// `d = n · (v - t0)` (which is `-orient3d`) is trusted when `|d|` exceeds Shewchuk's static
/// bound `(7 + 56ε) ε · permanent` for this determinant; otherwise the exact adaptive
/// [`orient3d`] decides.
#[inline]
pub fn plane_sides(t: &[DVec3; 3], pts: &[DVec3; 3]) -> [i32; 3] {
    let u = t[1] - t[0];
    let w = t[2] - t[0];
    let n = DVec3::new(
        u.y * w.z - u.z * w.y,
        u.z * w.x - u.x * w.z,
        u.x * w.y - u.y * w.x,
    );
    // Per-axis weights of the permanent: |u_i w_j| + |u_j w_i|.
    let m = DVec3::new(
        (u.y * w.z).abs() + (u.z * w.y).abs(),
        (u.z * w.x).abs() + (u.x * w.z).abs(),
        (u.x * w.y).abs() + (u.y * w.x).abs(),
    );
    // Straight-line for the three corners (no closure per corner): the determinant and its
    // static error bound; the exact predicate only for a corner the filter leaves undecided.
    let side = |v: DVec3| {
        let r = v - t[0];
        let d = (r.x * n.x + r.y * n.y) + r.z * n.z;
        let permanent = (r.x.abs() * m.x + r.y.abs() * m.y) + r.z.abs() * m.z;
        (d, d.abs() > O3D_ERRBOUND_A * permanent)
    };
    let (d0, k0) = side(pts[0]);
    let (d1, k1) = side(pts[1]);
    let (d2, k2) = side(pts[2]);
    if k0 & k1 & k2 {
        return [-sign(d0), -sign(d1), -sign(d2)];
    }
    plane_sides_exact(t, pts, [(d0, k0), (d1, k1), (d2, k2)])
}

/// The rest of [`plane_sides`] when the filter did not decide every corner: the filtered
/// `(d, decided)` of each corner, the exact [`orient3d`] for the undecided ones.
#[cold]
#[inline(never)]
fn plane_sides_exact(t: &[DVec3; 3], pts: &[DVec3; 3], filtered: [(f64, bool); 3]) -> [i32; 3] {
    let mut out = [0; 3];
    for ((o, &v), (d, decided)) in out.iter_mut().zip(pts).zip(filtered) {
        *o = if decided {
            -sign(d)
        } else {
            sign(orient3d(t[0], t[1], t[2], v))
        };
    }
    out
}

/// Whether three signs are all `1` or all `-1`.
#[inline]
pub fn strictly_one_side(s: [i32; 3]) -> bool {
    s[0] != 0 && s[0] == s[1] && s[1] == s[2]
}

/// For the plane-side signs `s` of a triangle's corners (not all zero, not all one strict sign):
/// the apex (corner alone on its side) and whether the other triangle must be flipped so that
/// `s[apex] <= 0 <= s[others]`, with `s[others] > 0` when `s[apex] == 0`.
#[inline]
pub fn apex(s: [i32; 3]) -> (usize, bool) {
    let neg = s.iter().filter(|&&x| x < 0).count();
    let pos = s.iter().filter(|&&x| x > 0).count();
    if neg == 1 {
        (s.iter().position(|&x| x < 0).unwrap_or(0), false)
    } else if pos == 1 {
        (s.iter().position(|&x| x > 0).unwrap_or(0), true)
    } else {
        // Two corners strictly on one side, the apex on the plane.
        let i = s.iter().position(|&x| x == 0).unwrap_or(0);
        (i, s[(i + 1) % 3] < 0)
    }
}

/// Corners of `t` starting at `first`, in orientation order, or reversed (last two swapped)
/// when `flip`.
#[inline]
pub fn rotate(t: &[DVec3; 3], first: usize, flip: bool) -> [DVec3; 3] {
    let (a, b, c) = (t[first], t[(first + 1) % 3], t[(first + 2) % 3]);
    if flip {
        [a, c, b]
    } else {
        [a, b, c]
    }
}

/// Step 2: two proper triangles whose planes cross (`sp`, `sq` from [`plane_sides`], neither all
/// zero nor strictly one-sided).
#[inline]
pub fn crossing_case(p: &[DVec3; 3], q: &[DVec3; 3], sp: [i32; 3], sq: [i32; 3]) -> bool {
    let (ia, flip_q) = apex(sp);
    let (id, flip_p) = apex(sq);
    let [a, b, c] = rotate(p, ia, flip_p);
    let [d, e, f] = rotate(q, id, flip_q);
    orient3d(a, b, d, e) >= 0.0 && orient3d(a, c, d, f) <= 0.0
}

/// The two corners of a degenerate (collinear) triangle that span its segment: the smallest and
/// largest along the first axis on which the corners differ (equal indices for a point).
#[inline]
pub fn extreme_pair(t: &[DVec3; 3]) -> (usize, usize) {
    for axis in [0, 1, 2] {
        let c = t.map(|v| v[axis]);
        let lo = (1..3).fold(0, |m, i| if c[i] < c[m] { i } else { m });
        let hi = (1..3).fold(0, |m, i| if c[i] > c[m] { i } else { m });
        if c[lo] != c[hi] {
            return (lo, hi);
        }
    }
    (0, 0)
}

/// Step 3: degenerate `p` (with plane-side signs `sp` w.r.t. the proper triangle `q`, not all
/// zero) against `q`.
#[inline]
pub fn segment_case(p: &[DVec3; 3], sp: [i32; 3], q: &[DVec3; 3]) -> bool {
    let (i, j) = extreme_pair(p);
    if sp[i] * sp[j] > 0 {
        return false;
    }
    let (s, t) = (p[i], p[j]);
    let o = [
        sign(orient3d(s, t, q[0], q[1])),
        sign(orient3d(s, t, q[1], q[2])),
        sign(orient3d(s, t, q[2], q[0])),
    ];
    o.iter().all(|&x| x >= 0) || o.iter().all(|&x| x <= 0)
}

/// Step 4: all corners of `p` and `q` lie in one plane, or both triangles are degenerate.
pub fn coplanar_case(p: &[DVec3; 3], q: &[DVec3; 3]) -> bool {
    let axis = match (
        dominant_axis(p[0], p[1], p[2]),
        dominant_axis(q[0], q[1], q[2]),
    ) {
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) => {
            let (i, j) = extreme_pair(p);
            let (k, l) = extreme_pair(q);
            let (s0, s1, t0, t1) = (p[i], p[j], q[k], q[l]);
            if orient3d(s0, s1, t0, t1) != 0.0 {
                return false; // skew segments
            }
            match dominant_axis(s0, s1, t0)
                .or_else(|| dominant_axis(s0, s1, t1))
                .or_else(|| dominant_axis(t0, t1, s0))
            {
                Some(k) => k,
                None => match line_axis([s0, s1, t0, t1]) {
                    Some(k) => k,
                    None => return s0 == t0, // all four points equal
                },
            }
        }
    };
    hulls_intersect_2d(&p.map(|v| project(v, axis)), &q.map(|v| project(v, axis)))
}

/// For collinear points: an axis to drop such that the projection stays one-to-one on their line
/// (one not orthogonal-projecting the line to a point), or `None` when all points are equal.
fn line_axis(pts: [DVec3; 4]) -> Option<usize> {
    (0..3)
        .find(|&k| pts.iter().any(|v| v[k] != pts[0][k]))
        .map(|k| (k + 1) % 3)
}

/// Whether the closed segments `[a, b]` and `[c, d]` (each possibly a single point) intersect.
#[inline]
pub fn segments_intersect_2d(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> bool {
    let d1 = sign(orient2d(a, b, c));
    let d2 = sign(orient2d(a, b, d));
    if d1 * d2 > 0 {
        return false;
    }
    let d3 = sign(orient2d(c, d, a));
    let d4 = sign(orient2d(c, d, b));
    if d3 * d4 > 0 {
        return false;
    }
    if d1 == 0 && d2 == 0 && d3 == 0 && d4 == 0 {
        // All on one line (or points): overlap of the boxes on both axes decides.
        return a.x.min(b.x) <= c.x.max(d.x)
            && c.x.min(d.x) <= a.x.max(b.x)
            && a.y.min(b.y) <= c.y.max(d.y)
            && c.y.min(d.y) <= a.y.max(b.y);
    }
    true
}

/// Whether `x` lies in the closed triangle `t`, which must be proper (non-zero area).
#[inline]
pub fn point_in_triangle_2d(x: DVec2, t: &[DVec2; 3]) -> bool {
    let o = [
        sign(orient2d(t[0], t[1], x)),
        sign(orient2d(t[1], t[2], x)),
        sign(orient2d(t[2], t[0], x)),
    ];
    o.iter().all(|&s| s >= 0) || o.iter().all(|&s| s <= 0)
}

/// Whether two closed, possibly degenerate, 2-D triangles intersect.
pub fn hulls_intersect_2d(p: &[DVec2; 3], q: &[DVec2; 3]) -> bool {
    for i in 0..3 {
        for j in 0..3 {
            if segments_intersect_2d(p[i], p[(i + 1) % 3], q[j], q[(j + 1) % 3]) {
                return true;
            }
        }
    }
    (orient2d(q[0], q[1], q[2]) != 0.0 && point_in_triangle_2d(p[0], q))
        || (orient2d(p[0], p[1], p[2]) != 0.0 && point_in_triangle_2d(q[0], p))
}

/// Whether three corners are collinear (a degenerate triangle), exactly.
#[inline]
pub fn is_degenerate(t: &[DVec3; 3]) -> bool {
    collinear3(t[0], t[1], t[2])
}

/// The f64 bounding box `(min, max)` of a triangle.
#[inline]
pub fn triangle_aabb_f64(t: &[DVec3; 3]) -> (DVec3, DVec3) {
    (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]))
}
