//! The main job: collision between two interlocking tori (the built-in scene), frame by frame.
//!
//! ```text
//! cargo run --release --example collide [-- SCENE_DIR]
//! ```
//!
//! Prints the intersecting triangle pairs per frame with the time of each stage (BVH build
//! once, per-frame update = refit of deforming objects, collide), then draws the frame with the
//! most contacts, the contact triangles in red, to `target/gprox-collide.png` and `.svg`.
//! With a `proxbench-scene/1` folder as argument it runs that scene's first object pair instead.

use std::path::PathBuf;
use std::time::Instant;

use gprox::geometry::scene::Scene;
use gprox::render::Picture;
use gprox::{Backend, CollideOptions, Context};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = match std::env::args_os().nth(1) {
        Some(dir) => Scene::load(PathBuf::from(dir))?,
        None => Scene::builtin(),
    };
    let backend = Backend::auto();
    let ctx = Context::new(backend)?;
    let (ia, ib) = (0, 1.min(scene.object_count() - 1));
    println!(
        "scene `{}`: {} ({} frames)\nbackend: {backend}, {} threads",
        scene.name(),
        scene.description(),
        scene.frame_count(),
        rayon::current_num_threads()
    );

    let t = Instant::now();
    let mut a = ctx.model(scene.mesh(ia).clone())?;
    let mut b = ctx.model(scene.mesh(ib).clone())?;
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "build: {:.3} ms for {} + {} triangles\n",
        build_ms,
        a.face_count(),
        b.face_count()
    );

    let opts = CollideOptions::default();
    println!("frame | pairs | any   | update ms | collide ms | any ms");
    println!("------|-------|-------|-----------|------------|-------");
    let mut best: Option<(usize, Vec<[u32; 2]>)> = None;
    let (mut total_update, mut total_collide) = (0.0, 0.0);
    for f in 0..scene.frame_count() {
        let t = Instant::now();
        if scene.is_deforming(ia) {
            ctx.update(&mut a, scene.positions(f, ia))?;
        }
        if scene.is_deforming(ib) {
            ctx.update(&mut b, scene.positions(f, ib))?;
        }
        let update_ms = t.elapsed().as_secs_f64() * 1e3;
        let (pa, pb) = (scene.pose(f, ia), scene.pose(f, ib));
        let t = Instant::now();
        let pairs = ctx.collide_all(&a, &pa, &b, &pb, &opts)?;
        let collide_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let any = ctx.collide_any(&a, &pa, &b, &pb, &opts)?;
        let any_ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "{f:5} | {:5} | {:5} | {update_ms:9.3} | {collide_ms:10.3} | {any_ms:6.3}",
            pairs.len(),
            any
        );
        if any == pairs.is_empty() {
            return Err(format!("frame {f}: collide_any = {any} but {} pairs", pairs.len()).into());
        }
        total_update += update_ms;
        total_collide += collide_ms;
        if best.as_ref().is_none_or(|(_, p)| pairs.len() > p.len()) {
            best = Some((f, pairs));
        }
    }
    println!(
        "\ntotals: build {build_ms:.3} ms, update {total_update:.3} ms, collide {total_collide:.3} ms"
    );

    let (frame, pairs) = best.unwrap_or_default();
    let faces_a: Vec<u32> = pairs.iter().map(|p| p[0]).collect();
    let faces_b: Vec<u32> = pairs.iter().map(|p| p[1]).collect();
    let mut picture = Picture::new(960, 720);
    let mesh_at = |m: &gprox::Model, o: usize| -> Result<gprox::geometry::TriMesh, gprox::Error> {
        let mut mesh = m.mesh().clone();
        mesh.set_positions(scene.positions(frame, o).to_vec())?;
        Ok(mesh)
    };
    picture.add_mesh(
        &mesh_at(&a, ia)?,
        &scene.pose64(frame, ia),
        Picture::GREY,
        &faces_a,
    );
    picture.add_mesh(
        &mesh_at(&b, ib)?,
        &scene.pose64(frame, ib),
        Picture::SAND,
        &faces_b,
    );
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&out)?;
    let png = out.join("gprox-collide.png");
    let image = picture.save_png(&png)?;
    picture.save_svg(out.join("gprox-collide.svg"))?;
    println!(
        "picture of frame {frame} ({} contact pairs): {} (+ .svg), {} pixels covered, {} highlighted",
        pairs.len(),
        png.display(),
        image.covered_pixels,
        image.highlighted_pixels
    );
    Ok(())
}
