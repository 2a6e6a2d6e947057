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
//!    union) form exactly one closed loop through distinct vertices (found once per tree
//!    layout and kept, `contours.rs`);
//! 3. the projected loop is simple: consecutive segments meet only at their common vertex and
//!    non-consecutive segments are disjoint (certified with error bounds: first by a linear
//!    star test around a centre, which most loops pass, then by a linear test of loops
//!    monotone in x or y, else by a sweep over the segments sorted by x).
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

mod contours;
mod planar;

use planar::{
    certified_sign, disjoint, from_order_key, monotone_axes, monotone_simple, order_key, orient,
    star_simple, Tol, U,
};

use contours::{Contour, Contours, SINGLE};

use super::layout::{Half, Layout};
use super::traverse::Prune;
use gprox_bvh::normal_cone::DIRECTIONS;

/// Scratch state for certifying nodes of one mesh (reused across nodes and frames), with the
/// contours found for the current layout.
#[derive(Clone, Debug, Default)]
pub(crate) struct Certifier {
    contours: Contours,
    pts: Vec<DVec2>,
    keys: Vec<u64>,
    /// The two chains of the monotone test ([`monotone_simple`]).
    chains: [Vec<DVec2>; 2],
}

impl Certifier {
    /// Scratch for a mesh of `vertex_count` vertices.
    pub(crate) fn new(vertex_count: usize) -> Self {
        Self {
            contours: Contours::new(vertex_count),
            ..Self::default()
        }
    }

    /// Vertex count this scratch was made for.
    pub(crate) fn vertex_count(&self) -> usize {
        self.contours.vertex_count()
    }

    /// Forgets the contours found so far: call when the layout changes.
    pub(crate) fn forget_contours(&mut self) {
        self.contours.clear();
    }

    /// How many node sets have a kept contour.
    #[cfg(test)]
    pub(crate) fn contour_count(&self) -> usize {
        self.contours.len()
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
        let parts = [(layout.boundary(node), none)];
        self.certify((node, SINGLE), &parts, mask, pos, max_abs) == Some(true)
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
        // Shared edges appear in both boundaries: look in the shorter one first.
        let (x, y, bx, by) = if ba.len() <= bb.len() {
            (a, b, ba, bb)
        } else {
            (b, a, bb, ba)
        };
        let silent = |shared: bool| match shared {
            true => Prune::Descend,
            false => Prune::DescendSilently,
        };
        if mask == 0 {
            return silent(layout.share_edge(x, y));
        }
        let parts = [(bx, layout.range(y)), (by, layout.range(x))];
        match self.certify((x, y), &parts, mask, pos, max_abs) {
            Some(true) => Prune::Skip,
            Some(false) => Prune::Descend,
            None => Prune::DescendSilently,
        }
    }

    /// The contour test on the boundary half-edges of `parts` (each: a node's boundary without
    /// the edges whose face across lies in the given leaf-slot range), for the set `key` whose
    /// faces all have `mask`'s first direction in their certified masks. `None` when there are
    /// several parts and the first has no edge across to the slot range given with it (the
    /// parts share no edge; cheaper than a separate search, since it is read anyway).
    fn certify(
        &mut self,
        key: (u32, u32),
        parts: &[(&[Half], [u32; 2])],
        mask: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> Option<bool> {
        // 2. Boundary half-edges, one outgoing per vertex, one loop (found once per layout).
        let (start, end) = match self.contours.get(key, parts) {
            Contour::Apart => return None,
            Contour::Broken => return Some(false),
            Contour::Loop { start, end } => (start, end),
        };
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
        // The loop, projected.
        self.pts.clear();
        let mut bbox = [DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)];
        for &v in self.contours.vertices(start, end) {
            let p = proj(v);
            bbox = [bbox[0].min(p), bbox[1].max(p)];
            self.pts.push(p);
        }
        let nb = self.pts.len();
        // 3. Simple projected loop: the linear star test, else the general sweep.
        // The first two points again at the end: `pts[i + 1]`, `pts[i + 2]` without wrapping.
        self.pts.extend_from_within(..2);
        let pts = &self.pts;
        if star_simple(&pts[..nb], bbox, e) {
            return Some(true);
        }
        let tol = Tol::of_box(e, bbox);
        // Quarter turns are exact and keep the orientation and `tol`: monotone in x, or in y.
        let [in_x, in_y] = monotone_axes(&pts[..=nb], 2.5 * tol.e);
        let chains = &mut self.chains;
        if (in_x && monotone_simple(&pts[..nb], tol, |p| p, chains))
            || (in_y && monotone_simple(&pts[..nb], tol, |p| DVec2::new(p.y, -p.x), chains))
        {
            return Some(true);
        }
        for i in 0..nb {
            let (a, b, c) = (pts[i], pts[i + 1], pts[i + 2]);
            let (ab, bc) = (b - a, c - b);
            let turn = orient(a, b, c, tol) != 0;
            let ahead = certified_sign(ab.x, ab.y, bc.x, bc.y, tol, false) == 1;
            if !(turn || ahead) {
                return Some(false);
            }
        }
        // Sweep in x over the segments sorted by their left end `lo`: keys are order-preserving
        // bits of `lo` with the low bits replaced by the segment index. The cleared bits make
        // the decoded key a lower bound of `lo`, non-decreasing along the sorted keys, so
        // breaking on it never skips an overlapping segment.
        let bits = usize::BITS - (nb - 1).leading_zeros();
        let low = (1u64 << bits) - 1;
        self.keys.clear();
        for i in 0..nb {
            let lo = pts[i].x.min(pts[i + 1].x);
            self.keys.push(order_key(lo) & !low | i as u64);
        }
        self.keys.sort_unstable();
        let m = 2.5 * tol.e;
        for s in 0..nb {
            let i = (self.keys[s] & low) as usize;
            let hi = pts[i].x.max(pts[i + 1].x);
            for &key in &self.keys[s + 1..] {
                if from_order_key(key & !low) - hi > m {
                    break;
                }
                let j = (key & low) as usize;
                let gap = i.abs_diff(j);
                if gap <= 1 || gap == nb - 1 {
                    continue;
                }
                let (a, b) = (pts[i], pts[i + 1]);
                let (c, d) = (pts[j], pts[j + 1]);
                if !disjoint(a, b, c, d, tol) {
                    return Some(false);
                }
            }
        }
        Some(true)
    }
}
