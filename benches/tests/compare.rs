//! The combined gprox / peers table (`gprox-compare`) on a small fixture: best exact peer,
//! ratios, correctness flags, unsupported and inexact peers.

use gprox_bench::compare::{combine, run};
use serde_json::{json, Value};

fn report() -> Value {
    json!({"schema": "gprox-bench/1", "date": "2026-11-22T06:00:00Z", "runs": [
        {"scene": "s", "query": "collide-all", "target": "a|b", "backend": "cpu", "threads": 2,
         "total_ms": {"median": 0.1}, "reference": {"mismatches": []}},
        {"scene": "s", "query": "collide-all", "target": "a|b", "backend": "cpu", "threads": 1,
         "total_ms": {"median": 0.5}, "reference": {"mismatches": []},
         "parry": {"ratio": 0.4}},
        {"scene": "s", "query": "distance", "target": "a|b", "backend": "cpu", "threads": 1,
         "total_ms": {"median": 3.0}, "reference": {"mismatches": ["f1: distance 1 vs 2 (ref)"]}}
    ]})
}

fn run_of(peer: &str, query_ms: f64, update_ms: f64) -> Value {
    json!({"peer": peer, "frames": [{"frame": 0}, {"frame": 1}],
           "summary": {"median_query_ms": query_ms, "median_update_ms": update_ms}})
}

fn results() -> Value {
    json!({"scene": "s", "meta": {"date": "2026-11-22 06:10", "machine": "test box", "loadavg": "0.1 0.2 0.3"},
    "queries": [
      {"kind": "collide-all", "target": "a|b",
       "runs": [run_of("ref", 50.0, 0.0), run_of("coal", 0.5, 0.5), run_of("warp", 0.1, 0.0),
                run_of("python-fcl", 1.5, 0.5), run_of("gprox", 0.6, 0.0),
                {"peer": "open3d", "error": "RuntimeError: boom"}],
       "unsupported": [{"peer": "ipctk", "why": "no"}],
       "disagreements": [{"peer": "warp", "n": 3, "examples": ["f0: 5 vs 4 (ref)"]}]},
      {"kind": "distance", "target": "a|b",
       "runs": [run_of("coal", 6.0, 0.0), run_of("open3d", 1.0, 0.0), run_of("gprox", 2.5, 0.0)],
       "unsupported": [], "disagreements": [{"peer": "gprox", "n": 1, "examples": ["f1: 1 vs 2 (ref)"]}]},
      {"kind": "ccd", "target": "a", "runs": [],
       "unsupported": [{"peer": "gprox", "why": "not here"}], "disagreements": []}
    ]})
}

#[test]
fn best_exact_peer_ratio_and_flags() {
    let c = combine(&report(), &[results()], "gprox");
    assert_eq!(c.peers_date, "2026-11-22 06:10");
    assert_eq!(
        c.peer_names,
        vec!["coal", "python-fcl", "warp", "ipctk", "open3d"]
    );
    assert_eq!(c.rows.len(), 3);
    let r = &c.rows[0];
    // The single-thread run is ours, not the 2-thread one.
    assert_eq!(r.gprox_ms, Some(0.5));
    assert_eq!(r.parry_same_process, Some(0.4));
    // warp is fastest but disagrees: coal (0.5 + 0.5) is the best exact peer.
    assert_eq!(r.best, Some(("coal".to_string(), 1.0)));
    assert_eq!(r.ratio, Some(0.5));
    assert_eq!(r.gprox_external.as_ref().and_then(|g| g.ms), Some(0.6));
    let warp = r.peers.iter().find(|p| p.peer == "warp").unwrap();
    assert_eq!(warp.disagreeing_frames, 3);
    let open3d = r.peers.iter().find(|p| p.peer == "open3d").unwrap();
    assert!(open3d.ms.is_none() && open3d.not_run.as_deref().unwrap().contains("boom"));
    // Distance: open3d's vertex-sampled figure is not exact, so coal is the best.
    let d = &c.rows[1];
    assert_eq!(d.best, Some(("coal".to_string(), 6.0)));
    assert_eq!(d.ratio, Some(0.5));
    assert_eq!(d.gprox_mismatches, 1);
    assert_eq!(d.gprox_external.as_ref().unwrap().disagreeing_frames, 1);
    // No run of ours and no peer: no ratio.
    assert_eq!(
        (c.rows[2].gprox_ms, c.rows[2].best.clone(), c.rows[2].ratio),
        (None, None, None)
    );

    let md = c.markdown();
    let line = |prefix: &str| {
        md.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap()
            .to_string()
    };
    let all = line("| s | collide-all | a\\|b |");
    assert!(
        all.contains("| 0.500 | 0.600 | 1.00 | 2.00 | 0.100 ✗ | — | error |"),
        "{all}"
    );
    assert!(
        all.contains("| coal 1.00 | 0.50 | 0.40 | warp: 3 frames differ |"),
        "{all}"
    );
    let dist = line("| s | distance |");
    assert!(dist.contains("1.00 ≈"), "{dist}");
    assert!(dist.contains("**gprox: 1 mismatches vs ref**"), "{dist}");
    assert!(
        dist.contains("**gprox ext: 1 frames differ (f1: 1 vs 2 (ref))**"),
        "{dist}"
    );
}

#[test]
fn files_are_read_and_written() {
    let root = std::env::temp_dir().join(format!("gprox-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("results")).unwrap();
    std::fs::write(root.join("report.json"), report().to_string()).unwrap();
    std::fs::write(root.join("results/s.json"), results().to_string()).unwrap();
    std::fs::write(root.join("results/SUMMARY.md"), "not json").unwrap();
    let c = run(
        &root.join("report.json"),
        &root.join("results"),
        &root.join("out"),
        "gprox",
    )
    .unwrap();
    assert_eq!(c.rows.len(), 3);
    let md = std::fs::read_to_string(root.join("out/combined.md")).unwrap();
    assert_eq!(md, c.markdown());
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out/combined.json")).unwrap())
            .unwrap();
    assert_eq!(json["rows"][0]["best"], json!(["coal", 1.0]));
    // An empty results folder is an error naming it.
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let err = run(
        &root.join("report.json"),
        &root.join("empty"),
        &root.join("out"),
        "gprox",
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("empty"));
    let _ = std::fs::remove_dir_all(&root);
}
