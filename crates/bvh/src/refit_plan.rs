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

use crate::refit::{leaf_count, BoxSource, Ctx, LeafSource, MeshSource, RefitError, CHUNK};
use crate::{Aabb, Bvh, LEAF};

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
}

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
        let mut merges = Vec::with_capacity(n1);
        let mut ends = Vec::with_capacity(n.div_ceil(CHUNK));
        let mut next_leaf = 0usize;
        let mut stack = vec![(0usize, false)];
        while let Some((i, children_done)) = stack.pop() {
            let node = &bvh.nodes[i];
            if children_done {
                last[i] = last[node.right as usize];
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
        Ok(Self {
            nodes: total,
            merges,
            ends,
        })
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
        if bvh.nodes.len() != self.nodes {
            return Err(RefitError::PlanMismatch { node: 0 });
        }
        let n1 = n - 1;
        let ctx = Ctx {
            n1,
            count: src.count(),
            src,
        };
        let nodes = &mut bvh.nodes[..];
        let mut done = 0;
        for (start, &end) in (0..n).step_by(CHUNK).zip(&self.ends) {
            let (internal, leaves) = nodes.split_at_mut(n1);
            ctx.leaves(leaves, start..n.min(start + CHUNK), 0, internal)
                .map_err(|e| *e)?;
            // The indices were checked against the node count when the plan was made.
            for &[node, left, right] in &self.merges[done..end as usize] {
                let aabb = src.merge(&nodes[left as usize].aabb, &nodes[right as usize].aabb);
                let parent = &mut nodes[node as usize];
                if parent.left != left || parent.right != right {
                    return Err(RefitError::PlanMismatch {
                        node: node as usize,
                    });
                }
                parent.aabb = aabb;
            }
            done = end as usize;
        }
        Ok(())
    }
}
