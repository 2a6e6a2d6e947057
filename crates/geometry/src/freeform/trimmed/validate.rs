//! Validation of trim loops against their surface's domain: every loop has curves, every used
//! parameter range lies in its curve's domain, consecutive curves meet (gap at most
//! [`LOOP_GAP_REL`] of the domain size), the flattened loops stay in the domain (up to
//! [`DOMAIN_SLACK_REL`]) and no two edges of the flattened loops cross properly (decided with
//! exact orientation predicates; touching at a point, as CAD loops may, is allowed).

use glam::DVec2;

use super::{
    TrimError, TrimLoop, TrimPolygon, DOMAIN_SLACK_REL, LOOP_GAP_REL, VALIDATION_TOLERANCE_REL,
};
use crate::freeform::ParamRect;
use crate::predicates::orient2d;

/// Checks `loops` against the domain `d` and returns their polygon flattened within
/// [`VALIDATION_TOLERANCE_REL`] of the domain size.
pub fn validate(d: &ParamRect, loops: &[TrimLoop]) -> Result<TrimPolygon, TrimError> {
    if loops.is_empty() {
        return Err(TrimError::EmptyLoop {
            loop_index: usize::MAX,
            message: "the face has no loop",
        });
    }
    let size = (d.u1 - d.u0).max(d.v1 - d.v0);
    for (li, l) in loops.iter().enumerate() {
        if l.curves.is_empty() {
            return Err(TrimError::EmptyLoop {
                loop_index: li,
                message: "the loop has no curve",
            });
        }
        for (ci, c) in l.curves.iter().enumerate() {
            let [d0, d1] = c.curve.domain();
            let [t0, t1] = c.range;
            if !(t0.is_finite() && t1.is_finite() && d0 <= t0 && t0 < t1 && t1 <= d1) {
                return Err(TrimError::ParamRange {
                    loop_index: li,
                    curve: ci,
                    t0,
                    t1,
                    d0,
                    d1,
                });
            }
        }
        let tolerance = LOOP_GAP_REL * size;
        for (ci, c) in l.curves.iter().enumerate() {
            let next = &l.curves[(ci + 1) % l.curves.len()];
            let gap = c.end().distance(next.start());
            if gap.is_nan() || gap > tolerance {
                return Err(TrimError::OpenLoop {
                    loop_index: li,
                    curve: ci,
                    gap,
                    tolerance,
                });
            }
        }
    }
    let poly = TrimPolygon::new(loops, VALIDATION_TOLERANCE_REL * size)?;
    let slack = DOMAIN_SLACK_REL * size;
    for (a, _, li, ci) in poly.edges() {
        let inside = a.x >= d.u0 - slack
            && a.x <= d.u1 + slack
            && a.y >= d.v0 - slack
            && a.y <= d.v1 + slack;
        if !inside {
            return Err(TrimError::OutsideDomain {
                loop_index: li,
                curve: ci as usize,
                u: a.x,
                v: a.y,
                u0: d.u0,
                u1: d.u1,
                v0: d.v0,
                v1: d.v1,
            });
        }
    }
    check_crossings(&poly)?;
    Ok(poly)
}

/// Whether the closed segments `ab` and `cd` cross properly (each strictly separates the
/// other's end points).
pub fn segments_cross(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> bool {
    let s = |x: f64| x.partial_cmp(&0.0).map_or(0, |o| o as i32);
    let (o1, o2) = (s(orient2d(a, b, c)), s(orient2d(a, b, d)));
    let (o3, o4) = (s(orient2d(c, d, a)), s(orient2d(c, d, b)));
    o1 * o2 < 0 && o3 * o4 < 0
}

/// Sweep over the edges sorted by their smallest u: each edge is compared with the earlier edges
/// whose u-range still reaches it.
fn check_crossings(poly: &TrimPolygon) -> Result<(), TrimError> {
    let mut edges: Vec<(DVec2, DVec2, usize, u32)> = poly.edges().collect();
    edges.sort_by(|x, y| x.0.x.min(x.1.x).total_cmp(&y.0.x.min(y.1.x)));
    let mut active: Vec<usize> = Vec::new();
    for k in 0..edges.len() {
        let (a, b, la, ca) = edges[k];
        let lo = a.x.min(b.x);
        active.retain(|&e| edges[e].0.x.max(edges[e].1.x) >= lo);
        for &e in &active {
            let (c, d, lb, cb) = edges[e];
            if a.y.max(b.y) < c.y.min(d.y) || c.y.max(d.y) < a.y.min(b.y) {
                continue;
            }
            if segments_cross(a, b, c, d) {
                let m = (a + b + c + d) * 0.25;
                return Err(TrimError::SelfCrossing {
                    loop_a: lb,
                    curve_a: cb as usize,
                    loop_b: la,
                    curve_b: ca as usize,
                    u: m.x,
                    v: m.y,
                });
            }
        }
        active.push(k);
    }
    Ok(())
}
