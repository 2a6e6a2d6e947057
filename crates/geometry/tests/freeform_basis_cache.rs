//! Cached basis values (Kim et al. 2011 §6) give the same points as direct evaluation:
//! bitwise equal to `NurbsSurface::point`, within 1e-15 relative of the second-order
//! evaluation path, and within 1e-9 of the OpenCASCADE reference samples. Also: the refined
//! Coons deviation bound never under-estimates the sampled deviation.

use std::path::Path;

use gprox_geometry::freeform::basis_cache::BasisCache;
use gprox_geometry::freeform::{load_nurbs_json, teapot, NurbsSurface};
use gprox_geometry::glam::DVec3;
use proptest::prelude::*;
use serde_json::Value;

#[path = "common/nurbs_data.rs"]
mod nurbs_data;
use nurbs_data::{nurbs_dir, surface_files};

/// A reference surface: file name, surface, OCCT samples `(u, v, point)`.
type Reference = (String, NurbsSurface, Vec<(f64, f64, DVec3)>);

/// Reference surfaces with their OCCT samples.
fn reference_surfaces(dir: &Path) -> Vec<Reference> {
    let files = surface_files(dir);
    files
        .into_iter()
        .map(|f| {
            let s = load_nurbs_json(&f).unwrap();
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let samples = doc["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    let p: Vec<f64> = x["point"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c.as_f64().unwrap())
                        .collect();
                    (
                        x["u"].as_f64().unwrap(),
                        x["v"].as_f64().unwrap(),
                        DVec3::new(p[0], p[1], p[2]),
                    )
                })
                .collect();
            (f.display().to_string(), s, samples)
        })
        .collect()
}

/// Dyadic parameters `d0 + k/2^level (d1 - d0)` of a domain (the traversal's mid-points).
fn dyadic(d0: f64, d1: f64, level: u32) -> Vec<f64> {
    let n = 1u32 << level;
    (0..=n)
        .map(|k| d0 + (d1 - d0) * f64::from(k) / f64::from(n))
        .collect()
}

/// Fills a cache with the given parameters and checks every cached evaluation at them, plus
/// parameters that are not cached (direct fallback), against direct evaluation.
fn check_surfaces(name: &str, surfaces: &[NurbsSurface], extra: &[(usize, f64, f64)]) {
    let mut cache = BasisCache::new(surfaces);
    let mut cached = Vec::new();
    for (i, s) in surfaces.iter().enumerate() {
        let d = s.domain();
        let (us, vs) = (dyadic(d.u0, d.u1, 4), dyadic(d.v0, d.v1, 4));
        for &u in &us {
            cache.insert(i, true, u);
        }
        for &v in &vs {
            cache.insert(i, false, v);
        }
        for &u in &us {
            for &v in &vs {
                cached.push((i, u, v));
            }
        }
    }
    for &(i, u, v) in extra {
        cache.insert(i, true, u);
        cache.insert(i, false, v);
        cached.push((i, u, v));
    }
    assert!(!cache.is_empty());
    // Uncached parameters: irrational-ish fractions of the domain (fallback path).
    let mut uncached = Vec::new();
    for (i, s) in surfaces.iter().enumerate() {
        let d = s.domain();
        for k in 0..7 {
            let f = (0.1 + 0.123_456_7 * f64::from(k)) % 1.0;
            uncached.push((i, d.u0 + f * (d.u1 - d.u0), d.v1 - f * (d.v1 - d.v0)));
        }
    }
    for &(i, u, v) in cached.iter().chain(&uncached) {
        let s = &surfaces[i];
        let e = cache.evaluator(s, i);
        let got = e.point(u, v);
        let want = s.point(u, v);
        assert_eq!(
            got.to_array().map(f64::to_bits),
            want.to_array().map(f64::to_bits),
            "{name}: surface {i} at ({u}, {v}): cached {got} != direct {want}"
        );
        let d2 = s.derivatives(u, v).point;
        let scale = d2.length().max(1.0);
        assert!(
            (got - d2).length() <= 1e-15 * scale,
            "{name}: surface {i} at ({u}, {v}): {got} vs {d2}"
        );
    }
}

#[test]
fn cached_points_equal_direct_on_reference_nurbs() {
    let Some(dir) = nurbs_dir() else { return };
    let refs = reference_surfaces(&dir);
    assert!(refs.len() >= 8, "expected the 8 reference surfaces");
    for (name, s, samples) in &refs {
        let extra: Vec<(usize, f64, f64)> = samples.iter().map(|&(u, v, _)| (0, u, v)).collect();
        check_surfaces(name, std::slice::from_ref(s), &extra);
        // And against the OpenCASCADE samples.
        let mut cache = BasisCache::new(std::slice::from_ref(s));
        for &(_, u, v) in &extra {
            cache.insert(0, true, u);
            cache.insert(0, false, v);
        }
        let (lo, hi) = s.control_bounds();
        let scale = (hi - lo).length();
        for &(u, v, want) in samples {
            let got = cache.evaluator(s, 0).point(u, v);
            assert!(
                (got - want).length() <= 1e-9 * want.length().max(scale * 1e-3),
                "{name}: ({u}, {v}): {got} vs OCCT {want}"
            );
        }
    }
}

#[test]
fn cached_points_equal_direct_on_teapot() {
    let t = teapot();
    // The 32 Bézier patches share one knot vector: one table serves all of them.
    let cache = BasisCache::new(&t);
    assert_eq!(cache.table_count(), 1);
    check_surfaces("teapot", &t, &[(5, 0.3, 0.7), (31, 1.0, 0.0)]);
    let merged = gprox_geometry::freeform::merge::merge_adjacent(&t);
    check_surfaces("merged teapot", &merged, &[]);
}

#[test]
fn mismatched_surfaces_fall_back_to_direct_evaluation() {
    let t = teapot();
    let merged = gprox_geometry::freeform::merge::merge_adjacent(&t);
    let mut cache = BasisCache::new(&merged);
    cache.insert(0, true, 0.5);
    cache.insert(0, false, 0.5);
    // Surface 0 of the unmerged teapot has other knot vectors: the tables must not be used.
    let p = cache.evaluator(&t[0], 0).point(0.5, 0.5);
    assert_eq!(p, t[0].point(0.5, 0.5));
}

fn polynomial_surface() -> impl Strategy<Value = NurbsSurface> {
    (
        1usize..=3,
        1usize..=3,
        prop::collection::vec(-1.0f64..1.0, 3 * 42),
        any::<bool>(),
    )
        .prop_map(|(p, q, c, split_knot)| {
            let (nu, nv) = (if split_knot { p + 3 } else { p + 1 }, q + 1);
            let pts: Vec<DVec3> = (0..nu * nv)
                .map(|k| {
                    let (i, j) = (k / nv, k % nv);
                    DVec3::new(i as f64, j as f64, 0.0)
                        + DVec3::new(c[3 * k], c[3 * k + 1], c[3 * k + 2]) * 0.4
                })
                .collect();
            let mut ku = vec![0.0; p + 1];
            if split_knot {
                ku.push(0.3);
                ku.push(0.6);
            }
            ku.extend(std::iter::repeat_n(1.0, p + 1));
            let mut kv = vec![0.5; q + 1];
            kv.extend(std::iter::repeat_n(2.0, q + 1));
            NurbsSurface::new([p, q], [ku, kv], [nu, nv], pts, None).unwrap()
        })
}

/// Dense-sample maximum of `|S - X|`, `X` the Coons patch of the boundary curves.
fn sampled_coons_deviation(s: &NurbsSurface, n: usize) -> f64 {
    let d = s.domain();
    let at = |a: f64, b: f64| s.point(d.u0 + a * (d.u1 - d.u0), d.v0 + b * (d.v1 - d.v0));
    let c = [at(0.0, 0.0), at(1.0, 0.0), at(0.0, 1.0), at(1.0, 1.0)];
    let mut worst = 0.0f64;
    for i in 0..=n {
        for j in 0..=n {
            let (a, b) = (i as f64 / n as f64, j as f64 / n as f64);
            let x =
                at(0.0, b) * (1.0 - a) + at(1.0, b) * a + at(a, 0.0) * (1.0 - b) + at(a, 1.0) * b
                    - ((c[0] * (1.0 - a) + c[1] * a) * (1.0 - b)
                        + (c[2] * (1.0 - a) + c[3] * a) * b);
            worst = worst.max((at(a, b) - x).length());
        }
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The refined bound is an upper bound of the dense-sampled deviation at every target, and
    /// never looser than the control-net bound.
    #[test]
    fn refined_coons_deviation_bounds_samples(s in polynomial_surface(), f in 0.0f64..1.5) {
        let quick = s.coons_deviation();
        let sampled = sampled_coons_deviation(&s, 24);
        let target = f * sampled;
        let refined = s.coons_deviation_within(target);
        // Slack: rounding of the sampled Coons points (coordinates are O(1)).
        prop_assert!(refined >= sampled - 1e-13, "refined {refined} < sampled {sampled}");
        prop_assert!(refined <= quick, "refined {refined} > quick {quick}");
    }
}

/// Rational surfaces with weights in [0.2, 5], smooth or with a C0 crease (an interior u-knot of
/// full multiplicity), restricted to a random sub-rectangle (where the derivative bound is the
/// active one).
fn rational_surface() -> impl Strategy<Value = NurbsSurface> {
    (
        2usize..=3,
        1usize..=3,
        prop::collection::vec(-1.0f64..1.0, 3 * 42),
        prop::collection::vec(0.2f64..5.0, 42),
        any::<bool>(),
        (0.0f64..0.9, 0.01f64..1.0, 0.0f64..0.9, 0.01f64..1.0),
    )
        .prop_map(|(p, q, c, w, crease, (a, da, b, db))| {
            let (nu, nv) = (if crease { 2 * p + 1 } else { p + 3 }, q + 2);
            let pts: Vec<DVec3> = (0..nu * nv)
                .map(|k| {
                    let (i, j) = (k / nv, k % nv);
                    DVec3::new(i as f64, j as f64, 0.0)
                        + DVec3::new(c[3 * k], c[3 * k + 1], c[3 * k + 2]) * 0.8
                })
                .collect();
            let mut ku = vec![0.0; p + 1];
            if crease {
                ku.extend(std::iter::repeat_n(0.5, p));
            } else {
                ku.push(0.3);
                ku.push(0.6);
            }
            ku.extend(std::iter::repeat_n(1.0, p + 1));
            let mut kv = vec![0.0; q + 1];
            kv.push(0.45);
            kv.extend(std::iter::repeat_n(1.0, q + 1));
            let s = NurbsSurface::new([p, q], [ku, kv], [nu, nv], pts, Some(w[..nu * nv].to_vec()))
                .unwrap();
            let (u1, v1) = ((a + da).min(1.0), (b + db).min(1.0));
            s.restrict(&gprox_geometry::freeform::ParamRect::new(a, u1, b, v1))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The rational Coons bound (net and derivative bounds) is an upper bound of the
    /// dense-sampled deviation, creased or not.
    #[test]
    fn rational_coons_deviation_bounds_samples(s in rational_surface()) {
        let bound = s.coons_deviation();
        let sampled = sampled_coons_deviation(&s, 24);
        prop_assert!(bound >= sampled - 1e-12, "bound {bound} < sampled {sampled}");
        prop_assert!(s.coons_deviation_from_derivatives() >= sampled - 1e-12);
    }
}
