//! Collision within a tolerance between two freeform objects (paper §4): every pair of
//! sub-patches whose surfaces may come within `tolerance` is reported, with parameter rectangles.
//! No false negatives: a pair is dropped only when its certified lower bound exceeds the
//! tolerance.

use gprox_geometry::freeform::ParamRect;
use rayon::prelude::*;

use super::bound::{pair_bound, BoundedCell, FreeformObject};

/// Result of visiting one pair: a report, or child pairs to visit.
type Step = (Option<CollisionPair>, Vec<(BoundedCell, BoundedCell)>);

/// One reported pair of sub-patches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollisionPair {
    /// Surface of A.
    pub surface_a: u32,
    /// Parameter rectangle on that surface.
    pub rect_a: ParamRect,
    /// Surface of B.
    pub surface_b: u32,
    /// Parameter rectangle on that surface.
    pub rect_b: ParamRect,
    /// Certified lower bound of the distance between the two pieces.
    pub lower: f64,
    /// Distance between two actual surface points of the pieces (an upper bound); `<= tolerance`
    /// for witnessed contacts.
    pub upper: f64,
    /// Whether `upper <= tolerance` (the pieces certainly come within the tolerance); `false`
    /// for pairs reported at the finest Coons level without such a witness.
    pub witnessed: bool,
}

/// All pairs of sub-patches of `a` and `b` that may come within `tolerance` of each other,
/// refined until each pair is witnessed (two surface points within `tolerance`) or both cells
/// are at the finest Coons level. Sorted by (surface_a, surface_b, rectangles).
pub fn freeform_collide(
    a: &FreeformObject,
    b: &FreeformObject,
    tolerance: f64,
) -> Vec<CollisionPair> {
    let ra: Vec<BoundedCell> = a.roots().into_iter().map(|c| a.bound(c)).collect();
    let rb: Vec<BoundedCell> = b.roots().into_iter().map(|c| b.bound(c)).collect();
    let mut frontier: Vec<(BoundedCell, BoundedCell)> = ra
        .iter()
        .flat_map(|x| rb.iter().map(move |y| (x.clone(), y.clone())))
        .collect();
    let mut out = Vec::new();
    while !frontier.is_empty() {
        let step: Vec<Step> = frontier
            .into_par_iter()
            .map(|(x, y)| {
                let pb = pair_bound(a, &x, b, &y);
                if pb.lower > tolerance {
                    return (None, Vec::new());
                }
                let report = |witnessed| CollisionPair {
                    surface_a: x.cell.surface(),
                    rect_a: x.cell.rect(),
                    surface_b: y.cell.surface(),
                    rect_b: y.cell.rect(),
                    lower: pb.lower,
                    upper: pb.upper,
                    witnessed,
                };
                if pb.upper <= tolerance {
                    return (Some(report(true)), Vec::new());
                }
                // Refine the bigger side that can still be refined inside the Coons BVH.
                let can = |c: &BoundedCell, o: &FreeformObject| match &c.cell {
                    super::bound::QueryCell::Tree(t) => o.bvh.children(o.surfaces, t).is_some(),
                    super::bound::QueryCell::Exact { .. } => false,
                };
                let (ca, cb) = (can(&x, a), can(&y, b));
                let split_a = match (ca, cb) {
                    (false, false) => return (Some(report(false)), Vec::new()),
                    (true, false) => true,
                    (false, true) => false,
                    (true, true) => x.size() >= y.size(),
                };
                let kids = if split_a {
                    a.children(&x.cell)
                        .into_iter()
                        .map(|k| (a.bound(k), y.clone()))
                        .collect()
                } else {
                    b.children(&y.cell)
                        .into_iter()
                        .map(|k| (x.clone(), b.bound(k)))
                        .collect()
                };
                (None, kids)
            })
            .collect();
        frontier = Vec::new();
        for (r, kids) in step {
            out.extend(r);
            frontier.extend(kids);
        }
    }
    out.sort_by(|p, q| {
        (p.surface_a, p.surface_b)
            .cmp(&(q.surface_a, q.surface_b))
            .then(p.rect_a.u0.total_cmp(&q.rect_a.u0))
            .then(p.rect_a.v0.total_cmp(&q.rect_a.v0))
            .then(p.rect_b.u0.total_cmp(&q.rect_b.u0))
            .then(p.rect_b.v0.total_cmp(&q.rect_b.v0))
    });
    out
}

/// Whether `a` and `b` come within `tolerance` anywhere (true as soon as a witness is found;
/// conservative at the finest level).
pub fn freeform_collide_any(a: &FreeformObject, b: &FreeformObject, tolerance: f64) -> bool {
    !freeform_collide(a, b, tolerance).is_empty()
}
