//! Mesh–mesh collision on the benchmark scene `two-tori-interlock` (per-frame pair counts equal
//! the reference peer's exact counts), and `collide_any == !collide_all.is_empty()`; plus the
//! exact-oracle property on mesh copies in touching configurations.
//! Skips (with a note) when `../shared` is absent.

#[path = "common/gen.rs"]
mod gen;
#[path = "common/oracle.rs"]
mod oracle;

use std::path::Path;

use gprox_bvh::lbvh;
use gprox_geometry::scene::Scene;
use gprox_geometry::transform::Pose64;
use gprox_query::collide::{collide_all, collide_any, CollideOptions, CollisionObject};
use proptest::prelude::*;

const SCENE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/peers/scenes/two-tori-interlock"
);
const RESULTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/peers/results/two-tori-interlock.json"
);

/// Per-frame `count`s of the `ref` peer's collide-all run, read from the results file without a
/// JSON dependency: the `collide-all` query comes first and its first run is the reference.
fn reference_counts(text: &str) -> Option<Vec<usize>> {
    let q = text.find("\"kind\": \"collide-all\"")?;
    let rest = &text[q..];
    let run = rest.find("\"peer\": \"ref\"")?;
    // Frames of the ref run: the `"count":` fields before the run's closing `"peer"`.
    let frames_start = rest[..run].rfind("\"frames\"")?;
    let body = &rest[frames_start..run];
    let counts: Vec<usize> = body
        .match_indices("\"count\":")
        .filter_map(|(i, m)| {
            let tail = body[i + m.len()..].trim_start();
            let end = tail.find(|c: char| !c.is_ascii_digit())?;
            tail[..end].parse().ok()
        })
        .collect();
    Some(counts)
}

#[test]
fn two_tori_counts_match_reference() {
    if !Path::new(SCENE).exists() || !Path::new(RESULTS).exists() {
        eprintln!("note: {SCENE} or {RESULTS} absent; skipping");
        return;
    }
    let scene = Scene::load(SCENE).expect("scene loads");
    let text = std::fs::read_to_string(RESULTS).expect("results readable");
    let want = reference_counts(&text).expect("reference counts in results file");
    assert_eq!(
        want.len(),
        scene.frame_count(),
        "one reference count per frame"
    );
    let (ma, mb) = (scene.mesh(0), scene.mesh(1));
    let (ba, bb) = (lbvh::build(ma), lbvh::build(mb));
    let opts = CollideOptions::default();
    for (f, &count) in want.iter().enumerate() {
        let a = CollisionObject::new(ma, &ba, scene.pose64(f, 0)).unwrap();
        let b = CollisionObject::new(mb, &bb, scene.pose64(f, 1)).unwrap();
        let pairs = collide_all(&a, &b, &opts);
        assert_eq!(pairs.len(), count, "frame {f}");
        assert!(pairs.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
        assert_eq!(collide_any(&a, &b, &opts), count > 0, "frame {f}");
    }
}

#[test]
fn two_tori_pairs_are_exact_on_a_sample() {
    // The exact rational oracle on the candidate pairs of one contact frame: every reported pair
    // intersects, and every unreported pair whose world triangles' boxes touch does not.
    if !Path::new(SCENE).exists() {
        eprintln!("note: {SCENE} absent; skipping");
        return;
    }
    let scene = Scene::load(SCENE).expect("scene loads");
    let f = 37; // a frame with few contacts (grazing tubes)
    let (ma, mb) = (scene.mesh(0), scene.mesh(1));
    let (ba, bb) = (lbvh::build(ma), lbvh::build(mb));
    let (pa, pb) = (scene.pose64(f, 0), scene.pose64(f, 1));
    let a = CollisionObject::new(ma, &ba, pa).unwrap();
    let b = CollisionObject::new(mb, &bb, pb).unwrap();
    let got = collide_all(&a, &b, &CollideOptions::default());
    let (ta, tb) = (
        oracle::world_triangles(ma, &pa),
        oracle::world_triangles(mb, &pb),
    );
    let boxes =
        |t: &[gprox_geometry::glam::DVec3; 3]| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
    let bb_b: Vec<_> = tb.iter().map(boxes).collect();
    let mut want = Vec::new();
    for (i, x) in ta.iter().enumerate() {
        let (lo, hi) = boxes(x);
        for (j, (l2, h2)) in bb_b.iter().enumerate() {
            if lo.cmple(*h2).all()
                && l2.cmple(hi).all()
                && oracle::triangles_intersect_exact(x, &tb[j])
            {
                want.push([i as u32, j as u32]);
            }
        }
    }
    assert_eq!(got, want);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A grid mesh against a copy of itself under a grid pose (shared faces, coplanar overlaps,
    /// vertex-on-face), through the facade crate's dependencies: exact set equality.
    #[test]
    fn touching_copies_equal_oracle(m in gen::grid_mesh(6, 8, 2), p in gen::grid_pose(1)) {
        let bvh = lbvh::build(&m);
        let pb = gen::pose64(&p);
        let a = CollisionObject::new(&m, &bvh, Pose64::IDENTITY).unwrap();
        let b = CollisionObject::new(&m, &bvh, pb).unwrap();
        let got = collide_all(&a, &b, &CollideOptions::default());
        let want = oracle::brute_force_pairs(&m, &Pose64::IDENTITY, &m, &pb);
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(collide_any(&a, &b, &CollideOptions::default()), !want.is_empty());
    }
}
