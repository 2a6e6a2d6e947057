//! collide_all / collide_any against the exact rational brute-force oracle.

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use gen::{any_pose, float_mesh, grid_mesh, grid_pose, pose64, random_pose};
use gprox_bvh::{lbvh, Bvh};
use gprox_geometry::glam::{Affine3A, DVec3, Mat3, Vec3};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::TriMesh;
use gprox_query::collide::{
    collide_all, collide_any, try_collide_all, try_collide_any_near, try_collide_any_witness,
    CollideError, CollideOptions, CollisionObject, Side, Witness,
};
use proptest::prelude::*;

fn check_against_oracle(ma: &TriMesh, pa: &Pose64, mb: &TriMesh, pb: &Pose64) {
    let (ba, bb) = (lbvh::build(ma), lbvh::build(mb));
    let a = CollisionObject::new(ma, &ba, *pa).unwrap();
    let b = CollisionObject::new(mb, &bb, *pb).unwrap();
    let got = collide_all(&a, &b, &CollideOptions::default());
    let want = oracle::brute_force_pairs(ma, pa, mb, pb);
    assert_eq!(got, want);
    assert_eq!(
        collide_any(&a, &b, &CollideOptions::default()),
        !want.is_empty()
    );
    check_witness(&a, &b, &CollideOptions::default(), &want);
}

/// The early-out query's witness against the full pair set `want`, with and without hints: a
/// pair exactly when `want` has one and always one of `want`; a hint that touches is returned
/// as is; stale, non-touching and out-of-range hints change nothing but which pair.
fn check_witness(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
    want: &[[u32; 2]],
) {
    let last = [
        a.mesh.face_count() as u32 - 1,
        b.mesh.face_count() as u32 - 1,
    ];
    let mut hints = vec![
        None,
        Some([0, 0]),
        Some(last),
        Some([u32::MAX, 0]),
        Some([0, last[1] + 1]),
    ];
    hints.extend(want.first().map(|&w| Some(w)));
    hints.extend(want.last().map(|&w| Some(w)));
    for hint in hints {
        let got = try_collide_any_witness(a, b, opts, hint).unwrap();
        assert_eq!(got.is_some(), !want.is_empty(), "hint {hint:?}");
        if let Some(w) = got {
            assert!(
                want.binary_search(&w).is_ok(),
                "witness {w:?} not a touching pair"
            );
        }
        if let Some(h) = hint.filter(|h| want.binary_search(h).is_ok()) {
            assert_eq!(got, Some(h), "a touching hint is the answer");
        }
    }
    check_near(a, b, opts, want);
}

/// The leaf of `bvh` holding `face`.
fn leaf_of(bvh: &Bvh, face: u32) -> u32 {
    let first = bvh.first_leaf();
    (first..bvh.nodes.len())
        .find(|&k| bvh.nodes[k].left == face)
        .unwrap() as u32
}

/// [`try_collide_any_near`] against `want` with witnesses whose leaves are right, wrong, out of
/// range or absent: a pair exactly when `want` has one, always one of `want`, its leaves
/// holding its faces whenever they are reported.
fn check_near(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
    want: &[[u32; 2]],
) {
    let found = try_collide_any_near(a, b, opts, None).unwrap();
    let (na, nb) = (a.bvh.nodes.len() as u32, b.bvh.nodes.len() as u32);
    let holds = |bvh: &Bvh, leaf: u32, face: u32| {
        let n = &bvh.nodes[leaf as usize];
        n.is_leaf() && n.left == face
    };
    let mut hints = vec![
        None,
        found,
        Some(Witness::of_faces([0, 0])),
        Some(Witness {
            faces: [0, 0],
            leaves: [leaf_of(a.bvh, 0), leaf_of(b.bvh, 0)],
        }),
        Some(Witness {
            faces: [0, 0],
            leaves: [na - 1, nb - 1],
        }),
        Some(Witness {
            faces: [0, 0],
            leaves: [0, u32::MAX],
        }),
        Some(Witness {
            faces: [u32::MAX, 0],
            leaves: [na, 0],
        }),
    ];
    hints.extend(want.last().map(|&[fa, fb]| {
        Some(Witness {
            faces: [fa, fb],
            leaves: [leaf_of(a.bvh, fa), leaf_of(b.bvh, fb)],
        })
    }));
    for hint in hints {
        let got =
            try_collide_any_near(a, b, opts, hint).unwrap_or_else(|e| panic!("{hint:?}: {e:?}"));
        assert_eq!(got.is_some(), !want.is_empty(), "hint {hint:?}");
        let Some(w) = got else { continue };
        assert!(want.binary_search(&w.faces).is_ok(), "{w:?} does not touch");
        if w.leaves != Witness::NO_LEAVES && Some(w) != hint {
            assert!(holds(a.bvh, w.leaves[0], w.faces[0]), "{w:?}");
            assert!(holds(b.bvh, w.leaves[1], w.faces[1]), "{w:?}");
        }
    }
}

/// An axis-aligned rotation times an integer scale (1..=3) per axis with an integer
/// translation: not a rotation, so the world-space comparison path is used; exact on the grid.
fn scaled_pose() -> impl Strategy<Value = Affine3A> {
    (grid_pose(1), [1i32..=3, 1i32..=3, 1i32..=3]).prop_map(|(p, [x, y, z])| {
        let s = Mat3::from_diagonal(Vec3::new(x as f32, y as f32, z as f32));
        Affine3A::from_mat3_translation(Mat3::from(p.matrix3) * s, p.translation.into())
    })
}

/// Like `gen::mesh_pair_case` with fewer faces (the rational oracle is slow): mostly grid meshes
/// under grid poses (exact contacts), sometimes generic float meshes under random poses.
fn mesh_pair_case() -> impl Strategy<Value = (TriMesh, Affine3A, TriMesh, Affine3A)> {
    prop_oneof![
        3 => (grid_mesh(7, 8, 2), grid_pose(1), grid_mesh(7, 8, 2), grid_pose(1)),
        1 => (grid_mesh(6, 5, 2), any_pose(), grid_mesh(6, 5, 2), any_pose()),
        1 => (float_mesh(6, 5), random_pose(0.5), float_mesh(6, 5), random_pose(0.5)),
    ]
}

fn world(mesh: &TriMesh, pose: &Pose64) -> Vec<[DVec3; 3]> {
    (0..mesh.face_count())
        .map(|i| transform_triangle(pose, mesh.triangle(i)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (b): exact set equality with the oracle on small meshes, mostly grid-snapped with grid
    /// poses (touching, coplanar, vertex-on-face contacts), sometimes generic.
    #[test]
    fn collide_all_equals_oracle((ma, pa, mb, pb) in mesh_pair_case()) {
        check_against_oracle(&ma, &pose64(&pa), &mb, &pose64(&pb));
    }

    /// A mesh against a copy of itself moved by a grid pose: shared faces, coplanar overlaps,
    /// edges on edges.
    #[test]
    fn copies_touching_equal_oracle(m in grid_mesh(7, 8, 2), p in grid_pose(1), same in any::<bool>()) {
        let pb = if same { Pose64::IDENTITY } else { pose64(&p) };
        check_against_oracle(&m, &Pose64::IDENTITY, &m, &pb);
    }

    /// Non-rigid (scaled) poses go through the world-space box comparison.
    #[test]
    fn scaled_poses_equal_oracle(ma in grid_mesh(7, 8, 2), pa in prop_oneof![scaled_pose(), grid_pose(1)],
                                 mb in grid_mesh(7, 8, 2), pb in scaled_pose()) {
        check_against_oracle(&ma, &pose64(&pa), &mb, &pose64(&pb));
    }

    /// With a margin: every pair whose distance is within it, compared with all pairs.
    #[test]
    fn margin_pairs_equal_brute_force((ma, pa, mb, pb) in mesh_pair_case(), margin in prop_oneof![Just(0.5), 0.0f64..0.8]) {
        let (pa, pb) = (pose64(&pa), pose64(&pb));
        let (ba, bb) = (lbvh::build(&ma), lbvh::build(&mb));
        let a = CollisionObject::new(&ma, &ba, pa).unwrap();
        let b = CollisionObject::new(&mb, &bb, pb).unwrap();
        let opts = CollideOptions { margin };
        let got = collide_all(&a, &b, &opts);
        let (ta, tb) = (world(&ma, &pa), world(&mb, &pb));
        let mut want = Vec::new();
        for (i, x) in ta.iter().enumerate() {
            for (j, y) in tb.iter().enumerate() {
                let hit = if margin == 0.0 {
                    oracle::triangles_intersect_exact(x, y)
                } else {
                    triangle_distance(x, y).distance <= margin
                };
                if hit {
                    want.push([i as u32, j as u32]);
                }
            }
        }
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(collide_any(&a, &b, &opts), !want.is_empty());
        check_witness(&a, &b, &opts, &want);
    }
}

/// A bumpy grid sheet of `m * m * 2` triangles.
fn sheet(m: usize, phase: f32) -> TriMesh {
    let mut pos = Vec::new();
    for i in 0..=m {
        for j in 0..=m {
            let (u, v) = (i as f32 / m as f32, j as f32 / m as f32);
            pos.push(Vec3::new(
                u,
                v,
                0.05 * (u * 11.0 + phase).sin() * (v * 7.0).cos(),
            ));
        }
    }
    let mut faces = Vec::new();
    for i in 0..m {
        for j in 0..m {
            let a = (i * (m + 1) + j) as u32;
            let c = a + (m + 1) as u32;
            faces.push([a, a + 1, c + 1]);
            faces.push([a, c + 1, c]);
        }
    }
    TriMesh::new(pos, faces).unwrap()
}

/// Every pair of `ta` x `tb` whose f64 boxes overlap and whose triangles intersect (exact test),
/// found through a uniform grid over x and y — an independent broad phase for big meshes.
fn grid_brute_force(ta: &[[DVec3; 3]], tb: &[[DVec3; 3]]) -> Vec<[u32; 2]> {
    let cells = 128usize;
    let bounds = |t: &[DVec3; 3]| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
    let all = ta.iter().chain(tb).map(bounds);
    let (lo, hi) = all.fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(l, h), (a, b)| {
        (l.min(a), h.max(b))
    });
    let cell = |v: f64, axis: usize| {
        let x = (v - lo[axis]) / (hi[axis] - lo[axis]) * cells as f64;
        (x.max(0.0) as usize).min(cells - 1)
    };
    let mut grid = vec![Vec::new(); cells * cells];
    for (j, t) in tb.iter().enumerate() {
        let (l, h) = bounds(t);
        for x in cell(l.x, 0)..=cell(h.x, 0) {
            for y in cell(l.y, 1)..=cell(h.y, 1) {
                grid[x * cells + y].push(j);
            }
        }
    }
    let mut out = Vec::new();
    for (i, t) in ta.iter().enumerate() {
        let (l, h) = bounds(t);
        let mut cand = Vec::new();
        for x in cell(l.x, 0)..=cell(h.x, 0) {
            for y in cell(l.y, 1)..=cell(h.y, 1) {
                cand.extend_from_slice(&grid[x * cells + y]);
            }
        }
        cand.sort_unstable();
        cand.dedup();
        for j in cand {
            if gprox_geometry::tri_tri::triangles_intersect(t, &tb[j]) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn parallel_equals_single_thread_and_brute_force() {
    // Big enough (2 x 28,800 faces) for the parallel split of the traversal.
    let (ma, mb) = (sheet(120, 0.0), sheet(120, 1.3));
    let (ba, bb) = (lbvh::build(&ma), lbvh::build(&mb));
    let pb = Pose64::from_affine(&Affine3A::from_rotation_translation(
        gprox_geometry::glam::Quat::from_rotation_z(0.3),
        Vec3::new(0.1, -0.05, 0.0),
    ));
    let a = CollisionObject::new(&ma, &ba, Pose64::IDENTITY).unwrap();
    let b = CollisionObject::new(&mb, &bb, pb).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            (
                collide_all(&a, &b, &CollideOptions::default()),
                collide_any(&a, &b, &CollideOptions::default()),
            )
        })
    };
    let (one, any1) = run(1);
    let (two, any2) = run(2);
    let (four, _) = run(4);
    // The exact test itself is checked against the rational oracle in the proptests above.
    let want = grid_brute_force(&world(&ma, &a.pose), &world(&mb, &b.pose));
    assert!(!want.is_empty());
    assert_eq!(one, want);
    assert_eq!(two, want);
    assert_eq!(four, want);
    assert!(any1 && any2);
}

/// The node `levels` above `node`.
fn ancestor(bvh: &Bvh, mut node: u32, levels: usize) -> u32 {
    for _ in 0..levels {
        if node == 0 {
            break;
        }
        node = bvh.parents[node as usize];
    }
    node
}

/// Whether `leaf` lies below `node`.
fn below(bvh: &Bvh, mut leaf: u32, node: u32) -> bool {
    loop {
        if leaf == node {
            return true;
        }
        if leaf == 0 {
            return false;
        }
        leaf = bvh.parents[leaf as usize];
    }
}

/// Frame after frame of two crossing sheets sliding past each other, each query given the last
/// frame's witness: the answer equals the brute force's, and whenever the subtree pair six
/// levels above the last witness's leaves holds a touching pair, the new witness comes from
/// there (the neighbourhood is searched first) — which happens in most frames.
#[test]
fn near_witness_follows_a_sliding_contact() {
    let (ma, mb) = (sheet(40, 0.0), sheet(40, 1.3));
    let (ba, bb) = (lbvh::build(&ma), lbvh::build(&mb));
    let a = CollisionObject::new(&ma, &ba, Pose64::IDENTITY).unwrap();
    let opts = CollideOptions::default();
    let (mut last, mut near_frames) = (None::<Witness>, 0);
    for k in 0..24 {
        let pb = Pose64::from_affine(&Affine3A::from_rotation_translation(
            gprox_geometry::glam::Quat::from_rotation_z(0.3 + 0.01 * k as f32),
            Vec3::new(0.1 + 0.02 * k as f32, -0.05, 0.0),
        ));
        let b = CollisionObject::new(&mb, &bb, pb).unwrap();
        let want = grid_brute_force(&world(&ma, &a.pose), &world(&mb, &pb));
        let got = try_collide_any_near(&a, &b, &opts, last).unwrap();
        assert_eq!(got.is_some(), !want.is_empty(), "frame {k}");
        if let (Some(w), Some(l)) = (got, last) {
            assert!(want.binary_search(&w.faces).is_ok(), "frame {k}");
            let start = [ancestor(&ba, l.leaves[0], 6), ancestor(&bb, l.leaves[1], 6)];
            let inside = |f: [u32; 2]| {
                below(&ba, leaf_of(&ba, f[0]), start[0]) && below(&bb, leaf_of(&bb, f[1]), start[1])
            };
            if want.binary_search(&l.faces).is_err() && want.iter().any(|&f| inside(f)) {
                assert!(
                    inside(w.faces),
                    "frame {k}: {w:?} found outside the neighbourhood"
                );
                near_frames += 1;
            }
        }
        last = got;
    }
    assert!(
        near_frames >= 8,
        "the neighbourhood held a pair in {near_frames} frames only"
    );
}

#[test]
fn typed_errors_on_bad_input() {
    let m = sheet(2, 0.0);
    let bvh = lbvh::build(&m);
    let other = lbvh::build(&sheet(3, 0.0));
    assert!(matches!(
        CollisionObject::new(&m, &other, Pose64::IDENTITY),
        Err(CollideError::BvhMismatch { side: Side::A, .. })
    ));
    let a = CollisionObject::new(&m, &bvh, Pose64::IDENTITY).unwrap();
    let bad = CollisionObject {
        mesh: &m,
        bvh: &other,
        pose: Pose64::IDENTITY,
    };
    assert!(matches!(
        try_collide_all(&a, &bad, &CollideOptions::default()),
        Err(CollideError::BvhMismatch { side: Side::B, .. })
    ));
    assert!(matches!(
        try_collide_all(&a, &a, &CollideOptions { margin: -1.0 }),
        Err(CollideError::BadMargin { .. })
    ));
    let mut nan = Pose64::IDENTITY;
    nan.rows[1][3] = f64::NAN;
    assert!(matches!(
        CollisionObject::new(&m, &bvh, nan),
        Err(CollideError::NonFinitePose { .. })
    ));
    // A tree whose leaf points past the faces, and one with a cycle.
    let mut broken: Bvh = bvh.clone();
    let last = broken.nodes.len() - 1;
    broken.nodes[last].left = 1000;
    let b = CollisionObject {
        mesh: &m,
        bvh: &broken,
        pose: Pose64::IDENTITY,
    };
    assert!(matches!(
        try_collide_all(&a, &b, &CollideOptions::default()),
        Err(CollideError::FaceOutOfRange {
            side: Side::B,
            face: 1000
        })
    ));
    let mut cyclic: Bvh = bvh.clone();
    cyclic.nodes[0].left = 0;
    let b = CollisionObject {
        mesh: &m,
        bvh: &cyclic,
        pose: Pose64::IDENTITY,
    };
    assert!(try_collide_all(&a, &b, &CollideOptions::default()).is_err());
}
