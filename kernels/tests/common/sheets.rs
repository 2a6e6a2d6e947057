//! Sheets and images shared by the geometry-image kernel tests.
#![allow(dead_code)]

use gprox_cuda::DeviceImage;
use gprox_geometry::freeform::trimmed::{LoopRole, TrimLoop};
use gprox_geometry::freeform::{NurbsSurface, TrimmedFace};
use gprox_geometry::glam::{DVec2, DVec3};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{GeometryImage, HierarchyImage};

/// A bicubic Bézier patch over [0,1]² with heights `h(i, j)` on its 4 × 4 net, moved by `shift`.
pub fn patch(h: impl Fn(usize, usize) -> f64, shift: DVec3) -> NurbsSurface {
    let pts = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            DVec3::new(i as f64 / 3.0, j as f64 / 3.0, h(i, j)) + shift
        })
        .collect();
    NurbsSurface::bezier([3, 3], pts, None).unwrap()
}

/// `surface` with a polygonal hole (clockwise corners in (u, v)).
pub fn with_hole(surface: NurbsSurface, hole: &[DVec2]) -> TrimmedFace {
    let mut loops = TrimmedFace::untrimmed(surface.clone())
        .unwrap()
        .loops()
        .to_vec();
    loops.push(TrimLoop::polygon(LoopRole::Hole, hole).unwrap());
    TrimmedFace::new(surface, loops).unwrap()
}

/// The image of `face` (id `id`) at accuracy `eps`, unposed, unclipped.
pub fn image(id: u32, face: &TrimmedFace, eps: f64) -> GeometryImage {
    GeometryImage::generate(id, face, &Pose64::IDENTITY, eps, None)
        .unwrap()
        .unwrap()
}

/// Heights of a wave on the 4 × 4 net at time `t`.
pub fn wave(t: f64, amp: f64) -> impl Fn(usize, usize) -> f64 {
    move |i, j| amp * ((i as f64 + 2.0 * t) * 1.7).sin() * ((j as f64 - t) * 1.1).cos()
}

/// Radix passes of the leaf pair keys of `a` against `b`: bytes of the four quad index fields
/// (and exact mode's undecided bit).
pub fn key_passes(a: &GeometryImage, b: &GeometryImage, exact: bool) -> u64 {
    let bits = |n: usize| u64::from(usize::BITS - (n - 1).leading_zeros());
    let total = bits(a.width() - 1)
        + bits(a.height() - 1)
        + bits(b.width() - 1)
        + bits(b.height() - 1)
        + u64::from(exact);
    total.div_ceil(8).max(1)
}

/// Launches of a warm collision query of `a` against `b` (approximate or exact): the root pair
/// or the seed (one launch: every node pair of the levels after the first k steps, for the
/// most k < steps whose pairs number at most 4 096), one per remaining level step (the deeper
/// tree alone until both have as many levels left, then both), the keys (or the exact test),
/// the radix sort (one launch counting the digits, one per pass; its last pass writes the
/// approximate mode's output), exact mode's output kernel.
pub fn collide_query_launches(a: &GeometryImage, b: &GeometryImage, exact: bool) -> u64 {
    // Quads per side at each level of an image, the leaves first.
    let levels = |img: &GeometryImage| {
        let mut v = vec![(img.width() - 1, img.height() - 1)];
        while let Some(&(w, h)) = v.last().filter(|&&(w, h)| w > 1 || h > 1) {
            v.push((w.div_ceil(2), h.div_ceil(2)));
        }
        v
    };
    let (sa, sb) = (levels(a), levels(b));
    let (mut la, mut lb) = (sa.len() - 1, sb.len() - 1);
    let mut pairs_after = Vec::new();
    while la > 0 || lb > 0 {
        let (da, db) = (la > 0 && la >= lb, lb > 0 && lb >= la);
        la -= usize::from(da);
        lb -= usize::from(db);
        pairs_after.push(sa[la].0 * sa[la].1 * sb[lb].0 * sb[lb].1);
    }
    let steps = pairs_after.len();
    let seeded = pairs_after[..steps.saturating_sub(1)]
        .iter()
        .take_while(|&&n| n <= 4096)
        .count();
    1 + (steps - seeded) as u64 + 1 + (1 + key_passes(a, b, exact)) + u64::from(exact)
}

/// The device's levels equal the CPU's: boxes, signs, sizes, the leaf level unstored.
pub fn assert_same_levels(img: &GeometryImage, dev: &DeviceImage) {
    let cpu = HierarchyImage::build_with_signs(img);
    let got = dev.download_levels().unwrap();
    assert_eq!(got.len(), cpu.levels.len());
    for (l, (g, c)) in got.iter().zip(&cpu.levels).enumerate() {
        assert_eq!((g.width, g.height), (c.width, c.height), "level {l}");
        assert_eq!(g.boxes, c.boxes, "level {l}");
        assert_eq!(g.signs, c.signs, "level {l}");
    }
}
