//! Morton (Z-order) codes of primitive centroids: LBVH spec steps 1–3.
//!
//! Every operation is plain IEEE f32 without fused multiply-add, in the order the spec fixes,
//! so `kernels/cuda/morton.cu` (built with `--fmad=false`) produces bit-identical codes.
//!
//! * centroid `c = (b.min + b.max) * 0.5` per axis ([`centroid`]);
//! * scene box `S` = box of all centroids, extent `e = S.max - S.min` (`1.0` where zero)
//!   ([`scene_box`], [`extent`]);
//! * per axis `q = (c - S.min) / e`, `v = q * 2^21`, clamped to `[0, 2^21 - 1]` and truncated;
//!   bit `3k+2` of the code is bit `k` of x, `3k+1` of y, `3k` of z ([`morton63`]).
//!   The 30-bit variant ([`morton30`]) uses `2^10` and 10 bits per axis.

use glam::Vec3;
use rayon::prelude::*;

use crate::Aabb;

/// Cells per axis of the 63-bit code (`2^21`).
pub const CELLS_63: f32 = 2_097_152.0;
/// Cells per axis of the 30-bit code (`2^10`).
pub const CELLS_30: f32 = 1024.0;

/// Below this many primitives the loops run sequentially (rayon overhead dominates).
pub(crate) const PAR_MIN: usize = 1 << 14;

/// Centroid of a primitive box: `(min + max) * 0.5` per axis, in f32.
#[inline]
pub fn centroid(b: &Aabb) -> Vec3 {
    Vec3::new(
        (b.min[0] + b.max[0]) * 0.5,
        (b.min[1] + b.max[1]) * 0.5,
        (b.min[2] + b.max[2]) * 0.5,
    )
}

/// The box of all centroids of `boxes` (spec step 2). [`Aabb::EMPTY`] when `boxes` is empty.
pub fn scene_box(boxes: &[Aabb]) -> Aabb {
    let fold = |acc: Aabb, b: &Aabb| {
        let c = centroid(b).to_array();
        acc.merge(&Aabb { min: c, max: c })
    };
    if boxes.len() < PAR_MIN {
        boxes.iter().fold(Aabb::EMPTY, fold)
    } else {
        boxes
            .par_chunks(PAR_MIN)
            .map(|chunk| chunk.iter().fold(Aabb::EMPTY, fold))
            .reduce(|| Aabb::EMPTY, |a, b| a.merge(&b))
    }
}

/// Extent `S.max - S.min` per axis, with `1.0` on axes where it is zero (spec step 2).
#[inline]
pub fn extent(scene: &Aabb) -> [f32; 3] {
    [0, 1, 2].map(|i| {
        let e = scene.max[i] - scene.min[i];
        if e == 0.0 {
            1.0
        } else {
            e
        }
    })
}

/// Quantises `c` to `[0, cells - 1]` per axis (spec step 3).
#[inline]
fn quantise(c: Vec3, scene: &Aabb, ext: &[f32; 3], cells: f32) -> [u32; 3] {
    let c = c.to_array();
    let axis = |i: usize| {
        let q = (c[i] - scene.min[i]) / ext[i];
        let v = (q * cells).clamp(0.0, cells - 1.0);
        v as u32
    };
    [axis(0), axis(1), axis(2)]
}

/// `SPREAD7[v]`: the 7 bits of `v` spread so bit `k` lands at bit `3k`.
const SPREAD7: [u64; 128] = {
    let mut table = [0u64; 128];
    let mut v = 0;
    while v < 128 {
        let mut k = 0;
        while k < 7 {
            table[v] |= ((v as u64 >> k) & 1) << (3 * k);
            k += 1;
        }
        v += 1;
    }
    table
};

/// Spreads the low 21 bits of `v` so bit `k` lands at bit `3k` (three 7-bit table lookups:
/// fewer instructions than the shift-and-mask ladder).
#[inline]
pub fn spread21(v: u32) -> u64 {
    let part = |shift: u32| SPREAD7[((v >> shift) & 127) as usize];
    part(0) | (part(7) << 21) | (part(14) << 42)
}

/// Spreads the low 10 bits of `v` so bit `k` lands at bit `3k`.
#[inline]
pub fn spread10(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | (x << 16)) & 0x0300_00ff;
    x = (x | (x << 8)) & 0x0300_f00f;
    x = (x | (x << 4)) & 0x030c_30c3;
    x = (x | (x << 2)) & 0x0924_9249;
    x
}

/// 63-bit Morton code of centroid `c` in the scene box `scene` with extent `ext`
/// (see [`extent`]).
#[inline]
pub fn morton63(c: Vec3, scene: &Aabb, ext: &[f32; 3]) -> u64 {
    let [x, y, z] = quantise(c, scene, ext, CELLS_63);
    (spread21(x) << 2) | (spread21(y) << 1) | spread21(z)
}

/// 30-bit Morton code of centroid `c` (10 bits per axis, same interleave as [`morton63`]).
#[inline]
pub fn morton30(c: Vec3, scene: &Aabb, ext: &[f32; 3]) -> u32 {
    let [x, y, z] = quantise(c, scene, ext, CELLS_30);
    (spread10(x) << 2) | (spread10(y) << 1) | spread10(z)
}

/// 63-bit codes of every primitive box (spec steps 1–3), in primitive order.
///
/// ```
/// use gprox_bvh::{morton::codes63, Aabb};
/// let boxes = [
///     Aabb { min: [0.0; 3], max: [0.0; 3] },
///     Aabb { min: [1.0; 3], max: [1.0; 3] },
/// ];
/// assert_eq!(codes63(&boxes), vec![0, (1u64 << 63) - 1]);
/// ```
pub fn codes63(boxes: &[Aabb]) -> Vec<u64> {
    codes_with(boxes, morton63)
}

/// 30-bit codes of every primitive box, in primitive order.
pub fn codes30(boxes: &[Aabb]) -> Vec<u32> {
    codes_with(boxes, morton30)
}

/// `code(centroid, scene box, extent)` of every box, in parallel for large inputs.
fn codes_with<T, F>(boxes: &[Aabb], code: F) -> Vec<T>
where
    T: Send + bytemuck::Zeroable,
    F: Fn(Vec3, &Aabb, &[f32; 3]) -> T + Sync,
{
    let scene = scene_box(boxes);
    let ext = extent(&scene);
    let f = |b: &Aabb| code(centroid(b), &scene, &ext);
    if boxes.len() < PAR_MIN {
        boxes.iter().map(f).collect()
    } else {
        // Chunks with a plain loop inside: the code computation inlines into it (through
        // `par_extend` it was a call per primitive).
        let mut codes = crate::alloc::zeroed(boxes.len());
        codes
            .par_chunks_mut(4096)
            .zip(boxes.par_chunks(4096))
            .for_each(|(out, inp)| {
                for (o, b) in out.iter_mut().zip(inp) {
                    *o = f(b);
                }
            });
        codes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread_naive(v: u32, bits: u32) -> u64 {
        (0..bits).fold(0u64, |acc, k| acc | ((((v >> k) & 1) as u64) << (3 * k)))
    }

    #[test]
    fn spreads_match_naive() {
        for v in [0u32, 1, 2, 3, 0x155555, 0x0aaaaa, 0x1fffff, 12345, 999_999] {
            assert_eq!(spread21(v), spread_naive(v, 21), "v = {v}");
            assert_eq!(spread10(v) as u64, spread_naive(v & 0x3ff, 10), "v = {v}");
        }
    }

    #[test]
    fn axis_bit_positions() {
        let s = Aabb {
            min: [0.0; 3],
            max: [1.0; 3],
        };
        let e = extent(&s);
        // Smallest nonzero cell on one axis: x -> bit 2, y -> bit 1, z -> bit 0.
        let d = 1.0 / CELLS_63;
        assert_eq!(morton63(Vec3::new(d, 0.0, 0.0), &s, &e), 4);
        assert_eq!(morton63(Vec3::new(0.0, d, 0.0), &s, &e), 2);
        assert_eq!(morton63(Vec3::new(0.0, 0.0, d), &s, &e), 1);
        assert_eq!(morton30(Vec3::new(1.0, 1.0, 1.0), &s, &e), (1 << 30) - 1);
    }

    #[test]
    fn flat_axis_gets_unit_extent() {
        let s = Aabb {
            min: [2.0, 0.0, 0.0],
            max: [2.0, 1.0, 1.0],
        };
        assert_eq!(extent(&s), [1.0, 1.0, 1.0]);
    }
}
