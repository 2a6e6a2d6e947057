//! Cross-check against OpenCASCADE on the shared trimmed data's `pairs.json` (minimum distances
//! and intersect flags of 14 posed model pairs; skipped without the data): intersecting pairs are
//! found, pairs farther apart than 2ε report nothing, and every reported pair has its texels
//! within 2ε. Each case runs at an ε that decides it where a grid of at most
//! [`resolution::MAX_SIDE`] texels per side can; where none can, the typed error is asserted.

use glam::Vec3;
use gprox_geometry::freeform::trimmed::load_trimmed_model;
use gprox_geometry::freeform::TrimmedFace;
use gprox_geometry::transform::Pose64;
use std::collections::HashMap;

use super::tests::{data_dir, intersect, model_box, model_images};
use super::*;
use crate::geometry_image::hierarchy::is_empty;

/// What a case can show at its ε.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Decided by the oracle: intersecting pairs are found, pairs farther apart than 2ε report
    /// nothing.
    Decided,
    /// Touching (gap 1e-6): 2ε below the gap needs grids far beyond the size limit, so only the
    /// 2ε bound of the reported pairs is checked.
    Touching,
    /// Separated by less than `2 ε_min`, where `ε_min` is the finest accuracy at which every
    /// face of the clipped pair can be imaged: imaging at `ε` < gap / 2 is a `TooLarge` error.
    TooLarge,
}

/// The 14 cases, the accuracy each runs at and what it can show.
const CASES: [(&str, f64, Expect); 14] = [
    ("bottle_bottle_gap_1", 0.4, Expect::Decided),
    // 1e-3 apart on models 90 long: ε < 5e-4 over the clipped walls needs ~1e5 texels a side.
    ("bottle_bottle_gap_1e-3", 4.5e-4, Expect::TooLarge),
    ("bottle_plate_touch_1e-6", 0.1, Expect::Touching),
    ("bottle_plate_thread_gap_1e-2", 4.5e-3, Expect::Decided),
    ("bottle_plate_inside_cavity", 0.045, Expect::Decided),
    ("bottle_plate_through_wall", 0.5, Expect::Decided),
    ("plate_plate_gap_0.5", 0.05, Expect::Decided),
    ("plate_plate_touch_1e-6", 0.02, Expect::Touching),
    ("plate_plate_crossing", 0.05, Expect::Decided),
    // The models' control boxes are disjoint: decided by the box test, at any ε.
    ("block_plate_parallel_gap_1e-3", 4.5e-4, Expect::Decided),
    ("wavy_plate_through_hole", 0.012, Expect::Decided),
    ("wavy_plate_outside_trim", 0.05, Expect::Decided),
    ("sliver_plate_crossing_spike", 0.02, Expect::Decided),
    // The plate's faces along the torus patch at ε < 5e-4 need over 2e4 texels a side.
    ("boundary_touch_plate_gap_1e-3", 4.5e-4, Expect::TooLarge),
];

fn pose(v: &serde_json::Value) -> Pose64 {
    let mut rows = [[0.0; 4]; 3];
    for (r, row) in rows.iter_mut().enumerate() {
        for (c, x) in row.iter_mut().enumerate() {
            *x = v[r][c].as_f64().unwrap();
        }
    }
    Pose64 { rows }
}

/// OpenCASCADE pairs: all 14 cases (see [`CASES`]).
#[test]
fn shared_pairs_agree_with_opencascade() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pairs.json")).unwrap()).unwrap();
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(
        pairs.len(),
        CASES.len(),
        "every case of pairs.json is listed"
    );
    let mut models: HashMap<String, Vec<TrimmedFace>> = HashMap::new();
    for (name, eps, expect) in CASES {
        let p = pairs.iter().find(|p| p["name"] == name).unwrap();
        let mut load = |m: &str| {
            models
                .entry(m.to_string())
                .or_insert_with(|| load_trimmed_model(dir.join(m)).unwrap().faces)
                .clone()
        };
        let (fa, fb) = (
            load(p["model_a"].as_str().unwrap()),
            load(p["model_b"].as_str().unwrap()),
        );
        let (pa, pb) = (pose(&p["transform_a"]), pose(&p["transform_b"]));
        let distance = p["min_distance"].as_f64().unwrap();
        let intersects = p["intersect"].as_bool().unwrap();
        let clip = intersect(&model_box(&fa, &pa), &model_box(&fb, &pb));
        let images = if is_empty(&clip) {
            Ok((Vec::new(), Vec::new()))
        } else {
            model_images(&fa, &pa, eps, &clip)
                .and_then(|ia| Ok((ia, model_images(&fb, &pb, eps, &clip)?)))
        };
        let (ia, ib) = match (images, expect) {
            (
                Err(GeometryImageError::TooLarge {
                    width, height, max, ..
                }),
                Expect::TooLarge,
            ) => {
                assert!(
                    distance <= 2.0 * eps * 1.2,
                    "{name}: a coarser ε would decide it"
                );
                assert!(width.max(height) > max as f64, "{name}");
                eprintln!("{name}: ε {eps} needs {width} x {height} texels");
                continue;
            }
            (Err(e), _) => panic!("{name}: {e}"),
            (Ok(_), Expect::TooLarge) => panic!("{name}: imaged at {eps}"),
            (Ok(x), _) => x,
        };
        let found = collide_models(&ia, &ib, Mode::Approximate);
        match expect {
            Expect::Decided if intersects => {
                assert!(!found.is_empty(), "{name}: intersecting pair not found");
                let exact = collide_models(&ia, &ib, Mode::Exact);
                assert!(
                    exact.iter().all(|x| found.binary_search(x).is_ok()),
                    "{name}"
                );
            }
            Expect::Decided => {
                assert!(distance > 2.0 * eps, "{name}: ε {eps} cannot decide");
                assert!(
                    found.is_empty(),
                    "{name}: {} pairs at distance {distance}",
                    found.len()
                );
            }
            Expect::Touching => assert!(distance < 1e-5 && !intersects, "{name}"),
            Expect::TooLarge => unreachable!(),
        }
        // Every reported pair has texels within 2ε (plus f32 rounding).
        for t in found.iter().step_by(97) {
            let a = ia.iter().find(|x| x.0.face == t.face_a).unwrap();
            let b = ib.iter().find(|x| x.0.face == t.face_b).unwrap();
            let qa: Vec3 = a.0.quad(t.quad_a[0] as usize, t.quad_a[1] as usize)[0];
            let qb = b.0.quad(t.quad_b[0] as usize, t.quad_b[1] as usize)[0];
            let scale = qa.abs().max(qb.abs()).max_element() as f64;
            assert!(
                qa.distance(qb) as f64 <= 2.0 * eps * (1.0 + 1e-4) + 8.0 * scale * 1.2e-7,
                "{name}"
            );
        }
        eprintln!(
            "{name}: ε {eps}, {} texels, {} pairs",
            ia.iter()
                .chain(&ib)
                .map(|x| x.0.positions.len())
                .sum::<usize>(),
            found.len()
        );
    }
}
