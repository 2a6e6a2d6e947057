//! Certified bounds of the first and second partial derivatives of a NURBS surface, per Bézier
//! piece, from its control net (hodographs), as Greß, Guthe and Klein 2006 §7.3 use them to size
//! geometry images. Never sampled: every value bounds the supremum over the whole piece.
//!
//! With the homogeneous net `H = w (P - c)` (translated by the centre `c` of the Euclidean
//! control points, which leaves derivatives unchanged) and `S - c = H / w`, the quotient rule gives
//! `S_u = (H_u - w_u (S - c)) / w`,
//! `S_uu = (H_uu - 2 w_u S_u - w_uu (S - c)) / w` and
//! `S_uv = (H_uv - w_u S_v - w_v S_u - w_uv (S - c)) / w`, and the mixed third derivatives
//! (Leibniz on `H = w (S - c)`)
//! `S_uuv = (H_uuv - w_uuv (S - c) - w_uu S_v - 2 w_uv S_u - 2 w_u S_uv - w_v S_uu) / w` and
//! `S_uvv = (H_uvv - w_uvv (S - c) - w_vv S_u - 2 w_uv S_v - 2 w_v S_uv - w_u S_vv) / w`
//! (the Coons approximation error of a cell is bounded through them, see
//! [`NurbsSurface::coons_deviation`]).
//! `H` and `w` are polynomial Bézier patches, so the sup of each derivative is at most the largest
//! norm of its difference net (convex hull); `|S - c|` is at most the largest `|P - c|`, and
//! `w` at least the smallest weight. For polynomial surfaces (`w = 1`) only the hodograph terms
//! remain.

#![allow(clippy::needless_range_loop)] // index loops over control nets

use glam::{DVec3, DVec4};

use super::curve::project;
use super::{NurbsSurface, ParamRect};

/// Suprema (upper bounds) of the derivative norms of one Bézier piece, in the surface's own
/// parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DerivativeBounds {
    /// The piece's parameter rectangle.
    pub rect: ParamRect,
    /// `sup |∂S/∂u|`.
    pub du: f64,
    /// `sup |∂S/∂v|`.
    pub dv: f64,
    /// `sup |∂²S/∂u²|` (M_u of the paper).
    pub duu: f64,
    /// `sup |∂²S/∂u∂v|` (M_uv).
    pub duv: f64,
    /// `sup |∂²S/∂v²|` (M_v).
    pub dvv: f64,
    /// `sup |∂³S/∂u²∂v|`.
    pub duuv: f64,
    /// `sup |∂³S/∂u∂v²|`.
    pub duvv: f64,
}

impl DerivativeBounds {
    /// The bounds of one Bézier patch of degree `[p, q]` over `rect` from its homogeneous net
    /// (row-major `(p+1) x (q+1)`, as [`NurbsSurface::bezier_patches`] gives it).
    pub fn of_patch(rect: ParamRect, net: &[DVec4], degree: [usize; 2]) -> Self {
        piece_bounds(rect, net, degree)
    }
}

/// Relative slack covering the rounding of the difference nets.
const ROUNDING: f64 = 1e-9;

/// Largest vector norm and largest |w| of a difference net given by `f(i, j)` over `n x m`.
/// One square root at the end: `sqrt` is correctly rounded and monotonic, so the root of the
/// largest squared norm is the largest norm, bit for bit. (`>` keeps the maximum as
/// `f64::max` does, NaN terms included, without its NaN handling in the loop.)
fn net_max(n: usize, m: usize, f: impl Fn(usize, usize) -> DVec4) -> (f64, f64) {
    let (mut norm2, mut w) = (0.0f64, 0.0f64);
    for i in 0..n {
        for j in 0..m {
            let d = f(i, j);
            let l = d.truncate().length_squared();
            if l > norm2 {
                norm2 = l;
            }
            if d.w.abs() > w {
                w = d.w.abs();
            }
        }
    }
    (norm2.sqrt(), w)
}

/// Control points a net keeps on the stack (bicubic: 16).
const NET_STACK: usize = 16;

fn piece_bounds(rect: ParamRect, net: &[DVec4], degree: [usize; 2]) -> DerivativeBounds {
    if net.len() <= NET_STACK {
        let mut buf = [(DVec3::ZERO, DVec4::ZERO); NET_STACK];
        piece_bounds_in(rect, net, degree, &mut buf[..net.len()])
    } else {
        let mut buf = vec![(DVec3::ZERO, DVec4::ZERO); net.len()];
        piece_bounds_in(rect, net, degree, &mut buf)
    }
}

/// [`piece_bounds`] with `buf` (one slot per control point) for the Euclidean points and the
/// translated homogeneous net.
fn piece_bounds_in(
    rect: ParamRect,
    net: &[DVec4],
    [p, q]: [usize; 2],
    buf: &mut [(DVec3, DVec4)],
) -> DerivativeBounds {
    let w = q + 1;
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let mut wmin = f64::INFINITY;
    for (h, slot) in net.iter().zip(buf.iter_mut()) {
        let e = project(*h);
        slot.0 = e;
        lo = lo.min(e);
        hi = hi.max(e);
        wmin = wmin.min(h.w);
    }
    let c = (lo + hi) * 0.5;
    let mut radius = 0.0f64;
    for (h, slot) in net.iter().zip(buf.iter_mut()) {
        radius = radius.max((slot.0 - c).length());
        slot.1 = (slot.0 - c).extend(1.0) * h.w;
    }
    let t = &*buf;
    let at = |i: usize, j: usize| t[i * w + j].1;
    let (su, sv) = (1.0 / (rect.u1 - rect.u0), 1.0 / (rect.v1 - rect.v0));
    let (fp, fq) = (p as f64, q as f64);
    let (n1u, w1u) = if p >= 1 {
        net_max(p, q + 1, |i, j| (at(i + 1, j) - at(i, j)) * (fp * su))
    } else {
        (0.0, 0.0)
    };
    let (n1v, w1v) = if q >= 1 {
        net_max(p + 1, q, |i, j| (at(i, j + 1) - at(i, j)) * (fq * sv))
    } else {
        (0.0, 0.0)
    };
    let (n2uu, w2uu) = if p >= 2 {
        net_max(p - 1, q + 1, |i, j| {
            (at(i + 2, j) - at(i + 1, j) * 2.0 + at(i, j)) * (fp * (fp - 1.0) * su * su)
        })
    } else {
        (0.0, 0.0)
    };
    let (n2vv, w2vv) = if q >= 2 {
        net_max(p + 1, q - 1, |i, j| {
            (at(i, j + 2) - at(i, j + 1) * 2.0 + at(i, j)) * (fq * (fq - 1.0) * sv * sv)
        })
    } else {
        (0.0, 0.0)
    };
    let (n2uv, w2uv) = if p >= 1 && q >= 1 {
        net_max(p, q, |i, j| {
            (at(i + 1, j + 1) - at(i + 1, j) - at(i, j + 1) + at(i, j)) * (fp * fq * su * sv)
        })
    } else {
        (0.0, 0.0)
    };
    let (n3uuv, w3uuv) = if p >= 2 && q >= 1 {
        net_max(p - 1, q, |i, j| {
            let d2 = |j: usize| at(i + 2, j) - at(i + 1, j) * 2.0 + at(i, j);
            (d2(j + 1) - d2(j)) * (fp * (fp - 1.0) * fq * su * su * sv)
        })
    } else {
        (0.0, 0.0)
    };
    let (n3uvv, w3uvv) = if p >= 1 && q >= 2 {
        net_max(p, q - 1, |i, j| {
            let d2 = |i: usize| at(i, j + 2) - at(i, j + 1) * 2.0 + at(i, j);
            (d2(i + 1) - d2(i)) * (fq * (fq - 1.0) * fp * sv * sv * su)
        })
    } else {
        (0.0, 0.0)
    };
    let up = |x: f64| x * (1.0 + ROUNDING);
    let du = up((n1u + w1u * radius) / wmin);
    let dv = up((n1v + w1v * radius) / wmin);
    let duu = up((n2uu + 2.0 * w1u * du + w2uu * radius) / wmin);
    let duv = up((n2uv + w1u * dv + w1v * du + w2uv * radius) / wmin);
    let dvv = up((n2vv + 2.0 * w1v * dv + w2vv * radius) / wmin);
    DerivativeBounds {
        rect,
        du,
        dv,
        duu,
        duv,
        dvv,
        duuv: up((n3uuv
            + w3uuv * radius
            + w2uu * dv
            + 2.0 * w2uv * du
            + 2.0 * w1u * duv
            + w1v * duu)
            / wmin),
        duvv: up((n3uvv
            + w3uvv * radius
            + w2vv * du
            + 2.0 * w2uv * dv
            + 2.0 * w1v * duv
            + w1u * dvv)
            / wmin),
    }
}

impl NurbsSurface {
    /// Certified derivative bounds of every Bézier piece (see the module documentation).
    ///
    /// ```
    /// use gprox_geometry::freeform::NurbsSurface;
    /// use gprox_geometry::glam::DVec3;
    /// // S(u, v) = (2u, v, 0): |S_u| = 2, |S_v| = 1, no curvature.
    /// let pts = vec![DVec3::ZERO, DVec3::Y, DVec3::new(2.0, 0.0, 0.0), DVec3::new(2.0, 1.0, 0.0)];
    /// let s = NurbsSurface::bezier([1, 1], pts, None).unwrap();
    /// let b = s.derivative_bounds()[0];
    /// assert!((b.du - 2.0).abs() < 1e-6 && (b.dv - 1.0).abs() < 1e-6 && b.duu == 0.0);
    /// ```
    pub fn derivative_bounds(&self) -> Vec<DerivativeBounds> {
        let degree = self.degree();
        self.bezier_patches()
            .into_iter()
            .map(|(r, net)| piece_bounds(r, &net, degree))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;
    use proptest::prelude::*;

    use crate::freeform::{GridEvaluator, NurbsSurface};

    /// A random clamped surface of degrees (p, q) with one interior knot per direction.
    fn surface(
        c: &[(f64, f64, f64)],
        w: &[f64],
        p: usize,
        q: usize,
        rational: bool,
    ) -> NurbsSurface {
        let (n, m) = (p + 2, q + 2);
        let kn = |d: usize| {
            let mut k = vec![0.0; d + 1];
            k.push(0.4);
            k.extend(std::iter::repeat_n(1.0, d + 1));
            k
        };
        let pts = (0..n * m)
            .map(|k| DVec3::new(c[k].0, c[k].1, c[k].2))
            .collect();
        let ws = rational.then(|| w[..n * m].to_vec());
        NurbsSurface::new([p, q], [kn(p), kn(q)], [n, m], pts, ws).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Sampled derivatives (The NURBS Book A4.4, an independent evaluation) never exceed the
        /// certified bounds of their piece.
        #[test]
        fn bounds_hold_at_samples(
            c in prop::collection::vec((-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0), 25),
            w in prop::collection::vec(0.4f64..2.5, 25),
            p in 1usize..4, q in 1usize..4, rational in any::<bool>(),
        ) {
            let s = surface(&c, &w, p, q, rational);
            let bounds = s.derivative_bounds();
            for a in 0..=12 {
                for b in 0..=12 {
                    let (u, v) = (a as f64 / 12.0, b as f64 / 12.0);
                    let d = s.derivatives(u, v);
                    let r = bounds.iter().find(|r| r.rect.contains(u, v)).unwrap();
                    let ok = |x: DVec3, bound: f64| x.length() <= bound * (1.0 + 1e-9) + 1e-12;
                    prop_assert!(ok(d.du, r.du) && ok(d.dv, r.dv));
                    prop_assert!(ok(d.duu, r.duu) && ok(d.duv, r.duv) && ok(d.dvv, r.dvv));
                }
            }
        }

        /// Mixed third derivatives, sampled by central differences of the (independently
        /// evaluated) second derivatives inside each piece, never exceed the certified bounds.
        #[test]
        fn third_derivative_bounds_hold_at_samples(
            c in prop::collection::vec((-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0), 25),
            w in prop::collection::vec(0.4f64..2.5, 25),
            p in 1usize..4, q in 1usize..4, rational in any::<bool>(),
        ) {
            let s = surface(&c, &w, p, q, rational);
            let h = 1e-5;
            for r in s.derivative_bounds() {
                for a in 1..=5 {
                    for b in 1..=5 {
                        let u = r.rect.u0 + (r.rect.u1 - r.rect.u0) * a as f64 / 6.0;
                        let v = r.rect.v0 + (r.rect.v1 - r.rect.v0) * b as f64 / 6.0;
                        let uuv = (s.derivatives(u, v + h).duu - s.derivatives(u, v - h).duu) / (2.0 * h);
                        let uvv = (s.derivatives(u + h, v).dvv - s.derivatives(u - h, v).dvv) / (2.0 * h);
                        // Central differences carry O(h^2) truncation and O(eps/h) rounding.
                        prop_assert!(uuv.length() <= r.duuv * (1.0 + 1e-3) + 1e-4, "uuv {} > {}", uuv.length(), r.duuv);
                        prop_assert!(uvv.length() <= r.duvv * (1.0 + 1e-3) + 1e-4, "uvv {} > {}", uvv.length(), r.duvv);
                    }
                }
            }
        }

        /// Grid evaluation equals point evaluation up to rounding.
        #[test]
        fn grid_matches_points(
            c in prop::collection::vec((-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0), 25),
            w in prop::collection::vec(0.4f64..2.5, 25),
            p in 1usize..4, q in 1usize..4, rational in any::<bool>(),
        ) {
            let s = surface(&c, &w, p, q, rational);
            let us: Vec<f64> = (0..=9).map(|i| i as f64 / 9.0).collect();
            let vs: Vec<f64> = (0..=7).map(|j| j as f64 / 7.0).collect();
            let g = GridEvaluator::new(&s, &us, &vs);
            // A rotation about z by 0.7 with a scale of 1.5 and a shift.
            let (sn, cs) = 0.7f64.sin_cos();
            let rows = [[1.5 * cs, -1.5 * sn, 0.0, 0.3], [1.5 * sn, 1.5 * cs, 0.0, -2.0], [0.0, 0.0, 1.5, 0.5]];
            let mut moved = g.clone();
            moved.transform(&rows);
            for (j, &v) in vs.iter().enumerate() {
                for (i, &u) in us.iter().enumerate() {
                    let x = s.point(u, v);
                    prop_assert!(g.point(i, j).distance(x) < 1e-12);
                    let y = rows.map(|r| r[0] * x.x + r[1] * x.y + r[2] * x.z + r[3]);
                    prop_assert!(moved.point(i, j).distance(y.into()) < 1e-11);
                }
            }
        }
    }
}
