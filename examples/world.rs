//! Many bodies at once: the broad phase over the bodies' world boxes, then every intersecting
//! triangle pair of every overlapping body pair (`collide_many`), and a list of chosen pairs
//! answered as one batch (`collide_batch`).
//!
//! ```text
//! cargo run --release --example world [-- BODY.obj]
//! ```
//!
//! A 6 × 6 × 3 heap of rings (or copies of the given mesh), each turned and shifted by a fixed
//! pseudo-random amount so that neighbours sometimes cut each other. Every body shares one
//! model: a model is a shape, a pose places it.

mod common;

use std::time::Instant;

use gprox::geometry::scene::torus;
use gprox::{Affine3A, CollideOptions, EulerRot, Model, Quat, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!(
        "collide_many runs on: {}, collide_batch on: {}",
        ctx.runs_on(Query::CollideMany),
        ctx.runs_on(Query::CollideBatch)
    );
    let [mesh, _] = common::meshes_or(|| {
        let t = torus(0.5, 0.12, 48, 24).expect("valid torus");
        [t.clone(), t]
    })?;
    let ring: Model = ctx.model(mesh)?;
    let size = {
        let p = ring.mesh().positions();
        let lo = p.iter().fold(Vec3::INFINITY, |m, &v| m.min(v));
        let hi = p.iter().fold(Vec3::NEG_INFINITY, |m, &v| m.max(v));
        (hi - lo).max_element()
    };

    // A grid with spacing a little under the body size, jittered and turned.
    let mut seed = 0x9e37_79b9_u32;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32
    };
    let spacing = 0.9 * size;
    let mut poses = Vec::new();
    for i in 0..6 {
        for j in 0..6 {
            for k in 0..3 {
                let jitter = Vec3::new(rand(), rand(), rand()) - 0.5;
                let at = Vec3::new(i as f32, j as f32, k as f32) * spacing + 0.2 * size * jitter;
                let turn = rotation(rand(), rand(), rand());
                poses.push(Affine3A::from_rotation_translation(turn, at));
            }
        }
    }
    let bodies: Vec<(&Model, Affine3A)> = poses.iter().map(|p| (&ring, *p)).collect();
    println!(
        "{} bodies of {} triangles ({} triangles in all)\n",
        bodies.len(),
        ring.face_count(),
        bodies.len() * ring.face_count()
    );

    let opts = CollideOptions::default();
    let t = Instant::now();
    let many = ctx.collide_many(&bodies, &opts)?;
    let many_ms = common::ms(t);
    println!(
        "collide_many: {} body pairs intersect, {} triangle pairs in all ({many_ms:.1} ms)",
        many.object_pairs.len(),
        many.total
    );
    for p in many.object_pairs.iter().take(5) {
        println!(
            "  bodies {:3} and {:3}: {:4} triangle pairs",
            p.a,
            p.b,
            p.pairs.len()
        );
    }
    if many.object_pairs.len() > 5 {
        println!("  ...");
    }

    // The same pairs asked for one by one, in one batch: the same triangle pairs.
    let chosen: Vec<_> = many
        .object_pairs
        .iter()
        .map(|p| (&ring, poses[p.a as usize], &ring, poses[p.b as usize]))
        .collect();
    let t = Instant::now();
    let batch = ctx.collide_batch(&chosen, &opts)?;
    let batch_ms = common::ms(t);
    let same = many
        .object_pairs
        .iter()
        .zip(&batch)
        .all(|(p, b)| &p.pairs == b);
    println!(
        "\ncollide_batch over those {} pairs: {} triangle pairs, same as collide_many: {same} ({batch_ms:.1} ms)",
        chosen.len(),
        batch.iter().map(Vec::len).sum::<usize>()
    );
    anyhow::ensure!(same, "collide_batch and collide_many disagree");

    // Batches take any pairs, also ones whose boxes do not touch: they come back empty.
    let far = Affine3A::from_translation(Vec3::splat(100.0));
    let empty = ctx.collide_batch(&[(&ring, poses[0], &ring, far)], &opts)?;
    println!("a pair 100 units apart: {} triangle pairs", empty[0].len());
    Ok(())
}

/// A rotation from three numbers in [0, 1) (any rotation; uniform enough for a demo).
fn rotation(a: f32, b: f32, c: f32) -> Quat {
    use std::f32::consts::TAU;
    Quat::from_euler(EulerRot::ZYX, TAU * a, TAU * b, TAU * c)
}
