//! Tests of trimmed faces: the shared OpenCASCADE data (loading, classified samples), an
//! independent even-odd oracle for grids, certified flattening, and the typed errors.

use std::path::{Path, PathBuf};

use glam::{DVec2, DVec3};
use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::freeform::NurbsSurface;

fn data_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/trimmed");
    d.join("index.json").is_file().then_some(d)
}

const MODELS: [&str; 6] = [
    "bottle",
    "plate",
    "slotted_block",
    "wavy_two_holes",
    "sliver",
    "boundary_touch",
];

fn unit_square() -> NurbsSurface {
    let pts = vec![
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(1.0, 1.0, 0.0),
    ];
    NurbsSurface::bezier([1, 1], pts, None).unwrap()
}

fn polyline_loop(pts: &[DVec2], role: LoopRole) -> TrimLoop {
    TrimLoop::polygon(role, pts).unwrap()
}

/// Even-odd oracle with exact orientation signs, independent of `edge_crossing`.
fn even_odd(poly: &TrimPolygon, p: DVec2) -> bool {
    let mut inside = false;
    for (a, b, _, _) in poly.edges() {
        let (lo, hi) = if a.y <= b.y { (a, b) } else { (b, a) };
        if lo.y <= p.y && p.y < hi.y && crate::predicates::orient2d(lo, hi, p) < 0.0 {
            inside = !inside;
        }
    }
    inside
}

#[test]
fn shared_models_load_and_classify_their_samples() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    // Documented OCCT errors (README "Known wrong OCCT states"): the truth is `out`.
    let wrong = [
        ("bottle", "face_17.json", 217usize),
        ("bottle", "face_43.json", 252),
    ];
    let (mut checked, mut faces) = (0usize, 0usize);
    for m in MODELS {
        let model = load_trimmed_model(dir.join(m)).unwrap();
        for (face, file) in model.faces.iter().zip(&model.files) {
            faces += 1;
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            let s = &doc["trim_samples"];
            let col = |k: &str| s[k].as_array().unwrap().clone();
            let (us, vs, st, near) = (col("u"), col("v"), col("state"), col("near"));
            let tol = face.polygon().tolerance;
            let name = file.file_name().unwrap().to_str().unwrap();
            for k in 0..us.len() {
                let (u, v) = (us[k].as_f64().unwrap(), vs[k].as_f64().unwrap());
                let mut expect = st[k].as_str().unwrap() == "in";
                if wrong.contains(&(m, name, k)) {
                    expect = false;
                }
                if let Some(off) = near[k].as_array().and_then(|a| a[3].as_f64()) {
                    if off.abs() <= 2.0 * tol {
                        continue;
                    }
                }
                assert_eq!(
                    face.contains(u, v),
                    expect,
                    "{m}/{name} sample {k} ({u}, {v})"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(faces, 141);
    assert!(checked > 50_000, "{checked}");
}

#[test]
fn grid_classification_matches_even_odd_oracle() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    for m in ["wavy_two_holes", "sliver", "boundary_touch", "plate"] {
        let model = load_trimmed_model(dir.join(m)).unwrap();
        for face in model.faces.iter().take(8) {
            let d = face.domain();
            let poly = face.flatten(1e-4 * face.domain_size()).unwrap();
            let n = 97;
            // Off the domain sides, where loops may run (points on an edge are ambiguous).
            let us: Vec<f64> = (0..n)
                .map(|i| d.u0 + (d.u1 - d.u0) * (i as f64 + 0.61) / n as f64)
                .collect();
            let vs: Vec<f64> = (0..n)
                .map(|j| d.v0 + (d.v1 - d.v0) * (j as f64 + 0.37) / n as f64)
                .collect();
            let grid = poly.classify_grid(&us, &vs);
            for (j, &v) in vs.iter().enumerate() {
                for (i, &u) in us.iter().enumerate() {
                    let p = DVec2::new(u, v);
                    assert_eq!(grid[j * n + i] == 1, even_odd(&poly, p), "{m} ({u}, {v})");
                    assert_eq!(grid[j * n + i] == 1, poly.winding_number(p) != 0);
                }
            }
        }
    }
}

#[test]
fn untrimmed_face_contains_its_domain() {
    let f = TrimmedFace::untrimmed(unit_square()).unwrap();
    assert!(f.contains(0.5, 0.5));
    assert!(f.contains(0.001, 0.999));
    assert!(!f.contains(1.5, 0.5));
    assert!(!f.contains(0.5, -0.01));
}

#[test]
fn hole_is_outside() {
    let outer = [
        DVec2::new(0.1, 0.1),
        DVec2::new(0.9, 0.1),
        DVec2::new(0.9, 0.9),
        DVec2::new(0.1, 0.9),
    ];
    let hole = [
        DVec2::new(0.4, 0.4),
        DVec2::new(0.4, 0.6),
        DVec2::new(0.6, 0.6),
        DVec2::new(0.6, 0.4),
    ];
    let f = TrimmedFace::new(
        unit_square(),
        vec![
            polyline_loop(&outer, LoopRole::Outer),
            polyline_loop(&hole, LoopRole::Hole),
        ],
    )
    .unwrap();
    assert!(f.contains(0.2, 0.5));
    assert!(!f.contains(0.5, 0.5));
    assert!(!f.contains(0.05, 0.5));
}

#[test]
fn errors_name_the_problem() {
    let sq = [
        DVec2::new(0.1, 0.1),
        DVec2::new(0.9, 0.1),
        DVec2::new(0.9, 0.9),
        DVec2::new(0.1, 0.9),
    ];
    // Open: the last curve ends short of the first start.
    let mut open = polyline_loop(&sq, LoopRole::Outer);
    open.curves[3] = TrimCurve::new(
        1,
        vec![0.0, 0.0, 1.0, 1.0],
        &[sq[3], DVec2::new(0.1, 0.2)],
        None,
        [0.0, 1.0],
        false,
    )
    .unwrap();
    assert!(matches!(
        TrimmedFace::new(unit_square(), vec![open]),
        Err(TrimError::OpenLoop {
            loop_index: 0,
            curve: 3,
            ..
        })
    ));
    // Outside the domain.
    let out = [
        DVec2::new(0.1, 0.1),
        DVec2::new(1.2, 0.1),
        DVec2::new(0.9, 0.9),
    ];
    assert!(matches!(
        TrimmedFace::new(unit_square(), vec![polyline_loop(&out, LoopRole::Outer)]),
        Err(TrimError::OutsideDomain {
            loop_index: 0,
            curve: 1,
            ..
        })
    ));
    // A bow tie crosses itself.
    let bow = [
        DVec2::new(0.1, 0.1),
        DVec2::new(0.9, 0.9),
        DVec2::new(0.9, 0.1),
        DVec2::new(0.1, 0.9),
    ];
    let e =
        TrimmedFace::new(unit_square(), vec![polyline_loop(&bow, LoopRole::Outer)]).unwrap_err();
    assert!(matches!(e, TrimError::SelfCrossing { .. }), "{e}");
    // Two loops crossing each other.
    let other = [
        DVec2::new(0.5, 0.5),
        DVec2::new(0.95, 0.5),
        DVec2::new(0.95, 0.95),
    ];
    let e = TrimmedFace::new(
        unit_square(),
        vec![
            polyline_loop(&sq, LoopRole::Outer),
            polyline_loop(&other, LoopRole::Hole),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(e, TrimError::SelfCrossing { loop_a, loop_b, .. } if loop_a != loop_b),
        "{e}"
    );
    // A used range outside the curve's knot domain.
    let mut bad = polyline_loop(&sq, LoopRole::Outer);
    bad.curves[2].range = [0.0, 2.0];
    assert!(matches!(
        TrimmedFace::new(unit_square(), vec![bad]),
        Err(TrimError::ParamRange {
            loop_index: 0,
            curve: 2,
            ..
        })
    ));
    assert!(matches!(
        TrimmedFace::new(unit_square(), vec![]),
        Err(TrimError::EmptyLoop { .. })
    ));
}

#[test]
fn json_errors_name_file_and_field() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    let path = dir.join("wavy_two_holes/face_00.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["trim"][1]["curves"][0]["control_points"][2] = serde_json::json!([0.3]);
    let e = parse_trimmed_face(&doc, &path).unwrap_err().to_string();
    assert!(
        e.contains("face_00.json") && e.contains("trim[1].curves[0].control_points[2]"),
        "{e}"
    );
    // Move the hole's circle to cross the ellipse hole: a crossing, reported with the file.
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for p in doc["trim"][1]["curves"][0]["control_points"]
        .as_array_mut()
        .unwrap()
    {
        let u = p[0].as_f64().unwrap();
        p[0] = serde_json::json!(u + 0.2);
        let v = p[1].as_f64().unwrap();
        p[1] = serde_json::json!(v - 0.15);
    }
    let e = parse_trimmed_face(&doc, &path).unwrap_err();
    assert!(
        matches!(&e, TrimError::InFile { source, .. } if matches!(**source, TrimError::SelfCrossing { .. })),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Every sampled curve point lies within the tolerance of the polyline.
    #[test]
    fn flattening_is_within_tolerance(
        pts in prop::collection::vec((0.0f64..1.0, 0.0f64..1.0), 4..9),
        ws in prop::collection::vec(0.3f64..3.0, 9),
        tol in 1e-4f64..1e-2,
        reversed in any::<bool>(),
    ) {
        let n = pts.len();
        let p = 3usize.min(n - 1);
        let mut knots = vec![0.0; p + 1];
        for k in 1..n - p { knots.push(k as f64 / (n - p) as f64); }
        knots.extend(std::iter::repeat_n(1.0, p + 1));
        let pts: Vec<DVec2> = pts.iter().map(|&(u, v)| DVec2::new(u, v)).collect();
        let c = TrimCurve::new(p, knots, &pts, Some(ws[..n].to_vec()), [0.1, 0.9], reversed).unwrap();
        let poly = flatten::flatten_curve(&c, tol).unwrap();
        prop_assert!(poly[0].distance(c.start()) < 1e-12);
        prop_assert!(poly[poly.len() - 1].distance(c.end()) < 1e-12);
        for k in 0..=400 {
            let x = c.point(0.1 + 0.8 * k as f64 / 400.0);
            let d = poly.windows(2).map(|w| {
                let (a, b) = (w[0], w[1]);
                let t = ((x - a).dot(b - a) / (b - a).length_squared().max(1e-300)).clamp(0.0, 1.0);
                x.distance(a + (b - a) * t)
            }).fold(f64::INFINITY, f64::min);
            prop_assert!(d <= tol * (1.0 + 1e-9) + 1e-14, "distance {d} > {tol}");
        }
    }
}
