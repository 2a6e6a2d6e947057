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

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use gprox::render::Picture;

mod args;
mod bench;
mod ccd;
mod collide;
mod freeform;
mod image;
mod info;
mod models;
mod penetration;
mod penetration_field;
mod queries;

use args::{BackendArg, Cli, Command, MeshPair, RunArgs};
use models::Models;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Collide {
            pair,
            margin,
            any,
            tolerance,
            run: RunArgs { backend, json },
            render,
            export,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            if m.freeform() {
                freeform::collide_cmd(&ctx, &pair, &m, tolerance, any, json)
            } else {
                let out = collide::Output {
                    json,
                    render: render.as_deref(),
                    export: export.as_deref(),
                };
                collide::collide_cmd(&ctx, &pair, &m, margin, any, &out)
            }
        }),
        Command::Distance {
            pair,
            tolerance,
            run: RunArgs { backend, json },
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
            run: RunArgs { backend, json },
            render,
        } => backend.context().and_then(|ctx| {
            let m = pair.models(&ctx)?;
            penetration::penetration_cmd(&ctx, &pair, &m, json, render.as_deref())
        }),
        Command::PenetrationField {
            pair,
            tolerance,
            run: RunArgs { backend, json },
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
            run: RunArgs { backend, json },
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
            run: RunArgs { backend, json },
            render,
            export,
        } => backend.context().and_then(|ctx| {
            queries::self_cmd(&ctx, &m, json, render.as_deref(), export.as_deref())
        }),
        Command::ImageCollide {
            a,
            b,
            poses,
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
                    pose_a: poses.pose_a(),
                    pose_b: poses.pose_b(),
                    epsilon,
                    exact,
                    json,
                    render: render.as_deref(),
                },
            )
        }),
        Command::Info { file, json } => info::info_cmd(&file, json),
        Command::Bench {
            scene,
            frames,
            repeats,
            run: RunArgs { backend, json },
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
