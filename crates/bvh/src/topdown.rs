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
//!
//! Below [`PAR_LEAVES`] leaves a subtree is built by one left-to-right scan instead
//! ([`stream`]): the radix tree is the Cartesian tree of the adjacent prefix lengths
//! `d_k = δ(k, k+1)` (the split of a node is the unique minimum of `d` over its range), so a stack
//! of the open right spine builds it in O(n) with sequential reads and nearby writes. A finished
//! node `[f, l]` knows both neighbouring `d` values, hence whether its parent lies to the right
//! (it is a left child: Karras index `l`) or to the left (a right child: index `f`).

use crate::lbvh::delta;
use crate::{Aabb, Bvh, BvhNode, LEAF};

/// Subtrees with more leaves than this build both halves in parallel.
const PAR_LEAVES: usize = 1 << 13;

/// Leaves ahead of the current one whose box read [`stream`] starts (they are random reads).
const PREFETCH: usize = 32;

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
    // Every node and every parent entry but the root's is written below, so both arrays come
    // zeroed straight from the allocator (fresh pages, no initialisation pass) and the page
    // faults of a large tree are taken by the threads that write them.
    let mut nodes: Vec<BvhNode> = crate::alloc::zeroed(2 * n - 1);
    let mut parents: Vec<u32> = crate::alloc::zeroed(2 * n - 1);
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
    if l - f <= PAR_LEAVES {
        return stream(ctx, part, f, l, root_at_end);
    }
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
    let go_left = move || {
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
    let go_right = move || {
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
    let (lb, rb) = rayon::join(go_left, go_right);
    root.aabb = lb.merge(&rb);
    root.aabb
}

/// One open subtree on the stack of [`stream`]: first leaf slot, node index, box, and the
/// prefix length `d` at its right end (valid once the next leaf is pushed).
#[derive(Clone, Copy)]
struct Open {
    first: u32,
    node: u32,
    sep: i32,
    aabb: Aabb,
}

/// Builds the subtree over leaf slots `[f, l]` (`f < l`) by one left-to-right scan (see the
/// module docs); same output and contract as [`subtree`].
fn stream(ctx: &Ctx<'_>, part: Part<'_>, f: usize, l: usize, root_at_end: bool) -> Aabb {
    let codes = ctx.codes;
    let n1 = codes.len() - 1;
    let Part {
        internal,
        internal_parents,
        leaves,
        leaf_parents,
    } = part;
    // Global index of the first entry of `internal` / `internal_parents`.
    let ibase = if root_at_end { f + 1 } else { f };
    let root_index = if root_at_end { l } else { f };
    let mut stack: Vec<Open> = Vec::with_capacity(128);
    // Writes internal node `index` over `left` | `right` and returns it as an open subtree.
    let mut join = |left: &Open, right: &Open, index: usize| -> Open {
        let aabb = left.aabb.merge(&right.aabb);
        internal[index - ibase] = BvhNode {
            aabb,
            left: left.node,
            right: right.node,
        };
        for child in [left.node as usize, right.node as usize] {
            if child >= n1 {
                leaf_parents[child - n1 - f] = index as u32;
            } else {
                internal_parents[child - ibase] = index as u32;
            }
        }
        Open {
            first: left.first,
            node: index as u32,
            sep: 0,
            aabb,
        }
    };
    // Leaves first, in one branch-free gather loop (the box reads are random; keeping them
    // out of the scan below lets many of them be in flight at once).
    for (k, out) in (f..=l).zip(leaves.iter_mut()) {
        if let Some(&ahead) = ctx.order.get(k + PREFETCH) {
            crate::refit::prefetch(ctx.boxes.as_ptr().wrapping_add(ahead as usize));
        }
        *out = leaf(ctx, k);
    }
    let leaves: &[BvhNode] = leaves;
    let push_leaf = |k: usize| -> Open {
        Open {
            first: k as u32,
            node: (n1 + k) as u32,
            sep: 0,
            aabb: leaves[k - f].aabb,
        }
    };
    let mut cur = push_leaf(f);
    let mut next_code = codes[f];
    for k in f..l {
        // d_k = δ(k, k+1), with the duplicate-code tie break.
        let code = next_code;
        next_code = codes[k + 1];
        let x = code ^ next_code;
        let dk = if x != 0 {
            x.leading_zeros() as i32
        } else {
            64 + ((k as u32) ^ (k as u32 + 1)).leading_zeros() as i32
        };
        // Close every subtree whose split (the separator below it) is deeper than d_k.
        while let Some(prev) = stack.last().copied() {
            if prev.sep < dk {
                break;
            }
            stack.pop();
            // Node [prev.first, k]: a left child when d_k exceeds its left neighbour's d
            // (always true at the scan's left end, whose outer d is below every inner one).
            let is_left = stack.last().is_none_or(|pp| dk > pp.sep);
            let index = if is_left { k } else { prev.first as usize };
            cur = join(&prev, &cur, index);
        }
        cur.sep = dk;
        stack.push(cur);
        cur = push_leaf(k + 1);
    }
    // The outer d on the right is below every inner one: the rest are right children, up to
    // the subtree's own root.
    while let Some(prev) = stack.pop() {
        let index = if stack.is_empty() {
            root_index
        } else {
            prev.first as usize
        };
        cur = join(&prev, &cur, index);
    }
    cur.aabb
}
