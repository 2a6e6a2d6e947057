//! Bottom-up refit of an LBVH: LBVH spec step 6.
//!
//! Leaf box = the primitive's box; internal box = merge of the children. Min/max never round,
//! so the boxes are bit-identical whatever the visiting order; the GPU kernel walks up from the
//! leaves with one atomic visit flag per internal node, the CPU version here recurses top-down
//! and merges on the way back, splitting the work with `rayon::join`. Leaf boxes are computed
//! where the recursion reaches the leaf (one pass over the node array, no atomics).
//!
//! It relies on a property of Karras trees: the internal nodes below internal node `i` covering
//! leaves `[f, l]` are exactly the indices `[f, l-1]` when `i == f` and `[f+1, l]` when `i == l`.
//! So every subtree owns a contiguous slice of the node array and the recursion splits `&mut`
//! slices — no locks, no atomics, no `unsafe`.

use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::{Aabb, Bvh, BvhNode, LEAF};

/// Subtrees with fewer leaves than this refit all their leaves in one loop first.
const LEAF_BATCH: usize = 256;
/// Subtrees with more leaves than this are refitted in parallel (both halves).
const PAR_LEAVES: usize = 1 << 12;
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

#[inline]
fn face_aabb(pos: &[glam::Vec3], f: &[u32; 3]) -> Aabb {
    triangle_aabb(&[pos[f[0] as usize], pos[f[1] as usize], pos[f[2] as usize]])
}

/// Boxes of every face of `mesh`, in face order.
pub fn triangle_aabbs(mesh: &TriMesh) -> Vec<Aabb> {
    let pos = mesh.positions();
    let f = |face: &[u32; 3]| face_aabb(pos, face);
    if mesh.face_count() < 1 << 14 {
        mesh.faces().iter().map(f).collect()
    } else {
        mesh.faces().par_iter().with_min_len(4096).map(f).collect()
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
    refit_with(bvh, leaf_aabbs.len(), |p| leaf_aabbs[p as usize])
}

/// Refits `bvh` to the current vertex positions of `mesh` (a deforming mesh's next frame), the
/// leaf boxes computed on the fly as in [`triangle_aabbs`].
pub fn refit_from_mesh(bvh: &mut Bvh, mesh: &TriMesh) -> Result<(), RefitError> {
    let (faces, pos) = (mesh.faces(), mesh.positions());
    refit_with(bvh, faces.len(), |p| face_aabb(pos, &faces[p as usize]))
}

fn refit_with<F>(bvh: &mut Bvh, count: usize, leaf_box: F) -> Result<(), RefitError>
where
    F: Fn(u32) -> Aabb + Sync,
{
    let total = bvh.nodes.len();
    if total == 0 && bvh.parents.is_empty() {
        return Ok(());
    }
    if total % 2 == 0 || bvh.parents.len() != total {
        return Err(RefitError::BadNodeCount {
            nodes: total,
            parents: bvh.parents.len(),
        });
    }
    let n = total.div_ceil(2);
    let (internal, leaves) = bvh.nodes.split_at_mut(n - 1);
    let ctx = Ctx {
        n1: n - 1,
        count,
        leaf_box,
    };
    if n == 1 {
        ctx.leaf(leaves, 0, 0).map_err(|e| *e)?;
        return Ok(());
    }
    refit_subtree(&ctx, internal, leaves, 0, n - 1, false, 0, false).map_err(|e| *e)?;
    Ok(())
}

/// Inputs shared by the whole recursion.
struct Ctx<F> {
    /// Index of the first leaf node (`n - 1`).
    n1: usize,
    /// Number of primitives.
    count: usize,
    /// Box of a primitive.
    leaf_box: F,
}

impl<F: Fn(u32) -> Aabb> Ctx<F> {
    /// Refits leaf slot `slot`, stored at `leaves[at]`.
    #[inline]
    fn leaf(
        &self,
        leaves: &mut [BvhNode],
        at: usize,
        slot: usize,
    ) -> Result<Aabb, Box<RefitError>> {
        let leaf = &mut leaves[at];
        if leaf.right != LEAF || leaf.left as usize >= self.count {
            return Err(Box::new(RefitError::PrimitiveOutOfRange {
                node: self.n1 + slot,
                primitive: leaf.left,
                count: self.count,
            }));
        }
        leaf.aabb = (self.leaf_box)(leaf.left);
        Ok(leaf.aabb)
    }
}

/// Refits the subtree covering leaf slots `[first, last]` whose internal nodes are `nodes`
/// (its root at the end of the slice when `root_at_end`, else at the start) and whose leaves are
/// `leaves`. Leaves are refitted where the recursion meets them, so every node is read and
/// written once, in an order that walks the node array forwards within every subtree.
/// `leaves_done`: the leaves of this subtree already hold their boxes.
#[allow(clippy::too_many_arguments)]
fn refit_subtree<F: Fn(u32) -> Aabb + Sync>(
    ctx: &Ctx<F>,
    nodes: &mut [BvhNode],
    leaves: &mut [BvhNode],
    first: usize,
    last: usize,
    root_at_end: bool,
    depth: u32,
    leaves_done: bool,
) -> Result<Aabb, Box<RefitError>> {
    let n1 = ctx.n1;
    // Small subtrees refit their leaves first, in one branch-light loop (the primitive reads are
    // random; this keeps many of them in flight), then merge from the cached leaf boxes.
    let batch = !leaves_done && last - first < LEAF_BATCH;
    if batch {
        for (at, slot) in (first..=last).enumerate() {
            ctx.leaf(leaves, at, slot)?;
        }
    }
    let leaves_done = leaves_done || batch;
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
    if depth > MAX_DEPTH {
        return Err(Box::new(RefitError::TooDeep { node: root_index }));
    }
    let (left, right) = (root.left as usize, root.right as usize);
    // Split slot γ from the left child: leaf γ (then γ == first) or internal node γ.
    let left_is_leaf = left >= n1;
    let gamma = if left_is_leaf { left - n1 } else { left };
    let right_is_leaf = gamma + 1 == last;
    let right_expected = if right_is_leaf { n1 + last } else { gamma + 1 };
    if gamma < first
        || gamma >= last
        || left_is_leaf != (gamma == first)
        || right != right_expected
        || rest.len() != last - first - 1
    {
        return Err(Box::new(RefitError::BadChildren {
            node: root_index,
            first,
            last,
            left: left as u32,
            right: right as u32,
        }));
    }
    // `rest` holds the internal nodes [first+1, last-1]: left subtree [first+1, γ], right
    // subtree [γ+1, last-1]; `leaves` the slots [first, last].
    let (lpart, rpart) = rest.split_at_mut(gamma - first);
    let (lleaves, rleaves) = leaves.split_at_mut(gamma + 1 - first);
    let mut do_left = move || {
        if left_is_leaf {
            if leaves_done {
                Ok(lleaves[0].aabb)
            } else {
                ctx.leaf(lleaves, 0, gamma)
            }
        } else {
            refit_subtree(
                ctx,
                lpart,
                lleaves,
                first,
                gamma,
                true,
                depth + 1,
                leaves_done,
            )
        }
    };
    let mut do_right = move || {
        if right_is_leaf {
            if leaves_done {
                Ok(rleaves[0].aabb)
            } else {
                ctx.leaf(rleaves, 0, last)
            }
        } else {
            refit_subtree(
                ctx,
                rpart,
                rleaves,
                gamma + 1,
                last,
                false,
                depth + 1,
                leaves_done,
            )
        }
    };
    let (lb, rb) = if last - first > PAR_LEAVES {
        rayon::join(do_left, do_right)
    } else {
        (do_left(), do_right())
    };
    root.aabb = lb?.merge(&rb?);
    Ok(root.aabb)
}
