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
    let scene = scene_box(boxes);
    let ext = extent(&scene);
    if boxes.len() < PAR_MIN {
        let mut codes = vec![0; boxes.len()];
        codes63_into(boxes, &scene, &ext, &mut codes);
        return codes;
    }
    let mut codes = crate::alloc::zeroed(boxes.len());
    codes
        .par_chunks_mut(4096)
        .zip(boxes.par_chunks(4096))
        .for_each(|(out, inp)| codes63_into(inp, &scene, &ext, out));
    codes
}

/// [`morton63`] of every box of `boxes` into `out` (same length), eight at a time: the same
/// IEEE operations per lane as the scalar code, in SIMD lanes, and the bits spread by shifts
/// and masks instead of table lookups.
fn codes63_into(boxes: &[Aabb], scene: &Aabb, ext: &[f32; 3], out: &mut [u64]) {
    use wide::{f32x8, u64x4, CmpGt, CmpLt};
    const LANES: usize = 8;
    let (zero, top) = (f32x8::splat(0.0), f32x8::splat(CELLS_63 - 1.0));
    let mut inp = boxes.chunks_exact(LANES);
    let mut outp = out.chunks_exact_mut(LANES);
    for (b, o) in (&mut inp).zip(&mut outp) {
        let mut code = [u64x4::splat(0); 2];
        for (axis, (&s_min, &e)) in scene.min.iter().zip(ext).enumerate() {
            let lo = f32x8::from(std::array::from_fn::<f32, LANES, _>(|l| b[l].min[axis]));
            let hi = f32x8::from(std::array::from_fn::<f32, LANES, _>(|l| b[l].max[axis]));
            let centre = (lo + hi) * f32x8::splat(0.5);
            let q = (centre - f32x8::splat(s_min)) / f32x8::splat(e);
            let v = q * f32x8::splat(CELLS_63);
            // `clamp(0, top)` then the cast: a NaN (or anything not above 0) gives cell 0.
            let v = v.cmp_gt(zero).blend(v, zero);
            let v = v.cmp_lt(top).blend(v, top);
            let cell = v.fast_trunc_int().to_array();
            for (half, code) in code.iter_mut().enumerate() {
                let c: [u64; 4] = std::array::from_fn(|l| cell[4 * half + l] as u64);
                *code |= spread21_x4(u64x4::from(c)) << (2 - axis as u64);
            }
        }
        o[..4].copy_from_slice(&code[0].to_array());
        o[4..].copy_from_slice(&code[1].to_array());
    }
    for (o, b) in outp.into_remainder().iter_mut().zip(inp.remainder()) {
        *o = morton63(centroid(b), scene, ext);
    }
}

/// [`spread21`] of four values below `2^21` by five shift-and-mask steps.
#[inline(always)]
fn spread21_x4(x: wide::u64x4) -> wide::u64x4 {
    use wide::u64x4;
    let step = |x: u64x4, shift: u64, mask: u64| (x | (x << shift)) & u64x4::splat(mask);
    let x = step(x, 32, 0x001f_0000_0000_ffff);
    let x = step(x, 16, 0x001f_0000_ff00_00ff);
    let x = step(x, 8, 0x100f_00f0_0f00_f00f);
    let x = step(x, 4, 0x10c3_0c30_c30c_30c3);
    step(x, 2, 0x1249_2492_4924_9249)
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
    fn shift_spread_matches_the_table_on_every_input() {
        for v in (0..1u64 << 21).step_by(4) {
            let got = spread21_x4(wide::u64x4::from([v, v + 1, v + 2, v + 3])).to_array();
            let want = [0, 1, 2, 3].map(|k| spread21(v as u32 + k));
            assert_eq!(got, want, "v = {v}");
        }
    }

    /// The eight-lane path gives the scalar [`morton63`] of every box, also for NaN and
    /// infinite coordinates, flat scenes and lengths that are not multiples of eight.
    #[test]
    fn block_codes_match_the_scalar_code() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e30];
        for (n, flat) in [
            (1usize, false),
            (7, false),
            (8, true),
            (13, false),
            (PAR_MIN + 5, false),
        ] {
            let boxes: Vec<Aabb> = (0..n)
                .map(|_| {
                    let mut c = || match next() % 16 {
                        0 => special[(next() % 6) as usize],
                        _ => (next() % 2001) as f32 * 0.01 - 10.0,
                    };
                    let lo = [c(), if flat { 1.0 } else { c() }, c()];
                    Aabb {
                        min: lo,
                        max: lo.map(|v| v + 0.25),
                    }
                })
                .collect();
            let scene = scene_box(&boxes);
            let ext = extent(&scene);
            let expect: Vec<u64> = boxes
                .iter()
                .map(|b| morton63(centroid(b), &scene, &ext))
                .collect();
            assert_eq!(codes63(&boxes), expect, "n = {n}");
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
