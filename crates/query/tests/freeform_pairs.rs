//! Freeform distance against the OpenCASCADE oracles in `shared/data/nurbs` (pairs.json and the
//! per-surface point queries).

use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
use gprox_geometry::freeform::reference::{load_pairs, load_surface_reference};
use gprox_geometry::freeform::{apply_pose, load_nurbs_json, NurbsSurface};
use gprox_query::freeform::{
    freeform_distance, point_surface_distance, DistanceOptions, FreeformObject,
};

#[path = "../../geometry/tests/common/nurbs_data.rs"]
mod nurbs_data;
use nurbs_data::{nurbs_dir, surface_files};

#[test]
fn pairs_bracket_the_reference_distance() {
    let Some(dir) = nurbs_dir() else { return };
    let pairs = load_pairs(dir.join("pairs.json")).unwrap();
    assert!(pairs.len() >= 9);
    let tol = 1e-6;
    for pr in pairs {
        let name = &pr.name;
        let sa: Vec<NurbsSurface> = vec![load_nurbs_json(dir.join(&pr.surface_a)).unwrap()];
        let sb: Vec<NurbsSurface> = vec![load_nurbs_json(dir.join(&pr.surface_b)).unwrap()];
        let opts = CoonsOptions {
            epsilon: 1e-4,
            ..Default::default()
        };
        let (ba, bb) = (
            CoonsBvh::build(&sa, &opts).unwrap(),
            CoonsBvh::build(&sb, &opts).unwrap(),
        );
        let a = FreeformObject {
            surfaces: &sa,
            bvh: &ba,
            pose: pr.pose_a,
        };
        let b = FreeformObject {
            surfaces: &sb,
            bvh: &bb,
            pose: pr.pose_b,
        };
        let t = std::time::Instant::now();
        let d = freeform_distance(
            &a,
            &b,
            &DistanceOptions {
                tolerance: tol,
                ..Default::default()
            },
        );
        let want = pr.min_distance;
        println!(
            "{name}: ref {want:.12} got [{:.12}, {:.12}] pairs {} in {:.3}s",
            d.lower,
            d.upper,
            d.pairs_tested,
            t.elapsed().as_secs_f64()
        );
        assert!(d.converged, "{name}: not converged");
        assert!(d.upper - d.lower <= tol);
        // OCCT's own result carries ~1e-9 of numerical error.
        assert!(
            d.lower <= want + 1e-9 && want <= d.upper + 1e-9,
            "{name}: {want} not in [{}, {}]",
            d.lower,
            d.upper
        );
        // The closest points are surface points at the reported parameters, `distance` apart.
        let pa = apply_pose(&a.pose, sa[d.surface_a as usize].point(d.uv_a.0, d.uv_a.1));
        let pb = apply_pose(&b.pose, sb[d.surface_b as usize].point(d.uv_b.0, d.uv_b.1));
        assert!(
            pa.distance(d.point_a) <= 1e-12 && pb.distance(d.point_b) <= 1e-12,
            "{name}"
        );
        assert!((d.point_a.distance(d.point_b) - d.distance).abs() <= 1e-12);
        // For the separated pairs with a unique solution, the points match OCCT's.
        if pr.solutions.len() == 1 && want > 1e-2 {
            let (ra, rb) = pr.solutions[0];
            assert!(
                d.point_a.distance(ra) < 1e-2 && d.point_b.distance(rb) < 1e-2,
                "{name}: far from OCCT's points"
            );
        }
    }
}

#[test]
fn point_queries_match_reference() {
    let Some(dir) = nurbs_dir() else { return };
    let files = surface_files(&dir);
    for f in files {
        let s = load_nurbs_json(&f).unwrap();
        let (_, queries) = load_surface_reference(&f).unwrap();
        for (k, q) in queries.iter().enumerate() {
            let (p, want) = (q.query, q.distance);
            let r = point_surface_distance(&s, p, 1e-9, 2_000_000);
            assert!(
                r.lower <= want + 1e-9 && want <= r.distance + 1e-9 && r.distance - r.lower <= 1e-9,
                "{}: query {k}: ref {want} got [{}, {}]",
                f.display(),
                r.lower,
                r.distance
            );
            assert!((s.point(r.uv.0, r.uv.1) - r.point).length() < 1e-12);
        }
    }
}

/// OpenCASCADE's pair kinds: intersecting pairs give witnessed contacts (two surface points
/// within the tolerance); pairs separated by more than the tolerance give nothing.
#[test]
fn collide_matches_reference_intersect_flags() {
    use gprox_query::freeform::freeform_collide;
    let Some(dir) = nurbs_dir() else { return };
    let tol = 1e-4;
    for pr in load_pairs(dir.join("pairs.json")).unwrap() {
        let sa = vec![load_nurbs_json(dir.join(&pr.surface_a)).unwrap()];
        let sb = vec![load_nurbs_json(dir.join(&pr.surface_b)).unwrap()];
        let opts = CoonsOptions::default();
        let (ba, bb) = (
            CoonsBvh::build(&sa, &opts).unwrap(),
            CoonsBvh::build(&sb, &opts).unwrap(),
        );
        let a = FreeformObject {
            surfaces: &sa,
            bvh: &ba,
            pose: pr.pose_a,
        };
        let b = FreeformObject {
            surfaces: &sb,
            bvh: &bb,
            pose: pr.pose_b,
        };
        let hits = freeform_collide(&a, &b, tol);
        let name = &pr.name;
        println!(
            "{name}: {} contacts, {} undecided",
            hits.contacts.len(),
            hits.undecided.len()
        );
        if pr.kind == "intersecting" || pr.min_distance <= tol / 2.0 {
            assert!(!hits.contacts.is_empty(), "{name}: no witnessed contact");
        } else if pr.min_distance > 2.0 * tol {
            assert!(hits.is_empty(), "{name}: separated, yet reported");
        }
        for c in &hits.contacts {
            let pa = apply_pose(&a.pose, sa[0].point(c.uv_a.0, c.uv_a.1));
            let pb = apply_pose(&b.pose, sb[0].point(c.uv_b.0, c.uv_b.1));
            assert!(pa.distance(c.point_a) <= 1e-12 && pb.distance(c.point_b) <= 1e-12);
            assert!(c.distance <= tol && c.distance + 1e-12 >= pr.min_distance - 1e-9);
        }
    }
}
