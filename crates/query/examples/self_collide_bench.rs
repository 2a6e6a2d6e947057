//! Times the culled self-collision of `cloth-on-sphere`'s cloth (issue #17's `self` row) on one
//! thread: every frame the mesh takes the frame's positions, the LBVH is refitted (untimed) and
//! [`self_collide_cached`] runs once (timed, as the peers' harness times a frame's first call).
//! Usage: `self_collide_bench [scenes dir] [passes] [plain]` (default
//! `/work/shared/peers/scenes`, 19; `plain`: the traversal without normal-cone culling,
//! [`self_collide`] with no masks, instead); the first pass is discarded. Prints the median
//! frame and the pairs found per pass.

use std::time::Instant;

#[path = "common/peer_bench.rs"]
mod peer_bench;

use gprox_bvh::{lbvh, refit::refit_from_mesh};
use gprox_query::self_collide::{self_collide, self_collide_cached, SelfCullCache, Topology};

fn main() {
    let Some((dir, passes, mut args, pool)) = peer_bench::setup() else {
        return;
    };
    let plain = args.next().is_some_and(|a| a == "plain");
    let Some(scene) = peer_bench::load(&dir, "cloth-on-sphere") else {
        return;
    };
    let Some(o) = scene.object_index("cloth") else {
        eprintln!("cloth-on-sphere: no object `cloth`");
        return;
    };
    let mut mesh = scene.mesh(o).clone();
    let mut bvh = lbvh::build(&mesh);
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let mut cache = SelfCullCache::default();
    let (mut times, mut found, mut culled, mut cands) = (Vec::new(), 0usize, 0usize, 0usize);
    pool.install(|| {
        for pass in 0..passes.max(2) {
            for f in 0..scene.frame_count() {
                if let Err(e) = mesh.set_positions(scene.positions(f, o).to_vec()) {
                    eprintln!("frame {f}: {e}");
                    return;
                }
                if let Err(e) = refit_from_mesh(&mut bvh, &mesh) {
                    eprintln!("frame {f}: {e}");
                    return;
                }
                let t = Instant::now();
                let r = if plain {
                    self_collide(&mesh, &bvh, &topo, None)
                } else {
                    self_collide_cached(&mesh, &bvh, &topo, &mut cache)
                };
                let r = match r {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("frame {f}: {e}");
                        return;
                    }
                };
                let dt = t.elapsed().as_secs_f64() * 1e3;
                if pass > 0 {
                    times.push(dt);
                    found += r.pairs.len();
                    culled += r.culled_nodes;
                    cands += r.candidates;
                }
            }
        }
    });
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    let runs = (passes.max(2) - 1) as f64;
    println!(
        "cloth-on-sphere self{}: median frame {median:.3} ms over {} frames; {:.0} pairs and {:.0} culled nodes and {:.0} exact leaf tests a pass",
        if plain { " (no culling)" } else { "" },
        times.len(),
        found as f64 / runs,
        culled as f64 / runs,
        cands as f64 / runs
    );
}
