//! Evaluation of a NURBS surface on a tensor grid `(us[i], vs[j])`: the u-basis of every column
//! is applied once to the control net, giving one homogeneous curve in v per column; a grid point
//! is then one `q + 1` term sum and a projection (instead of a full tensor sum per point).

use glam::{DVec3, DVec4};

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
    rows: Vec<(usize, Vec<f64>)>,
    m: usize,
    nu: usize,
}

impl GridEvaluator {
    /// Prepares `surface` for the grid `us x vs` (parameters clamped to the domain).
    pub fn new(surface: &NurbsSurface, us: &[f64], vs: &[f64]) -> Self {
        let [p, q] = surface.degree();
        let [n, m] = surface.count();
        let [ku, kv] = surface.knots();
        let h = surface.homogeneous_points();
        let mut columns = vec![DVec4::ZERO; us.len() * m];
        for (i, &u) in us.iter().enumerate() {
            let (u, _) = surface.clamp_param(u, 0.0);
            let su = find_span(n, p, u, ku);
            let b = &basis_derivatives(su, u, p, 0, ku)[0];
            let col = &mut columns[i * m..(i + 1) * m];
            for (r, &br) in b.iter().enumerate() {
                let row = &h[(su - p + r) * m..(su - p + r + 1) * m];
                for (c, &x) in col.iter_mut().zip(row) {
                    *c += x * br;
                }
            }
        }
        let rows = vs
            .iter()
            .map(|&v| {
                let (_, v) = surface.clamp_param(0.0, v);
                let sv = find_span(m, q, v, kv);
                (sv - q, basis_derivatives(sv, v, q, 0, kv)[0].clone())
            })
            .collect();
        Self {
            columns,
            rows,
            m,
            nu: us.len(),
        }
    }

    /// Applies the affine map with rows `rows` (acting on `(x, y, z, 1)`, e.g. a pose) to the
    /// surface: the homogeneous column points are mapped once, so every grid point then comes
    /// out transformed at no cost per point (an affine map commutes with the rational sum).
    pub fn transform(&mut self, rows: &[[f64; 4]; 3]) {
        let row = |r: &[f64; 4], h: DVec4| ((r[0] * h.x + r[1] * h.y) + r[2] * h.z) + r[3] * h.w;
        for c in &mut self.columns {
            *c = DVec4::new(row(&rows[0], *c), row(&rows[1], *c), row(&rows[2], *c), c.w);
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
        let (first, b) = &self.rows[j];
        let col = &self.columns[i * self.m + first..];
        let mut acc = DVec4::ZERO;
        for (c, &x) in col.iter().zip(b) {
            acc += *c * x;
        }
        project(acc)
    }
}
