//! External mode: gprox as a peer of the Python harness in `shared/peers` (`run_peers.py
//! --external gprox=<binary>`), following the `parry-bench` command line and JSON convention of
//! `shared/peers/SCENES.md`:
//!
//! ```text
//! gprox-peer <scene_dir> [--frames 0,1,2] [--queries collide-all,distance] [--repeats 1]
//! ```
//!
//! prints one JSON object `{peer, version, scene, threads, build_ms, records, unsupported, notes}`
//! on stdout, every record `{query, target, frame, update_ms, query_ms, ...result fields}`.
//! Single thread (a one-thread rayon pool), CPU backend; the timed code is the harness's own
//! ([`crate::run::run_target`]), so the harness and the external mode measure the same calls.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Parser;
use gprox::geometry::scene::{QueryKind, Scene};
use gprox::{Backend, Context};
use serde_json::{json, Map, Value};

use crate::run::{run_target, targets, Timing};

/// Command line of `gprox-peer` (the `parry-bench` convention).
#[derive(Clone, Debug, Parser)]
#[command(
    name = "gprox-peer",
    about = "gprox as an external peer of shared/peers/run_peers.py"
)]
pub struct PeerArgs {
    /// Scene folder (`proxbench-scene/1`); `builtin` runs the built-in scene.
    pub scene_dir: PathBuf,
    /// Frames to run, comma separated (default: all). For `ccd`, frame f is the step f -> f+1.
    #[arg(long, value_delimiter = ',')]
    pub frames: Option<Vec<usize>>,
    /// Query kinds to run, comma separated (default: every query of the scene).
    #[arg(long, value_delimiter = ',')]
    pub queries: Option<Vec<String>>,
    /// Repetitions of every frame's update and query; the record holds their median
    /// (default 1: one timed call per frame, as the other peers do).
    #[arg(long, default_value_t = 1)]
    pub repeats: usize,
}

/// What each query times, for the peers' notes (`notes` of the output).
fn note(kind: &QueryKind) -> &'static str {
    match kind {
        QueryKind::CollideAll => {
            "gprox CPU, 1 thread: f32 AABB LBVH per mesh (refit per frame for deforming meshes = \
             update_ms), simultaneous traversal, exact f64 triangle-triangle tests (Shewchuk \
             orient3d); \"all\": sweep-and-prune broad phase + the same per object pair"
        }
        QueryKind::CollideAny => {
            "gprox CPU, 1 thread: collide-all traversal stopping at the first exact hit"
        }
        QueryKind::Distance => {
            "gprox CPU, 1 thread: RSS trees (build_ms), best-first traversal with exact \
             triangle-triangle distances, certified bounds (tolerance 0)"
        }
        QueryKind::SelfCollide => {
            "gprox CPU, 1 thread: LBVH refit per frame (update_ms), self traversal with \
             certified normal-cone culling (its per-node data kept across frames), skipping \
             adjacent triangles, exact triangle tests"
        }
        QueryKind::Ccd => {
            "gprox CPU, 1 thread: swept-box LBVH traversal + certified vertex-face / edge-edge \
             root isolation; toi = certified lower bound"
        }
        QueryKind::Penetration => {
            "gprox CPU, 1 thread: exact inside test (winding) of every vertex in the other \
             closed mesh + its distance to the surface"
        }
        QueryKind::PenetrationField => {
            "gprox CPU, 1 thread: image-space intersection volume (Hoff et al. 2002): lattice \
             samples inside both closed meshes by exact column sweeps, each with its exact \
             distance to both surfaces; tolerance = first object's box diagonal / 180"
        }
        QueryKind::ImageCollide => {
            "gprox CPU, 1 thread: stenciled geometry images (Greß et al. 2006) clipped to the \
             overlap, quad-tree breadth-first traversal, approximate mode, eps = 1e-3 of the \
             scene size"
        }
        QueryKind::ImageSelfCollide => {
            "gprox CPU, 1 thread: stenciled geometry image self-traversal with the normal \
             test, exact quad triangles, eps = 1e-3 of the scene size"
        }
        QueryKind::Other(_) => "",
    }
}

/// Runs the queries `args` asks for on one scene and returns the output document.
///
/// Unknown query names and frames outside the scene are errors; queries gprox cannot run on
/// this scene are listed under `unsupported` with the reason.
pub fn run_peer(args: &PeerArgs) -> Result<Value> {
    let scene = if args.scene_dir.as_os_str() == "builtin" {
        Scene::builtin()
    } else {
        Scene::load(&args.scene_dir)
            .with_context(|| format!("loading scene {}", args.scene_dir.display()))?
    };
    let frames: Vec<usize> = match &args.frames {
        Some(f) => f.clone(),
        None => (0..scene.frame_count()).collect(),
    };
    if let Some(&bad) = frames.iter().find(|&&f| f >= scene.frame_count()) {
        anyhow::bail!(
            "frame {bad} out of range: scene `{}` has {} frames",
            scene.name(),
            scene.frame_count()
        );
    }
    let want = |kind: &str| {
        args.queries
            .as_ref()
            .is_none_or(|q| q.iter().any(|k| k == kind))
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let ctx = Context::new(Backend::Cpu)?;
    let (tgts, skipped) = targets(&scene);
    let mut records = Vec::new();
    let mut unsupported = Vec::new();
    let mut build_ms = Map::new();
    let mut notes = Map::new();
    for s in skipped.iter().filter(|s| want(&s.query)) {
        unsupported.push(json!({"query": s.query, "why": s.why}));
    }
    for t in tgts.iter().filter(|t| want(t.kind.as_str())) {
        let kind = t.kind.as_str();
        let data = match pool.install(|| {
            run_target(
                &ctx,
                &scene,
                t,
                &frames,
                (args.repeats, Timing::First),
                || {},
            )
        }) {
            Ok(d) => d,
            Err(e) => {
                // e.g. distance on a deforming object: not an error of the run, a gap of gprox.
                unsupported
                    .push(json!({"query": kind, "target": t.label, "why": format!("{e:#}")}));
                continue;
            }
        };
        build_ms.insert(
            format!("{kind}:{}", t.label),
            json!(crate::stats::median(&data.build_ms)),
        );
        notes.insert(kind.to_string(), json!(note(&t.kind)));
        for f in &data.frames {
            let mut r = serde_json::to_value(f)?;
            if let Value::Object(m) = &mut r {
                m.insert("query".into(), json!(kind));
                m.insert("target".into(), json!(t.label));
            }
            records.push(r);
        }
    }
    if let Some(q) = &args.queries {
        let known: Vec<&str> = scene.queries().iter().map(|q| q.kind.as_str()).collect();
        for k in q.iter().filter(|k| !known.contains(&k.as_str())) {
            unsupported.push(json!({"query": k, "why": "the scene has no such query"}));
        }
    }
    Ok(json!({
        "peer": "gprox",
        "version": env!("CARGO_PKG_VERSION"),
        "precision": "f32 storage, f64 exact tests",
        "scene": scene.name(),
        "threads": 1,
        "build_ms": build_ms,
        "records": records,
        "unsupported": unsupported,
        "notes": notes,
    }))
}
