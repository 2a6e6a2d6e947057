//! The image-space inside classification on the device (`cuda/image_space.cu`,
//! `include/gprox/{inside,image_space}.cuh`) against the CPU's `gprox_query::image_space`:
//! every column the device decides has exactly the CPU's codes, sample for sample (the CPU's
//! exact column sweep is the oracle; the undecided columns are few), the finished query equals
//! `intersect`, the layouts match, and a warm query costs one launch and one synchronisation
//! per batch with the tile table up and two bytes per cell back.

use gprox_bvh::lbvh;
use gprox_cuda::image_space::{emulator_layout, ImageColumnsParams, ImageSpaceStats, ImageTile};
use gprox_cuda::{Device, ResidentMesh, ResidentObject};
use gprox_geometry::glam::{Affine3A, Quat, Vec3};
use gprox_geometry::scene::torus;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::CollisionObject;
use gprox_query::image_space::{intersect, ImageSpaceOptions, IntersectionSweep, SAMPLE_UNDECIDED};
use proptest::prelude::*;

fn posed(axis: Vec3, angle: f32, t: Vec3) -> Pose64 {
    Pose64::from_affine(&Affine3A::from_rotation_translation(
        Quat::from_axis_angle(axis.normalize(), angle),
        t,
    ))
}

fn cube(lo: Vec3, hi: Vec3) -> TriMesh {
    gprox_geometry::scene::box_mesh(lo, hi).unwrap()
}

/// Runs the sweep on the device and on the CPU: decided columns equal sample for sample, the
/// finished result equals `intersect`. Returns the device's stats and the number of columns.
fn check(
    d: &Device,
    (ma, pa): (&TriMesh, Pose64),
    (mb, pb): (&TriMesh, Pose64),
    opts: &ImageSpaceOptions,
) -> (ImageSpaceStats, u64) {
    let (ba, bb) = (lbvh::build(ma), lbvh::build(mb));
    let ra = ResidentMesh::new(d, ma, &ba).unwrap();
    let rb = ResidentMesh::new(d, mb, &bb).unwrap();
    let (oa, ob) = (
        CollisionObject::new(ma, &ba, pa).unwrap(),
        CollisionObject::new(mb, &bb, pb).unwrap(),
    );
    let sweep = IntersectionSweep::new(&oa, &ob, opts).unwrap();
    let (codes, stats) = d
        .image_space_codes(
            &ResidentObject::new(&ra, ma, pa),
            &ResidentObject::new(&rb, mb, pb),
            &sweep,
        )
        .unwrap();
    let mut columns = 0u64;
    let mut undecided = 0u64;
    for (t, tile) in sweep.tiles().iter().enumerate() {
        let cpu = sweep.classify_tile(t);
        let at = sweep.code_offsets()[t] as usize;
        let dev = &codes[at..at + cpu.len()];
        let len = tile.column_len() as usize;
        for c in 0..2 * tile.columns() as usize {
            columns += 1;
            let (x, y) = (&dev[c * len..(c + 1) * len], &cpu[c * len..(c + 1) * len]);
            if x[0] & SAMPLE_UNDECIDED != 0 {
                undecided += 1;
                assert!(x.iter().all(|&v| v & SAMPLE_UNDECIDED != 0));
            } else {
                assert_eq!(x, y, "tile {t} column {c}");
            }
        }
    }
    assert_eq!(undecided, stats.undecided_columns);
    let done = sweep.finish(&codes).unwrap();
    assert_eq!(done.host_columns, undecided);
    assert_eq!(done.intersection, intersect(&oa, &ob, opts).unwrap());
    (stats, columns)
}

#[test]
fn tori_columns_equal_the_cpu() {
    let d = Device::for_tests();
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let pb = posed(
        Vec3::X,
        std::f32::consts::FRAC_PI_2,
        Vec3::new(0.0, 0.05, 0.1),
    );
    let opts = ImageSpaceOptions {
        tile: 8,
        ..ImageSpaceOptions::new(0.04)
    };
    let (stats, columns) = check(&d, (&t, Pose64::IDENTITY), (&t, pb), &opts);
    assert!(columns > 200, "{columns}");
    // Generic positions: the filters decide (nearly) everything.
    assert!(
        stats.undecided_columns * 100 <= columns,
        "{stats:?} of {columns}"
    );
}

#[test]
fn axis_aligned_boxes_equal_the_cpu() {
    // Faces parallel to the columns, samples in the planes of faces' edges: certified zeros.
    let d = Device::for_tests();
    let a = cube(Vec3::ZERO, Vec3::ONE);
    let b = cube(Vec3::splat(0.25), Vec3::splat(1.5));
    let opts = ImageSpaceOptions {
        tile: 4,
        ..ImageSpaceOptions::new(0.05)
    };
    let (stats, columns) = check(&d, (&a, Pose64::IDENTITY), (&b, Pose64::IDENTITY), &opts);
    assert!(columns > 50);
    assert!(
        stats.undecided_columns * 10 <= columns,
        "{stats:?} of {columns}"
    );
}

#[test]
fn overflowing_columns_go_to_the_host_and_grow_the_scratch() {
    // A fine torus at a coarse tolerance: a column meets well over 64 faces.
    let d = Device::for_tests();
    let t = torus(1.0, 0.35, 96, 48).unwrap();
    let pb = posed(
        Vec3::X,
        std::f32::consts::FRAC_PI_2,
        Vec3::new(0.0, 0.05, 0.1),
    );
    let opts = ImageSpaceOptions::new(0.35);
    let (first, _) = check(&d, (&t, Pose64::IDENTITY), (&t, pb), &opts);
    assert!(first.overflow_columns > 0, "{first:?}");
    // The next queries get twice the slots until nothing overflows.
    let mut last = first;
    for _ in 0..8 {
        last = check(&d, (&t, Pose64::IDENTITY), (&t, pb), &opts).0;
        if last.overflow_columns == 0 {
            break;
        }
    }
    assert_eq!(last.overflow_columns, 0, "{last:?}");
}

#[test]
fn warm_query_costs_one_sync_per_batch() {
    let d = Device::for_tests();
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let bvh = lbvh::build(&t);
    let r = ResidentMesh::new(&d, &t, &bvh).unwrap();
    let pb = posed(
        Vec3::X,
        std::f32::consts::FRAC_PI_2,
        Vec3::new(0.0, 0.05, 0.1),
    );
    let (oa, ob) = (
        CollisionObject::new(&t, &bvh, Pose64::IDENTITY).unwrap(),
        CollisionObject::new(&t, &bvh, pb).unwrap(),
    );
    let opts = ImageSpaceOptions::new(0.05);
    let (ra, rb) = (
        ResidentObject::new(&r, &t, Pose64::IDENTITY),
        ResidentObject::new(&r, &t, pb),
    );
    let sweep = IntersectionSweep::new(&oa, &ob, &opts).unwrap();
    d.image_space_codes(&ra, &rb, &sweep).unwrap(); // warms the pool up
    let before = d.ops();
    let (codes, stats) = d.image_space_codes(&ra, &rb, &sweep).unwrap();
    let used = d.ops() - before;
    let tiles = sweep.tiles().len() as u64;
    assert_eq!(stats.batches, 1);
    assert_eq!(used.launches, u64::from(stats.batches));
    assert_eq!(used.syncs, u64::from(stats.batches));
    assert_eq!(used.allocations, 0);
    assert_eq!(used.h2d_bytes, tiles * size_of::<ImageTile>() as u64);
    // Two codes per cell, nothing else.
    assert_eq!(used.d2h_bytes, codes.len() as u64);
    assert_eq!(
        codes.len() as u64,
        2 * sweep.tiles().iter().map(|t| t.samples()).sum::<u64>()
    );
}

#[test]
fn layouts_match_the_emulator() {
    use std::mem::{offset_of, size_of};
    let check = |name: &str, v: usize| assert_eq!(emulator_layout(name), v, "{name}");
    check("sizeof(ImageTile)", size_of::<ImageTile>());
    check("offsetof(ImageTile, axis)", offset_of!(ImageTile, axis));
    check(
        "offsetof(ImageTile, column_base)",
        offset_of!(ImageTile, column_base),
    );
    check(
        "offsetof(ImageTile, code_offset)",
        offset_of!(ImageTile, code_offset),
    );
    check(
        "sizeof(ImageColumnsParams)",
        size_of::<ImageColumnsParams>(),
    );
    check(
        "offsetof(ImageColumnsParams, pose_b)",
        offset_of!(ImageColumnsParams, pose_b),
    );
    check(
        "offsetof(ImageColumnsParams, nodes_a)",
        offset_of!(ImageColumnsParams, nodes_a),
    );
    check(
        "offsetof(ImageColumnsParams, faces_b)",
        offset_of!(ImageColumnsParams, faces_b),
    );
    check(
        "offsetof(ImageColumnsParams, tiles)",
        offset_of!(ImageColumnsParams, tiles),
    );
    check(
        "offsetof(ImageColumnsParams, codes)",
        offset_of!(ImageColumnsParams, codes),
    );
    check(
        "offsetof(ImageColumnsParams, origin)",
        offset_of!(ImageColumnsParams, origin),
    );
    check(
        "offsetof(ImageColumnsParams, spacing)",
        offset_of!(ImageColumnsParams, spacing),
    );
    check(
        "offsetof(ImageColumnsParams, count)",
        offset_of!(ImageColumnsParams, count),
    );
    check(
        "offsetof(ImageColumnsParams, capacity)",
        offset_of!(ImageColumnsParams, capacity),
    );
    check("sizeof(ImageItem)", 24);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Random rigid poses of a torus through a box: decided columns equal the CPU's, the
    /// result equals `intersect`.
    #[test]
    fn random_poses_equal_the_cpu(
        ax in -1.0f32..1.0, ay in -1.0f32..1.0, angle in 0.0f32..3.0,
        tx in 0.3f32..1.2, ty in -0.3f32..0.3, tz in -0.3f32..0.3,
    ) {
        let d = Device::for_tests();
        let t = torus(0.8, 0.3, 16, 8).unwrap();
        let b = cube(Vec3::splat(-0.4), Vec3::splat(0.4));
        let axis = Vec3::new(ax, ay, 0.5);
        let opts = ImageSpaceOptions { tile: 6, ..ImageSpaceOptions::new(0.06) };
        check(&d, (&t, Pose64::IDENTITY), (&b, posed(axis, angle, Vec3::new(tx, ty, tz))), &opts);
    }
}
