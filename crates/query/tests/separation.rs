//! Separating planes against brute force: a plane is only ever claimed when every vertex of A
//! lies beyond every vertex of B along it by more than the margin, and then no triangle pair
//! comes within the margin (exact triangle distances over all pairs); and the search finds a
//! plane for hulls set far enough apart.

use glam::{Affine3A, DVec3, Quat, Vec3};
use gprox_geometry::hull::ConvexHull;
use gprox_geometry::scene::{box_mesh, torus};
use gprox_geometry::transform::{transform_point, transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::TriMesh;
use gprox_query::collide::{separating_plane, PosedHull};
use proptest::prelude::*;

/// A bumpy star-shaped ball: a UV sphere whose radius varies with direction.
fn bumpy(bumps: f32, seg: u32) -> TriMesh {
    let (rings, segs) = (seg, 2 * seg);
    let mut pts = vec![Vec3::new(0.0, 0.0, 1.0 + bumps)];
    for i in 1..rings {
        let th = std::f32::consts::PI * i as f32 / rings as f32;
        for j in 0..segs {
            let ph = std::f32::consts::TAU * j as f32 / segs as f32;
            let r = 1.0 + bumps * (3.0 * th).sin() * (4.0 * ph).cos();
            pts.push(r * Vec3::new(th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()));
        }
    }
    pts.push(Vec3::new(0.0, 0.0, -1.0 - bumps));
    let (top, bottom) = (0u32, pts.len() as u32 - 1);
    let at = |i: u32, j: u32| 1 + (i - 1) * segs + j % segs;
    let mut faces = Vec::new();
    for j in 0..segs {
        faces.push([top, at(1, j), at(1, j + 1)]);
        faces.push([bottom, at(rings - 1, j + 1), at(rings - 1, j)]);
        for i in 1..rings - 1 {
            faces.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            faces.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    TriMesh::new(pts, faces).unwrap()
}

fn pose(angle: [f32; 3], t: [f32; 3], scale: f32) -> Pose64 {
    let q = Quat::from_euler(glam::EulerRot::XYZ, angle[0], angle[1], angle[2]);
    Pose64::from_affine(&Affine3A::from_scale_rotation_translation(
        Vec3::splat(scale),
        q,
        Vec3::from_array(t),
    ))
}

/// Smallest exact distance over all triangle pairs of the posed meshes.
fn brute_distance(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> f64 {
    let tb: Vec<_> = (0..b.face_count())
        .map(|f| transform_triangle(pb, b.triangle(f)))
        .collect();
    (0..a.face_count())
        .map(|f| transform_triangle(pa, a.triangle(f)))
        .flat_map(|ta| tb.iter().map(move |tb| triangle_distance(&ta, tb).distance))
        .fold(f64::INFINITY, f64::min)
}

/// The gap along `n` between the posed vertex sets: `min n·a − max n·b`.
fn gap(n: DVec3, a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> f64 {
    let along = |m: &TriMesh, p: &Pose64| -> Vec<f64> {
        m.positions()
            .iter()
            .map(|&v| n.dot(transform_point(p, v)))
            .collect()
    };
    let low_a = along(a, pa).into_iter().fold(f64::INFINITY, f64::min);
    let high_b = along(b, pb).into_iter().fold(f64::NEG_INFINITY, f64::max);
    low_a - high_b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random poses (rotated, scaled, near and overlapping): every claimed plane holds on the
    /// world vertices and no triangle pair is within the margin.
    #[test]
    fn claimed_planes_hold(
        angles in [[-3.2f32..3.2, -3.2..3.2, -3.2..3.2], [-3.2f32..3.2, -3.2..3.2, -3.2..3.2]],
        offset in [1.5f32..3.5, -1.0..1.0, -1.0..1.0],
        scale in 0.5f32..2.0,
        margin in prop_oneof![Just(0.0), 0.0..0.3],
        steps in 0usize..24,
    ) {
        let (a, b) = (bumpy(0.15, 8), torus(0.8, 0.3, 16, 8).unwrap());
        let (ha, hb) = (ConvexHull::of_mesh(&a).unwrap(), ConvexHull::of_mesh(&b).unwrap());
        let pa = pose(angles[0], [0.0; 3], 1.0);
        let pb = pose(angles[1], offset, scale);
        let found = separating_plane(
            &PosedHull { hull: &ha, pose: pa },
            &PosedHull { hull: &hb, pose: pb },
            margin,
            steps,
        );
        if let Some(n) = found {
            prop_assert!((n.length() - 1.0).abs() < 1e-12);
            prop_assert!(gap(n, &a, &pa, &b, &pb) > margin, "vertices on the wrong side");
            prop_assert!(brute_distance(&a, &pa, &b, &pb) > margin, "a pair within the margin");
        }
    }

    /// Apart by more than the hulls' sizes allow to overlap: the search (with GJK steps) always
    /// finds a plane, also with a margin of half the least gap.
    #[test]
    fn far_pairs_are_proven(
        angles in [[-3.2f32..3.2, -3.2..3.2, -3.2..3.2], [-3.2f32..3.2, -3.2..3.2, -3.2..3.2]],
        dir in [-1.0f32..1.0, -1.0..1.0, -1.0..1.0],
        extra in 0.05f32..1.0,
    ) {
        let d = Vec3::from_array(dir);
        prop_assume!(d.length() > 0.1);
        let a = bumpy(0.1, 8);
        let ha = ConvexHull::of_mesh(&a).unwrap();
        // Each ball lies within 1.1 of its centre.
        let t = d.normalize() * (2.2 + extra);
        let (pa, pb) = (pose(angles[0], [0.0; 3], 1.0), pose(angles[1], t.to_array(), 1.0));
        let (oa, ob) = (PosedHull { hull: &ha, pose: pa }, PosedHull { hull: &ha, pose: pb });
        prop_assert!(separating_plane(&oa, &ob, 0.0, 24).is_some());
        prop_assert!(separating_plane(&ob, &oa, extra as f64 * 0.5, 24).is_some());
    }
}

/// Interlocked or touching meshes never get a plane; the same meshes pulled apart do.
#[test]
fn touching_pairs_get_none() {
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let h = ConvexHull::of_mesh(&t).unwrap();
    let at = |x: f32| Pose64::from_affine(&Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)));
    let posed = |p| PosedHull { hull: &h, pose: p };
    for steps in [0, 24] {
        // Tori side by side, 0.1 apart at the rims (outer radius 1.3).
        assert!(separating_plane(&posed(at(2.7)), &posed(at(0.0)), 0.0, steps).is_some());
        // Rims overlapping a little.
        assert!(separating_plane(&posed(at(2.55)), &posed(at(0.0)), 0.0, steps).is_none());
        // A margin larger than the gap.
        assert!(separating_plane(&posed(at(2.7)), &posed(at(0.0)), 0.2, steps).is_none());
        // Overlapping hulls.
        assert!(separating_plane(&posed(at(1.0)), &posed(at(0.0)), 0.0, steps).is_none());
    }
    // Unit cubes sharing a face (distance exactly 0), then a float's width apart.
    let cube = box_mesh(Vec3::ZERO, Vec3::ONE).unwrap();
    let hc = ConvexHull::of_mesh(&cube).unwrap();
    let cubes = |x: f32| {
        separating_plane(
            &PosedHull {
                hull: &hc,
                pose: at(x),
            },
            &PosedHull {
                hull: &hc,
                pose: at(0.0),
            },
            0.0,
            24,
        )
    };
    assert_eq!(brute_distance(&cube, &at(1.0), &cube, &at(0.0)), 0.0);
    assert!(cubes(1.0).is_none());
    let n = cubes(1.0 + f32::EPSILON).expect("a gap of one ulp is a gap");
    assert!(n.x > 0.99);
    // Non-finite input: no plane, no panic.
    let bad = Pose64 {
        rows: [[f64::NAN; 4]; 3],
    };
    assert!(separating_plane(&posed(bad), &posed(at(0.0)), 0.0, 24).is_none());
    assert!(separating_plane(&posed(at(5.0)), &posed(at(0.0)), f64::NAN, 24).is_none());
}
