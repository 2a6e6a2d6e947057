//! `gprox`: collision queries between mesh files from the command line.
//!
//! ```text
//! gprox collide A.obj B.stl --pose-b 0.5,0,0,0,90,0 [--json] [--render out.png] [--export out.ply]
//! gprox collide A.bpt B.json --pose-b 5,0,0 [--tolerance 1e-3]   (freeform models)
//! gprox distance A.obj B.obj --pose-b 3,0,0 [--json] [--render out.png]
//! gprox penetration A.obj B.obj --pose-b 0.5,0,0 [--json] [--render out.png]
//! gprox penetration-field A.obj B.obj --pose-b 0.5,0,0 [--tolerance d] [--out samples.csv] [--json]
//! gprox ccd A.obj B.obj --pose-b 0,0,2 --end-pose-b 0,0,-2 [--json]
//! gprox self M.obj [--json] [--render out.png] [--export out.obj]
//! gprox image-collide A.json|model.json [B] [--epsilon 1e-3] [--exact] [--render out.png]
//! gprox info FILE_OR_SCENE_DIR [--json]
//! gprox bench SCENE_DIR|builtin [--frames N] [--repeats N] [--json]
//! ```
//!
//! Every query subcommand takes `--backend auto|cpu|cuda|emulated`. Mesh files: OBJ, STL, PLY;
//! freeform files: NURBS JSON (`.json`, docs/nurbs-format.md) and Bézier patches (`.bpt`),
//! which `collide` and `distance` answer with the freeform queries, or every mesh query on
//! their tessellation with `--tessellate`.
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
use gprox::{Backend, CollideOptions, Context, Model, ModelKind};
use serde_json::json;

mod bench;
mod ccd;
mod freeform;
mod image;
mod models;
mod penetration;
mod penetration_field;
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

/// Two model files and their poses (the pair subcommands).
#[derive(Args)]
struct MeshPair {
    /// First model file (mesh: .obj .stl .ply; freeform: .json NURBS, .bpt).
    a: PathBuf,
    /// Second model file.
    b: PathBuf,
    /// Pose of A: `tx,ty,tz[,rx,ry,rz]`, rotations in degrees about x, then y, then z.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pose_a: Option<Affine3A>,
    /// Pose of B, as `--pose-a`.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pose_b: Option<Affine3A>,
    /// Freeform inputs: run the mesh queries on their tessellation (within 1e-3 of the
    /// model's size) instead of the freeform queries.
    #[arg(long)]
    tessellate: bool,
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

    /// Loads both models on `ctx` (bad files: exit status 2): meshes, or freeform models
    /// (their tessellations with `--tessellate`).
    fn models(&self, ctx: &Context) -> Result<Models, Failure> {
        let (a, ta) = models::load(ctx, &self.a, self.tessellate)?;
        let (b, tb) = models::load(ctx, &self.b, self.tessellate)?;
        Ok(Models {
            a,
            b,
            build_ms: ta + tb,
        })
    }
}

/// The two models of a pair subcommand.
struct Models {
    a: Model,
    b: Model,
    /// Time to build both (trees on the context's backend), ms.
    build_ms: f64,
}

impl Models {
    /// Whether both are freeform models (the freeform queries answer).
    fn freeform(&self) -> bool {
        self.a.kind() == ModelKind::Freeform && self.b.kind() == ModelKind::Freeform
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
    /// The CUDA kernels on the CPU through the host emulator (slow; for checking).
    Emulated,
}

impl BackendArg {
    /// The context of the chosen backend (a typed input error when CUDA cannot run here).
    fn context(self) -> Result<Context, Failure> {
        let backend = match self {
            BackendArg::Auto => Backend::auto(),
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Cuda => Backend::Cuda(0),
            BackendArg::Emulated => Backend::Emulated,
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
        /// Freeform models: contact tolerance in world units (default: 1e-3 of the larger
        /// model's size).
        #[arg(long)]
        tolerance: Option<f64>,
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
    /// Exact minimum distance between two models, closest points and triangles (surfaces).
    Distance {
        #[command(flatten)]
        pair: MeshPair,
        /// Freeform models: certified bound gap `upper - lower` in world units (default: 1e-6
        /// of the larger model's size).
        #[arg(long)]
        tolerance: Option<f64>,
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
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw both meshes, penetrating vertices as dots joined to their closest points, the
        /// faces holding those points highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Image-space intersection of two closed meshes (Hoff et al. 2002): volume with its error
    /// bound, samples inside both, deepest contact and direction, optionally every sample.
    PenetrationField {
        /// The two meshes (closed, consistently oriented).
        #[command(flatten)]
        pair: MeshPair,
        /// Error tolerance d (world units, > 0): no point is farther than d from a sample
        /// (default: A's box diagonal / 180, the paper's ratio).
        #[arg(long, allow_hyphen_values = true)]
        tolerance: Option<f64>,
        /// Where to run (a device classifies the samples; the depths run on the CPU).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Write every sample inside both meshes as CSV: position, region, depth, unit
        /// direction and face out of B, then out of A.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Continuous collision over one step: A and B move from their poses to their end poses;
    /// every feature pair that may touch, with a certified time of impact.
    Ccd {
        #[command(flatten)]
        pair: MeshPair,
        /// Pose of A at the end of the step (default: `--pose-a`).
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        end_pose_a: Option<Affine3A>,
        /// Pose of B at the end of the step (default: `--pose-b`).
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        end_pose_b: Option<Affine3A>,
        /// Minimum separation: report pairs that come closer than this (world units, >= 0).
        #[arg(long, default_value_t = 0.0)]
        min_separation: f64,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
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
    /// Geometry-image collision of two trimmed NURBS models (face files, `model.json` or its
    /// folder), or self-collision of one (B left out): the quad pairs that may touch.
    ImageCollide {
        /// First model: a trimmed face file, a `model.json` or a folder holding one.
        a: PathBuf,
        /// Second model (left out: self-collision of A).
        b: Option<PathBuf>,
        /// Pose of A: `tx,ty,tz[,rx,ry,rz]`, rotations in degrees about x, then y, then z.
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        pose_a: Option<Affine3A>,
        /// Pose of B, as `--pose-a`.
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        pose_b: Option<Affine3A>,
        /// Accuracy ε relative to each model's size (the largest side of its control box).
        #[arg(long, default_value_t = 1e-3)]
        epsilon: f64,
        /// Report quads whose triangles intersect (exact mode) instead of overlapping boxes.
        #[arg(long)]
        exact: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw the models with the contact texels as red dots (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Facts about a mesh file or a scene folder.
    Info {
        /// Mesh file or `proxbench-scene/1` folder.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Every query of a scene over its frames, with times (the benchmark harness's engine).
    Bench {
        /// Scene folder, or `builtin`.
        scene: PathBuf,
        /// Only the first N frames.
        #[arg(long)]
        frames: Option<usize>,
        /// Repetitions of every build, update and query (medians are reported).
        #[arg(long, default_value_t = 1)]
        repeats: usize,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
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

/// A query's error: the input's fault (exit status 2) when the models do not suit the query
/// (a freeform model where meshes are needed, an unwelded or open mesh), else exit status 1.
fn query_error(e: gprox::Error) -> Failure {
    use gprox::Error as E;
    match e {
        E::Unsupported { .. } => input(format!(
            "{e} (or pass --tessellate to run the mesh queries on freeform inputs' tessellation)"
        )),
        E::Unwelded { .. } | E::Penetration(_) | E::Geometry(_) | E::Freeform(_) => input(e),
        e => internal(e),
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
            tolerance,
            backend,
            json,
            render,
            export,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            if m.freeform() {
                freeform::collide_cmd(&ctx, &pair, &m, tolerance, any, json)
            } else {
                let out = Output {
                    json,
                    render: render.as_deref(),
                    export: export.as_deref(),
                };
                collide(&ctx, &pair, &m, margin, any, &out)
            }
        }),
        Command::Distance {
            pair,
            tolerance,
            backend,
            json,
            render,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            if m.freeform() {
                freeform::distance_cmd(&ctx, &pair, &m, tolerance, json)
            } else {
                queries::distance_cmd(&ctx, &pair, &m, json, render.as_deref())
            }
        }),
        Command::Penetration {
            pair,
            backend,
            json,
            render,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            penetration::penetration_cmd(&ctx, &pair, &m, json, render.as_deref())
        }),
        Command::PenetrationField {
            pair,
            tolerance,
            backend,
            json,
            out,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            let args = penetration_field::FieldArgs {
                tolerance,
                out: out.as_deref(),
                json,
            };
            penetration_field::penetration_field_cmd(&ctx, &pair, &m, &args)
        }),
        Command::Ccd {
            pair,
            end_pose_a,
            end_pose_b,
            min_separation,
            backend,
            json,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            let step = ccd::Step {
                end_a: end_pose_a.unwrap_or(pair.pose_a()),
                end_b: end_pose_b.unwrap_or(pair.pose_b()),
                min_separation,
            };
            ccd::ccd_cmd(&ctx, &pair, &m, &step, json)
        }),
        Command::SelfCollide {
            m,
            backend,
            json,
            render,
            export,
        } => backend.context().and_then(|ctx| {
            queries::self_cmd(&ctx, &m, json, render.as_deref(), export.as_deref())
        }),
        Command::ImageCollide {
            a,
            b,
            pose_a,
            pose_b,
            epsilon,
            exact,
            json,
            render,
        } => BackendArg::Cpu.context().and_then(|ctx| {
            image::image_cmd(
                &ctx,
                &image::ImageArgs {
                    a: &a,
                    b: b.as_deref(),
                    pose_a: pose_a.unwrap_or(Affine3A::IDENTITY),
                    pose_b: pose_b.unwrap_or(Affine3A::IDENTITY),
                    epsilon,
                    exact,
                    json,
                    render: render.as_deref(),
                },
            )
        }),
        Command::Info { file, json } => info(&file, json),
        Command::Bench {
            scene,
            frames,
            repeats,
            backend,
            json,
        } => backend
            .context()
            .and_then(|ctx| bench::bench_cmd(&ctx, &scene, frames, repeats, json)),
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

/// Where a pair query's results go besides the text.
struct Output<'a> {
    json: bool,
    render: Option<&'a Path>,
    export: Option<&'a Path>,
}

/// `gprox collide A B` on two mesh models (or tessellations): every intersecting triangle pair,
/// or whether there is one.
fn collide(
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
