//! Freeform queries on NURBS / Bézier surfaces: the certified distance between two Utah
//! teapots (32 bicubic Bézier patches each) and the sub-patches where they come into contact,
//! on their Coons BVHs, without tessellating.
//!
//! ```text
//! cargo run --release --example freeform [-- PATCHES.bpt | SURFACE.json]
//! ```
//!
//! Prints, for a few placements, the freeform distance (certified `lower ≤ d ≤ upper`, the
//! closest points with their surface and `(u, v)`), the mesh distance between the teapots'
//! tessellations for comparison (off by up to the tessellation's error), and, where they
//! overlap, the witnessed contacts within a tolerance (surface points and (u, v) on both).

mod common;

use std::time::Instant;

use gprox::geometry::freeform::{load_bpt, load_nurbs_json, teapot};
use gprox::{Affine3A, DistanceOptions, FreeformDistanceOptions, ModelOptions, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!(
        "freeform_distance runs on: {}, freeform_collide on: {}",
        ctx.runs_on(Query::FreeformDistance),
        ctx.runs_on(Query::FreeformCollide)
    );
    let builtin = std::env::args().nth(1).is_none();
    let surfaces = match std::env::args().nth(1) {
        Some(p) if p.ends_with(".json") => vec![load_nurbs_json(&p)?],
        Some(p) => load_bpt(&p)?,
        None => teapot(),
    };
    let mut options = ModelOptions::default();
    options.coons.epsilon = 1e-4; // Coons error bound, relative to the model's size
    let t = Instant::now();
    let pot = ctx.freeform_model(surfaces, &options)?;
    // The tessellation (a mesh model) for the mesh queries and for comparison.
    let mesh = pot.tessellated();
    println!(
        "{} surfaces, tessellated into {} triangles ({:.1} ms)",
        pot.surfaces().map_or(0, <[_]>::len),
        mesh.face_count(),
        common::ms(t)
    );
    let (lo, hi) = pot
        .mesh()
        .positions()
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    println!(
        "box: ({:.2}, {:.2}, {:.2}) .. ({:.2}, {:.2}, {:.2}); a second copy placed along x\n",
        lo.x, lo.y, lo.z, hi.x, hi.y, hi.z
    );

    let id = Affine3A::IDENTITY;
    let dist_opts = FreeformDistanceOptions {
        tolerance: 1e-5,
        ..Default::default()
    };
    for x in [8.0f32, 7.0, 6.5] {
        let pose = Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
        let t = Instant::now();
        let d = ctx.freeform_distance(&pot, &id, &pot, &pose, &dist_opts)?;
        let ff_ms = common::ms(t);
        let t = Instant::now();
        let m = ctx.distance(&mesh, &id, &mesh, &pose, &DistanceOptions::default())?;
        let mesh_ms = common::ms(t);
        println!(
            "second pot at x = {x}: distance {:.6} ∈ [{:.6}, {:.6}]{}, surface {}{} (u, v) = ({:.2}, {:.2}) \
             to surface {}{} ({:.2}, {:.2}) ({ff_ms:.0} ms)\n    tessellations: {:.6} ({mesh_ms:.1} ms)",
            d.distance,
            d.lower,
            d.upper,
            if d.converged { "" } else { " (not converged)" },
            d.surface_a,
            part(builtin, d.surface_a),
            d.uv_a.0,
            d.uv_a.1,
            d.surface_b,
            part(builtin, d.surface_b),
            d.uv_b.0,
            d.uv_b.1,
            m.distance,
        );
    }

    // Push the second pot into the first: the spout into the other's handle.
    let tolerance = 1e-3;
    let x = 5.0;
    let pose = Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    let t = Instant::now();
    let any = ctx.freeform_collide_any(&pot, &id, &pot, &pose, tolerance)?;
    let any_ms = common::ms(t);
    let t = Instant::now();
    let hits = ctx.freeform_collide(&pot, &id, &pot, &pose, tolerance)?;
    let all_ms = common::ms(t);
    let mut surfaces: Vec<(u32, u32)> = hits
        .contacts
        .iter()
        .map(|c| (c.surface_a, c.surface_b))
        .collect();
    surfaces.dedup();
    let names: std::collections::BTreeSet<String> = surfaces
        .iter()
        .map(|&(a, b)| format!("{}{} × {}{}", a, part(builtin, a), b, part(builtin, b)))
        .collect();
    println!(
        "\nsecond pot at x = {x} (tolerance {tolerance}): any = {any} ({any_ms:.1} ms); {} witnessed contacts \
         (two surface points within the tolerance) on {} surface pairs, {} undecided sub-patch pairs ({all_ms:.1} ms)",
        hits.contacts.len(),
        surfaces.len(),
        hits.undecided.len()
    );
    println!(
        "  surface pairs: {}",
        names.into_iter().collect::<Vec<_>>().join(", ")
    );
    if let Some(c) = hits.contacts.first() {
        println!(
            "  e.g. surface {} (u, v) = ({:.3}, {:.3}) at ({:.4}, {:.4}, {:.4}) against surface {} ({:.3}, {:.3}) at ({:.4}, {:.4}, {:.4}): {:.2e} apart",
            c.surface_a, c.uv_a.0, c.uv_a.1, c.point_a.x, c.point_a.y, c.point_a.z,
            c.surface_b, c.uv_b.0, c.uv_b.1, c.point_b.x, c.point_b.y, c.point_b.z, c.distance
        );
    }
    let mesh_pairs = ctx.collide_all(&mesh, &id, &mesh, &pose, &Default::default())?;
    println!(
        "  the tessellations there: {} intersecting triangle pairs",
        mesh_pairs.len()
    );
    Ok(())
}

/// The part of the built-in teapot a surface belongs to (its patches are in the classic order).
fn part(builtin: bool, surface: u32) -> &'static str {
    match (builtin, surface) {
        (false, _) => "",
        (_, 0..=3) => " (rim)",
        (_, 4..=11) => " (body)",
        (_, 12..=15) => " (handle)",
        (_, 16..=19) => " (spout)",
        (_, 20..=27) => " (lid)",
        _ => " (bottom)",
    }
}
