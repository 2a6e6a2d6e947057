//! Bottom-up refit of an LBVH: LBVH spec step 6.
//!
//! Leaf box = the primitive's box; internal box = merge of the children. Min/max never round,
//! so the boxes are bit-identical whatever the visiting order; the GPU kernel walks up from the
//! leaves with one atomic visit flag per internal node. The CPU version here splits the tree
//! top-down into subtrees of at most [`PAR_LEAVES`] leaves refitted in parallel (`rayon::join`);
//! each of those is refitted by one left-to-right post-order scan over its leaves with a stack
//! of finished left children (no recursion, no atomics; see [`Ctx::serial`]).
//!
//! It relies on a property of Karras trees: the internal nodes below internal node `i` covering
//! leaves `[f, l]` are exactly the indices `[f, l-1]` when `i == f` and `[f+1, l]` when `i == l`.
//! So every subtree owns a contiguous slice of the node array and the recursion splits `&mut`
//! slices — no locks, no atomics (the one `unsafe` is a prefetch hint).
//!
//! The time goes into random reads (the primitives of leaves in Morton order) and branches
//! that no predictor gets right (the tree's shape), so the scan prefetches the primitives
//! ahead, works in L1-sized chunks, and tells left from right children by index where it can.

use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::{Aabb, Bvh, BvhNode, LEAF};

mod leaves;
mod source;

pub(crate) use leaves::{prefetch_streams, LeafPass, NEAR};
pub(crate) use source::{face_aabb, merge_finite, prefetch, BoxSource, LeafSource, MeshSource};

/// Subtrees with more leaves than this are split and their halves refitted in parallel.
pub const PAR_LEAVES: usize = 1 << 12;
/// Deeper than any tree built by [`crate::lbvh`] (prefix lengths grow strictly downwards and
/// range over `-1..=96`); a deeper tree is rejected rather than risking the stack.
const MAX_DEPTH: u32 = 128;

/// Errors of [`refit`] and [`refit_from_mesh`]: the tree does not fit the primitives or is not
/// laid out as an LBVH.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefitError {
    /// The node array does not have `2n - 1` nodes, or its parent array differs in length.
    #[error("bvh has {nodes} nodes and {parents} parents; expected 2n-1 of each")]
    BadNodeCount {
        /// Length of `nodes`.
        nodes: usize,
        /// Length of `parents`.
        parents: usize,
    },
    /// A leaf names a primitive that does not exist.
    #[error("leaf node {node} refers to primitive {primitive}, but there are only {count}")]
    PrimitiveOutOfRange {
        /// Node index of the leaf.
        node: usize,
        /// The primitive index stored in the leaf.
        primitive: u32,
        /// Number of primitives given.
        count: usize,
    },
    /// An internal node's children do not follow the LBVH layout.
    #[error("internal node {node} (leaves {first}..={last}) has children {left}, {right} that do not follow the LBVH layout")]
    BadChildren {
        /// The internal node.
        node: usize,
        /// First leaf slot below it.
        first: usize,
        /// Last leaf slot below it.
        last: usize,
        /// Its left child.
        left: u32,
        /// Its right child.
        right: u32,
    },
    /// The tree is deeper than any LBVH can be.
    #[error("bvh deeper than {MAX_DEPTH} levels at node {node}")]
    TooDeep {
        /// The node where the limit was hit.
        node: usize,
    },
    /// Building a [`RefitPlan`](crate::refit_plan::RefitPlan): the nodes below the root are not
    /// a binary tree with the internal nodes first and the leaves, in slot order, after them.
    #[error("bvh node {node} is reached twice, out of range, or breaks the leaf order")]
    NotATree {
        /// The offending node.
        node: usize,
    },
    /// Refitting with a [`RefitPlan`](crate::refit_plan::RefitPlan): the tree is not the one the
    /// plan was made for.
    #[error("bvh node {node} has other children than the refit plan was made for")]
    PlanMismatch {
        /// The first node found changed.
        node: usize,
    },
    /// Refitting with a [`MeshRefitPlan`](crate::refit_plan::MeshRefitPlan): the mesh is not the
    /// one the plan was made for (nor a clone of it): its
    /// [`topology_id`](gprox_geometry::TriMesh::topology_id) differs.
    #[error("mesh topology {found} is not the refit plan's mesh (topology {expected})")]
    OtherMesh {
        /// Topology id of the plan's mesh.
        expected: u64,
        /// Topology id of the mesh given.
        found: u64,
    },
}

/// The f32 box of one triangle's corners (spec step 1).
#[inline]
pub fn triangle_aabb(t: &[glam::Vec3; 3]) -> Aabb {
    let [a, b, c] = t;
    let lo = |i: usize| a[i].min(b[i]).min(c[i]);
    let hi = |i: usize| a[i].max(b[i]).max(c[i]);
    Aabb {
        min: [lo(0), lo(1), lo(2)],
        max: [hi(0), hi(1), hi(2)],
    }
}

/// Boxes of every face of `mesh`, in face order.
pub fn triangle_aabbs(mesh: &TriMesh) -> Vec<Aabb> {
    let pos = mesh.positions();
    let f = |face: &[u32; 3]| face_aabb(pos, face);
    if mesh.face_count() < 1 << 14 {
        mesh.faces().iter().map(f).collect()
    } else {
        let mut boxes = crate::alloc::with_capacity(mesh.face_count());
        boxes.par_extend(mesh.faces().par_iter().with_min_len(4096).map(f));
        boxes
    }
}

/// Recomputes every box of `bvh` from the primitive boxes `leaf_aabbs` (indexed by primitive,
/// as stored in the leaves' `left`). Topology and parents are unchanged.
///
/// ```
/// use gprox_bvh::{lbvh::build_from_aabbs, refit::refit, Aabb};
/// let mut boxes = vec![Aabb { min: [0.0; 3], max: [1.0; 3] }; 3];
/// let mut bvh = build_from_aabbs(&boxes);
/// boxes[1].max = [5.0; 3];
/// refit(&mut bvh, &boxes).unwrap();
/// assert_eq!(bvh.root_aabb().max, [5.0; 3]);
/// ```
pub fn refit(bvh: &mut Bvh, leaf_aabbs: &[Aabb]) -> Result<(), RefitError> {
    refit_with(bvh, &BoxSource(leaf_aabbs))
}

/// Refits `bvh` to the current vertex positions of `mesh` (a deforming mesh's next frame), the
/// leaf boxes computed on the fly as in [`triangle_aabbs`].
pub fn refit_from_mesh(bvh: &mut Bvh, mesh: &TriMesh) -> Result<(), RefitError> {
    refit_with(bvh, &MeshSource::new(mesh))
}

/// Leaves whose boxes [`Ctx::serial`] computes before merging them: small enough that they
/// and the internal nodes they complete stay in L1.
pub(crate) const CHUNK: usize = 256;

/// The leaf count `n` of `bvh` (`None` for an empty tree), after checking that it has `2n - 1`
/// nodes and as many parents.
pub(crate) fn leaf_count(bvh: &Bvh) -> Result<Option<usize>, RefitError> {
    let total = bvh.nodes.len();
    if total == 0 && bvh.parents.is_empty() {
        return Ok(None);
    }
    if total.is_multiple_of(2) || bvh.parents.len() != total {
        return Err(RefitError::BadNodeCount {
            nodes: total,
            parents: bvh.parents.len(),
        });
    }
    Ok(Some(total.div_ceil(2)))
}

fn refit_with<S: LeafSource>(bvh: &mut Bvh, src: &S) -> Result<(), RefitError> {
    let count = src.count();
    let Some(n) = leaf_count(bvh)? else {
        return Ok(());
    };
    let (internal, leaves) = bvh.nodes.split_at_mut(n - 1);
    let ctx = Ctx {
        n1: n - 1,
        count,
        src,
    };
    if n == 1 {
        ctx.leaves(leaves, 0..1, 0, std::ptr::null())
            .map_err(|e| *e)?;
        return Ok(());
    }
    refit_subtree(&ctx, internal, leaves, 0, n - 1, false, 0).map_err(|e| *e)?;
    Ok(())
}

/// Inputs shared by the whole recursion.
pub(crate) struct Ctx<'a, S> {
    /// Index of the first leaf node (`n - 1`).
    pub(crate) n1: usize,
    /// Number of primitives.
    pub(crate) count: usize,
    /// The primitive boxes.
    pub(crate) src: &'a S,
}

/// The split `γ` of internal node `node` over leaf slots `[first, last]`, after checking that
/// its children follow the LBVH layout: left child leaf `γ` (iff `γ == first`) or internal `γ`,
/// right child leaf `last` (iff `γ + 1 == last`) or internal `γ + 1`.
#[inline]
fn split_of(
    n1: usize,
    node: usize,
    children: (u32, u32),
    first: usize,
    last: usize,
) -> Result<usize, Box<RefitError>> {
    let (left, right) = (children.0 as usize, children.1 as usize);
    let left_is_leaf = left >= n1;
    let gamma = if left_is_leaf { left - n1 } else { left };
    let right_expected = if gamma + 1 == last {
        n1 + last
    } else {
        gamma + 1
    };
    if gamma < first || gamma >= last || left_is_leaf != (gamma == first) || right != right_expected
    {
        return Err(Box::new(RefitError::BadChildren {
            node,
            first,
            last,
            left: left as u32,
            right: right as u32,
        }));
    }
    Ok(gamma)
}

/// A finished subtree of the scan in [`Ctx::serial`]: its node, first leaf slot and box.
#[derive(Clone, Copy)]
struct Done {
    node: u32,
    first: u32,
    aabb: Aabb,
}

impl<S: LeafSource> Ctx<'_, S> {
    /// Refits the subtree over leaf slots `[first, last]` (`first < last`) on this thread.
    /// `nodes` holds its internal nodes (global indices `base..base + nodes.len()`), `leaves`
    /// its leaves (slots `first..=last`).
    ///
    /// One left-to-right scan in post-order, [`CHUNK`] leaves at a time: their boxes first
    /// (independent iterations), then the internal nodes they complete, while all of it is in
    /// L1. A stack holds the finished left children; a finished right child is merged with the
    /// stack top (its sibling) into their parent, which is finished in turn. The LBVH layout
    /// tells the sides apart without the parent array: an internal node covering `[f, k]` has
    /// index `k` if it is a left child and `f` if a right child (or the root), so leaf `k` is
    /// a left child iff internal node `k` starts at `k`, and the parent of a right child
    /// finished at leaf `k` is node `k` if that one has it on its right, else node `f`. Every
    /// merge checks the parent's children are the two merged nodes (and the root covers the
    /// whole range), so a tree that passes is exactly the one its children describe.
    fn serial(
        &self,
        nodes: &mut [BvhNode],
        base: usize,
        leaves: &mut [BvhNode],
        first: usize,
        last: usize,
    ) -> Result<Aabb, Box<RefitError>> {
        let n1 = self.n1;
        let root = if base == first { first } else { last };
        let bad = |node: usize, f: usize, l: usize, n: &BvhNode| {
            Box::new(RefitError::BadChildren {
                node,
                first: f,
                last: l,
                left: n.left,
                right: n.right,
            })
        };
        // Node `k` with split `γ`, if it is in this subtree.
        let split = |n: &BvhNode| {
            let left = n.left as usize;
            if left >= n1 {
                left - n1
            } else {
                left
            }
        };
        let mut stack = [Done {
            node: 0,
            first: 0,
            aabb: Aabb::EMPTY,
        }; MAX_DEPTH as usize + 1];
        let mut top = 0;
        let count = leaves.len();
        for start in (0..count).step_by(CHUNK) {
            let end = count.min(start + CHUNK);
            self.leaves(leaves, start..end, first, nodes.as_ptr())?;
            for (k, leaf) in (first + start..).zip(&leaves[start..end]) {
                let mut cur = Done {
                    node: (n1 + k) as u32,
                    first: k as u32,
                    aabb: leaf.aabb,
                };
                // Internal node `k` covers `[k, y]` (its split is at least `k`) or `[x, k]`:
                // leaf `k` is the leftmost leaf below it, a left child, or the rightmost, a
                // right child. The subtree's first leaf is a left child, its last a right one.
                let node_k = nodes.get(k.wrapping_sub(base));
                let is_left = k == first || (k != last && node_k.is_some_and(|n| split(n) >= k));
                if is_left {
                    if top == stack.len() {
                        return Err(Box::new(RefitError::TooDeep { node: k }));
                    }
                    stack[top] = cur;
                    top += 1;
                    continue;
                }
                // `cur` is a right child: merge up until a left child (or the root). Its
                // parent covers `[f, k]` (`f` = its left sibling's first leaf), so it is node
                // `k` (a left child) if that one has `cur` on its right, else node `f`.
                let right_of_k = node_k.map_or(LEAF, |n| n.right);
                loop {
                    let f = if top > 0 {
                        stack[top - 1].first as usize
                    } else {
                        first
                    };
                    let p = if right_of_k == cur.node { k } else { f };
                    let Some(parent) = nodes.get_mut(p.wrapping_sub(base)) else {
                        return Err(Box::new(RefitError::BadChildren {
                            node: p,
                            first: f,
                            last: k,
                            left: LEAF,
                            right: cur.node,
                        }));
                    };
                    if top == 0
                        || parent.left != stack[top - 1].node
                        || parent.right != cur.node
                        || (p == root) != (f == first && k == last)
                    {
                        return Err(bad(p, f, k, parent));
                    }
                    top -= 1;
                    let aabb = self.src.merge(&stack[top].aabb, &cur.aabb);
                    parent.aabb = aabb;
                    cur = Done {
                        node: p as u32,
                        first: f as u32,
                        aabb,
                    };
                    if p == root {
                        return Ok(aabb);
                    }
                    if p == k {
                        // A left child (index = its last leaf): its sibling starts at k + 1.
                        stack[top] = cur;
                        top += 1;
                        break;
                    }
                    // A right child (index = its first leaf): on to its parent.
                }
            }
        }
        // The last leaf's walk ends at the root or in an error.
        Err(bad(root, first, last, &nodes[root - base]))
    }
}

/// Refits the subtree covering leaf slots `[first, last]` (`first < last`) whose internal nodes
/// are `nodes` (its root at the end of the slice when `root_at_end`, else at the start) and whose
/// leaves are `leaves`: big subtrees split in two halves refitted in parallel, small ones are
/// refitted by [`Ctx::serial`].
fn refit_subtree<S: LeafSource>(
    ctx: &Ctx<'_, S>,
    nodes: &mut [BvhNode],
    leaves: &mut [BvhNode],
    first: usize,
    last: usize,
    root_at_end: bool,
    depth: u32,
) -> Result<Aabb, Box<RefitError>> {
    let base = if root_at_end { first + 1 } else { first };
    if last - first <= PAR_LEAVES || depth > MAX_DEPTH {
        return ctx.serial(nodes, base, leaves, first, last);
    }
    let root_index = if root_at_end { last } else { first };
    let split = if root_at_end {
        nodes.split_last_mut()
    } else {
        nodes.split_first_mut()
    };
    let Some((root, rest)) = split else {
        return Err(Box::new(RefitError::BadChildren {
            node: root_index,
            first,
            last,
            left: LEAF,
            right: LEAF,
        }));
    };
    let gamma = split_of(ctx.n1, root_index, (root.left, root.right), first, last)?;
    // `rest` holds the internal nodes [first+1, last-1]: left subtree [first+1, γ], right
    // subtree [γ+1, last-1]; `leaves` the slots [first, last]. Both halves have more than one
    // leaf here (a subtree this big splits far from its ends unless the codes are degenerate).
    let (lpart, rpart) = rest.split_at_mut(gamma - first);
    let (lleaves, rleaves) = leaves.split_at_mut(gamma + 1 - first);
    let half = |nodes: &mut [BvhNode], leaves: &mut [BvhNode], f: usize, l: usize, at_end| {
        if f == l {
            ctx.leaves(leaves, 0..1, f, std::ptr::null())?;
            Ok(leaves[0].aabb)
        } else {
            refit_subtree(ctx, nodes, leaves, f, l, at_end, depth + 1)
        }
    };
    let (lb, rb) = rayon::join(
        || half(lpart, lleaves, first, gamma, true),
        || half(rpart, rleaves, gamma + 1, last, false),
    );
    let aabb = ctx.src.merge(&lb?, &rb?);
    root.aabb = aabb;
    Ok(aabb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refit_plan::{MeshRefitPlan, RefitPlan};

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Whether every box of `bvh` is exactly what its children (from the root) say, every node
    /// reached once.
    fn consistent(bvh: &Bvh, boxes: &[Aabb]) -> bool {
        let mut seen = vec![false; bvh.nodes.len()];
        let mut todo = vec![0usize];
        while let Some(i) = todo.pop() {
            if std::mem::replace(&mut seen[i], true) {
                return false;
            }
            let nd = bvh.nodes[i];
            let expect = if nd.is_leaf() {
                boxes[nd.left as usize]
            } else {
                let (l, r) = (nd.left as usize, nd.right as usize);
                if l >= seen.len() || r >= seen.len() {
                    return false;
                }
                todo.extend([l, r]);
                bvh.nodes[l].aabb.merge(&bvh.nodes[r].aabb)
            };
            if nd.aabb != expect {
                return false;
            }
        }
        seen.iter().all(|&s| s)
    }

    /// Random corruptions of the children and parent arrays never panic, and whenever the refit
    /// (free, or with a [`RefitPlan`] or a [`MeshRefitPlan`]) succeeds the boxes are exact for the tree the children
    /// describe. Sizes on both sides of [`PAR_LEAVES`] and [`CHUNK`], on two threads (so a big
    /// tree's plans replay their parts in parallel).
    #[test]
    fn corrupted_trees_error_or_refit_exactly() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(corrupted_trees_on_this_pool);
    }

    fn corrupted_trees_on_this_pool() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in [2usize, 3, 7, 300, 3 * PAR_LEAVES] {
            let boxes: Vec<Aabb> = (0..n)
                .map(|_| {
                    let p = [0, 1, 2].map(|_| (xorshift(&mut x) % 1000) as f32 * 0.01);
                    Aabb {
                        min: p,
                        max: p.map(|c| c + 0.5),
                    }
                })
                .collect();
            let bvh = crate::lbvh::build_from_aabbs(&boxes);
            let total = bvh.nodes.len() as u64;
            let mut fresh = bvh.clone();
            refit(&mut fresh, &boxes).unwrap();
            assert_eq!(fresh, bvh);
            let plan = RefitPlan::new(&bvh).unwrap();
            plan.refit(&mut fresh, &boxes).unwrap();
            assert_eq!(fresh, bvh);
            // A mesh of one (degenerate) triangle per box, spanning it.
            let corners = boxes.iter().flat_map(|b| [b.min, b.max]);
            let mesh = TriMesh::new(
                corners.map(glam::Vec3::from_array).collect(),
                (0..n as u32).map(|i| [2 * i, 2 * i + 1, 2 * i]).collect(),
            )
            .unwrap();
            let mesh_plan = MeshRefitPlan::new(&bvh, &mesh).unwrap();
            mesh_plan.refit(&mut fresh, &mesh).unwrap();
            assert_eq!(fresh, bvh);
            for _ in 0..300 {
                let mut t = bvh.clone();
                for _ in 0..1 + xorshift(&mut x) % 2 {
                    let i = (xorshift(&mut x) % total) as usize;
                    let v = match xorshift(&mut x) % 8 {
                        0 => LEAF,
                        1 => (total + xorshift(&mut x) % 4) as u32,
                        _ => (xorshift(&mut x) % total) as u32,
                    };
                    match xorshift(&mut x) % 4 {
                        0 => t.nodes[i].left = v,
                        1 => t.nodes[i].right = v,
                        2 => {
                            let n = &mut t.nodes[i];
                            (n.left, n.right) = (n.right, n.left);
                        }
                        _ => t.parents[i] = v,
                    }
                }
                if refit(&mut t, &boxes).is_ok() {
                    assert!(consistent(&t, &boxes), "n = {n}");
                }
                // A plan of the intact tree on the corrupted one, and a plan of the corrupted
                // one: errors or exact boxes.
                let mut u = t.clone();
                if plan.refit(&mut u, &boxes).is_ok() {
                    assert!(consistent(&u, &boxes), "n = {n}");
                }
                let mut u = t.clone();
                if mesh_plan.refit(&mut u, &mesh).is_ok() {
                    assert!(consistent(&u, &boxes), "n = {n}");
                }
                if let Ok(own) = RefitPlan::new(&t) {
                    if own.refit(&mut t, &boxes).is_ok() {
                        assert!(consistent(&t, &boxes), "n = {n}");
                    }
                }
            }
        }
    }
}
