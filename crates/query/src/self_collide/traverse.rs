//! Bounding-volume test tree (BVTT) traversals over the flat LBVH layout, with explicit stacks
//! (LBVH depth is not bounded by `log n`).
//!
//! * [`pair_leaves`]: simultaneous traversal of two trees (gProximity §4.1.1).
//! * [`self_leaves`] / [`self_leaves_culled`]: one tree against itself (Greß §6.2): a node
//!   against itself expands to each child against itself and the two children against each
//!   other; every unordered pair of distinct leaves with overlapping boxes is reported once.

use gprox_bvh::{Bvh, BvhNode};

/// Leaf-slot range `[first, last]` of the children of internal node `node` covering
/// `[first, last]` (Karras layout: the split `γ` is the left child's index, or its slot if it
/// is a leaf).
#[inline]
pub(crate) fn child_ranges(
    bvh: &Bvh,
    node: &BvhNode,
    first: u32,
    last: u32,
) -> ([u32; 2], [u32; 2]) {
    let n1 = bvh.first_leaf() as u32;
    let gamma = if node.left >= n1 {
        node.left - n1
    } else {
        node.left
    };
    ([first, gamma], [gamma + 1, last])
}

/// Calls `f(face_a, face_b)` for every leaf of `a` and leaf of `b` whose boxes overlap.
pub fn pair_leaves(a: &Bvh, b: &Bvh, f: impl FnMut(u32, u32)) {
    pair_leaves_by(
        a,
        b,
        |i, j| a.nodes[i as usize].aabb.overlaps(&b.nodes[j as usize].aabb),
        f,
    );
}

/// [`pair_leaves`] with a custom node-pair test `overlap(node_a, node_b)` (which must hold
/// for every pair of nodes above a reported leaf pair).
pub fn pair_leaves_by(
    a: &Bvh,
    b: &Bvh,
    overlap: impl Fn(u32, u32) -> bool,
    mut f: impl FnMut(u32, u32),
) {
    if a.nodes.is_empty() || b.nodes.is_empty() {
        return;
    }
    let mut stack = Vec::new();
    if overlap(0, 0) {
        stack.push((0u32, 0u32));
    }
    while let Some((i, j)) = stack.pop() {
        pair_step(a, b, i, j, &overlap, &mut stack, &mut f);
    }
}

/// Expands the overlapping node pair `(i, j)`: reports a leaf pair, or pushes the child pairs
/// that pass `overlap` (children of both nodes when both are internal).
#[inline]
fn pair_step(
    a: &Bvh,
    b: &Bvh,
    i: u32,
    j: u32,
    overlap: &impl Fn(u32, u32) -> bool,
    stack: &mut Vec<(u32, u32)>,
    f: &mut impl FnMut(u32, u32),
) {
    let na = &a.nodes[i as usize];
    let nb = &b.nodes[j as usize];
    let mut push = |x: u32, y: u32| {
        if overlap(x, y) {
            stack.push((x, y));
        }
    };
    match (na.is_leaf(), nb.is_leaf()) {
        (true, true) => f(na.left, nb.left),
        (true, false) => {
            push(i, nb.right);
            push(i, nb.left);
        }
        (false, true) => {
            push(na.right, j);
            push(na.left, j);
        }
        (false, false) => {
            push(na.right, nb.right);
            push(na.right, nb.left);
            push(na.left, nb.right);
            push(na.left, nb.left);
        }
    }
}

/// Calls `f(face_a, face_b)` once for every unordered pair of distinct leaves of `bvh` whose
/// boxes overlap.
pub fn self_leaves(bvh: &Bvh, f: impl FnMut(u32, u32)) {
    self_leaves_culled(bvh, |_, _, _| false, f);
}

/// [`self_leaves`] where a node `(node, first, last)` (its leaf slots `first..=last`) for which
/// `skip` returns true is not paired with itself: the caller certifies that no two of its
/// leaves need reporting. Pairs of different nodes are never skipped.
pub fn self_leaves_culled(
    bvh: &Bvh,
    skip: impl FnMut(u32, u32, u32) -> bool,
    f: impl FnMut(u32, u32),
) {
    let overlap = |i: u32, j: u32| {
        bvh.nodes[i as usize]
            .aabb
            .overlaps(&bvh.nodes[j as usize].aabb)
    };
    self_leaves_by(bvh, overlap, skip, f);
}

/// [`self_leaves_culled`] with a custom node-pair test `overlap(node_a, node_b)`.
pub fn self_leaves_by(
    bvh: &Bvh,
    overlap: impl Fn(u32, u32) -> bool,
    mut skip: impl FnMut(u32, u32, u32) -> bool,
    mut f: impl FnMut(u32, u32),
) {
    if bvh.nodes.len() < 3 {
        return;
    }
    let n = bvh.leaf_count() as u32;
    let mut selfs = vec![(0u32, 0u32, n - 1)];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    while let Some((i, first, last)) = selfs.pop() {
        let node = &bvh.nodes[i as usize];
        if node.is_leaf() || skip(i, first, last) {
            continue;
        }
        let (rl, rr) = child_ranges(bvh, node, first, last);
        selfs.push((node.left, rl[0], rl[1]));
        selfs.push((node.right, rr[0], rr[1]));
        if overlap(node.left, node.right) {
            pairs.push((node.left, node.right));
        }
        while let Some((a, b)) = pairs.pop() {
            pair_step(bvh, bvh, a, b, &overlap, &mut pairs, &mut f);
        }
    }
}

/// Answer of the pruning callback of [`self_leaves_pruned`] for one node or node pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prune {
    /// Traverse below as usual.
    Descend,
    /// Nothing below needs reporting: skip it.
    Skip,
    /// Traverse below, but do not offer the node pairs below this pair again (the caller knows
    /// they cannot be skipped).
    DescendSilently,
}

/// Calls `f` for the leaf pairs of the slot ranges `ra` and `rb` (the unordered pairs within
/// `ra` when equal) whose boxes pass `overlap`. For two distinct nodes `a` and `b` (ranges `ra`,
/// `rb`), the leaves of each are first filtered by the other node's box: a leaf box that misses
/// `b`'s box misses every leaf box below `b` (parent boxes contain their children's), so the
/// pairwise tests run on the survivors only, with the same pairs reported in the same order.
fn leaf_pairs(
    bvh: &Bvh,
    overlap: &impl Fn(u32, u32) -> bool,
    f: &mut impl FnMut(u32, u32),
    [(a, ra), (b, rb)]: [(u32, [u32; 2]); 2],
) {
    /// Ranges up to this size are filtered (on the stack), longer ones tested in full.
    const FILTER: usize = 32;
    let n1 = bvh.first_leaf() as u32;
    let len = |r: [u32; 2]| (r[1] - r[0] + 1) as usize;
    if ra == rb || len(ra) > FILTER || len(rb) > FILTER {
        for i in ra[0]..=ra[1] {
            let from = if ra == rb { i + 1 } else { rb[0] };
            for j in from..=rb[1] {
                let (x, y) = (n1 + i, n1 + j);
                if overlap(x, y) {
                    f(bvh.nodes[x as usize].left, bvh.nodes[y as usize].left);
                }
            }
        }
        return;
    }
    // Survivors written unconditionally, kept by advancing the count (no branch per leaf).
    let survivors = |r: [u32; 2], other: u32, out: &mut [u32; FILTER]| {
        let mut k = 0;
        for i in r[0]..=r[1] {
            out[k] = n1 + i;
            k += overlap(n1 + i, other) as usize;
        }
        k
    };
    let (mut xs, mut ys) = ([0u32; FILTER], [0u32; FILTER]);
    let nx = survivors(ra, b, &mut xs);
    if nx == 0 {
        return;
    }
    let ny = survivors(rb, a, &mut ys);
    for &x in &xs[..nx] {
        for &y in &ys[..ny] {
            if overlap(x, y) {
                f(bvh.nodes[x as usize].left, bvh.nodes[y as usize].left);
            }
        }
    }
}

/// [`self_leaves_by`] with pair-level pruning: `skip(i, i)` is asked whether node `i` may be
/// skipped against itself, `skip(a, b)` (`a != b`, below the two children of a node that was
/// not skipped) whether the node pair may be skipped; the caller certifies that no leaf pair
/// below a skipped node (pair) needs reporting. The pair of a node's two children is not offered
/// (their union is the node, which was just asked), nor are leaf pairs.
///
/// Before `skip`, `leaves(a, b)` (for the same nodes and pairs) may return the leaf-slot ranges
/// of `a` and `b`: then the leaf pairs below are found by
/// testing every pair of leaf boxes of the two ranges (the pairs within the range when `a == b`)
/// instead of descending, which reads the boxes of a small set in order instead of chasing the
/// tree. With parent boxes containing their children's (refit and build guarantee it), these
/// are the leaf pairs the descent reports.
pub fn self_leaves_pruned(
    bvh: &Bvh,
    overlap: impl Fn(u32, u32) -> bool,
    leaves: impl Fn(u32, u32) -> Option<([u32; 2], [u32; 2])>,
    mut skip: impl FnMut(u32, u32) -> Prune,
    mut f: impl FnMut(u32, u32),
) {
    if bvh.nodes.len() < 3 {
        return;
    }
    let mut selfs = vec![0u32];
    let mut pairs: Vec<(u32, u32, bool)> = Vec::new();
    while let Some(i) = selfs.pop() {
        let node = &bvh.nodes[i as usize];
        if node.is_leaf() {
            continue;
        }
        if let Some((ra, rb)) = leaves(i, i) {
            leaf_pairs(bvh, &overlap, &mut f, [(i, ra), (i, rb)]);
            continue;
        }
        if skip(i, i) == Prune::Skip {
            continue;
        }
        selfs.push(node.left);
        selfs.push(node.right);
        if !overlap(node.left, node.right) {
            continue;
        }
        pairs.push((node.left, node.right, false));
        let mut first = true;
        while let Some((a, b, ask)) = pairs.pop() {
            let (na, nb) = (&bvh.nodes[a as usize], &bvh.nodes[b as usize]);
            if na.is_leaf() && nb.is_leaf() {
                f(na.left, nb.left);
                continue;
            }
            let below = match ask {
                _ if first => true,
                false => false,
                true => {
                    if let Some((ra, rb)) = leaves(a, b) {
                        leaf_pairs(bvh, &overlap, &mut f, [(a, ra), (b, rb)]);
                        continue;
                    }
                    match skip(a, b) {
                        Prune::Skip => continue,
                        Prune::Descend => true,
                        Prune::DescendSilently => false,
                    }
                }
            };
            first = false;
            let mut push = |x: u32, y: u32| {
                if overlap(x, y) {
                    pairs.push((x, y, below));
                }
            };
            match (na.is_leaf(), nb.is_leaf()) {
                (true, _) => {
                    push(a, nb.right);
                    push(a, nb.left);
                }
                (false, true) => {
                    push(na.right, b);
                    push(na.left, b);
                }
                (false, false) => {
                    push(na.right, nb.right);
                    push(na.right, nb.left);
                    push(na.left, nb.right);
                    push(na.left, nb.left);
                }
            }
        }
    }
}
