//! The 15-axis OBB separating-axis test in f32 lanes with a certified pad.
//!
//! Reference: the exact-arithmetic test on the f64 inputs the f64 test uses — `R* = Aᵀ q B`,
//! `T* = Aᵀ d` with `d = (q c_B + t) − c_A` computed in f64 as there, `h_A`, and B's half-extents
//! grown as there (`g`). With `u = 2^-24` and `S = Σ|T*| + Σh_A + Σg` (every term of every gap
//! is bounded by `S`; the axes are orthonormal up to f64 rounding, so `|R*_ij| ≤ 1`, every entry
//! of `|Aᵀ| |q| |B|` is at most `‖|q|‖₂ ≤ √3`, and `Σ_k |A_ki| |d_k| ≤ ‖d‖₂ = ‖T*‖₂ ≤ Σ|T*|`):
//!
//! * the f32 images of `A`, `q`, `B`, `d`, `h_A`, `g` carry relative error `u`; the two 3×3
//!   products add `γ₃` each, so every entry of the computed `R` is within `9.1u · √3 < 16u`,
//!   and every entry of the computed `T` within `5.1u · Σ|T*|`;
//! * each gap `|L| − (r_A + r_B)` then moves by at most `Σ|T*| · δR + 2 δT + (Σh_A + Σg) · δR`
//!   plus the conversions of `h_A`, `g` (`u S`) and its own evaluation (at most seven roundings
//!   over terms summing to at most `S (1 + δR)`): below `40u S` on every axis (below `60u S`
//!   with a pessimistic `3` in place of `√3`);
//! * the computed `S` is at least `S (1 − 25u)`.
//!
//! So a pair is rejected only when some computed gap exceeds `2^-16 S̃ = 256u S̃` (plus an
//! absolute term for subnormal rounding), which leaves the exact gap above `190u S > 0`: the
//! exact test separates them too, and so does the f64 test (its slack is `4·10^-14 S`). The test
//! runs only when the query's figures are below `10^30` ([`super::LocalMap::new`]), so nothing
//! overflows for volumes within their root's reach; a NaN or infinite centre, half-extent or growth makes the pad NaN or infinite and
//! rejects nothing (non-finite axes are outside the trees' contract, as for the f64 test).

use glam::{DMat3, DVec3, Mat3A, Vec3A, Vec3Swizzles};
use gprox_bvh::obb::Obb;

use super::volume::LocalMap;
use super::K;

/// Relative pad on the scale `S` (`256u`, three times the bound derived above).
pub(super) const REL32: f32 = 1.0 / 65536.0;
/// Absolute pad covering subnormal rounding (each step loses at most `2^-149`).
pub(super) const TINY32: f32 = 1e-30;

/// `m` in f32 lanes.
#[inline(always)]
pub(crate) fn mat32(m: &DMat3) -> Mat3A {
    Mat3A::from_cols(
        m.x_axis.as_vec3a(),
        m.y_axis.as_vec3a(),
        m.z_axis.as_vec3a(),
    )
}

/// An OBB of A prepared for the test: for the f32 test its centre, its axes transposed and its
/// half-extents in f32 lanes (and their sum), else the f64 box itself.
#[derive(Clone, Copy, Debug)]
pub enum ObbA {
    /// For [`overlaps`].
    Lanes {
        center: DVec3,
        at: Mat3A,
        ha: Vec3A,
        ha_sum: f32,
    },
    /// For the f64 test (a map without an f32 form).
    Exact(Obb),
}

impl ObbA {
    /// `a` prepared under `map`.
    #[inline]
    pub(super) fn new(a: &Obb, map: &LocalMap) -> Self {
        match map.q32 {
            Some(_) => {
                let ha = a.half_extents.as_vec3a();
                Self::Lanes {
                    center: a.center,
                    at: mat32(&a.axes).transpose(),
                    ha,
                    ha_sum: ha.element_sum(),
                }
            }
            None => Self::Exact(*a),
        }
    }
}

/// An OBB of B mapped into A's model frame: for the f32 test `q B` in f32 lanes (from f32
/// images of `q` and `B`), the centre `q c + t` in f64, the grown half-extents in f32 lanes (and
/// their sum), else the f64 box itself.
#[derive(Clone, Copy, Debug)]
pub enum ObbB {
    /// For [`overlaps`].
    Lanes {
        center: DVec3,
        axes: Mat3A,
        g: Vec3A,
        g_sum: f32,
    },
    /// For the f64 test (a map without an f32 form).
    Exact(Obb),
}

impl ObbB {
    /// `b` mapped by `map`.
    #[inline]
    pub(super) fn new(b: &Obb, map: &LocalMap) -> Self {
        let Some(q32) = &map.q32 else {
            return Self::Exact(*b);
        };
        let hb = b.half_extents;
        let g = (hb + DVec3::splat(map.grow + K * hb.element_sum())).as_vec3a();
        Self::Lanes {
            center: map.q * b.center + map.t,
            axes: *q32 * mat32(&b.axes),
            g,
            g_sum: g.element_sum(),
        }
    }
}

/// Whether `a` overlaps `b` (see the module docs): never false when the exact test finds no
/// separating axis. A pair that is not both [`ObbA::Lanes`] and [`ObbB::Lanes`] (volumes
/// prepared under different maps) is reported as overlapping.
#[inline]
pub(super) fn overlaps(a: &ObbA, b: &ObbB) -> bool {
    let (
        ObbA::Lanes {
            center: ca,
            at,
            ha,
            ha_sum,
        },
        ObbB::Lanes {
            center: cb,
            axes,
            g,
            g_sum,
        },
    ) = (*a, *b)
    else {
        return true;
    };
    let d = cb - ca;
    let r = at * axes;
    let tv = at * d.as_vec3a();
    let abs = Mat3A::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
    let ta = tv.abs();
    let pad = Vec3A::splat((ta.element_sum() + ha_sum + g_sum) * REL32 + TINY32);
    // A's axes (lane i), then B's (lane j).
    let mut gap = ta - (ha + abs * g);
    let (rt, abst) = (r.transpose(), abs.transpose());
    gap = gap.max((rt * tv).abs() - (abst * ha + g));
    // Most rejections come from a face axis: skip the cross axes then (−5 % on the rows).
    if gap.cmpgt(pad).any() {
        return false;
    }
    // Cross axes A_i × B_j, lane j; the columns of `rt` are R's rows.
    let rows = [rt.x_axis, rt.y_axis, rt.z_axis];
    let arows = [abst.x_axis, abst.y_axis, abst.z_axis];
    let (gy, gz) = (g.yzx(), g.zxy());
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let tl = rows[i1] * tv[i2] - rows[i2] * tv[i1];
        let ra = arows[i2] * ha[i1] + arows[i1] * ha[i2];
        let rb = gy * arows[i].zxy() + gz * arows[i].yzx();
        gap = gap.max(tl.abs() - (ra + rb));
    }
    !gap.cmpgt(pad).any()
}
