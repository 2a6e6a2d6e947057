//! The `penetration` subcommand: vertices of each closed mesh strictly inside the other.

use std::path::Path;
use std::time::Instant;

use gprox::geometry::transform::Pose64;
use gprox::query::collide::Side;
use gprox::query::penetration::{PenetratingVertex, PenetrationError};
use gprox::render::Picture;
use gprox::Context;
use serde_json::json;

use super::{check_picture_path, input, ms, query_error, save_picture, Failure, MeshPair, Models};

/// How many vertices the human-readable output lists.
const LISTED: usize = 10;

fn vertex_json(v: &PenetratingVertex) -> serde_json::Value {
    json!({
        "vertex": v.vertex,
        "position": v.position.to_array(),
        "depth": v.depth,
        "closest": v.closest.to_array(),
        "face": v.face,
        "direction": v.direction.to_array(),
    })
}

/// `gprox penetration A B`: every vertex of A strictly inside B and of B inside A, with depth,
/// closest point and direction; `--render` draws them as dots joined to their closest points.
pub fn penetration_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    json: bool,
    render: Option<&Path>,
) -> Result<(), Failure> {
    if let Some(r) = render {
        check_picture_path(r)?;
    }
    let (pose_a, pose_b) = (pair.pose_a(), pair.pose_b());
    let (a, b) = (pair.a.as_path(), pair.b.as_path());
    let (mesh_a, mesh_b, build_ms) = (m.a.mesh(), m.b.mesh(), m.build_ms);
    let (pa, pb) = (Pose64::from_affine(&pose_a), Pose64::from_affine(&pose_b));
    let t = Instant::now();
    let r = ctx.penetration(&m.a, &pose_a, &m.b, &pose_b).map_err(|e| {
        let file = |s: Side| match s {
            Side::A => a.display().to_string(),
            Side::B => b.display().to_string(),
        };
        match &e {
            gprox::Error::Penetration(
                PenetrationError::NotClosed { object, .. }
                | PenetrationError::NotOriented { object, .. }
                | PenetrationError::NonFinitePose { object },
            ) => input(format!("{}: {e}", file(*object))),
            _ => query_error(e),
        }
    })?;
    let query_ms = ms(t);
    if let Some(path) = render {
        // Faces holding a closest point are highlighted on the mesh they belong to.
        let faces_of = |list: &[PenetratingVertex]| list.iter().map(|v| v.face).collect::<Vec<_>>();
        let mut pic = Picture::new(960, 720);
        pic.add_mesh(mesh_a, &pa, Picture::GREY, &faces_of(r.b_in_a()));
        pic.add_mesh(mesh_b, &pb, Picture::SAND, &faces_of(r.a_in_b()));
        for (_, v) in r.iter() {
            pic.add_segment(v.position, v.closest);
            pic.add_dot(v.position);
        }
        save_picture(&pic, path)?;
    }
    if json {
        let v = json!({
            "a": a.display().to_string(),
            "b": b.display().to_string(),
            "triangles": [mesh_a.face_count(), mesh_b.face_count()],
            "inside_vertices": r.inside_vertices(),
            "max_depth": r.max_depth(),
            "sum_depth": r.sum_depth(),
            "a_in_b": r.a_in_b().iter().map(vertex_json).collect::<Vec<_>>(),
            "b_in_a": r.b_in_a().iter().map(vertex_json).collect::<Vec<_>>(),
            "build_ms": build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
        return Ok(());
    }
    println!("{}", m.header(pair));
    println!(
        "penetrating vertices: {} ({} of A inside B, {} of B inside A)",
        r.inside_vertices(),
        r.a_in_b().len(),
        r.b_in_a().len()
    );
    println!(
        "max depth {}, sum of depths {}",
        r.max_depth(),
        r.sum_depth()
    );
    let mut deepest: Vec<(Side, &PenetratingVertex)> = r.iter().collect();
    deepest.sort_by(|x, y| y.1.depth.total_cmp(&x.1.depth));
    for (side, v) in deepest.iter().take(LISTED) {
        let (own, other) = match side {
            Side::A => ("A", "B"),
            Side::B => ("B", "A"),
        };
        let d = v.direction;
        println!(
            "  {own} vertex {} depth {} -> {other} face {} (direction {} {} {})",
            v.vertex, v.depth, v.face, d.x, d.y, d.z
        );
    }
    if deepest.len() > LISTED {
        println!("  ... {} more", deepest.len() - LISTED);
    }
    println!("build {build_ms:.3} ms, query {query_ms:.3} ms");
    if let Some(r) = render {
        println!("picture: {}", r.display());
    }
    Ok(())
}
