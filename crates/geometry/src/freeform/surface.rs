//! Tensor-product NURBS surfaces (any degrees, rational or not, clamped knots) in f64.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::{DVec3, DVec4};

use super::curve::{binomial, bounds_of, lift, project, validate_points, NurbsCurve};
use super::knots::{
    basis_derivatives, basis_values, find_span, insert_to_multiplicity, restrict, split,
    validate_knots, InsertionPlan, BASIS_STACK,
};
pub use super::rect::ParamRect;
use super::FreeformError;

/// Point and partial derivatives up to second order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceDerivatives {
    /// S(u, v).
    pub point: DVec3,
    /// ∂S/∂u.
    pub du: DVec3,
    /// ∂S/∂v.
    pub dv: DVec3,
    /// ∂²S/∂u².
    pub duu: DVec3,
    /// ∂²S/∂u∂v.
    pub duv: DVec3,
    /// ∂²S/∂v².
    pub dvv: DVec3,
}

/// A clamped tensor-product NURBS surface; control point `(i, j)` (i along u) is stored at
/// `i * count_v + j` in homogeneous form `(w x, w y, w z, w)`.
///
/// ```
/// use gprox_geometry::freeform::NurbsSurface;
/// use gprox_geometry::glam::DVec3;
/// // A bilinear patch over the unit square.
/// let pts = vec![DVec3::new(0.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 0.0),
///                DVec3::new(1.0, 0.0, 0.0), DVec3::new(1.0, 1.0, 1.0)];
/// let s = NurbsSurface::new([1, 1], [vec![0.0, 0.0, 1.0, 1.0], vec![0.0, 0.0, 1.0, 1.0]],
///                           [2, 2], pts, None).unwrap();
/// assert!((s.point(0.5, 0.5) - DVec3::new(0.5, 0.5, 0.25)).length() < 1e-15);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NurbsSurface {
    degree: [usize; 2],
    knots: [Vec<f64>; 2],
    count: [usize; 2],
    points: Vec<DVec4>,
    rational: bool,
}

impl NurbsSurface {
    /// Validates and builds a surface. `points` are Euclidean, row-major with i along u;
    /// `weights` (same layout) default to 1. Unclamped knot vectors (e.g. converted periodic
    /// surfaces) are converted to the clamped form of the same surface, so [`Self::count`] may
    /// then differ from `count`.
    pub fn new(
        degree: [usize; 2],
        knots: [Vec<f64>; 2],
        count: [usize; 2],
        points: Vec<DVec3>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self, FreeformError> {
        let n = count[0] * count[1];
        if points.len() != n {
            return Err(FreeformError::CountMismatch {
                what: "control points",
                expected: n,
                got: points.len(),
            });
        }
        let weights = weights.unwrap_or_else(|| vec![1.0; n]);
        validate_points(&points, &weights)?;
        validate_knots("u", &knots[0], degree[0], count[0])?;
        validate_knots("v", &knots[1], degree[1], count[1])?;
        let rational = weights.iter().any(|&w| w != 1.0);
        let points = points
            .iter()
            .zip(&weights)
            .map(|(&p, &w)| lift(p, w))
            .collect();
        let s = Self::from_parts(degree, knots, count, points, rational);
        let s = s.map_lines(true, |k, pts| super::knots::clamp_ends(k, degree[0], pts));
        Ok(s.map_lines(false, |k, pts| super::knots::clamp_ends(k, degree[1], pts)))
    }

    /// A Bézier patch of degrees `(p, q)` over `[0,1]^2` as a surface (points row-major).
    pub fn bezier(
        degree: [usize; 2],
        points: Vec<DVec3>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self, FreeformError> {
        let kn = |p: usize| {
            let mut k = vec![0.0; p + 1];
            k.extend(std::iter::repeat_n(1.0, p + 1));
            k
        };
        Self::new(
            degree,
            [kn(degree[0]), kn(degree[1])],
            [degree[0] + 1, degree[1] + 1],
            points,
            weights,
        )
    }

    fn from_parts(
        degree: [usize; 2],
        knots: [Vec<f64>; 2],
        count: [usize; 2],
        points: Vec<DVec4>,
        rational: bool,
    ) -> Self {
        Self {
            degree,
            knots,
            count,
            points,
            rational,
        }
    }

    /// Degrees `(p, q)`.
    pub fn degree(&self) -> [usize; 2] {
        self.degree
    }

    /// Knot vectors in u and v.
    pub fn knots(&self) -> [&[f64]; 2] {
        [&self.knots[0], &self.knots[1]]
    }

    /// Control net size `(n, m)`.
    pub fn count(&self) -> [usize; 2] {
        self.count
    }

    /// Whether any weight differs from 1.
    pub fn is_rational(&self) -> bool {
        self.rational
    }

    /// Homogeneous control points, row-major (i along u).
    pub fn homogeneous_points(&self) -> &[DVec4] {
        &self.points
    }

    /// Euclidean control point `(i, j)`.
    pub fn control_point(&self, i: usize, j: usize) -> DVec3 {
        project(self.points[i * self.count[1] + j])
    }

    /// Weight of control point `(i, j)`.
    pub fn weight(&self, i: usize, j: usize) -> f64 {
        self.points[i * self.count[1] + j].w
    }

    /// The parameter domain.
    pub fn domain(&self) -> ParamRect {
        ParamRect::new(
            self.knots[0][self.degree[0]],
            self.knots[0][self.count[0]],
            self.knots[1][self.degree[1]],
            self.knots[1][self.count[1]],
        )
    }

    /// Clamps `(u, v)` into the domain (NaN maps to the domain start).
    pub fn clamp_param(&self, u: f64, v: f64) -> (f64, f64) {
        let d = self.domain();
        let c = |t: f64, a: f64, b: f64| if t.is_nan() { a } else { t.clamp(a, b) };
        (c(u, d.u0, d.u1), c(v, d.v0, d.v1))
    }

    /// Homogeneous derivatives `A[k][l]`, k + l <= d (A3.6).
    fn homogeneous_derivatives(&self, u: f64, v: f64, d: usize) -> [[DVec4; 3]; 3] {
        let (u, v) = self.clamp_param(u, v);
        let [p, q] = self.degree;
        let su = find_span(self.count[0], p, u, &self.knots[0]);
        let sv = find_span(self.count[1], q, v, &self.knots[1]);
        let nu = basis_derivatives(su, u, p, d, &self.knots[0]);
        let nv = basis_derivatives(sv, v, q, d, &self.knots[1]);
        let mut out = [[DVec4::ZERO; 3]; 3];
        let m = self.count[1];
        for k in 0..=d.min(p) {
            let mut temp = vec![DVec4::ZERO; q + 1];
            for (s, t) in temp.iter_mut().enumerate() {
                let row = sv - q + s;
                for r in 0..=p {
                    *t += self.points[(su - p + r) * m + row] * nu[k][r];
                }
            }
            for l in 0..=(d - k).min(q) {
                let mut acc = DVec4::ZERO;
                for (s, t) in temp.iter().enumerate() {
                    acc += *t * nv[l][s];
                }
                out[k][l] = acc;
            }
        }
        out
    }

    /// Point at `(u, v)` (clamped to the domain).
    pub fn point(&self, u: f64, v: f64) -> DVec3 {
        let (u, v) = self.clamp_param(u, v);
        let [p, q] = self.degree;
        let su = find_span(self.count[0], p, u, &self.knots[0]);
        let sv = find_span(self.count[1], q, v, &self.knots[1]);
        let (mut nu, mut nv) = ([0.0; BASIS_STACK], [0.0; BASIS_STACK]);
        if p < BASIS_STACK && q < BASIS_STACK {
            basis_values(su, u, p, &self.knots[0], &mut nu[..=p]);
            basis_values(sv, v, q, &self.knots[1], &mut nv[..=q]);
            return self.point_from_basis(su, &nu[..=p], sv, &nv[..=q]);
        }
        let nu = basis_derivatives(su, u, p, 0, &self.knots[0]);
        let nv = basis_derivatives(sv, v, q, 0, &self.knots[1]);
        self.point_from_basis(su, &nu[0], sv, &nv[0])
    }

    /// The point from the non-zero basis values `nu` (span `su`) and `nv` (span `sv`): the
    /// tensor sum over the `(p+1) x (q+1)` affected control points, rows first, then projected.
    /// [`Self::point`] and cached evaluation ([`super::basis_cache`]) share this arithmetic, so
    /// equal basis values give bitwise equal points.
    #[inline]
    pub(crate) fn point_from_basis(&self, su: usize, nu: &[f64], sv: usize, nv: &[f64]) -> DVec3 {
        let [p, q] = self.degree;
        let m = self.count[1];
        let mut acc = DVec4::ZERO;
        for (s, &b) in nv.iter().enumerate().take(q + 1) {
            let row = sv - q + s;
            let mut t = DVec4::ZERO;
            for (r, &a) in nu.iter().enumerate().take(p + 1) {
                t += self.points[(su - p + r) * m + row] * a;
            }
            acc += t * b;
        }
        project(acc)
    }

    /// Point and derivatives to second order (rational quotient rule, A4.4).
    pub fn derivatives(&self, u: f64, v: f64) -> SurfaceDerivatives {
        let a = self.homogeneous_derivatives(u, v, 2);
        let mut s = [[DVec3::ZERO; 3]; 3];
        for k in 0..=2 {
            for l in 0..=2 - k {
                let mut v = a[k][l].truncate();
                for j in 1..=l {
                    v -= s[k][l - j] * (binomial(l, j) * a[0][j].w);
                }
                for i in 1..=k {
                    v -= s[k - i][l] * (binomial(k, i) * a[i][0].w);
                    let mut v2 = DVec3::ZERO;
                    for j in 1..=l {
                        v2 += s[k - i][l - j] * (binomial(l, j) * a[i][j].w);
                    }
                    v -= v2 * binomial(k, i);
                }
                s[k][l] = v / a[0][0].w;
            }
        }
        SurfaceDerivatives {
            point: s[0][0],
            du: s[1][0],
            dv: s[0][1],
            duu: s[2][0],
            duv: s[1][1],
            dvv: s[0][2],
        }
    }

    /// Column `j` (points along u) or row `i` (points along v).
    fn line(&self, along_u: bool, index: usize) -> Vec<DVec4> {
        let m = self.count[1];
        if along_u {
            (0..self.count[0])
                .map(|i| self.points[i * m + index])
                .collect()
        } else {
            self.points[index * m..(index + 1) * m].to_vec()
        }
    }

    /// Applies a 1-D operation (on knots + homogeneous points) to every line along one direction.
    fn map_lines(
        &self,
        along_u: bool,
        f: impl Fn(&[f64], &[DVec4]) -> (Vec<f64>, Vec<DVec4>),
    ) -> Self {
        let dir = if along_u { 0 } else { 1 };
        let other = 1 - dir;
        let mut new_knots = Vec::new();
        let mut lines = Vec::with_capacity(self.count[other]);
        for idx in 0..self.count[other] {
            let (k, pts) = f(&self.knots[dir], &self.line(along_u, idx));
            new_knots = k;
            lines.push(pts);
        }
        let n_dir = lines.first().map_or(0, |l| l.len());
        let mut count = self.count;
        count[dir] = n_dir;
        let mut points = vec![DVec4::ZERO; count[0] * count[1]];
        for (idx, line) in lines.iter().enumerate() {
            for (t, &p) in line.iter().enumerate() {
                let (i, j) = if along_u { (t, idx) } else { (idx, t) };
                points[i * count[1] + j] = p;
            }
        }
        let mut knots = self.knots.clone();
        knots[dir] = new_knots;
        Self::from_parts(self.degree, knots, count, points, self.rational)
    }

    /// The same surface with `t` inserted into the u (`along_u`) or v knot vector until its
    /// multiplicity reaches `min(current + times, degree)`.
    pub fn insert_knot(&self, along_u: bool, t: f64, times: usize) -> Self {
        let dir = if along_u { 0 } else { 1 };
        let p = self.degree[dir];
        let d = self.domain();
        let (a, b) = if along_u { (d.u0, d.u1) } else { (d.v0, d.v1) };
        if !(t > a && t < b) || times == 0 {
            return self.clone();
        }
        let target = (super::knots::multiplicity(&self.knots[dir], t) + times).min(p);
        self.map_lines(along_u, |k, pts| {
            let (mut k, mut pts) = (k.to_vec(), pts.to_vec());
            insert_to_multiplicity(&mut k, p, &mut pts, t, target);
            (k, pts)
        })
    }

    /// Splits at parameter `t` of u (`along_u`) or v, strictly inside the domain.
    pub fn split(&self, along_u: bool, t: f64) -> Result<(Self, Self), FreeformError> {
        let dir = if along_u { 0 } else { 1 };
        let p = self.degree[dir];
        let d = self.domain();
        let (a, b) = if along_u { (d.u0, d.u1) } else { (d.v0, d.v1) };
        if !(t > a && t < b) {
            return Err(FreeformError::ParameterOutOfDomain {
                value: t,
                min: a,
                max: b,
            });
        }
        let left = self.map_lines(along_u, |k, pts| split(k, p, pts, t).0);
        let right = self.map_lines(along_u, |k, pts| split(k, p, pts, t).1);
        Ok((left, right))
    }

    /// The sub-surface over `rect` (clamped to the domain), as a clamped NURBS surface.
    pub fn restrict(&self, rect: &ParamRect) -> Self {
        let d = self.domain();
        let (u0, u1) = (rect.u0.max(d.u0), rect.u1.min(d.u1));
        let (v0, v1) = (rect.v0.max(d.v0), rect.v1.min(d.v1));
        let mut s = self.clone();
        if (u0 > d.u0 || u1 < d.u1) && u0 < u1 {
            s = s.map_lines(true, |k, pts| restrict(k, self.degree[0], pts, u0, u1));
        }
        if (v0 > d.v0 || v1 < d.v1) && v0 < v1 {
            s = s.map_lines(false, |k, pts| restrict(k, self.degree[1], pts, v0, v1));
        }
        s
    }

    /// Iso-curve `S(·, v)` (along u at fixed v) or `S(u, ·)` (along v at fixed u).
    pub fn iso_curve(&self, along_u: bool, at: f64) -> NurbsCurve {
        let dir = if along_u { 1 } else { 0 };
        let other = 1 - dir;
        let p = self.degree[dir];
        let (at, _) = if along_u {
            (self.clamp_param(0.0, at).1, 0)
        } else {
            (self.clamp_param(at, 0.0).0, 0)
        };
        let span = find_span(self.count[dir], p, at, &self.knots[dir]);
        let n = basis_derivatives(span, at, p, 0, &self.knots[dir]);
        let m = self.count[1];
        let pts = (0..self.count[other])
            .map(|t| {
                let mut acc = DVec4::ZERO;
                for r in 0..=p {
                    let k = span - p + r;
                    let idx = if along_u { t * m + k } else { k * m + t };
                    acc += self.points[idx] * n[0][r];
                }
                acc
            })
            .collect();
        NurbsCurve::from_homogeneous(self.degree[other], self.knots[other].clone(), pts)
    }

    /// Bézier patches (homogeneous, row-major `(p+1) x (q+1)`) with their parameter rectangles.
    pub fn bezier_patches(&self) -> Vec<(ParamRect, Vec<DVec4>)> {
        let [p, q] = self.degree;
        let d = self.domain();
        let interior = |k: &[f64], a: f64, b: f64| {
            let mut v: Vec<f64> = k.iter().copied().filter(|&x| x > a && x < b).collect();
            v.dedup();
            v
        };
        let iu = interior(&self.knots[0], d.u0, d.u1);
        let iv = interior(&self.knots[1], d.v0, d.v1);
        // Every interior knot to full multiplicity, one pass over the lines per direction (the
        // same insertions, in the same order, as `insert_knot` knot by knot): the insertion
        // factors are worked out once per direction and applied to every line.
        let [n0, m0] = self.count;
        let plan_u = InsertionPlan::new(&self.knots[0], p, n0, &iu, p);
        let n = plan_u.count_after(n0);
        let mut line = Vec::with_capacity(n.max(m0));
        let mut by_u = vec![DVec4::ZERO; n * m0];
        for j in 0..m0 {
            line.clear();
            line.extend((0..n0).map(|i| self.points[i * m0 + j]));
            plan_u.apply(&mut line);
            for (i, &pt) in line.iter().enumerate() {
                by_u[i * m0 + j] = pt;
            }
        }
        let plan_v = InsertionPlan::new(&self.knots[1], q, m0, &iv, q);
        let m = plan_v.count_after(m0);
        let mut points = Vec::with_capacity(n * m);
        for row in by_u.chunks_exact(m0) {
            line.clear();
            line.extend_from_slice(row);
            plan_v.apply(&mut line);
            points.extend_from_slice(&line);
        }
        let bu: Vec<f64> = std::iter::once(d.u0)
            .chain(iu)
            .chain(std::iter::once(d.u1))
            .collect();
        let bv: Vec<f64> = std::iter::once(d.v0)
            .chain(iv)
            .chain(std::iter::once(d.v1))
            .collect();
        let mut out = Vec::new();
        for (a, wu) in bu.windows(2).enumerate() {
            for (b, wv) in bv.windows(2).enumerate() {
                let mut pts = Vec::with_capacity((p + 1) * (q + 1));
                for i in 0..=p {
                    for j in 0..=q {
                        pts.push(points[(a * p + i) * m + b * q + j]);
                    }
                }
                out.push((ParamRect::new(wu[0], wu[1], wv[0], wv[1]), pts));
            }
        }
        out
    }

    /// The Bézier pieces as surfaces over their own parameter rectangles (same parametrisation
    /// as `self` on each rectangle).
    pub fn bezier_pieces(&self) -> Vec<(ParamRect, NurbsSurface)> {
        let [p, q] = self.degree;
        self.bezier_patches()
            .into_iter()
            .map(|(r, pts)| {
                let mut ku = vec![r.u0; p + 1];
                ku.extend(std::iter::repeat_n(r.u1, p + 1));
                let mut kv = vec![r.v0; q + 1];
                kv.extend(std::iter::repeat_n(r.v1, q + 1));
                (
                    r,
                    Self::from_parts(self.degree, [ku, kv], [p + 1, q + 1], pts, self.rational),
                )
            })
            .collect()
    }

    /// Where to split `rect` along u (`along_u`) or v: the interior knot strictly inside the
    /// rectangle closest to its middle, or the middle when there is none (so subdivision follows
    /// the Bézier pieces of joined surfaces).
    pub fn split_parameter(&self, rect: &ParamRect, along_u: bool) -> f64 {
        let (a, b, k) = if along_u {
            (rect.u0, rect.u1, &self.knots[0])
        } else {
            (rect.v0, rect.v1, &self.knots[1])
        };
        let mid = 0.5 * (a + b);
        k.iter()
            .copied()
            .filter(|&t| t > a && t < b)
            .min_by(|x, y| (x - mid).abs().total_cmp(&(y - mid).abs()))
            .unwrap_or(mid)
    }

    /// Axis-aligned box of the Euclidean control points (contains the surface).
    pub fn control_bounds(&self) -> (DVec3, DVec3) {
        bounds_of(self.points.iter().map(|&h| project(h)))
    }

    /// The surface with new Euclidean control points (row-major, i along u; knots, degrees and
    /// weights kept): a deforming surface's next frame. Errors on a wrong count or a non-finite
    /// point.
    pub fn with_control_points(&self, points: &[DVec3]) -> Result<Self, FreeformError> {
        let n = self.count[0] * self.count[1];
        if points.len() != n {
            return Err(FreeformError::CountMismatch {
                what: "control points",
                expected: n,
                got: points.len(),
            });
        }
        if let Some(index) = points.iter().position(|p| !p.is_finite()) {
            return Err(FreeformError::NonFinitePoint {
                index,
                value: points[index].to_array(),
            });
        }
        let points = points
            .iter()
            .zip(&self.points)
            .map(|(&p, h)| lift(p, h.w))
            .collect();
        Ok(Self::from_parts(
            self.degree,
            self.knots.clone(),
            self.count,
            points,
            self.rational,
        ))
    }

    /// The surface with every control point mapped by `f` (weights kept): e.g. a rigid motion.
    pub fn map_points(&self, f: impl Fn(DVec3) -> DVec3) -> Self {
        let points = self
            .points
            .iter()
            .map(|&h| lift(f(project(h)), h.w))
            .collect();
        Self::from_parts(
            self.degree,
            self.knots.clone(),
            self.count,
            points,
            self.rational,
        )
    }
}
