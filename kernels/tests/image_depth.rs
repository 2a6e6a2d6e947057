//! The image-space per-sample depths on the device (`cuda/image_depth.cu`) against the CPU's
//! `gprox_query::image_space`: every surface point the device decides equals the CPU's exact
//! nearest face bit for bit (distance, closest point, face), the finished query equals
//! `intersect` (so the directions too), the depths match closed forms for boxes and tori, a
//! tree deeper than the walk's stack goes to the host without losing a sample, and a warm
//! query costs one synchronisation per batch (and two launches for the trees' world boxes).

use gprox_bvh::{lbvh, Aabb, Bvh, BvhNode, LEAF};
use gprox_cuda::image_depth::{ImageDepth, ImageDepthParams, ImageDepthStats};
use gprox_cuda::image_space::emulator_layout;
use gprox_cuda::{Device, ResidentMesh, ResidentObject};
use gprox_geometry::glam::{Affine3A, DVec3, Quat, Vec3};
use gprox_geometry::scene::{box_mesh, torus, Scene};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::{CollisionObject, Side};
use gprox_query::image_space::{
    intersect, ImageSpaceOptions, Intersection, IntersectionSweep, UNDECIDED_FACE,
};
use proptest::prelude::*;

fn posed(axis: Vec3, angle: f32, t: Vec3) -> Pose64 {
    Pose64::from_affine(&Affine3A::from_rotation_translation(
        Quat::from_axis_angle(axis.normalize(), angle),
        t,
    ))
}

/// A torus standing upright through the ring of one at the origin: the tubes cross twice.
fn crossing() -> Affine3A {
    Affine3A::from_rotation_translation(
        Quat::from_axis_angle(Vec3::X, std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 0.05, 0.1),
    )
}

/// Classifies and computes the depths on the device, checks every decided surface point
/// against the CPU's bit for bit and the finished result against `intersect`. Returns the
/// result and the device's depth stats.
fn check(
    d: &Device,
    (ma, ba, pa): (&TriMesh, &Bvh, Pose64),
    (mb, bb, pb): (&TriMesh, &Bvh, Pose64),
    opts: &ImageSpaceOptions,
) -> (Intersection, ImageDepthStats) {
    let ra = ResidentMesh::new(d, ma, ba).unwrap();
    let rb = ResidentMesh::new(d, mb, bb).unwrap();
    let (oa, ob) = (
        CollisionObject::new(ma, ba, pa).unwrap(),
        CollisionObject::new(mb, bb, pb).unwrap(),
    );
    let (da, db) = (
        ResidentObject::new(&ra, ma, pa),
        ResidentObject::new(&rb, mb, pb),
    );
    let sweep = IntersectionSweep::new(&oa, &ob, opts).unwrap();
    let (codes, _) = d.image_space_codes(&da, &db, &sweep).unwrap();
    let samples = sweep.classify(&codes).unwrap();
    let cells = samples.cells();
    assert_eq!(cells.len(), samples.len());
    let (near, stats) = d
        .image_space_depths(&da, &db, samples.lattice(), &cells)
        .unwrap();
    let mut undecided = 0u64;
    for (side, got) in [Side::A, Side::B].into_iter().zip(&near) {
        assert_eq!(got.len(), cells.len());
        for (c, g) in cells.iter().zip(got) {
            if g.face == UNDECIDED_FACE {
                undecided += 1;
                continue;
            }
            let want = samples.surface_point(side, *c);
            assert_eq!(g.face, want.face, "{side:?} {c:?}");
            assert_eq!(
                g.distance.to_bits(),
                want.distance.to_bits(),
                "{side:?} {c:?}"
            );
            assert_eq!(
                g.point.to_array().map(f64::to_bits),
                want.point.to_array().map(f64::to_bits),
                "{side:?} {c:?}"
            );
        }
    }
    assert_eq!(undecided, stats.undecided);
    let done = samples.finish(Some([&near[0], &near[1]])).unwrap();
    assert_eq!(done.host_depths, undecided);
    let cpu = intersect(&oa, &ob, opts).unwrap();
    assert_eq!(done.intersection, cpu);
    (done.intersection, stats)
}

#[test]
fn boxes_equal_the_cpu_and_the_closed_form() {
    // Axis-aligned boxes: many samples at equal distances to two or three faces (the smallest
    // face id must win on both sides).
    let d = Device::for_tests();
    let a = box_mesh(Vec3::ZERO, Vec3::ONE).unwrap();
    let b = box_mesh(Vec3::splat(0.25), Vec3::splat(1.5)).unwrap();
    let (ba, bb) = (lbvh::build(&a), lbvh::build(&b));
    let opts = ImageSpaceOptions {
        tile: 4,
        ..ImageSpaceOptions::new(0.06)
    };
    let (r, stats) = check(
        &d,
        (&a, &ba, Pose64::IDENTITY),
        (&b, &bb, Pose64::IDENTITY),
        &opts,
    );
    assert!(r.samples().len() > 100, "{}", r.samples().len());
    assert_eq!(stats.undecided, 0);
    let depth = |p: DVec3, lo: f64, hi: f64| {
        let a = (p - DVec3::splat(lo)).min_element();
        let b = (DVec3::splat(hi) - p).min_element();
        a.min(b)
    };
    for s in r.samples() {
        let p = s.position;
        assert!(
            (s.depth_in_a() - depth(p, 0.0, 1.0)).abs() <= 1e-12,
            "{s:?}"
        );
        assert!(
            (s.depth_in_b() - depth(p, 0.25, 1.5)).abs() <= 1e-12,
            "{s:?}"
        );
    }
}

#[test]
fn torus_through_torus_equals_the_cpu_and_the_closed_form() {
    let d = Device::for_tests();
    let (major, minor) = (1.0f64, 0.3f64);
    let t = torus(major as f32, minor as f32, 24, 12).unwrap();
    let bvh = lbvh::build(&t);
    let pb = Pose64::from_affine(&crossing());
    let opts = ImageSpaceOptions {
        tile: 8,
        ..ImageSpaceOptions::new(0.05)
    };
    let (r, stats) = check(&d, (&t, &bvh, Pose64::IDENTITY), (&t, &bvh, pb), &opts);
    assert!(r.samples().len() > 50, "{}", r.samples().len());
    assert_eq!(stats.undecided, 0);
    // Depth inside a tube: minor − distance to the core circle, up to the tessellation's
    // sagitta (about 0.011 around the ring, 0.010 around the tube).
    let tube = |q: DVec3| {
        let ring = (q.x * q.x + q.y * q.y).sqrt() - major;
        minor - (ring * ring + q.z * q.z).sqrt()
    };
    let inv = Pose64::from_affine(&crossing().inverse());
    for s in r.samples() {
        let p = s.position;
        let local_b = DVec3::from_array([0, 1, 2].map(|k| {
            let m = inv.rows[k];
            m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3]
        }));
        assert!((s.depth_in_a() - tube(p)).abs() <= 0.03, "{s:?}");
        assert!((s.depth_in_b() - tube(local_b)).abs() <= 0.03, "{s:?}");
        // The direction leads to the nearest surface point at that distance.
        let out = s.direction_out_of_a();
        assert!((p + out * s.depth_in_a() - s.a.point).length() <= 1e-9);
    }
}

#[test]
fn deforming_tori_frames_equal_the_cpu() {
    let scene = Scene::builtin_deforming_tori();
    let d = Device::for_tests();
    let opts = ImageSpaceOptions::new(0.0207);
    let mut samples = 0;
    for f in [2, 7, 12] {
        let meshes: Vec<TriMesh> = (0..2)
            .map(|i| {
                let mut m = scene.mesh(i).clone();
                m.set_positions(scene.positions(f, i).to_vec()).unwrap();
                m
            })
            .collect();
        let trees: Vec<Bvh> = meshes.iter().map(lbvh::build).collect();
        let (pa, pb) = (
            Pose64::from_affine(&scene.pose(f, 0)),
            Pose64::from_affine(&scene.pose(f, 1)),
        );
        let (r, _) = check(
            &d,
            (&meshes[0], &trees[0], pa),
            (&meshes[1], &trees[1], pb),
            &opts,
        );
        samples += r.samples().len();
    }
    assert!(samples > 100, "{samples}");
}

/// A tree that is a chain (every internal node: a leaf and the rest), far deeper than the
/// walk's stack of 64.
fn chain(mesh: &TriMesh) -> Bvh {
    let n = mesh.faces().len();
    let leaf_box = |f: usize| {
        let t = mesh.faces()[f].map(|v| mesh.positions()[v as usize]);
        Aabb::from_points(&t)
    };
    let mut nodes = vec![
        BvhNode {
            aabb: Aabb::EMPTY,
            left: 0,
            right: 0
        };
        2 * n - 1
    ];
    let mut parents = vec![LEAF; 2 * n - 1];
    for i in 0..n {
        nodes[n - 1 + i] = BvhNode {
            aabb: leaf_box(i),
            left: i as u32,
            right: LEAF,
        };
    }
    for i in (0..n - 1).rev() {
        let rest = if i + 1 < n - 1 { i + 1 } else { 2 * n - 2 };
        let leaf = n - 1 + i;
        nodes[i] = BvhNode {
            aabb: nodes[leaf].aabb.merge(&nodes[rest].aabb),
            left: leaf as u32,
            right: rest as u32,
        };
        parents[leaf] = i as u32;
        parents[rest] = i as u32;
    }
    Bvh { nodes, parents }
}

#[test]
fn deep_trees_go_to_the_host_without_losing_a_sample() {
    let d = Device::for_tests();
    let t = torus(1.0, 0.3, 16, 8).unwrap();
    let deep = chain(&t);
    let pb = Pose64::from_affine(&crossing());
    let opts = ImageSpaceOptions {
        tile: 8,
        ..ImageSpaceOptions::new(0.08)
    };
    let (r, stats) = check(&d, (&t, &deep, Pose64::IDENTITY), (&t, &deep, pb), &opts);
    assert!(!r.samples().is_empty());
    // Every walk starts down the chain: most samples overflow and are finished on the host.
    assert!(stats.undecided > 0, "{stats:?}");
}

#[test]
fn warm_query_costs_one_sync_per_batch() {
    let d = Device::for_tests();
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let bvh = lbvh::build(&t);
    let r = ResidentMesh::new(&d, &t, &bvh).unwrap();
    let pb = Pose64::from_affine(&crossing());
    let (oa, ob) = (
        CollisionObject::new(&t, &bvh, Pose64::IDENTITY).unwrap(),
        CollisionObject::new(&t, &bvh, pb).unwrap(),
    );
    let (ra, rb) = (
        ResidentObject::new(&r, &t, Pose64::IDENTITY),
        ResidentObject::new(&r, &t, pb),
    );
    let opts = ImageSpaceOptions::new(0.06);
    let sweep = IntersectionSweep::new(&oa, &ob, &opts).unwrap();
    let codes = sweep_codes(&sweep);
    let samples = sweep.classify(&codes).unwrap();
    let cells = samples.cells();
    assert!(!cells.is_empty());
    d.image_space_depths(&ra, &rb, samples.lattice(), &cells)
        .unwrap(); // warms the pool up
    let before = d.ops();
    let (_, stats) = d
        .image_space_depths(&ra, &rb, samples.lattice(), &cells)
        .unwrap();
    let used = d.ops() - before;
    let n = cells.len() as u64;
    assert_eq!(stats.batches, 1);
    // The world boxes of both trees, then the batch.
    assert_eq!((used.launches, used.syncs, used.allocations), (3, 1, 0));
    assert_eq!(used.h2d_bytes, 12 * n);
    assert_eq!(used.d2h_bytes, 2 * n * size_of::<ImageDepth>() as u64);
}

/// The sweep's codes classified on the CPU.
fn sweep_codes(sweep: &IntersectionSweep<'_>) -> Vec<u8> {
    (0..sweep.tiles().len())
        .flat_map(|t| sweep.classify_tile(t))
        .collect()
}

#[test]
fn layouts_match_the_emulator() {
    use std::mem::{offset_of, size_of};
    let check = |name: &str, v: usize| assert_eq!(emulator_layout(name), v, "{name}");
    check("sizeof(ImageDepthParams)", size_of::<ImageDepthParams>());
    check(
        "offsetof(ImageDepthParams, pose_b)",
        offset_of!(ImageDepthParams, pose_b),
    );
    check(
        "offsetof(ImageDepthParams, faces_b)",
        offset_of!(ImageDepthParams, faces_b),
    );
    check(
        "offsetof(ImageDepthParams, boxes_b)",
        offset_of!(ImageDepthParams, boxes_b),
    );
    check(
        "offsetof(ImageDepthParams, cells)",
        offset_of!(ImageDepthParams, cells),
    );
    check(
        "offsetof(ImageDepthParams, out)",
        offset_of!(ImageDepthParams, out),
    );
    check(
        "offsetof(ImageDepthParams, origin)",
        offset_of!(ImageDepthParams, origin),
    );
    check(
        "offsetof(ImageDepthParams, spacing)",
        offset_of!(ImageDepthParams, spacing),
    );
    check(
        "offsetof(ImageDepthParams, count)",
        offset_of!(ImageDepthParams, count),
    );
    check("sizeof(ImageDepth)", size_of::<ImageDepth>());
    check("offsetof(ImageDepth, point)", offset_of!(ImageDepth, point));
    check("offsetof(ImageDepth, face)", offset_of!(ImageDepth, face));
    check(
        "offsetof(ImageDepth, status)",
        offset_of!(ImageDepth, status),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    /// Random rigid poses of a box through a torus: decided depths equal the CPU's bit for
    /// bit, the result equals `intersect`.
    #[test]
    fn random_poses_equal_the_cpu(
        ax in -1.0f32..1.0, ay in -1.0f32..1.0, angle in 0.0f32..3.0,
        tx in 0.5f32..1.1, ty in -0.2f32..0.2, tz in -0.2f32..0.2,
    ) {
        let d = Device::for_tests();
        let t = torus(0.8, 0.3, 16, 8).unwrap();
        let b = box_mesh(Vec3::splat(-0.3), Vec3::splat(0.3)).unwrap();
        let (bt, bbox) = (lbvh::build(&t), lbvh::build(&b));
        let axis = Vec3::new(ax, ay, 0.5);
        let opts = ImageSpaceOptions { tile: 6, ..ImageSpaceOptions::new(0.07) };
        check(
            &d,
            (&t, &bt, Pose64::IDENTITY),
            (&b, &bbox, posed(axis, angle, Vec3::new(tx, ty, tz))),
            &opts,
        );
    }
}
