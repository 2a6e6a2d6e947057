//! Geometry images on the device (`cuda/geometry_image.cu`, `include/gprox/geometry_image.cuh`)
//! against the CPU's `gprox_query::geometry_image` (itself tested against brute force over all
//! quads): hierarchy levels box for box and sign for sign, collision of deforming and trimmed
//! images and self-collision pair for pair in both modes (sorted on the device), grow-and-retry
//! of the frontier, the op budget of a warm frame with uploaded positions, and the shared
//! layouts. Positions evaluated on the device: `geometry_image_eval.rs`.

#[path = "common/sheets.rs"]
mod sheets;

use gprox_cuda::geometry_image::{
    emulator_layout, ImageBuildParams, ImageEvalParams, ImageFace, ImageTraverseParams,
    ImageUndecided,
};
use gprox_cuda::{Device, DeviceImage};
use gprox_geometry::freeform::{NurbsSurface, TrimmedFace};
use gprox_geometry::glam::{DVec2, DVec3};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{
    collide_images, self_collide_image, GeometryImage, HierarchyImage, ImageSpec, Mode, TexelPair,
};
use proptest::prelude::*;
use sheets::{assert_same_levels, collide_query_launches, image, patch, wave, with_hole};

/// The CPU's approximate pairs of `a` and `b` (fresh hierarchies).
fn cpu_pairs(a: &GeometryImage, b: &GeometryImage) -> Vec<TexelPair> {
    let (ha, hb) = (HierarchyImage::build(a), HierarchyImage::build(b));
    collide_images((a, &ha), (b, &hb), Mode::Approximate)
}

/// A waved patch with a triangular hole in its stencil.
fn holed_patch() -> TrimmedFace {
    let hole = [
        DVec2::new(0.3, 0.2),
        DVec2::new(0.2, 0.7),
        DVec2::new(0.75, 0.6),
    ];
    with_hole(patch(wave(0.3, 0.2), DVec3::ZERO), &hole)
}

/// The tiled build (five levels a launch, a block per 16 × 16-node tile) on grids of many
/// shapes — one quad, thin strips, odd sides, several tiles per side, two and three launches —
/// with a hole in the stencil and the sign bytes: every level equals the CPU's, and the build
/// takes one launch per five stored levels.
#[test]
fn tiled_hierarchy_build_equals_cpu_on_many_grid_shapes() {
    let d = Device::for_tests();
    let face = holed_patch();
    let spec = ImageSpec::new(0, face.surface(), &Pose64::IDENTITY, 0.1, None)
        .unwrap()
        .unwrap();
    for (width, height) in [
        (2, 2),
        (2, 9),
        (40, 2),
        (33, 33),
        (34, 35),
        (65, 20),
        (97, 130),
        (300, 45),
        (1100, 3),
    ] {
        let spec = ImageSpec {
            width,
            height,
            ..spec
        };
        let img = GeometryImage::from_spec(0, &face, &Pose64::IDENTITY, spec).unwrap();
        let dev = DeviceImage::new(&d, &img, true).unwrap();
        assert_same_levels(&img, &dev);
        let stored = (dev.levels() - 1).max(1);
        assert_eq!(
            dev.build_launches(),
            stored.div_ceil(5),
            "{width} x {height}"
        );
        let before = d.ops();
        let mut again = DeviceImage::new(&d, &img, true).unwrap();
        again.update(&d, &img).unwrap();
        assert_eq!((d.ops() - before).launches, 2 * stored.div_ceil(5) as u64);
        assert_same_levels(&img, &again);
    }
}

#[test]
fn hierarchy_equals_cpu_on_trimmed_odd_images() {
    let d = Device::for_tests();
    for eps in [0.045, 0.2] {
        let face = holed_patch();
        let img = image(0, &face, eps);
        assert!(img.quad_stencil.contains(&0), "the hole clears quads");
        let dev = DeviceImage::new(&d, &img, true).unwrap();
        assert_same_levels(&img, &dev);
    }
}

#[test]
fn deforming_collision_equals_cpu_pair_for_pair() {
    let d = Device::for_tests();
    let hole = [
        DVec2::new(0.35, 0.35),
        DVec2::new(0.35, 0.65),
        DVec2::new(0.65, 0.65),
        DVec2::new(0.65, 0.35),
    ];
    let (fa0, fb0) = (
        TrimmedFace::untrimmed(patch(wave(0.0, 0.15), DVec3::ZERO)).unwrap(),
        with_hole(patch(wave(0.5, -0.1), DVec3::new(0.2, 0.1, 0.02)), &hole),
    );
    let (mut a, mut b) = (image(0, &fa0, 0.06), image(1, &fb0, 0.06));
    let mut da = DeviceImage::new(&d, &a, false).unwrap();
    let mut db = DeviceImage::new(&d, &b, false).unwrap();
    let mut total = 0;
    for frame in 0..3 {
        let t = frame as f64 * 0.3;
        a.update_positions(&patch(wave(t, 0.15), DVec3::ZERO), &Pose64::IDENTITY)
            .unwrap();
        b.update_positions(
            &patch(wave(0.5 - t, -0.1), DVec3::new(0.2, 0.1, 0.02)),
            &Pose64::IDENTITY,
        )
        .unwrap();
        da.update(&d, &a).unwrap();
        db.update(&d, &b).unwrap();
        let (ha, hb) = (HierarchyImage::build(&a), HierarchyImage::build(&b));
        for mode in [Mode::Approximate, Mode::Exact] {
            let cpu = collide_images((&a, &ha), (&b, &hb), mode);
            let dev = d.image_collide((&a, &da), (&b, &db), mode).unwrap();
            assert_eq!(dev, cpu, "frame {frame} {mode:?}");
            total += cpu.len();
        }
        // The other order too (the deeper tree descends alone first when sizes differ).
        let cpu = collide_images((&b, &hb), (&a, &ha), Mode::Approximate);
        assert_eq!(
            d.image_collide((&b, &db), (&a, &da), Mode::Approximate)
                .unwrap(),
            cpu
        );
    }
    assert!(total > 0, "the sheets touch");
}

#[test]
fn collision_of_unequal_sizes_and_one_quad_images() {
    let d = Device::for_tests();
    let fa = TrimmedFace::untrimmed(patch(wave(0.1, 0.1), DVec3::ZERO)).unwrap();
    let fb = TrimmedFace::untrimmed(patch(wave(0.7, 0.1), DVec3::new(0.1, 0.0, 0.01))).unwrap();
    for (ea, eb) in [(0.02, 0.2), (0.2, 0.02), (5.0, 0.05), (5.0, 5.0)] {
        let (a, b) = (image(0, &fa, ea), image(1, &fb, eb));
        let (da, db) = (
            DeviceImage::new(&d, &a, false).unwrap(),
            DeviceImage::new(&d, &b, false).unwrap(),
        );
        let cpu = cpu_pairs(&a, &b);
        let dev = d
            .image_collide((&a, &da), (&b, &db), Mode::Approximate)
            .unwrap();
        assert_eq!(dev, cpu, "eps {ea} / {eb}");
    }
}

/// A sheet folded over itself: the second half mirrored back above the first.
fn folded(h: &[f64]) -> TrimmedFace {
    let pts = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            let x = [0.0, 1.0, 1.0, 0.1][i];
            let z = [0.0, 0.0, 0.6, -0.05][i] + 0.1 * h[k];
            DVec3::new(x, j as f64 / 3.0, z)
        })
        .collect();
    TrimmedFace::untrimmed(NurbsSurface::bezier([3, 3], pts, None).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    /// Self-collision on the device equals the CPU's with and without the normal test, in both
    /// modes, on folded sheets with random bumps.
    #[test]
    fn self_collision_equals_cpu(h in proptest::collection::vec(-1.0f64..1.0, 16), eps in 0.08f64..0.25) {
        let d = Device::for_tests();
        let img = image(0, &folded(&h), eps);
        let hi = HierarchyImage::build_with_signs(&img);
        let dev = DeviceImage::new(&d, &img, true).unwrap();
        let mut reported = 0;
        for mode in [Mode::Approximate, Mode::Exact] {
            for normal in [false, true] {
                let cpu = self_collide_image(&img, &hi, mode, normal);
                prop_assert_eq!(d.image_self_collide((&img, &dev), mode, normal).unwrap(), cpu);
                reported += usize::from(mode == Mode::Approximate && !normal);
            }
        }
        prop_assert!(reported > 0);
    }
}

#[test]
fn frontier_overflow_grows_and_reruns() {
    // Two nearly coincident flat sheets (closer than the boxes' f32 padding): every quad meets
    // its 3 x 3 neighbours, far more leaf pairs than the first query's frontier holds.
    let d = Device::for_tests();
    let fa = TrimmedFace::untrimmed(patch(|_, _| 0.0, DVec3::ZERO)).unwrap();
    let fb = TrimmedFace::untrimmed(patch(|_, _| 0.0, DVec3::new(0.0, 0.0, 1e-7))).unwrap();
    let (a, b) = (image(0, &fa, 0.04), image(1, &fb, 0.04));
    let (da, db) = (
        DeviceImage::new(&d, &a, false).unwrap(),
        DeviceImage::new(&d, &b, false).unwrap(),
    );
    let cpu = cpu_pairs(&a, &b);
    assert!(cpu.len() > gprox_cuda::geometry_image::FRONTIER_CAPACITY as usize);
    let before = d.ops();
    let dev = d
        .image_collide((&a, &da), (&b, &db), Mode::Approximate)
        .unwrap();
    let used = d.ops() - before;
    assert_eq!(dev, cpu);
    assert!(used.syncs >= 2, "the first run overflowed: {used:?}");
    // The grown frontier is kept: the next query takes one synchronisation.
    let before = d.ops();
    assert_eq!(
        d.image_collide((&a, &da), (&b, &db), Mode::Approximate)
            .unwrap(),
        cpu
    );
    let used = d.ops() - before;
    assert_eq!((used.syncs, used.allocations), (1, 0));
}

#[test]
fn warm_frame_op_budget() {
    let d = Device::for_tests();
    let fa = TrimmedFace::untrimmed(patch(wave(0.0, 0.15), DVec3::ZERO)).unwrap();
    let fb = TrimmedFace::untrimmed(patch(wave(0.4, -0.1), DVec3::new(0.2, 0.1, 0.02))).unwrap();
    let (mut a, b) = (image(0, &fa, 0.06), image(1, &fb, 0.06));
    let mut da = DeviceImage::new(&d, &a, false).unwrap();
    let db = DeviceImage::new(&d, &b, false).unwrap();
    // The first pass over the frames warms the pool up; the second is measured.
    for pass in 0..2 {
        for frame in 0..3 {
            let s = patch(wave(frame as f64 * 0.2, 0.15), DVec3::ZERO);
            a.update_positions(&s, &Pose64::IDENTITY).unwrap();
            let before = d.ops();
            da.update(&d, &a).unwrap();
            let update = d.ops() - before;
            // Positions up (12 B a texel), one launch per five stored levels, no wait, no
            // allocation.
            assert_eq!(update.h2d_bytes, 12 * a.positions.len() as u64);
            assert_eq!(update.launches, da.build_launches() as u64);
            assert_eq!(
                (update.syncs, update.d2h_bytes, update.allocations),
                (0, 0, 0)
            );
            let before = d.ops();
            let pairs = d
                .image_collide((&a, &da), (&b, &db), Mode::Approximate)
                .unwrap();
            let query = d.ops() - before;
            assert!(!pairs.is_empty());
            if pass == 0 {
                continue;
            }
            // Root pair, one step per level of the deeper tree, the keys, the sort (three
            // launches per byte of key), the output: one wait, the header and 8 B per pair back,
            // nothing up, no allocation.
            assert_eq!(
                query.launches,
                collide_query_launches(&a, &b, false),
                "{query:?}"
            );
            assert_eq!(query.syncs, 1);
            assert_eq!(query.h2d_bytes, 0);
            assert_eq!(query.d2h_bytes, 16 + 8 * pairs.len() as u64);
            assert_eq!(query.allocations, 0);
        }
    }
}

#[test]
fn layouts_match() {
    use std::mem::{offset_of, size_of};
    let check = |name: &str, rust: usize| assert_eq!(emulator_layout(name), rust, "{name}");
    check("sizeof(ImageFace)", size_of::<ImageFace>());
    check(
        "offsetof(ImageFace, positions)",
        offset_of!(ImageFace, positions),
    );
    check(
        "offsetof(ImageFace, quad_stencil)",
        offset_of!(ImageFace, quad_stencil),
    );
    check("offsetof(ImageFace, boxes)", offset_of!(ImageFace, boxes));
    check("offsetof(ImageFace, signs)", offset_of!(ImageFace, signs));
    check("offsetof(ImageFace, width)", offset_of!(ImageFace, width));
    check("offsetof(ImageFace, height)", offset_of!(ImageFace, height));
    check("offsetof(ImageFace, pad)", offset_of!(ImageFace, pad));
    check("offsetof(ImageFace, levels)", offset_of!(ImageFace, levels));
    check(
        "offsetof(ImageFace, level_offset)",
        offset_of!(ImageFace, level_offset),
    );
    check("sizeof(ImageBuildParams)", size_of::<ImageBuildParams>());
    check(
        "offsetof(ImageBuildParams, level)",
        offset_of!(ImageBuildParams, level),
    );
    check(
        "sizeof(ImageTraverseParams)",
        size_of::<ImageTraverseParams>(),
    );
    check(
        "offsetof(ImageTraverseParams, b)",
        offset_of!(ImageTraverseParams, b),
    );
    check(
        "offsetof(ImageTraverseParams, frontier_in)",
        offset_of!(ImageTraverseParams, frontier_in),
    );
    check(
        "offsetof(ImageTraverseParams, out)",
        offset_of!(ImageTraverseParams, out),
    );
    check(
        "offsetof(ImageTraverseParams, capacity)",
        offset_of!(ImageTraverseParams, capacity),
    );
    check(
        "offsetof(ImageTraverseParams, step)",
        offset_of!(ImageTraverseParams, step),
    );
    check(
        "offsetof(ImageTraverseParams, self_mode)",
        offset_of!(ImageTraverseParams, self_mode),
    );
    check(
        "offsetof(ImageTraverseParams, last)",
        offset_of!(ImageTraverseParams, last),
    );
    check(
        "offsetof(ImageTraverseParams, keys)",
        offset_of!(ImageTraverseParams, keys),
    );
    check(
        "offsetof(ImageTraverseParams, totals)",
        offset_of!(ImageTraverseParams, totals),
    );
    check(
        "offsetof(ImageTraverseParams, shift_ia)",
        offset_of!(ImageTraverseParams, shift_ia),
    );
    check(
        "offsetof(ImageTraverseParams, shift_ib)",
        offset_of!(ImageTraverseParams, shift_ib),
    );
    check(
        "offsetof(ImageTraverseParams, corners)",
        offset_of!(ImageTraverseParams, corners),
    );
    check(
        "offsetof(ImageTraverseParams, exact)",
        offset_of!(ImageTraverseParams, exact),
    );
    check(
        "offsetof(ImageTraverseParams, corner_capacity)",
        offset_of!(ImageTraverseParams, corner_capacity),
    );
    check("sizeof(ImageUndecided)", size_of::<ImageUndecided>());
    check("offsetof(ImageUndecided, a)", offset_of!(ImageUndecided, a));
    check("offsetof(ImageUndecided, b)", offset_of!(ImageUndecided, b));
    check("sizeof(ImageEvalParams)", size_of::<ImageEvalParams>());
    check(
        "offsetof(ImageEvalParams, points)",
        offset_of!(ImageEvalParams, points),
    );
    check(
        "offsetof(ImageEvalParams, v_basis)",
        offset_of!(ImageEvalParams, v_basis),
    );
    check(
        "offsetof(ImageEvalParams, pose)",
        offset_of!(ImageEvalParams, pose),
    );
    check(
        "offsetof(ImageEvalParams, width)",
        offset_of!(ImageEvalParams, width),
    );
    check(
        "offsetof(ImageEvalParams, degree_v)",
        offset_of!(ImageEvalParams, degree_v),
    );
    assert_eq!(emulator_layout("sizeof(Nothing)"), usize::MAX);
}
