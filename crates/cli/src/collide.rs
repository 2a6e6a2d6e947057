//! The `collide` subcommand on meshes (or freeform models' tessellations).

use std::path::Path;
use std::time::Instant;

use gprox::geometry::transform::Pose64;
use gprox::render::Picture;
use gprox::{CollideOptions, Context};
use serde_json::json;

use super::{
    check_picture_path, input, ms, queries, query_error, save_picture, Failure, MeshPair, Models,
};

/// Where a pair query's results go besides the text.
pub struct Output<'a> {
    /// Machine-readable output.
    pub json: bool,
    /// Picture file (`.png` or `.svg`).
    pub render: Option<&'a Path>,
    /// Coloured mesh file (`.ply` or `.obj`).
    pub export: Option<&'a Path>,
}

/// `gprox collide A B` on two mesh models (or tessellations): every intersecting triangle pair,
/// or whether there is one.
pub fn collide_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    margin: f64,
    any: bool,
    out: &Output<'_>,
) -> Result<(), Failure> {
    let (json, render, export) = (out.json, out.render, out.export);
    let (ma, mb, build_ms) = (&m.a, &m.b, m.build_ms);
    if let Some(e) = export {
        queries::check_export_path(e)?;
    }
    if !(margin >= 0.0 && margin.is_finite()) {
        return Err(input(format!(
            "--margin must be finite and >= 0, got {margin}"
        )));
    }
    if let Some(r) = render {
        check_picture_path(r)?;
    }
    let (pose_a, pose_b) = (pair.pose_a(), pair.pose_b());
    let (a, b) = (pair.a.as_path(), pair.b.as_path());
    let backend = ctx.backend();
    let opts = CollideOptions { margin };
    let t = Instant::now();
    let (pairs, collide) = if any {
        let hit = ctx
            .collide_any(ma, &pose_a, mb, &pose_b, &opts)
            .map_err(query_error)?;
        (None, hit)
    } else {
        let p = ctx
            .collide_all(ma, &pose_a, mb, &pose_b, &opts)
            .map_err(query_error)?;
        let hit = !p.is_empty();
        (Some(p), hit)
    };
    let query_ms = ms(t);
    if let Some(path) = render {
        let p = pairs.clone().unwrap_or_default();
        let mut pic = Picture::new(960, 720);
        let fa: Vec<u32> = p.iter().map(|x| x[0]).collect();
        let fb: Vec<u32> = p.iter().map(|x| x[1]).collect();
        pic.add_mesh(ma.mesh(), &Pose64::from_affine(&pose_a), Picture::GREY, &fa);
        pic.add_mesh(mb.mesh(), &Pose64::from_affine(&pose_b), Picture::SAND, &fb);
        save_picture(&pic, path)?;
    }
    if let Some(path) = export {
        let p = pairs.clone().unwrap_or_default();
        let mut fa: Vec<u32> = p.iter().map(|x| x[0]).collect();
        let mut fb: Vec<u32> = p.iter().map(|x| x[1]).collect();
        fa.sort_unstable();
        fa.dedup();
        fb.sort_unstable();
        fb.dedup();
        queries::export(
            path,
            &[
                (ma.mesh(), Pose64::from_affine(&pose_a), &fa),
                (mb.mesh(), Pose64::from_affine(&pose_b), &fb),
            ],
        )?;
    }
    if json {
        let v = json!({
            "a": a.display().to_string(),
            "b": b.display().to_string(),
            "backend": backend.to_string(),
            "triangles": [ma.face_count(), mb.face_count()],
            "collide": collide,
            "count": pairs.as_ref().map(|p| p.len()),
            "pairs": pairs,
            "build_ms": build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
    } else {
        println!("{}\nbackend: {backend}", m.header(pair));
        match &pairs {
            Some(p) => println!("intersecting triangle pairs: {}", p.len()),
            None => println!("intersect: {collide}"),
        }
        if let Some(p) = &pairs {
            for [i, j] in p.iter().take(10) {
                println!("  A face {i} x B face {j}");
            }
            if p.len() > 10 {
                println!("  ... {} more", p.len() - 10);
            }
        }
        println!("build {build_ms:.3} ms, query {query_ms:.3} ms");
        if let Some(r) = render {
            println!("picture: {}", r.display());
        }
    }
    Ok(())
}
