//! The `ccd` subcommand: continuous collision of two models over one step between two poses
//! each.

use std::time::Instant;

use glam::Affine3A;
use gprox::query::ccd::Feature;
use gprox::{CcdOptions, Context, Motion, Query};
use serde_json::json;

use super::{input, ms, query_error, Failure, MeshPair, Models};

/// How many contacts the human-readable output lists.
const LISTED: usize = 10;

/// The end of the step and the CCD options given on the command line.
pub struct Step {
    /// Pose of A at the end of the step.
    pub end_a: Affine3A,
    /// Pose of B at the end of the step.
    pub end_b: Affine3A,
    /// Report pairs that come closer than this.
    pub min_separation: f64,
}

fn feature_json(f: &Feature) -> serde_json::Value {
    match *f {
        Feature::VertexFace { vertex, face } => json!({"vertex_a": vertex, "face_b": face}),
        Feature::FaceVertex { face, vertex } => json!({"face_a": face, "vertex_b": vertex}),
        Feature::EdgeEdge { a, b } => json!({"edge_a": a, "edge_b": b}),
    }
}

fn feature_text(f: &Feature) -> String {
    match *f {
        Feature::VertexFace { vertex, face } => format!("A vertex {vertex} x B face {face}"),
        Feature::FaceVertex { face, vertex } => format!("A face {face} x B vertex {vertex}"),
        Feature::EdgeEdge { a, b } => format!("A edge {a:?} x B edge {b:?}"),
    }
}

/// `gprox ccd A B`: A moves from `--pose-a` to `--end-pose-a`, B from `--pose-b` to
/// `--end-pose-b`; every feature pair that may touch during the step and the earliest
/// certified time of impact.
pub fn ccd_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    step: &Step,
    json: bool,
) -> Result<(), Failure> {
    let sep = step.min_separation;
    if !(sep.is_finite() && sep >= 0.0) {
        return Err(input(format!(
            "--min-separation must be finite and >= 0, got {sep}"
        )));
    }
    let opts = CcdOptions {
        min_separation: sep,
        ..Default::default()
    };
    let ma = Motion::rigid(pair.pose_a(), step.end_a);
    let mb = Motion::rigid(pair.pose_b(), step.end_b);
    let t = Instant::now();
    let r = ctx.ccd(&m.a, &ma, &m.b, &mb, &opts).map_err(query_error)?;
    let query_ms = ms(t);
    let runs_on = ctx.runs_on(Query::Ccd);
    if json {
        let contacts: Vec<_> = r
            .contacts
            .iter()
            .map(|c| {
                json!({"feature": feature_json(&c.feature), "faces": c.faces,
                       "t_lo": c.toi.t_lo, "t_hi": c.toi.t_hi,
                       "certified": c.is_certified(), "separation": c.toi.separation})
            })
            .collect();
        let v = json!({
            "a": pair.a.display().to_string(),
            "b": pair.b.display().to_string(),
            "backend": ctx.backend().to_string(),
            "runs_on": runs_on.to_string(),
            "toi": r.earliest.map(|t| t.t_lo),
            "toi_hi": r.earliest.map(|t| t.t_hi),
            "count": r.contacts.len(),
            "undecided": r.undecided.len(),
            "contacts": contacts,
            "candidate_pairs": r.candidate_pairs,
            "elementary_tests": r.elementary_tests,
            "build_ms": m.build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "{}\nbackend: {} (ccd runs on the {runs_on})",
        m.header(pair),
        ctx.backend()
    );
    match r.earliest {
        None => println!("no contact during the step (certified)"),
        Some(t) => println!(
            "first contact at t >= {} (earliest interval [{}, {}])",
            t.t_lo, t.t_lo, t.t_hi
        ),
    }
    println!(
        "feature pairs that may touch: {} ({} certified, {} undecided; {} candidate triangle \
         pairs, {} elementary tests)",
        r.contacts.len(),
        r.contacts.iter().filter(|c| c.is_certified()).count(),
        r.undecided.len(),
        r.candidate_pairs,
        r.elementary_tests
    );
    let mut first: Vec<_> = r.contacts.iter().collect();
    first.sort_by(|x, y| x.toi.t_lo.total_cmp(&y.toi.t_lo));
    for c in first.iter().take(LISTED) {
        println!("  t >= {:.6}: {}", c.toi.t_lo, feature_text(&c.feature));
    }
    println!("build {:.3} ms, query {query_ms:.3} ms", m.build_ms);
    Ok(())
}
