//! Separation distance between two meshes: closest points, their faces and certified bounds.
//!
//! ```text
//! cargo run --release --example distance [-- A.obj [B.stl]]
//! GPROX_BACKEND=cpu cargo run --release --example distance
//! ```
//!
//! Two tori (or the given meshes) side by side at decreasing gaps: the exact distance with its
//! closest points, the same query with a 5 % relative tolerance (faster, still certified
//! `lower ≤ d ≤ upper`), and a threshold query that only answers "closer than δ?".

mod common;

use std::time::Instant;

use gprox::geometry::scene::torus;
use gprox::{Affine3A, DistanceOptions, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!("distance runs on: {}", ctx.runs_on(Query::Distance));
    let [ma, mb] = common::meshes_or(|| {
        let t = torus(1.0, 0.3, 96, 48).expect("valid torus");
        [t.clone(), t]
    })?;
    let a = ctx.model(ma)?;
    let b = ctx.model(mb)?;
    println!(
        "A: {} triangles, B: {} triangles",
        a.face_count(),
        b.face_count()
    );

    // Place B to the right of A's bounding box, at a few gaps.
    let (amin, amax) = bounds(a.mesh().positions());
    let (bmin, _) = bounds(b.mesh().positions());
    let pose_a = Affine3A::IDENTITY;
    let exact = DistanceOptions::default();
    let loose = DistanceOptions {
        rel_tol: 0.05,
        ..DistanceOptions::default()
    };
    println!("\n  gap |   distance | closest point on A          | faces (A, B) |  ms  | 5% tol: [lower, upper]  ms");
    for gap in [1.0f32, 0.25, 0.05, 0.0] {
        // B's left extreme at A's right extreme + gap (the boxes' gap; the surfaces may be
        // farther apart, and overlap at gap 0 only if the shapes do).
        let shift = Vec3::new(amax.x - bmin.x + gap, 0.0, 0.0);
        let pose_b = Affine3A::from_translation(shift);
        let t = Instant::now();
        let r = ctx.distance(&a, &pose_a, &b, &pose_b, &exact)?;
        let exact_ms = common::ms(t);
        let t = Instant::now();
        let l = ctx.distance(&a, &pose_a, &b, &pose_b, &loose)?;
        let loose_ms = common::ms(t);
        let p = r.point_a;
        println!(
            "{gap:5.2} | {:10.6} | ({:7.4}, {:7.4}, {:7.4}) | ({:5}, {:5}) | {exact_ms:4.1} | [{:.4}, {:.4}] {loose_ms:4.1}",
            r.distance, p.x, p.y, p.z, r.tri_a, r.tri_b, l.lower, l.upper,
        );
        anyhow::ensure!(
            r.lower <= r.distance && r.distance <= r.upper,
            "bounds broken"
        );
        anyhow::ensure!(l.lower <= r.distance + 1e-12 && r.distance <= l.upper + 1e-12);
    }

    // "Closer than δ?": stops at the first triangle pair within δ.
    let delta = 0.1;
    let near = Affine3A::from_translation(Vec3::new(amax.x - bmin.x + 0.05, 0.0, 0.0));
    let thr = DistanceOptions {
        threshold: Some(delta),
        ..DistanceOptions::default()
    };
    let r = ctx.distance(&a, &pose_a, &b, &near, &thr)?;
    println!(
        "\nthreshold query (δ = {delta}): below = {}, a pair at {:.4} found",
        r.below_threshold, r.distance
    );
    println!(
        "A's box spans x ∈ [{:.2}, {:.2}]; distances are f64 world-space, exact unless a tolerance is asked for",
        amin.x, amax.x
    );
    Ok(())
}

/// The corners of the axis-aligned box around `p`.
fn bounds(p: &[Vec3]) -> (Vec3, Vec3) {
    p.iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}
