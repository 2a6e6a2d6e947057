//! The teapot table (paper Table 1(a)); prints the measured row next to the paper's.

use gprox_bvh::coons::teapot_table;

#[test]
fn teapot_table_is_consistent() {
    let rows = teapot_table(None).unwrap();
    println!("eps      coons  (paper)  bilinear     bytes  (paper)  build s (paper)");
    for r in &rows {
        println!(
            "{:.0e}  {:6} ({:6})  {:9}  {:7} ({:6})  {:.3} ({:.2})",
            r.epsilon,
            r.coons_patches,
            r.paper_patches,
            r.bilinear,
            r.bytes,
            r.paper_bytes,
            r.build_seconds,
            r.paper_seconds
        );
    }
    // Tighter tolerance never needs fewer patches, and every patch has at least one bilinear.
    for w in rows.windows(2) {
        assert!(w[1].coons_patches >= w[0].coons_patches);
        assert!(w[1].bytes >= w[0].bytes);
    }
    // At least one Coons patch per (merged) surface; at low precision there may be fewer
    // patches than the 32 Bézier pieces (paper §3: 44 patches from 160 Bézier surfaces at 1e-2).
    let surfaces =
        gprox_geometry::freeform::merge::merge_adjacent(&gprox_geometry::freeform::teapot());
    for r in &rows {
        assert!(r.coons_patches >= surfaces.len() && r.bilinear >= r.coons_patches as u64);
    }
}

#[test]
fn merged_teapot_has_fewer_surfaces_and_same_geometry() {
    use gprox_geometry::freeform::merge::{join_along_u, merge_adjacent, transpose};
    let t = gprox_geometry::freeform::teapot();
    let m = merge_adjacent(&t);
    println!("teapot: {} patches -> {} surfaces", t.len(), m.len());
    assert!(m.len() < t.len());
    let pieces: usize = m.iter().map(|s| s.bezier_patches().len()).sum();
    assert_eq!(pieces, t.len());
    // Joining the two halves of a split surface gives back the surface.
    for s in &t {
        let (a, b) = s.split(true, 0.4).unwrap();
        let j = join_along_u(&a, &b).unwrap();
        let (c, d) = s.split(false, 0.7).unwrap();
        let k = transpose(&join_along_u(&transpose(&c), &transpose(&d)).unwrap());
        for (u, v) in [(0.1, 0.2), (0.5, 0.9), (0.95, 0.3)] {
            assert!((j.point(u, v) - s.point(u, v)).length() < 1e-12);
            assert!((k.point(u, v) - s.point(u, v)).length() < 1e-12);
        }
    }
}
