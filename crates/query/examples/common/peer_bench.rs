//! What the single-thread peer-scene examples share: their first two arguments (the scenes
//! folder, default `/work/shared/peers/scenes`, and the passes over the frames, default 19), a
//! one-thread rayon pool, and loading a scene by name with the error printed.

use gprox_geometry::scene::Scene;

/// The scenes folder, the passes, the remaining arguments and a one-thread pool; `None` (after
/// printing why) when the pool cannot be made.
pub fn setup() -> Option<(
    String,
    usize,
    std::iter::Skip<std::env::Args>,
    rayon::ThreadPool,
)> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| "/work/shared/peers/scenes".into());
    let passes: usize = args.next().and_then(|p| p.parse().ok()).unwrap_or(19);
    match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(pool) => Some((dir, passes, args, pool)),
        Err(e) => {
            eprintln!("no thread pool: {e}");
            None
        }
    }
}

/// Scene `name` of `dir`, or `None` after printing the error.
pub fn load(dir: &str, name: &str) -> Option<Scene> {
    Scene::load(format!("{dir}/{name}"))
        .map_err(|e| eprintln!("{name}: {e}"))
        .ok()
}
