//! Sound normal-cone culling: certifies that a set of faces `S` (one BVH subtree, or the union
//! of two subtrees) has no two non-adjacent faces that touch, so the traversal may skip `S`
//! against itself (or the two subtrees against each other).
//!
//! Criterion (a contour test in the spirit of Volino & Magnenat-Thalmann 1994), with the
//! projection `π` onto the plane orthogonal to a direction `d` (from the node's normal-cone
//! mask):
//! 1. every face of `S` projects with strictly positive orientation (`n · d > 0`), certified
//!    per face with a rigorous error bound ([`gprox_bvh::normal_cone::certified_direction_mask`],
//!    ANDed over the node, see [`Layout::masks`]);
//! 2. every edge of `S` is shared by at most two faces of `S`, consistently oriented
//!    (no bad edge, see [`Layout`]); the boundary edges of `S` (cached per node, merged for a
//!    union) form exactly one closed loop through distinct vertices;
//! 3. the projected loop is simple: consecutive segments meet only at their common vertex and
//!    non-consecutive segments are disjoint (certified with error bounds: first by a linear
//!    star test around a centre, which most loops pass, then by a linear test of loops
//!    monotone in x or y, else by a sweep over the segments sorted by x).
//!
//! Why it is sound: with consistent orientation the interior edges cancel, so for a point `q`
//! off the projected edges, the number of faces whose projection contains `q` equals the winding
//! number of the projected boundary loop around `q` (every face counts +1 by 1.). A simple loop
//! has winding number 0 or 1, so projected faces never overlap in an open set. Two non-adjacent
//! faces touching at a point `x` would give either such an overlap near `π(x)` (when `x` is in
//! the interior of `S`, whose neighbourhood projects onto a full disk) or two non-consecutive
//! boundary segments (or a boundary vertex and a non-incident segment) meeting at `π(x)`, which
//! 3. rules out. Anything uncertain fails the certificate and the node is traversed normally.

use glam::{DVec2, Vec3};

use super::layout::{Half, Layout};
use super::traverse::Prune;
use gprox_bvh::normal_cone::DIRECTIONS;

const U: f64 = f64::EPSILON * 0.5;

/// Scratch state for certifying nodes of one mesh (reused across nodes and frames).
#[derive(Clone, Debug, Default)]
pub(crate) struct Certifier {
    /// Per vertex: the stamp of the loop it was last put on, and its successor there
    /// (together: one cache line per vertex visit).
    vert: Vec<[u32; 2]>,
    stamp: u32,
    pts: Vec<DVec2>,
    keys: Vec<u64>,
    /// The two chains of the monotone test ([`monotone_simple`]).
    chains: [Vec<DVec2>; 2],
}

/// Error allowances of the certified predicates over one projected loop.
#[derive(Clone, Copy, Debug)]
struct Tol {
    /// Every projected coordinate is within `e` of the exact one.
    e: f64,
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
    fn new(e: f64, w: f64) -> Self {
        let w = w * 1.001;
        let sign = 12.0 * e * w + 16.0 * e * e + 16.0 * U * w * w + f64::MIN_POSITIVE;
        Self { e, sign }
    }

    /// Allowances for the points of the box `[lo, hi]` (NaN-free bounds: `min`/`max` skip
    /// NaN coordinates, whose predicates fail anyway).
    #[inline]
    fn of_box(e: f64, [lo, hi]: [DVec2; 2]) -> Self {
        Self::new(e, (hi - lo).max_element())
    }
}

/// Sign of `a·d - b·c` (`sub`) or `a·c + b·d`, certified against perturbations of the four
/// differences by up to `2·tol.e` each (projected coordinates off by `e`) plus rounding, for
/// differences of points in the box of `tol`; 0 if unsure.
#[inline]
fn certified_sign(a: f64, b: f64, c: f64, d: f64, tol: Tol, sub: bool) -> i32 {
    let v = if sub { a * d - b * c } else { a * c + b * d };
    (v > tol.sign) as i32 - (v < -tol.sign) as i32
}

/// Certified orientation of the projected points (1 ccw, -1 cw, 0 unsure).
#[inline]
fn orient(a: DVec2, b: DVec2, c: DVec2, tol: Tol) -> i32 {
    let (ab, ac) = (b - a, c - a);
    certified_sign(ab.x, ab.y, ac.x, ac.y, tol, true)
}

/// Whether the exact segments (each endpoint within `tol.e` of the given one per coordinate)
/// are certainly disjoint.
#[inline]
fn disjoint(a: DVec2, b: DVec2, c: DVec2, d: DVec2, tol: Tol) -> bool {
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
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Inverse of [`order_key`]: monotone, so a key with cleared low bits decodes to a lower bound.
#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Whether the closed polygon `pts` (every exact vertex within `e` of the given one per
/// coordinate, all in the box `[lo, hi]`) is certainly simple, by a star test
/// ([`star_around`]) around the vertex centroid, then around a centre moved inwards across the
/// edges that failed. O(n), no sorting; `false` only means "not shown" (the caller falls back
/// to the general test).
fn star_simple(pts: &[DVec2], [lo, hi]: [DVec2; 2], e: f64) -> bool {
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
fn monotone_axes(pts: &[DVec2], m: f64) -> [bool; 2] {
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
fn monotone_simple(
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
fn beside(pts: &[DVec2], other: &[DVec2], side: i32, m: f64, tol: Tol) -> bool {
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
fn star_around(pts: &[DVec2], c: DVec2, tol: Tol, move_centre: bool) -> Result<(), DVec2> {
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

impl Certifier {
    /// Scratch for a mesh of `vertex_count` vertices.
    pub(crate) fn new(vertex_count: usize) -> Self {
        Self {
            vert: vec![[0, 0]; vertex_count],
            ..Self::default()
        }
    }

    /// Vertex count this scratch was made for.
    pub(crate) fn vertex_count(&self) -> usize {
        self.vert.len()
    }

    fn bump(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.vert.fill([0, 0]);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Whether no two non-adjacent faces below `node` can touch (see the module docs).
    /// `max_abs` bounds every coordinate of `pos`.
    pub(crate) fn certify_node(
        &mut self,
        layout: &Layout,
        masks: &[u32],
        node: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> bool {
        let mask = masks[node as usize];
        if mask == 0 {
            return false;
        }
        let none = [u32::MAX, 0];
        let parts = [(layout.boundary(node), none)];
        self.certify(&parts, mask, pos, max_abs) == Some(true)
    }

    /// Whether no two non-adjacent faces of the union of the (disjoint) subtrees `a` and `b`
    /// can touch (then no face below `a` touches a non-adjacent face below `b`):
    /// [`Prune::Skip`] when certified, [`Prune::DescendSilently`] when `a` and `b` share no edge
    /// (no pair of their descendants can be certified either), [`Prune::Descend`] otherwise.
    pub(crate) fn certify_union(
        &mut self,
        layout: &Layout,
        masks: &[u32],
        a: u32,
        b: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> Prune {
        let mask = masks[a as usize] & masks[b as usize];
        let (ba, bb) = (layout.boundary(a), layout.boundary(b));
        // Shared edges appear in both boundaries: look in the shorter one first.
        let (x, y, bx, by) = if ba.len() <= bb.len() {
            (a, b, ba, bb)
        } else {
            (b, a, bb, ba)
        };
        let silent = |shared: bool| match shared {
            true => Prune::Descend,
            false => Prune::DescendSilently,
        };
        if mask == 0 {
            return silent(layout.share_edge(x, y));
        }
        let parts = [(bx, layout.range(y)), (by, layout.range(x))];
        match self.certify(&parts, mask, pos, max_abs) {
            Some(true) => Prune::Skip,
            Some(false) => Prune::Descend,
            None => Prune::DescendSilently,
        }
    }

    /// The contour test on the boundary half-edges of `parts` (each: a node's boundary without
    /// the edges whose face across lies in the given leaf-slot range), for a set whose faces
    /// all have `mask`'s first direction in their certified masks. `None` when there are
    /// several parts and the first has no edge across to the slot range given with it (the
    /// parts share no edge; cheaper than a separate search, since it is read anyway).
    fn certify(
        &mut self,
        parts: &[(&[Half], [u32; 2])],
        mask: u32,
        pos: &[Vec3],
        max_abs: f64,
    ) -> Option<bool> {
        let d = DIRECTIONS[mask.trailing_zeros() as usize].map(f64::from);
        // p1 ⟂ d with small integer entries, p2 = d × p1 (also integer): p1 × p2 ∥ +d.
        let cands = [[d[1], -d[0], 0.0], [0.0, d[2], -d[1]], [d[2], 0.0, -d[0]]];
        let p1 = cands
            .iter()
            .copied()
            .find(|c| c.iter().any(|&x| x != 0.0))
            .unwrap_or([1.0, 0.0, 0.0]);
        let p2 = [
            d[1] * p1[2] - d[2] * p1[1],
            d[2] * p1[0] - d[0] * p1[2],
            d[0] * p1[1] - d[1] * p1[0],
        ];
        // |entries| ≤ 2: products exact, two additions of terms ≤ 6·max_abs.
        let e = 16.0 * U * max_abs + f64::MIN_POSITIVE;
        let proj = |v: u32| {
            let x = pos[v as usize].as_dvec3();
            DVec2::new(
                p1[0] * x.x + p1[1] * x.y + p1[2] * x.z,
                p2[0] * x.x + p2[1] * x.y + p2[2] * x.z,
            )
        };
        let stamp = self.bump();
        // 2. Boundary half-edges, one outgoing per vertex, one loop.
        let (mut nb, mut start) = (0usize, 0u32);
        let mut removed = false;
        for (k, &(edges, [lo, hi])) in parts.iter().enumerate() {
            if k == 1 && !removed {
                return None;
            }
            for h in edges {
                if lo <= h.adj && h.adj <= hi {
                    removed = true;
                    continue;
                }
                let slot = &mut self.vert[h.u as usize];
                if slot[0] == stamp {
                    return Some(false);
                }
                *slot = [stamp, h.v];
                (nb, start) = (nb + 1, h.u);
            }
        }
        if nb < 3 {
            return Some(false);
        }
        // The loop, projected as it is walked.
        self.pts.clear();
        let mut cur = start;
        let mut bbox = [DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)];
        loop {
            let [at, next] = self.vert[cur as usize];
            if at != stamp || self.pts.len() >= nb {
                return Some(false);
            }
            let p = proj(cur);
            bbox = [bbox[0].min(p), bbox[1].max(p)];
            self.pts.push(p);
            cur = next;
            if cur == start {
                break;
            }
        }
        if self.pts.len() != nb {
            return Some(false);
        }
        // 3. Simple projected loop: the linear star test, else the general sweep.
        // The first two points again at the end: `pts[i + 1]`, `pts[i + 2]` without wrapping.
        self.pts.extend_from_within(..2);
        let pts = &self.pts;
        if star_simple(&pts[..nb], bbox, e) {
            return Some(true);
        }
        let tol = Tol::of_box(e, bbox);
        // Quarter turns are exact and keep the orientation and `tol`: monotone in x, or in y.
        let [in_x, in_y] = monotone_axes(&pts[..=nb], 2.5 * tol.e);
        let chains = &mut self.chains;
        if (in_x && monotone_simple(&pts[..nb], tol, |p| p, chains))
            || (in_y && monotone_simple(&pts[..nb], tol, |p| DVec2::new(p.y, -p.x), chains))
        {
            return Some(true);
        }
        for i in 0..nb {
            let (a, b, c) = (pts[i], pts[i + 1], pts[i + 2]);
            let (ab, bc) = (b - a, c - b);
            let turn = orient(a, b, c, tol) != 0;
            let ahead = certified_sign(ab.x, ab.y, bc.x, bc.y, tol, false) == 1;
            if !(turn || ahead) {
                return Some(false);
            }
        }
        // Sweep in x over the segments sorted by their left end `lo`: keys are order-preserving
        // bits of `lo` with the low bits replaced by the segment index. The cleared bits make
        // the decoded key a lower bound of `lo`, non-decreasing along the sorted keys, so
        // breaking on it never skips an overlapping segment.
        let bits = usize::BITS - (nb - 1).leading_zeros();
        let low = (1u64 << bits) - 1;
        self.keys.clear();
        for i in 0..nb {
            let lo = pts[i].x.min(pts[i + 1].x);
            self.keys.push(order_key(lo) & !low | i as u64);
        }
        self.keys.sort_unstable();
        let m = 2.5 * tol.e;
        for s in 0..nb {
            let i = (self.keys[s] & low) as usize;
            let hi = pts[i].x.max(pts[i + 1].x);
            for &key in &self.keys[s + 1..] {
                if from_order_key(key & !low) - hi > m {
                    break;
                }
                let j = (key & low) as usize;
                let gap = i.abs_diff(j);
                if gap <= 1 || gap == nb - 1 {
                    continue;
                }
                let (a, b) = (pts[i], pts[i + 1]);
                let (c, d) = (pts[j], pts[j + 1]);
                if !disjoint(a, b, c, d, tol) {
                    return Some(false);
                }
            }
        }
        Some(true)
    }
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
