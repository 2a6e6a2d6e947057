//! Penetration depth, intersection volume, distance field and sampled separation on every
//! backend: the CPU answers equal closed forms (or the CPU modules called directly), and a
//! device context answers the same.

#[path = "common/device.rs"]
mod device;
#[path = "common/fixtures.rs"]
mod fixtures;

use device::contexts;
use fixtures::{at, cube};
use gprox::geometry::scene::torus;
use gprox::geometry::transform::Pose64;
use gprox::{Affine3A, ImageSpaceOptions, Query, RunsOn, Vec3};

#[test]
fn penetration_depth_is_the_closed_form_on_every_backend() {
    // Cube B shifted by (0.8, 0.8, 0.8): its corner 0 is inside A, 0.2 from A's three faces.
    for ctx in contexts() {
        let m = ctx.model(cube()).unwrap();
        let r = ctx
            .penetration(&m, &Affine3A::IDENTITY, &m, &at(0.8, 0.8, 0.8))
            .unwrap();
        assert_eq!(
            r.inside_vertices(),
            2,
            "corner 7 of A is inside B, corner 0 of B in A"
        );
        assert!((r.max_depth() - 0.2).abs() < 1e-6);
        assert_eq!((r.a_in_b()[0].vertex, r.b_in_a()[0].vertex), (7, 0));
    }
}

#[test]
fn intersection_volume_is_the_closed_form_and_the_same_on_every_backend() {
    // Two unit cubes overlapping in the slab 0.45 <= x <= 1, rotated a little so that no lattice
    // plane is special: volume 0.55 (within the bound), deepest sample ~0.275 inside each.
    let tilt = Affine3A::from_rotation_z(0.3) * Affine3A::from_rotation_x(0.2);
    let opts = ImageSpaceOptions::new(0.03);
    let mut reference = None;
    for ctx in contexts() {
        let m = ctx.model(cube()).unwrap();
        let r = ctx
            .intersection_volume(&m, &tilt, &m, &(tilt * at(0.45, 0.0, 0.0)), &opts)
            .unwrap();
        assert!(
            (r.volume() - 0.55).abs() <= r.volume_bound(),
            "{}",
            r.volume()
        );
        assert_eq!(r.contacts().len(), 1);
        let deepest = r.contacts()[0].depth;
        assert!((deepest - 0.275).abs() <= opts.tolerance, "{deepest}");
        assert_eq!(r.samples().len() as u64, r.count());
        // The device context gives the CPU's samples exactly.
        match &reference {
            None => reference = Some(r),
            Some(want) => assert_eq!(&r, want, "{:?}", ctx.backend()),
        }
    }
    // Interlocked tori on every backend, against the CPU module directly.
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let b_pose = Affine3A::from_rotation_translation(
        gprox::Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 0.05, 0.1),
    );
    let want = {
        let bvh = gprox::bvh::lbvh::build(&t);
        let oa = gprox::query::collide::CollisionObject::new(&t, &bvh, Pose64::IDENTITY).unwrap();
        let ob =
            gprox::query::collide::CollisionObject::new(&t, &bvh, Pose64::from_affine(&b_pose))
                .unwrap();
        gprox::query::image_space::intersect(&oa, &ob, &opts).unwrap()
    };
    assert!(want.count() > 100);
    for ctx in contexts() {
        let m = ctx.model(t.clone()).unwrap();
        let r = ctx
            .intersection_volume(&m, &Affine3A::IDENTITY, &m, &b_pose, &opts)
            .unwrap();
        assert_eq!(r, want, "{:?}", ctx.backend());
    }
}

#[test]
fn distance_field_and_sampled_separation_are_the_closed_forms() {
    // The unit cube's signed distance at a 4 x 4 x 4 lattice around it, against the closed form
    // (negative inside); two cubes 0.3 apart along x: the sampled separation is a surface pair
    // no closer than 0.3 and within a cell diagonal of it.
    let lattice = gprox::Lattice {
        origin: gprox::DVec3::splat(-0.35),
        spacing: 0.45,
    };
    let cells = gprox::query::image_space::CellBox {
        lo: [0, 0, 0],
        hi: [4, 4, 4],
    };
    let opts = ImageSpaceOptions::new(0.02);
    for ctx in contexts() {
        assert_eq!(ctx.runs_on(Query::DistanceField), RunsOn::Cpu);
        let m = ctx.model(cube()).unwrap();
        let f = ctx
            .distance_field(&m, &Affine3A::IDENTITY, &lattice, cells, &opts)
            .unwrap();
        assert_eq!(f.samples.len(), 64);
        for (i, s) in f.samples.iter().enumerate() {
            let c = [i % 4, i / 4 % 4, i / 16].map(|k| -0.35 + (k as f64 + 0.5) * 0.45);
            let out = c.map(|x| (x - 1.0).max(-x).max(0.0));
            let outside = (out[0] * out[0] + out[1] * out[1] + out[2] * out[2]).sqrt();
            let inside = c
                .iter()
                .map(|&x| x.min(1.0 - x))
                .fold(f64::INFINITY, f64::min);
            let want = if outside > 0.0 { outside } else { -inside };
            assert!((s.signed_distance() - want).abs() < 1e-6, "{i}: {want}");
        }
        let s = ctx
            .sampled_separation(&m, &Affine3A::IDENTITY, &m, &at(1.3, 0.0, 0.0), &opts)
            .unwrap()
            .unwrap();
        assert!(s.distance >= 0.3 - 1e-6 && s.distance <= 0.3 + 2.0 * opts.tolerance);
        assert!(s.direction.x > 0.99);
        let overlapping = ctx
            .sampled_separation(&m, &Affine3A::IDENTITY, &m, &at(0.5, 0.0, 0.0), &opts)
            .unwrap();
        assert!(overlapping.is_none());
    }
}
