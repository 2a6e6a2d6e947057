//! Bottom-up refit of an LBVH: LBVH spec step 6.
//!
//! Leaf box = the primitive's box; internal box = merge of the children. Min/max never round,
//! so the boxes are bit-identical whatever the visiting order; the GPU kernel walks up from the
//! leaves with one atomic visit flag per internal node. The CPU version here splits the tree
//! top-down into subtrees of at most [`PAR_LEAVES`] leaves refitted in parallel (`rayon::join`);
//! each of those computes its leaf boxes in one loop, then its internal boxes in post-order
//! with an explicit stack (no recursion, no atomics; boxes stay in registers on the way up).
//!
//! It relies on a property of Karras trees: the internal nodes below internal node `i` covering
//! leaves `[f, l]` are exactly the indices `[f, l-1]` when `i == f` and `[f+1, l]` when `i == l`.
//! So every subtree owns a contiguous slice of the node array and the recursion splits `&mut`
//! slices — no locks, no atomics, no `unsafe`.

use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::{Aabb, Bvh, BvhNode, LEAF};

/// Subtrees with more leaves than this are split and their halves refitted in parallel.
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
        ctx.leaves(leaves, 0).map_err(|e| *e)?;
        return Ok(());
    }
    refit_subtree(&ctx, internal, leaves, 0, n - 1, false, 0).map_err(|e| *e)?;
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

impl<F: Fn(u32) -> Aabb> Ctx<F> {
    /// Refits the leaves of slots `first..first + leaves.len()`, one independent iteration per
    /// leaf (the primitive reads are random; this keeps many of them in flight).
    fn leaves(&self, leaves: &mut [BvhNode], first: usize) -> Result<(), Box<RefitError>> {
        for (k, leaf) in leaves.iter_mut().enumerate() {
            if leaf.right != LEAF || leaf.left as usize >= self.count {
                return Err(Box::new(RefitError::PrimitiveOutOfRange {
                    node: self.n1 + first + k,
                    primitive: leaf.left,
                    count: self.count,
                }));
            }
            leaf.aabb = (self.leaf_box)(leaf.left);
        }
        Ok(())
    }

    /// Refits the subtree over leaf slots `[first, last]` (`first < last`) on this thread: its
    /// leaves in one loop, then its internal nodes in post-order with an explicit stack.
    /// `nodes` holds its internal nodes (global indices `base..base + nodes.len()`), `leaves`
    /// its leaves (slots `first..=last`).
    fn serial(
        &self,
        nodes: &mut [BvhNode],
        base: usize,
        leaves: &mut [BvhNode],
        first: usize,
        last: usize,
    ) -> Result<Aabb, Box<RefitError>> {
        self.leaves(leaves, first)?;
        // The post-order below visits the internal nodes in a zigzag the hardware prefetcher
        // does not follow; one streaming read of the slice first brings it into cache.
        std::hint::black_box(nodes.iter().fold(0u32, |acc, n| acc ^ n.left));
        let n1 = self.n1;
        let root = if base == first { first } else { last };
        // (node, first, last, split γ once expanded or `u32::MAX`); a post-order of depth d
        // needs at most 2d + 1 slots.
        const OPEN: u32 = u32::MAX;
        let mut stack = [(0u32, 0u32, 0u32, OPEN); 2 * MAX_DEPTH as usize + 2];
        stack[0] = (root as u32, first as u32, last as u32, OPEN);
        let mut top = 1;
        let mut aabb = Aabb::EMPTY;
        while top > 0 {
            top -= 1;
            let (i, f, l, g) = stack[top];
            let (i, f, l) = (i as usize, f as usize, l as usize);
            if g != OPEN {
                // Both children are done: merge them.
                let gamma = g as usize;
                let lb = if gamma == f {
                    leaves[gamma - first].aabb
                } else {
                    nodes[gamma - base].aabb
                };
                let rb = if gamma + 1 == l {
                    leaves[l - first].aabb
                } else {
                    nodes[gamma + 1 - base].aabb
                };
                aabb = lb.merge(&rb);
                nodes[i - base].aabb = aabb;
                continue;
            }
            let node = &nodes[i - base];
            let gamma = split_of(n1, i, (node.left, node.right), f, l)?;
            if top + 3 > stack.len() {
                return Err(Box::new(RefitError::TooDeep { node: i }));
            }
            stack[top] = (i as u32, f as u32, l as u32, gamma as u32);
            top += 1;
            if gamma + 1 != l {
                stack[top] = ((gamma + 1) as u32, (gamma + 1) as u32, l as u32, OPEN);
                top += 1;
            }
            if gamma != f {
                stack[top] = (gamma as u32, f as u32, gamma as u32, OPEN);
                top += 1;
            }
        }
        // The root is finished last.
        Ok(aabb)
    }
}

/// Refits the subtree covering leaf slots `[first, last]` (`first < last`) whose internal nodes
/// are `nodes` (its root at the end of the slice when `root_at_end`, else at the start) and whose
/// leaves are `leaves`: big subtrees split in two halves refitted in parallel, small ones are
/// refitted by [`Ctx::serial`].
fn refit_subtree<F: Fn(u32) -> Aabb + Sync>(
    ctx: &Ctx<F>,
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
            ctx.leaves(leaves, f)?;
            Ok(leaves[0].aabb)
        } else {
            refit_subtree(ctx, nodes, leaves, f, l, at_end, depth + 1)
        }
    };
    let (lb, rb) = rayon::join(
        || half(lpart, lleaves, first, gamma, true),
        || half(rpart, rleaves, gamma + 1, last, false),
    );
    let aabb = lb?.merge(&rb?);
    root.aabb = aabb;
    Ok(aabb)
}
