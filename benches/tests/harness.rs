//! The harness end to end on a tiny scene: reports are written, and a reference that
//! disagrees makes the run fail.

use std::path::{Path, PathBuf};

use clap::Parser;
use gprox_bench::{run_all, Args};

const TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// `root/scenes/tiny` with two tetrahedra: frame 0 far apart, frame 1 coincident (every face
/// of a tetrahedron shares an edge with every other, so all 4 x 4 face pairs intersect).
fn tiny(root: &Path) -> PathBuf {
    tiny_with(root, "")
}

/// [`tiny`] with `extra` keys in its `scene.json` (starting with a comma).
fn tiny_with(root: &Path, extra: &str) -> PathBuf {
    let dir = root.join("scenes/tiny");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tet.obj"), TETRA).unwrap();
    std::fs::write(
        dir.join("scene.json"),
        r#"{"format": "proxbench-scene/1", "name": "tiny", "frames": 2,
            "objects": [{"name": "a", "mesh": "tet.obj"}, {"name": "b", "mesh": "tet.obj"}],
            "transforms": "transforms.f32",
            "queries": [{"kind": "collide-all", "pairs": [["a", "b"]]},
                        {"kind": "collide-any", "pairs": "all"}]"#
            .to_string()
            + extra
            + "}",
    )
    .unwrap();
    let id = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    let mut far = id;
    far[3] = 10.0;
    let t: Vec<u8> = [id, far, id, id]
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(dir.join("transforms.f32"), t).unwrap();
    std::fs::create_dir_all(root.join("results")).unwrap();
    root.join("scenes")
}

fn reference(root: &Path, count1: u64) {
    let r = format!(
        r#"{{"scene": "tiny", "queries": [
        {{"kind": "collide-all", "target": "a|b", "runs": [
            {{"peer": "ref", "frames": [{{"frame": 0, "count": 0, "collide": false}},
                                       {{"frame": 1, "count": {count1}, "collide": true}}]}},
            {{"peer": "slowpoke", "summary": {{"median_query_ms": 1000.0, "median_update_ms": 0.0}}}}]}}]}}"#
    );
    std::fs::write(root.join("results/tiny.json"), r).unwrap();
}

fn args(root: &Path, scenes: &Path) -> Args {
    Args::parse_from([
        "gprox-bench",
        "--scenes",
        scenes.to_str().unwrap(),
        "--no-builtin",
        "--threads",
        "1",
        "--repeats",
        "1",
        "--lbvh-triangles",
        "0",
        "--out",
        root.join("out").to_str().unwrap(),
    ])
}

#[test]
fn agreeing_reference_passes_and_reports_are_written() {
    let root = std::env::temp_dir().join(format!("gprox-bench-ok-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let scenes = tiny(&root);
    reference(&root, 16);
    assert!(run_all(&args(&root, &scenes)).unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(json["schema"], "gprox-bench/1");
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["count_total"], 16);
    assert_eq!(runs[0]["reference"]["frames_checked"], 2);
    assert_eq!(runs[0]["peers"][0]["peer"], "slowpoke");
    assert!(runs[0]["peers"][0]["ratio"].as_f64().unwrap() < 1.0);
    // collide-any over "all" pairs: frame 1 has the object pair [0, 1].
    assert_eq!(
        runs[1]["frames"][1]["object_pairs"],
        serde_json::json!([[0, 1]])
    );
    assert_eq!(runs[1]["frames"][0]["collide"], false);
    let md = std::fs::read_to_string(root.join("out/report.md")).unwrap();
    assert!(md.contains("| tiny | collide-all | a\\|b |"));
    assert!(root.join("out/tiny__collide-all__a_b.svg").is_file());
    // Stage times of the collide-all target, front tracking off then on, same pairs.
    let stages = json["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0]["front_tracking"], false);
    assert_eq!(stages[1]["front_tracking"], true);
    assert!(stages.iter().all(|s| s["pairs"] == 16));
    assert!(md.contains("## Stages"));
    // Nothing checks the collide-any target: the report says so.
    assert_eq!(
        json["unverified"],
        serde_json::json!(["tiny collide-any all"])
    );
    assert_eq!(runs[1]["reference"]["source"], "none");
    assert!(md.contains("UNVERIFIED"));
}

/// The scene's own truth is checked like a reference: agreeing truth passes with every
/// target verified, a wrong entry fails naming the frame.
#[test]
fn scene_truth_is_checked() {
    let root = std::env::temp_dir().join(format!("gprox-bench-truth-{}", std::process::id()));
    for (count1, ok) in [(16, true), (15, false)] {
        let _ = std::fs::remove_dir_all(&root);
        let truth = format!(
            r#", "truth": {{"collide-all": {{"a|b": {{"count": [0, {count1}], "collide": [false, true]}}}},
                           "collide-any": {{"all": {{"collide": [false, true]}}}}}}"#
        );
        let scenes = tiny_with(&root, &truth);
        assert_eq!(run_all(&args(&root, &scenes)).unwrap(), ok);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("out/report.json")).unwrap())
                .unwrap();
        assert_eq!(json["unverified"], serde_json::json!([]));
        let runs = json["runs"].as_array().unwrap();
        assert_eq!(runs[0]["reference"]["source"], "scene.json: truth");
        assert_eq!(runs[1]["reference"]["frames_checked"], 2);
        let failures = json["failures"].as_array().unwrap();
        if ok {
            assert!(failures.is_empty(), "{failures:?}");
        } else {
            assert_eq!(failures.len(), 1);
            assert!(failures[0]
                .as_str()
                .unwrap()
                .contains("f1: count 16 vs 15 (truth)"));
        }
    }
    // A truth array of the wrong length is a scene error naming it.
    let _ = std::fs::remove_dir_all(&root);
    let scenes = tiny_with(
        &root,
        r#", "truth": {"collide-all": {"a|b": {"count": [0]}}}"#,
    );
    let err = format!("{:#}", run_all(&args(&root, &scenes)).unwrap_err());
    assert!(err.contains("`count` has 1 entries for 2 frames"), "{err}");
}

#[test]
fn disagreeing_reference_fails_loudly() {
    let root = std::env::temp_dir().join(format!("gprox-bench-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let scenes = tiny(&root);
    reference(&root, 15);
    assert!(!run_all(&args(&root, &scenes)).unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out/report.json")).unwrap())
            .unwrap();
    let failures = json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert!(failures[0].as_str().unwrap().contains("f1: count 16 vs 15"));
}

/// parry3d-f64 runs in the same process on the same frames, agrees with gprox on the tiny
/// scene (every pair of two coincident tetrahedra, none when far apart), and can be switched off.
#[cfg(feature = "parry")]
#[test]
fn parry_side_by_side_agrees_and_can_be_switched_off() {
    let root = std::env::temp_dir().join(format!("gprox-bench-parry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let scenes = tiny(&root);
    reference(&root, 16);
    assert!(run_all(&args(&root, &scenes)).unwrap());
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(root.join("out/report.json")).unwrap())
            .unwrap()
    };
    let json = read();
    assert_eq!(json["parry_disagreements"], serde_json::json!([]));
    for run in json["runs"].as_array().unwrap() {
        let p = &run["parry"];
        assert_eq!(p["version"], "parry3d-f64 0.25");
        assert_eq!(p["frames"], serde_json::json!([0, 1]));
        assert_eq!(p["frames_checked"], 2);
        assert_eq!(p["disagreements"], serde_json::json!([]));
        assert!(p["ratio"].as_f64().unwrap() > 0.0);
    }
    let md = std::fs::read_to_string(root.join("out/report.md")).unwrap();
    assert!(md.contains("## parry3d-f64 side by side"));

    let mut off = args(&root, &scenes);
    off.parry_frames = 0;
    assert!(run_all(&off).unwrap());
    assert!(read()["runs"][0].get("parry").is_none());
}

/// A `penetration-field` query runs on the CPU and on the emulated device with the same
/// samples (the harness compares the result hashes of every backend and fails otherwise):
/// frame 0 apart (nothing), frame 1 overlapping (samples, a positive depth).
#[test]
fn penetration_field_runs_on_every_backend() {
    let root = std::env::temp_dir().join(format!("gprox-bench-field-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("scenes/field");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tet.obj"), TETRA).unwrap();
    std::fs::write(
        dir.join("scene.json"),
        r#"{"format": "proxbench-scene/1", "name": "field", "frames": 2,
            "objects": [{"name": "a", "mesh": "tet.obj"}, {"name": "b", "mesh": "tet.obj"}],
            "transforms": "transforms.f32",
            "queries": [{"kind": "penetration-field", "pairs": [["a", "b"]]}]}"#,
    )
    .unwrap();
    let id = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    let (mut far, mut near) = (id, id);
    far[3] = 10.0;
    (near[3], near[7], near[11]) = (0.1, 0.05, 0.02);
    let t: Vec<u8> = [id, far, id, near]
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(dir.join("transforms.f32"), t).unwrap();
    std::fs::create_dir_all(root.join("results")).unwrap();
    let mut a = args(&root, &root.join("scenes"));
    a.emulated = true;
    a.no_cuda = true;
    a.parry_frames = 0;
    a.no_stages = true;
    assert!(run_all(&a).unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out/report.json")).unwrap())
            .unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["backend"], "cpu");
    assert!(runs[1]["backend"].as_str().unwrap().starts_with("emulated"));
    for r in runs {
        assert_eq!(r["query"], "penetration-field");
        assert_eq!(r["frames"][0]["count"], 0);
        assert!(r["frames"][1]["count"].as_u64().unwrap() > 100);
        assert!(r["frames"][1]["max_depth"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(runs[0]["count_total"], runs[1]["count_total"]);
}
