//! Certified distance from a point to one NURBS surface, by branch and bound on exact
//! sub-surfaces (lower bound: distance to the corner tetrahedron minus the bilinear deviation;
//! upper bound: surface points mapped back from the GJK barycentrics).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;
use gprox_geometry::freeform::{NurbsSurface, ParamRect};

use crate::gjk::{gjk_distance, ConvexPoints};

/// Result of [`point_surface_distance`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointDistance {
    /// Distance to the reported surface point (the upper bound).
    pub distance: f64,
    /// Certified lower bound.
    pub lower: f64,
    /// Closest surface point found.
    pub point: DVec3,
    /// Its `(u, v)`.
    pub uv: (f64, f64),
}

struct Item {
    lower: f64,
    rect: ParamRect,
    sub: NurbsSurface,
}
impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        self.lower == o.lower
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        o.lower.total_cmp(&self.lower)
    }
}

/// Distance from `p` to surface `s` within absolute `tolerance` (`distance - lower <= tolerance`
/// unless `max_cells` sub-surfaces were examined first).
pub fn point_surface_distance(
    s: &NurbsSurface,
    p: DVec3,
    tolerance: f64,
    max_cells: usize,
) -> PointDistance {
    let mut best = PointDistance {
        distance: f64::INFINITY,
        lower: 0.0,
        point: DVec3::ZERO,
        uv: (0.0, 0.0),
    };
    let mut heap = BinaryHeap::new();
    let examine = |sub: NurbsSurface,
                   rect: ParamRect,
                   best: &mut PointDistance,
                   heap: &mut BinaryHeap<Item>| {
        let c = sub.corner_points();
        let g = gjk_distance(
            &ConvexPoints(&c),
            &ConvexPoints(std::slice::from_ref(&p)),
            1e-12,
        );
        let dev = sub.bilinear_deviation();
        let lower = (g.distance - dev).max(0.0);
        let params = rect.corners();
        let (mut u, mut v) = (0.0, 0.0);
        for &(id, l) in &g.witness_a {
            u += l * params[(id as usize).min(3)].0;
            v += l * params[(id as usize).min(3)].1;
        }
        let (u, v) = (u.clamp(rect.u0, rect.u1), v.clamp(rect.v0, rect.v1));
        for (uu, vv) in [(u, v), rect.mid()] {
            let q = s.point(uu, vv);
            let d = q.distance(p);
            if d < best.distance {
                *best = PointDistance {
                    distance: d,
                    lower: 0.0,
                    point: q,
                    uv: (uu, vv),
                };
            }
        }
        heap.push(Item { lower, rect, sub });
    };
    let pieces = s.bezier_pieces();
    let mut cells = pieces.len();
    for (rect, sub) in pieces {
        examine(sub, rect, &mut best, &mut heap);
    }
    let mut lower = f64::INFINITY;
    while let Some(it) = heap.pop() {
        if it.lower >= best.distance - tolerance || cells >= max_cells {
            lower = lower.min(it.lower);
            break;
        }
        let [du, dv] = it.sub.net_second_differences();
        let c = it.sub.corner_points();
        let along_u = c[1].distance(c[0]) + c[3].distance(c[2]) + 4.0 * du
            >= c[2].distance(c[0]) + c[3].distance(c[1]) + 4.0 * dv;
        let (um, vm) = it.rect.mid();
        let halves = it.rect.halves(along_u);
        match it.sub.split(along_u, if along_u { um } else { vm }) {
            Ok((a, b)) => {
                examine(a, halves[0], &mut best, &mut heap);
                examine(b, halves[1], &mut best, &mut heap);
                cells += 2;
            }
            Err(_) => lower = lower.min(it.lower),
        }
    }
    best.lower = lower.min(best.distance);
    best
}
