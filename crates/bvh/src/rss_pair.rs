//! RSS distance lower bounds in f64 SIMD lanes: two pairs at once for the binary distance query
//! (the two children of every expanded node pair, [`lower_bounds_mapped`]) and eight at once
//! for the wide one ([`crate::wide_rss`]), through one generic core.
//!
//! The core is [`Rss::distance_lower_bound`] of `a` and
//! [`transform_rigid`](crate::bounding_volume::BoundingVolume::transform_rigid)`(b)`,
//! operation for operation in the same order, one pair per lane. IEEE f64 lane arithmetic
//! rounds as the scalar code does, so every lane is bit for bit the scalar bound (proptests
//! `rss_pair_bounds_bit_identical` and `wide_bounds_bit_identical` in
//! `tests/rss_pair.rs`), and so certified as it is. The one difference: the gaps' maximum is
//! `maxpd`, which may keep a NaN gap (infinite inputs) that `f64::max` would drop; the final
//! `max(0.0)` then gives 0, a valid (trivial) bound.
//!
//! With the bound ≈ 65 % of the query, the two-lane form took the query's instructions down by
//! 27 % on the benchmark scenes (callgrind, 30 frames; docs/benchmarks.md).

use std::ops::{Add, Div, Mul, Sub};

use glam::{DMat3, DVec3};
use wide::{f64x2, f64x4, CmpGt};

use crate::rss::Rss;

/// The relative rounding allowance of [`Rss`] (its `SLACK * 4.0`).
const SLACK4: f64 = 8.0 * f64::EPSILON * 4.0;

/// f64 lanes and the operations the bound needs.
pub(crate) trait F64Lanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// Lanes per value.
    const WIDTH: usize;
    fn splat(x: f64) -> Self;
    /// Lanes from the first elements of `x`.
    fn load(x: &[f64]) -> Self;
    /// Writes the lanes to the first elements of `out`.
    fn store(self, out: &mut [f64]);
    fn abs(self) -> Self;
    /// `maxpd` (see the module docs for NaN).
    fn max(self, o: Self) -> Self;
    fn sqrt(self) -> Self;
    /// `yes` where `self > 0`, else `no`.
    fn positive_then(self, yes: Self, no: Self) -> Self;
}

macro_rules! wide_lanes {
    ($t:ident, $n:expr) => {
        impl F64Lanes for $t {
            const WIDTH: usize = $n;
            #[inline(always)]
            fn splat(x: f64) -> Self {
                $t::splat(x)
            }
            #[inline(always)]
            fn load(x: &[f64]) -> Self {
                let a: [f64; $n] = std::array::from_fn(|k| x[k]);
                $t::from(a)
            }
            #[inline(always)]
            fn store(self, out: &mut [f64]) {
                out[..$n].copy_from_slice(&self.to_array());
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                self.fast_max(o)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn positive_then(self, yes: Self, no: Self) -> Self {
                self.cmp_gt($t::splat(0.0)).blend(yes, no)
            }
        }
    };
}
wide_lanes!(f64x2, 2);
wide_lanes!(f64x4, 4);

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::Avx4;
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::Avx8;

/// Four f64 lanes in one AVX register. Its methods are only called from functions compiled with
/// `#[target_feature(enable = "avx2")]`, into which they inline (and the intrinsics with them);
/// they round every operation as the portable lanes do (IEEE, no fused multiply–add).
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Sub};

    use super::F64Lanes;

    #[derive(Clone, Copy)]
    pub(crate) struct Avx4(__m256d);

    // SAFETY (every `unsafe` block below): values of this type are built only inside functions
    // compiled with AVX2 enabled, which run only after the CPU was checked for AVX2; loads and
    // stores are bounds-checked first.
    macro_rules! op {
        ($tr:ident, $f:ident, $i:ident) => {
            impl $tr for Avx4 {
                type Output = Self;
                #[inline(always)]
                fn $f(self, o: Self) -> Self {
                    Self(unsafe { $i(self.0, o.0) })
                }
            }
        };
    }
    op!(Add, add, _mm256_add_pd);
    op!(Sub, sub, _mm256_sub_pd);
    op!(Mul, mul, _mm256_mul_pd);
    op!(Div, div, _mm256_div_pd);

    impl F64Lanes for Avx4 {
        const WIDTH: usize = 4;
        #[inline(always)]
        fn splat(x: f64) -> Self {
            Self(unsafe { _mm256_set1_pd(x) })
        }
        #[inline(always)]
        fn load(x: &[f64]) -> Self {
            let x = &x[..4];
            Self(unsafe { _mm256_loadu_pd(x.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [f64]) {
            let out = &mut out[..4];
            unsafe { _mm256_storeu_pd(out.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn abs(self) -> Self {
            Self(unsafe { _mm256_andnot_pd(_mm256_set1_pd(-0.0), self.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            // `maxpd` with the operands as `wide`'s `fast_max` passes them.
            Self(unsafe { _mm256_max_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            Self(unsafe { _mm256_sqrt_pd(self.0) })
        }
        #[inline(always)]
        fn positive_then(self, yes: Self, no: Self) -> Self {
            unsafe {
                let m = _mm256_cmp_pd::<_CMP_GT_OQ>(self.0, _mm256_setzero_pd());
                Self(_mm256_blendv_pd(no.0, yes.0, m))
            }
        }
    }
}

/// Eight f64 lanes in one AVX-512 register, under the same rules as [`Avx4`] (called only from
/// functions compiled with `#[target_feature(enable = "avx512f")]`, after the CPU was checked;
/// IEEE rounding, no fused multiply–add), so every lane rounds as the portable lanes do.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Sub};

    use super::F64Lanes;

    #[derive(Clone, Copy)]
    pub(crate) struct Avx8(__m512d);

    // SAFETY (every `unsafe` block below): as for `Avx4`, with AVX-512F.
    macro_rules! op {
        ($tr:ident, $f:ident, $i:ident) => {
            impl $tr for Avx8 {
                type Output = Self;
                #[inline(always)]
                fn $f(self, o: Self) -> Self {
                    Self(unsafe { $i(self.0, o.0) })
                }
            }
        };
    }
    op!(Add, add, _mm512_add_pd);
    op!(Sub, sub, _mm512_sub_pd);
    op!(Mul, mul, _mm512_mul_pd);
    op!(Div, div, _mm512_div_pd);

    impl F64Lanes for Avx8 {
        const WIDTH: usize = 8;
        #[inline(always)]
        fn splat(x: f64) -> Self {
            Self(unsafe { _mm512_set1_pd(x) })
        }
        #[inline(always)]
        fn load(x: &[f64]) -> Self {
            let x = &x[..8];
            Self(unsafe { _mm512_loadu_pd(x.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [f64]) {
            let out = &mut out[..8];
            unsafe { _mm512_storeu_pd(out.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn abs(self) -> Self {
            // Clears the sign bit, as `andnot(-0.0, x)` does.
            Self(unsafe { _mm512_abs_pd(self.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            // `vmaxpd`: the second operand where either is NaN, as `maxpd`.
            Self(unsafe { _mm512_max_pd(self.0, o.0) })
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            Self(unsafe { _mm512_sqrt_pd(self.0) })
        }
        #[inline(always)]
        fn positive_then(self, yes: Self, no: Self) -> Self {
            unsafe {
                let m = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(self.0, _mm512_setzero_pd());
                Self(_mm512_mask_blend_pd(m, no.0, yes.0))
            }
        }
    }
}

/// A 3-vector per lane.
#[derive(Clone, Copy)]
pub(crate) struct V3<L> {
    pub(crate) x: L,
    pub(crate) y: L,
    pub(crate) z: L,
}

impl<L: F64Lanes> V3<L> {
    /// The same vector in every lane.
    #[inline(always)]
    pub(crate) fn splat(v: DVec3) -> Self {
        Self {
            x: L::splat(v.x),
            y: L::splat(v.y),
            z: L::splat(v.z),
        }
    }

    /// glam's `DVec3::dot` order.
    #[inline(always)]
    fn dot(self, o: Self) -> L {
        (self.x * o.x) + (self.y * o.y) + (self.z * o.z)
    }

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

/// glam's `DMat3 * DVec3` order: `m.x_axis · v.x + m.y_axis · v.y + m.z_axis · v.z`.
#[inline(always)]
fn mat_vec<L: F64Lanes>(m: &DMat3, v: V3<L>) -> V3<L> {
    let s = L::splat;
    let row = |c0: f64, c1: f64, c2: f64| (s(c0) * v.x + s(c1) * v.y) + s(c2) * v.z;
    V3 {
        x: row(m.x_axis.x, m.y_axis.x, m.z_axis.x),
        y: row(m.x_axis.y, m.y_axis.y, m.z_axis.y),
        z: row(m.x_axis.z, m.y_axis.z, m.z_axis.z),
    }
}

/// One RSS per lane.
#[derive(Clone, Copy)]
pub(crate) struct RssLanes<L> {
    pub(crate) center: V3<L>,
    /// Rectangle axes, then the normal.
    pub(crate) axes: [V3<L>; 3],
    pub(crate) hx: L,
    pub(crate) hy: L,
    pub(crate) radius: L,
}

impl<L: F64Lanes> RssLanes<L> {
    /// The same volume in every lane.
    #[inline(always)]
    pub(crate) fn splat(v: &Rss) -> Self {
        Self {
            center: V3::splat(v.center),
            axes: [v.axes.x_axis, v.axes.y_axis, v.axes.z_axis].map(V3::splat),
            hx: L::splat(v.half_lengths.x),
            hy: L::splat(v.half_lengths.y),
            radius: L::splat(v.radius),
        }
    }

    /// `transform_rigid(q, t, grow)` of every lane's volume.
    #[inline(always)]
    pub(crate) fn map(self, q: &DMat3, t: DVec3, grow: f64) -> Self {
        let s = L::splat;
        let c = mat_vec(q, self.center);
        let center = V3 {
            x: c.x + s(t.x),
            y: c.y + s(t.y),
            z: c.z + s(t.z),
        };
        let cmax = center.x.abs().max(center.y.abs().max(center.z.abs()));
        let scale = ((cmax + self.hx) + self.hy) + self.radius;
        Self {
            center,
            axes: self.axes.map(|v| mat_vec(q, v)),
            radius: (self.radius + s(grow)) + s(SLACK4) * scale,
            ..self
        }
    }
}

/// [`Rss::distance_lower_bound`]`(a, b)` per lane, before its final `max(0.0)`.
#[inline(always)]
pub(crate) fn gaps<L: F64Lanes>(a: &RssLanes<L>, b: &RssLanes<L>) -> L {
    let s = L::splat;
    let tv = b.center.sub(a.center);
    let [a0v, a1v, na] = a.axes;
    let [b0v, b1v, nb] = b.axes;
    let (a0b0, a0b1, a1b0, a1b1) = (a0v.dot(b0v), a0v.dot(b1v), a1v.dot(b0v), a1v.dot(b1v));
    let (nab0, nab1, nba0, nba1) = (na.dot(b0v), na.dot(b1v), nb.dot(a0v), nb.dot(a1v));
    let (ta0, ta1, tna) = (tv.dot(a0v), tv.dot(a1v), tv.dot(na));
    let (tb0, tb1, tnb) = (tv.dot(b0v), tv.dot(b1v), tv.dot(nb));
    let (hax, hay, hbx, hby) = (a.hx, a.hy, b.hx, b.hy);
    let mut gap = tna.abs() - (hbx * nab0.abs() + hby * nab1.abs());
    gap = gap.max(tnb.abs() - (hax * nba0.abs() + hay * nba1.abs()));
    gap = gap.max((ta0.abs() - hax) - (hbx * a0b0.abs() + hby * a0b1.abs()));
    gap = gap.max((ta1.abs() - hay) - (hbx * a1b0.abs() + hby * a1b1.abs()));
    gap = gap.max((tb0.abs() - hbx) - (hax * a0b0.abs() + hay * a1b0.abs()));
    gap = gap.max((tb1.abs() - hby) - (hax * a0b1.abs() + hay * a1b1.abs()));
    let tl = tv.dot(tv).sqrt();
    let ea = hax * ta0.abs() + hay * ta1.abs();
    let eb = hbx * tb0.abs() + hby * tb1.abs();
    let centre = gap.max(tl - (ea + eb) / tl);
    gap = tl.positive_then(centre, gap);
    let gap = (gap - a.radius) - b.radius;
    let scale = (((tl + hax) + hay) + hbx) + hby;
    gap - s(SLACK4) * scale
}

/// Two volumes in the two lanes.
#[inline(always)]
fn gather(p: &Rss, q: &Rss) -> RssLanes<f64x2> {
    let v = |p: DVec3, q: DVec3| V3 {
        x: f64x2::new([p.x, q.x]),
        y: f64x2::new([p.y, q.y]),
        z: f64x2::new([p.z, q.z]),
    };
    RssLanes {
        center: v(p.center, q.center),
        axes: [
            v(p.axes.x_axis, q.axes.x_axis),
            v(p.axes.y_axis, q.axes.y_axis),
            v(p.axes.z_axis, q.axes.z_axis),
        ],
        hx: f64x2::new([p.half_lengths.x, q.half_lengths.x]),
        hy: f64x2::new([p.half_lengths.y, q.half_lengths.y]),
        radius: f64x2::new([p.radius, q.radius]),
    }
}

/// [`Rss::distance_lower_bound`]`(a, b.transform_rigid(q, t, grow))` for both pairs, bit for
/// bit (see the module docs).
#[inline]
pub fn lower_bounds_mapped(pairs: [(&Rss, &Rss); 2], q: &DMat3, t: DVec3, grow: f64) -> [f64; 2] {
    let [(a0, b0), (a1, b1)] = pairs;
    let g = gaps(&gather(a0, a1), &gather(b0, b1).map(q, t, grow)).to_array();
    [g[0].max(0.0), g[1].max(0.0)]
}
