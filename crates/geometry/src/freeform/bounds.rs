//! Certified deviation bounds from control nets: a curve from its chord, a surface from the
//! bilinear surface of its corners, and a surface from the bilinearly blended Coons patch of its
//! four boundary curves (Kim et al. 2011, §3). Every bound is an upper bound of the true maximum
//! over the whole parameter domain.
//!
//! Polynomial splines use linear precision of the B-spline basis (Greville abscissae): the
//! difference is itself a spline whose control points are bounded. Rational splines are bounded
//! in homogeneous form: `W (C - L)` is a polynomial of one degree higher whose Bernstein
//! coefficients are formed exactly, divided by the smallest weight.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::{DVec3, DVec4};

use super::curve::{binomial, project};
use super::knots::greville_normalised;
use super::{NurbsCurve, NurbsSurface};

pub use super::bezier_max::COONS_REFINE_BUDGET;

/// `C(p, a) / C(p + 1, a + alpha)`: the weight of `B^1_alpha * B^p_a` in degree `p + 1`.
fn elevation_factor(alpha: usize, a: usize, p: usize) -> f64 {
    binomial(p, a) / binomial(p + 1, a + alpha)
}

/// Bound of `|C(t) - ((1-t) l0 + t l1)|` on `[0,1]` for a rational Bézier segment.
fn rational_segment_chord(pts: &[DVec4], l0: DVec3, l1: DVec3) -> f64 {
    let p = pts.len() - 1;
    let wmin = pts.iter().map(|h| h.w).fold(f64::INFINITY, f64::min);
    let mut worst = 0.0f64;
    for i in 0..=p + 1 {
        let mut d = DVec3::ZERO;
        for (alpha, l) in [(0usize, l0), (1, l1)] {
            if i >= alpha && i - alpha <= p {
                let a = i - alpha;
                d += (project(pts[a]) - l) * (elevation_factor(alpha, a, p) * pts[a].w);
            }
        }
        worst = worst.max(d.length());
    }
    worst / wmin
}

/// Whether a clamped spline of degree `p` over `knots` is C1 inside its domain: every interior
/// knot has multiplicity below `p`.
fn c1_inside(knots: &[f64], p: usize) -> bool {
    let (a, b) = (knots[p], knots[knots.len() - 1 - p]);
    let interior: Vec<f64> = knots.iter().copied().filter(|&t| t > a && t < b).collect();
    interior.chunk_by(|x, y| x == y).all(|run| run.len() < p)
}

fn is_polynomial(pts: &[DVec4]) -> bool {
    pts.iter().all(|h| h.w == 1.0)
}

impl NurbsCurve {
    /// Upper bound of `max_t |C(t) - L(t)|`, with `L` the chord between the end points
    /// parametrised linearly over the domain (the polyline error of paper §3).
    pub fn chord_deviation(&self) -> f64 {
        let pts = self.homogeneous_points();
        let (a, b) = (project(pts[0]), project(pts[pts.len() - 1]));
        if is_polynomial(pts) {
            let g = greville_normalised(self.knots(), self.degree(), pts.len());
            return pts
                .iter()
                .zip(&g)
                .map(|(h, &x)| (h.truncate() - a.lerp(b, x)).length())
                .fold(0.0, f64::max);
        }
        let [t0, t1] = self.domain();
        self.bezier_segments()
            .iter()
            .map(|([s0, s1], seg)| {
                let (x0, x1) = ((s0 - t0) / (t1 - t0), (s1 - t0) / (t1 - t0));
                rational_segment_chord(seg, a.lerp(b, x0), a.lerp(b, x1))
            })
            .fold(0.0, f64::max)
    }
}

/// Bilinear interpolation of four corners (order 00, 10, 01, 11) at `(s, t)` in `[0,1]^2`.
pub fn bilinear(c: &[DVec3; 4], s: f64, t: f64) -> DVec3 {
    (c[0] * (1.0 - s) + c[1] * s) * (1.0 - t) + (c[2] * (1.0 - s) + c[3] * s) * t
}

impl NurbsSurface {
    /// The four corner points `S(u0,v0), S(u1,v0), S(u0,v1), S(u1,v1)` (corner control points of
    /// the clamped net).
    pub fn corner_points(&self) -> [DVec3; 4] {
        let [n, m] = self.count();
        [
            self.control_point(0, 0),
            self.control_point(n - 1, 0),
            self.control_point(0, m - 1),
            self.control_point(n - 1, m - 1),
        ]
    }

    /// Boundary curve: `side` 0 = `S(·, v0)`, 1 = `S(·, v1)` (along u), 2 = `S(u0, ·)`,
    /// 3 = `S(u1, ·)` (along v).
    pub fn boundary_curve(&self, side: usize) -> NurbsCurve {
        let [n, m] = self.count();
        let h = self.homogeneous_points();
        let [ku, kv] = self.knots();
        let [p, q] = self.degree();
        match side {
            0 => NurbsCurve::from_homogeneous(p, ku.to_vec(), (0..n).map(|i| h[i * m]).collect()),
            1 => NurbsCurve::from_homogeneous(
                p,
                ku.to_vec(),
                (0..n).map(|i| h[i * m + m - 1]).collect(),
            ),
            2 => NurbsCurve::from_homogeneous(q, kv.to_vec(), h[..m].to_vec()),
            _ => NurbsCurve::from_homogeneous(q, kv.to_vec(), h[(n - 1) * m..].to_vec()),
        }
    }

    /// Upper bound of `max |S(u,v) - L(u,v)|` with `L` the bilinear surface of the corners (in
    /// normalised parameters). Since `L` lies in the corner tetrahedron, this also bounds the
    /// distance of the surface from that tetrahedron.
    pub fn bilinear_deviation(&self) -> f64 {
        let c = self.corner_points();
        let h = self.homogeneous_points();
        let [n, m] = self.count();
        let [p, q] = self.degree();
        let [ku, kv] = self.knots();
        if is_polynomial(h) {
            let gu = greville_normalised(ku, p, n);
            let gv = greville_normalised(kv, q, m);
            let mut worst = 0.0f64;
            for i in 0..n {
                for j in 0..m {
                    worst =
                        worst.max((h[i * m + j].truncate() - bilinear(&c, gu[i], gv[j])).length());
                }
            }
            return worst;
        }
        let d = self.domain();
        let mut worst = 0.0f64;
        for (r, pts) in self.bezier_patches() {
            let s = [(r.u0 - d.u0) / (d.u1 - d.u0), (r.u1 - d.u0) / (d.u1 - d.u0)];
            let t = [(r.v0 - d.v0) / (d.v1 - d.v0), (r.v1 - d.v0) / (d.v1 - d.v0)];
            let corners = [
                [bilinear(&c, s[0], t[0]), bilinear(&c, s[0], t[1])],
                [bilinear(&c, s[1], t[0]), bilinear(&c, s[1], t[1])],
            ];
            let wmin = pts.iter().map(|h| h.w).fold(f64::INFINITY, f64::min);
            for i in 0..=p + 1 {
                for j in 0..=q + 1 {
                    let mut acc = DVec3::ZERO;
                    for alpha in 0..2 {
                        if i < alpha || i - alpha > p {
                            continue;
                        }
                        let a = i - alpha;
                        let fa = elevation_factor(alpha, a, p);
                        for beta in 0..2 {
                            if j < beta || j - beta > q {
                                continue;
                            }
                            let b = j - beta;
                            let hb = pts[a * (q + 1) + b];
                            acc += (project(hb) - corners[alpha][beta])
                                * (fa * elevation_factor(beta, b, q) * hb.w);
                        }
                    }
                    worst = worst.max(acc.length() / wmin);
                }
            }
        }
        worst
    }

    /// Upper bound of `max |S(u,v) - X(u,v)|`, `X` the bilinearly blended Coons patch of the four
    /// boundary curves. Polynomial: control points of `S - X` in the same basis, refined once by
    /// knot insertion at the worst control point (paper §3). Rational: `|S - L| + |X - L|` with
    /// `|X - L| <= max(dev of the u-curves) + max(dev of the v-curves)` (paper, Appendix A), or
    /// the derivative bound [`Self::coons_deviation_from_derivatives`] where smaller (it shrinks
    /// with the cube of the cell size where the net bound shrinks with its square).
    pub fn coons_deviation(&self) -> f64 {
        self.coons_deviation_parts().0
    }

    /// Upper bound of `max |S(u,v) - X(u,v)|` (as [`Self::coons_deviation`]) refined until it is
    /// at most `target` or the deviation is proven to exceed `target` (a point of `S - X` above
    /// it was found), within a budget of [`COONS_REFINE_BUDGET`] Bézier sub-patches.
    /// Polynomial surfaces: best-first de Casteljau subdivision of the Bézier pieces of the
    /// difference spline `S - X` (convex hull property), plus a rounding margin. Rational
    /// surfaces: [`Self::coons_deviation`].
    pub fn coons_deviation_within(&self, target: f64) -> f64 {
        let (quick, diff) = self.coons_deviation_parts();
        let Some(diff) = diff.filter(|_| quick > target) else {
            return quick;
        };
        let scale = self
            .homogeneous_points()
            .iter()
            .map(|h| h.truncate().abs().max_element())
            .fold(0.0, f64::max);
        let [p, q] = self.degree();
        let margin = 64.0 * f64::EPSILON * scale * (p + q + 2) as f64;
        let pieces: Vec<Vec<DVec3>> = diff
            .bezier_patches()
            .into_iter()
            .map(|(_, pts)| pts.iter().map(|h| h.truncate()).collect())
            .collect();
        let refined = super::bezier_max::max_norm_within(pieces, [p, q], target - margin) + margin;
        quick.min(refined)
    }

    /// [`Self::coons_deviation`] and, for polynomial surfaces with a non-zero deviation, the
    /// difference spline `S - X` it bounds: control points `s_ab - x_ab` in the basis of `S`,
    /// with `X` expressed exactly through linear precision (Greville abscissae).
    fn coons_deviation_parts(&self) -> (f64, Option<NurbsSurface>) {
        let h = self.homogeneous_points();
        if !is_polynomial(h) {
            let cd: Vec<f64> = (0..4)
                .map(|s| self.boundary_curve(s).chord_deviation())
                .collect();
            let net = self.bilinear_deviation() + cd[0].max(cd[1]) + cd[2].max(cd[3]);
            return (net.min(self.coons_deviation_from_derivatives()), None);
        }
        let [n, m] = self.count();
        let [p, q] = self.degree();
        let [ku, kv] = self.knots();
        let gu = greville_normalised(ku, p, n);
        let gv = greville_normalised(kv, q, m);
        let c = self.corner_points();
        let e = |i: usize, j: usize| h[i * m + j].truncate();
        let mut diff = Vec::with_capacity(n * m);
        let (mut worst, mut at) = (-1.0f64, (0, 0));
        for i in 0..n {
            for j in 0..m {
                let (s, t) = (gu[i], gv[j]);
                let x =
                    e(0, j) * (1.0 - s) + e(n - 1, j) * s + e(i, 0) * (1.0 - t) + e(i, m - 1) * t
                        - bilinear(&c, s, t);
                let d = e(i, j) - x;
                if d.length() > worst {
                    worst = d.length();
                    at = (i, j);
                }
                diff.push(d);
            }
        }
        if worst <= 0.0 {
            return (0.0, None);
        }
        let Ok(ds) = NurbsSurface::new([p, q], [ku.to_vec(), kv.to_vec()], [n, m], diff, None)
        else {
            return (worst, None);
        };
        // Refinement: insert the Greville parameter of the worst control point in both directions
        // into the difference spline and bound its refined control net.
        let dom = self.domain();
        let tu = dom.u0 + gu[at.0] * (dom.u1 - dom.u0);
        let tv = dom.v0 + gv[at.1] * (dom.v1 - dom.v0);
        let refined = ds
            .insert_knot(true, tu, 1)
            .insert_knot(false, tv, 1)
            .homogeneous_points()
            .iter()
            .map(|h| h.truncate().length())
            .fold(0.0, f64::max);
        (worst.min(refined), Some(ds))
    }

    /// Upper bound of `max |S - X|` from certified derivative bounds (per Bézier piece, quotient
    /// rule for rational surfaces: [`NurbsSurface::derivative_bounds`]). With `P_u`, `P_v` the
    /// linear interpolation operators across the domain widths `h_u`, `h_v`, the Coons error is
    /// `(I - P_u)(I - P_v) S`; the Peano kernel of linear interpolation (`|g - P g| <= h^2/8
    /// sup|g''|` and `<= h/2 sup|g'|`, `|I - P| <= 2`) gives
    /// `min(h_u^2 M_uu / 4, h_v^2 M_vv / 4, h_u^2 h_v M_uuv / 16, h_u h_v^2 M_uvv / 16)`.
    /// The terms in `h_u^2` need `S` to be C1 in u inside the domain (no interior u-knot of
    /// multiplicity >= the degree), those in `h_v^2` C1 in v; otherwise they are skipped
    /// (infinity when both are).
    pub fn coons_deviation_from_derivatives(&self) -> f64 {
        let d = self.domain();
        let (hu, hv) = (d.u1 - d.u0, d.v1 - d.v0);
        let [ku, kv] = self.knots();
        let [p, q] = self.degree();
        let (c1u, c1v) = (c1_inside(ku, p), c1_inside(kv, q));
        if !(c1u || c1v) {
            return f64::INFINITY;
        }
        let (mut muu, mut mvv, mut muuv, mut muvv) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for b in self.derivative_bounds() {
            muu = muu.max(b.duu);
            mvv = mvv.max(b.dvv);
            muuv = muuv.max(b.duuv);
            muvv = muvv.max(b.duvv);
        }
        let mut best = f64::INFINITY;
        if c1u {
            best = best
                .min(hu * hu * muu / 4.0)
                .min(hu * hu * hv * muuv / 16.0);
        }
        if c1v {
            best = best
                .min(hv * hv * mvv / 4.0)
                .min(hu * hv * hv * muvv / 16.0);
        }
        // Rounding of the products (the derivative bounds carry their own margin).
        best * (1.0 + 1e-12)
    }

    /// Largest second difference of the control net along u and along v (a flatness measure
    /// used to choose the subdivision direction).
    pub fn net_second_differences(&self) -> [f64; 2] {
        let [n, m] = self.count();
        let mut out = [0.0f64; 2];
        for i in 0..n {
            for j in 0..m {
                let c = self.control_point(i, j);
                if i > 0 && i + 1 < n {
                    out[0] = out[0].max(
                        (self.control_point(i - 1, j) - 2.0 * c + self.control_point(i + 1, j))
                            .length(),
                    );
                }
                if j > 0 && j + 1 < m {
                    out[1] = out[1].max(
                        (self.control_point(i, j - 1) - 2.0 * c + self.control_point(i, j + 1))
                            .length(),
                    );
                }
            }
        }
        out
    }
}
