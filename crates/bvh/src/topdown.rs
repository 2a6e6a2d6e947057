//! The LBVH of [`crate::lbvh::hierarchy`] followed by [`crate::refit::refit`], fused into one
//! top-down pass: the fast CPU path of [`crate::lbvh::build_from_aabbs`].
//!
//! Karras computes every internal node on its own (three searches per node: direction, range,
//! split), which suits a GPU. On the CPU a recursion from the root already knows each node's
//! range `[f, l]` and only has to find the split `γ` (one binary search: the last `m` with
//! `δ(f, m) > δ(f, l)`), then writes the same node that Karras would (index `f` for a right child
//! or the root, `l` for a left child; children by spec step 5) and merges the boxes on the way
//! back. Because the radix tree over distinct keys is unique, the nodes, parents and boxes are
//! bit-identical to the staged build (a test checks it). Subtrees own contiguous slices of the
//! node and parent arrays (see [`crate::refit`]), so the recursion splits `&mut` slices and runs
//! big halves in parallel with `rayon::join`.

use crate::lbvh::delta;
use crate::{Aabb, Bvh, BvhNode, LEAF};

/// Subtrees with more leaves than this build both halves in parallel.
const PAR_LEAVES: usize = 1 << 13;

/// Inputs shared by the whole recursion.
struct Ctx<'a> {
    codes: &'a [u64],
    order: &'a [u32],
    boxes: &'a [Aabb],
}

/// One subtree's share of the output: its internal nodes `[f+1, l-1]` plus its root at one end
/// (`[f, l-1]` or `[f+1, l]`), its leaves `[f, l]`, and the matching parent entries.
struct Part<'o> {
    internal: &'o mut [BvhNode],
    internal_parents: &'o mut [u32],
    leaves: &'o mut [BvhNode],
    leaf_parents: &'o mut [u32],
}

/// Builds the tree over sorted `codes` / `order` with leaf boxes `boxes[order[k]]`.
pub(crate) fn build_sorted(codes: &[u64], order: &[u32], boxes: &[Aabb]) -> Bvh {
    let n = codes.len();
    if n == 0 {
        return Bvh {
            nodes: Vec::new(),
            parents: Vec::new(),
        };
    }
    let blank = BvhNode {
        aabb: Aabb::EMPTY,
        left: 0,
        right: LEAF,
    };
    let mut nodes = vec![blank; 2 * n - 1];
    // Every entry but the root's is written below; zeroed memory comes straight from the
    // allocator (no initialisation pass).
    let mut parents = vec![0u32; 2 * n - 1];
    parents[0] = LEAF;
    let ctx = Ctx {
        codes,
        order,
        boxes,
    };
    if n == 1 {
        nodes[0] = leaf(&ctx, 0);
        return Bvh { nodes, parents };
    }
    let (internal, leaves) = nodes.split_at_mut(n - 1);
    let (internal_parents, leaf_parents) = parents.split_at_mut(n - 1);
    let part = Part {
        internal,
        internal_parents,
        leaves,
        leaf_parents,
    };
    subtree(&ctx, part, 0, n - 1, false);
    Bvh { nodes, parents }
}

#[inline]
fn leaf(ctx: &Ctx<'_>, slot: usize) -> BvhNode {
    let prim = ctx.order[slot];
    BvhNode {
        aabb: ctx.boxes[prim as usize],
        left: prim,
        right: LEAF,
    }
}

/// Builds the subtree over leaf slots `[f, l]` (`f < l`) into `part`; its root sits at the end
/// of `part.internal` when `root_at_end` (a left child: index `l`), else at the start (index
/// `f`). Returns the root's box.
fn subtree(ctx: &Ctx<'_>, part: Part<'_>, f: usize, l: usize, root_at_end: bool) -> Aabb {
    let n1 = ctx.codes.len() - 1;
    let index = if root_at_end { l } else { f } as u32;
    // Split: the last m in [f, l-1] sharing more than δ(f, l) leading bits with f.
    let node_delta = delta(ctx.codes, f, l as i64);
    let (mut lo, mut hi) = (f, l - 1); // answer in [lo, hi]
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if delta(ctx.codes, f, mid as i64) > node_delta {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let gamma = lo;
    let Part {
        internal,
        internal_parents,
        leaves,
        leaf_parents,
    } = part;
    let (root, rest, rest_parents) = if root_at_end {
        let (r, rest) = internal.split_last_mut().expect("subtree has a root");
        let (_, rp) = internal_parents
            .split_last_mut()
            .expect("parents match nodes");
        (r, rest, rp)
    } else {
        let (r, rest) = internal.split_first_mut().expect("subtree has a root");
        let (_, rp) = internal_parents
            .split_first_mut()
            .expect("parents match nodes");
        (r, rest, rp)
    };
    let left_leaf = gamma == f;
    let right_leaf = gamma + 1 == l;
    root.left = if left_leaf { n1 + gamma } else { gamma } as u32;
    root.right = if right_leaf {
        n1 + gamma + 1
    } else {
        gamma + 1
    } as u32;
    let (lint, rint) = rest.split_at_mut(gamma - f);
    let (lpar, rpar) = rest_parents.split_at_mut(gamma - f);
    let (lleaves, rleaves) = leaves.split_at_mut(gamma - f + 1);
    let (llp, rlp) = leaf_parents.split_at_mut(gamma - f + 1);
    let mut go_left = move || {
        if left_leaf {
            lleaves[0] = leaf(ctx, gamma);
            llp[0] = index;
            lleaves[0].aabb
        } else {
            // The left child is internal node γ, the last of its slice.
            lpar[gamma - f - 1] = index;
            let part = Part {
                internal: lint,
                internal_parents: lpar,
                leaves: lleaves,
                leaf_parents: llp,
            };
            subtree(ctx, part, f, gamma, true)
        }
    };
    let mut go_right = move || {
        if right_leaf {
            rleaves[0] = leaf(ctx, l);
            rlp[0] = index;
            rleaves[0].aabb
        } else {
            // The right child is internal node γ+1, the first of its slice.
            rpar[0] = index;
            let part = Part {
                internal: rint,
                internal_parents: rpar,
                leaves: rleaves,
                leaf_parents: rlp,
            };
            subtree(ctx, part, gamma + 1, l, false)
        }
    };
    let (lb, rb) = if l - f > PAR_LEAVES {
        rayon::join(go_left, go_right)
    } else {
        (go_left(), go_right())
    };
    root.aabb = lb.merge(&rb);
    root.aabb
}
