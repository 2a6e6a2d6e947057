//! The basis-value cache of the Coons BVH (paper §6) changes no bound: every cell's bound with
//! the cache is bitwise equal to the bound evaluated directly, on the teapot (Bézier patches
//! and merged B-spline surfaces) and on the OpenCASCADE reference NURBS surfaces.

use gprox_bvh::coons::{CellBound, CoonsBvh, CoonsOptions};
use gprox_geometry::freeform::basis_cache::BasisCache;
use gprox_geometry::freeform::{load_nurbs_json, NurbsSurface};

#[path = "../../geometry/tests/common/nurbs_data.rs"]
mod nurbs_data;
use nurbs_data::{nurbs_dir, surface_files};

fn bits(b: &CellBound) -> Vec<u64> {
    let mut v: Vec<u64> = b
        .corners
        .iter()
        .flat_map(|c| c.to_array())
        .map(f64::to_bits)
        .collect();
    v.push(b.offset.to_bits());
    if let Some((c, r)) = b.sphere {
        v.extend(c.to_array().map(f64::to_bits));
        v.push(r.to_bits());
    }
    v
}

/// Compares cached and direct bounds of every cell down to Coons level `levels + 2` (beyond
/// the cached levels, where the cache is partly hit); returns the number of cells compared.
fn compare(name: &str, surfaces: &[NurbsSurface], epsilon: f64) -> usize {
    let bvh = CoonsBvh::build(
        surfaces,
        &CoonsOptions {
            epsilon,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!bvh.basis.is_empty(), "{name}: the build fills the cache");
    let mut direct = bvh.clone();
    direct.basis = BasisCache::default();
    let mut stack: Vec<(gprox_bvh::coons::Cell, u32)> = bvh
        .root_cells(surfaces)
        .into_iter()
        .map(|c| (c, 0))
        .collect();
    let mut n = 0;
    while let Some((c, coons_depth)) = stack.pop() {
        let (x, y) = (bvh.bound(surfaces, &c), direct.bound(surfaces, &c));
        assert_eq!(bits(&x), bits(&y), "{name}: cell {c:?}: {x:?} vs {y:?}");
        n += 1;
        let depth = coons_depth + u32::from(bvh.is_coons_level(&c));
        if depth <= u32::from(gprox_bvh::coons::build::DEFAULT_CACHE_LEVELS) + 2 {
            if let Some(k) = bvh.children(surfaces, &c) {
                stack.extend(k.map(|k| (k, depth)));
            }
        }
    }
    n
}

#[test]
fn cached_bounds_equal_direct_bounds_on_teapot() {
    let t = gprox_geometry::freeform::teapot();
    let n = compare("teapot", &t, 1e-3);
    let merged = gprox_geometry::freeform::merge::merge_adjacent(&t);
    let m = compare("merged teapot", &merged, 1e-4);
    assert!(n > 100 && m > 100, "{n} and {m} cells compared");
}

#[test]
fn cached_bounds_equal_direct_bounds_on_reference_nurbs() {
    let Some(dir) = nurbs_dir() else { return };
    let files = surface_files(&dir);
    assert!(files.len() >= 8);
    for f in files {
        let s = vec![load_nurbs_json(&f).unwrap()];
        compare(&f.display().to_string(), &s, 1e-3);
    }
}

#[test]
fn cache_memory_is_reported_and_shared_across_patches() {
    let t = gprox_geometry::freeform::teapot();
    let bvh = CoonsBvh::build(
        &t,
        &CoonsOptions {
            epsilon: 1e-3,
            ..Default::default()
        },
    )
    .unwrap();
    // All 32 Bézier patches share one knot vector, hence one table.
    assert_eq!(bvh.basis.table_count(), 1);
    assert!(bvh.cache_bytes() >= bvh.basis.len() * 8);
    let none = CoonsBvh::build(
        &t,
        &CoonsOptions {
            epsilon: 1e-3,
            cache_levels: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(none.basis.len() <= bvh.basis.len());
}
