//! Bézier extraction (`NurbsSurface::bezier_patches`, one insertion plan per direction applied
//! to every line) against the plain knot insertion of `NurbsSurface::insert_knot`, knot by
//! knot: the same nets, bit for bit.

use gprox_geometry::freeform::NurbsSurface;
use gprox_geometry::glam::{DVec3, DVec4};
use proptest::prelude::*;

/// A clamped knot vector of degree `p` over [0, 1] with the interior knots `inner` (sorted,
/// repeats kept up to `p`).
fn knots(p: usize, inner: &[f64]) -> Vec<f64> {
    let mut k = vec![0.0; p + 1];
    let mut inner = inner.to_vec();
    inner.sort_by(f64::total_cmp);
    for (i, &t) in inner.iter().enumerate() {
        let run = inner[..i].iter().rev().take_while(|&&x| x == t).count();
        if run < p {
            k.push(t);
        }
    }
    k.extend(std::iter::repeat_n(1.0, p + 1));
    k
}

/// The patches as `insert_knot` makes them: every interior knot to full multiplicity along u,
/// then along v, the nets cut from the refined control points.
fn patches_by_insertion(s: &NurbsSurface) -> Vec<Vec<DVec4>> {
    let [p, q] = s.degree();
    let interior = |k: &[f64]| {
        let mut v: Vec<f64> = k.iter().copied().filter(|&x| x > 0.0 && x < 1.0).collect();
        v.dedup();
        v
    };
    let [ku, kv] = s.knots();
    let (iu, iv) = (interior(ku), interior(kv));
    let mut r = s.clone();
    for &t in &iu {
        r = r.insert_knot(true, t, p);
    }
    for &t in &iv {
        r = r.insert_knot(false, t, q);
    }
    let m = r.count()[1];
    let h = r.homogeneous_points();
    let mut out = Vec::new();
    for a in 0..=iu.len() {
        for b in 0..=iv.len() {
            let net = (0..=p)
                .flat_map(|i| (0..=q).map(move |j| (i, j)))
                .map(|(i, j)| h[(a * p + i) * m + b * q + j])
                .collect();
            out.push(net);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn bezier_patches_equal_knot_by_knot_insertion(
        p in 1usize..5, q in 1usize..5,
        inner_u in prop::collection::vec(prop::sample::select(vec![0.125, 0.3, 0.5, 0.77]), 0..5),
        inner_v in prop::collection::vec(prop::sample::select(vec![0.2, 0.45, 0.6]), 0..4),
        c in prop::collection::vec((-2.0f64..2.0, -2.0f64..2.0, -2.0f64..2.0, 0.3f64..3.0), 81),
        rational in any::<bool>(),
    ) {
        let (ku, kv) = (knots(p, &inner_u), knots(q, &inner_v));
        let (n, m) = (ku.len() - p - 1, kv.len() - q - 1);
        prop_assume!(n * m <= c.len());
        let pts = c[..n * m].iter().map(|&(x, y, z, _)| DVec3::new(x, y, z)).collect();
        let w = rational.then(|| c[..n * m].iter().map(|&(.., w)| w).collect());
        let s = NurbsSurface::new([p, q], [ku, kv], [n, m], pts, w).unwrap();
        let got: Vec<Vec<DVec4>> = s.bezier_patches().into_iter().map(|(_, net)| net).collect();
        let want = patches_by_insertion(&s);
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            // Bit for bit: the same insertions in the same order.
            let bits = |v: &[DVec4]| v.iter().flat_map(|h| h.to_array().map(f64::to_bits)).collect::<Vec<_>>();
            prop_assert_eq!(bits(g), bits(w));
        }
    }
}
