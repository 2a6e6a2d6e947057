//! Times the CPU distance query on the rigid peer scenes (issue #17), on binary and on
//! eight-wide RSS trees in turn: one thread,
//! `passes` passes over the frames, every call timed, the first pass discarded; prints the
//! median over frames of each frame's median call (µs) and digests of the answers (distance
//! bits, and witness faces, per frame) so two builds or tree kinds can be checked for identical
//! results.
//! Usage: `rss_distance_bench [scenes dir] [passes] [scenes (comma-separated)]`
//! (default `/work/shared/peers/scenes`, 19, `bunny-pair-distance,bumpy-pair-distance`);
//! run under `chrt -f 50` for steadier figures. With `passes` = 1 every call is timed (for
//! profilers). Environment: `RSS_BENCH_VERBOSE=1` prints every frame's answer,
//! `RSS_BENCH_TREE=binary|wide` runs one tree kind only, `HOT=1` warms the caches with untimed
//! calls on the same frame, `HINT=1` starts each call from the previous call's closest faces
//! (as a `Context` does). The query sits in an out-of-line function (`query`) for callgrind's
//! inclusive counts.

use std::time::Instant;

#[path = "common/peer_bench.rs"]
mod peer_bench;

use gprox_bvh::wide_rss::WideRssTree;
use gprox_query::distance::{
    distance, distance_from, distance_wide, distance_wide_from, DistanceError, DistanceOptions,
    DistanceResult, WideDistanceObject,
};

/// One query (kept out of line so that profilers see it).
#[inline(never)]
fn query(
    wide: bool,
    x: &WideDistanceObject,
    y: &WideDistanceObject,
    opts: &DistanceOptions,
    hint: Option<[u32; 2]>,
) -> Result<DistanceResult, DistanceError> {
    if wide {
        distance_wide_from(x, y, opts, hint)
    } else {
        distance_from(&x.binary(), &y.binary(), opts, hint)
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let Some((dir, passes, mut args, pool)) = peer_bench::setup() else {
        return;
    };
    let names = args
        .next()
        .unwrap_or_else(|| "bunny-pair-distance,bumpy-pair-distance".into());
    let verbose = std::env::var_os("RSS_BENCH_VERBOSE").is_some();
    // `HOT=1`: each timed call follows untimed calls on the same frame (caches warm).
    let hot = usize::from(std::env::var_os("HOT").is_some());
    // `HINT=1`: each call starts from the previous call's closest faces (as a `Context` does).
    let hinted = std::env::var_os("HINT").is_some();
    for name in names.split(',') {
        let Some(scene) = peer_bench::load(&dir, name) else {
            continue;
        };
        let (ma, mb) = (scene.mesh(0), scene.mesh(1));
        let (wa, wb) = (
            WideRssTree::build(ma).expect("tree collapses"),
            WideRssTree::build(mb).expect("tree collapses"),
        );
        let modes: &[bool] = match std::env::var("RSS_BENCH_TREE").as_deref() {
            Ok("binary") => &[false],
            Ok("wide") => &[true],
            _ => &[false, true],
        };
        for &wide in modes {
            let frames = scene.frame_count();
            let mut times = vec![Vec::new(); frames];
            let (mut digest, mut faces) = (0xcbf2_9ce4_8422_2325u64, 0xcbf2_9ce4_8422_2325u64);
            let mut failed = 0usize;
            let mut hint = None;
            pool.install(|| {
                for pass in 0..passes {
                    for (f, slot) in times.iter_mut().enumerate() {
                        let x = WideDistanceObject {
                            mesh: ma,
                            tree: &wa,
                            pose: scene.pose64(f, 0),
                        };
                        let y = WideDistanceObject {
                            mesh: mb,
                            tree: &wb,
                            pose: scene.pose64(f, 1),
                        };
                        let opts = DistanceOptions::default();
                        for _ in 0..hot {
                            let _ = distance_wide(&x, &y, &opts);
                            let _ = distance(&x.binary(), &y.binary(), &opts);
                        }
                        let t0 = Instant::now();
                        let r = query(wide, &x, &y, &opts, hint.filter(|_| hinted));
                        let dt = t0.elapsed().as_secs_f64();
                        let Ok(r) = r else {
                            failed += 1;
                            continue;
                        };
                        hint = Some([r.tri_a, r.tri_b]);
                        if pass + 1 == passes {
                            if verbose {
                                println!(
                                    "  f{f:02} {:.17e} faces {} {}",
                                    r.distance, r.tri_a, r.tri_b
                                );
                            }
                            digest = (digest ^ r.distance.to_bits()).wrapping_mul(0x100_0000_01b3);
                            for w in [r.tri_a, r.tri_b] {
                                faces = (faces ^ u64::from(w)).wrapping_mul(0x100_0000_01b3);
                            }
                        }
                        if pass > 0 || passes == 1 {
                            slot.push(dt);
                        }
                    }
                }
            });
            let mut per_frame: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
            let us = median(&mut per_frame) * 1e6;
            let kind = if wide { "wide" } else { "binary" };
            println!(
                "{name:22} {kind:6} {us:8.2} µs (median over {frames} frames)  distances {digest:016x}  faces {faces:016x}  failed {failed}"
            );
        }
    }
}
