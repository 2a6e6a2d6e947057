//! The intersection of two closed meshes on the lattice: the samples inside both, the volume
//! estimate with its error bound, and per sample the distance, closest point and face on both
//! surfaces (penetration depth and direction, §5.4).

use glam::DVec3;
use rayon::prelude::*;

use super::column::{ColumnScratch, ColumnTile, Sample};
use super::contact::{contacts, Contact};
use super::lattice::{cell_order, jobs, merge_disjoint, CellBox, Job, Lattice};
use super::{check_cells, prepare, region, ImageSpaceError, ImageSpaceOptions};
use crate::collide::{CollisionObject, Side};
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
struct Part {
    count: u64,
    uncertain: u64,
    samples: Vec<IntersectionSample>,
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

fn run_tile(wa: &World<'_>, wb: &World<'_>, lattice: &Lattice, job: &Job, depths: bool) -> Part {
    let ta = ColumnTile::new(wa, lattice, job.k, &job.tile);
    let tb = ColumnTile::new(wb, lattice, job.k, &job.tile);
    let (mut ca, mut cb) = (Vec::<Sample>::new(), Vec::<Sample>::new());
    let mut scratch = ColumnScratch::default();
    let mut stack = Vec::new();
    let mut part = Part::default();
    for (cu, cv) in job.columns() {
        ta.column(cu, cv, &mut ca, &mut scratch);
        tb.column(cu, cv, &mut cb, &mut scratch);
        // The previous sample's nearest faces seed the next one's search (coherence).
        let mut seeds: Option<[u32; 2]> = None;
        for (i, (sa, sb)) in ca.iter().zip(&cb).enumerate() {
            let (in_a, in_b) = (sa.inside(), sb.inside());
            let out_a = !sa.near && !in_a;
            let out_b = !sb.near && !in_b;
            if (sa.near || sb.near) && !out_a && !out_b {
                part.uncertain += 1;
            }
            if !(in_a && in_b) {
                continue;
            }
            part.count += 1;
            if depths {
                let cell = job.cell(cu, cv, i);
                let p = lattice.center(cell);
                let (sa, sb) = match seeds {
                    Some([fa, fb]) => (&[fa][..], &[fb][..]),
                    None => (&[][..], &[][..]),
                };
                let a = surface_point(wa, p, sa, &mut stack);
                let b = surface_point(wb, p, sb, &mut stack);
                seeds = Some([a.face, b.face]);
                part.samples.push(IntersectionSample {
                    cell,
                    position: p,
                    region: job.region,
                    a,
                    b,
                });
            }
        }
    }
    part
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
    let wa = prepare(a, Side::A)?;
    let wb = prepare(b, Side::B)?;
    intersect_worlds(&wa, &wb, h, options)
}

/// [`intersect`] on validated world meshes, lattice spacing `h`.
pub(crate) fn intersect_worlds(
    wa: &World<'_>,
    wb: &World<'_>,
    h: f64,
    options: &ImageSpaceOptions,
) -> Result<Intersection, ImageSpaceError> {
    let Some(loc) = region::localise(wa, wb) else {
        return Ok(Intersection {
            lattice: Lattice {
                origin: DVec3::ZERO,
                spacing: h,
            },
            regions: Vec::new(),
            samples: Vec::new(),
            count: 0,
            uncertain: 0,
            contacts: Vec::new(),
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
    let work = jobs(&regions, options.tile);
    let parts: Vec<Part> = work
        .par_iter()
        .map(|job| run_tile(wa, wb, &lattice, job, options.depths))
        .collect();
    let mut out = Intersection {
        lattice,
        regions,
        samples: Vec::new(),
        count: 0,
        uncertain: 0,
        contacts: Vec::new(),
    };
    for p in parts {
        out.count += p.count;
        out.uncertain += p.uncertain;
        out.samples.extend(p.samples);
    }
    out.samples
        .sort_unstable_by_key(|s| (s.region, cell_order(s.cell)));
    out.contacts = contacts(&out.samples);
    Ok(out)
}
