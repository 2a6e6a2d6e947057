//! Bottom-up refit of an LBVH: LBVH spec step 6.
//!
//! Leaf box = the primitive's box; internal box = merge of the children. Min/max never round,
//! so the boxes are bit-identical whatever the visiting order; the GPU kernel walks up from the
//! leaves with one atomic visit flag per internal node, the CPU version here recurses top-down
//! and merges on the way back, splitting the work with `rayon::join`.
//!
//! It relies on a property of Karras trees: the internal nodes below internal node `i` covering
//! leaves `[f, l]` are exactly the indices `[f, l-1]` when `i == f` and `[f+1, l]` when `i == l`.
//! So every subtree owns a contiguous slice of the node array and the recursion splits `&mut`
//! slices — no locks, no atomics, no `unsafe`.

use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::{Aabb, Bvh, BvhNode, LEAF};

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
    let set_leaf = |(k, leaf): (usize, &mut BvhNode)| {
        if leaf.right != LEAF || leaf.left as usize >= count {
            return Err(RefitError::PrimitiveOutOfRange {
                node: n - 1 + k,
                primitive: leaf.left,
                count,
            });
        }
        leaf.aabb = leaf_box(leaf.left);
        Ok(())
    };
    if n < PAR_LEAVES {
        leaves.iter_mut().enumerate().try_for_each(set_leaf)?;
    } else {
        leaves
            .par_iter_mut()
            .with_min_len(4096)
            .enumerate()
            .try_for_each(set_leaf)?;
    }
    if n > 1 {
        let leaves: &[BvhNode] = leaves;
        refit_subtree(internal, 0, 0, n - 1, false, leaves, 0).map_err(|e| *e)?;
    }
    Ok(())
}

/// Refits the subtree covering leaf slots `[first, last]` whose internal nodes are `nodes`
/// (global indices from `base`), its root at the end of the slice when `root_at_end`.
fn refit_subtree(
    nodes: &mut [BvhNode],
    base: usize,
    first: usize,
    last: usize,
    root_at_end: bool,
    leaves: &[BvhNode],
    depth: u32,
) -> Result<Aabb, Box<RefitError>> {
    let n1 = leaves.len() - 1;
    let split = if root_at_end {
        nodes.split_last_mut()
    } else {
        nodes.split_first_mut()
    };
    let root_index = if root_at_end {
        base + (last - first - 1)
    } else {
        base
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
    let bad = || {
        Box::new(RefitError::BadChildren {
            node: root_index,
            first,
            last,
            left: left as u32,
            right: right as u32,
        })
    };
    // Split slot γ from the left child: leaf γ (then γ == first) or internal node γ.
    let gamma = if left >= n1 { left - n1 } else { left };
    let left_is_leaf = left >= n1;
    if gamma < first || gamma >= last || left_is_leaf != (gamma == first) {
        return Err(bad());
    }
    let right_expected = if gamma + 1 == last {
        n1 + last
    } else {
        gamma + 1
    };
    if right != right_expected || rest.len() != last - first - 1 {
        return Err(bad());
    }
    // `rest` holds the internal nodes [first+1, last-1]: left subtree [first+1, γ], right
    // subtree [γ+1, last-1].
    let (lpart, rpart) = rest.split_at_mut(gamma - first);
    let mut do_left = move || -> Result<Aabb, Box<RefitError>> {
        if left_is_leaf {
            Ok(leaves[gamma].aabb)
        } else {
            refit_subtree(lpart, first + 1, first, gamma, true, leaves, depth + 1)
        }
    };
    let mut do_right = move || -> Result<Aabb, Box<RefitError>> {
        if gamma + 1 == last {
            Ok(leaves[last].aabb)
        } else {
            refit_subtree(rpart, gamma + 1, gamma + 1, last, false, leaves, depth + 1)
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
