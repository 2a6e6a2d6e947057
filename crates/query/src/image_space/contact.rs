//! Queries built on the samples (§5.4 of Hoff et al.): one contact per region of the
//! intersection, and the closest points and separation direction of two solids that are
//! apart.

use glam::DVec3;
use rayon::prelude::*;

use super::column::{ColumnScratch, ColumnTile};
use super::intersect::{intersect_worlds, surface_point, IntersectionSample, SurfacePoint};
use super::lattice::{cell_order, jobs, CellBox, Lattice};
use super::{check_cells, prepare_pair, ImageSpaceError, ImageSpaceOptions};
use crate::collide::CollisionObject;
use crate::world::World;

/// The contact of one region of the intersection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The region (index into [`super::Intersection::regions`]).
    pub region: u32,
    /// The deepest sample: largest `min(depth_in_a, depth_in_b)` (first in lattice order among
    /// equals) — the point of the intersection farthest from its boundary.
    pub point: DVec3,
    /// That `min(depth_in_a, depth_in_b)` (for two overlapping balls, half the overlap).
    pub depth: f64,
    /// Unit contact normal: the direction to move A (and `-normal` to move B) to separate
    /// them, the normalised sum over the region's samples of
    /// `direction_out_of_b − direction_out_of_a` (zero when that sum vanishes).
    pub normal: DVec3,
    /// Number of intersection samples in the region.
    pub samples: u64,
}

/// One contact per region holding samples, by region (samples in region, lattice order).
pub(crate) fn contacts(samples: &[IntersectionSample]) -> Vec<Contact> {
    // The per-sample directions in parallel; the sums below stay in sample order.
    let steps: Vec<DVec3> = samples
        .par_iter()
        .map(|s| s.direction_out_of_b() - s.direction_out_of_a())
        .collect();
    let mut out: Vec<Contact> = Vec::new();
    let mut sum = DVec3::ZERO;
    for (s, &step) in samples.iter().zip(&steps) {
        let depth = s.a.distance.min(s.b.distance);
        match out.last_mut() {
            Some(c) if c.region == s.region => {
                c.samples += 1;
                sum += step;
                if depth > c.depth {
                    (c.point, c.depth) = (s.position, depth);
                }
            }
            _ => {
                if let Some(c) = out.last_mut() {
                    c.normal = sum.normalize_or_zero();
                }
                sum = step;
                out.push(Contact {
                    region: s.region,
                    point: s.position,
                    depth,
                    normal: DVec3::ZERO,
                    samples: 1,
                });
            }
        }
    }
    if let Some(c) = out.last_mut() {
        c.normal = sum.normalize_or_zero();
    }
    out
}

/// Closest points of two solids that are apart ([`separation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Separation {
    /// `|point_b − point_a|`: an upper bound of the true distance, achieved by the two points.
    pub distance: f64,
    /// Point on A's surface (world).
    pub point_a: DVec3,
    /// Its face of A.
    pub face_a: u32,
    /// Point on B's surface (world).
    pub point_b: DVec3,
    /// Its face of B.
    pub face_b: u32,
    /// Unit separation direction from `point_a` to `point_b` (zero when they coincide).
    pub direction: DVec3,
}

impl Separation {
    fn new(pa: SurfacePoint, pb: SurfacePoint) -> Self {
        let d = pb.point - pa.point;
        Self {
            distance: d.length(),
            point_a: pa.point,
            face_a: pa.face,
            point_b: pb.point,
            face_b: pb.face,
            direction: d.normalize_or_zero(),
        }
    }
}

/// The sample of `from`'s region strictly inside `from` nearest to `to`'s surface: (distance,
/// cell order, closest point on `to`), parallel over tiles.
fn nearest_inside_sample(
    from: &World<'_>,
    to: &World<'_>,
    lattice: &Lattice,
    region: CellBox,
    tile: u32,
) -> Option<(f64, (u32, u32, u32), SurfacePoint)> {
    let work = jobs(&[region], tile);
    work.par_iter()
        .filter_map(|job| {
            let t = ColumnTile::new(from, lattice, job.k, &job.tile);
            let (mut col, mut scratch, mut stack) =
                (Vec::new(), ColumnScratch::default(), Vec::new());
            let mut best: Option<(f64, (u32, u32, u32), SurfacePoint)> = None;
            for (cu, cv) in job.columns() {
                t.column(cu, cv, &mut col, &mut scratch);
                for (i, s) in col.iter().enumerate() {
                    if !s.inside() {
                        continue;
                    }
                    let cell = job.cell(cu, cv, i);
                    let q = surface_point(to, lattice.center(cell), &[], &mut stack);
                    let key = (q.distance, cell_order(cell));
                    if best.is_none_or(|b| key < (b.0, b.1)) {
                        best = Some((key.0, key.1, q));
                    }
                }
            }
            best
        })
        .min_by(|x, y| {
            (x.0, x.1)
                .partial_cmp(&(y.0, y.1))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}

/// The box of `w`'s root clipped to the other root widened by `r` (`None` when empty).
fn near_box(w: &World<'_>, other: &World<'_>, r: f64) -> Option<[DVec3; 2]> {
    let (n, o) = (
        &w.nodes[w.root() as usize],
        &other.nodes[other.root() as usize],
    );
    let lo = n.lo.max(o.lo - DVec3::splat(r));
    let hi = n.hi.min(o.hi + DVec3::splat(r));
    lo.cmple(hi).all().then_some([lo, hi])
}

/// Closest points and separation direction of the closed meshes `a` and `b` when their solids
/// are apart (`None` when some sample lies inside both).
///
/// A first pair comes from vertex 0 of each mesh and its nearest point on the other; its
/// distance `U` bounds where the closest points can be: each mesh's samples inside it within
/// `U` of the other's box get the exact distance to the other surface (§5.4: the distance field
/// of B over the interior samples of A, and vice versa). The nearest sample `s` of A, with its
/// closest point `q` on B, is refined to the point of A's surface nearest to `q` (a surface
/// pair no farther apart than `s` and `q`, since the segment from `s` inside A to `q` meets A's
/// surface); likewise for B, and the closest of the pairs wins (A's first among equals). The
/// distance is that of a real pair of surface points, so never below the true distance, and
/// within half a cell diagonal plus the offset of the deepest-lying sample near the closest
/// point above it.
pub fn separation(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    options: &ImageSpaceOptions,
) -> Result<Option<Separation>, ImageSpaceError> {
    let h = options.spacing()?;
    let (wa, wb) = prepare_pair(a, b)?;
    let mut check = *options;
    check.depths = false;
    if intersect_worlds(&wa, &wb, h, &check)?.count() > 0 {
        return Ok(None);
    }
    let mut stack = Vec::new();
    let on = |w: &World<'_>, p: DVec3, stack: &mut Vec<(u32, f64)>| surface_point(w, p, &[], stack);
    let va = SurfacePoint {
        distance: 0.0,
        point: wa.vertices[wa.faces[0][0] as usize],
        face: 0,
    };
    let vb = SurfacePoint {
        distance: 0.0,
        point: wb.vertices[wb.faces[0][0] as usize],
        face: 0,
    };
    let mut best = Separation::new(va, on(&wb, va.point, &mut stack));
    let other = Separation::new(on(&wa, vb.point, &mut stack), vb);
    if other.distance < best.distance {
        best = other;
    }
    let r = best.distance;
    let (Some(ba), Some(bb)) = (near_box(&wa, &wb, r), near_box(&wb, &wa, r)) else {
        return Ok(Some(best));
    };
    let lattice = Lattice {
        origin: ba[0].min(bb[0]),
        spacing: h,
    };
    let too_many = || ImageSpaceError::TooManyCells {
        cells: u64::MAX,
        max: options.max_cells,
    };
    let ca = lattice.cover(ba[0], ba[1]).ok_or_else(too_many)?;
    let cb = lattice.cover(bb[0], bb[1]).ok_or_else(too_many)?;
    check_cells(ca.count() + cb.count(), options)?;
    if let Some((_, _, q)) = nearest_inside_sample(&wa, &wb, &lattice, ca, options.tile) {
        let c = Separation::new(on(&wa, q.point, &mut stack), q);
        if c.distance < best.distance {
            best = c;
        }
    }
    if let Some((_, _, q)) = nearest_inside_sample(&wb, &wa, &lattice, cb, options.tile) {
        let c = Separation::new(q, on(&wb, q.point, &mut stack));
        if c.distance < best.distance {
            best = c;
        }
    }
    Ok(Some(best))
}
