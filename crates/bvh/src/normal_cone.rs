//! Discrete normal cones for self-collision culling (Volino & Magnenat-Thalmann 1994; Greß,
//! Guthe, Klein 2006 §6.2 use 8 directions, we use 26).
//!
//! Each node stores a bit mask over the 26 directions `d ∈ {-1, 0, 1}³ \ {0}`: bit `k` is set
//! when every face normal `n` below the node has `n · d_k > 0`. A non-zero mask means the normals
//! fit in an open cone of half-angle < 90° around `d_k`, the "normal cone" condition for a region
//! without self-intersection. The masks are computed in f32 and are a *hint* only: the
//! self-collision query certifies the condition exactly before it culls anything.

use glam::Vec3;

use crate::Bvh;

/// The 26 sample directions: every non-zero vector with coordinates in `{-1, 0, 1}`.
pub const DIRECTIONS: [[i8; 3]; 26] = {
    let mut out = [[0i8; 3]; 26];
    let mut k = 0;
    let mut i = 0;
    while i < 27 {
        let d = [
            (i / 9) as i8 - 1,
            ((i / 3) % 3) as i8 - 1,
            (i % 3) as i8 - 1,
        ];
        if !(d[0] == 0 && d[1] == 0 && d[2] == 0) {
            out[k] = d;
            k += 1;
        }
        i += 1;
    }
    out
};

/// Bit mask of the directions `d` with `n · d > 0` (f32).
///
/// ```
/// use gprox_bvh::normal_cone::{direction_mask, DIRECTIONS};
/// let m = direction_mask(glam::Vec3::Z);
/// // +z and every direction with a +1 z component: 9 of them.
/// assert_eq!(m.count_ones(), 9);
/// let k = m.trailing_zeros() as usize;
/// assert_eq!(DIRECTIONS[k][2], 1);
/// ```
#[inline]
pub fn direction_mask(n: Vec3) -> u32 {
    direction_mask_beyond(n, 0.0)
}

/// Bit mask of the directions `d` with `d · ((b - a) × (c - a)) > 0` for the *exact* normal of
/// the triangle `(a, b, c)` (real arithmetic on the f32 inputs), computed in f32 with a rigorous
/// error bound: a bit is set only when the computed dot product clears the bound, so every set
/// bit is certain (uncertain directions, NaN and overflow give no bit).
///
/// ```
/// use gprox_bvh::normal_cone::{certified_direction_mask, direction_mask};
/// use glam::Vec3;
/// let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y);
/// assert_eq!(certified_direction_mask(a, b, c), direction_mask(Vec3::Z));
/// assert_eq!(certified_direction_mask(a, b, b * 2.0), 0); // degenerate: no direction is sure
/// ```
#[inline]
pub fn certified_direction_mask(a: Vec3, b: Vec3, c: Vec3) -> u32 {
    let (n, bound) = certified_normal(a, b, c);
    direction_mask_beyond(n, bound)
}

/// The f32 normal `(b - a) × (c - a)` of a triangle and a bound on the error of any signed sum
/// of up to three of its components (one per axis, in the order of [`direction_mask`])
/// against the same sum of the exact normal's components: the inputs of
/// [`certified_direction_mask`], for callers that batch [`direction_mask_beyond`].
#[inline]
pub fn certified_normal(a: Vec3, b: Vec3, c: Vec3) -> (Vec3, f32) {
    const U: f32 = f32::EPSILON * 0.5;
    let (e1, e2) = (b - a, c - a);
    let p = Vec3::new(e1.y * e2.z, e1.z * e2.x, e1.x * e2.y);
    let q = Vec3::new(e1.z * e2.y, e1.x * e2.z, e1.y * e2.x);
    // Per component |n_i - n*_i| <= ~4.1u (|p_i| + |q_i|) (two rounded differences, products,
    // difference); a sum of up to three components adds <= ~2.01u Σ|n_i| <= ~2.01u Σ(|p_i| +
    // |q_i|); the slack of the constant covers the rounding of the bound itself, the last term
    // underflow. NaN or infinite inputs give a NaN or infinite bound.
    let bound = 8.0 * U * (p.abs() + q.abs()).element_sum() + 1e-37;
    (p - q, bound)
}

/// Directions `d` with `n · d > bound` (bit of `d`) or `< -bound` (bit of `-d`), f32 sums in a
/// fixed order (`((±x) ± y) ± z`, zero terms left out). A NaN `bound` or `n` sets no bit.
///
/// ```
/// use gprox_bvh::normal_cone::{direction_mask, direction_mask_beyond};
/// let n = glam::Vec3::new(0.0, 0.1, 1.0);
/// assert_eq!(direction_mask_beyond(n, 0.0), direction_mask(n));
/// assert!(direction_mask_beyond(n, 0.5).count_ones() < direction_mask(n).count_ones());
/// ```
#[inline]
pub fn direction_mask_beyond(n: Vec3, bound: f32) -> u32 {
    let (x, y, z) = (n.x, n.y, n.z);
    // The 13 directions with a positive leading non-zero entry; their negations are the
    // other 13 (`DIRECTIONS` index of raw code r = 9(dx+1) + 3(dy+1) + (dz+1) is r, or r - 1
    // past the skipped zero vector at r = 13).
    let dots = [
        z,
        y,
        y + z,
        y - z,
        x,
        x + z,
        x - z,
        x + y,
        x + y + z,
        x + y - z,
        x - y,
        x - y + z,
        x - y - z,
    ];
    let mut m = 0u32;
    for (k, &d) in dots.iter().enumerate() {
        let (pos, neg) = POSITIVE_BITS[k];
        // Selects of constants (a compare mask ANDed with the bit when vectorised).
        m |= if d > bound { 1 << pos } else { 0 } | if d < -bound { 1 << neg } else { 0 };
    }
    m
}

/// [`certified_direction_mask`] of `N` triangles at once (identical results), the corners
/// given by coordinate: `corners[k][axis][i]` is coordinate `axis` of corner `k` of triangle
/// `i`. The lanes are independent, so the loop vectorises.
///
/// ```
/// use gprox_bvh::normal_cone::{certified_direction_mask, certified_direction_masks};
/// use glam::Vec3;
/// let t = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.2], [0.0, 1.0, -0.3]];
/// let corners = [0, 1, 2].map(|k| [0, 1, 2].map(|axis| [t[k][axis]; 4]));
/// let mut out = [0u32; 4];
/// certified_direction_masks(&corners, &mut out);
/// let [a, b, c] = t.map(Vec3::from);
/// assert_eq!(out, [certified_direction_mask(a, b, c); 4]);
/// ```
#[inline]
pub fn certified_direction_masks<const N: usize>(corners: &[[[f32; N]; 3]; 3], out: &mut [u32; N]) {
    let corner =
        |k: usize, i: usize| Vec3::new(corners[k][0][i], corners[k][1][i], corners[k][2][i]);
    for (i, m) in out.iter_mut().enumerate() {
        *m = certified_direction_mask(corner(0, i), corner(1, i), corner(2, i));
    }
}

/// `(bit of d, bit of -d)` for the 13 directions in the order used by [`direction_mask`].
const POSITIVE_BITS: [(u8, u8); 13] = {
    const D: [[i8; 3]; 13] = [
        [0, 0, 1],
        [0, 1, 0],
        [0, 1, 1],
        [0, 1, -1],
        [1, 0, 0],
        [1, 0, 1],
        [1, 0, -1],
        [1, 1, 0],
        [1, 1, 1],
        [1, 1, -1],
        [1, -1, 0],
        [1, -1, 1],
        [1, -1, -1],
    ];
    const fn bit(d: [i8; 3]) -> u8 {
        let r = 9 * (d[0] + 1) + 3 * (d[1] + 1) + (d[2] + 1);
        (if r > 13 { r - 1 } else { r }) as u8
    }
    let mut out = [(0u8, 0u8); 13];
    let mut k = 0;
    while k < 13 {
        let d = D[k];
        out[k] = (bit(d), bit([-d[0], -d[1], -d[2]]));
        k += 1;
    }
    out
};

/// Reference version of [`direction_mask`] straight from [`DIRECTIONS`] (for tests).
pub fn direction_mask_reference(n: Vec3) -> u32 {
    let mut m = 0u32;
    for (k, d) in DIRECTIONS.iter().enumerate() {
        let dot = n.x * d[0] as f32 + n.y * d[1] as f32 + n.z * d[2] as f32;
        if dot > 0.0 {
            m |= 1 << k;
        }
    }
    m
}

/// Per-node direction masks of `bvh` for the given per-face normals (indexed by face, i.e. by
/// the leaves' `left`): a leaf gets its face's mask, an internal node the AND of its children.
/// Faces outside `normals` (a mismatched tree) get mask 0, which never culls.
///
/// ```
/// use gprox_bvh::{lbvh::build_from_aabbs, normal_cone::normal_cones, Aabb};
/// let boxes = vec![Aabb { min: [0.0; 3], max: [1.0; 3] }; 2];
/// let bvh = build_from_aabbs(&boxes);
/// let masks = normal_cones(&bvh, &[glam::Vec3::Z, glam::Vec3::new(0.1, 0.0, 1.0)]);
/// assert_ne!(masks[0], 0); // both normals point up
/// ```
pub fn normal_cones(bvh: &Bvh, normals: &[Vec3]) -> Vec<u32> {
    let len = bvh.nodes.len();
    let mut masks = vec![0u32; len];
    if len == 0 || bvh.parents.len() != len {
        return masks;
    }
    // Bottom-up: each leaf walks up; an internal node is merged by the second child to arrive.
    let mut arrived = vec![0u8; len];
    for leaf in bvh.first_leaf()..len {
        let node = &bvh.nodes[leaf];
        if !node.is_leaf() {
            continue;
        }
        masks[leaf] = normals
            .get(node.left as usize)
            .map_or(0, |&n| direction_mask(n));
        let mut p = bvh.parents[leaf];
        while let Some(pn) = bvh.nodes.get(p as usize) {
            let pi = p as usize;
            arrived[pi] += 1;
            if arrived[pi] < 2 {
                break;
            }
            let (l, r) = (pn.left as usize, pn.right as usize);
            masks[pi] = match (masks.get(l), masks.get(r)) {
                (Some(&x), Some(&y)) => x & y,
                _ => 0,
            };
            p = bvh.parents[pi];
        }
    }
    masks
}
