//! Penetration of two closed meshes: every vertex of one inside the other, with its depth, the
//! nearest point of the other surface and the direction that pushes it out.
//!
//! ```text
//! cargo run --release --example penetration [-- A.obj [B.stl]]
//! ```
//!
//! Two tori (or the given closed meshes) pushed into each other step by step. Depths are per
//! vertex (exact inside tests, exact nearest faces), not one EPA vector: the deepest vertex
//! and the sum over all inside vertices say how far the bodies overlap, and in which direction
//! to separate them. An open mesh is refused with a typed error naming the edge.

mod common;

use std::time::Instant;

use gprox::geometry::{scene::torus, TriMesh};
use gprox::{Affine3A, Error, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!("penetration runs on: {}", ctx.runs_on(Query::Penetration));
    let [ma, mb] = common::meshes_or(|| {
        let t = torus(1.0, 0.3, 96, 48).expect("valid torus");
        [t.clone(), t]
    })?;
    let xmax = |m: &TriMesh| m.positions().iter().map(|p| p.x).fold(f32::MIN, f32::max);
    let xmin = |m: &TriMesh| m.positions().iter().map(|p| p.x).fold(f32::MAX, f32::min);
    // B's left extreme this far inside A's right extreme.
    let touch = xmax(&ma) - xmin(&mb);
    let a = ctx.model(ma)?;
    let b = ctx.model(mb)?;
    let id = Affine3A::IDENTITY;

    println!("\noverlap | A in B | B in A | max depth | sum of depths | deepest: vertex → direction out | ms");
    for overlap in [0.0f32, 0.05, 0.1, 0.2] {
        let pose_b = Affine3A::from_translation(Vec3::new(touch - overlap, 0.0, 0.0));
        let t = Instant::now();
        let r = ctx.penetration(&a, &id, &b, &pose_b)?;
        let ms = common::ms(t);
        let deepest = r
            .iter()
            .max_by(|x, y| x.1.depth.total_cmp(&y.1.depth))
            .map(|(side, v)| {
                let d = v.direction;
                format!(
                    "{side:?} {:5} → ({:5.2}, {:5.2}, {:5.2})",
                    v.vertex, d.x, d.y, d.z
                )
            })
            .unwrap_or_else(|| "none".into());
        println!(
            "{overlap:7.2} | {:6} | {:6} | {:9.4} | {:13.4} | {deepest:32} | {ms:.1}",
            r.a_in_b().len(),
            r.b_in_a().len(),
            r.max_depth(),
            r.sum_depth() + 0.0, // + 0.0: no "-0" for an empty sum
        );
    }
    println!("(tori pushed together along x: the deepest vertices are pushed out along ∓x)");

    // Penetration needs closed, consistently oriented meshes: a lone triangle is refused.
    let tri = ctx.model(TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        vec![[0, 1, 2]],
    )?)?;
    match ctx.penetration(&a, &id, &tri, &id) {
        Err(e @ Error::Penetration(_)) => println!("\nan open mesh: {e}"),
        other => anyhow::bail!("expected a penetration error, got {other:?}"),
    }
    Ok(())
}
