//! Many-body collision (`broad_phase`) against brute force over all object pairs, the exact
//! rational oracle, and the reference counts of the `nbody-spheres` benchmark scene.

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use gen::{float_mesh, grid_mesh, grid_pose, pose64, random_pose};
use gprox_bvh::{lbvh, Bvh};
use gprox_geometry::glam::{Affine3A, Vec3};
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::TriMesh;
use gprox_query::broad_phase::{
    broad_phase_pairs, collide_many, collide_many_any, sweep_and_prune, try_collide_many,
    try_collide_many_shaped, world_aabb, world_sphere, BroadPhaseError, ShapedObject, TreeShape,
    WorldAabb,
};
use gprox_query::collide::{collide_all, CollideError, CollideOptions, CollisionObject, Side};
use proptest::prelude::*;

/// Brute force: `collide_all` on every object pair, keeping the non-empty ones.
fn brute_force(
    objects: &[CollisionObject<'_>],
    opts: &CollideOptions,
) -> Vec<([u32; 2], Vec<[u32; 2]>)> {
    let mut out = Vec::new();
    for i in 0..objects.len() {
        for j in i + 1..objects.len() {
            let pairs = collide_all(&objects[i], &objects[j], opts);
            if !pairs.is_empty() {
                out.push(([i as u32, j as u32], pairs));
            }
        }
    }
    out
}

/// Checks collide_many / collide_many_any / broad_phase_pairs on one configuration against brute
/// force and, with margin 0, against the exact rational oracle.
fn check(meshes: &[TriMesh], poses: &[Pose64], margin: f64) -> Result<(), TestCaseError> {
    check_with(meshes, poses, margin, true)
}

/// [`check`], with the rational oracle only when `rational` (it tests every triangle pair).
fn check_with(
    meshes: &[TriMesh],
    poses: &[Pose64],
    margin: f64,
    rational: bool,
) -> Result<(), TestCaseError> {
    let bvhs: Vec<Bvh> = meshes.iter().map(lbvh::build).collect();
    let objects: Vec<CollisionObject<'_>> = meshes
        .iter()
        .zip(&bvhs)
        .zip(poses)
        .map(|((m, b), p)| CollisionObject::new(m, b, *p).unwrap())
        .collect();
    let opts = CollideOptions { margin };
    let want = brute_force(&objects, &opts);
    let got = collide_many(&objects, &opts);
    let got_list: Vec<([u32; 2], Vec<[u32; 2]>)> = got
        .object_pairs
        .iter()
        .map(|c| ([c.a, c.b], c.pairs.clone()))
        .collect();
    prop_assert_eq!(&got_list, &want);
    prop_assert_eq!(got.total, want.iter().map(|w| w.1.len()).sum::<usize>());
    // Kept tree shapes give the same answer: each tree's own, and a foreign one (the tree of
    // the mesh mirrored through the origin: other boxes, so mostly other links, same faces).
    let own: Vec<TreeShape> = meshes
        .iter()
        .zip(&bvhs)
        .map(|(m, b)| TreeShape::new(b, m).unwrap())
        .collect();
    let foreign: Vec<TreeShape> = meshes
        .iter()
        .map(|m| {
            let mirrored = m.positions().iter().map(|&p| -p).collect();
            let m2 = TriMesh::new(mirrored, m.faces().to_vec()).unwrap();
            TreeShape::new(&lbvh::build(&m2), &m2).unwrap()
        })
        .collect();
    for shapes in [&own, &foreign] {
        let shaped: Vec<ShapedObject<'_>> = objects
            .iter()
            .zip(shapes)
            .map(|(&object, shape)| ShapedObject { object, shape })
            .collect();
        prop_assert_eq!(&try_collide_many_shaped(&shaped, &opts).unwrap(), &got);
    }
    let touching: Vec<[u32; 2]> = want.iter().map(|w| w.0).collect();
    prop_assert_eq!(collide_many_any(&objects, &opts), touching.clone());
    let candidates = broad_phase_pairs(&objects, &opts).unwrap();
    prop_assert!(candidates.windows(2).all(|w| w[0] < w[1]), "not sorted");
    prop_assert!(candidates.iter().all(|p| p[0] < p[1]));
    for t in &touching {
        prop_assert!(
            candidates.binary_search(t).is_ok(),
            "candidate {:?} missing",
            t
        );
    }
    if margin == 0.0 && rational {
        // Independent of collide_all: every object pair the rational oracle finds in contact.
        for i in 0..meshes.len() {
            for j in i + 1..meshes.len() {
                let exact = oracle::brute_force_pairs(&meshes[i], &poses[i], &meshes[j], &poses[j]);
                let pair = [i as u32, j as u32];
                prop_assert_eq!(touching.binary_search(&pair).is_ok(), !exact.is_empty());
                if !exact.is_empty() {
                    prop_assert!(candidates.binary_search(&pair).is_ok());
                }
            }
        }
    }
    Ok(())
}

/// 2..=6 small grid meshes under axis-aligned rotations with integer translations: boxes and
/// triangles touch exactly (shared faces, edges, corners) or are disjoint by whole units.
fn grid_scene() -> impl Strategy<Value = Vec<(TriMesh, Affine3A)>> {
    prop::collection::vec((grid_mesh(6, 6, 1), grid_pose(2)), 2..=6)
}

/// Generic float meshes under arbitrary rotations and translations.
fn float_scene() -> impl Strategy<Value = Vec<(TriMesh, Affine3A)>> {
    prop::collection::vec((float_mesh(6, 6), random_pose(1.5)), 2..=6)
}

/// A height field over an `n × n` grid of unit cells centred on the origin, two triangles a
/// cell, the height of vertex `i` being `heights[i]` (times `scale`): large bodies (`n = 24`: 1,058 faces) that
/// overlap other bodies in part only, so the narrow phase refits only their near parts.
fn terrain(n: usize, heights: &[f32], scale: f32) -> TriMesh {
    let positions = (0..n * n)
        .map(|i| {
            let half = (n / 2) as f32;
            Vec3::new(
                (i % n) as f32 - half,
                (i / n) as f32 - half,
                heights[i] * scale,
            )
        })
        .collect();
    let mut faces = Vec::new();
    for y in 0..n - 1 {
        for x in 0..n - 1 {
            let v = (y * n + x) as u32;
            let n = n as u32;
            faces.push([v, v + 1, v + n + 1]);
            faces.push([v, v + n + 1, v + n]);
        }
    }
    TriMesh::new(positions, faces).expect("terrain is valid")
}

/// 2..=3 terrains of 24 × 24 vertices under a pose each.
fn terrain_scene(
    heights: impl Strategy<Value = f32>,
    scale: f32,
    pose: impl Strategy<Value = Affine3A>,
) -> impl Strategy<Value = Vec<(TriMesh, Affine3A)>> {
    const N: usize = 24;
    let body = (prop::collection::vec(heights, N * N), pose)
        .prop_map(move |(h, pose)| (terrain(N, &h, scale), pose));
    prop::collection::vec(body, 2..=3)
}

fn split(scene: Vec<(TriMesh, Affine3A)>) -> (Vec<TriMesh>, Vec<Pose64>) {
    scene.into_iter().map(|(m, p)| (m, pose64(&p))).unzip()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Large bodies in part over each other, on the integer grid (exact touching at the edge of
    /// the near region, translations up to 8 units against bodies 23 units wide) and in
    /// general position, with margins: the narrow phase refits each body only where the others'
    /// boxes reach, and finds the pairs the pair query finds (also through a foreign tree
    /// shape, where it refits everything).
    #[test]
    fn large_bodies_in_part_over_each_other_match_brute_force(
        scene in prop_oneof![
            terrain_scene((0i8..=1).prop_map(f32::from), 1.0, grid_pose(8)),
            terrain_scene(-1.0f32..1.0, 0.5, random_pose(8.0)),
        ],
        margin in prop_oneof![Just(0.0), Just(0.5), Just(1.0)],
    ) {
        let (meshes, poses) = split(scene);
        check_with(&meshes, &poses, margin, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Exact touching configurations: collide_many == brute force == rational oracle.
    #[test]
    fn grid_scenes_match_brute_force(scene in grid_scene()) {
        let (meshes, poses) = split(scene);
        check(&meshes, &poses, 0.0)?;
    }

    /// The same configurations far from the origin, where the world coordinates are not f32
    /// numbers (the narrow phase's f32 boxes must still hold every world triangle), with and
    /// without a margin (a margin of 1 meets the whole-unit gaps exactly).
    #[test]
    fn far_grid_scenes_match_brute_force(
        scene in grid_scene(),
        off in [-60_000_000i64..60_000_000, -60_000_000..60_000_000, -60_000_000..60_000_000],
        margin in prop_oneof![Just(0.0), Just(0.25), Just(1.0)],
    ) {
        let (meshes, mut poses) = split(scene);
        // Multiples of 1/16 up to ~4e6: every world coordinate stays exact in f64.
        for p in &mut poses {
            for (row, o) in p.rows.iter_mut().zip(off) {
                row[3] += o as f64 / 16.0;
            }
        }
        check(&meshes, &poses, margin)?;
    }

    /// Generic configurations, with and without a contact margin.
    #[test]
    fn float_scenes_match_brute_force(
        scene in float_scene(),
        margin in prop_oneof![Just(0.0), Just(0.05), Just(0.3)],
    ) {
        let (meshes, poses) = split(scene);
        check(&meshes, &poses, margin)?;
    }

    /// Soundness of the world boxes and balls: every world corner the narrow phase computes
    /// (`transform_point`) lies in the object's box, also far from the origin (rounding grows
    /// with the translation), and the margin grows the box by at least half the margin.
    #[test]
    fn world_box_holds_every_world_corner(
        mesh in float_mesh(12, 4),
        pose in prop_oneof![random_pose(1.0), grid_pose(1)],
        shift in prop_oneof![Just(0.0f32), Just(1e3), Just(-3e5)],
        margin in prop_oneof![Just(0.0), Just(0.25)],
    ) {
        let mut pose = pose;
        pose.translation += gprox_geometry::glam::Vec3A::splat(shift);
        let bvh = lbvh::build(&mesh);
        let object = CollisionObject::new(&mesh, &bvh, pose64(&pose)).unwrap();
        let b = world_aabb(&object, 0, margin).unwrap();
        let s = world_sphere(&object, 0, margin).unwrap();
        // Corners of faces (the BVH covers faces; unused vertices are not part of the surface).
        for v in mesh.faces().iter().flatten() {
            let w = transform_point(&object.pose, mesh.positions()[*v as usize]).to_array();
            for (k, x) in w.iter().enumerate() {
                prop_assert!(b.min[k] + 0.5 * margin <= *x && *x <= b.max[k] - 0.5 * margin);
            }
            let d = (0..3).map(|k| (w[k] - s.centre[k]).powi(2)).sum::<f64>().sqrt();
            prop_assert!(d + 0.5 * margin <= s.radius, "corner {:?} outside the ball {:?}", w, s);
        }
    }

    /// Sweep and prune == all-pairs box test, on boxes with many exact ties.
    #[test]
    fn sweep_matches_all_pairs(
        boxes in prop::collection::vec(([-4i32..4, -4i32..4, -4i32..4], [0i32..3, 0i32..3, 0i32..3]), 0..40)
    ) {
        let boxes: Vec<WorldAabb> = boxes
            .iter()
            .map(|(lo, ext)| WorldAabb {
                min: lo.map(f64::from),
                max: [0, 1, 2].map(|k| f64::from(lo[k] + ext[k])),
            })
            .collect();
        let mut want = Vec::new();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if (0..3).all(|k| boxes[i].min[k] <= boxes[j].max[k] && boxes[j].min[k] <= boxes[i].max[k]) {
                    want.push([i as u32, j as u32]);
                }
            }
        }
        prop_assert_eq!(sweep_and_prune(&boxes), want);
    }
}

#[test]
fn bad_input_names_the_object() {
    let tri = TriMesh::new(
        vec![
            gprox_geometry::glam::Vec3::ZERO,
            gprox_geometry::glam::Vec3::X,
            gprox_geometry::glam::Vec3::Y,
        ],
        vec![[0, 1, 2]],
    )
    .unwrap();
    let two = TriMesh::new(tri.positions().to_vec(), vec![[0, 1, 2], [0, 2, 1]]).unwrap();
    let bvh = lbvh::build(&tri);
    let ok = CollisionObject {
        mesh: &tri,
        bvh: &bvh,
        pose: Pose64::IDENTITY,
    };
    let mismatched = CollisionObject {
        mesh: &two,
        bvh: &bvh,
        pose: Pose64::IDENTITY,
    };
    let opts = CollideOptions::default();
    assert!(matches!(
        try_collide_many(&[ok, ok, mismatched], &opts),
        Err(BroadPhaseError::BvhMismatch { object: 2, .. })
    ));
    let mut nan = ok;
    nan.pose.rows[1][3] = f64::NAN;
    assert!(matches!(
        try_collide_many(&[ok, nan], &opts),
        Err(BroadPhaseError::NonFinitePose { object: 1 })
    ));
    assert!(matches!(
        try_collide_many(&[ok, ok], &CollideOptions { margin: -1.0 }),
        Err(BroadPhaseError::BadMargin { .. })
    ));
    // A corrupt tree in a candidate pair: the narrow phase names the pair and the node.
    let bvh_two = lbvh::build(&two);
    let mut corrupt = bvh_two.clone();
    corrupt.nodes[0].right = 7;
    let bad = CollisionObject {
        mesh: &two,
        bvh: &corrupt,
        pose: Pose64::IDENTITY,
    };
    assert_eq!(
        try_collide_many(&[ok, bad], &opts),
        Err(BroadPhaseError::Narrow {
            a: 0,
            b: 1,
            source: CollideError::InvalidTree {
                side: Side::A,
                node: 7
            }
        })
    );
    // A kept shape over another face count: named like a tree that does not fit its mesh.
    let shape_one = TreeShape::new(&bvh, &tri).unwrap();
    let shaped = |object| ShapedObject {
        object,
        shape: &shape_one,
    };
    let two_ok = CollisionObject::new(&two, &bvh_two, Pose64::IDENTITY).unwrap();
    assert_eq!(
        try_collide_many_shaped(&[shaped(ok), shaped(two_ok)], &opts),
        Err(BroadPhaseError::Narrow {
            a: 0,
            b: 1,
            source: CollideError::BvhMismatch {
                side: Side::A,
                nodes: 1,
                faces: 2
            }
        })
    );
    assert_eq!(
        TreeShape::new(&corrupt, &two),
        Err(CollideError::InvalidTree {
            side: Side::A,
            node: 7
        })
    );
    // Two leaves naming one face (the other face under none): refused, not a missed contact.
    let mut twice = bvh_two.clone();
    let face = twice.nodes[1].left;
    twice.nodes[2].left = face;
    let dup = CollideError::DuplicateFace {
        side: Side::A,
        face,
    };
    assert_eq!(TreeShape::new(&twice, &two), Err(dup.clone()));
    let bad = CollisionObject::new(&two, &twice, Pose64::IDENTITY).unwrap();
    assert_eq!(
        try_collide_many(&[ok, bad], &opts),
        Err(BroadPhaseError::Narrow {
            a: 0,
            b: 1,
            source: dup
        })
    );
    // No objects, one object: nothing to report.
    assert_eq!(try_collide_many(&[], &opts).unwrap().total, 0);
    assert_eq!(try_collide_many(&[ok], &opts).unwrap().total, 0);
}

// --- the nbody-spheres benchmark scene ---------------------------------------------------

/// Per frame of the reference run ("ref", brute force) of `kind` in the peers' results file:
/// (count, object pairs).
fn reference(results: &serde_json::Value, kind: &str) -> Vec<(Option<usize>, Vec<[u32; 2]>)> {
    let q = results["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .find(|q| q["kind"] == kind)
        .expect("query kind");
    let run = q["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["peer"] == "ref")
        .expect("ref run");
    let index = |v: &serde_json::Value| v.as_u64().expect("object index") as u32;
    run["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            let count = f["count"].as_u64().map(|c| c as usize);
            let pairs = f["object_pairs"]
                .as_array()
                .expect("object_pairs")
                .iter()
                .map(|p| [index(&p[0]), index(&p[1])])
                .collect();
            (count, pairs)
        })
        .collect()
}

#[test]
fn nbody_spheres_match_reference() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/peers/scenes/nbody-spheres"
    ));
    let res = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/peers/results/nbody-spheres.json"
    ));
    if !dir.exists() || !res.exists() {
        println!("note: nbody-spheres scene or results absent, skipping");
        return;
    }
    let scene = gprox_geometry::scene::Scene::load(dir).expect("scene loads");
    let text = std::fs::read(res).expect("results json");
    let results: serde_json::Value = serde_json::from_slice(&text).expect("results parse");
    let all = reference(&results, "collide-all");
    let any = reference(&results, "collide-any");
    let bvhs: Vec<Bvh> = scene.meshes().iter().map(lbvh::build).collect();
    let opts = CollideOptions::default();
    for f in [0usize, 11, 24, 29] {
        let objects: Vec<CollisionObject<'_>> = (0..scene.object_count())
            .map(|o| {
                let bvh = &bvhs[scene.objects()[o].mesh];
                CollisionObject::new(scene.mesh(o), bvh, scene.pose64(f, o)).unwrap()
            })
            .collect();
        let got = collide_many(&objects, &opts);
        let pairs: Vec<[u32; 2]> = got.object_pairs.iter().map(|c| [c.a, c.b]).collect();
        assert_eq!(Some(got.total), all[f].0, "frame {f}: total count");
        assert_eq!(pairs, all[f].1, "frame {f}: object pairs");
        assert_eq!(
            collide_many_any(&objects, &opts),
            any[f].1,
            "frame {f}: any"
        );
    }
}

/// Dense crossing tori (2 × 2,304 triangles, hundreds of touching pairs): enough leaf pairs
/// for the traversals' batches (the many-body narrow phase expands 256 pairs at a time and
/// tests leaf pairs in groups of 32; the pair query defers its leaf tests the same way) to
/// fill and flush many times. Oracle, independent of any tree: every face pair whose exact
/// world boxes overlap, decided by the rational oracle.
#[test]
fn dense_crossing_tori_match_brute_force() {
    let torus = gprox_geometry::scene::torus(1.0, 0.3, 48, 24).unwrap();
    let bvh = lbvh::build(&torus);
    let poses = [
        Affine3A::IDENTITY,
        Affine3A::from_rotation_translation(
            gprox_geometry::glam::Quat::from_rotation_x(0.25),
            gprox_geometry::glam::Vec3::new(0.15, 0.02, 0.05),
        ),
    ]
    .map(|p| pose64(&p));
    let world = |p: &Pose64| oracle::world_triangles(&torus, p);
    let (ta, tb) = (world(&poses[0]), world(&poses[1]));
    let bounds =
        |t: &[gprox_geometry::glam::DVec3; 3]| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
    let mut want = Vec::new();
    for (i, a) in ta.iter().enumerate() {
        let (alo, ahi) = bounds(a);
        for (j, b) in tb.iter().enumerate() {
            let (blo, bhi) = bounds(b);
            if alo.cmple(bhi).all()
                && blo.cmple(ahi).all()
                && oracle::triangles_intersect_exact(a, b)
            {
                want.push([i as u32, j as u32]);
            }
        }
    }
    assert!(
        want.len() > 300,
        "{} pairs: not a dense contact",
        want.len()
    );
    let objects = poses.map(|p| CollisionObject::new(&torus, &bvh, p).unwrap());
    let opts = CollideOptions::default();
    assert_eq!(collide_all(&objects[0], &objects[1], &opts), want);
    let many = try_collide_many(&objects, &opts).unwrap();
    assert_eq!(many.total, want.len());
    assert_eq!(many.object_pairs[0].pairs, want);
}
