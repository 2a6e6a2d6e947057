//! Eight-lane arithmetic for the lane test: [`Lanes`] over f32 (with its f64 partner for the
//! centres), implemented portably on the `wide` crate (two SSE registers on x86-64) and, on
//! x86-64, on AVX registers for the AVX2 clone of the test. Both round every operation the same
//! way (IEEE, round to nearest, no fused multiply–add), so they give the same bits.

use std::ops::{Add, Mul, Sub};

use wide::{f32x8, f64x4, CmpGt};

/// Eight f32 lanes and the operations the lane test needs.
pub(crate) trait Lanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self>
{
    /// Eight f64 lanes.
    type D: Copy + Add<Output = Self::D> + Sub<Output = Self::D> + Mul<Output = Self::D>;
    fn splat(x: f32) -> Self;
    fn load(x: &[f32; 8]) -> Self;
    fn abs(self) -> Self;
    /// `o` where `o > self` or either is NaN, else `self` (`maxps` with swapped inputs).
    fn max(self, o: Self) -> Self;
    /// Bit `k` set where `!(self[k] > o[k])` (NaN sets it).
    fn not_gt(self, o: Self) -> u32;
    fn d_splat(x: f64) -> Self::D;
    fn d_load(x: &[f64; 8]) -> Self::D;
    /// Each lane rounded to f32.
    fn d_round(d: Self::D) -> Self;
    /// Each lane exactly in f64.
    fn d_from(x: Self) -> Self::D;
}

/// Eight f64 lanes as two `f64x4`.
#[derive(Clone, Copy)]
pub(crate) struct WideD([f64x4; 2]);

macro_rules! pairwise {
    ($t:ident, $op:ident, $f:ident, $e:expr) => {
        impl $op for $t {
            type Output = Self;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                #[allow(unused_unsafe)]
                let f = $e;
                Self([f(self.0[0], o.0[0]), f(self.0[1], o.0[1])])
            }
        }
    };
}
pairwise!(WideD, Add, add, |a: f64x4, b| a + b);
pairwise!(WideD, Sub, sub, |a: f64x4, b| a - b);
pairwise!(WideD, Mul, mul, |a: f64x4, b| a * b);

impl Lanes for f32x8 {
    type D = WideD;
    #[inline(always)]
    fn splat(x: f32) -> Self {
        f32x8::splat(x)
    }
    #[inline(always)]
    fn load(x: &[f32; 8]) -> Self {
        f32x8::from(*x)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32x8::abs(self)
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        self.fast_max(o)
    }
    #[inline(always)]
    fn not_gt(self, o: Self) -> u32 {
        !(self.cmp_gt(o).move_mask() as u32) & 0xff
    }
    #[inline(always)]
    fn d_splat(x: f64) -> WideD {
        WideD([f64x4::splat(x); 2])
    }
    #[inline(always)]
    fn d_load(x: &[f64; 8]) -> WideD {
        WideD([
            f64x4::from([x[0], x[1], x[2], x[3]]),
            f64x4::from([x[4], x[5], x[6], x[7]]),
        ])
    }
    #[inline(always)]
    fn d_round(d: WideD) -> Self {
        let (a, b) = (d.0[0].to_array(), d.0[1].to_array());
        f32x8::from([
            a[0] as f32,
            a[1] as f32,
            a[2] as f32,
            a[3] as f32,
            b[0] as f32,
            b[1] as f32,
            b[2] as f32,
            b[3] as f32,
        ])
    }
    #[inline(always)]
    fn d_from(x: Self) -> WideD {
        Self::d_load(&x.to_array().map(f64::from))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::Avx;

/// AVX registers. Their methods are only called from the `#[target_feature(enable = "avx2")]`
/// clones of the lane test, into which they inline (and the intrinsics with them).
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;
    use std::ops::{Add, Mul, Sub};

    use super::Lanes;

    /// Eight f32 lanes in one AVX register.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx(__m256);

    /// Eight f64 lanes in two AVX registers.
    #[derive(Clone, Copy)]
    pub(crate) struct AvxD([__m256d; 2]);

    // SAFETY (every `unsafe` block below): these types are built only inside functions compiled
    // with AVX2 enabled, which run only after the CPU was checked for AVX2.
    impl Add for Avx {
        type Output = Self;
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Self(unsafe { _mm256_add_ps(self.0, o.0) })
        }
    }
    impl Sub for Avx {
        type Output = Self;
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Self(unsafe { _mm256_sub_ps(self.0, o.0) })
        }
    }
    impl Mul for Avx {
        type Output = Self;
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            Self(unsafe { _mm256_mul_ps(self.0, o.0) })
        }
    }
    pairwise!(AvxD, Add, add, |a, b| unsafe { _mm256_add_pd(a, b) });
    pairwise!(AvxD, Sub, sub, |a, b| unsafe { _mm256_sub_pd(a, b) });
    pairwise!(AvxD, Mul, mul, |a, b| unsafe { _mm256_mul_pd(a, b) });

    impl Lanes for Avx {
        type D = AvxD;
        #[inline(always)]
        fn splat(x: f32) -> Self {
            Self(unsafe { _mm256_set1_ps(x) })
        }
        #[inline(always)]
        fn load(x: &[f32; 8]) -> Self {
            Self(unsafe { _mm256_loadu_ps(x.as_ptr()) })
        }
        #[inline(always)]
        fn abs(self) -> Self {
            Self(unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            Self(unsafe { _mm256_max_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn not_gt(self, o: Self) -> u32 {
            let gt = unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(self.0, o.0)) };
            !(gt as u32) & 0xff
        }
        #[inline(always)]
        fn d_splat(x: f64) -> AvxD {
            AvxD([unsafe { _mm256_set1_pd(x) }; 2])
        }
        #[inline(always)]
        fn d_load(x: &[f64; 8]) -> AvxD {
            unsafe {
                AvxD([
                    _mm256_loadu_pd(x.as_ptr()),
                    _mm256_loadu_pd(x.as_ptr().add(4)),
                ])
            }
        }
        #[inline(always)]
        fn d_round(d: AvxD) -> Self {
            unsafe {
                let (lo, hi) = (_mm256_cvtpd_ps(d.0[0]), _mm256_cvtpd_ps(d.0[1]));
                Self(_mm256_set_m128(hi, lo))
            }
        }
        #[inline(always)]
        fn d_from(x: Self) -> AvxD {
            unsafe {
                AvxD([
                    _mm256_cvtps_pd(_mm256_castps256_ps128(x.0)),
                    _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x.0)),
                ])
            }
        }
    }
}
