//! `gprox bench`: every query of a scene over its frames on the chosen backend, with the
//! benchmark harness's engine (`gprox_bench::run`), so the CLI and the harness time the same
//! calls.

use std::path::Path;

use gprox::geometry::scene::Scene;
use gprox::{Backend, Context};
use gprox_bench::report::FrameRecord;
use gprox_bench::run::{run_target, targets, Timing};
use gprox_bench::stats::Summary;
use serde_json::json;

use super::{input, internal, Failure};

/// One line of results of a frame: what the query found.
fn found(r: &FrameRecord) -> String {
    let mut parts = Vec::new();
    if let Some(c) = r.count {
        parts.push(format!("{c} pairs"));
    } else if let Some(c) = r.collide {
        parts.push(format!("collide {c}"));
    }
    if let Some(d) = r.distance {
        parts.push(format!("distance {d:.6e}"));
    }
    if let Some(t) = r.toi {
        parts.push(format!("toi {t:.6}"));
    }
    if let Some(p) = &r.object_pairs {
        parts.push(format!("{} object pairs", p.len()));
    }
    if let (Some(n), Some(d)) = (r.inside_vertices, r.max_depth) {
        parts.push(format!("{n} inside vertices, max depth {d:.4e}"));
    }
    parts.join(", ")
}

/// `gprox bench SCENE`: builds, updates and queries every target of every query the scene
/// declares, `repeats` times each (medians), and says which queries it skipped and why.
pub fn bench_cmd(
    ctx: &Context,
    scene: &Path,
    frames: Option<usize>,
    repeats: usize,
    json: bool,
) -> Result<(), Failure> {
    let s = if scene == Path::new("builtin") {
        Scene::builtin()
    } else {
        Scene::load(scene).map_err(input)?
    };
    let n = frames.unwrap_or(usize::MAX).min(s.frame_count());
    let frame_ids: Vec<usize> = (0..n).collect();
    let (list, skipped) = targets(&s);
    let cpu = Context::new(Backend::Cpu).map_err(internal)?;
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    for target in &list {
        // Targets the harness runs on the CPU only (penetration) run on the CPU here too.
        let on = if target.runs_on(ctx.backend()) {
            ctx
        } else {
            &cpu
        };
        match run_target(on, &s, target, &frame_ids, (repeats, Timing::Median), || {}) {
            Ok(data) => rows.push((target, on.backend(), data)),
            Err(e) => failed.push(
                json!({"query": target.kind.as_str(), "target": target.label,
                                         "why": format!("{e:#}")}),
            ),
        }
    }
    if json {
        let runs: Vec<_> = rows
            .iter()
            .map(|(t, backend, d)| {
                json!({"query": t.kind.as_str(), "target": t.label,
                       "backend": backend.to_string(),
                       "build_ms": Summary::of(&d.build_ms).median,
                       "triangles": d.triangles, "frames": d.frames})
            })
            .collect();
        let v = json!({"scene": s.name(), "frames_run": n, "backend": ctx.backend().to_string(),
                       "runs": runs, "skipped": skipped, "failed": failed});
        println!("{v}");
        return Ok(());
    }
    println!(
        "scene {} ({n} frames run, backend {})",
        s.name(),
        ctx.backend()
    );
    for (t, backend, d) in &rows {
        let q = Summary::of(&d.frames.iter().map(|f| f.query_ms).collect::<Vec<_>>());
        println!(
            "{} {} on {backend}: {} triangles, build {:.3} ms, query median {:.3} ms",
            t.kind.as_str(),
            t.label,
            d.triangles,
            Summary::of(&d.build_ms).median,
            q.median
        );
        for f in &d.frames {
            println!(
                "  frame {:3}: {} | update {:.3} ms | query {:.3} ms",
                f.frame,
                found(f),
                f.update_ms,
                f.query_ms
            );
        }
    }
    for k in &skipped {
        println!("skipped {}: {}", k.query, k.why);
    }
    for f in &failed {
        println!("not run {} {}: {}", f["query"], f["target"], f["why"]);
    }
    if rows.is_empty() && !failed.is_empty() {
        return Err(internal("no query of the scene could run"));
    }
    Ok(())
}
