//! Mesh–mesh distance against brute force over all triangle pairs (in the same f64 world
//! coordinates), on binary trees of several volumes and on eight-wide RSS trees (which must give
//! the binary RSS search's distance bit for bit), tolerance and threshold semantics, degenerate
//! input, and the benchmark scenes' reference distances (skipped when ../shared is absent).

use glam::{Affine3A, Mat3, Quat, Vec3};
use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::obb::Obb;
use gprox_bvh::rss::Rss;
use gprox_bvh::sphere::Sphere;
use gprox_bvh::wide_rss::WideRssTree;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::{point_triangle_distance, triangle_distance};
use gprox_geometry::TriMesh;
use gprox_query::distance::{
    distance, distance_below, distance_from, distance_wide, distance_wide_from, DistanceObject,
    DistanceOptions, DistanceResult, WideDistanceObject,
};
use proptest::prelude::*;

fn brute(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> f64 {
    let ta: Vec<_> = (0..a.face_count())
        .map(|i| transform_triangle(pa, a.triangle(i)))
        .collect();
    let tb: Vec<_> = (0..b.face_count())
        .map(|i| transform_triangle(pb, b.triangle(i)))
        .collect();
    let mut best = f64::INFINITY;
    for x in &ta {
        for y in &tb {
            best = best.min(triangle_distance(x, y).distance);
        }
    }
    best
}

/// A random triangle soup around the origin, or a small closed "blob" (octahedron-like fan).
fn mesh() -> impl Strategy<Value = TriMesh> {
    (
        prop::collection::vec(prop::array::uniform3(-0.5f32..0.5), 3..30),
        prop::collection::vec(prop::array::uniform3(0usize..1000), 1..40),
    )
        .prop_map(|(v, f)| {
            let n = v.len();
            let pos: Vec<Vec3> = v.into_iter().map(Vec3::from_array).collect();
            let faces: Vec<[u32; 3]> = f.into_iter().map(|t| t.map(|i| (i % n) as u32)).collect();
            TriMesh::new(pos, faces).expect("valid")
        })
}

fn pose() -> impl Strategy<Value = Pose64> {
    (
        prop::array::uniform4(-1.0f32..1.0),
        prop::array::uniform3(-1.2f32..1.2),
    )
        .prop_map(|(q, t)| {
            let r = Mat3::from_quat(Quat::from_xyzw(q[0], q[1], q[2], q[3] + 1.2).normalize());
            Pose64::from_affine(&Affine3A::from_mat3_translation(r, Vec3::from_array(t)))
        })
}

/// A pose with a linear part that is not a rotation: scaled by `s` and sheared by `k`.
fn affine_pose() -> impl Strategy<Value = Pose64> {
    (pose(), 0.5f64..2.0, -0.3f64..0.3).prop_map(|(p, s, k)| {
        let mut p = p;
        for row in &mut p.rows {
            let x0 = row[0];
            for v in row.iter_mut().take(3) {
                *v *= s;
            }
            row[1] += k * x0;
        }
        p
    })
}

/// The wide search on the two meshes, checked against the brute-force minimum and against the
/// binary RSS search (the same distance, bit for bit, and consistent witnesses).
fn check_wide(
    ma: &TriMesh,
    pa: Pose64,
    mb: &TriMesh,
    pb: Pose64,
    opts: &DistanceOptions,
    hint: Option<[u32; 2]>,
) -> Result<DistanceResult, TestCaseError> {
    let (ta, tb) = (
        WideRssTree::build(ma).expect("collapses"),
        WideRssTree::build(mb).expect("collapses"),
    );
    let a = WideDistanceObject {
        mesh: ma,
        tree: &ta,
        pose: pa,
    };
    let b = WideDistanceObject {
        mesh: mb,
        tree: &tb,
        pose: pb,
    };
    let r = if hint.is_some() {
        distance_wide_from(&a, &b, opts, hint)
    } else {
        distance_wide(&a, &b, opts)
    }
    .expect("valid trees");
    let bin = distance_from(&a.binary(), &b.binary(), opts, hint).expect("valid trees");
    let exact = brute(ma, &pa, mb, &pb);
    prop_assert!(r.lower <= r.distance && r.distance <= r.upper);
    let slack = 1e-12 * (1.0 + exact);
    prop_assert!(
        r.lower <= exact + slack && exact <= r.upper + slack,
        "{} <= {exact} <= {}",
        r.lower,
        r.upper
    );
    if opts.abs_tol == 0.0 && opts.rel_tol == 0.0 && opts.threshold.is_none() {
        prop_assert_eq!(
            r.distance.to_bits(),
            bin.distance.to_bits(),
            "wide {} binary {}",
            r.distance,
            bin.distance
        );
        prop_assert!(
            (r.distance - exact).abs() <= 1e-5 * exact.max(1e-12),
            "got {} brute {exact}",
            r.distance
        );
    }
    prop_assert_eq!(r.below_threshold, bin.below_threshold);
    let xa = transform_triangle(&pa, ma.triangle(r.tri_a as usize));
    let xb = transform_triangle(&pb, mb.triangle(r.tri_b as usize));
    prop_assert_eq!(
        triangle_distance(&xa, &xb).distance.to_bits(),
        r.distance.to_bits()
    );
    Ok(r)
}

fn check_exact<B: gprox_bvh::bounding_volume::BoundingVolume>(
    ma: &TriMesh,
    pa: Pose64,
    mb: &TriMesh,
    pb: Pose64,
    parallel: bool,
) -> Result<(), TestCaseError> {
    let (ta, tb) = (BvTree::<B>::build(ma), BvTree::<B>::build(mb));
    let a = DistanceObject {
        mesh: ma,
        tree: &ta,
        pose: pa,
    };
    let b = DistanceObject {
        mesh: mb,
        tree: &tb,
        pose: pb,
    };
    let r = distance(
        &a,
        &b,
        &DistanceOptions {
            parallel,
            ..Default::default()
        },
    )
    .expect("valid trees");
    let exact = brute(ma, &pa, mb, &pb);
    prop_assert!(r.distance.is_finite() && r.lower.is_finite());
    prop_assert!(
        (r.distance - exact).abs() <= 1e-5 * exact.max(1e-12),
        "got {} brute {exact}",
        r.distance
    );
    prop_assert!(r.lower <= r.distance && r.distance <= r.upper);
    // The closest points lie on the reported triangles, at the reported distance.
    let xa = transform_triangle(&pa, ma.triangle(r.tri_a as usize));
    let xb = transform_triangle(&pb, mb.triangle(r.tri_b as usize));
    prop_assert!(point_triangle_distance(r.point_a, &xa).0 <= 1e-9);
    prop_assert!(point_triangle_distance(r.point_b, &xb).0 <= 1e-9);
    prop_assert!((r.point_a.distance(r.point_b) - r.distance).abs() <= 1e-12);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rss_matches_brute_force(ma in mesh(), mb in mesh(), pa in pose(), pb in pose(), par in any::<bool>()) {
        check_exact::<Rss>(&ma, pa, &mb, pb, par)?;
        let opts = DistanceOptions { parallel: par, ..Default::default() };
        check_wide(&ma, pa, &mb, pb, &opts, None)?;
    }

    /// Poses that scale and shear: B's volumes reach A's frame (and A's reach B's) through the
    /// nearest rotation plus the residual; the wide search still finds the exact minimum.
    #[test]
    fn wide_matches_brute_force_under_affine_poses(ma in mesh(), mb in mesh(), pa in affine_pose(), pb in affine_pose()) {
        check_wide(&ma, pa, &mb, pb, &DistanceOptions::default(), None)?;
    }

    #[test]
    fn obb_and_sphere_trees_match_brute_force(ma in mesh(), mb in mesh(), pa in pose(), pb in pose()) {
        check_exact::<Obb>(&ma, pa, &mb, pb, false)?;
        check_exact::<Sphere>(&ma, pa, &mb, pb, false)?;
    }

    /// A first guess (temporal coherence) never changes the exact distance: every hint — the
    /// answer's own pair, an arbitrary pair, an out-of-range one — gives the brute-force
    /// minimum, bit for bit the unhinted answer, with a witness at that distance.
    #[test]
    fn hints_change_no_distance(ma in mesh(), mb in mesh(), pa in pose(), pb in pose(), fa in any::<u32>(), fb in any::<u32>()) {
        let (ta, tb) = (BvTree::<Rss>::build(&ma), BvTree::<Rss>::build(&mb));
        let a = DistanceObject { mesh: &ma, tree: &ta, pose: pa };
        let b = DistanceObject { mesh: &mb, tree: &tb, pose: pb };
        let opts = DistanceOptions::default();
        let plain = distance(&a, &b, &opts).expect("valid");
        let (na, nb) = (ma.face_count() as u32, mb.face_count() as u32);
        let hints = [Some([plain.tri_a, plain.tri_b]), Some([fa % na, fb % nb]), Some([fa, fb]), Some([na, 0])];
        let exact = brute(&ma, &pa, &mb, &pb);
        for hint in hints {
            let r = distance_from(&a, &b, &opts, hint).expect("valid");
            prop_assert_eq!(r.distance.to_bits(), plain.distance.to_bits(), "hint {:?}", hint);
            prop_assert!((r.distance - exact).abs() <= 1e-5 * exact.max(1e-12));
            let xa = transform_triangle(&pa, ma.triangle(r.tri_a as usize));
            let xb = transform_triangle(&pb, mb.triangle(r.tri_b as usize));
            prop_assert_eq!(triangle_distance(&xa, &xb).distance.to_bits(), r.distance.to_bits());
            let w = check_wide(&ma, pa, &mb, pb, &opts, hint)?;
            prop_assert_eq!(w.distance.to_bits(), plain.distance.to_bits(), "wide, hint {:?}", hint);
        }
    }

    #[test]
    fn tolerances_and_threshold_honour_bounds(ma in mesh(), mb in mesh(), pa in pose(), pb in pose(), rel in 0.0f64..0.5, abs in 0.0f64..0.1, delta in 0.0f64..1.5) {
        let (ta, tb) = (BvTree::<Rss>::build(&ma), BvTree::<Rss>::build(&mb));
        let a = DistanceObject { mesh: &ma, tree: &ta, pose: pa };
        let b = DistanceObject { mesh: &mb, tree: &tb, pose: pb };
        let exact = brute(&ma, &pa, &mb, &pb);
        let r = distance(&a, &b, &DistanceOptions { abs_tol: abs, rel_tol: rel, ..Default::default() }).expect("valid");
        let slack = 1e-12 * (1.0 + exact);
        prop_assert!(r.lower <= exact + slack && exact <= r.upper + slack, "{} <= {exact} <= {}", r.lower, r.upper);
        prop_assert!(r.upper - r.lower <= abs.max(rel * r.upper) + slack);
        let below = distance_below(&a, &b, delta).expect("valid");
        prop_assert_eq!(below, exact < delta);
        let tol = DistanceOptions { abs_tol: abs, rel_tol: rel, ..Default::default() };
        let w = check_wide(&ma, pa, &mb, pb, &tol, None)?;
        prop_assert!(w.upper - w.lower <= abs.max(rel * w.upper) + slack);
        let thr = DistanceOptions { threshold: Some(delta), ..Default::default() };
        let w = check_wide(&ma, pa, &mb, pb, &thr, None)?;
        prop_assert_eq!(w.upper < delta, exact < delta);
    }
}

fn tetra(scale: f32, shift: Vec3) -> TriMesh {
    let v = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z].map(|p| p * scale + shift);
    TriMesh::new(v.to_vec(), vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).expect("valid")
}

#[test]
fn degenerate_inputs() {
    let t = tetra(1.0, Vec3::ZERO);
    let tree = BvTree::<Rss>::build(&t);
    let id = Pose64::IDENTITY;
    // Coincident meshes, identical poses.
    let a = DistanceObject {
        mesh: &t,
        tree: &tree,
        pose: id,
    };
    let r = distance(&a, &a, &DistanceOptions::default()).expect("valid");
    assert_eq!(r.distance, 0.0);
    // Touching at a vertex: (1,0,0) of A is the corner of B.
    let u = tetra(1.0, Vec3::X);
    let tu = BvTree::<Rss>::build(&u);
    let b = DistanceObject {
        mesh: &u,
        tree: &tu,
        pose: id,
    };
    assert_eq!(
        distance(&a, &b, &DistanceOptions::default())
            .expect("valid")
            .distance,
        0.0
    );
    // Zero-area triangles (points and segments) only.
    let z = TriMesh::new(
        vec![Vec3::new(3.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)],
        vec![[0, 0, 0], [0, 1, 1]],
    )
    .expect("valid");
    let tz = BvTree::<Rss>::build(&z);
    let c = DistanceObject {
        mesh: &z,
        tree: &tz,
        pose: id,
    };
    let r = distance(&a, &c, &DistanceOptions::default()).expect("valid");
    assert!((r.distance - 2.0).abs() < 1e-12, "{r:?}");
    assert!(!r.lower.is_nan());
    // A tree of the wrong mesh is an error, not a panic.
    let bad = DistanceObject {
        mesh: &z,
        tree: &tree,
        pose: id,
    };
    assert!(distance(&a, &bad, &DistanceOptions::default()).is_err());
}

/// The wide search on the same degenerate input: zero distances for coincident and touching
/// meshes, one-face meshes (a tree of one slot), point and segment triangles, and typed errors
/// for a tree of another mesh, a non-finite pose and a negative tolerance.
#[test]
fn wide_degenerate_inputs() {
    let id = Pose64::IDENTITY;
    let t = tetra(1.0, Vec3::ZERO);
    let u = tetra(1.0, Vec3::X);
    let one = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).expect("valid");
    let z = TriMesh::new(
        vec![Vec3::new(3.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)],
        vec![[0, 0, 0], [0, 1, 1]],
    )
    .expect("valid");
    let trees: Vec<WideRssTree> = [&t, &u, &one, &z]
        .map(|m| WideRssTree::build(m).expect("collapses"))
        .into();
    let obj = |k: usize, pose: Pose64| WideDistanceObject {
        mesh: [&t, &u, &one, &z][k],
        tree: &trees[k],
        pose,
    };
    let opts = DistanceOptions::default();
    let d = |x: usize, y: usize| distance_wide(&obj(x, id), &obj(y, id), &opts).expect("valid");
    assert_eq!(d(0, 0).distance, 0.0);
    assert_eq!(d(0, 1).distance, 0.0);
    assert_eq!(d(2, 2).distance, 0.0);
    let r = d(0, 3);
    assert!(
        (r.distance - 2.0).abs() < 1e-12 && !r.lower.is_nan(),
        "{r:?}"
    );
    let mut lifted = id;
    lifted.rows[2][3] = 5.0;
    let r = distance_wide(&obj(2, id), &obj(2, lifted), &opts).expect("valid");
    assert_eq!((r.distance, r.tri_a, r.tri_b), (5.0, 0, 0));
    let bad = WideDistanceObject {
        tree: &trees[0],
        ..obj(3, id)
    };
    assert!(distance_wide(&obj(0, id), &bad, &opts).is_err());
    let mut nan = id;
    nan.rows[0][0] = f64::NAN;
    assert!(distance_wide(&obj(0, id), &obj(1, nan), &opts).is_err());
    let neg = DistanceOptions {
        abs_tol: -1.0,
        ..opts
    };
    assert!(distance_wide(&obj(0, id), &obj(1, id), &neg).is_err());
}

/// The number after `"key":` at the start of `s`-slice positions (tiny JSON reader: the test
/// crate has no JSON dependency).
fn number_after(seg: &str, key: &str) -> Option<f64> {
    let i = seg.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = seg[i..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Reference distances of the benchmark scenes (the scenes' brute-force reference run).
#[test]
fn benchmark_scene_references() {
    for scene in ["bunny-pair-distance", "bumpy-pair-distance"] {
        let dir = format!(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/peers/scenes/{}"
            ),
            scene
        );
        let refs = format!(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/peers/results/{}.json"
            ),
            scene
        );
        let (Ok(text), Ok(rtext)) = (
            std::fs::read_to_string(format!("{dir}/scene.json")),
            std::fs::read_to_string(&refs),
        ) else {
            eprintln!("note: {scene} not available, skipped");
            continue;
        };
        let mesh_names: Vec<&str> = text
            .split("\"mesh\": \"")
            .skip(1)
            .filter_map(|t| t.split('"').next())
            .collect();
        let meshes: Vec<TriMesh> = mesh_names
            .iter()
            .map(|m| gprox_geometry::io::load_mesh(format!("{dir}/{m}")).expect("mesh loads"))
            .collect();
        let n = meshes.len();
        assert!(n >= 2, "{scene}: two objects expected");
        let raw = std::fs::read(format!("{dir}/transforms.f32")).expect("transforms");
        let f: Vec<f32> = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let pose = |fr: usize, o: usize| {
            let m = &f[(fr * n + o) * 12..][..12];
            let r = |k: usize| {
                [
                    m[4 * k] as f64,
                    m[4 * k + 1] as f64,
                    m[4 * k + 2] as f64,
                    m[4 * k + 3] as f64,
                ]
            };
            Pose64 {
                rows: [r(0), r(1), r(2)],
            }
        };
        let trees: Vec<WideRssTree> = meshes
            .iter()
            .map(|m| WideRssTree::build(m).expect("collapses"))
            .collect();
        // Frame objects hold no nested braces; the first run listed is the reference.
        let mut seen = std::collections::HashSet::new();
        let mut checked = 0;
        for seg in rtext.split('{') {
            let seg = seg.split('}').next().unwrap_or("");
            let (Some(want), Some(frame)) =
                (number_after(seg, "distance"), number_after(seg, "frame"))
            else {
                continue;
            };
            let frame = frame as usize;
            if !seen.insert(frame) || !frame.is_multiple_of(9) {
                continue;
            }
            let a = WideDistanceObject {
                mesh: &meshes[0],
                tree: &trees[0],
                pose: pose(frame, 0),
            };
            let b = WideDistanceObject {
                mesh: &meshes[n - 1],
                tree: &trees[n - 1],
                pose: pose(frame, 1),
            };
            let opts = DistanceOptions::default();
            let r = distance(&a.binary(), &b.binary(), &opts).expect("valid");
            let w = distance_wide(&a, &b, &opts).expect("valid");
            assert_eq!(
                r.distance.to_bits(),
                w.distance.to_bits(),
                "{scene} frame {frame}"
            );
            assert!(
                (r.distance - want).abs() <= 1e-6 * want,
                "{scene} frame {frame}: {} vs {want}",
                r.distance
            );
            checked += 1;
        }
        assert!(checked > 0, "{scene}: no reference frames");
    }
}
