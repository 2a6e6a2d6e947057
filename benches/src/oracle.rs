//! Brute-force truth for collision targets that have neither reference results nor truth in
//! their scene (the built-in scenes, a user's own small scenes), so that no collision row of a
//! report goes unverified when it can be checked cheaply.
//!
//! Independent of everything the harness times: no BVH, no traversal, no pose frames. Every
//! object's triangles are put in world coordinates (f64, the scene's own f32 transform promoted
//! exactly, as every gprox backend does), sorted by their boxes' lower x, swept pair by pair,
//! and every pair whose closed boxes overlap goes to the exact triangle–triangle predicate
//! (`triangles_intersect`: exact orientation tests, so the answer is the true one for these
//! coordinates). Only targets of at most [`MAX_TRIANGLES`] triangles are checked this way.

use gprox::DVec3;
use gprox_geometry::scene::{QueryKind, Scene, Truth};
use gprox_geometry::transform::transform_point;
use gprox_geometry::tri_tri::triangles_intersect;

use crate::run::Target;

/// The largest target (triangles of both objects) the sweep checks.
pub const MAX_TRIANGLES: usize = 40_000;

/// Per-frame counts and flags of the collision target `target` over frames `0..frames`,
/// computed by brute force; `None` for other query kinds, `"all"` targets, or targets larger
/// than [`MAX_TRIANGLES`].
pub fn collide_truth(scene: &Scene, target: &Target, frames: usize) -> Option<Truth> {
    if !matches!(target.kind, QueryKind::CollideAll | QueryKind::CollideAny)
        || target.all_pairs
        || target.pairs.is_empty()
    {
        return None;
    }
    let size: usize = target
        .pairs
        .iter()
        .flatten()
        .map(|&o| scene.mesh(o).face_count())
        .sum();
    if size > MAX_TRIANGLES {
        return None;
    }
    let mut count = Vec::with_capacity(frames);
    for f in 0..frames {
        let n: u64 = target
            .pairs
            .iter()
            .map(|&[a, b]| intersecting_pairs(&world(scene, f, a), &world(scene, f, b)))
            .sum();
        count.push(n);
    }
    let collide = count.iter().map(|&n| n > 0).collect();
    Some(Truth {
        count: (target.kind == QueryKind::CollideAll).then_some(count),
        collide: Some(collide),
        ..Default::default()
    })
}

/// The world triangles of `object` at `frame`.
fn world(scene: &Scene, frame: usize, object: usize) -> Vec<[DVec3; 3]> {
    let mesh = scene.mesh(object);
    let positions = if scene.is_deforming(object) {
        scene.positions(frame, object)
    } else {
        mesh.positions()
    };
    let pose = scene.pose64(frame, object);
    mesh.faces()
        .iter()
        .map(|f| f.map(|v| transform_point(&pose, positions[v as usize])))
        .collect()
}

/// The number of intersecting (triangle of `a`, triangle of `b`) pairs: a sweep over the
/// triangles' x intervals, then box overlap in y and z, then the exact test.
fn intersecting_pairs(a: &[[DVec3; 3]], b: &[[DVec3; 3]]) -> u64 {
    let bounds = |t: &[DVec3; 3]| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
    // (lower x, side, index), sorted by lower x.
    let mut events: Vec<(f64, bool, usize)> = a
        .iter()
        .enumerate()
        .map(|(i, t)| (bounds(t).0.x, false, i))
        .chain(b.iter().enumerate().map(|(i, t)| (bounds(t).0.x, true, i)))
        .collect();
    events.sort_by(|p, q| p.0.total_cmp(&q.0));
    let tri = |side: bool, i: usize| if side { &b[i] } else { &a[i] };
    let mut hits = 0u64;
    for (k, &(_, side, i)) in events.iter().enumerate() {
        let t = tri(side, i);
        let (lo, hi) = bounds(t);
        for &(x, other, j) in &events[k + 1..] {
            if x > hi.x {
                break;
            }
            if other == side {
                continue;
            }
            let u = tri(other, j);
            let (ulo, uhi) = bounds(u);
            if lo.cmpgt(uhi).any() || ulo.cmpgt(hi).any() {
                continue;
            }
            let (ta, tb) = if side { (u, t) } else { (t, u) };
            hits += u64::from(triangles_intersect(ta, tb));
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two unit right triangles crossing at right angles through each other, and far apart.
    #[test]
    fn counts_crossing_triangles_once() {
        let a = [[DVec3::ZERO, DVec3::X * 2.0, DVec3::Y * 2.0]];
        let cross = [[
            DVec3::new(0.5, 0.5, -1.0),
            DVec3::new(0.5, 0.5, 1.0),
            DVec3::new(3.0, 0.5, 0.0),
        ]];
        assert_eq!(intersecting_pairs(&a, &cross), 1);
        let far = [[
            DVec3::new(5.0, 0.5, -1.0),
            DVec3::new(5.0, 0.5, 1.0),
            DVec3::new(6.0, 0.5, 0.0),
        ]];
        assert_eq!(intersecting_pairs(&a, &far), 0);
    }

    /// The sweep equals the all-pairs loop on the built-in scene's frames (every third
    /// triangle of A against all of B, to keep the debug build's test short).
    #[test]
    fn sweep_equals_all_pairs() {
        let scene = Scene::builtin();
        for f in [0, scene.frame_count() - 1] {
            let a: Vec<_> = world(&scene, f, 0).into_iter().step_by(3).collect();
            let b = world(&scene, f, 1);
            let all: u64 = a
                .iter()
                .map(|s| b.iter().filter(|t| triangles_intersect(s, t)).count() as u64)
                .sum();
            assert!(
                all > 0 || f > 0,
                "frame {f} of the built-in scene is in contact"
            );
            assert_eq!(intersecting_pairs(&a, &b), all, "frame {f}");
        }
    }
}
