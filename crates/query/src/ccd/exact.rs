//! Exact signs of small polynomial expressions in f64 inputs, with floating-point expansions
//! (Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric
//! predicates", 1997): a value is held as a sum of non-overlapping f64 components, and sums and
//! products of two doubles are split exactly into a rounded part and its error.
//!
//! Exactness needs every product and sum to stay clear of overflow and of the subnormal range;
//! [`in_exact_range`] is the guard callers check first.

/// `a + b = s + e` exactly (Knuth's two-sum; any finite `a`, `b` without overflow).
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// `a · b = p + e` exactly (fused multiply-add; no overflow, error not subnormal).
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// An exact real number: the sum of its non-overlapping, non-zero components.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Expansion(Vec<f64>);

impl Expansion {
    /// The exact difference `a - b` of two doubles.
    pub(crate) fn diff(a: f64, b: f64) -> Self {
        let mut e = Self::default();
        e.grow(a);
        e.grow(-b);
        e
    }

    /// Adds one double exactly (Shewchuk's grow-expansion with zero elimination: the result
    /// stays non-overlapping).
    fn grow(&mut self, b: f64) {
        let mut q = b;
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &x in &self.0 {
            let (s, e) = two_sum(q, x);
            if e != 0.0 {
                out.push(e);
            }
            q = s;
        }
        if q != 0.0 {
            out.push(q);
        }
        self.0 = out;
    }

    /// `self + o`, exactly.
    pub(crate) fn add(&self, o: &Self) -> Self {
        let mut r = self.clone();
        for &x in &o.0 {
            r.grow(x);
        }
        r
    }

    /// `self - o`, exactly.
    pub(crate) fn sub(&self, o: &Self) -> Self {
        let mut r = self.clone();
        for &x in &o.0 {
            r.grow(-x);
        }
        r
    }

    /// `self · o`, exactly (every pair of components through [`two_prod`]).
    pub(crate) fn mul(&self, o: &Self) -> Self {
        let mut r = Self::default();
        for &x in &self.0 {
            for &y in &o.0 {
                let (p, e) = two_prod(x, y);
                r.grow(e);
                r.grow(p);
            }
        }
        r
    }

    /// Whether the value is exactly zero (all components are non-zero and non-overlapping,
    /// so a non-empty expansion never sums to zero).
    pub(crate) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether every value is zero or of magnitude in `[2^-450, 2^450]`: then differences of two
/// values, and products of two such differences, are exact in expansions (components stay above
/// `2^-1004`, below `2^904`).
pub(crate) fn in_exact_range(values: impl IntoIterator<Item = f64>) -> bool {
    const LO: f64 = f64::from_bits((1023 - 450) << 52); // 2^-450
    const HI: f64 = f64::from_bits((1023 + 450) << 52); // 2^450
    values
        .into_iter()
        .all(|x| x == 0.0 || (LO..=HI).contains(&x.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_rational::BigRational;
    use num_traits::Zero;
    use proptest::prelude::*;

    #[test]
    fn products_of_differences_are_exact() {
        // (1 + 2^-60 - 1) (2^70 + 1 - 2^70) = 2^-60, lost entirely in plain f64.
        let a = Expansion::diff(1.0, -(2f64.powi(-60)));
        let b = Expansion::diff(1.0, 0.0);
        let x = a.sub(&b); // 2^-60
        assert_eq!(x.0, vec![2f64.powi(-60)]);
        let y = Expansion::diff(2f64.powi(70), -1.0).sub(&Expansion::diff(2f64.powi(70), 0.0));
        assert_eq!(x.mul(&y).0, vec![2f64.powi(-60)]);
        // (0.1 - 0.3)(0.1 + 0.3) - (0.1² - 0.3²) = 0 exactly.
        let lhs = Expansion::diff(0.1, 0.3).mul(&Expansion::diff(0.1, -0.3));
        let rhs = Expansion::diff(0.0, 0.0)
            .add(&Expansion::diff(0.1, 0.0).mul(&Expansion::diff(0.1, 0.0)))
            .sub(&Expansion::diff(0.3, 0.0).mul(&Expansion::diff(0.3, 0.0)));
        assert!(lhs.sub(&rhs).is_zero());
        assert!(!lhs.add(&rhs).is_zero());
    }

    fn rational(e: &Expansion) -> BigRational {
        e.0.iter()
            .map(|&x| BigRational::from_float(x).expect("finite"))
            .sum()
    }

    fn q(x: f64) -> BigRational {
        BigRational::from_float(x).expect("finite")
    }

    proptest! {
        /// `(a - b)(c - d) - (e - f)(g - h)` equals the exact rational value.
        #[test]
        fn matches_rationals(
            v in proptest::array::uniform8(-1e6f64..1e6),
            k in proptest::array::uniform8(-30i32..30),
        ) {
            let x: Vec<f64> = (0..8).map(|i| v[i] * 2f64.powi(k[i])).collect();
            let d = |i: usize| Expansion::diff(x[i], x[i + 1]);
            let got = d(0).mul(&d(2)).sub(&d(4).mul(&d(6)));
            let dq = |i: usize| q(x[i]) - q(x[i + 1]);
            let want = dq(0) * dq(2) - dq(4) * dq(6);
            prop_assert_eq!(rational(&got), want.clone());
            prop_assert_eq!(got.is_zero(), want.is_zero());
            // And a value that cancels exactly.
            let zero = d(0).mul(&d(2)).sub(&d(2).mul(&d(0)));
            prop_assert!(zero.is_zero());
        }
    }

    #[test]
    fn range_guard() {
        assert!(in_exact_range([0.0, 1.0, -1e100, 1e-100]));
        assert!(!in_exact_range([1e-200]));
        assert!(!in_exact_range([1e200]));
        assert!(in_exact_range([2f64.powi(-450), 2f64.powi(450)]));
        assert!(!in_exact_range([2f64.powi(-451)]) && !in_exact_range([2f64.powi(451)]));
    }
}
