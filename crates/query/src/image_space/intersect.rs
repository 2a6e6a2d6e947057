//! The intersection of two closed meshes on the lattice: the samples inside both, the volume
//! estimate with its error bound, and per sample the distance, closest point and face on both
//! surfaces (penetration depth and direction, §5.4).

use glam::DVec3;
use rayon::prelude::*;

use super::column::{ColumnScratch, ColumnTile, Sample};
use super::contact::{contacts, Contact};
use super::depth::{surface_points, DepthScratch, Surface, BLOCK};
use super::lattice::{cell_order, jobs, merge_disjoint, CellBox, Job, Lattice};
use super::{
    check_cells, prepare_pair, region, ImageSpaceError, ImageSpaceOptions, SAMPLE_INSIDE,
    SAMPLE_NEAR,
};
use crate::collide::CollisionObject;
use crate::world::World;

/// The nearest point of a surface to a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePoint {
    /// Distance from the sample (the minimum over all faces of
    /// [`gprox_geometry::tri_distance::point_triangle_distance`]).
    pub distance: f64,
    /// The closest point (world).
    pub point: DVec3,
    /// Its face (the smallest id among faces at the same distance).
    pub face: u32,
}

/// A sample strictly inside both meshes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntersectionSample {
    /// Its lattice cell.
    pub cell: [u32; 3],
    /// Its position (the cell's centre, [`Lattice::center`]).
    pub position: DVec3,
    /// Index of its region in [`Intersection::regions`].
    pub region: u32,
    /// Nearest point of A's surface (the depth of this point of B inside A).
    pub a: SurfacePoint,
    /// Nearest point of B's surface (the depth of this point of A inside B).
    pub b: SurfacePoint,
}

impl IntersectionSample {
    /// Penetration depth of the sample as a point of A inside B: its distance to B's surface.
    pub fn depth_in_b(&self) -> f64 {
        self.b.distance
    }

    /// Penetration depth of the sample as a point of B inside A: its distance to A's surface.
    pub fn depth_in_a(&self) -> f64 {
        self.a.distance
    }

    /// Unit direction that moves the sample out of B by the shortest way (towards `b.point`;
    /// zero when the distance is too small to give one).
    pub fn direction_out_of_b(&self) -> DVec3 {
        (self.b.point - self.position).normalize_or_zero()
    }

    /// Unit direction that moves the sample out of A by the shortest way.
    pub fn direction_out_of_a(&self) -> DVec3 {
        (self.a.point - self.position).normalize_or_zero()
    }
}

/// Result of [`intersect`].
#[derive(Clone, Debug, PartialEq)]
pub struct Intersection {
    lattice: Lattice,
    regions: Vec<CellBox>,
    samples: Vec<IntersectionSample>,
    count: u64,
    uncertain: u64,
    contacts: Vec<Contact>,
}

impl Intersection {
    /// The lattice (anchored at the low corner of the localised box; spacing from the
    /// tolerance).
    pub fn lattice(&self) -> &Lattice {
        &self.lattice
    }

    /// The disjoint boxes of cells swept (every point of `A ∩ B` lies in one of them).
    pub fn regions(&self) -> &[CellBox] {
        &self.regions
    }

    /// The samples strictly inside both meshes, by region then lattice order (`z`, `y`, `x`);
    /// empty when [`ImageSpaceOptions::depths`] is off.
    pub fn samples(&self) -> &[IntersectionSample] {
        &self.samples
    }

    /// Number of samples strictly inside both meshes.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Number of cells that may be misclassified (some face of A or B may meet them, and
    /// neither mesh is known to leave them wholly outside).
    pub fn uncertain(&self) -> u64 {
        self.uncertain
    }

    /// Volume estimate of `A ∩ B`: `count · h³`.
    pub fn volume(&self) -> f64 {
        self.count as f64 * self.lattice.cell_volume()
    }

    /// Bound on the error of [`Intersection::volume`]: `uncertain · h³`, so that
    /// `|volume − vol(A ∩ B)| ≤ volume_bound` (up to the rounding of the products).
    pub fn volume_bound(&self) -> f64 {
        self.uncertain as f64 * self.lattice.cell_volume()
    }

    /// One contact per region that holds intersection samples (empty without depths).
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }
}

/// What one tile contributes.
#[derive(Default)]
pub(super) struct Part {
    pub(super) count: u64,
    pub(super) uncertain: u64,
    /// Its region.
    region: u32,
    /// The cells of its intersection samples (when depths are asked), column after column.
    cells: Vec<[u32; 3]>,
}

/// The nearest point of `w`'s surface to `p`; `seeds` (faces likely near, e.g. the previous
/// sample's) only speed the search up.
pub(crate) fn surface_point(
    w: &World<'_>,
    p: DVec3,
    seeds: &[u32],
    stack: &mut Vec<(u32, f64)>,
) -> SurfacePoint {
    let n = w.nearest(p, seeds, stack);
    SurfacePoint {
        distance: n.distance,
        point: n.point,
        face: n.face,
    }
}

/// Reusable buffers of the per-sample depths of a tile (one per worker, reused across its
/// tiles: a deep frame then allocates and faults in these pages once, not per tile).
#[derive(Default)]
pub(super) struct DepthBuffers {
    /// One per surface: the two run side by side.
    scratch: [DepthScratch; 2],
    cells: Vec<[u32; 3]>,
    near: [Vec<SurfacePoint>; 2],
}

/// Samples from which a run's two surfaces are searched on two threads (`rayon::join`): at a
/// microsecond or so per sample and surface, far more work than the hand-off costs.
const JOIN: usize = 512;

impl DepthBuffers {
    /// Fills in the nearest points of both surfaces of `samples` (block by block, `depth.rs`),
    /// the two surfaces side by side when there are [`JOIN`] samples or more (a frame of one
    /// run then still uses two threads).
    pub(super) fn fill(
        &mut self,
        [wa, wb]: &[Surface<'_, '_>; 2],
        lattice: &Lattice,
        samples: &mut [IntersectionSample],
    ) {
        self.cells.clear();
        self.cells.extend(samples.iter().map(|s| s.cell));
        let cells = &self.cells;
        let ([sa, sb], [na, nb]) = (&mut self.scratch, &mut self.near);
        if cells.len() >= JOIN {
            rayon::join(
                || surface_points(wa, lattice, cells, sa, na),
                || surface_points(wb, lattice, cells, sb, nb),
            );
        } else {
            surface_points(wa, lattice, cells, sa, na);
            surface_points(wb, lattice, cells, sb, nb);
        }
        for (s, (a, b)) in samples.iter_mut().zip(na.iter().zip(nb.iter())) {
            s.a = *a;
            s.b = *b;
        }
    }
}

/// The surfaces of both meshes for the depths, when asked and when there is a tile.
pub(super) fn surfaces<'w, 'a>(
    wa: &'w World<'a>,
    wb: &'w World<'a>,
    depths: bool,
    jobs: &[Job],
) -> Option<[Surface<'w, 'a>; 2]> {
    (depths && !jobs.is_empty()).then(|| [Surface::new(wa), Surface::new(wb)])
}

/// Reusable buffers of a worker's tiles.
#[derive(Default)]
struct TileBuffers {
    column: ColumnScratch,
    samples: [Vec<Sample>; 2],
    /// The codes of every column of the tile, against A and against B.
    codes: [Vec<u8>; 2],
}

fn run_tile(
    wa: &World<'_>,
    wb: &World<'_>,
    lattice: &Lattice,
    job: &Job,
    depths: bool,
    buf: &mut TileBuffers,
) -> Part {
    let ta = ColumnTile::new(wa, lattice, job.k, &job.tile);
    let tb = ColumnTile::new(wb, lattice, job.k, &job.tile);
    let TileBuffers {
        column,
        samples: [ca, cb],
        codes: [codes_a, codes_b],
    } = buf;
    codes_a.clear();
    codes_b.clear();
    for (cu, cv) in job.columns() {
        ta.column(cu, cv, ca, column);
        tb.column(cu, cv, cb, column);
        codes_a.extend(ca.iter().map(Sample::code));
        codes_b.extend(cb.iter().map(Sample::code));
    }
    Part::from_codes(job, [codes_a, codes_b], depths)
}

impl Part {
    /// The part of the tile `job` from the codes of all its columns (column after column,
    /// `len` each) against A and B; the intersection samples (when `depths`) reserved at their
    /// exact number.
    pub(super) fn from_codes(job: &Job, [a, b]: [&[u8]; 2], depths: bool) -> Self {
        let mut part = Part {
            region: job.region,
            ..Part::default()
        };
        if depths {
            let both = a
                .iter()
                .zip(b)
                .filter(|&(&x, &y)| x & y & SAMPLE_INSIDE != 0)
                .count();
            part.cells.reserve_exact(both);
        }
        let len = (job.tile.hi[job.k] - job.tile.lo[job.k]) as usize;
        for (c, (cu, cv)) in job.columns().enumerate() {
            let col = Column {
                job,
                cu,
                cv,
                a: &a[c * len..(c + 1) * len],
                b: &b[c * len..(c + 1) * len],
            };
            col.accumulate(depths, &mut part);
        }
        part
    }
}

/// One classified column of a tile: its samples' codes against A and B.
pub(super) struct Column<'c> {
    pub(super) job: &'c Job,
    pub(super) cu: u32,
    pub(super) cv: u32,
    pub(super) a: &'c [u8],
    pub(super) b: &'c [u8],
}

impl Column<'_> {
    /// Adds the column's intersection samples (their cells, when depths are asked) and
    /// uncertain cells to `part`.
    fn accumulate(&self, depths: bool, part: &mut Part) {
        for (i, (&sa, &sb)) in self.a.iter().zip(self.b).enumerate() {
            let (in_a, in_b) = (sa & SAMPLE_INSIDE != 0, sb & SAMPLE_INSIDE != 0);
            let (near_a, near_b) = (sa & SAMPLE_NEAR != 0, sb & SAMPLE_NEAR != 0);
            let out_a = !near_a && !in_a;
            let out_b = !near_b && !in_b;
            if (near_a || near_b) && !out_a && !out_b {
                part.uncertain += 1;
            }
            if !(in_a && in_b) {
                continue;
            }
            part.count += 1;
            if depths {
                part.cells.push(self.job.cell(self.cu, self.cv, i));
            }
        }
    }
}

/// The samples strictly inside both closed meshes `a` and `b`, the volume estimate with its
/// bound, per-sample depths and directions, and the contacts (see the module docs).
///
/// Errors when a mesh is not closed and oriented, a tree or pose is invalid, the tolerance is
/// not positive, or the regions need more than `max_cells` cells.
pub fn intersect(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    options: &ImageSpaceOptions,
) -> Result<Intersection, ImageSpaceError> {
    let h = options.spacing()?;
    let (wa, wb) = prepare_pair(a, b)?;
    intersect_worlds(&wa, &wb, h, options)
}

/// [`intersect`] on validated world meshes, lattice spacing `h`.
pub(crate) fn intersect_worlds(
    wa: &World<'_>,
    wb: &World<'_>,
    h: f64,
    options: &ImageSpaceOptions,
) -> Result<Intersection, ImageSpaceError> {
    let plan = Plan::new(wa, wb, h, options)?;
    let sf = surfaces(wa, wb, options.depths, &plan.jobs);
    let parts: Vec<Part> = plan
        .jobs
        .par_iter()
        .map_init(TileBuffers::default, |buf, job| {
            run_tile(wa, wb, &plan.lattice, job, sf.is_some(), buf)
        })
        .collect();
    Ok(plan.assemble(parts, sf.as_ref()))
}

/// The lattice, the regions and the tiles of an intersection sweep.
pub(crate) struct Plan {
    pub(crate) lattice: Lattice,
    pub(crate) regions: Vec<CellBox>,
    pub(crate) jobs: Vec<Job>,
}

impl Plan {
    /// Localises `A ∩ B`, anchors the lattice and splits the regions into tiles (none when the
    /// meshes cannot intersect).
    pub(crate) fn new(
        wa: &World<'_>,
        wb: &World<'_>,
        h: f64,
        options: &ImageSpaceOptions,
    ) -> Result<Self, ImageSpaceError> {
        let Some(loc) = region::localise(wa, wb) else {
            return Ok(Self {
                lattice: Lattice {
                    origin: DVec3::ZERO,
                    spacing: h,
                },
                regions: Vec::new(),
                jobs: Vec::new(),
            });
        };
        let lattice = Lattice {
            origin: loc.lo,
            spacing: h,
        };
        let mut boxes = Vec::with_capacity(loc.groups.len());
        for g in &loc.groups {
            let Some(b) = lattice.cover(g[0], g[1]) else {
                return Err(ImageSpaceError::TooManyCells {
                    cells: u64::MAX,
                    max: options.max_cells,
                });
            };
            boxes.push(b);
        }
        let regions = merge_disjoint(boxes);
        check_cells(regions.iter().map(CellBox::count).sum(), options)?;
        let jobs = jobs(&regions, options.tile);
        Ok(Self {
            lattice,
            regions,
            jobs,
        })
    }

    /// The result from the parts of every tile, with the samples' surface points on `depths`.
    pub(super) fn assemble(
        self,
        parts: Vec<Part>,
        depths: Option<&[Surface<'_, '_>; 2]>,
    ) -> Intersection {
        let mut samples = sorted_samples(&parts, &self.lattice);
        if let Some(sf) = depths {
            fill_depths(sf, &self.lattice, &mut samples);
        }
        self.finish(&parts, samples)
    }

    /// The result from the parts of every tile and their intersection samples in the order of
    /// [`sorted_samples`], their surface points filled in.
    pub(super) fn finish(self, parts: &[Part], samples: Vec<IntersectionSample>) -> Intersection {
        let mut out = Intersection {
            lattice: self.lattice,
            regions: self.regions,
            samples,
            count: 0,
            uncertain: 0,
            contacts: Vec::new(),
        };
        for p in parts {
            out.count += p.count;
            out.uncertain += p.uncertain;
        }
        out.contacts = contacts(&out.samples);
        out
    }
}

/// Fewer samples than this are assembled on the calling thread (handing a small job to the
/// pool costs more than it saves, and far more on a loaded machine).
const SERIAL: usize = 1 << 14;

/// The samples of every part by region, then lattice order (their surface points unset).
/// Many samples are ordered by a radix sort of one `u64` key each (region, `z`, `y`, `x` in
/// mixed radix over the range the samples span; [`dense_keys`]), few (or a range too large for
/// 64 bits) by sorting their `u128` keys with their places; then the samples are made in place
/// in an output of the final size, in parallel when there are many. Every cell lies in one
/// region once, so the keys are distinct and both ways give the same order.
pub(super) fn sorted_samples(parts: &[Part], lattice: &Lattice) -> Vec<IntersectionSample> {
    const UNSET: SurfacePoint = SurfacePoint {
        distance: f64::NAN,
        point: DVec3::NAN,
        face: u32::MAX,
    };
    let make = |t: usize, i: usize| {
        let cell = parts[t].cells[i];
        IntersectionSample {
            cell,
            position: lattice.center(cell),
            region: parts[t].region,
            a: UNSET,
            b: UNSET,
        }
    };
    let total = parts.iter().map(|p| p.cells.len()).sum();
    if total >= SERIAL {
        if let Some(keys) = dense_keys(parts, total) {
            // Where each part's samples start in the concatenation the keys follow.
            let mut start = Vec::with_capacity(parts.len() + 1);
            start.push(0);
            for p in parts {
                start.push(start.last().copied().unwrap_or(0) + p.cells.len());
            }
            let (_, order) = gprox_bvh::sort::sort_codes(&keys);
            return order
                .par_iter()
                .map(|&at| {
                    let at = at as usize;
                    let t = start.partition_point(|&s| s <= at) - 1;
                    make(t, at - start[t])
                })
                .collect();
        }
    }
    let key = |region: u32, cell: [u32; 3]| {
        let (z, y, x) = cell_order(cell);
        (u128::from(region) << 96) | (u128::from(z) << 64) | (u128::from(y) << 32) | u128::from(x)
    };
    // The keys at their exact number, each part's written in parallel into its own slice.
    let mut keys: Vec<(u128, usize, usize)> = vec![(0, 0, 0); total];
    let slices = per_part(parts, &mut keys);
    let fill = |(t, out): (usize, &mut [(u128, usize, usize)])| {
        for (i, (k, &c)) in out.iter_mut().zip(&parts[t].cells).enumerate() {
            *k = (key(parts[t].region, c), t, i);
        }
    };
    let sample = |&(_, t, i): &(u128, usize, usize)| make(t, i);
    if total < SERIAL {
        slices.into_iter().enumerate().for_each(fill);
        keys.sort_unstable_by_key(|k| k.0);
        return keys.iter().map(sample).collect();
    }
    slices.into_par_iter().enumerate().for_each(fill);
    keys.par_sort_unstable_by_key(|k| k.0);
    keys.par_iter().map(sample).collect()
}

/// One key per sample of `parts` (`total` of them, part after part), ordered as (region, `z`,
/// `y`, `x`): the mixed-radix number of the sample's place in the box the samples span, or
/// `None` when that box has more places than a `u64` counts, or there are 2³² samples or more
/// (the radix sort's indices are `u32`).
fn dense_keys(parts: &[Part], total: usize) -> Option<Vec<u64>> {
    u32::try_from(total).ok()?;
    let (mut lo, mut hi) = ([u32::MAX; 4], [0u32; 4]);
    for p in parts {
        for &c in &p.cells {
            let (z, y, x) = cell_order(c);
            for (a, v) in [p.region, z, y, x].into_iter().enumerate() {
                lo[a] = lo[a].min(v);
                hi[a] = hi[a].max(v);
            }
        }
    }
    let size = |a: usize| u64::from(hi[a] - lo[a]) + 1;
    // The number of places must fit: region × z × y × x of them.
    size(0)
        .checked_mul(size(1))?
        .checked_mul(size(2))?
        .checked_mul(size(3))?;
    let key = |region: u32, c: [u32; 3]| {
        let (z, y, x) = cell_order(c);
        let digits = [region, z, y, x];
        (0..4).fold(0u64, |k, a| k * size(a) + u64::from(digits[a] - lo[a]))
    };
    let mut keys = vec![0u64; total];
    per_part(parts, &mut keys)
        .into_par_iter()
        .enumerate()
        .for_each(|(t, out)| {
            for (k, &c) in out.iter_mut().zip(&parts[t].cells) {
                *k = key(parts[t].region, c);
            }
        });
    Some(keys)
}

/// `all` (one entry per sample of `parts`, part after part) cut into each part's slice.
fn per_part<'x, T>(parts: &[Part], all: &'x mut [T]) -> Vec<&'x mut [T]> {
    let mut rest = all;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let (mine, tail) = rest.split_at_mut(p.cells.len());
        out.push(mine);
        rest = tail;
    }
    out
}

/// Fills in the surface points of `samples` (sorted by region, then lattice order) in
/// parallel: in runs of whole slabs of depth blocks (a region and `BLOCK` layers of the
/// slowest axis), so that no block is split between two runs.
pub(super) fn fill_depths(
    sf: &[Surface<'_, '_>; 2],
    lattice: &Lattice,
    samples: &mut [IntersectionSample],
) {
    /// Fewest samples per run (fewer runs, fewer block searches at their seams).
    const RUN: usize = 8192;
    let slab = |s: &IntersectionSample| (s.region, cell_order(s.cell).0 / BLOCK);
    let mut runs = Vec::new();
    let mut rest = samples;
    while !rest.is_empty() {
        let mut end = RUN.min(rest.len());
        let last = slab(&rest[end - 1]);
        while end < rest.len() && slab(&rest[end]) == last {
            end += 1;
        }
        let (run, tail) = rest.split_at_mut(end);
        runs.push(run);
        rest = tail;
    }
    if let [run] = &mut runs[..] {
        DepthBuffers::default().fill(sf, lattice, run);
    } else {
        runs.into_par_iter()
            .for_each_init(DepthBuffers::default, |buf, run| buf.fill(sf, lattice, run));
    }
}
