//! Self-intersection volume of one closed mesh (§5.1.3 of Hoff et al.): the samples around
//! which the mesh winds at least twice (a ray from them leaves at least two more volumes than
//! it enters), e.g. where two closed parts of one mesh overlap.

use rayon::prelude::*;

use super::column::{ColumnScratch, ColumnTile};
use super::lattice::{jobs, Lattice};
use super::{check_cells, prepare, ImageSpaceError, ImageSpaceOptions};
use crate::collide::{CollisionObject, Side};

/// Result of [`self_intersection_volume`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfIntersection {
    /// The lattice (anchored at the low corner of the mesh's box).
    pub lattice: Lattice,
    /// Samples with `|winding| ≥ 2`, not on the surface.
    pub count: u64,
    /// Cells some face may meet (only those can be misclassified).
    pub uncertain: u64,
}

impl SelfIntersection {
    /// Volume estimate: `count · h³`.
    pub fn volume(&self) -> f64 {
        self.count as f64 * self.lattice.cell_volume()
    }

    /// Error bound of [`SelfIntersection::volume`]: `uncertain · h³` (loose: it counts every
    /// cell near the surface, not only those near the self-intersection).
    pub fn volume_bound(&self) -> f64 {
        self.uncertain as f64 * self.lattice.cell_volume()
    }
}

/// The volume where the closed mesh `o` winds at least twice, sampled over its box.
///
/// Errors when the mesh is not closed and oriented, its tree or pose is invalid, the tolerance
/// is not positive, or the box needs more than `max_cells` cells.
pub fn self_intersection_volume(
    o: &CollisionObject<'_>,
    options: &ImageSpaceOptions,
) -> Result<SelfIntersection, ImageSpaceError> {
    let h = options.spacing()?;
    let w = prepare(o, Side::A)?;
    let root = &w.nodes[w.root() as usize];
    let lattice = Lattice {
        origin: root.lo,
        spacing: h,
    };
    let cells = lattice
        .cover(root.lo, root.hi)
        .ok_or(ImageSpaceError::TooManyCells {
            cells: u64::MAX,
            max: options.max_cells,
        })?;
    check_cells(cells.count(), options)?;
    let (count, uncertain) = jobs(&[cells], options.tile)
        .par_iter()
        .map(|job| {
            let t = ColumnTile::new(&w, &lattice, job.k, &job.tile);
            let (mut col, mut scratch) = (Vec::new(), ColumnScratch::default());
            let (mut count, mut uncertain) = (0u64, 0u64);
            for (cu, cv) in job.columns() {
                t.column(cu, cv, &mut col, &mut scratch);
                for s in &col {
                    count += u64::from(!s.surface && s.winding.abs() >= 2);
                    uncertain += u64::from(s.near);
                }
            }
            (count, uncertain)
        })
        .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    Ok(SelfIntersection {
        lattice,
        count,
        uncertain,
    })
}
