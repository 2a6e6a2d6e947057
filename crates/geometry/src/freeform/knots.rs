//! Knot vectors and B-spline basis functions (The NURBS Book, algorithms A2.1–A2.3, A5.1),
//! plus knot insertion and splitting on sequences of homogeneous control points.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::DVec4;

use super::FreeformError;

/// Checks a knot vector for `count` control points of degree `degree`: length, finite and
/// non-decreasing values, multiplicity at most `degree + 1` at the ends and at most `degree`
/// strictly inside the domain `[knots[degree], knots[count]]`, and a non-empty domain.
/// Unclamped (e.g. converted periodic) vectors are accepted; constructors clamp them.
pub fn validate_knots(
    direction: &'static str,
    knots: &[f64],
    degree: usize,
    count: usize,
) -> Result<(), FreeformError> {
    if degree == 0 || degree >= count {
        return Err(FreeformError::BadDegree {
            direction,
            degree,
            count,
        });
    }
    let expected = count + degree + 1;
    if knots.len() != expected {
        return Err(FreeformError::KnotCount {
            direction,
            expected,
            got: knots.len(),
        });
    }
    for (index, &value) in knots.iter().enumerate() {
        if !value.is_finite() || (index > 0 && value < knots[index - 1]) {
            return Err(FreeformError::KnotOrder {
                direction,
                index,
                value,
            });
        }
    }
    let (lo, hi) = (knots[degree], knots[count]);
    if lo >= hi {
        return Err(FreeformError::EmptyDomain { direction });
    }
    let mut run = 1;
    for i in 1..knots.len() {
        run = if knots[i] == knots[i - 1] { run + 1 } else { 1 };
        let limit = if knots[i] > lo && knots[i] < hi {
            degree
        } else {
            degree + 1
        };
        if run > limit {
            return Err(FreeformError::KnotMultiplicity {
                direction,
                index: i,
            });
        }
    }
    Ok(())
}

/// Turns a valid (possibly unclamped) knot vector and its homogeneous points into the clamped
/// representation of the same curve over the same domain (end knots repeated `degree + 1` times).
pub fn clamp_ends(knots: &[f64], degree: usize, pts: &[DVec4]) -> (Vec<f64>, Vec<DVec4>) {
    let p = degree;
    let count = pts.len();
    let (lo, hi) = (knots[p], knots[count]);
    let (mut k, mut q) = (knots.to_vec(), pts.to_vec());
    if k[0] != lo || k[p] != lo {
        insert_to_multiplicity(&mut k, p, &mut q, lo, p);
        let a = k.iter().position(|&x| x == lo).unwrap_or(1).max(1);
        let mut nk = vec![lo; p + 1];
        nk.extend_from_slice(&k[a + p..]);
        q = q[a - 1..].to_vec();
        k = nk;
    }
    let n = k.len();
    if k[n - 1] != hi || k[n - 1 - p] != hi {
        insert_to_multiplicity(&mut k, p, &mut q, hi, p);
        let a = k.iter().position(|&x| x == hi).unwrap_or(k.len());
        let mut nk = k[..a].to_vec();
        nk.extend(std::iter::repeat_n(hi, p + 1));
        q.truncate(a);
        k = nk;
    }
    (k, q)
}

/// The knot span index `i` with `knots[i] <= t < knots[i+1]` (A2.1); the last non-empty span at
/// the domain end. `count` is the number of control points. `t` must lie in the domain.
pub fn find_span(count: usize, degree: usize, t: f64, knots: &[f64]) -> usize {
    let n = count - 1;
    if t >= knots[n + 1] {
        // Last non-empty span.
        let mut i = n;
        while i > degree && knots[i] >= knots[n + 1] {
            i -= 1;
        }
        return i;
    }
    if t <= knots[degree] {
        let mut i = degree;
        while i < n && knots[i + 1] <= knots[degree] {
            i += 1;
        }
        return i;
    }
    let (mut lo, mut hi) = (degree, n + 1);
    let mut mid = (lo + hi) / 2;
    while t < knots[mid] || t >= knots[mid + 1] {
        if t < knots[mid] {
            hi = mid;
        } else {
            lo = mid;
        }
        mid = (lo + hi) / 2;
    }
    mid
}

/// Degrees below this evaluate their basis values on the stack ([`basis_values`]).
pub const BASIS_STACK: usize = 16;

/// The `degree + 1` non-zero basis functions at `t` in span `span` (A2.2), written to `out`
/// without allocating. Same arithmetic as row 0 of [`basis_derivatives`] (bitwise equal).
/// `degree` must be below [`BASIS_STACK`] and `out` hold `degree + 1` values.
pub fn basis_values(span: usize, t: f64, degree: usize, knots: &[f64], out: &mut [f64]) {
    let p = degree;
    let mut left = [0.0f64; BASIS_STACK];
    let mut right = [0.0f64; BASIS_STACK];
    out[0] = 1.0;
    for j in 1..=p {
        left[j] = t - knots[span + 1 - j];
        right[j] = knots[span + j] - t;
        let mut saved = 0.0;
        for r in 0..j {
            let temp = out[r] / (right[r + 1] + left[j - r]);
            out[r] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        out[j] = saved;
    }
}

/// Non-zero basis functions and their derivatives up to order `d` at `t` in span `span`
/// (A2.3). Result `ders[k][j]` = k-th derivative of `N_{span-degree+j, degree}(t)`.
pub fn basis_derivatives(
    span: usize,
    t: f64,
    degree: usize,
    d: usize,
    knots: &[f64],
) -> Vec<Vec<f64>> {
    let p = degree;
    let mut ndu = vec![vec![0.0; p + 1]; p + 1];
    let mut left = vec![0.0; p + 1];
    let mut right = vec![0.0; p + 1];
    ndu[0][0] = 1.0;
    for j in 1..=p {
        left[j] = t - knots[span + 1 - j];
        right[j] = knots[span + j] - t;
        let mut saved = 0.0;
        for r in 0..j {
            ndu[j][r] = right[r + 1] + left[j - r];
            let temp = ndu[r][j - 1] / ndu[j][r];
            ndu[r][j] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        ndu[j][j] = saved;
    }
    let mut ders = vec![vec![0.0; p + 1]; d + 1];
    for j in 0..=p {
        ders[0][j] = ndu[j][p];
    }
    let mut a = vec![vec![0.0; p + 1]; 2];
    for r in 0..=p {
        let (mut s1, mut s2) = (0usize, 1usize);
        a[0][0] = 1.0;
        for k in 1..=d.min(p) {
            let mut dd = 0.0;
            let rk = r as isize - k as isize;
            let pk = p - k;
            if rk >= 0 {
                let rk = rk as usize;
                a[s2][0] = a[s1][0] / ndu[pk + 1][rk];
                dd = a[s2][0] * ndu[rk][pk];
            }
            let j1 = if rk >= -1 { 1 } else { (-rk) as usize };
            let j2 = if (r as isize) - 1 <= pk as isize {
                k - 1
            } else {
                p - r
            };
            for j in j1..=j2 {
                let idx = (rk + j as isize) as usize;
                a[s2][j] = (a[s1][j] - a[s1][j - 1]) / ndu[pk + 1][idx];
                dd += a[s2][j] * ndu[idx][pk];
            }
            if r <= pk {
                a[s2][k] = -a[s1][k - 1] / ndu[pk + 1][r];
                dd += a[s2][k] * ndu[r][pk];
            }
            ders[k][r] = dd;
            std::mem::swap(&mut s1, &mut s2);
        }
    }
    let mut factor = p as f64;
    for k in 1..=d.min(p) {
        for j in 0..=p {
            ders[k][j] *= factor;
        }
        factor *= (p - k) as f64;
    }
    ders
}

/// Inserts `t` once into the knot vector of a curve of `count` points of degree `degree`
/// (Boehm's algorithm on the knots alone) and returns the span `k` it went into, with the
/// blending factors of the `degree` new points appended to `alphas`: new point `i` (for `i`
/// in `k - degree + 1 ..= k`) is `P_i α + P_{i-1} (1 − α)`. The factors depend on the knots
/// only, so one plan serves every line of a surface ([`InsertionPlan`]).
fn insert_knot_once(
    knots: &mut Vec<f64>,
    degree: usize,
    count: usize,
    t: f64,
    alphas: &mut Vec<f64>,
) -> usize {
    let p = degree;
    // Span k with knots[k] <= t < knots[k+1] (t strictly inside the domain here).
    let mut k = find_span(count, p, t, knots);
    while k + 1 < knots.len() && knots[k + 1] <= t && k < count - 1 {
        k += 1;
    }
    for i in k - p + 1..=k {
        let denom = knots[i + p] - knots[i];
        alphas.push(if denom > 0.0 {
            (t - knots[i]) / denom
        } else {
            0.0
        });
    }
    knots.insert(k + 1, t);
    k
}

/// Applies one insertion of [`insert_knot_once`] (span `k`, the `alphas` of its new points)
/// to a line of points in place.
fn insert_points(pts: &mut Vec<DVec4>, k: usize, alphas: &[f64]) {
    let p = alphas.len();
    // The new points read the old ones below them: made first, then the tail moves up one.
    let mut fresh = [DVec4::ZERO; 8];
    let mut spill = Vec::new();
    let made = |i: usize, a: f64| pts[i] * a + pts[i - 1] * (1.0 - a);
    let news: &[DVec4] = if p <= fresh.len() {
        for (s, &a) in alphas.iter().enumerate() {
            fresh[s] = made(k - p + 1 + s, a);
        }
        &fresh[..p]
    } else {
        spill.extend(
            alphas
                .iter()
                .enumerate()
                .map(|(s, &a)| made(k - p + 1 + s, a)),
        );
        &spill
    };
    // Degree 0 repeats point k; otherwise slot k is one of the new points.
    pts.insert(k, pts[k]);
    pts[k - p + 1..=k].copy_from_slice(news);
}

/// Inserts `t` once into a curve of homogeneous points (Boehm's algorithm).
fn insert_once(knots: &mut Vec<f64>, degree: usize, pts: &mut Vec<DVec4>, t: f64) {
    let mut alphas = Vec::with_capacity(degree);
    let k = insert_knot_once(knots, degree, pts.len(), t, &mut alphas);
    insert_points(pts, k, &alphas);
}

/// A sequence of knot insertions worked out on the knots once and applied to any number of
/// lines of points (every line of a surface along one direction shares its knots): the same
/// arithmetic, in the same order, as [`insert_to_multiplicity`] line by line.
#[derive(Clone, Debug)]
pub(crate) struct InsertionPlan {
    /// The knot vector after every insertion.
    pub(crate) knots: Vec<f64>,
    /// Span of each insertion.
    spans: Vec<usize>,
    /// `degree` factors per insertion.
    alphas: Vec<f64>,
    degree: usize,
}

impl InsertionPlan {
    /// Every `t` of `ts` (in order, each strictly inside the domain) inserted until its
    /// multiplicity is `target`, into a curve of `count` points.
    pub(crate) fn new(
        knots: &[f64],
        degree: usize,
        count: usize,
        ts: &[f64],
        target: usize,
    ) -> Self {
        let mut plan = Self {
            knots: knots.to_vec(),
            spans: Vec::new(),
            alphas: Vec::new(),
            degree,
        };
        let mut count = count;
        for &t in ts {
            for _ in multiplicity(&plan.knots, t)..target {
                let k = insert_knot_once(&mut plan.knots, degree, count, t, &mut plan.alphas);
                plan.spans.push(k);
                count += 1;
            }
        }
        plan
    }

    /// Points of a line after the plan, given `count` before.
    pub(crate) fn count_after(&self, count: usize) -> usize {
        count + self.spans.len()
    }

    /// Applies the plan to one line of points (in place; `pts` grows by one point per
    /// insertion).
    pub(crate) fn apply(&self, pts: &mut Vec<DVec4>) {
        pts.reserve(self.spans.len());
        for (s, &k) in self.spans.iter().enumerate() {
            insert_points(pts, k, &self.alphas[s * self.degree..(s + 1) * self.degree]);
        }
    }
}

/// Multiplicity of `t` in `knots` (exact comparison).
pub fn multiplicity(knots: &[f64], t: f64) -> usize {
    knots.iter().filter(|&&k| k == t).count()
}

/// Inserts `t` until its multiplicity is at least `target` (knot insertion, A5.1 repeated).
/// `t` must lie strictly inside the domain.
pub fn insert_to_multiplicity(
    knots: &mut Vec<f64>,
    degree: usize,
    pts: &mut Vec<DVec4>,
    t: f64,
    target: usize,
) {
    let s = multiplicity(knots, t);
    for _ in s..target {
        insert_once(knots, degree, pts, t);
    }
}

/// Splits a clamped curve of homogeneous points at `t` (strictly inside the domain) into two
/// clamped curves `(knots, points)` covering `[start, t]` and `[t, end]`.
#[allow(clippy::type_complexity)]
pub fn split(
    knots: &[f64],
    degree: usize,
    pts: &[DVec4],
    t: f64,
) -> ((Vec<f64>, Vec<DVec4>), (Vec<f64>, Vec<DVec4>)) {
    let p = degree;
    let mut k = knots.to_vec();
    let mut q = pts.to_vec();
    insert_to_multiplicity(&mut k, p, &mut q, t, p);
    let a = k.iter().position(|&x| x == t).unwrap_or(p + 1);
    let mut lk: Vec<f64> = k[..a].to_vec();
    lk.extend(std::iter::repeat_n(t, p + 1));
    let lp = q[..a].to_vec();
    let mut rk: Vec<f64> = vec![t; p + 1];
    rk.extend_from_slice(&k[a + p..]);
    let rp = q[a - 1..].to_vec();
    ((lk, lp), (rk, rp))
}

/// Restricts a clamped curve to `[t0, t1]` (inside the domain, `t0 < t1`).
pub fn restrict(
    knots: &[f64],
    degree: usize,
    pts: &[DVec4],
    t0: f64,
    t1: f64,
) -> (Vec<f64>, Vec<DVec4>) {
    let p = degree;
    let (lo, hi) = (knots[p], knots[knots.len() - 1 - p]);
    let (mut k, mut q) = (knots.to_vec(), pts.to_vec());
    if t0 > lo {
        let (_, right) = split(&k, p, &q, t0);
        (k, q) = right;
    }
    if t1 < hi {
        let (left, _) = split(&k, p, &q, t1);
        (k, q) = left;
    }
    (k, q)
}

/// Greville abscissae of a knot vector, normalised to the domain `[0, 1]`.
pub fn greville_normalised(knots: &[f64], degree: usize, count: usize) -> Vec<f64> {
    let (lo, hi) = (knots[degree], knots[count]);
    (0..count)
        .map(|i| {
            let s: f64 = knots[i + 1..=i + degree].iter().sum();
            ((s / degree as f64 - lo) / (hi - lo)).clamp(0.0, 1.0)
        })
        .collect()
}
