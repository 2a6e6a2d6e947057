//! Vertex–face CCD against a face that is degenerate (collinear or coincident corners) over the
//! whole step, decided as three vertex–edge tests.
//!
//! When the corners `a(t), b(t), c(t)` are collinear at every `t`, the triangle at each time is
//! the union of its three edges, so the vertex meets the face (within the minimum separation,
//! L∞) exactly when it meets one of the edges `ab`, `ac`, `bc`. Each vertex–edge test is the
//! edge–edge test with a zero-length first edge `[p, p]`: a problem in `(t, s)` whose contacts
//! are isolated, where the `(t, u, v)` inclusion search of a zero-area face cannot converge
//! (there the contacts at one time form a curve in `(u, v)`). Collinearity over the step is
//! certified exactly: `h(t) × k(t)` (with `h = a - b`, `k = a - c`) is a quadratic whose three
//! Bernstein coefficients are evaluated in floating-point expansions ([`super::exact`]).

use glam::DVec3;

use super::exact::{in_exact_range, Expansion};
use super::filter::excluded;
use super::{edge_edge_unchecked, CcdOptions, Toi};

/// Unit roundoff `2^-53`.
const U: f64 = f64::EPSILON * 0.5;

/// `x × y` component `i`, exactly.
fn cross_component(x: &[Expansion; 3], y: &[Expansion; 3], i: usize) -> Expansion {
    let (j, l) = ((i + 1) % 3, (i + 2) % 3);
    x[j].mul(&y[l]).sub(&x[l].mul(&y[j]))
}

/// Whether the face `(a, b, c)` of a vertex–face query `[p, a, b, c]` has collinear (or
/// coincident) corners at every `t ∈ [0, 1]`, certified exactly. `false` also when the
/// coordinates lie outside the exact range ([`in_exact_range`]).
pub(crate) fn face_always_collinear(start: &[DVec3; 4], end: &[DVec3; 4]) -> bool {
    // Screen in f64: a Bernstein coefficient far above its rounding error is certainly
    // non-zero. Differences err by ≤ u|·|, cross products by ≤ 4u of `scale`, the middle
    // coefficient's sum by ≤ 8u (a threshold of 2^-20 leaves a wide margin).
    let (h0, k0) = (start[1] - start[2], start[1] - start[3]);
    let (h1, k1) = (end[1] - end[2], end[1] - end[3]);
    let scale = h0.abs().max(h1.abs()).max_element() * k0.abs().max(k1.abs()).max_element();
    let coef = [h0.cross(k0), h0.cross(k1) + h1.cross(k0), h1.cross(k1)];
    let limit = scale * (1u64 << 33) as f64 * U;
    if !limit.is_finite() || coef.iter().any(|c| c.abs().max_element() > limit) {
        return false;
    }
    let coords = start[1..]
        .iter()
        .chain(&end[1..])
        .flat_map(|p| p.to_array());
    if !in_exact_range(coords) {
        return false;
    }
    let diff = |x: DVec3, y: DVec3| -> [Expansion; 3] {
        std::array::from_fn(|i| Expansion::diff(x[i], y[i]))
    };
    let (h0, k0) = (diff(start[1], start[2]), diff(start[1], start[3]));
    let (h1, k1) = (diff(end[1], end[2]), diff(end[1], end[3]));
    (0..3).all(|i| {
        cross_component(&h0, &k0, i).is_zero()
            && cross_component(&h1, &k1, i).is_zero()
            && cross_component(&h0, &k1, i)
                .add(&cross_component(&h1, &k0, i))
                .is_zero()
    })
}

/// Vertex–face test of `[p, a, b, c]` whose face is collinear all along
/// ([`face_always_collinear`]): the earliest of the vertex–edge tests against `ab`, `ac` and
/// `bc`, each witness mapped back to the face's barycentric weights (exactly: `1 - s` of a
/// dyadic `s ∈ [0, 1]` is exact). An undecided answer carries the tightest separation bound
/// found by any of the three.
pub(crate) fn vertex_face_collinear(
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> Option<Toi> {
    let sep = opts.min_separation.max(0.0);
    let mut first: Option<Toi> = None;
    let mut tightest: Option<(f64, [f64; 3])> = None;
    for (e, (i, j)) in [(1, 2), (1, 3), (2, 3)].into_iter().enumerate() {
        let s = [start[0], start[0], start[i], start[j]];
        let f = [end[0], end[0], end[i], end[j]];
        if excluded(&s, &f, 2, sep) {
            continue;
        }
        let Some(mut toi) = edge_edge_unchecked(s, f, opts) else {
            continue;
        };
        // Edge–edge `F = (p - x) + v (x - y)`: the point `x + v (y - x)` of the face.
        let [t, _, w] = toi.witness;
        toi.witness = match e {
            0 => [t, w, 0.0],
            1 => [t, 0.0, w],
            _ => [t, 1.0 - w, w],
        };
        if tightest.is_none_or(|(s, _)| toi.separation < s) {
            tightest = Some((toi.separation, toi.witness));
        }
        let earlier = first.is_none_or(|b| {
            toi.t_lo < b.t_lo || (toi.t_lo == b.t_lo && toi.is_certified() && !b.is_certified())
        });
        if earlier {
            first = Some(toi);
        }
    }
    let mut toi = first?;
    if !toi.is_certified() {
        if let Some((s, w)) = tightest {
            toi.separation = s;
            toi.witness = w;
        }
    }
    Some(toi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_rational::BigRational;
    use num_traits::Zero;
    use proptest::prelude::*;

    fn q(x: f64) -> BigRational {
        BigRational::from_float(x).expect("finite")
    }

    /// The oracle: the Bernstein coefficients of `h(t) × k(t)` in exact rationals.
    fn collinear_rational(start: &[DVec3; 4], end: &[DVec3; 4]) -> bool {
        let diff = |x: DVec3, y: DVec3| [0, 1, 2].map(|i| q(x[i]) - q(y[i]));
        let cross = |x: &[BigRational; 3], y: &[BigRational; 3]| {
            [0, 1, 2].map(|i| {
                let (j, l) = ((i + 1) % 3, (i + 2) % 3);
                &x[j] * &y[l] - &x[l] * &y[j]
            })
        };
        let (h0, k0) = (diff(start[1], start[2]), diff(start[1], start[3]));
        let (h1, k1) = (diff(end[1], end[2]), diff(end[1], end[3]));
        let (c0, c2) = (cross(&h0, &k0), cross(&h1, &k1));
        let (x, y) = (cross(&h0, &k1), cross(&h1, &k0));
        (0..3).all(|i| c0[i].is_zero() && c2[i].is_zero() && (&x[i] + &y[i]).is_zero())
    }

    fn dvec(v: [i32; 3], e: i32) -> DVec3 {
        DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64) * 2f64.powi(e)
    }

    proptest! {
        /// Faces built collinear (a point plus multiples of one direction at each end, which
        /// may change between the ends), then possibly nudged by one ulp on one coordinate:
        /// the expansion test agrees with exact rationals.
        #[test]
        fn collinearity_matches_rationals(
            a in proptest::array::uniform2(proptest::array::uniform3(-1000i32..1000)),
            dir in proptest::array::uniform2(proptest::array::uniform3(-64i32..64)),
            same_dir in any::<bool>(),
            s in proptest::array::uniform4(-16i32..16),
            e in -40i32..40,
            nudge in proptest::option::of((0usize..6, 0usize..3, any::<bool>())),
        ) {
            let d1 = if same_dir { dir[0] } else { dir[1] };
            let (a0, a1) = (dvec(a[0], e), dvec(a[1], e));
            let (e0, e1) = (dvec(dir[0], e), dvec(d1, e));
            let p = DVec3::new(0.5, 0.25, 0.125);
            let mut start = [p, a0, a0 + e0 * s[0] as f64, a0 + e0 * s[1] as f64];
            let mut end = [p, a1, a1 + e1 * s[2] as f64, a1 + e1 * s[3] as f64];
            if let Some((k, axis, up)) = nudge {
                let pt = if k < 3 { &mut start[k + 1] } else { &mut end[k - 2] };
                // One ulp away from or towards zero (zeros stay: a subnormal is out of range).
                let x = pt[axis];
                if x != 0.0 {
                    pt[axis] = f64::from_bits(if up { x.to_bits() + 1 } else { x.to_bits() - 1 });
                }
            }
            prop_assert_eq!(
                face_always_collinear(&start, &end),
                collinear_rational(&start, &end)
            );
        }
    }
}
