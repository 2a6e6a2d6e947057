//! Minimum distance between two freeform objects by branch and bound on the dual Coons BVH
//! (paper §5): lower bounds from offset-tetrahedron distances (GJK), upper bounds from surface
//! points mapped back from the GJK barycentrics; parallel over batches of cell pairs (rayon).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;
use rayon::prelude::*;

use super::bound::{pair_bound, BoundedCell, FreeformObject, PairBound};

/// Options of [`freeform_distance`].
#[derive(Clone, Copy, Debug)]
pub struct DistanceOptions {
    /// Absolute tolerance: the search stops when `upper - lower <= tolerance`.
    pub tolerance: f64,
    /// Work cap: the most cell pairs bounded before the search stops (then `converged` is false
    /// and `lower` is still certified).
    pub max_pairs: usize,
    /// Pairs expanded per parallel batch.
    pub batch: usize,
}

impl Default for DistanceOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_pairs: 20_000_000,
            batch: 256,
        }
    }
}

/// Result of [`freeform_distance`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FreeformDistance {
    /// The distance between the two reported points (equals `upper`).
    pub distance: f64,
    /// Certified lower bound of the true minimum distance.
    pub lower: f64,
    /// Certified upper bound (the distance between two actual surface points).
    pub upper: f64,
    /// Closest point on A (world).
    pub point_a: DVec3,
    /// Closest point on B (world).
    pub point_b: DVec3,
    /// Surface of A holding `point_a`.
    pub surface_a: u32,
    /// Surface of B holding `point_b`.
    pub surface_b: u32,
    /// `(u, v)` of `point_a` on its surface.
    pub uv_a: (f64, f64),
    /// `(u, v)` of `point_b` on its surface.
    pub uv_b: (f64, f64),
    /// Whether `upper - lower <= tolerance` was reached.
    pub converged: bool,
    /// Number of cell pairs bounded.
    pub pairs_tested: usize,
}

/// Children of one expanded pair, or the lower bound of a pair that could not be split.
type Expansion = (Vec<(Entry, PairBound)>, Option<f64>);

struct Entry {
    lower: f64,
    a: BoundedCell,
    b: BoundedCell,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.lower == o.lower
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on the lower bound.
        o.lower.total_cmp(&self.lower)
    }
}

fn better(best: &mut Option<(PairBound, u32, u32)>, pb: &PairBound, sa: u32, sb: u32) {
    if best.as_ref().is_none_or(|(b, _, _)| pb.upper < b.upper) {
        *best = Some((pb.clone(), sa, sb));
    }
}

/// Certified minimum distance between two freeform objects.
///
/// ```
/// use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
/// use gprox_geometry::transform::Pose64;
/// use gprox_query::freeform::{freeform_distance, DistanceOptions, FreeformObject};
/// let teapot = gprox_geometry::freeform::teapot();
/// let bvh = CoonsBvh::build(&teapot, &CoonsOptions { epsilon: 1e-3, ..Default::default() }).unwrap();
/// let a = FreeformObject { surfaces: &teapot, bvh: &bvh, pose: Pose64::IDENTITY };
/// let mut pose = Pose64::IDENTITY;
/// pose.rows[0][3] = 8.0; // 8 units along x
/// let b = FreeformObject { pose, ..a };
/// let d = freeform_distance(&a, &b, &DistanceOptions { tolerance: 1e-4, ..Default::default() });
/// assert!(d.lower <= d.upper && d.upper - d.lower <= 1e-4 && d.distance > 0.0);
/// ```
pub fn freeform_distance(
    a: &FreeformObject,
    b: &FreeformObject,
    opts: &DistanceOptions,
) -> FreeformDistance {
    let tol = opts.tolerance.max(0.0);
    let ra: Vec<BoundedCell> = a.roots().into_par_iter().map(|c| a.bound(c)).collect();
    let rb: Vec<BoundedCell> = b.roots().into_par_iter().map(|c| b.bound(c)).collect();
    let initial: Vec<(BoundedCell, BoundedCell)> = ra
        .iter()
        .flat_map(|x| rb.iter().map(move |y| (x.clone(), y.clone())))
        .collect();
    let mut best: Option<(PairBound, u32, u32)> = None;
    let mut heap = BinaryHeap::new();
    let mut tested = 0usize;
    // Smallest lower bound among pairs dropped without expansion (pruned by the tolerance or
    // unsplittable): the certified global lower bound is min(upper, this).
    let mut dropped_lower = f64::INFINITY;
    let bounded: Vec<(Entry, PairBound)> = initial
        .into_par_iter()
        .map(|(x, y)| {
            let pb = pair_bound(a, &x, b, &y);
            (
                Entry {
                    lower: pb.lower,
                    a: x,
                    b: y,
                },
                pb,
            )
        })
        .collect();
    tested += bounded.len();
    for (e, pb) in bounded {
        better(&mut best, &pb, e.a.cell.surface(), e.b.cell.surface());
        heap.push(e);
    }
    let mut converged = true;
    loop {
        let upper = best.as_ref().map_or(f64::INFINITY, |b| b.0.upper);
        let mut batch = Vec::with_capacity(opts.batch);
        while batch.len() < opts.batch.max(1) {
            let Some(e) = heap.pop() else { break };
            if e.lower >= upper - tol {
                // Every remaining pair is at least this far: stop.
                dropped_lower = dropped_lower.min(e.lower);
                heap.clear();
                break;
            }
            batch.push(e);
        }
        if batch.is_empty() {
            break;
        }
        if tested >= opts.max_pairs {
            converged = false;
            for e in batch.iter().chain(heap.iter()) {
                dropped_lower = dropped_lower.min(e.lower);
            }
            heap.clear();
            break;
        }
        let results: Vec<Expansion> = batch
            .into_par_iter()
            .map(|e| {
                let split_a = match (e.a.splittable, e.b.splittable) {
                    (true, true) => e.a.size() >= e.b.size(),
                    (true, false) => true,
                    (false, true) => false,
                    (false, false) => return (Vec::new(), Some(e.lower)),
                };
                let (obj, cell) = if split_a { (a, &e.a) } else { (b, &e.b) };
                let kids = obj.children(&cell.cell);
                if kids.is_empty() {
                    return (Vec::new(), Some(e.lower));
                }
                let out = kids
                    .into_iter()
                    .map(|k| {
                        let kb = obj.bound(k);
                        let (x, y) = if split_a {
                            (kb, e.b.clone())
                        } else {
                            (e.a.clone(), kb)
                        };
                        let pb = pair_bound(a, &x, b, &y);
                        // A child's region lies inside the parent's: keep the parent's bound too.
                        let lower = pb.lower.max(e.lower);
                        (Entry { lower, a: x, b: y }, pb)
                    })
                    .collect();
                (out, None)
            })
            .collect();
        for (kids, stuck) in results {
            if let Some(l) = stuck {
                dropped_lower = dropped_lower.min(l);
            }
            tested += kids.len();
            for (e, pb) in kids {
                better(&mut best, &pb, e.a.cell.surface(), e.b.cell.surface());
                heap.push(e);
            }
        }
    }
    // `best` is always set: every object has at least one root.
    let (pb, sa, sb) = best.unwrap_or((
        PairBound {
            lower: 0.0,
            upper: f64::INFINITY,
            point_a: (DVec3::ZERO, (0.0, 0.0)),
            point_b: (DVec3::ZERO, (0.0, 0.0)),
        },
        0,
        0,
    ));
    let upper = pb.upper;
    let lower = dropped_lower.min(upper);
    FreeformDistance {
        distance: upper,
        lower,
        upper,
        point_a: pb.point_a.0,
        point_b: pb.point_b.0,
        surface_a: sa,
        surface_b: sb,
        uv_a: pb.point_a.1,
        uv_b: pb.point_b.1,
        converged: converged && upper - lower <= tol,
        pairs_tested: tested,
    }
}
