//! Front tracking: over random frame sequences (refit, same topology), the leaf pairs reported
//! from the front equal those of a full traversal, for two trees and for self traversal, and the
//! front-tracked self-collision equals the brute-force pairs; front-tracked collision of posed
//! meshes ([`TrackedCollision`]) equals the full query, and broken trees give typed errors.

#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use glam::{Affine3A, Quat, Vec3};
use gprox_bvh::{lbvh, refit::refit, refit::triangle_aabbs, Bvh};
use gprox_geometry::{transform::Pose64, tri_tri::triangles_intersect, TriMesh};
use gprox_query::collide::{
    try_collide_all, CollideError, CollideOptions, CollisionObject, Side, TrackedCollision,
};
use gprox_query::front::Front;
use gprox_query::self_collide::share_vertex;
use gprox_query::self_collide::traverse::{pair_leaves_by, self_leaves_by};
use proptest::prelude::*;

fn overlap<'a>(a: &'a Bvh, b: &'a Bvh) -> impl Fn(u32, u32) -> bool + 'a {
    move |i, j| a.nodes[i as usize].aabb.overlaps(&b.nodes[j as usize].aabb)
}

fn sorted(mut v: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    v.sort_unstable();
    v
}

/// A random point cloud triangulated as a soup of `n` small triangles that drift per frame.
fn frames_strategy() -> impl Strategy<Value = (Vec<[u32; 3]>, Vec<Vec<Vec3>>)> {
    (4usize..40, 2usize..6).prop_flat_map(|(n, frames)| {
        let verts = 3 * n;
        (
            prop::collection::vec([-8i32..=8, -8i32..=8, -8i32..=8], verts),
            prop::collection::vec(
                prop::collection::vec([-2i32..=2, -2i32..=2, -2i32..=2], verts),
                frames,
            ),
            prop::collection::vec([0usize..1000, 0usize..1000, 0usize..1000], n),
        )
            .prop_map(move |(base, moves, idx)| {
                // Faces share vertices sometimes (indices drawn from all vertices).
                let faces: Vec<[u32; 3]> = idx
                    .iter()
                    .enumerate()
                    .map(|(k, t)| [3 * k as u32, (t[1] % verts) as u32, (t[2] % verts) as u32])
                    .collect();
                let mut cur: Vec<Vec3> = base
                    .iter()
                    .map(|p| Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32) * 0.25)
                    .collect();
                let mut out = vec![cur.clone()];
                for m in moves {
                    for (p, d) in cur.iter_mut().zip(m) {
                        *p += Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32) * 0.25;
                    }
                    out.push(cur.clone());
                }
                (faces, out)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pair_front_equals_full_traversal(
        (fa, seq_a) in frames_strategy(),
        (fb, seq_b) in frames_strategy(),
    ) {
        let mut a = TriMesh::new(seq_a[0].clone(), fa).unwrap();
        let mut b = TriMesh::new(seq_b[0].clone(), fb).unwrap();
        let mut ta = lbvh::build(&a);
        let mut tb = lbvh::build(&b);
        let mut got = Vec::new();
        let mut front = Front::new_pair(&ta, &tb, overlap(&ta, &tb), |x, y| got.push((x, y)));
        let mut want = Vec::new();
        pair_leaves_by(&ta, &tb, overlap(&ta, &tb), |x, y| want.push((x, y)));
        prop_assert_eq!(sorted(got), sorted(want));
        for k in 1..seq_a.len().min(seq_b.len()) {
            a.set_positions(seq_a[k].clone()).unwrap();
            b.set_positions(seq_b[k].clone()).unwrap();
            refit(&mut ta, &triangle_aabbs(&a)).unwrap();
            refit(&mut tb, &triangle_aabbs(&b)).unwrap();
            let mut got = Vec::new();
            front.update(&ta, &tb, overlap(&ta, &tb), |x, y| got.push((x, y)));
            let mut want = Vec::new();
            pair_leaves_by(&ta, &tb, overlap(&ta, &tb), |x, y| want.push((x, y)));
            prop_assert_eq!(sorted(got), sorted(want), "frame {}", k);
        }
    }

    #[test]
    fn self_front_equals_full_traversal_and_brute_force((faces, seq) in frames_strategy()) {
        let mut mesh = TriMesh::new(seq[0].clone(), faces).unwrap();
        let mut bvh = lbvh::build(&mesh);
        let mut front = Front::new_self(&bvh, overlap(&bvh, &bvh), |_, _| {});
        for (k, pos) in seq.iter().enumerate().skip(1) {
            mesh.set_positions(pos.clone()).unwrap();
            refit(&mut bvh, &triangle_aabbs(&mesh)).unwrap();
            let norm = |x: u32, y: u32| (x.min(y), x.max(y));
            let mut got = Vec::new();
            front.update_self(&bvh, overlap(&bvh, &bvh), |x, y| got.push(norm(x, y)));
            let mut want = Vec::new();
            self_leaves_by(&bvh, overlap(&bvh, &bvh), |_, _, _| false, |x, y| want.push(norm(x, y)));
            let got = sorted(got);
            prop_assert_eq!(&got, &sorted(want), "frame {}", k);
            // Exact tests on the front-tracked candidates == brute-force self pairs.
            let f = mesh.faces();
            let tri = |i: u32| f[i as usize].map(|v| mesh.positions()[v as usize].as_dvec3());
            let mut pairs: Vec<[u32; 2]> = got
                .iter()
                .filter(|&&(x, y)| !share_vertex(&f[x as usize], &f[y as usize]))
                .filter(|&&(x, y)| triangles_intersect(&tri(x), &tri(y)))
                .map(|&(x, y)| [x, y])
                .collect();
            pairs.sort_unstable();
            prop_assert_eq!(pairs, oracle::brute_force_self_pairs(&mesh), "frame {}", k);
        }
    }
}

/// A pose from small integers: a rotation about a random axis and a translation.
fn pose_strategy() -> impl Strategy<Value = Pose64> {
    (
        [-3i32..=3, -3i32..=3, -3i32..=3],
        -6i32..=6,
        [-4i32..=4, -4i32..=4, -4i32..=4],
    )
        .prop_map(|(axis, angle, t)| {
            let axis = Vec3::new(axis[0] as f32, axis[1] as f32, axis[2] as f32 + 0.5).normalize();
            let t = Vec3::new(t[0] as f32, t[1] as f32, t[2] as f32) * 0.25;
            let a = Affine3A::from_rotation_translation(
                Quat::from_axis_angle(axis, angle as f32 * 0.3),
                t,
            );
            Pose64::from_affine(&a)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Front tracking on deforming meshes under changing poses: every frame's pairs equal the
    /// full query's, with and without a margin, and the two stages compose to the same result.
    #[test]
    fn tracked_collision_equals_full_query(
        (fa, seq_a) in frames_strategy(),
        (fb, seq_b) in frames_strategy(),
        poses in prop::collection::vec((pose_strategy(), pose_strategy()), 6),
        margin in prop::sample::select(vec![0.0, 0.1]),
    ) {
        let mut a = TriMesh::new(seq_a[0].clone(), fa).unwrap();
        let mut b = TriMesh::new(seq_b[0].clone(), fb).unwrap();
        let (mut ta, mut tb) = (lbvh::build(&a), lbvh::build(&b));
        let opts = CollideOptions { margin };
        let mut tracked = TrackedCollision::new();
        for k in 0..seq_a.len().min(seq_b.len()) {
            a.set_positions(seq_a[k].clone()).unwrap();
            b.set_positions(seq_b[k].clone()).unwrap();
            refit(&mut ta, &triangle_aabbs(&a)).unwrap();
            refit(&mut tb, &triangle_aabbs(&b)).unwrap();
            let (pa, pb) = poses[k % poses.len()];
            let oa = CollisionObject::new(&a, &ta, pa).unwrap();
            let ob = CollisionObject::new(&b, &tb, pb).unwrap();
            let want = try_collide_all(&oa, &ob, &opts).unwrap();
            prop_assert_eq!(tracked.collide_all(&oa, &ob, &opts).unwrap(), want, "frame {}", k);
            prop_assert!(tracked.front_len() > 0);
        }
        // A rebuilt tree (other topology) restarts from the roots.
        let tb2 = lbvh::build_from_aabbs(&triangle_aabbs(&b).into_iter().rev().collect::<Vec<_>>());
        let b_rev = TriMesh::new(
            b.positions().to_vec(),
            b.faces().iter().rev().copied().collect(),
        ).unwrap();
        let (pa, pb) = poses[0];
        let oa = CollisionObject::new(&a, &ta, pa).unwrap();
        let ob = CollisionObject::new(&b_rev, &tb2, pb).unwrap();
        prop_assert_eq!(
            tracked.collide_all(&oa, &ob, &opts).unwrap(),
            try_collide_all(&oa, &ob, &opts).unwrap()
        );
    }
}

/// A tree whose links are broken gives a typed error, never a panic or a hang.
#[test]
fn tracked_collision_rejects_broken_trees() {
    let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
    let mesh = TriMesh::new(p, vec![[0, 1, 2], [0, 1, 3], [0, 2, 3]]).unwrap();
    let good = lbvh::build(&mesh);
    let opts = CollideOptions::default();
    let breakages: [fn(&mut Bvh); 4] = [
        |t| t.nodes[0].left = 0,
        |t| t.nodes[0].right = t.nodes[0].left,
        |t| t.parents[1] = 3,
        |t| {
            let last = t.nodes.len() - 1;
            t.nodes[last].left = 7;
        },
    ];
    for (k, brk) in breakages.iter().enumerate() {
        let mut bad = good.clone();
        brk(&mut bad);
        let oa = CollisionObject::new(&mesh, &good, Pose64::IDENTITY).unwrap();
        let ob = CollisionObject::new(&mesh, &bad, Pose64::IDENTITY).unwrap();
        let err = TrackedCollision::new().collide_all(&oa, &ob, &opts);
        assert!(
            matches!(
                err,
                Err(CollideError::InvalidTree { side: Side::B, .. })
                    | Err(CollideError::FaceOutOfRange { side: Side::B, .. })
            ),
            "breakage {k}: {err:?}"
        );
    }
}
