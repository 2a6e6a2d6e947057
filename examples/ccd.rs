//! Continuous collision: the first time of impact over a time step, which discrete checks at
//! the step's ends miss when a body tunnels through another.
//!
//! ```text
//! cargo run --release --example ccd
//! ```
//!
//! 1. A small ring falls through the tube of a big one in a single step: collision at the
//!    start and at the end says "free", CCD finds the impact and a certified lower bound of
//!    its time (`t_lo`: no contact before it, never later than the truth).
//! 2. A near miss, free without a minimum separation and a contact with one (δ).
//! 3. `ccd_self`: one mesh whose second part moves into its first part over the step.

mod common;

use std::time::Instant;

use gprox::geometry::{scene::torus, TriMesh};
use gprox::{Affine3A, CcdOptions, CollideOptions, MeshCcd, Motion, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!(
        "ccd runs on: {}, ccd_self on: {}\n",
        ctx.runs_on(Query::Ccd),
        ctx.runs_on(Query::CcdSelf)
    );

    // 1. Tunnelling: B (major 0.2, tube 0.05) falls from z = 1 to z = -1 above A's tube at x = 1.
    let big = ctx.model(torus(1.0, 0.3, 96, 48).expect("valid torus"))?;
    let small = ctx.model(torus(0.2, 0.05, 32, 16).expect("valid torus"))?;
    let still = Motion::rigid(Affine3A::IDENTITY, Affine3A::IDENTITY);
    let at = |z: f32| Affine3A::from_translation(Vec3::new(1.0, 0.0, z));
    let fall = Motion::rigid(at(1.0), at(-1.0));
    let opts = CollideOptions::default();
    let id = Affine3A::IDENTITY;
    let hit_start = ctx.collide_any(&big, &id, &small, &at(1.0), &opts)?;
    let hit_end = ctx.collide_any(&big, &id, &small, &at(-1.0), &opts)?;
    println!("1. a ring falls through a tube in one step (z: 1 → -1)");
    println!("   discrete collision at t = 0: {hit_start}, at t = 1: {hit_end}");
    let t = Instant::now();
    let r = ctx.ccd(&big, &still, &small, &fall, &CcdOptions::default())?;
    report(&r, common::ms(t));
    // First contact when the small ring's underside (z − 0.05) reaches the tube's top (0.3).
    println!(
        "   expected ≈ {:.4} (z = 0.35 of a fall from 1 to -1)",
        0.65 / 2.0
    );

    // 2. A near miss: the ring falls beside the tube, 0.05 away from it at the closest; free
    //    without a minimum separation, a contact with δ = 0.06 (per axis).
    let beside = |z: f32| Affine3A::from_translation(Vec3::new(1.6, 0.0, z));
    let pass = Motion::rigid(beside(1.0), beside(-1.0));
    println!("\n2. the ring falls beside the tube (0.05 away at the closest)");
    for delta in [0.0, 0.06] {
        let sep = CcdOptions {
            min_separation: delta,
            ..CcdOptions::default()
        };
        let t = Instant::now();
        let r = ctx.ccd(&big, &still, &small, &pass, &sep)?;
        println!("   minimum separation δ = {delta}:");
        report(&r, common::ms(t));
    }

    // 3. Self CCD: one mesh of two rings; the upright second ring moves from x = 3 to x = 1.6.
    let ring = torus(1.0, 0.3, 64, 32).expect("valid torus");
    let n = ring.vertex_count() as u32;
    let place = |dx: f32| -> Vec<Vec3> {
        let second = ring
            .positions()
            .iter()
            .map(|p| Vec3::new(p.x + dx, p.z, p.y));
        ring.positions().iter().copied().chain(second).collect()
    };
    let faces = ring
        .faces()
        .iter()
        .copied()
        .chain(ring.faces().iter().map(|f| f.map(|v| v + n)))
        .collect();
    let model = ctx.model(TriMesh::new(place(3.0), faces)?)?;
    let t = Instant::now();
    let r = ctx.ccd_self(&model, &place(1.6), &CcdOptions::default())?;
    println!("\n3. ccd_self: one mesh, its second ring moves from x = 3.0 to x = 1.6");
    report(&r, common::ms(t));
    println!(
        "   expected ≈ {:.4} (x = 2.6, where the tubes first touch)",
        0.4 / 1.4
    );
    Ok(())
}

/// One line about a CCD result.
fn report(r: &MeshCcd, ms: f64) {
    match r.earliest {
        Some(toi) => println!(
            "   CCD: first impact in t ∈ [{:.4}, {:.4}], {} feature contacts on {} face pairs \
             ({} candidate face pairs, {} elementary tests, {ms:.1} ms)",
            toi.t_lo,
            toi.t_hi,
            r.contacts.len(),
            r.face_pair_tois().len(),
            r.candidate_pairs,
            r.elementary_tests
        ),
        None => println!("   CCD: certified free for the whole step ({ms:.1} ms)"),
    }
}
