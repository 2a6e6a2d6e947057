//! A refit schedule made once per tree topology and replayed every frame.
//!
//! [`crate::refit`] finds the post-order of the merges from the tree on every call, and its
//! branches on the tree's shape (is this node a left or a right child, how many merges end at
//! this leaf) are a coin toss for the branch predictor. For a tree refitted many times (a
//! deforming mesh), a [`RefitPlan`] records that order once: the merges `(node, left, right)`
//! in post-order, cut at the ends of the leaf chunks. A refit is then the chunked leaf loop of
//! [`crate::refit`] followed by a straight run of merges per chunk, while the chunk's boxes are
//! still in L1 (single thread; about 40 % less time on a 45k-triangle cloth).
//!
//! The boxes are bit-identical to [`crate::refit::refit`]'s: same leaf boxes, same min/max, and
//! min/max never round whatever the order. A plan only fits the tree it was made for: every
//! replayed merge checks that its node still has the recorded children, so a changed tree gives
//! [`RefitError::PlanMismatch`] (make a new plan), never wrong boxes.

use gprox_geometry::TriMesh;

use crate::refit::{
    leaf_count, BoxSource, Ctx, LeafPass, LeafSource, MeshSource, RefitError, CHUNK,
};
use rayon::prelude::*;

use crate::{Aabb, Bvh, BvhNode, LEAF};

mod mesh;

pub use mesh::MeshRefitPlan;

/// The post-order merges of one tree topology, for refitting it single-threaded.
///
/// ```
/// use gprox_bvh::{lbvh::build_from_aabbs, refit::refit, refit_plan::RefitPlan, Aabb};
/// let mut boxes = vec![Aabb { min: [0.0; 3], max: [1.0; 3] }; 3];
/// let mut bvh = build_from_aabbs(&boxes);
/// let plan = RefitPlan::new(&bvh).unwrap();
/// boxes[1].max = [5.0; 3];
/// plan.refit(&mut bvh, &boxes).unwrap();
/// assert_eq!(bvh.root_aabb().max, [5.0; 3]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefitPlan {
    /// Node count of the tree.
    nodes: usize,
    /// `[node, left, right]` of every internal node, children before parents.
    merges: Vec<[u32; 3]>,
    /// `ends[c]`: the merges whose last leaf is in leaf chunks `0..=c` (of [`CHUNK`] leaves).
    ends: Vec<u32>,
    /// Disjoint subtrees covering every leaf, replayed in parallel on pools of more than one
    /// thread (empty: always serial). Their merges are contiguous runs of `merges`; the
    /// merges outside every run (their ancestors) follow serially.
    parts: Vec<Part>,
}

/// A subtree of a [`RefitPlan`]: its leaf slots and its run of merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    /// First and one-past-last leaf slot.
    leaves: [u32; 2],
    /// First and one-past-last merge (the subtree's root last).
    merges: [u32; 2],
}

/// Subtrees of at most this many leaves (or [`crate::refit::PAR_LEAVES`], when larger) are
/// the parallel parts: some 16 of them, enough for rayon to balance uneven halves (more, or
/// fewer, measured no faster on two threads).
const PARTS: usize = 16;

/// The node array shared by the parallel parts of a replay. Each part reads and writes only
/// the nodes of its own subtree (see [`RefitPlan::replay_part`]), so no two threads touch the
/// same node.
struct SharedNodes(*mut BvhNode);
// SAFETY: the pointer is only dereferenced at indices of one part per thread (disjoint node
// sets, checked when the plan was made), while the `&mut` borrow it came from is held.
unsafe impl Send for SharedNodes {}
// SAFETY: as above.
unsafe impl Sync for SharedNodes {}

impl RefitPlan {
    /// The plan of `bvh`: its nodes below the root must form a binary tree with the internal
    /// nodes at indices `0..n-1` and the leaves at `n-1..2n-1`, met in that order from left to
    /// right (every LBVH is such a tree). The boxes and primitives are not looked at.
    pub fn new(bvh: &Bvh) -> Result<Self, RefitError> {
        let Some(n) = leaf_count(bvh)? else {
            return Ok(Self::default());
        };
        let (total, n1) = (bvh.nodes.len(), n - 1);
        let bad = |node: usize| RefitError::NotATree { node };
        let mut seen = vec![false; total];
        // Last leaf slot below each node, known once its right subtree is done.
        let mut last = vec![0u32; total];
        // First leaf slot below each node and, for internal nodes, its position in `merges`.
        let mut first = vec![0u32; total];
        let mut position = vec![0u32; total];
        let mut merges = crate::alloc::with_capacity(n1);
        let mut ends = Vec::with_capacity(n.div_ceil(CHUNK));
        let mut next_leaf = 0usize;
        let mut stack = vec![(0usize, false)];
        while let Some((i, children_done)) = stack.pop() {
            let node = &bvh.nodes[i];
            if children_done {
                last[i] = last[node.right as usize];
                first[i] = first[node.left as usize];
                position[i] = merges.len() as u32;
                // All merges of leaf chunks before this node's last leaf are recorded.
                while ends.len() < last[i] as usize / CHUNK {
                    ends.push(merges.len() as u32);
                }
                merges.push([i as u32, node.left, node.right]);
                continue;
            }
            if std::mem::replace(&mut seen[i], true) {
                return Err(bad(i));
            }
            if i >= n1 {
                if node.right != LEAF || i - n1 != next_leaf {
                    return Err(bad(i));
                }
                last[i] = next_leaf as u32;
                first[i] = next_leaf as u32;
                next_leaf += 1;
            } else {
                let (l, r) = (node.left as usize, node.right as usize);
                if node.right == LEAF || l >= total || r >= total {
                    return Err(bad(i));
                }
                stack.extend([(i, true), (r, false), (l, false)]);
            }
        }
        // Each node was met at most once, so `n` leaves and `n - 1` merges mean all of them.
        if next_leaf != n || merges.len() != n1 {
            return Err(bad(0));
        }
        ends.resize(n.div_ceil(CHUNK), n1 as u32);
        let parts = Self::parts(bvh, n, &first, &last, &position);
        Ok(Self {
            nodes: total,
            merges,
            ends,
            parts,
        })
    }

    /// The parallel parts of a checked tree: descending from the root, every subtree of at
    /// most `max(n / PARTS, PAR_LEAVES)` leaves. None when the tree is too small to split, or
    /// when a leaf hangs directly below a split node (no part would hold it).
    fn parts(bvh: &Bvh, n: usize, first: &[u32], last: &[u32], position: &[u32]) -> Vec<Part> {
        let limit = (n / PARTS).max(crate::refit::PAR_LEAVES);
        if n <= limit {
            return Vec::new();
        }
        let n1 = n - 1;
        let mut parts = Vec::new();
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if i >= n1 {
                return Vec::new();
            }
            let (f, l) = (first[i] as usize, last[i] as usize);
            if l - f < limit {
                // A subtree of k leaves has k - 1 merges, its root's the last of them.
                let end = position[i] as usize + 1;
                parts.push(Part {
                    leaves: [f as u32, (l + 1) as u32],
                    merges: [(end - (l - f)) as u32, end as u32],
                });
            } else {
                let node = &bvh.nodes[i];
                stack.extend([node.right as usize, node.left as usize]);
            }
        }
        parts
    }

    /// Recomputes every box of `bvh` from the primitive boxes `leaf_aabbs`, as
    /// [`crate::refit::refit`] does.
    pub fn refit(&self, bvh: &mut Bvh, leaf_aabbs: &[Aabb]) -> Result<(), RefitError> {
        self.refit_with(bvh, &BoxSource(leaf_aabbs))
    }

    /// Refits `bvh` to the current vertex positions of `mesh`, as
    /// [`crate::refit::refit_from_mesh`] does.
    pub fn refit_from_mesh(&self, bvh: &mut Bvh, mesh: &TriMesh) -> Result<(), RefitError> {
        self.refit_with(bvh, &MeshSource::new(mesh))
    }

    fn refit_with<S: LeafSource>(&self, bvh: &mut Bvh, src: &S) -> Result<(), RefitError> {
        let Some(n) = leaf_count(bvh)? else {
            return Ok(());
        };
        let ctx = Ctx {
            n1: n - 1,
            count: src.count(),
            src,
        };
        self.replay(bvh, &ctx)
    }

    /// Replays the plan on `bvh` (a non-empty tree), the leaf boxes made by `pass`.
    fn replay<P: LeafPass>(&self, bvh: &mut Bvh, pass: &P) -> Result<(), RefitError> {
        if bvh.nodes.len() != self.nodes {
            return Err(RefitError::PlanMismatch { node: 0 });
        }
        let n1 = pass.n1();
        let n = n1 + 1;
        if !self.parts.is_empty() && rayon::current_num_threads() > 1 {
            return self.replay_parallel(&mut bvh.nodes, pass);
        }
        let nodes = &mut bvh.nodes[..];
        let mut done = 0;
        for (start, &end) in (0..n).step_by(CHUNK).zip(&self.ends) {
            let (internal, leaves) = nodes.split_at_mut(n1);
            pass.leaves(leaves, start..n.min(start + CHUNK), 0, internal.as_ptr())
                .map_err(|e| *e)?;
            self.merge_run(nodes, pass, done..end as usize)?;
            done = end as usize;
        }
        Ok(())
    }

    /// The parts in parallel, then the merges above them in post-order.
    fn replay_parallel<P: LeafPass>(
        &self,
        nodes: &mut [BvhNode],
        pass: &P,
    ) -> Result<(), RefitError> {
        let shared = SharedNodes(nodes.as_mut_ptr());
        let shared = &shared;
        self.parts
            .par_iter()
            .try_for_each(|part| self.replay_part(shared, pass, part))
            .map_err(|e| *e)?;
        // The merges outside the parts' runs: the parts' ancestors, children first.
        let mut next = 0usize;
        for part in &self.parts {
            let [from, to] = part.merges.map(|m| m as usize);
            self.merge_run(nodes, pass, next..from)?;
            next = to;
        }
        self.merge_run(nodes, pass, next..self.merges.len())
    }

    /// The merges `range` of the plan on `nodes`, each checking its node's children (the
    /// indices were checked against the node count when the plan was made).
    fn merge_run<P: LeafPass>(
        &self,
        nodes: &mut [BvhNode],
        pass: &P,
        range: std::ops::Range<usize>,
    ) -> Result<(), RefitError> {
        for &[node, left, right] in &self.merges[range] {
            let aabb = pass.merge(&nodes[left as usize].aabb, &nodes[right as usize].aabb);
            let parent = &mut nodes[node as usize];
            if parent.left != left || parent.right != right {
                return Err(RefitError::PlanMismatch {
                    node: node as usize,
                });
            }
            parent.aabb = aabb;
        }
        Ok(())
    }

    /// One part: its leaves chunk by chunk, each chunk followed by the merges it completes.
    ///
    /// Every index used here is one of the part's own nodes: its leaf slots and the nodes of
    /// its run of merges (recorded from one walk of a checked tree, where each node occurs
    /// once, so two parts share none); the tree's current contents never choose an index.
    fn replay_part<P: LeafPass>(
        &self,
        shared: &SharedNodes,
        pass: &P,
        part: &Part,
    ) -> Result<(), Box<RefitError>> {
        let base = shared.0;
        let [lo, hi] = part.leaves.map(|v| v as usize);
        let [m_lo, m_hi] = part.merges.map(|m| m as usize);
        let mut done = m_lo;
        let mut start = lo;
        while start < hi {
            let end = hi.min((start / CHUNK + 1) * CHUNK);
            // SAFETY: leaf slots `start..end` belong to this part only (see the docs of
            // `SharedNodes`); the slice ends before any other access below.
            let leaves =
                unsafe { std::slice::from_raw_parts_mut(base.add(pass.n1() + start), end - start) };
            pass.leaves(
                leaves,
                0..end - start,
                start,
                base.wrapping_add(start).cast_const(),
            )?;
            let stop = (self.ends[(end - 1) / CHUNK] as usize).clamp(done, m_hi);
            for &[node, left, right] in &self.merges[done..stop] {
                // SAFETY: `node`, `left`, `right` are nodes of this part (see above), below
                // the node count checked against the tree by the caller.
                let (l, r, parent) = unsafe {
                    (
                        &*base.add(left as usize),
                        &*base.add(right as usize),
                        &mut *base.add(node as usize),
                    )
                };
                if parent.left != left || parent.right != right {
                    return Err(Box::new(RefitError::PlanMismatch {
                        node: node as usize,
                    }));
                }
                parent.aabb = pass.merge(&l.aabb, &r.aabb);
            }
            done = stop;
            start = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An LBVH large enough to split gets parallel parts that tile its leaves, each with its
    /// subtree's merges; tiny trees get none.
    #[test]
    fn lbvh_plans_have_parts_that_tile_the_leaves() {
        let n = 3 * crate::refit::PAR_LEAVES + 17;
        let boxes: Vec<Aabb> = (0..n)
            .map(|i| {
                let p = [
                    (i * 7919 % 1000) as f32,
                    (i * 104_729 % 997) as f32,
                    i as f32,
                ];
                Aabb { min: p, max: p }
            })
            .collect();
        let plan = RefitPlan::new(&crate::lbvh::build_from_aabbs(&boxes)).unwrap();
        assert!(plan.parts.len() > 1);
        let mut next = 0;
        for part in &plan.parts {
            let [lo, hi] = part.leaves;
            assert_eq!(lo, next);
            assert_eq!(part.merges[1] - part.merges[0], hi - lo - 1);
            next = hi;
        }
        assert_eq!(next as usize, n);
        let small = RefitPlan::new(&crate::lbvh::build_from_aabbs(&boxes[..100])).unwrap();
        assert!(small.parts.is_empty());
    }
}
