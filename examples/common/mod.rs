//! Helpers shared by the examples: the backend to run on and optional mesh files.

#![allow(dead_code)] // each example uses some of these

use gprox::geometry::{io::load_mesh, TriMesh};
use gprox::{Backend, Context};

/// Opens the backend named by `GPROX_BACKEND` (`cpu`, `cuda`, `auto`; `emulated` when built
/// with `--features emulated`), `auto` when unset: CUDA device 0 when usable, else the CPU.
pub fn context() -> anyhow::Result<Context> {
    let name = std::env::var("GPROX_BACKEND").unwrap_or_else(|_| "auto".into());
    let backend: Backend = name
        .parse()
        .map_err(|e| anyhow::anyhow!("GPROX_BACKEND: {e}"))?;
    let ctx = Context::new(backend)?;
    println!(
        "backend: {} ({} CPU threads)",
        ctx.backend(),
        rayon::current_num_threads()
    );
    Ok(ctx)
}

/// The meshes named on the command line (`.obj`, `.stl`, `.ply`), or `default` when there are
/// none; a single file is used for both models.
pub fn meshes_or(default: impl FnOnce() -> [TriMesh; 2]) -> anyhow::Result<[TriMesh; 2]> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    Ok(match args.as_slice() {
        [] => default(),
        [a] => {
            let m = load_mesh(a)?;
            [m.clone(), m]
        }
        [a, b, ..] => [load_mesh(a)?, load_mesh(b)?],
    })
}

/// Milliseconds since `t`.
pub fn ms(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
