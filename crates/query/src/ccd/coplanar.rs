//! The coplanarity cubic of an elementary CCD query and the isolation of its roots.
//!
//! A contact (without minimum separation) needs the four points to be coplanar: the vertex in
//! the face's plane, or the two edges' lines meeting. With `F = g + u h + v k`, that is
//! `c(t) = det(g(t), h(t), k(t)) = 0`, a cubic in `t`. Over a time interval `[t0, t1]` the
//! vectors move linearly, so `c` restricted to it has Bernstein coefficients that are sums of
//! determinants of the end vectors ([`bernstein_dets`]); when all four have one strict sign
//! beyond their rounding bound, the interval holds no contact ([`classify`]).
//! [`candidate_times`] bisects `[0, 1]` that way, earliest first, and keeps the short intervals
//! it cannot exclude: the inclusion search then runs only there.

use glam::DVec3;

/// The Bernstein coefficients `[b0, b1, b2, b3]` of `det(x(s))` over `s ∈ [0, 1]`, where
/// `x(s) = (1 - s) x0 + s x1` for each of the three vectors (rounded; see the callers' bounds).
/// Each determinant is trilinear: `det(s) = Σ (1-s)^(#0) s^(#1) det(picks)`.
#[inline]
pub(crate) fn bernstein_dets(x0: &[DVec3; 3], x1: &[DVec3; 3]) -> [f64; 4] {
    let c00 = x0[0].cross(x0[1]);
    let c01 = x0[0].cross(x1[1]);
    let c10 = x1[0].cross(x0[1]);
    let c11 = x1[0].cross(x1[1]);
    [
        c00.dot(x0[2]),
        (c10.dot(x0[2]) + c01.dot(x0[2]) + c00.dot(x1[2])) / 3.0,
        (c11.dot(x0[2]) + c10.dot(x1[2]) + c01.dot(x1[2])) / 3.0,
        c11.dot(x1[2]),
    ]
}

/// What the coefficients of the cubic over an interval say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cubic {
    /// One strict sign beyond the rounding bound: no root (certified).
    Free,
    /// Every coefficient within the rounding bound: the cubic is (nearly) zero throughout,
    /// and bisecting cannot exclude anything.
    Flat,
    /// Anything else: bisect.
    Open,
}

/// Classifies the coefficients `b` with rounding bound `err`.
#[inline]
pub(crate) fn classify(b: [f64; 4], err: f64) -> Cubic {
    if b.iter().all(|&x| x > err) || b.iter().all(|&x| x < -err) {
        Cubic::Free
    } else if b.iter().all(|&x| x.abs() <= err) {
        Cubic::Flat
    } else {
        Cubic::Open
    }
}

/// Rigorous bound on the error of [`bernstein_dets`] when each component of the input vectors
/// errs by at most `delta` (before the call) and the computed vectors' components are at most
/// `a[i]` in magnitude (vector `i`, both ends).
///
/// With `a'_i = a_i + δ` bounding the exact components: each of the six triple products of a
/// determinant moves by ≤ `Π a'_i - Π a_i` under the input errors; the f64 evaluation (two
/// products and a difference per cross component, three products and two sums in the dot, the
/// sum of three and the division for the middle coefficients) errs by ≤ 42 u `Π a'_i` (+O(u²));
/// we use 128 u, and `64 MIN_POSITIVE` for underflow.
#[inline]
pub(crate) fn dets_error(a: [f64; 3], delta: f64) -> f64 {
    const U: f64 = f64::EPSILON * 0.5;
    let exact = a[0] * a[1] * a[2];
    let wide = (a[0] + delta) * (a[1] + delta) * (a[2] + delta);
    (6.0 * (wide - exact) + 128.0 * U * wide) * (1.0 + 8.0 * U) + 64.0 * f64::MIN_POSITIVE
}

/// Narrowest candidate interval (about the resolution of the time of impact the inclusion
/// search needs).
const MIN_WIDTH: f64 = 1.0 / (1u64 << 24) as f64;

/// The time intervals of `[0, 1]` that `test` (the cubic over an interval) cannot exclude, in
/// order and merged where they touch. Bisection, earliest first, at most `budget` calls of
/// `test`; a [`Cubic::Flat`] interval, and what is left when the budget runs out, is kept
/// whole.
pub(crate) fn candidate_times(test: impl Fn([f64; 2]) -> Cubic, budget: usize) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::new();
    let keep = |iv: [f64; 2], out: &mut Vec<[f64; 2]>| match out.last_mut() {
        Some(last) if last[1] == iv[0] => last[1] = iv[1],
        _ => out.push(iv),
    };
    let mut stack = vec![[0.0, 1.0]];
    let mut calls = 0;
    while let Some(iv) = stack.pop() {
        if calls >= budget {
            keep(iv, &mut out);
            while let Some(rest) = stack.pop() {
                keep(rest, &mut out);
            }
            break;
        }
        calls += 1;
        let c = test(iv);
        if c == Cubic::Free {
            continue;
        }
        if c == Cubic::Flat || iv[1] - iv[0] <= MIN_WIDTH {
            keep(iv, &mut out);
            continue;
        }
        let mid = 0.5 * (iv[0] + iv[1]);
        stack.push([mid, iv[1]]);
        stack.push([iv[0], mid]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolates_the_roots_of_a_cubic() {
        // c(t) = (t - 1/3)(t - 1/2)(t - 0.9) on intervals, evaluated exactly enough here.
        let c = |t: f64| (t - 1.0 / 3.0) * (t - 0.5) * (t - 0.9);
        let test = |iv: [f64; 2]| {
            // Sign-definite on the interval when the roots lie outside it.
            let free = [1.0 / 3.0, 0.5, 0.9]
                .iter()
                .all(|&r| r < iv[0] - 1e-12 || r > iv[1] + 1e-12)
                && c(iv[0]) != 0.0;
            if free {
                Cubic::Free
            } else {
                Cubic::Open
            }
        };
        let got = candidate_times(test, 10_000);
        assert_eq!(got.len(), 3, "{got:?}");
        for (iv, r) in got.iter().zip([1.0 / 3.0, 0.5, 0.9]) {
            assert!(
                iv[0] <= r && r <= iv[1] && iv[1] - iv[0] <= 2.0 * MIN_WIDTH,
                "{iv:?}"
            );
        }
        // A budget of one call keeps the whole step.
        assert_eq!(candidate_times(|_| Cubic::Open, 1), vec![[0.0, 1.0]]);
        // A flat cubic is kept whole at once.
        assert_eq!(candidate_times(|_| Cubic::Flat, 10), vec![[0.0, 1.0]]);
        // Coefficients: one sign, flat, mixed.
        assert_eq!(classify([1.0, 2.0, 3.0, 4.0], 0.5), Cubic::Free);
        assert_eq!(classify([0.1, -0.2, 0.3, 0.0], 0.5), Cubic::Flat);
        assert_eq!(classify([1.0, -2.0, 3.0, 4.0], 0.5), Cubic::Open);
    }
}
