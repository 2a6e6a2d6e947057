//! Exact point-in-closed-mesh classification: the winding number along an axis-parallel ray,
//! symbolically perturbed (Simulation of Simplicity), with exact orientation signs.
//!
//! The ray leaves `p` along `±e_k` (the axis and direction with the shortest way out of the
//! mesh's box). Its origin is perturbed within the plane orthogonal to the ray,
//! `p_ε = p + ε e_u + ε² e_v` (`(u, v)` the projected coordinates of
//! [`gprox_geometry::predicates::project`]) for an infinitesimal `ε > 0`: the perturbed ray meets
//! no vertex and no edge and lies in no face's plane, so every hit is a transversal crossing of a
//! face interior, and the signed count of crossings is the winding number — for every small
//! enough `ε` the same, and equal to that of `p` itself when `p` is not on the surface.
//!
//! Per face with projected corners `a, b, c`:
//! * `σ = orient2d(a, b, c)` (exact) is the sign of the normal's `k` component; `σ = 0`
//!   (the face contains the ray direction) is never crossed by the perturbed ray.
//! * The perturbed projected origin is inside iff the three perturbed edge signs equal `σ`.
//!   `orient2d(a, b, p_ε) = O + ε (a_v − b_v) + ε² (b_u − a_u)` with `O = orient2d(a, b, p)`:
//!   when `O = 0` the sign is that of `a_v − b_v`, then of `b_u − a_u` (exact comparisons).
//!   Reversing the edge negates every term, so the two faces on an edge agree: no crossing is
//!   counted twice or lost.
//! * `s = orient3d(face, p)` (exact) gives the side of `p`: the crossing lies ahead iff
//!   `s · dir · σ > 0`, and counts `dir · σ` (+1 leaving an outward-oriented surface).
//!   `s = 0` with the perturbed origin inside means `p` lies on the closed face: on the surface.
//!
//! Points on the surface are also caught directly: every face whose box contains `p` gets the
//! exact coplanar point-in-triangle test. `p` is inside iff it is not on the surface and its
//! winding number is not zero (for a closed, consistently oriented mesh without
//! self-intersections: ±1 inside, 0 outside, whichever way the mesh is oriented).

use glam::DVec3;
use gprox_geometry::predicates::{dominant_axis, orient2d, orient3d, project};

use super::world::World;

/// Where a point is relative to a closed mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Outside (winding number 0).
    Outside,
    /// On a closed face.
    Surface,
    /// Strictly inside, with its winding number (non-zero).
    Inside(i32),
}

/// How many crossed faces [`classify`] remembers (as seeds of the nearest-face search).
pub(crate) const SEEDS: usize = 4;

/// Sign of `orient2d(a, b, p_ε)` for the perturbed point (see the module docs): never 0 for
/// `a != b`.
#[inline]
fn side(a: glam::DVec2, b: glam::DVec2, p: glam::DVec2) -> f64 {
    let o = orient2d(a, b, p);
    if o != 0.0 {
        return o;
    }
    if a.y != b.y {
        return a.y - b.y;
    }
    b.x - a.x
}

/// The crossing of the perturbed line through `pp` (`p` projected along axis `k`) with face
/// `t`, for a ray along `dir · e_k` (`dir = ±1`): `0` when the perturbed line misses the face
/// (or the face contains the ray direction), else the winding contribution `±1` of the
/// crossing. It lies ahead of `p` iff `orient3d(t, p) > 0` exactly when the result is `> 0`
/// (`orient3d = 0`: `p` on the closed face).
#[inline]
pub(crate) fn crossing(t: &[DVec3; 3], k: usize, pp: glam::DVec2, dir: i32) -> i32 {
    let [a, b, c] = t.map(|q| project(q, k));
    let sigma = orient2d(a, b, c);
    if sigma == 0.0 {
        return 0;
    }
    let inside = if sigma > 0.0 {
        side(a, b, pp) > 0.0 && side(b, c, pp) > 0.0 && side(c, a, pp) > 0.0
    } else {
        side(a, b, pp) < 0.0 && side(b, c, pp) < 0.0 && side(c, a, pp) < 0.0
    };
    match (inside, sigma > 0.0) {
        (false, _) => 0,
        (true, true) => dir,
        (true, false) => -dir,
    }
}

/// Whether `p`, coplanar with the face `t` (`orient3d = 0`, exactly), lies on the closed face.
pub(crate) fn on_coplanar_face(p: DVec3, t: &[DVec3; 3]) -> bool {
    match dominant_axis(t[0], t[1], t[2]) {
        Some(k) => {
            let [a, b, c] = t.map(|q| project(q, k));
            let q = project(p, k);
            let s = [orient2d(a, b, q), orient2d(b, c, q), orient2d(c, a, q)];
            s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0)
        }
        // Collinear corners: the face is the union of its (collinear) edges.
        None => (0..3).any(|i| on_segment(p, t[i], t[(i + 1) % 3])),
    }
}

/// Whether `p` lies on the closed segment `[a, b]` (exact).
fn on_segment(p: DVec3, a: DVec3, b: DVec3) -> bool {
    let within = a.min(b).cmple(p).all() && p.cmple(a.max(b)).all();
    if !within {
        return false;
    }
    // Collinear iff every coordinate projection is (exact orient2d signs).
    (0..3).all(|k| orient2d(project(a, k), project(b, k), project(p, k)) == 0.0)
}

/// Classifies `p` against the closed mesh `w` (exact; see the module docs). The first
/// [`SEEDS`] faces the ray crosses ahead are written to `crossed` (the count is returned with
/// an `Inside` place through `crossed.1`).
pub(crate) fn classify(
    w: &World<'_>,
    p: DVec3,
    stack: &mut Vec<u32>,
    crossed: &mut ([u32; SEEDS], usize),
) -> Place {
    crossed.1 = 0;
    let root = &w.nodes[w.root() as usize];
    if !root.contains(p) {
        return Place::Outside;
    }
    // Shortest way out of the root box: axis k, direction dir.
    let out_hi = root.hi - p;
    let out_lo = p - root.lo;
    let (mut k, mut dir, mut best) = (0usize, 1i32, f64::INFINITY);
    for a in 0..3 {
        if out_hi[a] < best {
            (k, dir, best) = (a, 1, out_hi[a]);
        }
        if out_lo[a] < best {
            (k, dir, best) = (a, -1, out_lo[a]);
        }
    }
    let (u, v) = ((k + 1) % 3, (k + 2) % 3);
    let pp = project(p, k);
    let mut winding = 0i32;
    stack.clear();
    stack.push(w.root());
    while let Some(i) = stack.pop() {
        let n = &w.nodes[i as usize];
        let slab = n.lo[u] <= p[u] && p[u] <= n.hi[u] && n.lo[v] <= p[v] && p[v] <= n.hi[v];
        let ahead = if dir > 0 {
            n.hi[k] >= p[k]
        } else {
            n.lo[k] <= p[k]
        };
        if !(slab && ahead) {
            continue;
        }
        if !n.is_leaf() {
            stack.push(n.right);
            stack.push(n.left);
            continue;
        }
        let t = w.triangle(n.left);
        let mut s = None;
        if n.contains(p) {
            let o = orient3d(t[0], t[1], t[2], p);
            if o == 0.0 && on_coplanar_face(p, &t) {
                return Place::Surface;
            }
            s = Some(o);
        }
        let sig = crossing(&t, k, pp, dir);
        if sig == 0 {
            continue;
        }
        let o = s.unwrap_or_else(|| orient3d(t[0], t[1], t[2], p));
        if o == 0.0 {
            return Place::Surface;
        }
        if (o > 0.0) == (sig > 0) {
            winding += sig;
            if crossed.1 < SEEDS {
                crossed.0[crossed.1] = n.left;
                crossed.1 += 1;
            }
        }
    }
    if winding == 0 {
        Place::Outside
    } else {
        Place::Inside(winding)
    }
}
