//! NURBS curves (any degree, rational or not, clamped knots) in f64.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::{DVec3, DVec4};

use super::knots::{
    basis_derivatives, find_span, insert_to_multiplicity, restrict, split, validate_knots,
};
use super::FreeformError;

/// Projects a homogeneous point `(w x, w y, w z, w)` to Euclidean space.
#[inline]
pub fn project(h: DVec4) -> DVec3 {
    h.truncate() / h.w
}

/// Lifts a Euclidean point with weight `w` to homogeneous `(w x, w y, w z, w)`.
#[inline]
pub fn lift(p: DVec3, w: f64) -> DVec4 {
    (p * w).extend(w)
}

/// Checks that points and weights are finite and weights positive.
pub(crate) fn validate_points(points: &[DVec3], weights: &[f64]) -> Result<(), FreeformError> {
    if points.len() != weights.len() {
        return Err(FreeformError::CountMismatch {
            what: "weights",
            expected: points.len(),
            got: weights.len(),
        });
    }
    for (index, p) in points.iter().enumerate() {
        if !p.is_finite() {
            return Err(FreeformError::NonFinitePoint {
                index,
                value: p.to_array(),
            });
        }
    }
    for (index, &w) in weights.iter().enumerate() {
        if !(w.is_finite() && w > 0.0) {
            return Err(FreeformError::BadWeight { index, value: w });
        }
    }
    Ok(())
}

/// Binomial coefficient for small arguments.
pub(crate) fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// A clamped NURBS curve: `C(t) = Σ N_i,p(t) w_i P_i / Σ N_i,p(t) w_i`.
///
/// ```
/// use gprox_geometry::freeform::NurbsCurve;
/// use gprox_geometry::glam::DVec3;
/// let c = NurbsCurve::new(1, vec![0.0, 0.0, 1.0, 1.0], vec![DVec3::ZERO, DVec3::X], None).unwrap();
/// assert!((c.point(0.25) - DVec3::new(0.25, 0.0, 0.0)).length() < 1e-15);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NurbsCurve {
    degree: usize,
    knots: Vec<f64>,
    points: Vec<DVec4>,
}

impl NurbsCurve {
    /// Validates and builds a curve from Euclidean control points and optional weights.
    /// Unclamped knot vectors are converted to the clamped form of the same curve.
    pub fn new(
        degree: usize,
        knots: Vec<f64>,
        points: Vec<DVec3>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self, FreeformError> {
        let weights = weights.unwrap_or_else(|| vec![1.0; points.len()]);
        validate_points(&points, &weights)?;
        validate_knots("curve", &knots, degree, points.len())?;
        let points: Vec<DVec4> = points
            .iter()
            .zip(&weights)
            .map(|(&p, &w)| lift(p, w))
            .collect();
        let (knots, points) = super::knots::clamp_ends(&knots, degree, &points);
        Ok(Self {
            degree,
            knots,
            points,
        })
    }

    /// Builds a curve from already validated homogeneous points (crate-internal).
    pub(crate) fn from_homogeneous(degree: usize, knots: Vec<f64>, points: Vec<DVec4>) -> Self {
        Self {
            degree,
            knots,
            points,
        }
    }

    /// Degree.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The full clamped knot vector.
    pub fn knots(&self) -> &[f64] {
        &self.knots
    }

    /// Homogeneous control points `(w x, w y, w z, w)`.
    pub fn homogeneous_points(&self) -> &[DVec4] {
        &self.points
    }

    /// Euclidean control points.
    pub fn control_points(&self) -> Vec<DVec3> {
        self.points.iter().map(|&h| project(h)).collect()
    }

    /// Parameter domain `[knots[p], knots[n]]`.
    pub fn domain(&self) -> [f64; 2] {
        [self.knots[self.degree], self.knots[self.points.len()]]
    }

    fn clamp_param(&self, t: f64) -> f64 {
        let [a, b] = self.domain();
        if t.is_nan() {
            a
        } else {
            t.clamp(a, b)
        }
    }

    /// Point at `t` (clamped to the domain; NaN maps to the domain start).
    pub fn point(&self, t: f64) -> DVec3 {
        self.derivatives(t, 0)[0]
    }

    /// The point and derivatives up to order `d` at `t` (rational quotient rule, A4.2).
    pub fn derivatives(&self, t: f64, d: usize) -> Vec<DVec3> {
        let t = self.clamp_param(t);
        let p = self.degree;
        let span = find_span(self.points.len(), p, t, &self.knots);
        let nders = basis_derivatives(span, t, p, d, &self.knots);
        let mut a = vec![DVec4::ZERO; d + 1];
        for (k, ak) in a.iter_mut().enumerate().take(d.min(p) + 1) {
            for j in 0..=p {
                *ak += self.points[span - p + j] * nders[k][j];
            }
        }
        let mut out: Vec<DVec3> = Vec::with_capacity(d + 1);
        for k in 0..=d {
            let mut v = a[k].truncate();
            for i in 1..=k {
                v -= out[k - i] * (binomial(k, i) * a[i].w);
            }
            out.push(v / a[0].w);
        }
        out
    }

    /// The curve with `t` inserted `times` more times (same geometry).
    pub fn insert_knot(&self, t: f64, times: usize) -> Self {
        let [a, b] = self.domain();
        if !(t > a && t < b) || times == 0 {
            return self.clone();
        }
        let (mut k, mut q) = (self.knots.clone(), self.points.clone());
        let target = super::knots::multiplicity(&k, t) + times;
        insert_to_multiplicity(&mut k, self.degree, &mut q, t, target.min(self.degree));
        Self::from_homogeneous(self.degree, k, q)
    }

    /// Splits at `t` (strictly inside the domain) into the pieces over `[start, t]`, `[t, end]`.
    pub fn split(&self, t: f64) -> Result<(Self, Self), FreeformError> {
        let [a, b] = self.domain();
        if !(t > a && t < b) {
            return Err(FreeformError::ParameterOutOfDomain {
                value: t,
                min: a,
                max: b,
            });
        }
        let ((lk, lp), (rk, rp)) = split(&self.knots, self.degree, &self.points, t);
        Ok((
            Self::from_homogeneous(self.degree, lk, lp),
            Self::from_homogeneous(self.degree, rk, rp),
        ))
    }

    /// The piece over `[t0, t1]` (clamped to the domain).
    pub fn restrict(&self, t0: f64, t1: f64) -> Self {
        let (k, q) = restrict(&self.knots, self.degree, &self.points, t0, t1);
        Self::from_homogeneous(self.degree, k, q)
    }

    /// Bézier segments (homogeneous control points, `degree + 1` each) with their parameter
    /// intervals.
    pub fn bezier_segments(&self) -> Vec<([f64; 2], Vec<DVec4>)> {
        let p = self.degree;
        let mut k = self.knots.clone();
        let mut q = self.points.clone();
        let [a, b] = self.domain();
        let interior: Vec<f64> = {
            let mut v: Vec<f64> = k.iter().copied().filter(|&x| x > a && x < b).collect();
            v.dedup();
            v
        };
        for &t in &interior {
            insert_to_multiplicity(&mut k, p, &mut q, t, p);
        }
        let mut breaks = vec![a];
        breaks.extend(interior);
        breaks.push(b);
        breaks
            .windows(2)
            .enumerate()
            .map(|(s, w)| ([w[0], w[1]], q[s * p..=s * p + p].to_vec()))
            .collect()
    }

    /// Axis-aligned box of the Euclidean control points (contains the curve).
    pub fn control_bounds(&self) -> (DVec3, DVec3) {
        bounds_of(self.points.iter().map(|&h| project(h)))
    }
}

/// Min/max corners of a set of points.
pub(crate) fn bounds_of(points: impl Iterator<Item = DVec3>) -> (DVec3, DVec3) {
    points.fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
        (lo.min(p), hi.max(p))
    })
}
