//! GJK against brute force over features: the distance between two convex hulls of points is the
//! minimum over all (triangle of A's points, triangle of B's points) distances, unless one hull
//! contains part of the other (then both are at distance 0).

use glam::DVec3;
use gprox_geometry::tri_distance::triangle_distance;
use gprox_query::gjk::{gjk_distance, gjk_intersect, ConvexPoints, Cuboid, GjkResult, Sphere};
use proptest::prelude::*;

/// All triangles spanned by triples of points (repeats allowed for fewer than 3 points).
fn triangles(p: &[DVec3]) -> Vec<[DVec3; 3]> {
    let n = p.len();
    let mut out = Vec::new();
    for i in 0..n {
        for j in i..n {
            for k in j..n {
                out.push([p[i], p[j], p[k]]);
            }
        }
    }
    out
}

/// Whether `x` lies in the hull of `p` (closed, with tolerance): inside some tetrahedron of
/// four of the points (Carathéodory), or on some triangle.
fn in_hull(x: DVec3, p: &[DVec3], tol: f64) -> bool {
    if triangles(p)
        .iter()
        .any(|t| triangle_distance(t, &[x; 3]).distance <= tol)
    {
        return true;
    }
    let n = p.len();
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                for l in k + 1..n {
                    let m = glam::DMat3::from_cols(p[j] - p[i], p[k] - p[i], p[l] - p[i]);
                    if m.determinant().abs() < 1e-12 {
                        continue;
                    }
                    let b = m.inverse() * (x - p[i]);
                    if b.min_element() >= -1e-9 && b.element_sum() <= 1.0 + 1e-9 {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The 12 surface triangles of a box from its corners (bit k of the index = + side of axis k).
fn box_triangles(c: &[DVec3; 8]) -> Vec<[DVec3; 3]> {
    let mut out = Vec::new();
    for k in 0..3 {
        let (u, v) = (1 << ((k + 1) % 3), 1 << ((k + 2) % 3));
        for side in [0, 1 << k] {
            let q = [side, side | u, side | u | v, side | v];
            out.push([c[q[0]], c[q[1]], c[q[2]]]);
            out.push([c[q[0]], c[q[2]], c[q[3]]]);
        }
    }
    out
}

fn brute_distance(a: &[DVec3], b: &[DVec3]) -> f64 {
    let (ta, tb) = (triangles(a), triangles(b));
    let mut best = f64::INFINITY;
    for x in &ta {
        for y in &tb {
            best = best.min(triangle_distance(x, y).distance);
        }
    }
    best
}

fn witness_point(w: &[(u32, f64)], p: &[DVec3]) -> Result<DVec3, TestCaseError> {
    prop_assert!(!w.is_empty() && w.len() <= 4);
    let sum: f64 = w.iter().map(|e| e.1).sum();
    prop_assert!((sum - 1.0).abs() < 1e-9, "weights sum {sum}");
    let mut x = DVec3::ZERO;
    for &(id, l) in w {
        prop_assert!(l >= -1e-12 && (id as usize) < p.len());
        x += p[id as usize] * l;
    }
    Ok(x)
}

fn check_pair(a: &[DVec3], b: &[DVec3]) -> Result<GjkResult, TestCaseError> {
    let r = gjk_distance(&ConvexPoints(a), &ConvexPoints(b), 1e-12);
    let scale = a.iter().chain(b).map(|p| p.length()).fold(1.0, f64::max);
    let tol = 1e-9 * scale;
    prop_assert!(r.distance.is_finite() && r.distance >= 0.0);
    // Witnesses reproduce the closest points.
    prop_assert!(witness_point(&r.witness_a, a)?.distance(r.point_a) <= tol);
    prop_assert!(witness_point(&r.witness_b, b)?.distance(r.point_b) <= tol);
    let brute = brute_distance(a, b);
    if r.intersecting {
        let contained =
            a.iter().any(|&x| in_hull(x, b, tol)) || b.iter().any(|&y| in_hull(y, a, tol));
        prop_assert!(brute <= tol || contained, "GJK says contact, brute {brute}");
    } else {
        prop_assert!(
            (r.distance - brute).abs() <= 1e-7 * brute.max(1e-3),
            "gjk {} vs brute {brute}",
            r.distance
        );
        prop_assert!((r.point_a.distance(r.point_b) - r.distance).abs() <= tol);
    }
    prop_assert_eq!(
        gjk_intersect(&ConvexPoints(a), &ConvexPoints(b)),
        r.intersecting || r.distance <= 1e-12 * scale
    );
    Ok(r)
}

fn pt() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-1.0f64..1.0).prop_map(DVec3::from_array)
}

fn cloud() -> impl Strategy<Value = Vec<DVec3>> {
    prop::collection::vec(pt(), 1..=5)
}

fn grid_pt() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-1i32..=1).prop_map(|a| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_hulls_match_brute_force(a in cloud(), b in cloud(), off in pt()) {
        let b: Vec<DVec3> = b.iter().map(|&p| p + off * 2.5).collect();
        check_pair(&a, &b)?;
    }

    /// Flat tetrahedra (coplanar points), repeated points, and integer grid coordinates with
    /// touching and coplanar contacts.
    #[test]
    fn degenerate_tetrahedra(a in prop::collection::vec(grid_pt(), 1..=4), b in prop::collection::vec(grid_pt(), 1..=4), shift in grid_pt(), flat in any::<bool>()) {
        let squash = |p: DVec3| if flat { DVec3::new(p.x, p.y, 0.0) } else { p };
        let a: Vec<DVec3> = a.into_iter().map(squash).collect();
        let b: Vec<DVec3> = b.into_iter().map(|p| squash(p) + shift * 2.0).collect();
        check_pair(&a, &b)?;
    }

    #[test]
    fn tetrahedron_barycentrics(a in prop::array::uniform4(pt()), q in pt()) {
        let far = [q * 3.0 + DVec3::new(3.0, 0.0, 0.0)];
        let r = check_pair(&a, &far)?;
        prop_assert_eq!(r.witness_b.len(), 1);
        prop_assert!(r.witness_b[0].0 == 0 && (r.witness_b[0].1 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn spheres_are_analytic(c in pt(), r1 in 0.0f64..0.5, r2 in 0.0f64..0.5, d in pt()) {
        let a = Sphere { center: c, radius: r1 };
        let b = Sphere { center: c + d * 2.0, radius: r2 };
        let exact = (d.length() * 2.0 - r1 - r2).max(0.0);
        let r = gjk_distance(&a, &b, 1e-12);
        prop_assert!((r.distance - exact).abs() <= 1e-6, "{} vs {exact}", r.distance);
    }

    #[test]
    fn boxes_match_their_corner_hulls(c in pt(), h in prop::array::uniform3(0.0f64..0.6), q in prop::array::uniform4(-1.0f64..1.0), d in pt()) {
        let rot = glam::DQuat::from_xyzw(q[0], q[1], q[2], q[3] + 1.5).normalize();
        let a = Cuboid { center: c, axes: glam::DMat3::from_quat(rot), half_extents: DVec3::from_array(h) };
        let b = Cuboid::from_min_max(c + d * 1.5, c + d * 1.5 + DVec3::splat(0.4));
        let r = gjk_distance(&a, &b, 1e-12);
        let (ca, cb) = (a.corners(), b.corners());
        let (fa, fb) = (box_triangles(&ca), box_triangles(&cb));
        let brute = fa
            .iter()
            .flat_map(|x| fb.iter().map(move |y| triangle_distance(x, y).distance))
            .fold(f64::INFINITY, f64::min);
        if !r.intersecting {
            prop_assert!((r.distance - brute).abs() <= 1e-7 * brute.max(1e-3));
        }
        prop_assert!(witness_point(&r.witness_a, &ca)?.distance(r.point_a) <= 1e-9);
    }
}

#[test]
fn touching_at_a_vertex_and_identical() {
    let t = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
    let u: Vec<DVec3> = t.iter().map(|&p| DVec3::ONE - p).collect();
    let r = gjk_distance(&ConvexPoints(&t), &ConvexPoints(&u), 1e-12);
    assert!(r.distance.is_finite());
    let same = gjk_distance(&ConvexPoints(&t), &ConvexPoints(&t), 1e-12);
    assert!(same.intersecting && same.distance == 0.0);
    let touch = [
        DVec3::X,
        DVec3::new(2.0, 0.0, 0.0),
        DVec3::new(1.0, 1.0, 0.0),
    ];
    let r = gjk_distance(&ConvexPoints(&t), &ConvexPoints(&touch), 1e-12);
    assert!(r.distance <= 1e-15, "{r:?}");
    assert!(gjk_intersect(&ConvexPoints(&t), &ConvexPoints(&touch)));
}
