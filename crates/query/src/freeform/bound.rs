//! World-space cells and bounds shared by the freeform queries: cells of the dual Coons BVH,
//! continued below the finest Coons level by exact sub-surfaces, and the certified
//! tetrahedron-offset lower bound between two cells (GJK plus a separating-plane certificate).

use std::sync::Arc;

use glam::DVec3;
use gprox_bvh::coons::{Cell, CoonsBvh};
use gprox_geometry::freeform::model::pose_stretch;
use gprox_geometry::freeform::{apply_pose, NurbsSurface, ParamRect};
use gprox_geometry::transform::Pose64;

use crate::gjk::{gjk_distance, ConvexPoints, GjkResult};

/// A freeform object: surfaces (model coordinates), their Coons BVH and a rigid pose.
#[derive(Clone, Copy, Debug)]
pub struct FreeformObject<'a> {
    /// The surfaces, in model coordinates.
    pub surfaces: &'a [NurbsSurface],
    /// Their Coons BVH (built with `CoonsBvh::build(surfaces, ..)`).
    pub bvh: &'a CoonsBvh,
    /// Model-to-world pose.
    pub pose: Pose64,
}

/// A cell of the search: a BVH cell, or an exact sub-surface below the finest Coons level.
#[derive(Clone, Debug)]
pub enum QueryCell {
    /// A cell of the dual Coons BVH.
    Tree(Cell),
    /// An exact sub-surface over `rect` (its control net is kept for further splitting).
    Exact {
        /// Surface index.
        surface: u32,
        /// Parameter rectangle.
        rect: ParamRect,
        /// The restricted surface.
        sub: Arc<NurbsSurface>,
    },
}

impl QueryCell {
    /// Surface index.
    pub fn surface(&self) -> u32 {
        match self {
            Self::Tree(c) => c.surface,
            Self::Exact { surface, .. } => *surface,
        }
    }

    /// Parameter rectangle.
    pub fn rect(&self) -> ParamRect {
        match self {
            Self::Tree(c) => c.rect,
            Self::Exact { rect, .. } => *rect,
        }
    }
}

/// A cell with its world-space bound.
#[derive(Clone, Debug)]
pub struct BoundedCell {
    /// The cell.
    pub cell: QueryCell,
    /// Tetrahedron corners (world), order 00, 10, 01, 11.
    pub corners: [DVec3; 4],
    /// Parameters of the corners.
    pub params: [(f64, f64); 4],
    /// Offset radius (world units).
    pub offset: f64,
    /// Optional world bounding sphere.
    pub sphere: Option<(DVec3, f64)>,
    /// Whether the cell can be split further.
    pub splittable: bool,
}

impl BoundedCell {
    /// A size measure used to decide which side of a pair to split.
    pub fn size(&self) -> f64 {
        let mut d = 0.0f64;
        for i in 0..4 {
            for j in i + 1..4 {
                d = d.max(self.corners[i].distance(self.corners[j]));
            }
        }
        d + 2.0 * self.offset
    }
}

/// Smallest parameter-rectangle side (relative to the domain) before exact cells stop splitting.
const MIN_RELATIVE_SIDE: f64 = 1e-13;

impl FreeformObject<'_> {
    /// Bounds a cell in world space.
    pub fn bound(&self, cell: QueryCell) -> BoundedCell {
        let stretch = pose_stretch(&self.pose);
        let w = |p: DVec3| apply_pose(&self.pose, p);
        match &cell {
            QueryCell::Tree(c) => {
                let b = self.bvh.bound(self.surfaces, c);
                BoundedCell {
                    corners: b.corners.map(w),
                    params: b.params,
                    offset: b.offset * stretch,
                    sphere: b.sphere.map(|(c, r)| (w(c), r * stretch)),
                    splittable: true,
                    cell,
                }
            }
            QueryCell::Exact { rect, sub, surface } => {
                let d = self.surfaces[*surface as usize].domain();
                let small = (rect.u1 - rect.u0) <= MIN_RELATIVE_SIDE * (d.u1 - d.u0)
                    && (rect.v1 - rect.v0) <= MIN_RELATIVE_SIDE * (d.v1 - d.v0);
                BoundedCell {
                    corners: sub.corner_points().map(w),
                    params: rect.corners(),
                    offset: sub.bilinear_deviation() * stretch,
                    sphere: None,
                    splittable: !small,
                    cell,
                }
            }
        }
    }

    /// The children of a cell (BVH children, or exact halves below the finest Coons level).
    pub fn children(&self, cell: &QueryCell) -> Vec<QueryCell> {
        match cell {
            QueryCell::Tree(c) => match self.bvh.children(self.surfaces, c) {
                Some(k) => k.iter().map(|&c| QueryCell::Tree(c)).collect(),
                None => {
                    let sub = self.surfaces[c.surface as usize].restrict(&c.rect);
                    exact_halves(c.surface, c.rect, &sub)
                }
            },
            QueryCell::Exact { surface, rect, sub } => exact_halves(*surface, *rect, sub),
        }
    }

    /// Root cells (one per surface).
    pub fn roots(&self) -> Vec<QueryCell> {
        self.bvh
            .root_cells(self.surfaces)
            .into_iter()
            .map(QueryCell::Tree)
            .collect()
    }

    /// World point of surface `s` at `(u, v)`.
    pub fn world_point(&self, s: u32, u: f64, v: f64) -> DVec3 {
        apply_pose(&self.pose, self.surfaces[s as usize].point(u, v))
    }
}

fn exact_halves(surface: u32, rect: ParamRect, sub: &NurbsSurface) -> Vec<QueryCell> {
    // Split across the longer (and more curved) parameter direction.
    let c = sub.corner_points();
    let [du, dv] = sub.net_second_differences();
    let lu = c[1].distance(c[0]) + c[3].distance(c[2]) + 4.0 * du;
    let lv = c[2].distance(c[0]) + c[3].distance(c[1]) + 4.0 * dv;
    let along_u = if rect.u1 - rect.u0 <= 0.0 {
        false
    } else if rect.v1 - rect.v0 <= 0.0 {
        true
    } else {
        lu >= lv
    };
    let halves = rect.halves(along_u);
    let (mid_u, mid_v) = rect.mid();
    match sub.split(along_u, if along_u { mid_u } else { mid_v }) {
        Ok((a, b)) => vec![
            QueryCell::Exact {
                surface,
                rect: halves[0],
                sub: Arc::new(a),
            },
            QueryCell::Exact {
                surface,
                rect: halves[1],
                sub: Arc::new(b),
            },
        ],
        Err(_) => Vec::new(),
    }
}

/// Result of bounding the distance between two cells.
#[derive(Clone, Debug)]
pub struct PairBound {
    /// Certified lower bound of the distance between the two surface pieces.
    pub lower: f64,
    /// Distance between the two surface points below (an upper bound of the true distance).
    pub upper: f64,
    /// Surface point on A (world) and its `(u, v)`.
    pub point_a: (DVec3, (f64, f64)),
    /// Surface point on B (world) and its `(u, v)`.
    pub point_b: (DVec3, (f64, f64)),
}

fn map_witness(w: &[(u32, f64)], params: &[(f64, f64); 4], rect: &ParamRect) -> (f64, f64) {
    let (mut u, mut v) = (0.0, 0.0);
    let total: f64 = w.iter().map(|x| x.1).sum();
    for &(id, l) in w {
        let (pu, pv) = params[(id as usize).min(3)];
        u += l * pu;
        v += l * pv;
    }
    if total > 0.0 {
        u /= total;
        v /= total;
    }
    (u.clamp(rect.u0, rect.u1), v.clamp(rect.v0, rect.v1))
}

/// A certified lower bound of the distance between the convex hulls of `a` and `b` from a GJK
/// result: the gap along the witness direction, `min_b n·b - max_a n·a`, evaluated exactly on
/// the vertices (valid for any unit `n`).
fn certified_gap(a: &[DVec3; 4], b: &[DVec3; 4], g: &GjkResult) -> f64 {
    if g.intersecting {
        return 0.0;
    }
    let d = g.point_b - g.point_a;
    let len = d.length();
    if !(len > 0.0 && len.is_finite()) {
        return 0.0;
    }
    let n = d / len;
    let max_a = a
        .iter()
        .map(|p| n.dot(*p))
        .fold(f64::NEG_INFINITY, f64::max);
    let min_b = b.iter().map(|p| n.dot(*p)).fold(f64::INFINITY, f64::min);
    // One ulp-scale safety margin for the dot products.
    let scale = a
        .iter()
        .chain(b)
        .map(|p| p.abs().max_element())
        .fold(0.0, f64::max);
    (min_b - max_a - 4.0 * f64::EPSILON * scale).max(0.0)
}

/// Bounds the distance between two bounded cells of two objects.
pub fn pair_bound(
    oa: &FreeformObject,
    a: &BoundedCell,
    ob: &FreeformObject,
    b: &BoundedCell,
) -> PairBound {
    let g = gjk_distance(&ConvexPoints(&a.corners), &ConvexPoints(&b.corners), 1e-12);
    let mut lower = (certified_gap(&a.corners, &b.corners, &g) - a.offset - b.offset).max(0.0);
    if let (Some((ca, ra)), Some((cb, rb))) = (a.sphere, b.sphere) {
        lower = lower.max(ca.distance(cb) - ra - rb);
    }
    let (ra, rb) = (a.cell.rect(), b.cell.rect());
    let uva = map_witness(&g.witness_a, &a.params, &ra);
    let uvb = map_witness(&g.witness_b, &b.params, &rb);
    let pa = oa.world_point(a.cell.surface(), uva.0, uva.1);
    let pb = ob.world_point(b.cell.surface(), uvb.0, uvb.1);
    PairBound {
        lower,
        upper: pa.distance(pb),
        point_a: (pa, uva),
        point_b: (pb, uvb),
    }
}
