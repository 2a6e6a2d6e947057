//! Exact mode of geometry images on the device (`gprox_gi_exact` in `cuda/geometry_image.cu`):
//! the filtered triangle test of `tri_tri.cuh` on every leaf pair's quads, the host's exact
//! `quad_corners_intersect` on the corners of the pairs it leaves undecided. Pair for pair the
//! CPU's `collide_images` / `self_collide_image` in exact mode (themselves tested against brute
//! force over all quads), on coplanar, touching and random sheets where the filter must leave
//! pairs undecided; the undecided records grow and retry; a warm exact query's op budget reads
//! back no position.

#[path = "common/sheets.rs"]
mod sheets;

use gprox_cuda::geometry_image::ImageQueryStats;
use gprox_cuda::{Device, DeviceImage};
use gprox_geometry::freeform::{NurbsSurface, TrimmedFace};
use gprox_geometry::glam::DVec3;
use gprox_query::geometry_image::{
    collide_images, self_collide_image, GeometryImage, HierarchyImage, Mode, TexelPair,
};
use proptest::prelude::*;
use sheets::{collide_query_launches, image, patch};

/// The CPU's pairs of `a` and `b` in `mode` (fresh hierarchies).
fn cpu(a: &GeometryImage, b: &GeometryImage, mode: Mode) -> Vec<TexelPair> {
    let (ha, hb) = (HierarchyImage::build(a), HierarchyImage::build(b));
    collide_images((a, &ha), (b, &hb), mode)
}

/// Both modes of `a` against `b` on the device equal the CPU's; exact pairs are approximate
/// ones. Returns the count of exact pairs and what the device sent back.
fn check_pair(
    d: &Device,
    a: &GeometryImage,
    b: &GeometryImage,
    what: &str,
) -> (usize, ImageQueryStats) {
    let (da, db) = (
        DeviceImage::new(d, a, false).unwrap(),
        DeviceImage::new(d, b, false).unwrap(),
    );
    let approx = d
        .image_collide((a, &da), (b, &db), Mode::Approximate)
        .unwrap();
    assert_eq!(approx, cpu(a, b, Mode::Approximate), "{what}");
    let (exact, stats) = d
        .image_collide_stats((a, &da), (b, &db), Mode::Exact)
        .unwrap();
    assert_eq!(exact, cpu(a, b, Mode::Exact), "{what}");
    assert!(
        exact.iter().all(|p| approx.binary_search(p).is_ok()),
        "{what}"
    );
    // Only pairs the filter could not certify apart come back, at least the exact ones.
    assert!(
        stats.returned >= exact.len() && stats.returned <= approx.len(),
        "{what}"
    );
    assert!(stats.undecided <= stats.returned, "{what}");
    (exact.len(), stats)
}

/// A flat bilinear sheet `[x0, x0 + s] × [y0, y0 + s]` at height `z` (corner heights `dz` added
/// along x).
fn flat(x0: f64, y0: f64, s: f64, z: f64, dz: f64) -> TrimmedFace {
    bilinear((0..4).map(|k| {
        let (i, j) = ((k / 2) as f64, (k % 2) as f64);
        DVec3::new(x0 + s * i, y0 + s * j, z + dz * i)
    }))
}

/// The bilinear sheet of corners 00, 01, 10, 11.
fn bilinear(corners: impl Iterator<Item = DVec3>) -> TrimmedFace {
    let pts = corners.collect();
    TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap()
}

/// A square of side 0.5 in the plane z = 0 turned by 30° about (0.5, 0.5).
fn turned() -> TrimmedFace {
    let (s, c) = 30f64.to_radians().sin_cos();
    bilinear((0..4).map(move |k| {
        let (x, y) = (0.5 * (k / 2) as f64 - 0.25, 0.5 * (k % 2) as f64 - 0.25);
        DVec3::new(0.5 + c * x - s * y, 0.5 + s * x + c * y, 0.0)
    }))
}

/// Coplanar overlapping sheets (every orientation is exactly zero), a sheet touching another
/// along an edge, sheets a hair apart and crossing at a tiny angle: the device equals the CPU
/// pair for pair, and the coplanar and touching cases do leave pairs to the host. On the turned
/// coplanar square, quads whose boxes overlap but whose triangles do not are dropped there.
#[test]
fn coplanar_and_touching_sheets_leave_pairs_to_the_host() {
    let d = Device::for_tests();
    let base = TrimmedFace::untrimmed(patch(|_, _| 0.0, DVec3::ZERO)).unwrap();
    let a = image(0, &base, 0.08);
    let mut dropped = 0;
    let cases = [
        ("coplanar", flat(0.37, 0.21, 0.5, 0.0, 0.0), true),
        ("coplanar, turned", turned(), true),
        // Rises from z = 0 along its edge x = 0.4: touches the base there.
        ("touching edge", flat(0.4, 0.1, 0.5, 0.0, 0.3), true),
        ("a hair above", flat(0.3, 0.3, 0.4, 1e-9, 0.0), false),
        ("tiny angle", flat(0.2, 0.2, 0.5, -1e-7, 4e-7), false),
    ];
    for (what, face, must_undecide) in cases {
        let b = image(1, &face, 0.08);
        let (found, stats) = check_pair(&d, &a, &b, what);
        if must_undecide {
            assert!(found > 0, "{what}: the sheets meet");
            assert!(
                stats.undecided > 0,
                "{what}: zero orientations stay undecided"
            );
        }
        dropped += stats.returned - found;
    }
    assert!(
        dropped > 0,
        "the host's exact test drops some undecided pairs"
    );
}

/// A sheet folded back in its own plane (the flap lies on the base): self-collision in exact
/// mode, with and without the normal test, equals the CPU's, and its coplanar pairs are
/// decided on the host.
#[test]
fn coplanar_fold_self_collision_decided_on_the_host() {
    let d = Device::for_tests();
    let pts = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            DVec3::new([0.0, 1.0, 1.0, 0.1][i], j as f64 / 3.0, 0.0)
        })
        .collect();
    let face = TrimmedFace::untrimmed(NurbsSurface::bezier([3, 3], pts, None).unwrap()).unwrap();
    let img = image(0, &face, 0.1);
    let hi = HierarchyImage::build_with_signs(&img);
    let dev = DeviceImage::new(&d, &img, true).unwrap();
    for normal in [false, true] {
        let (got, stats) = d
            .image_self_collide_stats((&img, &dev), Mode::Exact, normal)
            .unwrap();
        assert_eq!(got, self_collide_image(&img, &hi, Mode::Exact, normal));
        if !normal {
            assert!(!got.is_empty() && stats.undecided > 0, "{stats:?}");
        }
    }
}

/// Bicubic sheet with heights on a coarse grid (multiples of 0.05), so coincident and touching
/// control nets are frequent.
fn coarse(h: &[i32], shift: DVec3) -> TrimmedFace {
    TrimmedFace::untrimmed(patch(|i, j| 0.05 * f64::from(h[4 * i + j]), shift)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Random coarse sheets, on one height level or a step apart: exact mode on the device
    /// equals the CPU's pair for pair.
    #[test]
    fn random_coarse_sheets_equal_cpu(
        ha in proptest::collection::vec(-1i32..=1, 16),
        hb in proptest::collection::vec(-1i32..=1, 16),
        dz in -1i32..=1,
        dx in 0i32..=4,
    ) {
        let d = Device::for_tests();
        let shift = DVec3::new(0.1 * f64::from(dx), 0.25, 0.05 * f64::from(dz));
        let (a, b) = (image(0, &coarse(&ha, DVec3::ZERO), 0.12), image(1, &coarse(&hb, shift), 0.12));
        check_pair(&d, &a, &b, "random");
    }
}

/// More undecided pairs than the first query's records hold: the host grows them and runs
/// again (no pair is lost); the grown records are kept, so the next query waits once.
#[test]
fn undecided_records_grow_and_rerun() {
    let d = Device::for_tests();
    let a = image(0, &flat(0.0, 0.0, 1.0, 0.0, 0.0), 0.02);
    let b = image(1, &flat(0.13, 0.07, 0.8, 0.0, 0.0), 0.02);
    let (da, db) = (
        DeviceImage::new(&d, &a, false).unwrap(),
        DeviceImage::new(&d, &b, false).unwrap(),
    );
    let want = cpu(&a, &b, Mode::Exact);
    let before = d.ops();
    let (got, stats) = d
        .image_collide_stats((&a, &da), (&b, &db), Mode::Exact)
        .unwrap();
    let used = d.ops() - before;
    assert_eq!(got, want);
    assert!(stats.undecided > 256, "{stats:?}");
    assert!(
        used.syncs >= 2,
        "the first run had too few records: {used:?}"
    );
    let before = d.ops();
    assert_eq!(
        d.image_collide((&a, &da), (&b, &db), Mode::Exact).unwrap(),
        want
    );
    let used = d.ops() - before;
    assert_eq!((used.syncs, used.allocations), (1, 0));
}

/// A warm exact query: the same launches as an approximate one (the exact leaf kernel in place
/// of the keys; one more key bit), one wait, nothing up, no allocation, and back only the header,
/// 8 B per pair not certified apart and 100 B per undecided pair: far below the 12 B per texel a
/// position read-back took.
#[test]
fn warm_exact_query_op_budget() {
    let d = Device::for_tests();
    let tilt = |i: usize, _: usize| 0.2 * (i as f64 / 3.0 - 0.5);
    let a = image(
        0,
        &TrimmedFace::untrimmed(patch(tilt, DVec3::ZERO)).unwrap(),
        0.05,
    );
    let b = image(1, &flat(0.1, 0.1, 0.8, 0.0, 0.0), 0.05);
    let (da, db) = (
        DeviceImage::new(&d, &a, false).unwrap(),
        DeviceImage::new(&d, &b, false).unwrap(),
    );
    let approx = cpu(&a, &b, Mode::Approximate);
    for pass in 0..2 {
        let before = d.ops();
        let (pairs, stats) = d
            .image_collide_stats((&a, &da), (&b, &db), Mode::Exact)
            .unwrap();
        let query = d.ops() - before;
        assert_eq!(pairs, cpu(&a, &b, Mode::Exact));
        assert!(!pairs.is_empty());
        if pass == 0 {
            continue;
        }
        // Most leaf pairs are certified on the device: fewer come back than overlap.
        assert!(
            stats.returned < approx.len(),
            "{stats:?} of {}",
            approx.len()
        );
        assert_eq!(
            query.launches,
            collide_query_launches(&a, &b, true),
            "{query:?}"
        );
        assert_eq!((query.syncs, query.h2d_bytes, query.allocations), (1, 0, 0));
        let back = 16 + 8 * stats.returned as u64 + 100 * stats.undecided as u64;
        assert_eq!(query.d2h_bytes, back, "{query:?} {stats:?}");
        let texels = (a.positions.len() + b.positions.len()) as u64;
        assert!(query.d2h_bytes < 12 * texels, "{query:?}");
    }
}
