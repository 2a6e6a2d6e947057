//! Whether a triangle meets a lattice cell: the separating-axis test of a triangle and a box
//! (the box's 3 axes, the triangle's normal, the 9 cross products of their edges), decided
//! conservatively — a separation counts only when it exceeds a relative margin of `1e-10`,
//! far above the rounding of the projections — so "does not meet" is never wrong. A cell no
//! face meets lies wholly on one side of the surface; this keeps the volume error bound to
//! the cells the surface really crosses, where the face boxes alone would count about three
//! times as many.

use glam::DVec3;

/// Whether the triangle `t` may meet the box with centre `c` and half-extent `e` (never
/// `false` when it does).
pub(crate) fn triangle_meets_box(t: &[DVec3; 3], c: DVec3, e: DVec3) -> bool {
    let v = [t[0] - c, t[1] - c, t[2] - c];
    let size = v[0].abs().max(v[1].abs()).max(v[2].abs()).max_element() + e.max_element();
    let separated = |a: DVec3| {
        let p = [a.dot(v[0]), a.dot(v[1]), a.dot(v[2])];
        let r = e.dot(a.abs());
        let margin = 1e-10 * a.abs().element_sum() * size;
        p[0].min(p[1]).min(p[2]) > r + margin || p[0].max(p[1]).max(p[2]) < -r - margin
    };
    if [DVec3::X, DVec3::Y, DVec3::Z].into_iter().any(separated) {
        return false;
    }
    let edges = [v[1] - v[0], v[2] - v[1], v[0] - v[2]];
    if separated(edges[0].cross(edges[1])) {
        return false;
    }
    for f in edges {
        for a in [DVec3::X, DVec3::Y, DVec3::Z] {
            if separated(f.cross(a)) {
                return false;
            }
        }
    }
    true
}
