//! Self-collision: intersecting faces of one mesh that share no vertex.
//!
//! ```text
//! cargo run --release --example self_collide [-- MESH.obj]
//! ```
//!
//! The built-in model is one mesh made of two tori (as cloth, a garment or a rope is one mesh
//! with many parts); the second slides into the first over a few frames, each frame an
//! in-place deformation (`Context::update` refits the tree, on the device where there is one).
//! Faces that share a vertex touch by construction and are never reported. A given mesh file
//! is checked as it is.

mod common;

use std::time::Instant;

use gprox::geometry::{io::load_mesh, scene::torus, TriMesh};
use gprox::{Error, Query, Vec3};

fn main() -> anyhow::Result<()> {
    let ctx = common::context()?;
    println!("self_collide runs on: {}", ctx.runs_on(Query::SelfCollide));

    if let Some(path) = std::env::args().nth(1) {
        let model = ctx.model(load_mesh(&path)?)?;
        let t = Instant::now();
        match ctx.self_collide(&model) {
            Ok(pairs) => println!(
                "{path}: {} faces, {} self-intersecting face pairs ({:.1} ms)",
                model.face_count(),
                pairs.len(),
                common::ms(t)
            ),
            Err(e @ Error::Unwelded { .. }) => println!("{path}: {e}"),
            Err(e) => return Err(e.into()),
        }
        return Ok(());
    }

    let ring = torus(1.0, 0.3, 64, 32).expect("valid torus");
    let n = ring.vertex_count();
    let at = |dx: f32| -> Vec<Vec3> {
        // Second ring: the first turned upright (in the xz plane) and moved by dx along x.
        let second = ring
            .positions()
            .iter()
            .map(|p| Vec3::new(p.x + dx, p.z, p.y));
        ring.positions().iter().copied().chain(second).collect()
    };
    let faces: Vec<[u32; 3]> = ring
        .faces()
        .iter()
        .copied()
        .chain(ring.faces().iter().map(|f| f.map(|v| v + n as u32)))
        .collect();
    let mut model = ctx.model(TriMesh::new(at(3.0), faces.clone())?)?;
    println!(
        "one mesh, two rings: {} faces, {} vertices\n",
        model.face_count(),
        model.mesh().vertex_count()
    );
    println!("second ring at x | intersecting face pairs | update ms | self_collide ms");
    for dx in [3.0f32, 2.3, 2.0, 1.6, 1.0] {
        let t = Instant::now();
        ctx.update(&mut model, &at(dx))?;
        let update_ms = common::ms(t);
        let t = Instant::now();
        let pairs = ctx.self_collide(&model)?;
        println!(
            "{dx:16.1} | {:23} | {update_ms:9.2} | {:.2}",
            pairs.len(),
            common::ms(t)
        );
        // Every pair is between the two rings: a ring alone does not cut itself.
        let split = ring.face_count() as u32;
        anyhow::ensure!(pairs.iter().all(|&[a, b]| a < split && b >= split));
    }
    println!(
        "(the upright ring cuts the flat one's tube around x = 2; at x = 1 they are linked like \
         chain links without touching)"
    );

    // A mesh whose touching faces do not share vertex ids (an STL, say) is refused: every face
    // around such a seam would be reported.
    let mut p = at(3.0);
    p[1] = p[0];
    let unwelded = ctx.model(TriMesh::new(p, faces)?)?;
    match ctx.self_collide(&unwelded) {
        Err(e @ Error::Unwelded { .. }) => println!("\nunwelded mesh: {e}"),
        other => anyhow::bail!("expected an Unwelded error, got {other:?}"),
    }
    Ok(())
}
