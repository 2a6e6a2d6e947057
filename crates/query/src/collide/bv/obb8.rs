//! The f32 15-axis OBB test of [`super::obb32`] in eight lanes: one box against the eight slot
//! boxes of a [`WideObbNode`], the axes of all lanes at once (one branch: the cross axes are
//! skipped when a face axis separates every used lane), written once over the lane arithmetic of
//! [`lanes`]: AVX registers in a clone compiled for AVX2 when the CPU has it (chosen at run
//! time), the portable `wide` lanes otherwise — no fused multiply–add either way, so both give
//! the same bits.
//!
//! Each lane evaluates the quantities of [`super::obb32::overlaps`] with the same pad, so its
//! rounding bound carries over (every gap is certified on its own), with three differences,
//! none of which lets a pair the exact test keeps be rejected:
//! * half-extents come rounded *up* to f32 ([`gprox_bvh::wide_obb::lanes_of`]): the lane boxes
//!   contain the fitted ones, and B's growth `g` is computed in f64 from those as there;
//! * when B's slots are the lanes, `R = (Aᵀ q) B` instead of `Aᵀ (q B)`: two 3×3 products of
//!   f32 matrices either way, each adding `γ₃` relative to the entries of `|Aᵀ| |q| |B|`, which
//!   are at most `√3` in any order;
//! * a lane's cross axes are evaluated even when a face axis already separates it (unless every
//!   used lane is separated so): more certified gaps, the same verdicts.

use glam::DVec3;
use gprox_bvh::lane_tree::LaneNode;
use gprox_bvh::obb::Obb;
use gprox_bvh::wide_obb::{lanes_of, slot_center, WideObbNode, LANES};
use wide::f32x8;

mod lanes;

use lanes::Lanes;

use super::obb32::{REL32, TINY32};
use super::volume::LocalMap;
use super::K;

/// A box of A prepared for [`slots_of_b`]: centre, axes (`[3 i + c]`), half-extents, and
/// `Aᵀ q` (`[3 i + k]`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BoxA {
    center: DVec3,
    axes: [f32; 9],
    half: [f32; 3],
    aq: [f32; 9],
}

impl BoxA {
    /// The box with centre `center`, f32 axes `axes` and half-extents `half`, for the map whose
    /// f32 rotation is `q32` ([`q32_of`]).
    #[inline]
    pub(super) fn new(center: DVec3, axes: [f32; 9], half: [f32; 3], q32: &[f32; 9]) -> Self {
        let aq = std::array::from_fn(|ik| {
            let (i, k) = (ik / 3, ik % 3);
            (0..3).fold(0.0, |s, c| s + axes[3 * i + c] * q32[3 * c + k])
        });
        Self {
            center,
            axes,
            half,
            aq,
        }
    }

    /// Slot `s` of `n`.
    #[inline]
    pub(super) fn slot(n: &WideObbNode, s: usize, q32: &[f32; 9]) -> Self {
        let (c, a, h) = slot_parts(n, s);
        Self::new(c, a, h, q32)
    }

    /// A whole box (a tree's root).
    pub(super) fn of(b: &Obb, q32: &[f32; 9]) -> Self {
        let (a, h) = lanes_of(b);
        Self::new(b.center, a, h, q32)
    }
}

/// A box of B mapped into A's frame for [`slots_of_a`]: centre `q c + t` (f64), axes `q B`
/// (`[3 j + c]`), grown half-extents.
#[derive(Clone, Copy, Debug)]
pub(super) struct BoxB {
    center: DVec3,
    axes: [f32; 9],
    g: [f32; 3],
}

impl BoxB {
    /// The box with centre `center`, f32 axes `axes`, half-extents `half`, mapped by `map`.
    #[inline]
    pub(super) fn new(
        center: DVec3,
        axes: [f32; 9],
        half: [f32; 3],
        map: &LocalMap,
        q32: &[f32; 9],
    ) -> Self {
        let qb = std::array::from_fn(|jc| {
            let (j, c) = (jc / 3, jc % 3);
            (0..3).fold(0.0, |s, k| s + q32[3 * c + k] * axes[3 * j + k])
        });
        Self {
            center: map.q * center + map.t,
            axes: qb,
            g: grown(half, map.grow),
        }
    }

    /// Slot `s` of `n`.
    #[inline]
    pub(super) fn slot(n: &WideObbNode, s: usize, map: &LocalMap, q32: &[f32; 9]) -> Self {
        let (c, a, h) = slot_parts(n, s);
        Self::new(c, a, h, map, q32)
    }

    /// A whole box (a tree's root).
    pub(super) fn of(b: &Obb, map: &LocalMap, q32: &[f32; 9]) -> Self {
        let (a, h) = lanes_of(b);
        Self::new(b.center, a, h, map, q32)
    }
}

/// `map.q32` as `[3 c + k]` (row `c`, column `k`), if the map has an f32 form.
pub(super) fn q32_of(map: &LocalMap) -> Option<[f32; 9]> {
    let q = map.q32?;
    Some(std::array::from_fn(|ck| q.col(ck % 3)[ck / 3]))
}

#[inline(always)]
fn slot_parts(n: &WideObbNode, s: usize) -> (DVec3, [f32; 9], [f32; 3]) {
    (
        slot_center(n, s),
        std::array::from_fn(|k| n.axes[k][s]),
        std::array::from_fn(|i| n.half[i][s]),
    )
}

/// B's half-extents grown as in [`super::obb32::ObbB::new`] (in f64, then to f32).
#[inline(always)]
fn grown(half: [f32; 3], grow: f64) -> [f32; 3] {
    let h = half.map(f64::from);
    let extra = grow + K * (h[0] + h[1] + h[2]);
    h.map(|x| (x + extra) as f32)
}

/// Lane `k` of the result: whether no computed gap of lane `k` exceeds its pad (see
/// [`super::obb32`]), from the rotation `r` (`[3 i + j]` = `Aᵢ · (q B)ⱼ`), the centre offset
/// `t` in A's frame, A's half-extents and B's grown ones, for the lanes in `used` (the others 0).
#[inline(always)]
fn keep<L: Lanes>(r: &[L; 9], t: &[L; 3], ha: &[L; 3], g: &[L; 3], used: u32) -> u32 {
    let a = [
        r[0].abs(),
        r[1].abs(),
        r[2].abs(),
        r[3].abs(),
        r[4].abs(),
        r[5].abs(),
        r[6].abs(),
        r[7].abs(),
        r[8].abs(),
    ];
    let ta = [t[0].abs(), t[1].abs(), t[2].abs()];
    let pad = (ta[0] + ta[1] + ta[2] + (ha[0] + ha[1] + ha[2]) + (g[0] + g[1] + g[2]))
        * L::splat(REL32)
        + L::splat(TINY32);
    // Macros rather than closures or loops: everything must inline into the AVX2 clone.
    // A's axes, then B's.
    macro_rules! face_a {
        ($i:expr) => {
            ta[$i] - (ha[$i] + (a[3 * $i] * g[0] + a[3 * $i + 1] * g[1] + a[3 * $i + 2] * g[2]))
        };
    }
    macro_rules! face_b {
        ($j:expr) => {
            (r[$j] * t[0] + r[3 + $j] * t[1] + r[6 + $j] * t[2]).abs()
                - ((a[$j] * ha[0] + a[3 + $j] * ha[1] + a[6 + $j] * ha[2]) + g[$j])
        };
    }
    // A_i × B_j.
    macro_rules! cross {
        ($i:expr, $i1:expr, $i2:expr, $j:expr, $j1:expr, $j2:expr) => {
            (r[3 * $i1 + $j] * t[$i2] - r[3 * $i2 + $j] * t[$i1]).abs()
                - ((a[3 * $i2 + $j] * ha[$i1] + a[3 * $i1 + $j] * ha[$i2])
                    + (g[$j1] * a[3 * $i + $j2] + g[$j2] * a[3 * $i + $j1]))
        };
    }
    let gap = face_a!(0)
        .max(face_a!(1))
        .max(face_a!(2))
        .max(face_b!(0))
        .max(face_b!(1))
        .max(face_b!(2));
    // Most node pairs of a separation proof are told apart by a face axis: when every used
    // lane is, the cross axes are skipped (about a third of the test's work).
    if gap.not_gt(pad) & used == 0 {
        return 0;
    }
    let gap = gap
        .max(cross!(0, 1, 2, 0, 1, 2))
        .max(cross!(0, 1, 2, 1, 2, 0))
        .max(cross!(0, 1, 2, 2, 0, 1))
        .max(cross!(1, 2, 0, 0, 1, 2))
        .max(cross!(1, 2, 0, 1, 2, 0))
        .max(cross!(1, 2, 0, 2, 0, 1))
        .max(cross!(2, 0, 1, 0, 1, 2))
        .max(cross!(2, 0, 1, 1, 2, 0))
        .max(cross!(2, 0, 1, 2, 0, 1));
    // NaN anywhere makes the pad or the gaps NaN, and a NaN comparison keeps the pair.
    gap.not_gt(pad) & used
}

/// `Aᵀ d` (`axes[3 i + c]`), `d` rounded to f32 first.
#[inline(always)]
fn local_offset<L: Lanes>(axes: &[L; 9], d: &[L::D; 3]) -> [L; 3] {
    let d = [L::d_round(d[0]), L::d_round(d[1]), L::d_round(d[2])];
    macro_rules! row {
        ($i:expr) => {
            axes[3 * $i] * d[0] + axes[3 * $i + 1] * d[1] + axes[3 * $i + 2] * d[2]
        };
    }
    [row!(0), row!(1), row!(2)]
}

/// `m · n` for 3×3 lane matrices (`[3 i + k]` rows of `m` against `[3 j + k]` rows of `n`):
/// entry `[3 i + j]`.
#[inline(always)]
fn products<L: Lanes>(m: &[L; 9], n: &[L; 9]) -> [L; 9] {
    let mut r = [L::splat(0.0); 9];
    for i in 0..3 {
        for j in 0..3 {
            r[3 * i + j] =
                m[3 * i] * n[3 * j] + m[3 * i + 1] * n[3 * j + 1] + m[3 * i + 2] * n[3 * j + 2];
        }
    }
    r
}

/// B's half-extents grown as in [`super::obb32::ObbB::new`], in f64 lanes, then to f32.
#[inline(always)]
fn grown_lanes<L: Lanes>(half: &[[f32; LANES]; 3], grow: f64) -> [L; 3] {
    let h = [
        L::d_from(L::load(&half[0])),
        L::d_from(L::load(&half[1])),
        L::d_from(L::load(&half[2])),
    ];
    let extra = L::d_splat(grow) + L::d_splat(K) * (h[0] + h[1] + h[2]);
    [
        L::d_round(h[0] + extra),
        L::d_round(h[1] + extra),
        L::d_round(h[2] + extra),
    ]
}

/// The node's axes as lanes.
#[inline(always)]
fn axes_of<L: Lanes>(n: &WideObbNode) -> [L; 9] {
    let mut m = [L::splat(0.0); 9];
    for (x, src) in m.iter_mut().zip(&n.axes) {
        *x = L::load(src);
    }
    m
}

/// `v` in every lane, entry by entry.
#[inline(always)]
fn splat9<L: Lanes>(v: &[f32; 9]) -> [L; 9] {
    let mut m = [L::splat(0.0); 9];
    for (x, &s) in m.iter_mut().zip(v) {
        *x = L::splat(s);
    }
    m
}

/// Bits of the slots of `n` (boxes of B) that `a` may overlap under `map`.
#[inline(always)]
fn slots_of_b_lanes<L: Lanes>(a: &BoxA, n: &WideObbNode, map: &LocalMap) -> u32 {
    let (q, t) = (map.q, map.t);
    let c = [
        L::d_load(&n.center[0]),
        L::d_load(&n.center[1]),
        L::d_load(&n.center[2]),
    ];
    macro_rules! coord {
        ($k:expr) => {
            (L::d_splat(q.x_axis[$k]) * c[0]
                + L::d_splat(q.y_axis[$k]) * c[1]
                + L::d_splat(q.z_axis[$k]) * c[2]
                + L::d_splat(t[$k]))
                - L::d_splat(a.center[$k])
        };
    }
    let d = [coord!(0), coord!(1), coord!(2)];
    let tv = local_offset(&splat9(&a.axes), &d);
    let r = products::<L>(&splat9(&a.aq), &axes_of(n));
    let g = grown_lanes::<L>(&n.half, map.grow);
    let ha = [
        L::splat(a.half[0]),
        L::splat(a.half[1]),
        L::splat(a.half[2]),
    ];
    keep(&r, &tv, &ha, &g, n.used())
}

/// Bits of the slots of `n` (boxes of A) that `b` may overlap.
#[inline(always)]
fn slots_of_a_lanes<L: Lanes>(n: &WideObbNode, b: &BoxB) -> u32 {
    let d = [
        L::d_splat(b.center[0]) - L::d_load(&n.center[0]),
        L::d_splat(b.center[1]) - L::d_load(&n.center[1]),
        L::d_splat(b.center[2]) - L::d_load(&n.center[2]),
    ];
    let at = axes_of::<L>(n);
    let tv = local_offset(&at, &d);
    let r = products(&at, &splat9(&b.axes));
    let ha = [
        L::load(&n.half[0]),
        L::load(&n.half[1]),
        L::load(&n.half[2]),
    ];
    let g = [L::splat(b.g[0]), L::splat(b.g[1]), L::splat(b.g[2])];
    keep(&r, &tv, &ha, &g, n.used())
}

/// `$lanes` on AVX registers in a clone compiled for AVX2 when the CPU has it, else on the
/// portable lanes.
macro_rules! dispatch {
    ($name:ident, $avx:ident, $lanes:ident, ($($arg:ident: $ty:ty),*)) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx($($arg: $ty),*) -> u32 {
            $lanes::<lanes::Avx>($($arg),*)
        }

        #[inline]
        pub(super) fn $name($($arg: $ty),*) -> u32 {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked just above).
                return unsafe { $avx($($arg),*) };
            }
            $lanes::<f32x8>($($arg),*)
        }
    };
}

dispatch!(slots_of_b, slots_of_b_avx2, slots_of_b_lanes, (a: &BoxA, n: &WideObbNode, map: &LocalMap));
dispatch!(slots_of_a, slots_of_a_avx2, slots_of_a_lanes, (n: &WideObbNode, b: &BoxB));

#[cfg(test)]
mod tests {
    use glam::{DMat3, DQuat, DVec3};
    use gprox_bvh::lane_tree::LaneNode;
    use gprox_bvh::obb::Obb;
    use gprox_bvh::wide_obb::{WideObbNode, LANES};
    use proptest::prelude::*;

    use super::super::volume::{CollisionVolume, LocalMap};
    use super::{q32_of, slots_of_a, slots_of_a_lanes, slots_of_b, slots_of_b_lanes, BoxA, BoxB};
    use wide::f32x8;

    fn unit(v: [f64; 4]) -> DQuat {
        let q = DQuat::from_xyzw(v[0], v[1], v[2], v[3]);
        if q.length() < 1e-3 {
            DQuat::IDENTITY
        } else {
            q.normalize()
        }
    }

    fn obb() -> impl Strategy<Value = Obb> {
        (
            [-2.0f64..2.0, -2.0..2.0, -2.0..2.0],
            [-1.0f64..1.0, -1.0..1.0, -1.0..1.0, -1.0..1.0],
            [0.0f64..1.0, 0.0..1.0, 0.0..1.0],
        )
            .prop_map(|(c, q, h)| Obb {
                center: DVec3::from_array(c),
                axes: DMat3::from_quat(unit(q)),
                half_extents: DVec3::from_array(h),
            })
    }

    fn node(boxes: &[Obb]) -> WideObbNode {
        let mut n = WideObbNode::with_children([gprox_bvh::wide::EMPTY; LANES]);
        for s in 0..LANES {
            n.set_slot(s, &boxes[s.min(boxes.len() - 1)]);
            if s < boxes.len() {
                n.children[s] = s as u32;
            }
        }
        n
    }

    fn resized(b: &Obb, by: f64) -> Obb {
        Obb {
            half_extents: (b.half_extents + DVec3::splat(by)).max(DVec3::ZERO),
            ..*b
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Against the f64 test in both roles: every slot whose boxes overlap with a margin
        /// (the f64 test keeps them shrunk by `δ`) is kept, every slot separated with a margin
        /// (the f64 test rejects them grown by `δ`) is rejected, and unused slots never are.
        #[test]
        fn lanes_agree_with_the_f64_test(
            a in obb(),
            boxes in proptest::collection::vec(obb(), 1..=LANES),
            pose in [-1.0f64..1.0, -1.0..1.0, -1.0..1.0, -1.0..1.0],
            t in [-2.0f64..2.0, -2.0..2.0, -2.0..2.0],
        ) {
            let q = DMat3::from_quat(unit(pose));
            let map = LocalMap::new(q, DVec3::from_array(t), 1e-12, 8.0);
            let q32 = q32_of(&map).unwrap();
            let n = node(&boxes);
            let delta = 1e-4;
            // `a` as A against the slots as B.
            let got = slots_of_b(&BoxA::of(&a, &q32), &n, &map);
            // `a` as B against the slots as A.
            let got_a = slots_of_a(&n, &BoxB::of(&a, &map, &q32));
            // The portable lanes give the same bits as the dispatched ones (AVX2 here, if any).
            prop_assert_eq!(got, slots_of_b_lanes::<f32x8>(&BoxA::of(&a, &q32), &n, &map));
            prop_assert_eq!(got_a, slots_of_a_lanes::<f32x8>(&n, &BoxB::of(&a, &map, &q32)));
            prop_assert_eq!(got >> boxes.len(), 0);
            prop_assert_eq!(got_a >> boxes.len(), 0);
            for (s, b) in boxes.iter().enumerate() {
                let kept = got >> s & 1 == 1;
                if resized(&a, -delta).overlaps_local(&resized(b, -delta), &map) {
                    prop_assert!(kept, "slot {} (B) overlaps but was rejected", s);
                }
                if !resized(&a, delta).overlaps_local(&resized(b, delta), &map) {
                    prop_assert!(!kept, "slot {} (B) is apart but was kept", s);
                }
                let kept = got_a >> s & 1 == 1;
                if resized(b, -delta).overlaps_local(&resized(&a, -delta), &map) {
                    prop_assert!(kept, "slot {} (A) overlaps but was rejected", s);
                }
                if !resized(b, delta).overlaps_local(&resized(&a, delta), &map) {
                    prop_assert!(!kept, "slot {} (A) is apart but was kept", s);
                }
            }
        }
    }
}
