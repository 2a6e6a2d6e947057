//! Certified flattening of trim loops: each curve becomes a polyline whose every point, at the
//! same parameter, is within the tolerance of the curve ([`NurbsCurve::chord_deviation`] of each
//! piece, split at the middle until it is small enough). Moving the curve onto the polyline is
//! then a homotopy that stays within the tolerance, so the winding number of every point farther
//! than the tolerance from the loops is the same for the polygon as for the exact loops.

use glam::{DVec2, DVec4};

use super::{TrimCurve, TrimError, TrimLoop};
use crate::freeform::curve::project;
use crate::freeform::NurbsCurve;

/// Most polyline vertices one curve may produce.
pub const MAX_POINTS_PER_CURVE: usize = 1 << 20;

/// The loops of a face flattened into closed polygons (first vertex not repeated), with the
/// curve each edge comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct TrimPolygon {
    /// One closed polygon per loop, in traversal order.
    pub loops: Vec<Vec<DVec2>>,
    /// For each loop and vertex `k`, the curve of the edge from vertex `k` to `k + 1`.
    pub edge_curve: Vec<Vec<u32>>,
    /// The flattening tolerance in (u, v).
    pub tolerance: f64,
}

impl TrimPolygon {
    /// Flattens every loop within `tolerance` (> 0, finite) in (u, v).
    pub fn new(loops: &[TrimLoop], tolerance: f64) -> Result<Self, TrimError> {
        let mut out = Self {
            loops: Vec::with_capacity(loops.len()),
            edge_curve: Vec::with_capacity(loops.len()),
            tolerance,
        };
        for (li, l) in loops.iter().enumerate() {
            let (mut pts, mut owner) = (Vec::new(), Vec::new());
            for (ci, c) in l.curves.iter().enumerate() {
                let poly = flatten_curve(c, tolerance).ok_or(TrimError::Flatten {
                    loop_index: li,
                    curve: ci,
                    tolerance,
                })?;
                // The last point is the next curve's start (up to the loop gap): drop it.
                let n = poly.len() - 1;
                pts.extend_from_slice(&poly[..n]);
                owner.extend(std::iter::repeat_n(ci as u32, n));
            }
            out.loops.push(pts);
            out.edge_curve.push(owner);
        }
        Ok(out)
    }

    /// The edges `(a, b)` of every loop, with their loop and curve.
    pub fn edges(&self) -> impl Iterator<Item = (DVec2, DVec2, usize, u32)> + '_ {
        self.loops.iter().enumerate().flat_map(move |(li, l)| {
            (0..l.len()).map(move |k| (l[k], l[(k + 1) % l.len()], li, self.edge_curve[li][k]))
        })
    }
}

/// The polyline of one curve in traversal order (first point = start, last = end), every piece
/// within `tolerance` of the curve; `None` for a bad tolerance or when the budget runs out.
pub fn flatten_curve(c: &TrimCurve, tolerance: f64) -> Option<Vec<DVec2>> {
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return None;
    }
    let [t0, t1] = c.range;
    let used = c.curve.restrict(t0, t1);
    let p = used.degree();
    let mut pts = vec![c.point(t0)];
    for ([a, b], seg) in used.bezier_segments() {
        let mut stack: Vec<(f64, f64, Vec<DVec4>)> = vec![(a, b, seg)];
        while let Some((a, b, seg)) = stack.pop() {
            let mut knots = vec![a; p + 1];
            knots.extend(std::iter::repeat_n(b, p + 1));
            let piece = NurbsCurve::from_homogeneous(p, knots, seg);
            if piece.chord_deviation() <= tolerance {
                pts.push(project(piece.homogeneous_points()[p]).truncate());
                if pts.len() > MAX_POINTS_PER_CURVE {
                    return None;
                }
                continue;
            }
            if b - a <= f64::EPSILON * b.abs().max(1.0) {
                return None;
            }
            let (l, r) = piece.split(0.5 * (a + b)).ok()?;
            let (lp, rp) = (
                l.homogeneous_points().to_vec(),
                r.homogeneous_points().to_vec(),
            );
            let m = 0.5 * (a + b);
            stack.push((m, b, rp));
            stack.push((a, m, lp));
        }
    }
    if c.reversed {
        pts.reverse();
    }
    Some(pts)
}
