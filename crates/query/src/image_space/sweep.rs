//! An intersection query split at its classification (§5.1), so that another backend can
//! classify the samples: [`IntersectionSweep`] and its tiles.

use rayon::prelude::*;
use std::borrow::Cow;

use super::column::{ColumnScratch, ColumnTile, Sample};
use super::intersect::{Intersection, Part, Plan};
use super::lattice::{CellBox, Lattice};
use super::sweep_depths::SweepSamples;
use super::{prepare_pair, ImageSpaceError, ImageSpaceOptions, SAMPLE_UNDECIDED};
use crate::collide::CollisionObject;
use crate::world::World;

/// One tile of an [`IntersectionSweep`]: a box of cells swept in ray columns along `axis`.
///
/// Its columns are numbered `c = (cv − lo[v]) · nu + (cu − lo[u])` with `u = axis + 1`,
/// `v = axis + 2` (mod 3) and `nu = hi[u] − lo[u]`; the samples of a column run from
/// `lo[axis]` upwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepTile {
    /// Index of its region in [`Intersection::regions`].
    pub region: u32,
    /// The column axis (0, 1 or 2).
    pub axis: u32,
    /// Its cells.
    pub cells: CellBox,
}

impl SweepTile {
    /// Number of ray columns.
    pub fn columns(&self) -> u32 {
        let k = self.axis as usize;
        let (u, v) = ((k + 1) % 3, (k + 2) % 3);
        (self.cells.hi[u] - self.cells.lo[u]) * (self.cells.hi[v] - self.cells.lo[v])
    }

    /// Samples per column.
    pub fn column_len(&self) -> u32 {
        let k = self.axis as usize;
        self.cells.hi[k] - self.cells.lo[k]
    }

    /// Samples of the tile (per mesh).
    pub fn samples(&self) -> u64 {
        u64::from(self.columns()) * u64::from(self.column_len())
    }
}

/// An intersection query split at its classification (§5.1), so that another backend (the
/// device kernel `gprox_image_columns` of gprox-cuda) can classify the samples: made by
/// [`IntersectionSweep::new`] (validation, world meshes, localisation, lattice, tiles), finished
/// by [`IntersectionSweep::finish`] from one code per sample and mesh (bits
/// [`super::SAMPLE_INSIDE`], [`super::SAMPLE_NEAR`], [`super::SAMPLE_SURFACE`]). A column whose
/// first code carries [`super::SAMPLE_UNDECIDED`] is classified again here, exactly, so the
/// result is always [`intersect`]'s.
///
/// ```
/// use gprox_geometry::{scene::torus, transform::Pose64};
/// use gprox_query::collide::CollisionObject;
/// use gprox_query::image_space::{intersect, ImageSpaceOptions, IntersectionSweep};
/// let mesh = torus(1.0, 0.4, 24, 12).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&mesh);
/// let a = CollisionObject::new(&mesh, &bvh, Pose64::IDENTITY).unwrap();
/// let mut pose = Pose64::IDENTITY;
/// pose.rows[0][3] = 0.5;
/// let b = CollisionObject::new(&mesh, &bvh, pose).unwrap();
/// let opts = ImageSpaceOptions::new(0.1);
/// let sweep = IntersectionSweep::new(&a, &b, &opts).unwrap();
/// // Classify every tile on the CPU (what a device would do), then finish.
/// let codes: Vec<u8> = (0..sweep.tiles().len()).flat_map(|t| sweep.classify_tile(t)).collect();
/// let done = sweep.finish(&codes).unwrap();
/// assert_eq!(done.host_columns, 0);
/// assert_eq!(done.intersection, intersect(&a, &b, &opts).unwrap());
/// ```
pub struct IntersectionSweep<'a> {
    wa: World<'a>,
    wb: World<'a>,
    plan: Plan,
    tiles: Vec<SweepTile>,
    offsets: Vec<u64>,
    depths: bool,
}

/// What [`IntersectionSweep::finish`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepOutcome {
    /// The result (equal to [`intersect`]'s).
    pub intersection: Intersection,
    /// Columns (per mesh) whose codes were undecided and were classified on the CPU.
    pub host_columns: u64,
    /// Depths (per sample and mesh) computed on the CPU: all of them when
    /// [`SweepSamples::finish`] got none, else those the backend left undecided.
    pub host_depths: u64,
}

impl<'a> IntersectionSweep<'a> {
    /// Validates both objects and plans the sweep (errors as [`intersect`]).
    pub fn new(
        a: &CollisionObject<'a>,
        b: &CollisionObject<'a>,
        options: &ImageSpaceOptions,
    ) -> Result<Self, ImageSpaceError> {
        let h = options.spacing()?;
        let (wa, wb) = prepare_pair(a, b)?;
        let plan = Plan::new(&wa, &wb, h, options)?;
        let tiles: Vec<SweepTile> = plan
            .jobs
            .iter()
            .map(|j| SweepTile {
                region: j.region,
                axis: j.k as u32,
                cells: j.tile,
            })
            .collect();
        let mut offsets = Vec::with_capacity(tiles.len() + 1);
        let mut at = 0u64;
        for t in &tiles {
            offsets.push(at);
            at += 2 * t.samples();
        }
        offsets.push(at);
        Ok(Self {
            wa,
            wb,
            plan,
            tiles,
            offsets,
            depths: options.depths,
        })
    }

    /// The lattice.
    pub fn lattice(&self) -> &Lattice {
        &self.plan.lattice
    }

    /// The tiles, in the order of their codes.
    pub fn tiles(&self) -> &[SweepTile] {
        &self.tiles
    }

    /// Where each tile's codes start in the codes of the sweep (one more entry: the total).
    /// Tile `t` holds `2 · samples` codes: those against A (column by column), then against B.
    pub fn code_offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The codes of tile `t` classified on the CPU (exact), in the layout of
    /// [`IntersectionSweep::code_offsets`]: the reference a device must equal.
    pub fn classify_tile(&self, t: usize) -> Vec<u8> {
        let job = &self.plan.jobs[t];
        let mut out = Vec::with_capacity(2 * self.tiles[t].samples() as usize);
        let mut col = Vec::new();
        let mut scratch = ColumnScratch::default();
        for w in [&self.wa, &self.wb] {
            let tile = ColumnTile::new(w, &self.plan.lattice, job.k, &job.tile);
            for (cu, cv) in job.columns() {
                tile.column(cu, cv, &mut col, &mut scratch);
                out.extend(col.iter().map(Sample::code));
            }
        }
        out
    }

    /// The result from the codes of every sample (layout: [`IntersectionSweep::code_offsets`]);
    /// undecided columns are classified here, and every sample's depths computed on the CPU.
    /// Errors when `codes` has the wrong length.
    pub fn finish(self, codes: &[u8]) -> Result<SweepOutcome, ImageSpaceError> {
        self.classify(codes)?.finish(None)
    }

    /// The samples inside both meshes from the codes of every sample (layout:
    /// [`IntersectionSweep::code_offsets`]; undecided columns are classified here), their
    /// depths still to come ([`SweepSamples::finish`]). Errors when `codes` has the wrong
    /// length.
    pub fn classify(self, codes: &[u8]) -> Result<SweepSamples<'a>, ImageSpaceError> {
        let total = *self.offsets.last().unwrap_or(&0);
        if codes.len() as u64 != total {
            return Err(ImageSpaceError::BadCodes {
                expected: total,
                got: codes.len() as u64,
            });
        }
        let (wa, wb) = (&self.wa, &self.wb);
        let lattice = self.plan.lattice;
        let depths = self.depths && !self.plan.jobs.is_empty();
        let done: Vec<(Part, u64)> = self
            .plan
            .jobs
            .par_iter()
            .enumerate()
            .map(|(t, job)| {
                let n = self.tiles[t].samples() as usize;
                let len = self.tiles[t].column_len() as usize;
                let at = self.offsets[t] as usize;
                let (ca, cb) = codes[at..at + 2 * n].split_at(n);
                // The device's codes, with the undecided columns classified here.
                let mut sides = [Cow::Borrowed(ca), Cow::Borrowed(cb)];
                let mut fixed: [Option<ColumnTile<'_, '_>>; 2] = [None, None];
                let mut col = Vec::new();
                let mut scratch = ColumnScratch::default();
                let mut host = 0u64;
                for (c, (cu, cv)) in job.columns().enumerate() {
                    for (s, w) in [wa, wb].into_iter().enumerate() {
                        let column = c * len..(c + 1) * len;
                        if sides[s][column.clone()]
                            .first()
                            .is_some_and(|&x| x & SAMPLE_UNDECIDED != 0)
                        {
                            let tile = fixed[s].get_or_insert_with(|| {
                                ColumnTile::new(w, &lattice, job.k, &job.tile)
                            });
                            tile.column(cu, cv, &mut col, &mut scratch);
                            let out = &mut sides[s].to_mut()[column];
                            for (o, x) in out.iter_mut().zip(&col) {
                                *o = x.code();
                            }
                            host += 1;
                        }
                    }
                }
                let part = Part::from_codes(job, [&sides[0], &sides[1]], depths);
                (part, host)
            })
            .collect();
        let host_columns = done.iter().map(|d| d.1).sum();
        let parts = done.into_iter().map(|d| d.0).collect();
        Ok(SweepSamples::new(
            [self.wa, self.wb],
            self.plan,
            parts,
            host_columns,
        ))
    }
}
