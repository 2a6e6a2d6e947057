//! Sound normal-cone culling: certifies that a set of faces `S` (one BVH subtree) has no two
//! non-adjacent faces that touch, so the traversal may skip `S` against itself.
//!
//! Criterion (a contour test in the spirit of Volino & Magnenat-Thalmann 1994), with the
//! projection `π` onto the plane orthogonal to a direction `d` (from the node's normal-cone
//! mask):
//! 1. every face of `S` projects with strictly positive orientation (`n · d > 0`), certified
//!    with a rigorous f64 error bound;
//! 2. every edge of `S` is shared by at most two faces of `S`, consistently oriented
//!    (no [`BAD_EDGE`]); the boundary edges of `S` form exactly one closed loop through distinct
//!    vertices;
//! 3. the projected loop is simple: consecutive segments meet only at their common vertex and
//!    non-consecutive segments are disjoint (certified with error bounds).
//!
//! Why it is sound: with consistent orientation the interior edges cancel, so for a point `q`
//! off the projected edges, the number of faces whose projection contains `q` equals the winding
//! number of the projected boundary loop around `q` (every face counts +1 by 1.). A simple loop
//! has winding number 0 or 1, so projected faces never overlap in an open set. Two non-adjacent
//! faces touching at a point `x` would give either such an overlap near `π(x)` (when `x` is in
//! the interior of `S`, whose neighbourhood projects onto a full disk) or two non-consecutive
//! boundary segments (or a boundary vertex and a non-incident segment) meeting at `π(x)`, which
//! 3. rules out. Anything uncertain fails the certificate and the node is traversed normally.

use glam::{DVec2, Vec3};

use super::topology::{Topology, BAD_EDGE, NO_FACE};
use gprox_bvh::normal_cone::DIRECTIONS;

const U: f64 = f64::EPSILON * 0.5;

/// Scratch state for certifying nodes of one mesh (reused across nodes and frames).
pub(crate) struct Certifier {
    face_stamp: Vec<u32>,
    vert_stamp: Vec<u32>,
    next: Vec<u32>,
    stamp: u32,
    boundary: Vec<u32>,
    segs: Vec<(DVec2, DVec2, usize)>,
}

/// Sign of `a·d - b·c` (`sub`) or `a·c + b·d`, certified against perturbations of the four
/// differences by up to `2e` each (projected coordinates off by `e`) plus rounding; 0 if unsure.
#[inline]
fn certified_sign(a: f64, b: f64, c: f64, d: f64, e: f64, sub: bool) -> i32 {
    let (p, q, v) = if sub {
        (a * d, b * c, a * d - b * c)
    } else {
        (a * c, b * d, a * c + b * d)
    };
    let s = a.abs() + b.abs() + c.abs() + d.abs();
    let bound = 3.0 * e * s + 16.0 * e * e + 8.0 * U * (p.abs() + q.abs()) + f64::MIN_POSITIVE;
    if v > bound {
        1
    } else if v < -bound {
        -1
    } else {
        0
    }
}

/// Certified orientation of the projected points (1 ccw, -1 cw, 0 unsure).
#[inline]
fn orient(a: DVec2, b: DVec2, c: DVec2, e: f64) -> i32 {
    let (ab, ac) = (b - a, c - a);
    certified_sign(ab.x, ab.y, ac.x, ac.y, e, true)
}

/// Whether the exact segments (each endpoint within `e` of the given one per coordinate) are
/// certainly disjoint.
#[inline]
fn disjoint(a: DVec2, b: DVec2, c: DVec2, d: DVec2, e: f64) -> bool {
    let m = 2.5 * e;
    let (lo1, hi1) = (a.min(b), a.max(b));
    let (lo2, hi2) = (c.min(d), c.max(d));
    if (lo1 - hi2).max_element() > m || (lo2 - hi1).max_element() > m {
        return true;
    }
    let (o1, o2) = (orient(a, b, c, e), orient(a, b, d, e));
    if o1 != 0 && o1 == o2 {
        return true;
    }
    let (o3, o4) = (orient(c, d, a, e), orient(c, d, b, e));
    o3 != 0 && o3 == o4
}

impl Certifier {
    pub(crate) fn new(face_count: usize, vertex_count: usize) -> Self {
        Self {
            face_stamp: vec![0; face_count],
            vert_stamp: vec![0; vertex_count],
            next: vec![0; vertex_count],
            stamp: 0,
            boundary: Vec::new(),
            segs: Vec::new(),
        }
    }

    fn bump(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.face_stamp.fill(0);
            self.vert_stamp.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Whether no two non-adjacent faces of `set` can touch (see the module docs). `mask` is
    /// the node's direction mask; `max_abs` bounds every coordinate of `pos`.
    pub(crate) fn certify(
        &mut self,
        set: &[u32],
        mask: u32,
        faces: &[[u32; 3]],
        pos: &[Vec3],
        topo: &Topology,
        max_abs: f64,
    ) -> bool {
        if mask == 0 || set.len() < 2 {
            return set.len() < 2;
        }
        let d = DIRECTIONS[mask.trailing_zeros() as usize].map(f64::from);
        // p1 ⟂ d with small integer entries, p2 = d × p1 (also integer): p1 × p2 ∥ +d.
        let cands = [[d[1], -d[0], 0.0], [0.0, d[2], -d[1]], [d[2], 0.0, -d[0]]];
        let p1 = cands
            .iter()
            .copied()
            .find(|c| c.iter().any(|&x| x != 0.0))
            .unwrap_or([1.0, 0.0, 0.0]);
        let p2 = [
            d[1] * p1[2] - d[2] * p1[1],
            d[2] * p1[0] - d[0] * p1[2],
            d[0] * p1[1] - d[1] * p1[0],
        ];
        // |entries| ≤ 2: products exact, two additions of terms ≤ 6·max_abs.
        let e = 16.0 * U * max_abs + f64::MIN_POSITIVE;
        let proj = |v: u32| {
            let x = pos[v as usize].as_dvec3();
            DVec2::new(
                p1[0] * x.x + p1[1] * x.y + p1[2] * x.z,
                p2[0] * x.x + p2[1] * x.y + p2[2] * x.z,
            )
        };
        let stamp = self.bump();
        for &f in set {
            self.face_stamp[f as usize] = stamp;
        }
        // 1. Strictly positive projected orientation.
        for &f in set {
            let [a, b, c] = faces[f as usize];
            if orient(proj(a), proj(b), proj(c), e) != 1 {
                return false;
            }
        }
        // 2. Boundary half-edges, one outgoing per vertex, one loop.
        self.boundary.clear();
        for &f in set {
            let tri = faces[f as usize];
            for k in 0..3 {
                let adj = topo.adjacent[f as usize][k];
                if adj == BAD_EDGE {
                    return false;
                }
                if adj == NO_FACE || self.face_stamp[adj as usize] != stamp {
                    let (u, v) = (tri[k], tri[(k + 1) % 3]);
                    if self.vert_stamp[u as usize] == stamp {
                        return false;
                    }
                    self.vert_stamp[u as usize] = stamp;
                    self.next[u as usize] = v;
                    self.boundary.push(u);
                }
            }
        }
        let nb = self.boundary.len();
        if nb < 3 {
            return false;
        }
        let start = self.boundary[0];
        let mut lp = Vec::with_capacity(nb);
        let mut cur = start;
        loop {
            if self.vert_stamp[cur as usize] != stamp || lp.len() >= nb {
                return false;
            }
            lp.push(cur);
            cur = self.next[cur as usize];
            if cur == start {
                break;
            }
        }
        if lp.len() != nb {
            return false;
        }
        // 3. Simple projected loop.
        let pts: Vec<DVec2> = lp.iter().map(|&v| proj(v)).collect();
        for i in 0..nb {
            let (a, b, c) = (pts[i], pts[(i + 1) % nb], pts[(i + 2) % nb]);
            let (ab, bc) = (b - a, c - b);
            let turn = orient(a, b, c, e) != 0;
            let ahead = certified_sign(ab.x, ab.y, bc.x, bc.y, e, false) == 1;
            if !(turn || ahead) {
                return false;
            }
        }
        self.segs.clear();
        for i in 0..nb {
            self.segs.push((pts[i], pts[(i + 1) % nb], i));
        }
        self.segs
            .sort_unstable_by(|x, y| x.0.x.min(x.1.x).total_cmp(&y.0.x.min(y.1.x)));
        let m = 2.5 * e;
        for s in 0..nb {
            let (a, b, i) = self.segs[s];
            let hi = a.x.max(b.x);
            for t in s + 1..nb {
                let (c, d, j) = self.segs[t];
                if c.x.min(d.x) - hi > m {
                    break;
                }
                let gap = i.abs_diff(j);
                if gap <= 1 || gap == nb - 1 {
                    continue;
                }
                if !disjoint(a, b, c, d, e) {
                    return false;
                }
            }
        }
        true
    }
}
