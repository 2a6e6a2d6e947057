//! Evaluation of a NURBS surface on a tensor grid `(us[i], vs[j])`: the u-basis of every column
//! is applied once to the control net, giving one homogeneous curve in v per column; a grid point
//! is then one `q + 1` term sum and a projection (instead of a full tensor sum per point).

use glam::{DVec3, DVec4};
use wide::f64x2;

use super::curve::project;
use super::knots::{basis_derivatives, find_span};
use super::NurbsSurface;

/// A surface prepared for evaluation on a fixed grid; [`Self::point`] is thread-safe, so rows can
/// be filled in parallel.
#[derive(Clone, Debug)]
pub struct GridEvaluator {
    /// Column curves: `columns[i * m + k]`, the homogeneous v-control point `k` at `us[i]`.
    columns: Vec<DVec4>,
    /// Per v: the first control index and the `q + 1` basis values.
    rows: AxisBasis,
    m: usize,
    nu: usize,
}

/// The basis functions of one parameter direction at a list of samples: for sample `k`, the
/// first control index `first[k]` and the `degree + 1` non-zero basis values
/// `values[k * (degree + 1)..]`. Shared by [`GridEvaluator`] and the device evaluation of
/// geometry images (`gprox_cuda`), which upload these tables once.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisBasis {
    /// Degree of the direction.
    pub degree: usize,
    /// First control index of each sample (`span - degree`).
    pub first: Vec<u32>,
    /// `degree + 1` basis values per sample.
    pub values: Vec<f64>,
}

impl AxisBasis {
    /// The basis of `count` control points of `degree` over `knots` at `params` (each clamped
    /// into `[lo, hi]` first, NaN to `lo`).
    pub fn new(
        count: usize,
        degree: usize,
        knots: &[f64],
        params: &[f64],
        lo: f64,
        hi: f64,
    ) -> Self {
        let mut first = Vec::with_capacity(params.len());
        let mut values = Vec::with_capacity(params.len() * (degree + 1));
        for &t in params {
            let t = if t.is_nan() { lo } else { t.clamp(lo, hi) };
            let span = find_span(count, degree, t, knots);
            first.push((span - degree) as u32);
            values.extend_from_slice(&basis_derivatives(span, t, degree, 0, knots)[0]);
        }
        Self {
            degree,
            first,
            values,
        }
    }

    /// Samples.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// First control index and basis values of sample `k`.
    #[inline]
    pub fn at(&self, k: usize) -> (usize, &[f64]) {
        let n = self.degree + 1;
        (self.first[k] as usize, &self.values[k * n..(k + 1) * n])
    }
}

/// The u and v bases of a surface on the tensor grid `us x vs` (parameters clamped to the
/// domain).
pub fn grid_basis(surface: &NurbsSurface, us: &[f64], vs: &[f64]) -> [AxisBasis; 2] {
    let [p, q] = surface.degree();
    let [n, m] = surface.count();
    let [ku, kv] = surface.knots();
    let d = surface.domain();
    [
        AxisBasis::new(n, p, ku, us, d.u0, d.u1),
        AxisBasis::new(m, q, kv, vs, d.v0, d.v1),
    ]
}

/// Column `k` of the tensor grid in homogeneous form: `sum_r h[(first + r) * m + k] * b[r]`, `r`
/// ascending from zero (the order the device evaluation repeats, `geometry_image.cu`).
#[inline]
pub fn column_point(h: &[DVec4], m: usize, first: usize, b: &[f64], k: usize) -> DVec4 {
    let mut c = DVec4::ZERO;
    for (r, &br) in b.iter().enumerate() {
        c += h[(first + r) * m + k] * br;
    }
    c
}

/// The affine map with rows `rows` applied to a homogeneous point (the weight kept): what
/// [`GridEvaluator::transform`] does to every column point.
#[inline]
pub fn transform_homogeneous(rows: &[[f64; 4]; 3], h: DVec4) -> DVec4 {
    let row = |r: &[f64; 4]| ((r[0] * h.x + r[1] * h.y) + r[2] * h.z) + r[3] * h.w;
    DVec4::new(row(&rows[0]), row(&rows[1]), row(&rows[2]), h.w)
}

impl GridEvaluator {
    /// Prepares `surface` for the grid `us x vs` (parameters clamped to the domain).
    pub fn new(surface: &NurbsSurface, us: &[f64], vs: &[f64]) -> Self {
        let [_, m] = surface.count();
        let h = surface.homogeneous_points();
        let [bu, bv] = grid_basis(surface, us, vs);
        let mut columns = vec![DVec4::ZERO; us.len() * m];
        for i in 0..us.len() {
            let (first, b) = bu.at(i);
            for (k, c) in columns[i * m..(i + 1) * m].iter_mut().enumerate() {
                *c = column_point(h, m, first, b, k);
            }
        }
        Self {
            columns,
            rows: bv,
            m,
            nu: us.len(),
        }
    }

    /// Applies the affine map with rows `rows` (acting on `(x, y, z, 1)`, e.g. a pose) to the
    /// surface: the homogeneous column points are mapped once, so every grid point then comes
    /// out transformed at no cost per point (an affine map commutes with the rational sum).
    pub fn transform(&mut self, rows: &[[f64; 4]; 3]) {
        for c in &mut self.columns {
            *c = transform_homogeneous(rows, *c);
        }
    }

    /// Number of u samples.
    pub fn width(&self) -> usize {
        self.nu
    }

    /// Number of v samples.
    pub fn height(&self) -> usize {
        self.rows.len()
    }

    /// The surface point at `(us[i], vs[j])`.
    #[inline]
    pub fn point(&self, i: usize, j: usize) -> DVec3 {
        let (first, b) = self.rows.at(j);
        sum(&self.columns[i * self.m + first..], b)
    }

    /// Every point of row `j` in order, `f(i, point)`: [`Self::point`] for each `i` (the same
    /// values), with the row's basis read once and, for cubic v, a fixed four-term sum.
    #[inline]
    pub fn row(&self, j: usize, mut f: impl FnMut(usize, DVec3)) {
        let (first, b) = self.rows.at(j);
        let columns = self.columns.chunks_exact(self.m).map(|c| &c[first..]);
        match <&[f64; 4]>::try_from(b) {
            Ok(b4) => {
                let b4 = b4.map(f64x2::splat);
                columns.enumerate().for_each(|(i, c)| f(i, sum4(c, &b4)));
            }
            Err(_) => columns.enumerate().for_each(|(i, c)| f(i, sum(c, b))),
        }
    }
}

/// `project(Σ_r col[r] · b[r])`, `r` ascending from zero.
#[inline]
fn sum(col: &[DVec4], b: &[f64]) -> DVec3 {
    let mut acc = DVec4::ZERO;
    for (c, &x) in col.iter().zip(b) {
        acc += *c * x;
    }
    project(acc)
}

/// [`sum`] of four terms, `(x, y)` and `(z, w)` each in a pair of f64 lanes (`b` splatted):
/// the same operations in the same order in every lane, so the same values bit for bit.
#[inline(always)]
fn sum4(col: &[DVec4], b: &[f64x2; 4]) -> DVec3 {
    let (mut xy, mut zw) = (f64x2::ZERO, f64x2::ZERO);
    for (c, &br) in col[..4].iter().zip(b) {
        xy += f64x2::new([c.x, c.y]) * br;
        zw += f64x2::new([c.z, c.w]) * br;
    }
    let [z, w] = zw.to_array();
    let [x, y] = (xy / f64x2::splat(w)).to_array();
    DVec3::new(x, y, z / w)
}
