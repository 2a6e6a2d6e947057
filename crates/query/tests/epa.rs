//! EPA against brute force: for polytopes the penetration depth is the smallest support value of
//! the Minkowski difference `A − B` over its facet normals, and every facet normal is a normal of
//! a point triple of A, of B, or a cross product of an A edge with a B edge.

use glam::{DMat3, DQuat, DVec3};
use gprox_query::epa::penetration;
use gprox_query::gjk::{gjk_distance, ConvexPoints, Cuboid};
use proptest::prelude::*;

/// Support value of `A − B` along `n`.
fn h(a: &[DVec3], b: &[DVec3], n: DVec3) -> f64 {
    let ma = a.iter().map(|p| p.dot(n)).fold(f64::NEG_INFINITY, f64::max);
    let mb = b.iter().map(|p| p.dot(n)).fold(f64::INFINITY, f64::min);
    ma - mb
}

fn brute_depth(a: &[DVec3], b: &[DVec3]) -> f64 {
    let mut axes = Vec::new();
    for p in [a, b] {
        for i in 0..p.len() {
            for j in i + 1..p.len() {
                for k in j + 1..p.len() {
                    axes.push((p[j] - p[i]).cross(p[k] - p[i]));
                }
            }
        }
    }
    let edges = |p: &[DVec3]| {
        let mut e = Vec::new();
        for i in 0..p.len() {
            for j in i + 1..p.len() {
                e.push(p[j] - p[i]);
            }
        }
        e
    };
    let (ea, eb) = (edges(a), edges(b));
    for x in &ea {
        for y in &eb {
            axes.push(x.cross(*y));
        }
    }
    axes.into_iter()
        .filter(|n| n.length() > 1e-9)
        .flat_map(|n| {
            let n = n.normalize();
            [n, -n]
        })
        .map(|n| h(a, b, n))
        .fold(f64::INFINITY, f64::min)
}

fn check(a: &[DVec3], b: &[DVec3]) -> Result<(), TestCaseError> {
    let brute = brute_depth(a, b);
    let p = penetration(&ConvexPoints(a), &ConvexPoints(b), 1e-10);
    let g = gjk_distance(&ConvexPoints(a), &ConvexPoints(b), 1e-12);
    match p {
        None => {
            prop_assert!(!g.intersecting);
            prop_assert!(brute <= 1e-9, "no penetration but brute depth {brute}");
        }
        Some(p) => {
            prop_assert!(p.depth.is_finite() && p.normal.is_finite());
            prop_assert!((p.normal.length() - 1.0).abs() < 1e-9);
            prop_assert!(
                (p.depth - brute).abs() <= 1e-6 * brute.max(1e-3),
                "epa {} vs brute {brute}",
                p.depth
            );
            // The direction is optimal: A − B reaches exactly `depth` along it.
            prop_assert!((h(a, b, p.normal) - p.depth).abs() <= 1e-6 * brute.max(1e-3));
            prop_assert!(
                (p.point_a - p.point_b - p.normal * p.depth).length() <= 1e-6,
                "{p:?} {:?}",
                p.point_a - p.point_b
            );
        }
    }
    Ok(())
}

fn pt() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-1.0f64..1.0).prop_map(DVec3::from_array)
}

fn cuboid() -> impl Strategy<Value = Cuboid> {
    (
        pt(),
        prop::array::uniform3(0.05f64..0.8),
        prop::array::uniform4(-1.0f64..1.0),
    )
        .prop_map(|(c, h, q)| {
            let rot = DQuat::from_xyzw(q[0], q[1], q[2], q[3] + 1.5).normalize();
            Cuboid {
                center: c * 0.5,
                axes: DMat3::from_quat(rot),
                half_extents: DVec3::from_array(h),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tetrahedra(a in prop::array::uniform4(pt()), b in prop::array::uniform4(pt()), off in pt()) {
        let b: Vec<DVec3> = b.iter().map(|&p| p * 0.8 + off * 0.4).collect();
        check(&a, &b)?;
    }

    #[test]
    fn boxes(a in cuboid(), b in cuboid()) {
        let (ca, cb) = (a.corners(), b.corners());
        check(&ca, &cb)?;
        // The Cuboid support map gives the same depth as its corner hull.
        if let (Some(x), Some(y)) = (penetration(&a, &b, 1e-10), penetration(&ConvexPoints(&ca), &ConvexPoints(&cb), 1e-10)) {
            prop_assert!((x.depth - y.depth).abs() <= 1e-6 * y.depth.max(1e-3));
        }
    }
}

#[test]
fn coincident_and_flat() {
    let t = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
    let p = penetration(&ConvexPoints(&t), &ConvexPoints(&t), 1e-10).expect("identical");
    assert!((p.depth - brute_depth(&t, &t)).abs() < 1e-9);
    let flat = [DVec3::ZERO, DVec3::X, DVec3::Y];
    let q = penetration(&ConvexPoints(&flat), &ConvexPoints(&flat), 1e-10).expect("identical");
    assert_eq!(q.depth, 0.0);
    assert!(q.normal.z.abs() > 0.999);
}
