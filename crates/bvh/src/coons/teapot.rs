//! The teapot table (paper Table 1(a)): Coons patch counts, bilinear counts, BVH bytes and
//! build time at ε = 1e-2 … 1e-5, for the embedded Utah teapot.

use gprox_geometry::freeform::merge::merge_adjacent;
use gprox_geometry::freeform::{teapot, NurbsSurface};

use super::{CoonsBvh, CoonsError, CoonsOptions};

/// One row of the teapot table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TeapotRow {
    /// Relative tolerance ε.
    pub epsilon: f64,
    /// Number of Coons patches (leaves).
    pub coons_patches: usize,
    /// Number of bilinear surfaces at the finest ε-list level.
    pub bilinear: u64,
    /// BVH memory in bytes.
    pub bytes: usize,
    /// Build time in seconds (hierarchy and basis cache).
    pub build_seconds: f64,
    /// Bytes of the basis-value cache kept next to the BVH (not in the paper's Table 1 size).
    pub cache_bytes: usize,
    /// The paper's Coons patch count at this ε (Table 1(a)).
    pub paper_patches: usize,
    /// The paper's BVH size in bytes.
    pub paper_bytes: usize,
    /// The paper's build time in seconds.
    pub paper_seconds: f64,
}

/// The paper's Table 1(a) teapot values: (ε, patches, bytes, seconds).
pub const PAPER_TEAPOT: [(f64, usize, usize, f64); 4] = [
    (1e-2, 44, 730, 0.14),
    (1e-3, 150, 2_700, 0.42),
    (1e-4, 492, 9_700, 1.65),
    (1e-5, 1_688, 55_000, 8.24),
];

/// Builds the Coons BVH of `surfaces` at ε = 1e-2 … 1e-5. With `None`, the embedded teapot's
/// 32 Bézier patches are first joined into B-spline surfaces along shared boundaries
/// ([`merge_adjacent`]), like the paper's 8 NURBS surfaces.
///
/// ```
/// let rows = gprox_bvh::coons::teapot_table(None).unwrap();
/// assert_eq!(rows.len(), 4);
/// ```
pub fn teapot_table(surfaces: Option<&[NurbsSurface]>) -> Result<Vec<TeapotRow>, CoonsError> {
    let owned;
    let surfaces = match surfaces {
        Some(s) => s,
        None => {
            owned = merge_adjacent(&teapot());
            &owned
        }
    };
    PAPER_TEAPOT
        .iter()
        .map(|&(epsilon, paper_patches, paper_bytes, paper_seconds)| {
            let bvh = CoonsBvh::build(
                surfaces,
                &CoonsOptions {
                    epsilon,
                    ..Default::default()
                },
            )?;
            Ok(TeapotRow {
                epsilon,
                coons_patches: bvh.leaf_count,
                bilinear: bvh.bilinear_count,
                bytes: bvh.memory_bytes(),
                build_seconds: bvh.build_seconds,
                cache_bytes: bvh.cache_bytes(),
                paper_patches,
                paper_bytes,
                paper_seconds,
            })
        })
        .collect()
}
