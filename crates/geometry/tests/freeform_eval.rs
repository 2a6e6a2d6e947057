//! Spline evaluation against the OpenCASCADE reference samples in `shared/data/nurbs`.

use std::path::Path;

use gprox_geometry::freeform::{load_nurbs_json, NurbsSurface, ParamRect};
use gprox_geometry::glam::DVec3;
use serde_json::Value;

#[path = "common/nurbs_data.rs"]
mod nurbs_data;
use nurbs_data::{nurbs_dir, surface_files};

fn v3(v: &Value) -> DVec3 {
    let a: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    DVec3::new(a[0], a[1], a[2])
}

fn rel_err(got: DVec3, want: DVec3, scale: f64) -> f64 {
    (got - want).length() / want.length().max(scale)
}

#[test]
fn samples_match_occt() {
    let Some(dir) = nurbs_dir() else { return };
    let files = surface_files(&dir);
    assert!(files.len() >= 8, "expected the 8 surface files");
    for f in files {
        let s = load_nurbs_json(&f).unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let (lo, hi) = s.control_bounds();
        let scale = (hi - lo).length();
        let samples = doc["samples"].as_array().unwrap();
        assert!(!samples.is_empty());
        for (k, smp) in samples.iter().enumerate() {
            let (u, v) = (smp["u"].as_f64().unwrap(), smp["v"].as_f64().unwrap());
            let d = s.derivatives(u, v);
            let p = s.point(u, v);
            for (name, got, want, tol) in [
                ("point", p, v3(&smp["point"]), 1e-9),
                ("point(d2)", d.point, v3(&smp["point"]), 1e-9),
                ("du", d.du, v3(&smp["du"]), 1e-9),
                ("dv", d.dv, v3(&smp["dv"]), 1e-9),
                ("duu", d.duu, v3(&smp["duu"]), 1e-9),
                ("duv", d.duv, v3(&smp["duv"]), 1e-9),
                ("dvv", d.dvv, v3(&smp["dvv"]), 1e-9),
            ] {
                // Relative to the larger of the value and a scale for that derivative order
                // (derivative vectors that vanish are compared against the model scale).
                let e = rel_err(got, want, scale * 1e-3);
                assert!(
                    e <= tol,
                    "{}: sample {k} {name}: got {got}, want {want}, rel {e:e}",
                    f.display()
                );
            }
        }
    }
}

/// Splitting, restriction and Bézier extraction keep the geometry: pieces evaluate to the
/// original surface at the mapped parameters.
#[test]
fn split_restrict_and_bezier_extraction_keep_geometry() {
    let Some(dir) = nurbs_dir() else { return };
    for f in surface_files(&dir) {
        let s = load_nurbs_json(&f).unwrap();
        let d = s.domain();
        let (lo, hi) = s.control_bounds();
        let tol = 1e-11 * (hi - lo).length().max(1.0);
        let um = d.u0 + 0.37 * (d.u1 - d.u0);
        let vm = d.v0 + 0.61 * (d.v1 - d.v0);
        let (a, b) = s.split(true, um).unwrap();
        let (c, e) = s.split(false, vm).unwrap();
        let r = ParamRect::new(
            d.u0 + 0.2 * (d.u1 - d.u0),
            d.u0 + 0.7 * (d.u1 - d.u0),
            vm,
            d.v1,
        );
        let sub = s.restrict(&r);
        let patches = s.bezier_patches();
        for i in 0..=10 {
            for j in 0..=10 {
                let (fu, fv) = (i as f64 / 10.0, j as f64 / 10.0);
                let (u, v) = s.clamp_param(d.u0 + fu * (d.u1 - d.u0), d.v0 + fv * (d.v1 - d.v0));
                let want = s.point(u, v);
                let piece = if u <= um { &a } else { &b };
                assert!(
                    (piece.point(u, v) - want).length() < tol,
                    "{} split u",
                    f.display()
                );
                let piece = if v <= vm { &c } else { &e };
                assert!(
                    (piece.point(u, v) - want).length() < tol,
                    "{} split v",
                    f.display()
                );
                let (ru, rv) = (r.u0 + fu * (r.u1 - r.u0), r.v0 + fv * (r.v1 - r.v0));
                assert!(
                    (sub.point(ru, rv) - s.point(ru, rv)).length() < tol,
                    "{} restrict",
                    f.display()
                );
                let Some((rect, pts)) = patches.iter().find(|(rc, _)| rc.contains(u, v)) else {
                    panic!(
                        "{}: no patch at {u},{v}: {:?}",
                        f.display(),
                        patches.iter().map(|p| p.0).collect::<Vec<_>>()
                    )
                };
                let bez = bezier_from(s.degree(), pts);
                let (bu, bv) = (
                    (u - rect.u0) / (rect.u1 - rect.u0),
                    (v - rect.v0) / (rect.v1 - rect.v0),
                );
                assert!(
                    (bez.point(bu, bv) - want).length() < tol,
                    "{} bezier",
                    f.display()
                );
            }
        }
        // The control-net box contains the surface.
        for i in 0..=20 {
            for j in 0..=20 {
                let p = s.point(
                    d.u0 + i as f64 / 20.0 * (d.u1 - d.u0),
                    d.v0 + j as f64 / 20.0 * (d.v1 - d.v0),
                );
                assert!(p.cmpge(lo - tol).all() && p.cmple(hi + tol).all());
            }
        }
    }
}

fn bezier_from(
    deg: [usize; 2],
    pts: &[gprox_geometry::glam::DVec4],
) -> gprox_geometry::freeform::BezierPatch {
    let e: Vec<DVec3> = pts.iter().map(|h| h.truncate() / h.w).collect();
    let w: Vec<f64> = pts.iter().map(|h| h.w).collect();
    gprox_geometry::freeform::BezierPatch::new(deg, e, Some(w)).unwrap()
}

#[test]
fn validation_errors_name_the_problem() {
    use gprox_geometry::freeform::FreeformError as E;
    let pts = vec![DVec3::ZERO; 4];
    let k = vec![0.0, 0.0, 1.0, 1.0];
    let ok = |s: Result<NurbsSurface, E>| s.map(|_| ());
    assert!(ok(NurbsSurface::new(
        [1, 1],
        [k.clone(), k.clone()],
        [2, 2],
        pts.clone(),
        None
    ))
    .is_ok());
    assert!(matches!(
        NurbsSurface::new(
            [0, 1],
            [vec![0.0, 1.0], k.clone()],
            [2, 2],
            pts.clone(),
            None
        ),
        Err(E::BadDegree { direction: "u", .. })
    ));
    assert!(matches!(
        NurbsSurface::new([2, 1], [vec![0.0; 5], k.clone()], [2, 2], pts.clone(), None),
        Err(E::BadDegree { .. })
    ));
    assert!(matches!(
        NurbsSurface::new(
            [1, 1],
            [vec![0.0, 0.0, 1.0], k.clone()],
            [2, 2],
            pts.clone(),
            None
        ),
        Err(E::KnotCount {
            expected: 4,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        NurbsSurface::new(
            [1, 1],
            [vec![0.0, 0.0, 1.0, 0.5], k.clone()],
            [2, 2],
            pts.clone(),
            None
        ),
        Err(E::KnotOrder { index: 3, .. })
    ));
    assert!(matches!(
        NurbsSurface::new(
            [1, 1],
            [k.clone(), vec![0.0, 0.0, f64::NAN, 1.0]],
            [2, 2],
            pts.clone(),
            None
        ),
        Err(E::KnotOrder {
            direction: "v",
            index: 2,
            ..
        })
    ));
    assert!(matches!(
        NurbsSurface::new(
            [1, 1],
            [k.clone(), k.clone()],
            [2, 2],
            pts.clone(),
            Some(vec![1.0, 0.0, 1.0, 1.0])
        ),
        Err(E::BadWeight { index: 1, .. })
    ));
    let mut bad = pts.clone();
    bad[3].y = f64::NAN;
    assert!(matches!(
        NurbsSurface::new([1, 1], [k.clone(), k.clone()], [2, 2], bad, None),
        Err(E::NonFinitePoint { index: 3, .. })
    ));
    assert!(matches!(
        NurbsSurface::new(
            [1, 1],
            [vec![0.0, 0.0, 0.0, 1.0, 1.0], k.clone()],
            [3, 2],
            [pts.clone(), pts[..2].to_vec()].concat(),
            None
        ),
        Err(E::KnotMultiplicity { .. })
    ));
    // .bpt errors carry the line.
    let e = gprox_geometry::freeform::parse_bpt("1\n3 3\n0 0 x\n", Path::new("t.bpt")).unwrap_err();
    assert!(matches!(e, E::Parse { line: 3, .. }), "{e}");
    let e = gprox_geometry::freeform::parse_bpt(
        "2\n1 1\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n",
        Path::new("t.bpt"),
    )
    .unwrap_err();
    assert!(matches!(e, E::Parse { .. }), "{e}");
    let e = gprox_geometry::freeform::parse_nurbs_json("{\"degree_u\": 2}", Path::new("s.json"))
        .unwrap_err();
    assert!(e.to_string().contains("degree_v"), "{e}");
}

#[test]
fn teapot_embedded_matches_shared_copy() {
    let t = gprox_geometry::freeform::teapot();
    assert_eq!(t.len(), 32);
    let shared =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/bezier/teapot.bpt");
    if !shared.is_file() {
        eprintln!("note: shared teapot absent; skipping comparison");
        return;
    }
    let s = gprox_geometry::freeform::load_bpt(&shared).unwrap();
    assert_eq!(s, t);
    // Bézier patch and its NURBS form agree; de Casteljau subdivision keeps geometry.
    for surf in &t {
        let pts: Vec<DVec3> = (0..4)
            .flat_map(|i| (0..4).map(move |j| (i, j)))
            .map(|(i, j)| surf.control_point(i, j))
            .collect();
        let b = gprox_geometry::freeform::BezierPatch::new([3, 3], pts, None).unwrap();
        let (l, r) = b.subdivide(true, 0.3);
        let (bl, br) = b.subdivide(false, 0.6);
        for (u, v) in [(0.1, 0.2), (0.5, 0.5), (0.9, 0.7), (0.0, 1.0)] {
            let want = surf.point(u, v);
            assert!((b.point(u, v) - want).length() < 1e-12);
            let got = if u <= 0.3 {
                l.point(u / 0.3, v)
            } else {
                r.point((u - 0.3) / 0.7, v)
            };
            assert!((got - want).length() < 1e-12);
            let got = if v <= 0.6 {
                bl.point(u, v / 0.6)
            } else {
                br.point(u, (v - 0.6) / 0.4)
            };
            assert!((got - want).length() < 1e-12);
        }
    }
}

/// `GridEvaluator::row` (a fixed four-term sum on cubic rows, the general sum otherwise) gives
/// `GridEvaluator::point` bit for bit, every index once and in order, and both agree with the
/// surface's own evaluation.
#[test]
fn grid_rows_equal_grid_points() {
    use gprox_geometry::freeform::{grid::GridEvaluator, teapot};
    let mut surfaces = teapot()[..3].to_vec();
    // Rational patches of other degrees, with a knot inside so rows start at other controls.
    for (p, q) in [(2, 2), (1, 4), (3, 2), (4, 1), (2, 3)] {
        let clamped = |d: usize| {
            let mut k = vec![0.0; d + 1];
            k.push(0.4);
            k.extend(std::iter::repeat_n(1.0, d + 1));
            k
        };
        let (n, m) = (p + 2, q + 2);
        let pts = (0..n * m)
            .map(|k| {
                let (i, j) = ((k / m) as f64, (k % m) as f64);
                DVec3::new(i, j, (i * 1.3 - j * 0.7).sin())
            })
            .collect();
        let w = (0..n * m).map(|k| 0.5 + (k % 3) as f64 * 0.4).collect();
        surfaces.push(
            NurbsSurface::new([p, q], [clamped(p), clamped(q)], [n, m], pts, Some(w)).unwrap(),
        );
    }
    for s in &surfaces {
        let d = s.domain();
        let grid =
            |a: f64, b: f64, k: usize| (0..k).map(move |t| a + (b - a) * t as f64 / (k - 1) as f64);
        let (us, vs): (Vec<f64>, Vec<f64>) = (
            grid(d.u0, d.u1, 13).collect(),
            grid(d.v0, d.v1, 11).collect(),
        );
        let g = GridEvaluator::new(s, &us, &vs);
        for (j, &v) in vs.iter().enumerate() {
            let mut row = Vec::new();
            g.row(j, |i, p| row.push((i, p)));
            assert_eq!(row.len(), us.len());
            for (k, &(i, p)) in row.iter().enumerate() {
                assert_eq!(i, k);
                assert_eq!(
                    p.to_array().map(f64::to_bits),
                    g.point(i, j).to_array().map(f64::to_bits)
                );
                let want = s.point(us[i], v);
                assert!(
                    p.distance(want) <= 1e-12 * (1.0 + want.length()),
                    "{p} vs {want}"
                );
            }
        }
    }
}
