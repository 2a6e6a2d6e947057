//! Triangle–triangle distance against independent oracles: an exact rational intersection test,
//! dense sampling (the distance is never above any sampled pair), and a separation certificate
//! (the closest-point direction separates the two triangles, which proves optimality).

use gprox_geometry::glam::DVec3;
use gprox_geometry::tri_distance::{
    point_triangle_distance, segment_segment_closest, triangle_distance,
};
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use proptest::prelude::*;

type Q = BigRational;

fn q(x: f64) -> Q {
    Q::from_float(x).expect("finite")
}

fn qv(p: DVec3) -> [Q; 3] {
    [q(p.x), q(p.y), q(p.z)]
}

fn sub(a: &[Q; 3], b: &[Q; 3]) -> [Q; 3] {
    [&a[0] - &b[0], &a[1] - &b[1], &a[2] - &b[2]]
}

fn cross(a: &[Q; 3], b: &[Q; 3]) -> [Q; 3] {
    [
        &a[1] * &b[2] - &a[2] * &b[1],
        &a[2] * &b[0] - &a[0] * &b[2],
        &a[0] * &b[1] - &a[1] * &b[0],
    ]
}

fn dot(a: &[Q; 3], b: &[Q; 3]) -> Q {
    &a[0] * &b[0] + &a[1] * &b[1] + &a[2] * &b[2]
}

/// Exact sign of the volume of (a, b, c, d).
fn orient(a: &[Q; 3], b: &[Q; 3], c: &[Q; 3], d: &[Q; 3]) -> i32 {
    let v = dot(&cross(&sub(b, a), &sub(c, a)), &sub(d, a));
    sgn(&v)
}

fn sgn(v: &Q) -> i32 {
    if v.is_zero() {
        0
    } else if v.is_positive() {
        1
    } else {
        -1
    }
}

/// Exact: does point `p` lie on the closed segment [a, b] (a == b allowed)?
fn point_on_segment(p: &[Q; 3], a: &[Q; 3], b: &[Q; 3]) -> bool {
    let ab = sub(b, a);
    let ap = sub(p, a);
    if cross(&ab, &ap).iter().any(|c| !c.is_zero()) {
        return false;
    }
    let t = dot(&ap, &ab);
    let l = dot(&ab, &ab);
    if l.is_zero() {
        return ap.iter().all(|c| c.is_zero());
    }
    !t.is_negative() && t <= l
}

/// Exact: do closed segments [a, b] and [c, d] share a point? (Any dimension-3 configuration.)
fn segments_meet(a: &[Q; 3], b: &[Q; 3], c: &[Q; 3], d: &[Q; 3]) -> bool {
    if point_on_segment(a, c, d)
        || point_on_segment(b, c, d)
        || point_on_segment(c, a, b)
        || point_on_segment(d, a, b)
    {
        return true;
    }
    // Proper crossing: coplanar, not parallel, each segment's endpoints strictly on both sides
    // of the other's line (within the common plane).
    if orient(a, b, c, d) != 0 {
        return false;
    }
    let n = cross(&sub(b, a), &sub(d, c));
    if n.iter().all(|x| x.is_zero()) {
        return false; // parallel (collinear overlap handled by endpoint tests above)
    }
    let side =
        |p: &[Q; 3], q0: &[Q; 3], q1: &[Q; 3]| sgn(&dot(&cross(&sub(q1, q0), &sub(p, q0)), &n));
    side(c, a, b) * side(d, a, b) < 0 && side(a, c, d) * side(b, c, d) < 0
}

/// Exact: does point `p` lie in the closed triangle t (possibly degenerate)?
fn point_in_triangle(p: &[Q; 3], t: &[[Q; 3]; 3]) -> bool {
    let n = cross(&sub(&t[1], &t[0]), &sub(&t[2], &t[0]));
    if n.iter().all(|x| x.is_zero()) {
        return (0..3).any(|i| point_on_segment(p, &t[i], &t[(i + 1) % 3]));
    }
    if !dot(&n, &sub(p, &t[0])).is_zero() {
        return false;
    }
    let s: Vec<i32> = (0..3)
        .map(|i| {
            sgn(&dot(
                &cross(&sub(&t[(i + 1) % 3], &t[i]), &sub(p, &t[i])),
                &n,
            ))
        })
        .collect();
    s.iter().all(|&x| x >= 0)
}

/// Exact: does the closed segment [a, b] meet the closed triangle t?
fn segment_meets_triangle(a: &[Q; 3], b: &[Q; 3], t: &[[Q; 3]; 3]) -> bool {
    if point_in_triangle(a, t) || point_in_triangle(b, t) {
        return true;
    }
    if (0..3).any(|i| segments_meet(a, b, &t[i], &t[(i + 1) % 3])) {
        return true;
    }
    // Proper crossing through the interior.
    let sa = orient(&t[0], &t[1], &t[2], a);
    let sb = orient(&t[0], &t[1], &t[2], b);
    if sa * sb >= 0 {
        return false;
    }
    let u = [
        orient(a, b, &t[0], &t[1]),
        orient(a, b, &t[1], &t[2]),
        orient(a, b, &t[2], &t[0]),
    ];
    u.iter().all(|&x| x >= 0) || u.iter().all(|&x| x <= 0)
}

/// Exact rational oracle: do the closed triangles intersect?
fn triangles_meet(a: &[DVec3; 3], b: &[DVec3; 3]) -> bool {
    let ta = a.map(qv);
    let tb = b.map(qv);
    (0..3).any(|i| segment_meets_triangle(&ta[i], &ta[(i + 1) % 3], &tb))
        || (0..3).any(|i| segment_meets_triangle(&tb[i], &tb[(i + 1) % 3], &ta))
}

/// Independent point–triangle distance: minimise over a barycentric grid, then over edges
/// parametrically (different code path from the library).
fn on_triangle_residual(p: DVec3, t: &[DVec3; 3]) -> f64 {
    // Least squares of p - t0 = u e0 + v e1 with u, v >= 0, u + v <= 1, via edges when outside.
    let e0 = t[1] - t[0];
    let e1 = t[2] - t[0];
    let (a, b, c) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
    let w = p - t[0];
    let (d, e) = (w.dot(e0), w.dot(e1));
    let det = a * c - b * b;
    let mut best = f64::INFINITY;
    if det > 1e-18 * (a * c).max(1e-300) {
        let u = (c * d - b * e) / det;
        let v = (a * e - b * d) / det;
        if u >= -1e-12 && v >= -1e-12 && u + v <= 1.0 + 1e-12 {
            best = (t[0] + e0 * u + e1 * v - p).length();
        }
    }
    for i in 0..3 {
        let (s0, s1) = (t[i], t[(i + 1) % 3]);
        let dd = s1 - s0;
        let l = dd.length_squared();
        let x = if l > 0.0 {
            ((p - s0).dot(dd) / l).clamp(0.0, 1.0)
        } else {
            0.0
        };
        best = best.min((s0 + dd * x - p).length());
    }
    best
}

fn grid(t: &[DVec3; 3], n: usize) -> Vec<DVec3> {
    let mut out = Vec::new();
    for i in 0..=n {
        for j in 0..=(n - i) {
            let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
            out.push(t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v);
        }
    }
    out
}

fn check(a: &[DVec3; 3], b: &[DVec3; 3]) -> Result<(), TestCaseError> {
    let r = triangle_distance(a, b);
    let scale = a
        .iter()
        .chain(b)
        .map(|p| p.abs().max_element())
        .fold(1e-300, f64::max);
    let tol = 1e-9 * scale;
    prop_assert!(r.distance.is_finite() && r.distance >= 0.0);
    prop_assert!(
        on_triangle_residual(r.point_a, a) <= tol,
        "point_a off a: {r:?}"
    );
    prop_assert!(
        on_triangle_residual(r.point_b, b) <= tol,
        "point_b off b: {r:?}"
    );
    prop_assert!((r.point_a.distance(r.point_b) - r.distance).abs() <= 1e-12 * scale);
    // Never above any sampled pair.
    let (ga, gb) = (grid(a, 6), grid(b, 6));
    let sample_min = ga
        .iter()
        .flat_map(|p| gb.iter().map(move |q| p.distance(*q)))
        .fold(f64::INFINITY, f64::min);
    prop_assert!(r.distance <= sample_min + tol);
    let meet = triangles_meet(a, b);
    if meet {
        prop_assert!(
            r.distance <= tol,
            "intersecting but distance {}",
            r.distance
        );
    } else {
        prop_assert!(
            r.distance > 0.0,
            "disjoint triangles at distance 0: {a:?} {b:?}"
        );
        // Separation certificate: d = pb - pa separates, so the distance is at least |d|.
        let d = r.point_b - r.point_a;
        let dn = d / r.distance;
        for x in a {
            prop_assert!(dn.dot(*x - r.point_a) <= tol, "not optimal (a) {r:?}");
        }
        for y in b {
            prop_assert!(dn.dot(*y - r.point_b) >= -tol, "not optimal (b) {r:?}");
        }
    }
    Ok(())
}

fn vec_f() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-2.0f64..2.0).prop_map(DVec3::from_array)
}

fn vec_i() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-2i32..=2).prop_map(|a| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64))
}

fn tri_f() -> impl Strategy<Value = [DVec3; 3]> {
    prop::array::uniform3(vec_f())
}

fn tri_i() -> impl Strategy<Value = [DVec3; 3]> {
    prop::array::uniform3(vec_i())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn general_position(a in tri_f(), b in tri_f()) {
        check(&a, &b)?;
        check(&b, &a)?;
    }

    /// Small integer coordinates: many coplanar, touching, collinear and zero-area cases.
    #[test]
    fn integer_grid_degenerate(a in tri_i(), b in tri_i()) {
        check(&a, &b)?;
    }

    /// Near-parallel configurations: b is a slightly tilted, offset copy of a.
    #[test]
    fn near_parallel(a in tri_f(), off in vec_f(), tilt in -1e-7f64..1e-7) {
        let b = [a[0] + off * 0.1, a[1] + off * 0.1 + DVec3::splat(tilt), a[2] + off * 0.1];
        check(&a, &b)?;
    }

    #[test]
    fn point_triangle_matches_oracle(p in vec_f(), t in prop_oneof![tri_f(), tri_i()]) {
        let (d, c) = point_triangle_distance(p, &t);
        prop_assert!((p.distance(c) - d).abs() <= 1e-12);
        prop_assert!(on_triangle_residual(c, &t) <= 1e-9);
        prop_assert!(d <= on_triangle_residual(p, &t) + 1e-9);
        for g in grid(&t, 10) {
            prop_assert!(d <= p.distance(g) + 1e-12);
        }
    }

    #[test]
    fn segment_segment_never_above_samples(p0 in vec_f(), p1 in vec_f(), q0 in vec_i(), q1 in vec_f()) {
        let (s, t, a, b) = segment_segment_closest(p0, p1, q0, q1);
        prop_assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t));
        let d = a.distance(b);
        for i in 0..=32 {
            for j in 0..=32 {
                let x = p0.lerp(p1, i as f64 / 32.0);
                let y = q0.lerp(q1, j as f64 / 32.0);
                prop_assert!(d <= x.distance(y) + 1e-12);
            }
        }
    }
}

#[test]
fn crossing_triangles_are_at_zero() {
    let a = [
        DVec3::new(-1.0, -1.0, 0.0),
        DVec3::new(1.0, -1.0, 0.0),
        DVec3::new(0.0, 1.0, 0.0),
    ];
    let b = [
        DVec3::new(0.0, 0.0, -1.0),
        DVec3::new(0.1, 0.0, 1.0),
        DVec3::new(-0.1, 0.2, 1.0),
    ];
    let r = triangle_distance(&a, &b);
    assert_eq!(r.distance, 0.0);
    assert!(triangles_meet(&a, &b));
}

#[test]
fn identical_and_point_triangles() {
    let a = [DVec3::ZERO, DVec3::X, DVec3::Y];
    assert!(triangle_distance(&a, &a).distance <= 1e-15);
    let p = [DVec3::splat(3.0); 3];
    let r = triangle_distance(&a, &p);
    // Closest point of the triangle to (3, 3, 3) is (0.5, 0.5, 0) on the hypotenuse.
    assert!((r.distance - 21.5f64.sqrt()).abs() < 1e-12);
    assert!(r.point_a.distance(DVec3::new(0.5, 0.5, 0.0)) < 1e-12);
    let pp = triangle_distance(&p, &p);
    assert_eq!(pp.distance, 0.0);
}
