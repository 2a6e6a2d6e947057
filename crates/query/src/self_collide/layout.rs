//! Per-node data for normal-cone culling that depends only on the mesh topology and the BVH
//! layout (constant while the tree is only refitted), plus the per-frame certified masks.
//!
//! * leaf-slot range `[first, last]` of every node and the leaf slot of every face;
//! * the boundary half-edges of every node's face set, built bottom-up: the boundary of a node
//!   is its children's boundaries minus the edges they share, so the boundary of the union of
//!   two nodes `X ∪ Y` is read off `∂X` and `∂Y` in `O(|∂X| + |∂Y|)` (an edge of `∂X` is
//!   interior to the union exactly when the face across it has its leaf slot in `Y`'s range);
//! * nodes containing a non-manifold or inconsistently oriented edge are marked `bad`
//!   (never certified);
//! * per frame: a certified direction mask per node (the AND of its faces'
//!   [`gprox_bvh::normal_cone::certified_direction_mask`]).

use glam::Vec3;
use gprox_bvh::{normal_cone::certified_direction_masks, Bvh};

use super::topology::{Topology, BAD_EDGE, NO_FACE};
use super::traverse::child_ranges;

/// No leaf slot (boundary edge of the mesh).
const NO_SLOT: u32 = u32::MAX;

/// One boundary half-edge `u → v` of a node's face set, with the leaf slot of the face across
/// it ([`NO_SLOT`] on the mesh boundary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Half {
    pub(crate) u: u32,
    pub(crate) v: u32,
    pub(crate) adj: u32,
}

/// Topology- and layout-dependent culling data of one (mesh, BVH) pair.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    /// Children of every node and faces of the mesh it was built for (validation).
    children: Vec<[u32; 2]>,
    faces: Vec<[u32; 3]>,
    /// The faces in leaf-slot order (the leaves' masks are computed in this order).
    slot_tris: Vec<[u32; 3]>,
    /// Per node: the leaf-slot range `[first, last]` and the span `[start, end)` of its
    /// boundary half-edges in `bnd` (together: one cache line serves both lookups).
    node: Vec<[u32; 4]>,
    /// Internal nodes, every child before its parent.
    post: Vec<u32>,
    bnd: Vec<Half>,
    /// `adj` of `bnd`, sorted within each node's span.
    adj_sorted: Vec<u32>,
    /// Leaves (as offsets from the first leaf) whose face has a [`BAD_EDGE`] (their masks are
    /// cleared; usually none, so this is a list rather than a flag per leaf).
    bad_leaves: Vec<u32>,
}

impl Layout {
    /// Whether this layout was built for `bvh` over `faces`.
    pub(crate) fn matches(&self, bvh: &Bvh, faces: &[[u32; 3]]) -> bool {
        self.children.len() == bvh.nodes.len()
            && self.faces.as_slice() == faces
            && self
                .children
                .chunks(64)
                .zip(bvh.nodes.chunks(64))
                .all(|(cs, ns)| {
                    // Branch-free within a chunk (this runs every frame on every node).
                    let same = |(c, n): (&[u32; 2], &gprox_bvh::BvhNode)| {
                        (c[0] == n.left) & (c[1] == n.right)
                    };
                    cs.iter().zip(ns).fold(true, |all, cn| all & same(cn))
                })
    }

    /// Builds the layout of `bvh` (an LBVH with one leaf per face of `faces`, at least two
    /// leaves, `topo` computed from `faces`); `None` when the tree does not have that layout
    /// (the caller then does not cull).
    pub(crate) fn new(bvh: &Bvh, faces: &[[u32; 3]], topo: &Topology) -> Option<Self> {
        let len = bvh.nodes.len();
        let n = bvh.leaf_count();
        let n1 = bvh.first_leaf();
        if n < 2 || len != 2 * n - 1 || faces.len() != n || topo.face_count() != n {
            return None;
        }
        let mut range = vec![[NO_SLOT, NO_SLOT]; len];
        let mut post = Vec::with_capacity(n - 1);
        // Pre-order with ranges; reversed pre-order (right child first) lists children first.
        let mut stack = vec![(0u32, 0u32, n as u32 - 1)];
        while let Some((i, first, last)) = stack.pop() {
            let r = range.get_mut(i as usize)?;
            if r[0] != NO_SLOT || first > last {
                return None; // visited twice, or an inverted range: not an LBVH
            }
            *r = [first, last];
            let node = &bvh.nodes[i as usize];
            if node.is_leaf() {
                if i as usize != n1 + first as usize || first != last {
                    return None;
                }
                continue;
            }
            if i as usize >= n1 {
                return None;
            }
            post.push(i);
            let (rl, rr) = child_ranges(bvh, node, first, last);
            stack.push((node.left, rl[0], rl[1]));
            stack.push((node.right, rr[0], rr[1]));
        }
        post.reverse();
        let mut slot = vec![NO_SLOT; n];
        for k in 0..n {
            let s = slot.get_mut(bvh.nodes[n1 + k].left as usize)?;
            if *s != NO_SLOT {
                return None; // a face in two leaves
            }
            *s = k as u32;
        }
        if post.len() != n - 1 {
            return None;
        }
        let mut span = vec![[0u32, 0u32]; len];
        let mut bad = vec![false; len];
        let mut bnd = Vec::with_capacity(6 * n);
        for k in 0..n {
            let node = n1 + k;
            let f = bvh.nodes[node].left as usize;
            let start = bnd.len() as u32;
            let tri = faces[f];
            for e in 0..3 {
                let a = topo.adjacent[f][e];
                if a == BAD_EDGE || a as usize == f {
                    bad[node] = true;
                    break;
                }
                let adj = if a == NO_FACE {
                    NO_SLOT
                } else {
                    slot[a as usize]
                };
                bnd.push(Half {
                    u: tri[e],
                    v: tri[(e + 1) % 3],
                    adj,
                });
            }
            if bad[node] {
                bnd.truncate(start as usize);
            }
            span[node] = [start, bnd.len() as u32];
        }
        for &i in &post {
            let node = &bvh.nodes[i as usize];
            let (l, r) = (node.left as usize, node.right as usize);
            let start = bnd.len() as u32;
            if bad[l] || bad[r] {
                bad[i as usize] = true;
            } else {
                for (c, other) in [(l, r), (r, l)] {
                    let [lo, hi] = range[other];
                    let [s, e] = span[c];
                    for h in s..e {
                        let h = bnd[h as usize];
                        if !(lo <= h.adj && h.adj <= hi) {
                            bnd.push(h);
                        }
                    }
                }
            }
            span[i as usize] = [start, bnd.len() as u32];
        }
        let mut adj_sorted: Vec<u32> = bnd.iter().map(|h| h.adj).collect();
        for &[s, e] in &span {
            adj_sorted[s as usize..e as usize].sort_unstable();
        }
        let slot_tris = (0..n)
            .map(|k| faces[bvh.nodes[n1 + k].left as usize])
            .collect();
        let node = range
            .iter()
            .zip(&span)
            .map(|(r, s)| [r[0], r[1], s[0], s[1]])
            .collect();
        Some(Self {
            slot_tris,
            adj_sorted,
            children: bvh.nodes.iter().map(|n| [n.left, n.right]).collect(),
            faces: faces.to_vec(),
            node,
            post,
            bnd,
            bad_leaves: (0..n as u32).filter(|&k| bad[n1 + k as usize]).collect(),
        })
    }

    /// Leaf-slot range `[first, last]` of `node`.
    #[inline]
    pub(crate) fn range(&self, node: u32) -> [u32; 2] {
        let [first, last, ..] = self.node[node as usize];
        [first, last]
    }

    /// Boundary half-edges of `node`.
    #[inline]
    pub(crate) fn boundary(&self, node: u32) -> &[Half] {
        let [.., s, e] = self.node[node as usize];
        &self.bnd[s as usize..e as usize]
    }

    /// Whether some boundary edge of `a` has the face across it in `b` (the two nodes share an
    /// edge): a binary search in `a`'s sorted slots.
    #[inline]
    pub(crate) fn share_edge(&self, a: u32, b: u32) -> bool {
        let [.., s, e] = self.node[a as usize];
        let adj = &self.adj_sorted[s as usize..e as usize];
        let [lo, hi] = self.range(b);
        let k = adj.partition_point(|&x| x < lo);
        k < adj.len() && adj[k] <= hi
    }

    /// Certified direction masks of every node for the positions `pos` (bottom-up AND of the
    /// faces' [`gprox_bvh::normal_cone::certified_direction_mask`]; 0 for bad nodes) into `masks`.
    pub(crate) fn masks(&self, pos: &[Vec3], masks: &mut Vec<u32>) {
        // Every entry is written below: no clearing.
        masks.resize(self.children.len(), 0);
        let n1 = self.children.len() - self.slot_tris.len();
        // Chunks gathered by coordinate, so the certified tests vectorise across faces.
        const CHUNK: usize = 64;
        let leaves = &mut masks[n1..];
        // Lanes past the last face keep earlier values: computed, then not copied out.
        let mut corners = [[[0.0f32; CHUNK]; 3]; 3];
        for (tris, out) in self.slot_tris.chunks(CHUNK).zip(leaves.chunks_mut(CHUNK)) {
            for (i, tri) in tris.iter().enumerate().take(CHUNK) {
                let (a, b, c) = (
                    pos[tri[0] as usize],
                    pos[tri[1] as usize],
                    pos[tri[2] as usize],
                );
                [corners[0][0][i], corners[0][1][i], corners[0][2][i]] = a.to_array();
                [corners[1][0][i], corners[1][1][i], corners[1][2][i]] = b.to_array();
                [corners[2][0][i], corners[2][1][i], corners[2][2][i]] = c.to_array();
            }
            let mut m = [0u32; CHUNK];
            certified_direction_masks(&corners, &mut m);
            out.copy_from_slice(&m[..out.len()]);
        }
        for &k in &self.bad_leaves {
            leaves[k as usize] = 0;
        }
        for &i in &self.post {
            let [l, r] = self.children[i as usize];
            masks[i as usize] = masks[l as usize] & masks[r as usize];
        }
    }
}
