//! Image-space separation (§5.4) and self-intersection volume (§5.1.3) against independent
//! oracles: the exact distance query and brute-force nearest faces for the separating pair,
//! the closed-form overlap of two boxes for the volume.

use glam::{DVec3, Vec3};
use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::rss::Rss;
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::TriMesh;
use gprox_query::distance::{distance, DistanceObject, DistanceOptions};
use gprox_query::image_space::{self_intersection_volume, separation, ImageSpaceOptions, Lattice};

#[path = "penetration/shapes.rs"]
#[allow(dead_code)]
mod shapes;
#[path = "image_space/support.rs"]
#[allow(dead_code)]
mod support;

use shapes::*;
use support::*;

#[test]
fn separation_matches_exact_distance() {
    let s = icosphere(1.0, Vec3::ZERO, 3);
    for (c, d) in [(2.3, 0.05), (2.05, 0.02), (3.0, 0.1)] {
        let a = Posed::new(s.clone(), Pose64::IDENTITY);
        let b = Posed::new(s.clone(), pose([0.3, 1.0, 0.2], 0.7, [c as f32, 0.3, -0.2]));
        let opts = ImageSpaceOptions::new(d);
        let sep = separation(&a.object(), &b.object(), &opts)
            .unwrap()
            .unwrap();
        let (ra, rb) = (BvTree::<Rss>::build(&a.mesh), BvTree::<Rss>::build(&b.mesh));
        let exact = distance(
            &DistanceObject {
                mesh: &a.mesh,
                tree: &ra,
                pose: a.pose,
            },
            &DistanceObject {
                mesh: &b.mesh,
                tree: &rb,
                pose: b.pose,
            },
            &DistanceOptions::default(),
        )
        .unwrap()
        .distance;
        let h = Lattice::spacing_for(d);
        assert!(sep.distance >= exact - 1e-12, "{} < {exact}", sep.distance);
        // A sample inside A lies within a cell diagonal of the closest point (the spheres are
        // much thicker than a cell), and refinement only brings the pair closer.
        assert!(
            sep.distance <= exact + 3f64.sqrt() * h,
            "{} vs {exact}",
            sep.distance
        );
        assert!((sep.point_b - sep.point_a).length() == sep.distance);
        let (ta, tb) = (a.triangles(), b.triangles());
        assert!(brute_nearest(sep.point_a, &ta).0 < 1e-12);
        assert!(brute_nearest(sep.point_b, &tb).0 < 1e-12);
        let centres = (transform_point(&b.pose, Vec3::ZERO) - DVec3::ZERO).normalize();
        assert!(sep.direction.dot(centres) > 0.99, "{:?}", sep.direction);
        // Symmetric.
        let back = separation(&b.object(), &a.object(), &opts)
            .unwrap()
            .unwrap();
        assert!((back.distance - sep.distance).abs() <= 1e-12 + 1e-3 * h);
    }
    // Overlapping solids have no separation.
    let a = Posed::new(s.clone(), Pose64::IDENTITY);
    let b = Posed::new(s, translate([1.5, 0.0, 0.0]));
    assert_eq!(
        separation(&a.object(), &b.object(), &ImageSpaceOptions::new(0.05)).unwrap(),
        None
    );
}

#[test]
fn self_intersection_of_two_overlapping_boxes() {
    let l = cube(Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 1.0));
    let r = cube(Vec3::new(0.6, 0.3, -0.5), Vec3::new(1.6, 1.5, 0.7));
    let mut pos = l.positions().to_vec();
    pos.extend(r.positions());
    let mut faces = l.faces().to_vec();
    faces.extend(r.faces().iter().map(|f| f.map(|i| i + 8)));
    let both = Posed::new(TriMesh::new(pos, faces).unwrap(), Pose64::IDENTITY);
    let exact = 0.4 * 0.7 * 0.7;
    let s = self_intersection_volume(&both.object(), &ImageSpaceOptions::new(0.03)).unwrap();
    assert!(s.count > 0);
    assert!(
        (s.volume() - exact).abs() <= s.volume_bound(),
        "{} vs {exact}",
        s.volume()
    );
    // One box alone winds once everywhere: no self-intersection at all.
    let one = Posed::new(l, Pose64::IDENTITY);
    let s = self_intersection_volume(&one.object(), &ImageSpaceOptions::new(0.03)).unwrap();
    assert_eq!(s.count, 0);
}
