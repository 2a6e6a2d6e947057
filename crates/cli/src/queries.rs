//! The `distance` and `self` subcommands and the coloured PLY/OBJ export.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use glam::{Affine3A, Vec3};
use gprox::geometry::transform::{transform_point, Pose64};
use gprox::geometry::TriMesh;
use gprox::query::distance::DistanceOptions;
use gprox::render::Picture;
use gprox::Context;
use serde_json::json;

use super::{
    check_picture_path, input, models, ms, query_error, save_picture, Failure, MeshPair, Models,
};

/// Colour of faces without contact in exports.
const PLAIN: [u8; 3] = [190, 190, 190];
/// Colour of contact faces in exports.
const CONTACT: [u8; 3] = [230, 30, 30];

/// Checks an `--export` path (`.ply` or `.obj`).
pub fn check_export_path(path: &Path) -> Result<(), Failure> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("ply" | "obj") => Ok(()),
        _ => Err(input(format!(
            "--export {}: the file name must end in .ply or .obj",
            path.display()
        ))),
    }
}

/// Writes the posed meshes as one mesh, contact faces (per mesh, face ids) red, others grey.
pub fn export(path: &Path, parts: &[(&TriMesh, Pose64, &[u32])]) -> Result<(), Failure> {
    let mut positions = Vec::new();
    let mut faces: Vec<([usize; 3], bool)> = Vec::new();
    for (mesh, pose, contact) in parts {
        let base = positions.len();
        positions.extend(mesh.positions().iter().map(|&p| transform_point(pose, p)));
        let mut hit = vec![false; mesh.faces().len()];
        for &f in contact.iter() {
            if let Some(h) = hit.get_mut(f as usize) {
                *h = true;
            }
        }
        for (f, h) in mesh.faces().iter().zip(hit) {
            faces.push((f.map(|i| base + i as usize), h));
        }
    }
    let werr = |e: std::io::Error| input(format!("cannot write {}: {e}", path.display()));
    let mut out = String::new();
    if path.extension().is_some_and(|e| e == "ply") {
        out.push_str("ply\nformat ascii 1.0\ncomment gprox export: contact faces red\n");
        out.push_str(&format!("element vertex {}\n", positions.len()));
        out.push_str("property float x\nproperty float y\nproperty float z\n");
        out.push_str(&format!("element face {}\n", faces.len()));
        out.push_str("property list uchar int vertex_indices\n");
        out.push_str("property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n");
        for p in &positions {
            out.push_str(&format!("{} {} {}\n", p.x as f32, p.y as f32, p.z as f32));
        }
        for ([a, b, c], h) in &faces {
            let [r, g, bl] = if *h { CONTACT } else { PLAIN };
            out.push_str(&format!("3 {a} {b} {c} {r} {g} {bl}\n"));
        }
        std::fs::write(path, out).map_err(werr)?;
    } else {
        let mtl = path.with_extension("mtl");
        let mtl_name = mtl
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let col = |c: [u8; 3]| {
            format!(
                "{} {} {}",
                c[0] as f32 / 255.0,
                c[1] as f32 / 255.0,
                c[2] as f32 / 255.0
            )
        };
        let m = format!(
            "newmtl plain\nKd {}\nnewmtl contact\nKd {}\n",
            col(PLAIN),
            col(CONTACT)
        );
        std::fs::write(&mtl, m).map_err(werr)?;
        out.push_str(&format!(
            "# gprox export: contact faces use material `contact`\nmtllib {mtl_name}\n"
        ));
        for p in &positions {
            out.push_str(&format!("v {} {} {}\n", p.x as f32, p.y as f32, p.z as f32));
        }
        for hit in [false, true] {
            out.push_str(if hit {
                "usemtl contact\n"
            } else {
                "usemtl plain\n"
            });
            for ([a, b, c], _) in faces.iter().filter(|f| f.1 == hit) {
                out.push_str(&format!("f {} {} {}\n", a + 1, b + 1, c + 1));
            }
        }
        let mut f = std::fs::File::create(path).map_err(werr)?;
        f.write_all(out.as_bytes()).map_err(werr)?;
    }
    Ok(())
}

fn point(p: glam::DVec3) -> [f64; 3] {
    p.to_array()
}

/// `gprox distance A B`: exact minimum distance between two posed meshes (RSS trees, on
/// `ctx`'s backend; the first query builds each model's distance tree, timed apart as the build).
pub fn distance_cmd(
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
    let (ma, mb) = (&m.a, &m.b);
    let t = Instant::now();
    let opts = DistanceOptions::default();
    // A first query far apart makes both models' distance trees (and device copies).
    let far = Affine3A::from_translation(Vec3::splat(1e6));
    ctx.distance(ma, &Affine3A::IDENTITY, mb, &far, &opts)
        .map_err(query_error)?;
    let build_ms = m.build_ms + ms(t);
    let (mesh_a, mesh_b) = (ma.mesh(), mb.mesh());
    let (pa, pb) = (Pose64::from_affine(&pose_a), Pose64::from_affine(&pose_b));
    let t = Instant::now();
    let r = ctx
        .distance(ma, &pose_a, mb, &pose_b, &opts)
        .map_err(query_error)?;
    let query_ms = ms(t);
    if let Some(path) = render {
        let mut pic = Picture::new(960, 720);
        pic.add_mesh(mesh_a, &pa, Picture::GREY, &[r.tri_a]);
        pic.add_mesh(mesh_b, &pb, Picture::SAND, &[r.tri_b]);
        pic.add_segment(r.point_a, r.point_b);
        pic.add_dot(r.point_a);
        pic.add_dot(r.point_b);
        save_picture(&pic, path)?;
    }
    if json {
        let v = json!({
            "a": a.display().to_string(),
            "b": b.display().to_string(),
            "backend": ctx.backend().to_string(),
            "triangles": [mesh_a.face_count(), mesh_b.face_count()],
            "distance": r.distance,
            "lower": r.lower,
            "upper": r.upper,
            "point_a": point(r.point_a),
            "point_b": point(r.point_b),
            "tri_a": r.tri_a,
            "tri_b": r.tri_b,
            "build_ms": build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
    } else {
        println!("{}", m.header(pair));
        println!("backend: {}", ctx.backend());
        println!(
            "distance: {} (bounds [{}, {}])",
            r.distance, r.lower, r.upper
        );
        let (p, q) = (r.point_a, r.point_b);
        println!(
            "closest point on A: {} {} {} (face {})",
            p.x, p.y, p.z, r.tri_a
        );
        println!(
            "closest point on B: {} {} {} (face {})",
            q.x, q.y, q.z, r.tri_b
        );
        println!("build {build_ms:.3} ms, query {query_ms:.3} ms");
        if let Some(r) = render {
            println!("picture: {}", r.display());
        }
    }
    Ok(())
}

/// `gprox self M`: pairs of faces of one mesh that share no vertex and intersect (on `ctx`'s
/// backend).
pub fn self_cmd(
    ctx: &Context,
    m: &Path,
    json: bool,
    render: Option<&Path>,
    export_to: Option<&Path>,
) -> Result<(), Failure> {
    if let Some(r) = render {
        check_picture_path(r)?;
    }
    if let Some(e) = export_to {
        check_export_path(e)?;
    }
    let (model, build_ms) = models::load(ctx, m, false)?;
    let t = Instant::now();
    model.topology();
    let build_ms = build_ms + ms(t);
    let t = Instant::now();
    let pairs = ctx.self_collide(&model).map_err(query_error)?;
    let query_ms = ms(t);
    let mesh = model.mesh();
    let mut contact: Vec<u32> = pairs.iter().flatten().copied().collect();
    contact.sort_unstable();
    contact.dedup();
    if let Some(path) = render {
        let mut pic = Picture::new(960, 720);
        pic.add_mesh(mesh, &Pose64::IDENTITY, Picture::GREY, &contact);
        save_picture(&pic, path)?;
    }
    if let Some(path) = export_to {
        export(path, &[(mesh, Pose64::IDENTITY, &contact)])?;
    }
    if json {
        let v = json!({
            "mesh": m.display().to_string(),
            "backend": ctx.backend().to_string(),
            "triangles": mesh.face_count(),
            "count": pairs.len(),
            "pairs": pairs,
            "contact_faces": contact.len(),
            "build_ms": build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
    } else {
        println!("mesh: {} ({} triangles)", m.display(), mesh.face_count());
        println!("backend: {}", ctx.backend());
        println!(
            "self-intersecting face pairs (no shared vertex): {}",
            pairs.len()
        );
        for [i, j] in pairs.iter().take(10) {
            println!("  face {i} x face {j}");
        }
        if pairs.len() > 10 {
            println!("  ... {} more", pairs.len() - 10);
        }
        println!("build {build_ms:.3} ms, query {query_ms:.3} ms");
        if let Some(r) = render {
            println!("picture: {}", r.display());
        }
        if let Some(e) = export_to {
            println!("export: {}", e.display());
        }
    }
    Ok(())
}
