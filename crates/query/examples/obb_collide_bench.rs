//! Times collide-any / collide-all on the rigid peer scenes with the AABB LBVH and with the OBB
//! tree and the wide OBB tree (issue #17): one thread, `passes` passes over the frames, the first call per frame timed,
//! the first pass discarded. Usage: `obb_collide_bench [scenes dir] [passes] [filter]`
//! (default `/work/shared/peers/scenes`, 19; `filter`: comma-separated words that
//! `"scene query tree"` must all contain, e.g. `tori,all,obb`; `HOT=1` warms the caches with five untimed calls first); run under `chrt -f 50` for steadier figures.

use std::time::Instant;

#[path = "common/peer_bench.rs"]
mod peer_bench;

use gprox_bvh::{bv_tree::BvTree, lbvh, obb::Obb, wide_obb::WideObbTree, Bvh};
use gprox_query::collide::{
    collide_all_models, collide_any_models, CollideOptions, CollisionModel, ModelObject,
};

fn main() {
    let Some((dir, passes, mut args, pool)) = peer_bench::setup() else {
        return;
    };
    let filter = args.next().unwrap_or_default();
    // With `HOT` set, five untimed calls precede each timed one (caches warm).
    let hot = std::env::var_os("HOT").is_some();
    let rows = [
        ("bumpy-pair-distance", false),
        ("bunny-pair-distance", false),
        ("two-tori-interlock", false),
        ("two-tori-interlock", true),
    ];
    for (name, all) in rows {
        let kind = if all { "collide-all" } else { "collide-any" };
        let Some(scene) = peer_bench::load(&dir, name) else {
            continue;
        };
        let (ma, mb) = (scene.mesh(0), scene.mesh(1));
        let (ba, bb): (Bvh, Bvh) = (lbvh::build(ma), lbvh::build(mb));
        let (oa, ob) = (BvTree::<Obb>::build(ma), BvTree::<Obb>::build(mb));
        let (wa, wb) = (
            WideObbTree::from_tree(oa.clone()).expect("tree collapses"),
            WideObbTree::from_tree(ob.clone()).expect("tree collapses"),
        );
        let mut line = format!("{name:22} {kind:12}");
        let mut hits = Vec::new();
        for (label, a, b) in [
            ("aabb", CollisionModel::Aabb(&ba), CollisionModel::Aabb(&bb)),
            ("obb", CollisionModel::Obb(&oa), CollisionModel::Obb(&ob)),
            (
                "wide",
                CollisionModel::WideObb(&wa),
                CollisionModel::WideObb(&wb),
            ),
        ] {
            let key = format!("{name} {kind} {label}");
            if !filter.split(',').all(|f| key.contains(f)) {
                continue;
            }
            let (mut total, mut calls, mut found) = (0.0f64, 0usize, 0usize);
            pool.install(|| {
                for pass in 0..passes {
                    for f in 0..scene.frame_count() {
                        let x = ModelObject {
                            mesh: ma,
                            model: a,
                            pose: scene.pose64(f, 0),
                        };
                        let y = ModelObject {
                            mesh: mb,
                            model: b,
                            pose: scene.pose64(f, 1),
                        };
                        let opts = CollideOptions::default();
                        if hot {
                            for _ in 0..5 {
                                std::hint::black_box(collide_any_models(&x, &y, &opts));
                            }
                        }
                        let t0 = Instant::now();
                        let n = if all {
                            collide_all_models(&x, &y, &opts).len()
                        } else {
                            usize::from(collide_any_models(&x, &y, &opts))
                        };
                        let dt = t0.elapsed().as_secs_f64();
                        if pass > 0 {
                            total += dt;
                            calls += 1;
                            found += n;
                        }
                    }
                }
            });
            let us = total / calls.max(1) as f64 * 1e6;
            line += &format!("  {label} {us:8.2} µs");
            hits.push(found);
        }
        println!("{line}  (results {hits:?})");
    }
}
