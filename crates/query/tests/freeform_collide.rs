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
        let hits = freeform_collide(&a, &b, tau);
        let pairs = hits.pairs();
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
        for q in &hits.undecided {
            prop_assert!(q.lower <= tau && !q.witnessed);
        }
        // Witnesses are actual surface points at their (u, v), inside their patches, within tau.
        for c in &hits.contacts {
            let pa = apply_pose(&a.pose, sa[c.surface_a as usize].point(c.uv_a.0, c.uv_a.1));
            let pb = apply_pose(&b.pose, sb[c.surface_b as usize].point(c.uv_b.0, c.uv_b.1));
            prop_assert!(pa.distance(c.point_a) <= 1e-12 && pb.distance(c.point_b) <= 1e-12);
            prop_assert!(c.rect_a.contains(c.uv_a.0, c.uv_a.1) && c.rect_b.contains(c.uv_b.0, c.uv_b.1));
            prop_assert!((c.point_a.distance(c.point_b) - c.distance).abs() <= 1e-12 && c.distance <= tau);
        }
        let d = freeform_distance(&a, &b, &DistanceOptions { tolerance: 1e-3, ..Default::default() });
        prop_assert!(d.converged);
        prop_assert!(d.lower <= sampled_min + 1e-12, "lower {} above a sampled distance {sampled_min}", d.lower);
        prop_assert!(d.lower <= d.upper && d.upper - d.lower <= 1e-3);
        // Collision and distance agree: a contact within tau is reported; witnessed pairs are real.
        if d.upper <= tau { prop_assert!(!hits.contacts.is_empty() || !hits.undecided.is_empty()); }
        if d.lower > tau { prop_assert!(hits.contacts.is_empty()); }
        // Below the distance tolerance a witness always exists and is found.
        if d.upper <= tau - 1e-3 { prop_assert!(!hits.contacts.is_empty()); }
    }
}

/// The plane z = 0 (x in [0, 1], y in [-0.6, 0.6]) and an exact rational quadratic cylinder
/// arc (radius 0.5, axis along x at height 0.3 + `lift`, 120 degrees around its lowest line).
fn plane_and_cylinder(lift: f64) -> (Vec<NurbsSurface>, Vec<NurbsSurface>) {
    let plane = NurbsSurface::bezier(
        [1, 1],
        vec![
            DVec3::new(0.0, -0.6, 0.0),
            DVec3::new(0.0, 0.6, 0.0),
            DVec3::new(1.0, -0.6, 0.0),
            DVec3::new(1.0, 0.6, 0.0),
        ],
        None,
    )
    .unwrap();
    let (r, c) = (0.5, 0.3 + lift);
    let (s, k) = (60f64.to_radians().sin(), 60f64.to_radians().cos());
    let mut pts = Vec::new();
    let mut w = Vec::new();
    for (y, z, wt) in [
        (-r * s, c - r * k, 1.0),
        (0.0, c - r / k, k),
        (r * s, c - r * k, 1.0),
    ] {
        for x in [-0.2, 1.2] {
            pts.push(DVec3::new(x, y, z));
            w.push(wt);
        }
    }
    let cylinder = NurbsSurface::bezier([2, 1], pts, Some(w)).unwrap();
    (vec![plane], vec![cylinder])
}

/// Crossing surfaces with a known intersection (the lines y = ±0.4 on the plane): every contact
/// is a pair of surface points within the tolerance near those lines (closed form), every point
/// of the lines lies in a reported pair, nearly all pairs are witnessed; lifted 3 tolerances
/// clear, the surfaces are certified apart.
#[test]
fn crossing_plane_and_cylinder_contacts_follow_the_intersection_lines() {
    let tol = 1e-3;
    let opts = CoonsOptions {
        epsilon: 1e-4,
        ..Default::default()
    };
    let (sa, sb) = plane_and_cylinder(0.0);
    let (ba, bb) = (
        CoonsBvh::build(&sa, &opts).unwrap(),
        CoonsBvh::build(&sb, &opts).unwrap(),
    );
    let a = FreeformObject {
        surfaces: &sa,
        bvh: &ba,
        pose: Pose64::IDENTITY,
    };
    let b = FreeformObject {
        surfaces: &sb,
        bvh: &bb,
        pose: Pose64::IDENTITY,
    };
    let hits = freeform_collide(&a, &b, tol);
    println!(
        "{} contacts, {} undecided",
        hits.contacts.len(),
        hits.undecided.len()
    );
    assert!(!hits.contacts.is_empty());
    assert!(hits.undecided.len() * 10 <= hits.contacts.len());
    let off_cylinder = |p: DVec3| ((p.y.powi(2) + (p.z - 0.3).powi(2)).sqrt() - 0.5).abs();
    for c in &hits.contacts {
        assert!(c.distance <= tol && c.point_a.z.abs() <= 1e-15);
        assert!(off_cylinder(c.point_b) <= 1e-12);
        assert!(off_cylinder(c.point_a) <= tol + 1e-12);
        assert!((c.point_a.y.abs() - 0.4).abs() <= 0.01, "{c:?}");
    }
    let pairs = hits.pairs();
    for i in 0..=20 {
        for y in [-0.4, 0.4] {
            let x = i as f64 / 20.0;
            let uv_a = (x, (y + 0.6) / 1.2);
            let q = gprox_query::freeform::point_surface_distance(
                &sb[0],
                DVec3::new(x, y, 0.0),
                1e-12,
                100_000,
            );
            assert!(q.distance <= 1e-9);
            assert!(
                pairs
                    .iter()
                    .any(|p| p.rect_a.contains(uv_a.0, uv_a.1) && p.rect_b.contains(q.uv.0, q.uv.1)),
                "intersection point ({x}, {y}) not covered"
            );
        }
    }
    let (_, lifted) = plane_and_cylinder(0.2 + 3.0 * tol);
    let bl = CoonsBvh::build(&lifted, &opts).unwrap();
    let apart = FreeformObject {
        surfaces: &lifted,
        bvh: &bl,
        pose: Pose64::IDENTITY,
    };
    assert!(freeform_collide(&a, &apart, tol).is_empty());
    assert!(!gprox_query::freeform::freeform_collide_any(
        &a, &apart, tol
    ));
    assert!(gprox_query::freeform::freeform_collide_any(&a, &b, tol));
}
