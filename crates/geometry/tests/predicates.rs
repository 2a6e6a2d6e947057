//! `orient2d` / `orient3d` signs against determinants evaluated in exact rationals, on generic,
//! grid (exactly degenerate) and rotated near-degenerate inputs.

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use gprox_geometry::glam::{DVec2, DVec3};
use gprox_geometry::predicates::{collinear3, orient2d, orient3d, sign};
use gprox_geometry::transform::transform_triangle;
use num_rational::BigRational;
use num_traits::Signed;
use proptest::prelude::*;

fn rsign(x: &BigRational) -> i32 {
    if x.is_positive() {
        1
    } else if x.is_negative() {
        -1
    } else {
        0
    }
}

/// Sign of `det[a - d; b - d; c - d]` in rationals.
fn orient3d_exact(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> i32 {
    let q = |v: DVec3| [v.x, v.y, v.z].map(oracle::rational);
    let (a, b, c, d) = (q(a), q(b), q(c), q(d));
    let r = |p: &[BigRational; 3]| [0, 1, 2].map(|k| &p[k] - &d[k]);
    let (x, y, z) = (r(&a), r(&b), r(&c));
    let det = &x[0] * (&y[1] * &z[2] - &y[2] * &z[1]) - &x[1] * (&y[0] * &z[2] - &y[2] * &z[0])
        + &x[2] * (&y[0] * &z[1] - &y[1] * &z[0]);
    rsign(&det)
}

/// Sign of `det[a - c; b - c]` in rationals.
fn orient2d_exact(a: DVec2, b: DVec2, c: DVec2) -> i32 {
    let q = |v: DVec2| [v.x, v.y].map(oracle::rational);
    let (a, b, c) = (q(a), q(b), q(c));
    let det = (&a[0] - &c[0]) * (&b[1] - &c[1]) - (&a[1] - &c[1]) * (&b[0] - &c[0]);
    rsign(&det)
}

/// Four points: a triangle and a related point, rotated so that exact coplanarity becomes
/// "within a few ulps" (or stays exact under grid poses).
fn quadruple() -> impl Strategy<Value = [DVec3; 4]> {
    (
        gen::touching_pair(3),
        0usize..3,
        prop_oneof![gen::random_pose(1.0), gen::grid_pose(1)],
    )
        .prop_map(|((p, q), i, pose)| {
            let pose = gen::pose64(&pose);
            let t = |tri: [DVec3; 3]| transform_triangle(&pose, tri.map(|c| c.as_vec3()));
            let (p, q) = (t(p), t(q));
            [p[0], p[1], p[2], q[i]]
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn orient3d_sign_is_exact(
        [a, b, c, d] in prop_oneof![
            quadruple(),
            [gen::grid_point(2), gen::grid_point(2), gen::grid_point(2), gen::grid_point(2)],
            gen::float_triangle().prop_flat_map(|t| gen::float_triangle().prop_map(move |u| [t[0], t[1], t[2], u[0]])),
        ]
    ) {
        prop_assert_eq!(sign(orient3d(a, b, c, d)), orient3d_exact(a, b, c, d));
        // Sign flips under an odd permutation.
        prop_assert_eq!(sign(orient3d(b, a, c, d)), -orient3d_exact(a, b, c, d));
    }

    #[test]
    fn orient2d_sign_is_exact([a, b, c, _] in quadruple()) {
        // Project the rotated 3-D points: collinear-within-ulps configurations in 2-D.
        let (a2, b2, c2) = (a.truncate(), b.truncate(), c.truncate());
        prop_assert_eq!(sign(orient2d(a2, b2, c2)), orient2d_exact(a2, b2, c2));
        let m = (a + b) * 0.5; // often exactly on segment ab, sometimes off by rounding
        prop_assert_eq!(sign(orient2d(a2, b2, m.truncate())), orient2d_exact(a2, b2, m.truncate()));
        let exact_collinear = [0usize, 1, 2].iter().all(|&k| {
            let drop = |v: DVec3| gprox_geometry::predicates::project(v, k);
            orient2d_exact(drop(a), drop(b), drop(m)) == 0
        });
        prop_assert_eq!(collinear3(a, b, m), exact_collinear);
    }
}
