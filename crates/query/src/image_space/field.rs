//! The distance field of one closed mesh over a box of lattice cells (§5.2) and its gradient
//! (§5.3): per sample the exact unsigned distance to the surface through the world tree (the
//! brute-force minimum over all faces, so the error is zero up to the rounding of
//! `point_triangle_distance`; block by block, `depth.rs`), the closest point and face, signed by
//! the exact inside test.

use glam::DVec3;
use rayon::prelude::*;

use super::column::{ColumnScratch, ColumnTile};
use super::depth::{surface_points, DepthScratch, Surface};
use super::lattice::{cell_order, jobs, CellBox, Lattice};
use super::{check_cells, prepare, ImageSpaceError, ImageSpaceOptions};
use crate::collide::{CollisionObject, Side};

/// One sample of a distance field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceSample {
    /// Its lattice cell.
    pub cell: [u32; 3],
    /// Its position (the cell's centre).
    pub position: DVec3,
    /// Winding number of the mesh around the sample (0 outside; meaningless on the surface).
    pub winding: i32,
    /// The sample lies on a closed face (exactly).
    pub on_surface: bool,
    /// Unsigned distance to the surface.
    pub distance: f64,
    /// Closest point of the surface.
    pub closest: DVec3,
    /// Face holding `closest` (the smallest id among faces at the same distance).
    pub face: u32,
}

impl DistanceSample {
    /// Strictly inside the mesh (not on it, non-zero winding number).
    pub fn inside(&self) -> bool {
        !self.on_surface && self.winding != 0
    }

    /// Signed distance: negative strictly inside, positive outside, zero on the surface.
    pub fn signed_distance(&self) -> f64 {
        if self.inside() {
            -self.distance
        } else {
            self.distance
        }
    }

    /// Gradient of the signed distance at the sample: the unit vector from the closest point
    /// to the sample outside, its opposite inside (pointing outwards either way). `None` where
    /// the field is not differentiable for lack of a direction (on the surface).
    pub fn gradient(&self) -> Option<DVec3> {
        let d = self.position - self.closest;
        if self.distance == 0.0 || d.length_squared() == 0.0 {
            return None;
        }
        let g = d.normalize();
        Some(if self.inside() { -g } else { g })
    }
}

/// Result of [`distance_field`]: the samples of a box of cells in lattice order (`z`, `y`,
/// `x`).
#[derive(Clone, Debug, PartialEq)]
pub struct DistanceField {
    /// The lattice.
    pub lattice: Lattice,
    /// The cells sampled.
    pub cells: CellBox,
    /// One sample per cell, in lattice order.
    pub samples: Vec<DistanceSample>,
}

/// The signed distance field of the closed mesh `o` at the samples of `cells` of `lattice`,
/// with closest points, faces and winding numbers (see the module docs). The lattice fixes
/// the spacing; of `options` only `tile` and `max_cells` are used.
///
/// Errors when the mesh is not closed and oriented, its tree or pose is invalid, the lattice
/// is not finite and positive, or `cells` holds more than `max_cells` cells.
pub fn distance_field(
    o: &CollisionObject<'_>,
    lattice: &Lattice,
    cells: CellBox,
    options: &ImageSpaceOptions,
) -> Result<DistanceField, ImageSpaceError> {
    if !(lattice.origin.is_finite() && lattice.spacing.is_finite() && lattice.spacing > 0.0) {
        return Err(ImageSpaceError::BadLattice);
    }
    let w = prepare(o, Side::A)?;
    check_cells(cells.count(), options)?;
    let mut samples: Vec<DistanceSample> = if cells.count() == 0 {
        Vec::new()
    } else {
        let sf = Surface::new(&w);
        jobs(&[cells], options.tile)
            .par_iter()
            .flat_map_iter(|job| {
                let t = ColumnTile::new(&w, lattice, job.k, &job.tile);
                let (mut col, mut scratch) = (Vec::new(), ColumnScratch::default());
                let mut out = Vec::new();
                let mut cells = Vec::new();
                for (cu, cv) in job.columns() {
                    t.column(cu, cv, &mut col, &mut scratch);
                    for (i, s) in col.iter().enumerate() {
                        let cell = job.cell(cu, cv, i);
                        cells.push(cell);
                        out.push(DistanceSample {
                            cell,
                            position: lattice.center(cell),
                            winding: s.winding,
                            on_surface: s.surface,
                            distance: f64::NAN,
                            closest: DVec3::NAN,
                            face: u32::MAX,
                        });
                    }
                }
                let mut near = Vec::new();
                surface_points(
                    &sf,
                    lattice,
                    &cells,
                    &mut DepthScratch::default(),
                    &mut near,
                );
                for (s, q) in out.iter_mut().zip(&near) {
                    (s.distance, s.closest, s.face) = (q.distance, q.point, q.face);
                }
                out
            })
            .collect()
    };
    samples.sort_unstable_by_key(|s| cell_order(s.cell));
    Ok(DistanceField {
        lattice: *lattice,
        cells,
        samples,
    })
}
