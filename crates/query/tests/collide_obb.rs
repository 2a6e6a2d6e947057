//! Collision over OBB (and RSS, sphere) trees: the same pair sets as the AABB trees'
//! `collide_all`, and the exact rational brute-force oracle; the `two-tori-interlock` frames give
//! the reference peer's counts (skipped when `../shared` is absent).

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use std::path::Path;

use gen::{any_pose, float_mesh, grid_mesh, grid_pose, pose64, random_pose};
use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::bv_tree::{BvTree, Split};
use gprox_bvh::obb::Obb;
use gprox_bvh::rss::Rss;
use gprox_bvh::sphere::Sphere;
use gprox_bvh::wide_obb::WideObbTree;
use gprox_bvh::{lbvh, Bvh};
use gprox_geometry::glam::{Affine3A, DVec3, Mat3, Vec3};
use gprox_geometry::scene::Scene;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::{
    collide_all, collide_all_bv, collide_all_models, collide_any_bv, collide_any_models,
    try_collide_all_bv, BvCollisionObject, CollideError, CollideOptions, CollisionModel,
    CollisionObject, CollisionVolume, LocalMap, ModelObject, Side,
};
use proptest::prelude::*;

/// Pairs from the AABB trees (`collide_all`).
fn aabb_pairs(ma: &TriMesh, pa: &Pose64, mb: &TriMesh, pb: &Pose64, margin: f64) -> Vec<[u32; 2]> {
    let (ba, bb) = (lbvh::build(ma), lbvh::build(mb));
    let a = CollisionObject::new(ma, &ba, *pa).unwrap();
    let b = CollisionObject::new(mb, &bb, *pb).unwrap();
    collide_all(&a, &b, &CollideOptions { margin })
}

/// Pairs from trees of `B`, checking `collide_any_bv` agrees.
fn bv_pairs<B: CollisionVolume>(
    ma: &TriMesh,
    pa: &Pose64,
    mb: &TriMesh,
    pb: &Pose64,
    margin: f64,
) -> Vec<[u32; 2]> {
    let (ta, tb) = (BvTree::<B>::build(ma), BvTree::<B>::build(mb));
    let a = BvCollisionObject::new(ma, &ta, *pa).unwrap();
    let b = BvCollisionObject::new(mb, &tb, *pb).unwrap();
    let opts = CollideOptions { margin };
    let pairs = collide_all_bv(&a, &b, &opts);
    assert_eq!(collide_any_bv(&a, &b, &opts), !pairs.is_empty());
    pairs
}

/// OBB == RSS == sphere == AABB == oracle, and the mixed AABB/OBB model API agrees.
fn check_all(ma: &TriMesh, pa: &Pose64, mb: &TriMesh, pb: &Pose64) {
    let want = oracle::brute_force_pairs(ma, pa, mb, pb);
    assert_eq!(aabb_pairs(ma, pa, mb, pb, 0.0), want, "aabb");
    assert_eq!(bv_pairs::<Obb>(ma, pa, mb, pb, 0.0), want, "obb");
    assert_eq!(bv_pairs::<Rss>(ma, pa, mb, pb, 0.0), want, "rss");
    assert_eq!(bv_pairs::<Sphere>(ma, pa, mb, pb, 0.0), want, "sphere");
    let (aabb_a, obb_b) = (lbvh::build(ma), BvTree::<Obb>::build_with(mb, Split::World));
    let a = object(ma, CollisionModel::Aabb(&aabb_a), pa);
    let b = object(mb, CollisionModel::Obb(&obb_b), pb);
    let opts = CollideOptions::default();
    assert_eq!(collide_all_models(&a, &b, &opts), want, "aabb x obb");
    let mut swapped: Vec<[u32; 2]> = want.iter().map(|p| [p[1], p[0]]).collect();
    swapped.sort_unstable();
    assert_eq!(collide_all_models(&b, &a, &opts), swapped, "obb x aabb");
    assert_eq!(collide_any_models(&a, &b, &opts), !want.is_empty());
    assert!(collide_any_models(&a, &a, &opts), "a mesh meets itself");
    assert_eq!(wide_pairs(ma, pa, mb, pb, 0.0), want, "wide obb");
    // A wide tree against another kind reads as its binary tree.
    let wb = WideObbTree::build(mb).unwrap();
    let w = ModelObject {
        model: CollisionModel::WideObb(&wb),
        ..b
    };
    assert_eq!(collide_all_models(&a, &w, &opts), want, "aabb x wide");
    assert_eq!(collide_all_models(&w, &a, &opts), swapped, "wide x aabb");
}

/// A mesh with the tree of its choice at a pose.
fn object<'a>(mesh: &'a TriMesh, model: CollisionModel<'a>, pose: &Pose64) -> ModelObject<'a> {
    ModelObject {
        mesh,
        model,
        pose: *pose,
    }
}

/// Pairs from two wide OBB trees (the lane traversal), checking the early-out query agrees.
fn wide_pairs(ma: &TriMesh, pa: &Pose64, mb: &TriMesh, pb: &Pose64, margin: f64) -> Vec<[u32; 2]> {
    let (ta, tb) = (
        WideObbTree::build(ma).unwrap(),
        WideObbTree::build(mb).unwrap(),
    );
    let a = object(ma, CollisionModel::WideObb(&ta), pa);
    let b = object(mb, CollisionModel::WideObb(&tb), pb);
    let opts = CollideOptions { margin };
    let pairs = collide_all_models(&a, &b, &opts);
    assert_eq!(collide_any_models(&a, &b, &opts), !pairs.is_empty());
    pairs
}

/// Mostly grid meshes under grid poses (exact touching/coplanar contacts), sometimes generic.
fn mesh_pair_case() -> impl Strategy<Value = (TriMesh, Affine3A, TriMesh, Affine3A)> {
    prop_oneof![
        3 => (grid_mesh(7, 8, 2), grid_pose(1), grid_mesh(7, 8, 2), grid_pose(1)),
        1 => (grid_mesh(6, 5, 2), any_pose(), grid_mesh(6, 5, 2), any_pose()),
        1 => (float_mesh(6, 5), random_pose(0.5), float_mesh(6, 5), random_pose(0.5)),
    ]
}

/// A rotation about a grid axis times an integer scale per axis: not a rotation, so volumes are
/// compared in world space.
fn scaled_pose() -> impl Strategy<Value = Affine3A> {
    (grid_pose(1), [1i32..=3, 1i32..=3, 1i32..=3]).prop_map(|(p, [x, y, z])| {
        let s = Mat3::from_diagonal(Vec3::new(x as f32, y as f32, z as f32));
        Affine3A::from_mat3_translation(Mat3::from(p.matrix3) * s, p.translation.into())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random small meshes: every volume type gives the oracle's pair set.
    #[test]
    fn bv_trees_equal_aabb_and_oracle((ma, pa, mb, pb) in mesh_pair_case()) {
        check_all(&ma, &pose64(&pa), &mb, &pose64(&pb));
    }

    /// A mesh against a copy of itself (identical or moved by a grid pose): shared faces,
    /// coplanar overlaps, edges on edges.
    #[test]
    fn copies_touching_equal_oracle(m in grid_mesh(7, 8, 2), p in grid_pose(1), same in any::<bool>()) {
        let pb = if same { Pose64::IDENTITY } else { pose64(&p) };
        check_all(&m, &Pose64::IDENTITY, &m, &pb);
    }

    /// Scaled poses (world-space comparison).
    #[test]
    fn scaled_poses_equal_oracle(ma in grid_mesh(7, 8, 2), pa in prop_oneof![scaled_pose(), grid_pose(1)],
                                 mb in grid_mesh(7, 8, 2), pb in scaled_pose()) {
        check_all(&ma, &pose64(&pa), &mb, &pose64(&pb));
    }

    /// With a margin, OBB trees give the AABB trees' pairs (which are checked against all pairs
    /// in `collide_props`).
    #[test]
    fn margin_pairs_equal_aabb((ma, pa, mb, pb) in mesh_pair_case(), margin in prop_oneof![Just(0.5), 0.0f64..0.8]) {
        let (pa, pb) = (pose64(&pa), pose64(&pb));
        let want = aabb_pairs(&ma, &pa, &mb, &pb, margin);
        prop_assert_eq!(bv_pairs::<Obb>(&ma, &pa, &mb, &pb, margin), want.clone());
        prop_assert_eq!(bv_pairs::<Rss>(&ma, &pa, &mb, &pb, margin), want.clone());
        prop_assert_eq!(wide_pairs(&ma, &pa, &mb, &pb, margin), want);
    }
}

/// Corners of random point clouds' OBBs: whenever the two boxes (B's under a random rotation)
/// share a point by the exact oracle, the fast separating-axis test says they overlap; boxes
/// pushed apart by more than their sizes are separated.
fn obb_case() -> impl Strategy<Value = (Vec<DVec3>, Vec<DVec3>, Affine3A, DVec3)> {
    let cloud = || proptest::collection::vec(gen::grid_point(3), 1..6);
    (
        cloud(),
        cloud(),
        random_pose(2.0),
        [-1.0f64..1.0, -1.0..1.0, -1.0..1.0],
    )
        .prop_map(|(a, b, p, d)| (a, b, p, DVec3::from_array(d)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn obb_sat_is_conservative((pa, pb, pose, dir) in obb_case()) {
        let (a, b) = (Obb::fit_points(&pa), Obb::fit_points(&pb));
        let p = pose64(&pose);
        let (q, t) = gprox_bvh::bounding_volume::pose_parts(&p);
        // Both boxes' corners as exact f64 world points (B's mapped in f64, then compared by
        // the oracle; the rotation is a unit quaternion's matrix, orthonormal to f32 rounding).
        let (qn, e) = gprox_bvh::bounding_volume::nearest_rotation(&q);
        let grow = e * b.reach() + 1e-9;
        let cb: Vec<DVec3> = b.corners().iter().map(|c| qn * *c + t).collect();
        // The f32 test of the traversal's local frame, on the same pairs.
        let mag = 2.0 * (a.reach() + b.reach());
        if oracle::hulls_intersect_lp_only(&a.corners(), &cb) {
            prop_assert!(a.overlaps_mapped(&b, &qn, t, grow));
            prop_assert!(a.overlaps_local(&b, &LocalMap::new(qn, t, grow, mag)));
        }
        let far = a.size() + b.size() + t.length() + 1.0;
        if dir.length() > 0.1 {
            let shift = dir.normalize() * (2.0 * far);
            prop_assert!(!a.overlaps_mapped(&b, &qn, t + shift, grow));
            let m = LocalMap::new(qn, t + shift, grow, mag + 2.0 * far);
            prop_assert!(!a.overlaps_local(&b, &m));
        }
    }
}

/// A bumpy grid sheet of `m * m * 2` triangles in `[0, 1]²`.
fn sheet(m: usize, phase: f32) -> TriMesh {
    let mut pos = Vec::with_capacity((m + 1) * (m + 1));
    for j in 0..=m {
        for i in 0..=m {
            let (x, y) = (i as f32 / m as f32, j as f32 / m as f32);
            let z = 0.05 * ((x * 17.0 + phase).sin() + (y * 13.0 - phase).cos());
            pos.push(Vec3::new(x, y, z));
        }
    }
    let mut faces = Vec::with_capacity(2 * m * m);
    let v = |i: usize, j: usize| (j * (m + 1) + i) as u32;
    for j in 0..m {
        for i in 0..m {
            faces.push([v(i, j), v(i + 1, j), v(i + 1, j + 1)]);
            faces.push([v(i, j), v(i + 1, j + 1), v(i, j + 1)]);
        }
    }
    TriMesh::new(pos, faces).unwrap()
}

/// Large meshes take the parallel path: same pairs as the AABB trees with 1 and 2 threads.
#[test]
fn parallel_equals_aabb() {
    let (ma, mb) = (sheet(120, 0.0), sheet(120, 1.3));
    let pb = Pose64::from_affine(&Affine3A::from_rotation_z(0.3));
    let want = aabb_pairs(&ma, &Pose64::IDENTITY, &mb, &pb, 0.0);
    assert!(!want.is_empty());
    let (ta, tb) = (BvTree::<Obb>::build(&ma), BvTree::<Obb>::build(&mb));
    let a = BvCollisionObject::new(&ma, &ta, Pose64::IDENTITY).unwrap();
    let b = BvCollisionObject::new(&mb, &tb, pb).unwrap();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got = pool.install(|| collide_all_bv(&a, &b, &CollideOptions::default()));
        assert_eq!(got, want, "{threads} threads");
        assert!(pool.install(|| collide_any_bv(&a, &b, &CollideOptions::default())));
        let wide = pool.install(|| wide_pairs(&ma, &Pose64::IDENTITY, &mb, &pb, 0.0));
        assert_eq!(wide, want, "wide, {threads} threads");
    }
}

const SCENE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/peers/scenes/two-tori-interlock"
);
const RESULTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/peers/results/two-tori-interlock.json"
);

/// Per-frame counts of the `ref` peer's collide-all run (first collide-all query, first run).
fn reference_counts(text: &str) -> Option<Vec<usize>> {
    let q = text.find("\"kind\": \"collide-all\"")?;
    let rest = &text[q..];
    let run = rest.find("\"peer\": \"ref\"")?;
    let frames_start = rest[..run].rfind("\"frames\"")?;
    let body = &rest[frames_start..run];
    Some(
        body.match_indices("\"count\":")
            .filter_map(|(i, m)| {
                let tail = body[i + m.len()..].trim_start();
                let end = tail.find(|c: char| !c.is_ascii_digit())?;
                tail[..end].parse().ok()
            })
            .collect(),
    )
}

/// Every frame of the two-tori scene: OBB-tree pairs (binary and wide) == AABB-tree pairs, and their count is the
/// reference peer's.
#[test]
fn two_tori_obb_equals_aabb_and_reference() {
    if !Path::new(SCENE).exists() {
        eprintln!("note: {SCENE} absent; skipping");
        return;
    }
    let scene = Scene::load(SCENE).expect("scene loads");
    let reference = std::fs::read_to_string(RESULTS)
        .ok()
        .and_then(|t| reference_counts(&t));
    if reference.is_none() {
        eprintln!("note: {RESULTS} absent; comparing with the AABB trees only");
    }
    let (ma, mb) = (scene.mesh(0), scene.mesh(1));
    let (ba, bb): (Bvh, Bvh) = (lbvh::build(ma), lbvh::build(mb));
    let (oa, ob) = (BvTree::<Obb>::build(ma), BvTree::<Obb>::build(mb));
    let wa = WideObbTree::from_tree(oa.clone()).unwrap();
    let wb = WideObbTree::from_tree(ob.clone()).unwrap();
    let opts = CollideOptions::default();
    let mut contacts = 0;
    for f in 0..scene.frame_count() {
        let (pa, pb) = (scene.pose64(f, 0), scene.pose64(f, 1));
        let want = collide_all(
            &CollisionObject::new(ma, &ba, pa).unwrap(),
            &CollisionObject::new(mb, &bb, pb).unwrap(),
            &opts,
        );
        let a = BvCollisionObject::new(ma, &oa, pa).unwrap();
        let b = BvCollisionObject::new(mb, &ob, pb).unwrap();
        let got = collide_all_bv(&a, &b, &opts);
        assert_eq!(got, want, "frame {f}");
        let wide = object(mb, CollisionModel::WideObb(&wb), &pb);
        let wide_a = object(ma, CollisionModel::WideObb(&wa), &pa);
        assert_eq!(
            collide_all_models(&wide_a, &wide, &opts),
            want,
            "frame {f}, wide"
        );
        assert_eq!(
            collide_any_models(&wide_a, &wide, &opts),
            !want.is_empty(),
            "frame {f}, wide any"
        );
        assert_eq!(collide_any_bv(&a, &b, &opts), !got.is_empty(), "frame {f}");
        if let Some(r) = &reference {
            assert_eq!(got.len(), r[f], "frame {f}: reference count");
        }
        contacts += usize::from(!got.is_empty());
    }
    assert!(contacts > 0, "the scene has contact frames");
}

#[test]
fn typed_errors_on_bad_input() {
    let m = sheet(2, 0.0);
    let tree = BvTree::<Obb>::build(&m);
    let other = BvTree::<Obb>::build(&sheet(3, 0.0));
    assert!(matches!(
        BvCollisionObject::new(&m, &other, Pose64::IDENTITY),
        Err(CollideError::BvhMismatch { side: Side::A, .. })
    ));
    let a = BvCollisionObject::new(&m, &tree, Pose64::IDENTITY).unwrap();
    let bad = BvCollisionObject {
        mesh: &m,
        tree: &other,
        pose: Pose64::IDENTITY,
    };
    assert!(matches!(
        try_collide_all_bv(&a, &bad, &CollideOptions::default()),
        Err(CollideError::BvhMismatch { side: Side::B, .. })
    ));
    assert!(matches!(
        try_collide_all_bv(&a, &a, &CollideOptions { margin: f64::NAN }),
        Err(CollideError::BadMargin { .. })
    ));
    let mut nan = Pose64::IDENTITY;
    nan.rows[0][3] = f64::INFINITY;
    assert!(matches!(
        BvCollisionObject::new(&m, &tree, nan),
        Err(CollideError::NonFinitePose { side: Side::A })
    ));
    let mut broken = tree.clone();
    let last = broken.nodes.len() - 1;
    broken.nodes[last].left = 1000;
    let b = BvCollisionObject {
        mesh: &m,
        tree: &broken,
        pose: Pose64::IDENTITY,
    };
    assert!(matches!(
        try_collide_all_bv(&a, &b, &CollideOptions::default()),
        Err(CollideError::FaceOutOfRange {
            side: Side::B,
            face: 1000
        })
    ));
    let mut dangling = tree.clone();
    dangling.nodes[0].right = 99;
    let b = BvCollisionObject {
        mesh: &m,
        tree: &dangling,
        pose: Pose64::IDENTITY,
    };
    assert!(matches!(
        try_collide_all_bv(&a, &b, &CollideOptions::default()),
        Err(CollideError::InvalidTree {
            side: Side::B,
            node: 99
        })
    ));
    let mut cyclic = tree.clone();
    cyclic.nodes[0].left = 0;
    let b = BvCollisionObject {
        mesh: &m,
        tree: &cyclic,
        pose: Pose64::IDENTITY,
    };
    assert!(try_collide_all_bv(&a, &b, &CollideOptions::default()).is_err());
}

/// Single-triangle models (a wide tree of one node with one used slot) and a pose that the
/// lane test cannot take (a scaled A: the binary trees' world-space comparison) give the
/// oracle's answer too.
#[test]
fn wide_trees_of_one_face_and_scaled_poses() {
    let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    let tree = WideObbTree::build(&tri).unwrap();
    assert_eq!(tree.nodes().len(), 1);
    for (x, touching) in [(0.5, true), (1.0, true), (1.0 + 1e-6, false), (3.0, false)] {
        // B: the triangle turned a quarter about y, its corner at (x, 0, 0).
        let pose = Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
            * Affine3A::from_rotation_y(-std::f32::consts::FRAC_PI_2);
        let (pa, pb) = (Pose64::IDENTITY, pose64(&pose));
        let want = oracle::brute_force_pairs(&tri, &pa, &tri, &pb);
        assert_eq!(!want.is_empty(), touching, "x = {x}");
        assert_eq!(wide_pairs(&tri, &pa, &tri, &pb, 0.0), want, "x = {x}");
        // A stretched along y (not a rotation: world-space comparison on the binary trees).
        let scaled = pose64(&Affine3A::from_scale(Vec3::new(1.0, 2.0, 1.0)));
        let want = oracle::brute_force_pairs(&tri, &scaled, &tri, &pb);
        assert_eq!(!want.is_empty(), touching, "x = {x}, scaled");
        assert_eq!(
            wide_pairs(&tri, &scaled, &tri, &pb, 0.0),
            want,
            "x = {x}, scaled"
        );
    }
}
