//! Sound normal-cone culling: certifies that a set of faces `S` (one BVH subtree, or the union
//! of two subtrees) has no two non-adjacent faces that touch, so the traversal may skip `S`
//! against itself (or the two subtrees against each other).
//!
//! Criterion (a contour test in the spirit of Volino & Magnenat-Thalmann 1994), with the
//! projection `π` onto the plane orthogonal to a direction `d` (from the node's normal-cone
//! mask):
//! 1. every face of `S` projects with strictly positive orientation (`n · d > 0`), certified
//!    per face with a rigorous error bound ([`gprox_bvh::normal_cone::certified_direction_mask`],
//!    ANDed over the node, see [`Layout::masks`]);
//! 2. every edge of `S` is shared by at most two faces of `S`, consistently oriented
//!    (no bad edge, see [`Layout`]); the boundary edges of `S` (cached per node, merged for a
//!    union) form exactly one closed loop through distinct vertices;
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

use super::layout::{Half, Layout};
use super::traverse::Prune;
use gprox_bvh::normal_cone::DIRECTIONS;

const U: f64 = f64::EPSILON * 0.5;

/// Scratch state for certifying nodes of one mesh (reused across nodes and frames).
#[derive(Clone, Debug, Default)]
pub(crate) struct Certifier {
    vert_stamp: Vec<u32>,
    next: Vec<u32>,
    stamp: u32,
    boundary: Vec<u32>,
    lp: Vec<u32>,
    pts: Vec<DVec2>,
    segs: Vec<(f64, f64, usize)>,
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
    /// Scratch for a mesh of `vertex_count` vertices.
    pub(crate) fn new(vertex_count: usize) -> Self {
        Self {
            vert_stamp: vec![0; vertex_count],
            next: vec![0; vertex_count],
            ..Self::default()
        }
    }

    /// Vertex count this scratch was made for.
    pub(crate) fn vertex_count(&self) -> usize {
        self.vert_stamp.len()
    }

    fn bump(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.vert_stamp.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Whether no two non-adjacent faces below `node` can touch (see the module docs).
    /// `max_abs` bounds every coordinate of `pos`.
    pub(crate) fn certify_node(
        &mut self,
        layout: &Layout,
        masks: &[u32],
        node: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> bool {
        let mask = masks[node as usize];
        if mask == 0 {
            return false;
        }
        let none = [u32::MAX, 0];
        self.certify(&[(layout.boundary(node), none)], mask, pos, max_abs)
    }

    /// Whether no two non-adjacent faces of the union of the (disjoint) subtrees `a` and `b`
    /// can touch (then no face below `a` touches a non-adjacent face below `b`):
    /// [`Prune::Skip`] when certified, [`Prune::DescendSilently`] when `a` and `b` share no edge
    /// (no pair of their descendants can be certified either), [`Prune::Descend`] otherwise.
    pub(crate) fn certify_union(
        &mut self,
        layout: &Layout,
        masks: &[u32],
        a: u32,
        b: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> Prune {
        let mask = masks[a as usize] & masks[b as usize];
        let (ba, bb) = (layout.boundary(a), layout.boundary(b));
        let (ra, rb) = (layout.range[a as usize], layout.range[b as usize]);
        // Shared edges appear in both boundaries: search the shorter one.
        let shared = if ba.len() <= bb.len() {
            layout.share_edge(a, b)
        } else {
            layout.share_edge(b, a)
        };
        if !shared {
            return Prune::DescendSilently;
        }
        if mask == 0 {
            return Prune::Descend;
        }
        if self.certify(&[(ba, rb), (bb, ra)], mask, pos, max_abs) {
            Prune::Skip
        } else {
            Prune::Descend
        }
    }

    /// The contour test on the boundary half-edges of `parts` (each: a node's boundary without
    /// the edges whose face across lies in the given leaf-slot range), for a set whose faces
    /// all have `mask`'s first direction in their certified masks.
    fn certify(
        &mut self,
        parts: &[(&[Half], [u32; 2])],
        mask: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> bool {
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
        // 2. Boundary half-edges, one outgoing per vertex, one loop.
        self.boundary.clear();
        let mut removed = false;
        for &(edges, [lo, hi]) in parts {
            for h in edges {
                if lo <= h.adj && h.adj <= hi {
                    removed = true;
                    continue;
                }
                if self.vert_stamp[h.u as usize] == stamp {
                    return false;
                }
                self.vert_stamp[h.u as usize] = stamp;
                self.next[h.u as usize] = h.v;
                self.boundary.push(h.u);
            }
        }
        // Two parts that share no edge bound at least two loops.
        if parts.len() > 1 && !removed {
            return false;
        }
        let nb = self.boundary.len();
        if nb < 3 {
            return false;
        }
        let start = self.boundary[0];
        self.lp.clear();
        let mut cur = start;
        loop {
            if self.vert_stamp[cur as usize] != stamp || self.lp.len() >= nb {
                return false;
            }
            self.lp.push(cur);
            cur = self.next[cur as usize];
            if cur == start {
                break;
            }
        }
        if self.lp.len() != nb {
            return false;
        }
        // 3. Simple projected loop.
        self.pts.clear();
        self.pts.extend(self.lp.iter().map(|&v| proj(v)));
        let pts = &self.pts;
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
            let (a, b) = (pts[i], pts[(i + 1) % nb]);
            self.segs.push((a.x.min(b.x), a.x.max(b.x), i));
        }
        self.segs.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        let m = 2.5 * e;
        for s in 0..nb {
            let (_, hi, i) = self.segs[s];
            for t in s + 1..nb {
                let (lo, _, j) = self.segs[t];
                if lo - hi > m {
                    break;
                }
                let gap = i.abs_diff(j);
                if gap <= 1 || gap == nb - 1 {
                    continue;
                }
                let (a, b) = (pts[i], pts[(i + 1) % nb]);
                let (c, d) = (pts[j], pts[(j + 1) % nb]);
                if !disjoint(a, b, c, d, e) {
                    return false;
                }
            }
        }
        true
    }
}
