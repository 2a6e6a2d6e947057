//! Times the CPU distance query (RSS trees) on the rigid peer scenes (issue #17): one thread,
//! `passes` passes over the frames, every call timed, the first pass discarded; prints the
//! median over frames of each frame's median call (µs) and a digest of the answers (distance
//! bits and witness faces per frame) so two builds can be checked for identical results.
//! Usage: `rss_distance_bench [scenes dir] [passes] [scenes (comma-separated)]`
//! (default `/work/shared/peers/scenes`, 19, `bunny-pair-distance,bumpy-pair-distance`);
//! run under `chrt -f 50` for steadier figures. With `passes` = 1 every call is timed (for
//! profilers). `RSS_BENCH_VERBOSE=1` prints every frame's answer.

use std::time::Instant;

#[path = "common/peer_bench.rs"]
mod peer_bench;

use gprox_bvh::{bv_tree::BvTree, rss::Rss};
use gprox_query::distance::{distance, DistanceObject, DistanceOptions};

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
    for name in names.split(',') {
        let Some(scene) = peer_bench::load(&dir, name) else {
            continue;
        };
        let (ma, mb) = (scene.mesh(0), scene.mesh(1));
        let (ta, tb) = (BvTree::<Rss>::build(ma), BvTree::<Rss>::build(mb));
        let frames = scene.frame_count();
        let mut times = vec![Vec::new(); frames];
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        let mut failed = 0usize;
        pool.install(|| {
            for pass in 0..passes {
                for (f, slot) in times.iter_mut().enumerate() {
                    let x = DistanceObject {
                        mesh: ma,
                        tree: &ta,
                        pose: scene.pose64(f, 0),
                    };
                    let y = DistanceObject {
                        mesh: mb,
                        tree: &tb,
                        pose: scene.pose64(f, 1),
                    };
                    let t0 = Instant::now();
                    let r = distance(&x, &y, &DistanceOptions::default());
                    let dt = t0.elapsed().as_secs_f64();
                    let Ok(r) = r else {
                        failed += 1;
                        continue;
                    };
                    if pass + 1 == passes && verbose {
                        println!(
                            "  f{f:02} {:.17e} faces {} {}",
                            r.distance, r.tri_a, r.tri_b
                        );
                    }
                    if pass + 1 == passes {
                        for w in [r.distance.to_bits(), u64::from(r.tri_a), u64::from(r.tri_b)] {
                            digest = (digest ^ w).wrapping_mul(0x100_0000_01b3);
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
        println!("{name:22} distance {us:8.2} µs (median over {frames} frames)  digest {digest:016x}  failed {failed}");
    }
}
