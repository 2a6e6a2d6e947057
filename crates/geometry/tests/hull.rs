//! The exact convex hull against brute force: every mesh vertex lies on or below every facet
//! (exact `orient3d`), the facets close up into a sphere, no input vertex strictly outside is
//! left, and certified supports bound the brute-force maximum.

use glam::{DVec3, Vec3};
use gprox_geometry::hull::ConvexHull;
use gprox_geometry::predicates::orient3d;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

/// A mesh whose faces reference every point (fan triangles; only the vertex set matters).
fn cloud(points: Vec<Vec3>) -> TriMesh {
    let n = points.len() as u32;
    let faces = (0..n).map(|i| [i, (i + 1) % n, (i + 2) % n]).collect();
    TriMesh::new(points, faces).unwrap()
}

/// Checks the hull of `mesh` against brute force; returns it.
fn check(mesh: &TriMesh) -> ConvexHull {
    let hull = ConvexHull::of_mesh(mesh).expect("a hull");
    let pts = hull.points();
    let all: Vec<DVec3> = mesh.positions().iter().map(|p| p.as_dvec3()).collect();
    for f in hull.facets() {
        let [a, b, c] = f.map(|v| pts[v as usize]);
        for (i, &p) in all.iter().enumerate() {
            assert!(orient3d(a, b, c, p) >= 0.0, "vertex {i} above facet {f:?}");
        }
    }
    // A closed triangulated sphere: each directed edge once, its reverse once, V − E + F = 2.
    let mut edges = std::collections::HashSet::new();
    for f in hull.facets() {
        for k in 0..3 {
            assert!(edges.insert((f[k], f[(k + 1) % 3])), "edge twice");
        }
    }
    for &(u, v) in &edges {
        assert!(edges.contains(&(v, u)), "open edge");
    }
    let (v, e, f) = (pts.len(), edges.len() / 2, hull.facets().len());
    assert_eq!(v + f, e + 2, "Euler characteristic");
    // Hull vertices are mesh vertices at their positions.
    for (i, &id) in hull.ids().iter().enumerate() {
        assert_eq!(mesh.positions()[id as usize].as_dvec3(), pts[i]);
    }
    hull
}

fn coord() -> impl Strategy<Value = f32> {
    -1.0f32..1.0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random clouds: a valid hull, and supports along random directions certified and at
    /// least the brute-force maximum (and equal to it up to rounding).
    #[test]
    fn random_clouds(
        points in proptest::collection::vec([coord(), coord(), coord()], 4..200),
        dirs in proptest::collection::vec([-1.0f64..1.0, -1.0..1.0, -1.0..1.0], 1..8),
        start in 0u32..1000,
    ) {
        let mesh = cloud(points.iter().map(|&p| Vec3::from_array(p)).collect());
        let Some(_) = ConvexHull::of_mesh(&mesh) else {
            // No volume: every point coplanar with the first three found.
            return Ok(());
        };
        let hull = check(&mesh);
        for d in dirs {
            let d = DVec3::from_array(d);
            let brute = mesh.positions().iter().map(|p| d.dot(p.as_dvec3())).fold(f64::MIN, f64::max);
            let s = hull.support_from(d, start % hull.points().len() as u32);
            if s.certified {
                prop_assert!(s.value >= brute, "bound {} below max {}", s.value, brute);
                prop_assert!(s.value - brute <= 1e-12);
            }
            let top = d.dot(hull.points()[s.vertex as usize]);
            prop_assert!(brute - top <= 1e-12, "climb stopped {} below the max", brute - top);
        }
    }

    /// Points on a small integer lattice: many coplanar and collinear points, exact ties.
    #[test]
    fn lattice_clouds(
        points in proptest::collection::vec([0i8..4, 0i8..4, 0i8..4], 4..120),
        d in [-2i8..3, -2i8..3, -2i8..3],
    ) {
        let mesh = cloud(points.iter().map(|p| Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32)).collect());
        if ConvexHull::of_mesh(&mesh).is_none() {
            return Ok(());
        }
        let hull = check(&mesh);
        // Axis-aligned and diagonal directions hit whole facets: a plateau of exact ties.
        let d = DVec3::new(d[0] as f64, d[1] as f64, d[2] as f64);
        let brute = mesh.positions().iter().map(|p| d.dot(p.as_dvec3())).fold(f64::MIN, f64::max);
        let s = hull.support(d);
        prop_assert!(s.certified || d == DVec3::ZERO || hull.points().len() > 60);
        if s.certified {
            prop_assert!(s.value >= brute && s.value - brute <= 1e-12);
        }
    }
}

/// Flat and tiny inputs have no hull.
#[test]
fn no_volume_no_hull() {
    let flat = cloud(vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)]);
    assert!(ConvexHull::of_mesh(&flat).is_none());
    let line = cloud((0..6).map(|i| Vec3::splat(i as f32)).collect());
    assert!(ConvexHull::of_mesh(&line).is_none());
    let three = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    assert!(ConvexHull::of_mesh(&three).is_none());
}

/// The shared benchmark meshes (when present): valid hulls, supports equal to brute force.
#[test]
fn shared_meshes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/scenes");
    for (scene, file) in [
        ("bumpy-pair-distance", "bumpyA.obj"),
        ("bunny-pair-distance", "mesh.obj"),
    ] {
        let path = dir.join(scene).join(file);
        let Ok(mesh) = gprox_geometry::io::load_mesh(&path) else {
            continue;
        };
        let hull = check(&mesh);
        eprintln!(
            "{scene}: {} hull vertices of {}",
            hull.points().len(),
            mesh.vertex_count()
        );
        let mut from = 0;
        for i in 0..200 {
            let z = 1.0 - 2.0 * (i as f64 + 0.5) / 200.0;
            let (s, c) = (i as f64 * 2.4).sin_cos();
            let r = (1.0 - z * z).sqrt();
            let d = DVec3::new(r * c, r * s, z);
            let brute = mesh
                .positions()
                .iter()
                .map(|p| d.dot(p.as_dvec3()))
                .fold(f64::MIN, f64::max);
            let sup = if i % 2 == 0 {
                hull.support(d)
            } else {
                hull.support_from(d, from)
            };
            from = sup.vertex;
            assert!(sup.certified);
            assert!(sup.value >= brute && sup.value - brute <= 1e-12);
        }
    }
}
