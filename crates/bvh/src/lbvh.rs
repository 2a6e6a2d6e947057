//! Linear BVH construction (Karras 2012), LBVH spec steps 1–6.
//!
//! The build runs in stages that the GPU pipeline mirrors one kernel each, so the two can be
//! compared stage by stage:
//!
//! 1. [`morton_codes`]: 63-bit Morton codes of the primitive boxes' centroids;
//! 2. [`sort_codes`]: stable radix sort of `(code, index)`;
//! 3. [`hierarchy`]: the radix tree over the sorted codes, every internal node computed on its own
//!    (parallel), with the duplicate-code tie break `δ(i, j) = 64 + clz32(i ^ j)`;
//! 4. [`crate::refit::refit`]: boxes bottom-up.
//!
//! [`build_from_aabbs`] runs stages 3 and 4 fused into one top-down recursion (fewer searches
//! per node, no second pass), which yields the very same nodes, parents and boxes.
//!
//! The tree is fully determined by the sorted codes, so every correct implementation (CPU,
//! CUDA, emulator) yields the same nodes bit for bit.

use std::sync::atomic::{AtomicU32, Ordering};

use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::{refit, Aabb, Bvh, BvhNode, LEAF};

/// Below this many primitives the hierarchy is built on one thread.
const PAR_MIN: usize = 1 << 13;

/// Stage 1: 63-bit Morton codes of `boxes` (spec steps 1–3), in primitive order.
pub fn morton_codes(boxes: &[Aabb]) -> Vec<u64> {
    crate::morton::codes63(boxes)
}

/// Stage 2: sorted codes and the primitive order (spec step 4), see [`crate::sort::sort_codes`].
pub fn sort_codes(codes: &[u64]) -> (Vec<u64>, Vec<u32>) {
    crate::sort::sort_codes(codes)
}

/// The Karras prefix length `δ(i, j)` over `codes`, with the duplicate-code tie break;
/// `-1` when `j` lies outside `[0, n)`.
#[inline]
pub fn delta(codes: &[u64], i: usize, j: i64) -> i32 {
    if j < 0 || j as usize >= codes.len() {
        return -1;
    }
    let j = j as usize;
    let x = codes[i] ^ codes[j];
    if x != 0 {
        x.leading_zeros() as i32
    } else {
        64 + ((i as u32) ^ (j as u32)).leading_zeros() as i32
    }
}

/// Children `(left, right)` of internal node `i` (spec step 5) over `n = codes.len()` sorted
/// codes, as node indices (leaves at `n - 1 + k`).
#[inline]
pub fn internal_children(codes: &[u64], i: usize) -> (u32, u32) {
    let n = codes.len();
    let ci = codes[i];
    let ii = i as i64;
    // δ(i, j) with i fixed.
    let dl = |j: i64| -> i32 {
        if j < 0 || j as usize >= n {
            return -1;
        }
        let x = ci ^ codes[j as usize];
        if x != 0 {
            x.leading_zeros() as i32
        } else {
            64 + ((i as u32) ^ (j as u32)).leading_zeros() as i32
        }
    };
    let d: i64 = if dl(ii + 1) >= dl(ii - 1) { 1 } else { -1 };
    // Upper bound of the range length, then the exact other end by binary search.
    let delta_min = dl(ii - d);
    let mut lmax: i64 = 2;
    while dl(ii + lmax * d) > delta_min {
        lmax *= 2;
    }
    let mut l: i64 = 0;
    let mut t = lmax / 2;
    while t >= 1 {
        l += t * i64::from(dl(ii + (l + t) * d) > delta_min);
        t /= 2;
    }
    let j = ii + l * d;
    // Split position: the last index sharing more than δ(i, j) leading bits with i.
    let delta_node = dl(j);
    let mut s: i64 = 0;
    let mut t = l;
    loop {
        t = (t + 1) / 2;
        s += t * i64::from(dl(ii + (s + t) * d) > delta_node);
        if t <= 1 {
            break;
        }
    }
    let gamma = (ii + s * d + d.min(0)) as usize;
    let (first, last) = (ii.min(j) as usize, ii.max(j) as usize);
    let leaf0 = n - 1;
    let left = if first == gamma { leaf0 + gamma } else { gamma };
    let right = if last == gamma + 1 {
        leaf0 + gamma + 1
    } else {
        gamma + 1
    };
    (left as u32, right as u32)
}

/// Stage 3: the topology over sorted `codes` with `order[k]` = primitive of sorted slot `k`
/// (spec step 5). Boxes are left [`Aabb::EMPTY`]; fill them with [`crate::refit::refit`].
///
/// # Panics
/// If `codes` and `order` differ in length (a caller bug).
pub fn hierarchy(codes: &[u64], order: &[u32]) -> Bvh {
    assert_eq!(codes.len(), order.len(), "hierarchy: length mismatch");
    let n = codes.len();
    if n == 0 {
        return Bvh {
            nodes: Vec::new(),
            parents: Vec::new(),
        };
    }
    let mut nodes = vec![
        BvhNode {
            aabb: Aabb::EMPTY,
            left: 0,
            right: LEAF,
        };
        2 * n - 1
    ];
    let parents: Vec<AtomicU32> = (0..2 * n - 1).map(|_| AtomicU32::new(LEAF)).collect();
    let (internal, leaves) = nodes.split_at_mut(n - 1);
    let set_internal = |(i, node): (usize, &mut BvhNode)| {
        let (l, r) = internal_children(codes, i);
        node.left = l;
        node.right = r;
        parents[l as usize].store(i as u32, Ordering::Relaxed);
        parents[r as usize].store(i as u32, Ordering::Relaxed);
    };
    let set_leaf = |(leaf, &prim): (&mut BvhNode, &u32)| leaf.left = prim;
    if n < PAR_MIN {
        internal.iter_mut().enumerate().for_each(set_internal);
        leaves.iter_mut().zip(order).for_each(set_leaf);
    } else {
        internal
            .par_iter_mut()
            .with_min_len(1024)
            .enumerate()
            .for_each(set_internal);
        leaves
            .par_iter_mut()
            .with_min_len(4096)
            .zip(order)
            .for_each(set_leaf);
    }
    let parents = parents.into_iter().map(AtomicU32::into_inner).collect();
    Bvh { nodes, parents }
}

/// Builds the LBVH over primitive boxes (one leaf per box, `left` = box index).
/// An empty slice gives an empty tree (no nodes).
///
/// ```
/// use gprox_bvh::{lbvh::build_from_aabbs, Aabb};
/// let boxes: Vec<Aabb> = (0..4)
///     .map(|i| Aabb { min: [i as f32; 3], max: [i as f32 + 0.5; 3] })
///     .collect();
/// let bvh = build_from_aabbs(&boxes);
/// assert_eq!(bvh.nodes.len(), 7);
/// assert_eq!(bvh.root_aabb(), Aabb { min: [0.0; 3], max: [3.5; 3] });
/// ```
pub fn build_from_aabbs(boxes: &[Aabb]) -> Bvh {
    // Same nodes as `hierarchy` + `refit`, in one top-down pass (see `topdown`).
    build_from_codes(morton_codes(boxes), boxes)
}

/// Builds the LBVH over precomputed 63-bit codes of the primitives (e.g. codes in an oriented
/// frame) with leaf boxes `boxes`, both in primitive order.
///
/// # Panics
/// If `codes` and `boxes` differ in length (a caller bug).
pub fn build_from_codes(codes: Vec<u64>, boxes: &[Aabb]) -> Bvh {
    assert_eq!(
        codes.len(),
        boxes.len(),
        "build_from_codes: length mismatch"
    );
    let (codes, order) = crate::sort::sort_codes_owned(codes);
    crate::topdown::build_sorted(&codes, &order, boxes)
}

/// Builds the LBVH over the faces of `mesh` (leaf `left` = face index).
///
/// ```
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// let mesh = TriMesh::new(
///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
///     vec![[0, 1, 2], [0, 1, 3], [0, 2, 3]],
/// )
/// .unwrap();
/// let bvh = gprox_bvh::lbvh::build(&mesh);
/// assert_eq!(bvh.leaf_count(), 3);
/// ```
pub fn build(mesh: &TriMesh) -> Bvh {
    build_from_aabbs(&refit::triangle_aabbs(mesh))
}
