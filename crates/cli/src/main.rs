//! `gprox`: collision queries between mesh files from the command line.
//!
//! ```text
//! gprox collide A.obj B.stl --pose-b 0.5,0,0,0,90,0 [--json] [--render out.png] [--export out.ply]
//! gprox distance A.obj B.obj --pose-b 3,0,0 [--json] [--render out.png]
//! gprox penetration A.obj B.obj --pose-b 0.5,0,0 [--json] [--render out.png]
//! gprox self M.obj [--json] [--render out.png] [--export out.obj]
//! gprox info FILE_OR_SCENE_DIR [--json]
//! gprox bench SCENE_DIR|builtin [--frames N] [--json]
//! ```
//!
//! Exit status: 0 on success, 2 on bad arguments or unreadable/invalid input (with a message
//! naming the problem), 1 on other failures.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use glam::{Affine3A, EulerRot, Quat, Vec3};
use gprox::geometry::scene::Scene;
use gprox::geometry::transform::Pose64;
use gprox::geometry::TriMesh;
use gprox::render::Picture;
use gprox::{Backend, CollideOptions, Context};
use serde_json::json;

mod penetration;
mod queries;

#[derive(Parser)]
#[command(
    name = "gprox",
    version,
    about = "Geometric proximity queries between triangle meshes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Two mesh files and their poses (the pair subcommands).
#[derive(Args)]
struct MeshPair {
    /// First mesh file.
    a: PathBuf,
    /// Second mesh file.
    b: PathBuf,
    /// Pose of A: `tx,ty,tz[,rx,ry,rz]`, rotations in degrees about x, then y, then z.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pose_a: Option<Affine3A>,
    /// Pose of B, as `--pose-a`.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pose_b: Option<Affine3A>,
}

impl MeshPair {
    /// Pose of A (identity when not given).
    fn pose_a(&self) -> Affine3A {
        self.pose_a.unwrap_or(Affine3A::IDENTITY)
    }

    /// Pose of B (identity when not given).
    fn pose_b(&self) -> Affine3A {
        self.pose_b.unwrap_or(Affine3A::IDENTITY)
    }

    /// Loads both meshes (bad files: exit status 2).
    fn load(&self) -> Result<(TriMesh, TriMesh), Failure> {
        let a = gprox::geometry::io::load_mesh(&self.a).map_err(input)?;
        let b = gprox::geometry::io::load_mesh(&self.b).map_err(input)?;
        Ok((a, b))
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    /// CUDA device 0 when usable, else the CPU.
    Auto,
    /// The CPU (rayon).
    Cpu,
    /// CUDA device 0.
    Cuda,
}

impl BackendArg {
    /// The context of the chosen backend (a typed input error when CUDA cannot run here).
    fn context(self) -> Result<Context, Failure> {
        let backend = match self {
            BackendArg::Auto => Backend::auto(),
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Cuda => Backend::Cuda(0),
        };
        Context::new(backend).map_err(input)
    }
}

// Parsed once per run: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Intersecting triangle pairs between two meshes (OBJ, STL, PLY).
    Collide {
        #[command(flatten)]
        pair: MeshPair,
        /// Contact margin (world units, >= 0): pairs closer than this also count.
        #[arg(long, default_value_t = 0.0)]
        margin: f64,
        /// Only answer whether they intersect (early out).
        #[arg(long)]
        any: bool,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw both meshes with the contact triangles highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
        /// Write both posed meshes with per-face colours, contact faces red (`.ply`, or `.obj`
        /// with a companion `.mtl`).
        #[arg(long)]
        export: Option<PathBuf>,
    },
    /// Exact minimum distance between two meshes, closest points and triangles.
    Distance {
        #[command(flatten)]
        pair: MeshPair,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw both meshes, the closest points joined by a segment (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Vertices of each closed mesh strictly inside the other: depth, closest point, direction.
    Penetration {
        /// The two meshes (closed, consistently oriented).
        #[command(flatten)]
        pair: MeshPair,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw both meshes, penetrating vertices as dots joined to their closest points, the
        /// faces holding those points highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Self-intersecting face pairs (sharing no vertex) of one mesh.
    #[command(name = "self")]
    SelfCollide {
        /// Mesh file.
        m: PathBuf,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw the mesh with the contact triangles highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
        /// Write the mesh with per-face colours, contact faces red (`.ply` or `.obj`).
        #[arg(long)]
        export: Option<PathBuf>,
    },
    /// Facts about a mesh file or a scene folder.
    Info {
        /// Mesh file or `proxbench-scene/1` folder.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Collide-all and collide-any over every frame of a scene, with times.
    Bench {
        /// Scene folder, or `builtin`.
        scene: PathBuf,
        /// Only the first N frames.
        #[arg(long)]
        frames: Option<usize>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// A failure with its exit status.
struct Failure {
    code: u8,
    message: String,
}

/// Bad input (files, values): exit status 2.
fn input(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: 2,
        message: e.to_string(),
    }
}

/// Anything else: exit status 1.
fn internal(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: 1,
        message: e.to_string(),
    }
}

fn parse_pose(s: &str) -> Result<Affine3A, String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f32>()
                .map_err(|_| format!("`{x}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() != 3 && v.len() != 6 {
        return Err(format!(
            "expected tx,ty,tz or tx,ty,tz,rx,ry,rz; got {} values",
            v.len()
        ));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err("pose values must be finite".into());
    }
    let r = if v.len() == 6 {
        let d = |x: f32| x.to_radians();
        Quat::from_euler(EulerRot::ZYX, d(v[5]), d(v[4]), d(v[3]))
    } else {
        Quat::IDENTITY
    };
    Ok(Affine3A::from_rotation_translation(
        r,
        Vec3::new(v[0], v[1], v[2]),
    ))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Collide {
            pair,
            margin,
            any,
            backend,
            json,
            render,
            export,
        } => collide(
            &pair,
            margin,
            any,
            backend,
            json,
            render.as_deref(),
            export.as_deref(),
        ),
        Command::Distance {
            pair,
            backend,
            json,
            render,
        } => backend
            .context()
            .and_then(|ctx| queries::distance_cmd(&ctx, &pair, json, render.as_deref())),
        Command::Penetration { pair, json, render } => {
            penetration::penetration_cmd(&pair, json, render.as_deref())
        }
        Command::SelfCollide {
            m,
            backend,
            json,
            render,
            export,
        } => backend.context().and_then(|ctx| {
            queries::self_cmd(&ctx, &m, json, render.as_deref(), export.as_deref())
        }),
        Command::Info { file, json } => info(&file, json),
        Command::Bench {
            scene,
            frames,
            json,
        } => bench(&scene, frames, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("gprox: error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn collide(
    pair: &MeshPair,
    margin: f64,
    any: bool,
    backend: BackendArg,
    json: bool,
    render: Option<&Path>,
    export: Option<&Path>,
) -> Result<(), Failure> {
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
    let (mesh_a, mesh_b) = pair.load()?;
    let (pose_a, pose_b) = (pair.pose_a(), pair.pose_b());
    let (a, b) = (pair.a.as_path(), pair.b.as_path());
    let ctx = backend.context()?;
    let backend = ctx.backend();
    let t = Instant::now();
    let ma = ctx.model(mesh_a).map_err(internal)?;
    let mb = ctx.model(mesh_b).map_err(internal)?;
    let build_ms = ms(t);
    let opts = CollideOptions { margin };
    let t = Instant::now();
    let (pairs, collide) = if any {
        let hit = ctx
            .collide_any(&ma, &pose_a, &mb, &pose_b, &opts)
            .map_err(internal)?;
        (None, hit)
    } else {
        let p = ctx
            .collide_all(&ma, &pose_a, &mb, &pose_b, &opts)
            .map_err(internal)?;
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
        println!(
            "A: {} ({} triangles)\nB: {} ({} triangles)\nbackend: {backend}",
            a.display(),
            ma.face_count(),
            b.display(),
            mb.face_count()
        );
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

fn check_picture_path(path: &Path) -> Result<(), Failure> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("png" | "svg") => Ok(()),
        _ => Err(input(format!(
            "--render {}: the file name must end in .png or .svg",
            path.display()
        ))),
    }
}

fn save_picture(pic: &Picture, path: &Path) -> Result<(), Failure> {
    if path.extension().is_some_and(|e| e == "svg") {
        pic.save_svg(path).map_err(input)
    } else {
        pic.save_png(path).map(|_| ()).map_err(input)
    }
}

fn mesh_facts(m: &TriMesh) -> serde_json::Value {
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for p in m.positions() {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    json!({
        "vertices": m.vertex_count(),
        "triangles": m.face_count(),
        "degenerate_triangles": m.degenerate_faces().len(),
        "bounds": {"min": lo.to_array(), "max": hi.to_array()},
    })
}

fn info(file: &Path, json: bool) -> Result<(), Failure> {
    let v = if file.is_dir() {
        let s = Scene::load(file).map_err(input)?;
        let objects: Vec<_> = s
            .objects()
            .iter()
            .enumerate()
            .map(|(i, o)| {
                json!({"name": o.name, "deforming": s.is_deforming(i),
                       "triangles": s.mesh(i).face_count()})
            })
            .collect();
        let queries: Vec<_> = s.queries().iter().map(|q| q.kind.as_str()).collect();
        json!({"scene": s.name(), "frames": s.frame_count(), "triangles": s.triangle_count(),
               "objects": objects, "queries": queries})
    } else {
        let m = gprox::geometry::io::load_mesh(file).map_err(input)?;
        let mut v = mesh_facts(&m);
        v["file"] = json!(file.display().to_string());
        v
    };
    if json {
        println!("{v}");
    } else if let Some(obj) = v.as_object() {
        for (k, x) in obj {
            println!("{k}: {x}");
        }
    }
    Ok(())
}

fn bench(scene: &Path, frames: Option<usize>, json: bool) -> Result<(), Failure> {
    let s = if scene == Path::new("builtin") {
        Scene::builtin()
    } else {
        Scene::load(scene).map_err(input)?
    };
    let ctx = Context::new(Backend::Cpu).map_err(internal)?;
    let n = frames.unwrap_or(usize::MAX).min(s.frame_count());
    let mut rows = Vec::new();
    for q in s.queries() {
        let kind = q.kind.as_str();
        if kind != "collide-all" && kind != "collide-any" {
            continue;
        }
        if q.targets == gprox::geometry::scene::QueryTargets::AllPairs {
            eprintln!("note: {kind} over all object pairs: run gprox-bench for broad-phase scenes");
            continue;
        }
        for [ia, ib] in s.query_pairs(q) {
            let t = Instant::now();
            let mut a = ctx.model(s.mesh(ia).clone()).map_err(internal)?;
            let mut b = ctx.model(s.mesh(ib).clone()).map_err(internal)?;
            let build_ms = ms(t);
            let mut per_frame = Vec::new();
            for f in 0..n {
                let t = Instant::now();
                for (m, o) in [(&mut a, ia), (&mut b, ib)] {
                    if s.is_deforming(o) {
                        ctx.update(m, s.positions(f, o)).map_err(internal)?;
                    }
                }
                let update_ms = ms(t);
                let (pa, pb) = (s.pose(f, ia), s.pose(f, ib));
                let opts = CollideOptions::default();
                let t = Instant::now();
                let count = if kind == "collide-all" {
                    ctx.collide_all(&a, &pa, &b, &pb, &opts)
                        .map_err(internal)?
                        .len()
                } else {
                    usize::from(ctx.collide_any(&a, &pa, &b, &pb, &opts).map_err(internal)?)
                };
                per_frame.push(json!({"frame": f, "count": count,
                                      "update_ms": update_ms, "query_ms": ms(t)}));
            }
            let target = format!("{}|{}", s.objects()[ia].name, s.objects()[ib].name);
            rows.push(
                json!({"query": kind, "target": target, "build_ms": build_ms,
                             "frames": per_frame}),
            );
        }
    }
    if json {
        println!("{}", json!({"scene": s.name(), "runs": rows}));
        return Ok(());
    }
    println!("scene {} ({} frames run)", s.name(), n);
    for r in &rows {
        println!(
            "{} {}: build {:.3} ms",
            r["query"], r["target"], r["build_ms"]
        );
        for f in r["frames"].as_array().into_iter().flatten() {
            println!(
                "  frame {:3}: {:>6} | update {:.3} ms | query {:.3} ms",
                f["frame"],
                f["count"],
                f["update_ms"].as_f64().unwrap_or(0.0),
                f["query_ms"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(())
}
