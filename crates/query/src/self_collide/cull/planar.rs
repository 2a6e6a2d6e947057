//! Certified predicates on projected boundary loops: orientation and segment disjointness with
//! one error allowance per loop, and the linear simplicity tests (star, monotone) tried before
//! the sweep of [`super::Certifier`].

use glam::DVec2;

pub(super) const U: f64 = f64::EPSILON * 0.5;

/// Error allowances of the certified predicates over one projected loop.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tol {
    /// Every projected coordinate is within `e` of the exact one.
    pub(super) e: f64,
    /// Bound on the error of [`certified_sign`] for inputs that are differences of points of
    /// a box of the given width (see [`Tol::new`]).
    sign: f64,
}

impl Tol {
    /// Allowances for points (and centres) in a box of width at most `w` in both axes: the
    /// per-call bound `3e·s + 16e² + 8U(|p| + |q|)` of the perturbation and rounding analysis,
    /// with `s ≤ 4w` and `|p|, |q| ≤ w²` for differences of such points (`w` inflated for the
    /// rounding of the differences and of the bound itself).
    #[inline]
    pub(super) fn new(e: f64, w: f64) -> Self {
        let w = w * 1.001;
        let sign = 12.0 * e * w + 16.0 * e * e + 16.0 * U * w * w + f64::MIN_POSITIVE;
        Self { e, sign }
    }

    /// Allowances for the points of the box `[lo, hi]` (NaN-free bounds: `min`/`max` skip
    /// NaN coordinates, whose predicates fail anyway).
    #[inline]
    pub(super) fn of_box(e: f64, [lo, hi]: [DVec2; 2]) -> Self {
        Self::new(e, (hi - lo).max_element())
    }
}

/// Sign of `a·d - b·c` (`sub`) or `a·c + b·d`, certified against perturbations of the four
/// differences by up to `2·tol.e` each (projected coordinates off by `e`) plus rounding, for
/// differences of points in the box of `tol`; 0 if unsure.
#[inline]
pub(super) fn certified_sign(a: f64, b: f64, c: f64, d: f64, tol: Tol, sub: bool) -> i32 {
    let v = if sub { a * d - b * c } else { a * c + b * d };
    (v > tol.sign) as i32 - (v < -tol.sign) as i32
}

/// Certified orientation of the projected points (1 ccw, -1 cw, 0 unsure).
#[inline]
pub(super) fn orient(a: DVec2, b: DVec2, c: DVec2, tol: Tol) -> i32 {
    let (ab, ac) = (b - a, c - a);
    certified_sign(ab.x, ab.y, ac.x, ac.y, tol, true)
}

/// Whether the exact segments (each endpoint within `tol.e` of the given one per coordinate)
/// are certainly disjoint.
#[inline]
pub(super) fn disjoint(a: DVec2, b: DVec2, c: DVec2, d: DVec2, tol: Tol) -> bool {
    let m = 2.5 * tol.e;
    let (lo1, hi1) = (a.min(b), a.max(b));
    let (lo2, hi2) = (c.min(d), c.max(d));
    if (lo1 - hi2).max_element() > m || (lo2 - hi1).max_element() > m {
        return true;
    }
    let (o1, o2) = (orient(a, b, c, tol), orient(a, b, d, tol));
    if o1 != 0 && o1 == o2 {
        return true;
    }
    let (o3, o4) = (orient(c, d, a, tol), orient(c, d, b, tol));
    o3 != 0 && o3 == o4
}

/// Order-preserving bits of a non-NaN `x` (as unsigned integers, `-0 < +0`).
#[inline]
pub(super) fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Inverse of [`order_key`]: monotone, so a key with cleared low bits decodes to a lower bound.
#[inline]
pub(super) fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Whether the closed polygon `pts` (every exact vertex within `e` of the given one per
/// coordinate, all in the box `[lo, hi]`) is certainly simple, by a star test
/// ([`star_around`]) around the vertex centroid, then around a centre moved inwards across the
/// edges that failed. O(n), no sorting; `false` only means "not shown" (the caller falls back
/// to the general test).
pub(super) fn star_simple(pts: &[DVec2], [lo, hi]: [DVec2; 2], e: f64) -> bool {
    // Moves of the centre; on the cloth scene one pays off, a second one no longer does.
    const MOVES: usize = 1;
    if pts.is_empty() {
        return false;
    }
    let tol = |c: DVec2| Tol::of_box(e, [lo.min(c), hi.max(c)]);
    let mut c = pts.iter().sum::<DVec2>() / pts.len() as f64;
    for _ in 0..MOVES {
        match star_around(pts, c, tol(c), true) {
            Ok(()) => return true,
            Err(shift) if shift == DVec2::ZERO => return false,
            Err(shift) => c += shift,
        }
    }
    // The last try needs no move on failure: it stops at the first failed edge.
    star_around(pts, c, tol(c), false).is_ok()
}

/// Per axis, whether the closed loop `pts` (its first point repeated at the end) changes
/// direction exactly twice along it, every coordinate difference beyond `m` in size: the
/// cheap filter before [`monotone_simple`] (one pass, no branches per edge).
pub(super) fn monotone_axes(pts: &[DVec2], m: f64) -> [bool; 2] {
    let n = pts.len();
    if n < 4 {
        return [false; 2];
    }
    let up = |d: DVec2| [d.x > m, d.y > m];
    let mut prev = up(pts[n - 1] - pts[n - 2]);
    let (mut flat, mut turns) = ([false; 2], [0u32; 2]);
    for w in pts.windows(2) {
        let d = w[1] - w[0];
        let now = up(d);
        for (k, &v) in [d.x, d.y].iter().enumerate() {
            flat[k] |= !(v > m || v < -m);
            turns[k] += (now[k] != prev[k]) as u32;
        }
        prev = now;
    }
    [0, 1].map(|k| !flat[k] && turns[k] == 2)
}

/// Whether the closed polygon `pts` (points of the box of `tol`) is certainly simple because,
/// after the quarter turn `turn`, it is monotone in x: the loop from its leftmost vertex to its
/// rightmost (the lower chain, for a counter-clockwise loop) and the loop back (the upper
/// chain) both strictly increase in x, and every interior vertex of each chain lies strictly on
/// its side (above, below) of every segment of the other chain whose x-span may hold its x.
/// Then for every perturbation within `tol.e` both chains are graphs over the same interval,
/// the difference upper - lower is positive at every breakpoint inside the interval and linear
/// in between (zero at the two shared ends), so the chains meet only at their ends. O(n);
/// `false` only means "not shown".
pub(super) fn monotone_simple(
    pts: &[DVec2],
    tol: Tol,
    turn: impl Fn(DVec2) -> DVec2,
    [lower, upper]: &mut [Vec<DVec2>; 2],
) -> bool {
    let n = pts.len();
    if n < 3 {
        return false;
    }
    let (mut lo, mut hi) = (0, 0);
    let (mut xlo, mut xhi) = (turn(pts[0]).x, turn(pts[0]).x);
    for (i, &p) in pts.iter().enumerate().skip(1) {
        let x = turn(p).x;
        if x < xlo {
            (lo, xlo) = (i, x);
        }
        if x > xhi {
            (hi, xhi) = (i, x);
        }
    }
    if lo == hi {
        return false;
    }
    // A margin of 2.5e: a computed difference above it leaves a positive exact difference of
    // coordinates each off by up to e (and covers the rounding of the difference).
    let m = 2.5 * tol.e;
    // The loop from `from` to `to` (wrapping), turned: slice copies, then one pass.
    let chain = |out: &mut Vec<DVec2>, from: usize, to: usize| {
        out.clear();
        if from <= to {
            out.extend_from_slice(&pts[from..=to]);
        } else {
            out.extend_from_slice(&pts[from..]);
            out.extend_from_slice(&pts[..=to]);
        }
        for p in out.iter_mut() {
            *p = turn(*p);
        }
    };
    chain(lower, lo, hi);
    chain(upper, hi, lo);
    upper.reverse();
    let increasing = |c: &[DVec2]| c.windows(2).all(|w| w[1].x - w[0].x > m);
    increasing(lower)
        && increasing(upper)
        && beside(upper, lower, 1, m, tol)
        && beside(lower, upper, -1, m, tol)
}

/// Whether every interior vertex `p` of the x-increasing chain `pts` has certified orientation
/// `side` against every segment (directed by increasing x) of the x-increasing chain `other`
/// whose x-span meets `[p.x - m, p.x + m]` (every segment that may hold the exact `p.x`). The
/// two chains share their end points.
pub(super) fn beside(pts: &[DVec2], other: &[DVec2], side: i32, m: f64, tol: Tol) -> bool {
    let mut k = 0;
    for &p in &pts[1..pts.len() - 1] {
        while k + 2 < other.len() && other[k + 1].x < p.x - m {
            k += 1;
        }
        let mut j = k;
        while j + 1 < other.len() && other[j].x <= p.x + m {
            if orient(other[j], other[j + 1], p, tol) != side {
                return false;
            }
            j += 1;
        }
    }
    true
}

/// The star test around the point `c` (any point in the box of `tol`): every edge `a → b`
/// turns certainly counter-clockwise around `c` (`orient(c, a, b) > 0`, so `c` stays off the
/// edges of every perturbation of the polygon within `e`, whose winding number around `c` is
/// therefore the given polygon's), and the winding number is 1 (counted as the edges crossing
/// the horizontal through `c` upwards: with every edge counter-clockwise, those cross it right
/// of `c` and none crosses it downwards there). Then the angle around `c` increases strictly by exactly one turn along the loop, so
/// no two loop points coincide. On failure with `move_centre`: a heuristic move of `c` to the
/// inner side of the failed edges (zero when only the winding number was wrong: no centre can
/// help then); without: zero, at the first failed edge.
pub(super) fn star_around(
    pts: &[DVec2],
    c: DVec2,
    tol: Tol,
    move_centre: bool,
) -> Result<(), DVec2> {
    let Some(&last) = pts.last() else {
        return Err(DVec2::ZERO);
    };
    let mut crossings = 0u32;
    let mut failed = false;
    let mut shift = DVec2::ZERO;
    // Relative to `c` (each difference computed once; `orient(c, a, b)` takes the same two):
    // the sign of a difference of finite floats is the order of the two.
    let mut qa = last - c;
    for &b in pts {
        let qb = b - c;
        if certified_sign(qa.x, qa.y, qb.x, qb.y, tol, true) != 1 {
            if !move_centre {
                return Err(DVec2::ZERO);
            }
            failed = true;
            // Across the line of `a → b` to its left side, plus a little along its normal.
            let ab = qb - qa;
            let len2 = ab.length_squared();
            let wrong = (-qa.perp_dot(qb)).max(0.0);
            let step = (wrong + 0.01 * len2) / len2;
            if step.is_finite() {
                shift += ab.perp() * step;
            }
        }
        crossings += ((qa.y < 0.0) & (0.0 <= qb.y)) as u32;
        qa = qb;
    }
    if failed || crossings != 1 {
        return Err(if failed { shift } else { DVec2::ZERO });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly(p: &[(f64, f64)]) -> Vec<DVec2> {
        p.iter().map(|&(x, y)| DVec2::new(x, y)).collect()
    }

    fn bbox(p: &[DVec2]) -> [DVec2; 2] {
        let lo = p.iter().fold(DVec2::INFINITY, |m, &q| m.min(q));
        [lo, p.iter().fold(DVec2::NEG_INFINITY, |m, &q| m.max(q))]
    }

    fn star_simple(p: &[DVec2], e: f64) -> bool {
        super::star_simple(p, bbox(p), e)
    }

    #[test]
    fn order_keys_are_monotone_lower_bounds() {
        let xs = [-3.5, -1e-300, -0.0, 0.0, 1e-310, 2.0, 7.25e10];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) <= order_key(w[1]));
        }
        for &x in &xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
            for bits in [1, 5, 16, 30] {
                let low = (1u64 << bits) - 1;
                assert!(from_order_key(order_key(x) & !low) <= x);
            }
        }
    }

    #[test]
    fn star_test_accepts_only_simple_loops() {
        let e = 1e-12;
        let square = poly(&[(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]);
        assert!(star_simple(&square, e));
        // Clockwise: the faces would project negatively; never certified by the star test.
        let cw: Vec<_> = square.iter().rev().copied().collect();
        assert!(!star_simple(&cw, e));
        // Twice around the centre: every edge turns counter-clockwise, winding number 2.
        let twice: Vec<_> = (0..10)
            .map(|k| {
                let t = k as f64 * 4.0 * std::f64::consts::PI / 10.0;
                DVec2::new(t.cos(), t.sin())
            })
            .collect();
        assert!(!star_simple(&twice, e));
        // Bow tie (self-crossing).
        let bow = poly(&[(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)]);
        assert!(!star_simple(&bow, e));
        // A simple loop with a deep notch is not star-shaped around its vertex centroid (the
        // general sweep decides it).
        let notch = poly(&[
            (0.0, 0.0),
            (4.0, 0.0),
            (4.0, 1.0),
            (1.0, 1.0),
            (1.0, 1.2),
            (4.0, 1.2),
            (4.0, 4.0),
            (0.0, 4.0),
        ]);
        let c = notch.iter().sum::<DVec2>() / notch.len() as f64;
        assert!(star_around(&notch, c, Tol::of_box(e, bbox(&notch)), true).is_err());
        // A self-crossing spiral whose edges mostly turn counter-clockwise.
        let spiral = poly(&[
            (0.0, 0.0),
            (4.0, 0.0),
            (4.0, 4.0),
            (1.0, 4.0),
            (1.0, 1.0),
            (3.0, 1.0),
            (3.0, 3.0),
            (2.0, 3.0),
            (2.0, -1.0),
        ]);
        assert!(!star_simple(&spiral, e));
    }

    fn monotone(p: &[DVec2], turn: impl Fn(DVec2) -> DVec2) -> bool {
        let tol = Tol::of_box(1e-12, bbox(p));
        super::monotone_simple(p, tol, turn, &mut Default::default())
    }

    #[test]
    fn monotone_test_accepts_only_simple_loops() {
        let quarter = |p: DVec2| DVec2::new(p.y, -p.x);
        // A comb, monotone in x, not star-shaped around its vertex centroid.
        let comb = poly(&[
            (0.0, 0.0),
            (1.0, 1.9),
            (2.0, 0.0),
            (3.0, 1.9),
            (4.0, 0.0),
            (4.5, 2.0),
            (2.0, 2.0),
            (-0.5, 2.0),
        ]);
        let c = comb.iter().sum::<DVec2>() / comb.len() as f64;
        assert!(star_around(&comb, c, Tol::of_box(1e-12, bbox(&comb)), false).is_err());
        assert!(monotone(&comb, |p| p));
        assert!(!monotone(&comb, quarter));
        // The same comb turned a quarter: monotone in y (found by the turned test).
        let turned: Vec<_> = comb.iter().map(|p| DVec2::new(-p.y, p.x)).collect();
        assert!(monotone(&turned, quarter));
        assert!(!monotone(&turned, |p| p));
        // Clockwise: the chains are on the wrong sides.
        let cw: Vec<_> = comb.iter().rev().copied().collect();
        assert!(!monotone(&cw, |p| p));
        // Monotone chains that cross: a tooth through the upper chain.
        let crossing = poly(&[(0.0, 0.0), (2.0, 3.0), (4.0, 0.0), (5.0, 0.5), (-1.0, 0.5)]);
        assert!(!monotone(&crossing, |p| p));
        // Chains touching within the error allowance are not certified.
        let touch = poly(&[(0.0, 0.0), (2.0, 1.0 - 1e-14), (4.0, 0.0), (2.0, 1.0)]);
        assert!(!monotone(&touch, |p| p));
        let apart = poly(&[(0.0, 0.0), (2.0, 0.9), (4.0, 0.0), (2.0, 1.0)]);
        assert!(monotone(&apart, |p| p));
        // Bow tie, and every point on one vertical.
        let bow = poly(&[(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)]);
        assert!(!monotone(&bow, |p| p) && !monotone(&bow, quarter));
        let flat = poly(&[(1.0, 0.0), (1.0, 1.0), (1.0, 2.0)]);
        assert!(!monotone(&flat, |p| p));
    }
}
