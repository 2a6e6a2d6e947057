//! `triangles_intersect` against the exact rational oracle (`tests/common/oracle.rs`), on
//! random, grid-snapped, deliberately touching and ulp-nudged triangles, plus hand-made cases.

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use gprox_geometry::glam::DVec3;
use gprox_geometry::tri_tri::triangles_intersect;
use proptest::prelude::*;

fn v(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// Checks one pair against the oracle in every argument order and corner rotation/reflection
/// (the answer must not depend on them).
fn check(p: [DVec3; 3], q: [DVec3; 3]) -> Result<(), TestCaseError> {
    let expected = oracle::triangles_intersect_exact(&p, &q);
    let variants_p = [p, [p[1], p[2], p[0]], [p[0], p[2], p[1]]];
    let variants_q = [q, [q[2], q[0], q[1]], [q[1], q[0], q[2]]];
    for a in &variants_p {
        for b in &variants_q {
            prop_assert_eq!(
                triangles_intersect(a, b),
                expected,
                "p = {:?}, q = {:?}",
                a,
                b
            );
            prop_assert_eq!(
                triangles_intersect(b, a),
                expected,
                "p = {:?}, q = {:?}",
                b,
                a
            );
        }
    }
    Ok(())
}

fn assert_case(p: [DVec3; 3], q: [DVec3; 3], expected: bool) {
    assert_eq!(
        oracle::triangles_intersect_exact(&p, &q),
        expected,
        "oracle disagrees with the case"
    );
    check(p, q).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn matches_oracle_on_float_triangles((p, q) in (gen::float_triangle(), gen::float_triangle())) {
        check(p, q)?;
    }

    #[test]
    fn matches_oracle_on_tiny_grid((p, q) in (gen::grid_triangle(1), gen::grid_triangle(1))) {
        check(p, q)?;
    }

    #[test]
    fn matches_oracle_on_small_grid((p, q) in (gen::grid_triangle(3), gen::grid_triangle(3))) {
        check(p, q)?;
    }

    #[test]
    fn matches_oracle_on_touching_pairs((p, q) in gen::touching_pair(4)) {
        check(p, q)?;
    }

    #[test]
    fn matches_oracle_on_ulp_nudged_pairs((p, q) in gen::nudged_pair(4)) {
        check(p, q)?;
    }

    #[test]
    fn matches_oracle_under_random_pose(
        (p, q) in gen::touching_pair(3),
        pose in gen::random_pose(1.0),
    ) {
        // Rotated touching configurations: rounding decides, the oracle sees the same f64s.
        let pose = gen::pose64(&pose);
        let t = |tri: [DVec3; 3]| gprox_geometry::transform::transform_triangle(
            &pose, tri.map(|c| c.as_vec3()));
        check(t(p), t(q))?;
    }
}

/// Exact sign of `det[a - d; b - d; c - d]` (Shewchuk's `orient3d`) in rationals.
fn orient3d_rational(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> i32 {
    use num_traits::Signed;
    let q = |v: DVec3| [v.x, v.y, v.z].map(oracle::rational);
    let (a, b, c, d) = (q(a), q(b), q(c), q(d));
    let r = |p: &[num_rational::BigRational; 3]| [0, 1, 2].map(|k| &p[k] - &d[k]);
    let (x, y, z) = (r(&a), r(&b), r(&c));
    let det = &x[0] * (&y[1] * &z[2] - &y[2] * &z[1]) - &x[1] * (&y[0] * &z[2] - &y[2] * &z[0])
        + &x[2] * (&y[0] * &z[1] - &y[1] * &z[0]);
    if det.is_positive() {
        1
    } else if det.is_negative() {
        -1
    } else {
        0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The filtered plane-side signs equal the exact rational determinant signs, also where
    /// rounding after a rotation leaves points within a few ulps of the plane.
    #[test]
    fn plane_sides_are_exact(
        (p, q) in prop_oneof![gen::touching_pair(3), gen::nudged_pair(3), gen::float_triangle().prop_flat_map(|p| (Just(p), gen::float_triangle()))],
        pose in gen::random_pose(1.0),
    ) {
        let pose = gen::pose64(&pose);
        let t = |tri: [DVec3; 3]| gprox_geometry::transform::transform_triangle(
            &pose, tri.map(|c| c.as_vec3()));
        let (p, q) = (t(p), t(q));
        let s = gprox_geometry::tri_tri::plane_sides(&p, &q);
        for i in 0..3 {
            prop_assert_eq!(s[i], orient3d_rational(p[0], p[1], p[2], q[i]));
        }
    }
}

#[test]
fn vertex_on_face() {
    let p = [v(0.0, 0.0, 0.0), v(4.0, 0.0, 0.0), v(0.0, 4.0, 0.0)];
    let q = [v(1.0, 1.0, 0.0), v(1.0, 1.0, 3.0), v(2.0, 3.0, 5.0)];
    assert_case(p, q, true);
    // The same, lifted by 1 ulp of the touching coordinate.
    let q_up = q.map(|c| v(c.x, c.y, gen::ulp_step(c.z, 1)));
    assert_case(p, q_up, false);
}

#[test]
fn edge_on_edge_crossing() {
    let p = [v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0), v(0.0, 2.0, 0.0)];
    // Q stands in the plane x = 1; its bottom edge runs across P from edge to edge.
    let q = [v(1.0, -1.0, 0.0), v(1.0, 1.0, 0.0), v(1.0, 0.0, 2.0)];
    assert_case(p, q, true);
    let q2 = [v(1.0, -1.0, 0.0), v(1.0, 0.0, 0.0), v(1.0, -1.0, 2.0)];
    assert_case(p, q2, true); // Q's corner touches P's edge
    let q3 = q2.map(|c| v(c.x, gen::ulp_step(c.y, -1), c.z));
    assert_case(p, q3, false);
}

#[test]
fn shared_edge_and_shared_vertex() {
    let p = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
    assert_case(
        p,
        [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, -1.0, 0.5)],
        true,
    );
    assert_case(
        p,
        [v(1.0, 0.0, 0.0), v(2.0, 0.0, 1.0), v(2.0, 1.0, -1.0)],
        true,
    );
}

#[test]
fn coplanar_overlap_and_containment() {
    let p = [v(0.0, 0.0, 1.0), v(4.0, 0.0, 1.0), v(0.0, 4.0, 1.0)];
    assert_case(
        p,
        [v(1.0, 1.0, 1.0), v(5.0, 1.0, 1.0), v(1.0, -3.0, 1.0)],
        true,
    );
    assert_case(
        p,
        [v(1.0, 1.0, 1.0), v(2.0, 1.0, 1.0), v(1.0, 2.0, 1.0)],
        true,
    ); // inside
    assert_case(
        [v(1.0, 1.0, 1.0), v(2.0, 1.0, 1.0), v(1.0, 2.0, 1.0)],
        p,
        true,
    );
    assert_case(
        p,
        [v(2.0, 2.0, 1.0), v(4.0, 4.0, 1.0), v(2.0, 5.0, 1.0)],
        true,
    ); // touch at a point
    assert_case(
        p,
        [v(3.0, 3.0, 1.0), v(4.0, 4.0, 1.0), v(2.0, 5.0, 1.0)],
        false,
    );
    // Coplanar but tilted plane (x + y + z = 3).
    let t = [v(3.0, 0.0, 0.0), v(0.0, 3.0, 0.0), v(0.0, 0.0, 3.0)];
    assert_case(
        t,
        [v(1.0, 1.0, 1.0), v(2.0, 1.0, 0.0), v(4.0, -1.0, 0.0)],
        true,
    );
    assert_case(
        t,
        [v(4.0, -1.0, 0.0), v(5.0, -1.0, -1.0), v(4.0, 0.0, -1.0)],
        false,
    );
}

#[test]
fn degenerate_triangles() {
    let p = [v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0), v(0.0, 2.0, 0.0)];
    // Segment piercing the face.
    assert_case(
        p,
        [v(0.5, 0.5, -1.0), v(0.5, 0.5, 1.0), v(0.5, 0.5, 0.0)],
        true,
    );
    // Segment ending 1 ulp above the face.
    let up = gen::ulp_step(0.0, 1);
    assert_case(
        p,
        [v(0.5, 0.5, up), v(0.5, 0.5, 1.0), v(0.5, 0.5, 0.5)],
        false,
    );
    // Segment lying in the plane, crossing an edge / outside.
    assert_case(
        p,
        [v(-1.0, 1.0, 0.0), v(1.0, 1.0, 0.0), v(0.0, 1.0, 0.0)],
        true,
    );
    assert_case(
        p,
        [v(2.0, 2.0, 0.0), v(3.0, 1.0, 0.0), v(3.0, 1.0, 0.0)],
        false,
    );
    // Point on the face, point off it, point on an edge.
    assert_case(p, [v(0.5, 0.5, 0.0); 3], true);
    assert_case(p, [v(0.5, 0.5, up); 3], false);
    assert_case(p, [v(1.0, 1.0, 0.0); 3], true);
    assert_case(p, [v(1.0, gen::ulp_step(1.0, 1), 0.0); 3], false);
    // Segment against segment: crossing, skew, collinear overlapping, collinear apart.
    let s = [v(0.0, 0.0, 0.0), v(2.0, 2.0, 2.0), v(1.0, 1.0, 1.0)];
    assert_case(
        s,
        [v(0.0, 2.0, 0.0), v(2.0, 0.0, 2.0), v(2.0, 0.0, 2.0)],
        true,
    );
    assert_case(
        s,
        [v(0.0, 2.0, 0.0), v(2.0, 0.0, up), v(2.0, 0.0, up)],
        false,
    );
    assert_case(
        s,
        [v(1.5, 1.5, 1.5), v(3.0, 3.0, 3.0), v(4.0, 4.0, 4.0)],
        true,
    );
    assert_case(
        s,
        [v(2.5, 2.5, 2.5), v(3.0, 3.0, 3.0), v(4.0, 4.0, 4.0)],
        false,
    );
    // Point against segment and point against point.
    assert_case(s, [v(0.5, 0.5, 0.5); 3], true);
    assert_case(s, [v(0.5, 0.5, gen::ulp_step(0.5, 1)); 3], false);
    assert_case([v(1.0, 2.0, 3.0); 3], [v(1.0, 2.0, 3.0); 3], true);
    assert_case(
        [v(1.0, 2.0, 3.0); 3],
        [v(1.0, 2.0, gen::ulp_step(3.0, -1)); 3],
        false,
    );
}

#[test]
fn near_miss_by_one_ulp() {
    // Two crossing triangles pulled apart until they just touch, then by one more ulp.
    let p = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
    let q = [v(0.25, 0.25, 0.0), v(0.25, -1.0, 1.0), v(-1.0, 0.25, 1.0)];
    assert_case(p, q, true);
    let dx = gen::ulp_step(0.25, -1);
    assert_case(
        p,
        [v(dx, 0.25, 0.0), v(0.25, -1.0, 1.0), v(-1.0, 0.25, 1.0)],
        true,
    );
    let lifted = q.map(|c| v(c.x, c.y, gen::ulp_step(c.z, 1)));
    assert_case(p, lifted, false);
    // Generic crossing pair and a far pair.
    assert_case(
        p,
        [v(0.2, 0.2, -1.0), v(0.3, 0.2, 1.0), v(0.2, 0.3, 1.0)],
        true,
    );
    assert_case(
        p,
        [v(5.0, 5.0, 5.0), v(6.0, 5.0, 5.0), v(5.0, 6.0, 5.0)],
        false,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The oracle's pair sets agree with `triangles_intersect` over whole meshes under poses, and
    /// self pairs skip exactly the faces sharing a vertex.
    #[test]
    fn brute_force_pairs_agree((a, pa, b, pb) in gen::mesh_pair_case()) {
        use gprox_geometry::transform::transform_triangle;
        let (pa, pb) = (gen::pose64(&pa), gen::pose64(&pb));
        let expected: Vec<[u32; 2]> = (0..a.face_count())
            .flat_map(|i| (0..b.face_count()).map(move |j| (i, j)))
            .filter(|&(i, j)| triangles_intersect(
                &transform_triangle(&pa, a.triangle(i)),
                &transform_triangle(&pb, b.triangle(j))))
            .map(|(i, j)| [i as u32, j as u32])
            .collect();
        prop_assert_eq!(oracle::brute_force_pairs(&a, &pa, &b, &pb), expected);

        let faces = a.faces();
        let expected_self: Vec<[u32; 2]> = (0..a.face_count())
            .flat_map(|i| (i + 1..a.face_count()).map(move |j| (i, j)))
            .filter(|&(i, j)| !faces[i].iter().any(|v| faces[j].contains(v)))
            .filter(|&(i, j)| triangles_intersect(
                &a.triangle(i).map(|p| p.as_dvec3()),
                &a.triangle(j).map(|p| p.as_dvec3())))
            .map(|(i, j)| [i as u32, j as u32])
            .collect();
        prop_assert_eq!(oracle::brute_force_self_pairs(&a), expected_self);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The oracle's shortcuts never change its answer: the plain LP agrees.
    #[test]
    fn oracle_shortcuts_agree_with_plain_lp(
        (p, q) in prop_oneof![
            gen::touching_pair(3),
            (gen::grid_triangle(1), gen::grid_triangle(1)),
            (gen::float_triangle(), gen::float_triangle()),
        ],
        k in 1usize..=3,
    ) {
        // Also point and segment sets (first k corners of q).
        prop_assert_eq!(
            oracle::hulls_intersect_exact(&p, &q[..k]),
            oracle::hulls_intersect_lp_only(&p, &q[..k])
        );
    }
}
