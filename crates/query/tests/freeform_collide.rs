//! Freeform collision within a tolerance and distance bounds against dense sampling.

use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
use gprox_geometry::freeform::{apply_pose, NurbsSurface};
use gprox_geometry::glam::DVec3;
use gprox_geometry::transform::Pose64;
use gprox_query::freeform::{freeform_collide, freeform_distance, DistanceOptions, FreeformObject};
use proptest::prelude::*;

fn patch(c: &[f64], w: &[f64], rational: bool) -> NurbsSurface {
    let pts: Vec<DVec3> = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            DVec3::new(i as f64 / 3.0, j as f64 / 3.0, 0.0)
                + DVec3::new(c[3 * k], c[3 * k + 1], c[3 * k + 2]) * 0.3
        })
        .collect();
    NurbsSurface::bezier([3, 3], pts, rational.then(|| w.to_vec())).unwrap()
}

const N: usize = 8;

fn samples(o: &FreeformObject) -> Vec<(u32, f64, f64, DVec3)> {
    let mut out = Vec::new();
    for (si, s) in o.surfaces.iter().enumerate() {
        let d = s.domain();
        for i in 0..=N {
            for j in 0..=N {
                let (u, v) = (
                    d.u0 + (d.u1 - d.u0) * i as f64 / N as f64,
                    d.v0 + (d.v1 - d.v0) * j as f64 / N as f64,
                );
                out.push((si as u32, u, v, apply_pose(&o.pose, s.point(u, v))));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn collision_has_no_false_negatives_and_distance_bounds_hold(
        ca in prop::collection::vec(-1.0f64..1.0, 48),
        cb in prop::collection::vec(-1.0f64..1.0, 48),
        w in prop::collection::vec(0.5f64..2.0, 16),
        rational in any::<bool>(),
        offset in prop::array::uniform3(-0.4f64..0.4),
        angle in 0.0f64..6.3,
        tau in 0.005f64..0.2,
    ) {
        let sa = vec![patch(&ca, &w, rational)];
        let sb = vec![patch(&cb, &w, false)];
        let opts = CoonsOptions { epsilon: 1e-2, ..Default::default() };
        let (ba, bb) = (CoonsBvh::build(&sa, &opts).unwrap(), CoonsBvh::build(&sb, &opts).unwrap());
        let (s, c) = angle.sin_cos();
        let pose_b = Pose64 { rows: [[c, -s, 0.0, offset[0]], [s, c, 0.0, offset[1]], [0.0, 0.0, 1.0, offset[2] + 0.1]] };
        let a = FreeformObject { surfaces: &sa, bvh: &ba, pose: Pose64::IDENTITY };
        let b = FreeformObject { surfaces: &sb, bvh: &bb, pose: pose_b };
        let pairs = freeform_collide(&a, &b, tau);
        let (pa, pb) = (samples(&a), samples(&b));
        let mut sampled_min = f64::INFINITY;
        for &(s1, u1, v1, p1) in &pa {
            for &(s2, u2, v2, p2) in &pb {
                let d = p1.distance(p2);
                sampled_min = sampled_min.min(d);
                if d <= tau {
                    prop_assert!(
                        pairs.iter().any(|q| q.surface_a == s1 && q.surface_b == s2 && q.rect_a.contains(u1, v1) && q.rect_b.contains(u2, v2)),
                        "sample pair at distance {d} <= {tau} not covered"
                    );
                }
            }
        }
        for q in &pairs {
            prop_assert!(q.lower <= tau);
            prop_assert!(!q.witnessed || q.upper <= tau);
        }
        let d = freeform_distance(&a, &b, &DistanceOptions { tolerance: 1e-3, ..Default::default() });
        prop_assert!(d.converged);
        prop_assert!(d.lower <= sampled_min + 1e-12, "lower {} above a sampled distance {sampled_min}", d.lower);
        prop_assert!(d.lower <= d.upper && d.upper - d.lower <= 1e-3);
        // Collision and distance agree: a contact within tau is reported; witnessed pairs are real.
        if d.upper <= tau { prop_assert!(!pairs.is_empty()); }
        if d.lower > tau { prop_assert!(pairs.iter().all(|q| !q.witnessed)); }
    }
}
