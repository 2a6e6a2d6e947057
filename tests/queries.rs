//! Every `Context` query on every backend: the CPU answers equal independent oracles (exact
//! brute force, closed forms), and a device context (the host emulator, or CUDA device 0 with
//! `GPROX_TEST_DEVICE=cuda`) answers the same. Misuse is a typed error. Penetration,
//! intersection volume and distance fields are in `volume_queries.rs`.

#[path = "common/device.rs"]
mod device;
#[path = "common/fixtures.rs"]
mod fixtures;
#[path = "common/oracle.rs"]
mod oracle;

use device::contexts;
use fixtures::{at, cube};
use gprox::geometry::freeform::teapot;
use gprox::geometry::scene::torus;
use gprox::geometry::transform::Pose64;
use gprox::geometry::tri_distance::{point_triangle_distance, triangle_distance};
use gprox::geometry::TriMesh;
use gprox::query::freeform::DistanceOptions as FreeformDistanceOptions;
use gprox::{
    Affine3A, Backend, CcdOptions, CollideOptions, CollisionTree, Context, DistanceOptions, Error,
    ImageSpaceError, ImageSpaceOptions, ModelKind, ModelOptions, Motion, Query, RunsOn, Vec3,
};

/// A torus folded onto itself: its far half rotated about the y axis through the near
/// half, so that faces far apart in the mesh cross.
fn folded_torus() -> TriMesh {
    let t = torus(1.0, 0.25, 24, 8).unwrap();
    let p = t
        .positions()
        .iter()
        .map(|v| {
            if v.x > 0.3 {
                Vec3::new(0.3 - 0.8 * (v.x - 0.3), v.y, v.z + 0.1)
            } else {
                *v
            }
        })
        .collect();
    TriMesh::new(p, t.faces().to_vec()).unwrap()
}

#[test]
fn collide_all_any_and_batch_agree_with_brute_force() {
    let (ma, mb) = (
        torus(1.0, 0.3, 16, 8).unwrap(),
        torus(0.8, 0.25, 12, 6).unwrap(),
    );
    let poses = [at(0.5, 0.1, 0.0), at(4.0, 0.0, 0.0), at(1.1, 0.0, 0.2)];
    let opts = CollideOptions::default();
    for ctx in contexts() {
        let (a, b) = (
            ctx.model(ma.clone()).unwrap(),
            ctx.model(mb.clone()).unwrap(),
        );
        let mut batch = Vec::new();
        for pose in &poses {
            let want =
                oracle::brute_force_pairs(&ma, &Pose64::IDENTITY, &mb, &Pose64::from_affine(pose));
            let got = ctx
                .collide_all(&a, &Affine3A::IDENTITY, &b, pose, &opts)
                .unwrap();
            assert_eq!(got, want, "{:?}", ctx.backend());
            let any = ctx
                .collide_any(&a, &Affine3A::IDENTITY, &b, pose, &opts)
                .unwrap();
            assert_eq!(any, !want.is_empty());
            batch.push(want);
        }
        let query: Vec<_> = poses
            .iter()
            .map(|p| (&a, Affine3A::IDENTITY, &b, *p))
            .collect();
        assert_eq!(ctx.collide_batch(&query, &opts).unwrap(), batch);
    }
}

/// Front tracking over a sliding sequence gives collide_all's pairs every frame.
#[test]
fn tracked_collision_equals_collide_all() {
    let mesh = torus(1.0, 0.3, 16, 8).unwrap();
    let opts = CollideOptions::default();
    for ctx in contexts() {
        let m = ctx.model(mesh.clone()).unwrap();
        let mut front = gprox::PairFront::new();
        let mut nonempty = 0;
        for k in 0..8 {
            let pose = Affine3A::from_rotation_translation(
                gprox::Quat::from_rotation_z(0.05 * k as f32),
                Vec3::new(0.3 + 0.1 * k as f32, 0.05, 0.0),
            );
            let want = oracle::brute_force_pairs(
                &mesh,
                &Pose64::IDENTITY,
                &mesh,
                &Pose64::from_affine(&pose),
            );
            let got = ctx
                .collide_all_tracked(&mut front, &m, &Affine3A::IDENTITY, &m, &pose, &opts)
                .unwrap();
            assert_eq!(got, want, "frame {k} on {:?}", ctx.backend());
            nonempty += usize::from(!want.is_empty());
        }
        assert!(nonempty > 2);
        assert_eq!(front.is_empty(), ctx.device_ops().is_some());
    }
}

#[test]
fn obb_collision_tree_gives_the_same_pairs() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let mesh = torus(1.0, 0.3, 20, 10).unwrap();
    let obb = ModelOptions {
        collision_tree: CollisionTree::Obb,
        ..Default::default()
    };
    let (a, b) = (
        ctx.model(mesh.clone()).unwrap(),
        ctx.model_with(mesh, &obb).unwrap(),
    );
    let pose = Affine3A::from_rotation_translation(
        gprox::geometry::glam::Quat::from_rotation_x(0.7),
        Vec3::new(0.6, 0.2, 0.0),
    );
    let opts = CollideOptions::default();
    let want = ctx
        .collide_all(&a, &Affine3A::IDENTITY, &a, &pose, &opts)
        .unwrap();
    assert!(!want.is_empty());
    assert_eq!(
        ctx.collide_all(&b, &Affine3A::IDENTITY, &b, &pose, &opts)
            .unwrap(),
        want
    );
    assert_eq!(
        ctx.collide_all(&a, &Affine3A::IDENTITY, &b, &pose, &opts)
            .unwrap(),
        want
    );
    assert!(ctx
        .collide_any(&b, &Affine3A::IDENTITY, &a, &pose, &opts)
        .unwrap());
}

#[test]
fn contacts_lie_on_both_faces() {
    let mesh = torus(1.0, 0.3, 16, 8).unwrap();
    let pose = at(0.5, 0.0, 0.1);
    let mut answers = Vec::new();
    for ctx in contexts() {
        let m = ctx.model(mesh.clone()).unwrap();
        for margin in [0.0, 0.05] {
            let opts = CollideOptions { margin };
            let pairs = ctx
                .collide_all(&m, &Affine3A::IDENTITY, &m, &pose, &opts)
                .unwrap();
            let contacts = ctx
                .contacts(&m, &Affine3A::IDENTITY, &m, &pose, &opts)
                .unwrap();
            assert_eq!(contacts.iter().map(|c| c.faces).collect::<Vec<_>>(), pairs);
            for c in &contacts {
                let ta = oracle::world_triangles(&mesh, &Pose64::IDENTITY)[c.faces[0] as usize];
                let tb = oracle::world_triangles(&mesh, &Pose64::from_affine(&pose))
                    [c.faces[1] as usize];
                assert!(point_triangle_distance(c.point_a, &ta).0 < 1e-9);
                assert!(point_triangle_distance(c.point_b, &tb).0 < 1e-9);
                let d = triangle_distance(&ta, &tb).distance;
                assert!((c.separation - d).abs() < 1e-12 && c.separation <= margin + 1e-12);
                let n = (ta[1] - ta[0]).cross(ta[2] - ta[0]).normalize();
                assert!((c.normal_a - n).length() < 1e-12);
            }
            answers.push(contacts);
        }
    }
    if answers.len() == 4 {
        assert_eq!(answers[0], answers[2]);
        assert_eq!(answers[1], answers[3]);
    }
}

#[test]
fn self_collide_matches_brute_force() {
    let mesh = folded_torus();
    let want = oracle::brute_force_self_pairs(&mesh);
    assert!(!want.is_empty());
    for ctx in contexts() {
        let m = ctx.model(mesh.clone()).unwrap();
        assert_eq!(ctx.self_collide(&m).unwrap(), want, "{:?}", ctx.backend());
    }
}

/// The torus folded a little further each frame (`ctx.update` refits the tree in place): the
/// culling data a CPU model keeps across frames never hides a pair.
#[test]
fn self_collide_follows_updates() {
    let base = torus(1.0, 0.3, 24, 12).unwrap();
    for ctx in contexts() {
        let mut m = ctx.model(base.clone()).unwrap();
        let mut hits = 0;
        for step in 0..6 {
            // Pull every vertex towards the axis: from step 4 on the inner walls pass through
            // each other across the hole.
            let t = 0.2 * step as f32;
            let p: Vec<Vec3> = base
                .positions()
                .iter()
                .map(|v| {
                    let r = v.truncate().length();
                    let s = (r - t) / r;
                    Vec3::new(v.x * s, v.y * s, v.z)
                })
                .collect();
            ctx.update(&mut m, &p).unwrap();
            let mut moved = base.clone();
            moved.set_positions(p).unwrap();
            let want = oracle::brute_force_self_pairs(&moved);
            hits += want.len();
            assert_eq!(
                ctx.self_collide(&m).unwrap(),
                want,
                "step {step} {:?}",
                ctx.backend()
            );
        }
        assert!(hits > 0);
    }
}

#[test]
fn distance_matches_brute_force_on_every_backend() {
    let (ma, mb) = (
        torus(1.0, 0.3, 12, 6).unwrap(),
        torus(0.7, 0.2, 10, 5).unwrap(),
    );
    let pose = Affine3A::from_rotation_translation(
        gprox::geometry::glam::Quat::from_rotation_y(0.4),
        Vec3::new(2.9, 0.3, -0.2),
    );
    let ta = oracle::world_triangles(&ma, &Pose64::IDENTITY);
    let tb = oracle::world_triangles(&mb, &Pose64::from_affine(&pose));
    let want = ta
        .iter()
        .flat_map(|a| tb.iter().map(move |b| triangle_distance(a, b).distance))
        .fold(f64::INFINITY, f64::min);
    let mut got = Vec::new();
    for ctx in contexts() {
        let (a, b) = (
            ctx.model(ma.clone()).unwrap(),
            ctx.model(mb.clone()).unwrap(),
        );
        let r = ctx
            .distance(
                &a,
                &Affine3A::IDENTITY,
                &b,
                &pose,
                &DistanceOptions::default(),
            )
            .unwrap();
        assert!(
            (r.distance - want).abs() <= 1e-12 * want,
            "{} vs {want}",
            r.distance
        );
        assert!(r.lower <= want * (1.0 + 1e-12) && r.upper >= want * (1.0 - 1e-12));
        assert!(((r.point_a - r.point_b).length() - r.distance).abs() < 1e-12);
        got.push((r.distance, r.lower, r.upper));
    }
    assert!(got.windows(2).all(|w| w[0] == w[1]), "{got:?}");
}

/// After an update the distance follows the new positions (the distance tree is rebuilt).
#[test]
fn distance_follows_updates() {
    let mesh = torus(1.0, 0.3, 12, 6).unwrap();
    for ctx in contexts() {
        let mut a = ctx.model(mesh.clone()).unwrap();
        let b = ctx.model(mesh.clone()).unwrap();
        let pose = at(3.0, 0.0, 0.0);
        let opts = DistanceOptions::default();
        let before = ctx
            .distance(&a, &Affine3A::IDENTITY, &b, &pose, &opts)
            .unwrap();
        let grown: Vec<Vec3> = mesh.positions().iter().map(|p| *p * 1.2).collect();
        ctx.update(&mut a, &grown).unwrap();
        let after = ctx
            .distance(&a, &Affine3A::IDENTITY, &b, &pose, &opts)
            .unwrap();
        let fresh = Context::new(Backend::Cpu).unwrap();
        let mut moved = mesh.clone();
        moved.set_positions(grown).unwrap();
        let want = fresh
            .distance(
                &fresh.model(moved).unwrap(),
                &Affine3A::IDENTITY,
                &b,
                &pose,
                &opts,
            )
            .unwrap();
        assert!(after.distance < before.distance - 0.2);
        assert_eq!(after.distance, want.distance);
    }
}

/// B falls straight down onto A: the certified time of impact brackets the closed form.
#[test]
fn ccd_pair_time_of_impact_brackets_the_truth() {
    let tri = TriMesh::new(
        vec![
            Vec3::ZERO,
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
        ],
        vec![[0, 1, 2]],
    )
    .unwrap();
    let still = Motion::rigid(Affine3A::IDENTITY, Affine3A::IDENTITY);
    // The cube's lowest face starts at z = 0.75 and ends at z = -0.25: contact at t = 0.75.
    let falling = Motion::rigid(at(0.2, 0.2, 0.75), at(0.2, 0.2, -0.25));
    let opts = CcdOptions::default();
    let mut answers = Vec::new();
    for ctx in contexts() {
        let (a, b) = (ctx.model(tri.clone()).unwrap(), ctx.model(cube()).unwrap());
        let r = ctx.ccd(&a, &still, &b, &falling, &opts).unwrap();
        let toi = r.earliest.unwrap();
        assert!(toi.t_lo <= 0.75 && toi.t_lo > 0.75 - 1e-4, "{toi:?}");
        let apart = Motion::rigid(at(5.0, 0.0, 0.75), at(5.0, 0.0, -0.25));
        assert!(ctx
            .ccd(&a, &still, &b, &apart, &opts)
            .unwrap()
            .earliest
            .is_none());
        // A deformation in place: the same fall as end positions of B's own vertices.
        let end: Vec<Vec3> = cube().positions().iter().map(|p| *p - Vec3::Z).collect();
        let deform = Motion::deform(at(0.2, 0.2, 0.75), &end);
        assert_eq!(ctx.ccd(&a, &still, &b, &deform, &opts).unwrap(), r);
        answers.push(r);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn ccd_self_agrees_across_backends() {
    let mesh = torus(1.0, 0.25, 24, 8).unwrap();
    let end: Vec<Vec3> = folded_torus().positions().to_vec();
    let mut answers = Vec::new();
    for ctx in contexts() {
        let m = ctx.model(mesh.clone()).unwrap();
        let r = ctx.ccd_self(&m, &end, &CcdOptions::default()).unwrap();
        assert!(r.earliest.is_some());
        answers.push(r);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn collide_many_equals_pairwise_queries() {
    let mesh = torus(1.0, 0.3, 12, 6).unwrap();
    let poses = [
        at(0.0, 0.0, 0.0),
        at(0.5, 0.0, 0.0),
        at(9.0, 0.0, 0.0),
        at(1.0, 0.3, 0.0),
    ];
    let opts = CollideOptions::default();
    for ctx in contexts() {
        let m = ctx.model(mesh.clone()).unwrap();
        let bodies: Vec<_> = poses.iter().map(|p| (&m, *p)).collect();
        let many = ctx.collide_many(&bodies, &opts).unwrap();
        let mut want = Vec::new();
        for i in 0..poses.len() {
            for j in i + 1..poses.len() {
                let p = ctx
                    .collide_all(&m, &poses[i], &m, &poses[j], &opts)
                    .unwrap();
                if !p.is_empty() {
                    want.push((i as u32, j as u32, p));
                }
            }
        }
        let got: Vec<_> = many
            .object_pairs
            .iter()
            .map(|o| (o.a, o.b, o.pairs.clone()))
            .collect();
        assert_eq!(got, want, "{:?}", ctx.backend());
    }
}

/// Freeform distance and collision between two teapots agree with their tessellations within
/// the tessellation's error.
#[test]
fn freeform_queries_agree_with_the_tessellation() {
    let mut opts = ModelOptions::default();
    opts.coons.epsilon = 1e-3;
    for ctx in contexts() {
        let pot = ctx.freeform_model(teapot(), &opts).unwrap();
        let mesh = pot.tessellated();
        // The teapot is about 6.4 units wide: tessellation error 1e-3 of that.
        let tess_err = 1e-3 * 6.5;
        let mut seen = Vec::new();
        for x in [7.0, 4.0] {
            let pose = at(x, 0.3, 0.0);
            let fd = ctx
                .freeform_distance(
                    &pot,
                    &Affine3A::IDENTITY,
                    &pot,
                    &pose,
                    &FreeformDistanceOptions {
                        tolerance: 1e-5,
                        ..Default::default()
                    },
                )
                .unwrap();
            let md = ctx
                .distance(
                    &mesh,
                    &Affine3A::IDENTITY,
                    &mesh,
                    &pose,
                    &DistanceOptions::default(),
                )
                .unwrap();
            assert!(fd.converged && fd.lower <= fd.upper);
            assert!(
                (fd.distance - md.distance).abs() <= 2.0 * tess_err + 1e-5,
                "{x}"
            );
            let touching = fd.distance <= 1e-2;
            let any = ctx
                .freeform_collide_any(&pot, &Affine3A::IDENTITY, &pot, &pose, 1e-2)
                .unwrap();
            assert_eq!(any, touching);
            let hits = ctx
                .freeform_collide(&pot, &Affine3A::IDENTITY, &pot, &pose, 1e-2)
                .unwrap();
            assert_eq!(!hits.contacts.is_empty(), touching);
            // Mesh oracle (exact point-triangle distances): each witness point of A lies within
            // the tolerance plus the tessellation error of B's tessellation, and the reverse.
            let tris = |pose: &Pose64| -> Vec<[gprox::DVec3; 3]> {
                let m = mesh.mesh();
                m.faces()
                    .iter()
                    .map(|f| {
                        gprox::geometry::transform::transform_triangle(
                            pose,
                            f.map(|i| m.positions()[i as usize]),
                        )
                    })
                    .collect()
            };
            let (ta, tb) = (tris(&Pose64::IDENTITY), tris(&Pose64::from_affine(&pose)));
            let near = |p: gprox::DVec3, ts: &[[gprox::DVec3; 3]]| {
                ts.iter()
                    .map(|t| point_triangle_distance(p, t).0)
                    .fold(f64::INFINITY, f64::min)
            };
            for c in hits.contacts.iter().take(50) {
                assert!(c.distance <= 1e-2 && c.point_a.distance(c.point_b) <= 1e-2);
                assert!(near(c.point_a, &tb) <= 1e-2 + 2.0 * tess_err);
                assert!(near(c.point_b, &ta) <= 1e-2 + 2.0 * tess_err);
            }
            seen.push(touching);
        }
        assert_eq!(seen, [false, true], "one pose apart, one touching");
    }
}

#[test]
fn misuse_is_a_typed_error() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let mesh = ctx.model(cube()).unwrap();
    let mut pot = ctx
        .freeform_model(teapot(), &ModelOptions::default())
        .unwrap();
    let id = Affine3A::IDENTITY;
    let unsupported = |e: Error, query: &str, which: &str, kind: ModelKind| match e {
        Error::Unsupported {
            query: q,
            which: w,
            kind: k,
            ..
        } => assert_eq!((q, w, k), (query, which, kind)),
        other => panic!("expected Unsupported, got {other}"),
    };
    let opts = CollideOptions::default();
    let e = ctx.collide_all(&mesh, &id, &pot, &id, &opts).unwrap_err();
    unsupported(e, "collide_all", "model b", ModelKind::Freeform);
    let e = ctx
        .distance(&pot, &id, &mesh, &id, &DistanceOptions::default())
        .unwrap_err();
    unsupported(e, "distance", "model a", ModelKind::Freeform);
    unsupported(
        ctx.self_collide(&pot).unwrap_err(),
        "self_collide",
        "the model",
        ModelKind::Freeform,
    );
    let e = ctx.penetration(&mesh, &id, &pot, &id).unwrap_err();
    unsupported(e, "penetration", "model b", ModelKind::Freeform);
    let iso = ImageSpaceOptions::new(0.1);
    let e = ctx
        .intersection_volume(&pot, &id, &mesh, &id, &iso)
        .unwrap_err();
    unsupported(e, "intersection_volume", "model a", ModelKind::Freeform);
    let e = ctx
        .distance_field(
            &pot,
            &id,
            &gprox::Lattice {
                origin: gprox::DVec3::ZERO,
                spacing: 0.1,
            },
            gprox::query::image_space::CellBox::default(),
            &iso,
        )
        .unwrap_err();
    unsupported(e, "distance_field", "the model", ModelKind::Freeform);
    let e = ctx
        .freeform_distance(&pot, &id, &mesh, &id, &FreeformDistanceOptions::default())
        .unwrap_err();
    unsupported(e, "freeform_distance", "model b", ModelKind::Mesh);
    let moved = pot.mesh().positions().to_vec();
    unsupported(
        ctx.update(&mut pot, &moved).unwrap_err(),
        "update",
        "the model",
        ModelKind::Freeform,
    );
    // An unwelded quad: two triangles touching along an edge with duplicated vertices.
    let soup = TriMesh::new(
        vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::X,
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::Y,
        ],
        vec![[0, 1, 2], [3, 4, 5]],
    )
    .unwrap();
    let soup = ctx.model(soup).unwrap();
    match ctx.self_collide(&soup).unwrap_err() {
        Error::Unwelded { query, vertices } => {
            assert_eq!((query, vertices), ("self_collide", [1, 3]))
        }
        other => panic!("expected Unwelded, got {other}"),
    }
    assert!(matches!(
        ctx.ccd_self(&soup, soup.mesh().positions(), &CcdOptions::default()),
        Err(Error::Unwelded { .. })
    ));
    // A cube with one face missing is not closed: penetration names the edge.
    let open = TriMesh::new(cube().positions().to_vec(), cube().faces()[2..].to_vec()).unwrap();
    let open = ctx.model(open).unwrap();
    assert!(matches!(
        ctx.penetration(&open, &id, &mesh, &id),
        Err(Error::Penetration(_))
    ));
    assert!(matches!(
        ctx.intersection_volume(&open, &id, &mesh, &id, &iso),
        Err(Error::ImageSpace(ImageSpaceError::Mesh(_)))
    ));
    assert!(matches!(
        ctx.intersection_volume(&mesh, &id, &mesh, &id, &ImageSpaceOptions::new(-1.0)),
        Err(Error::ImageSpace(ImageSpaceError::BadTolerance(_)))
    ));
}

#[test]
fn capabilities_list_every_query() {
    for ctx in contexts() {
        let caps = ctx.capabilities();
        assert_eq!(caps.iter().map(|c| c.0).collect::<Vec<_>>(), Query::ALL);
        let on_device = ctx.device_ops().is_some();
        for (q, on) in caps {
            let kernels = !matches!(
                q,
                Query::Ccd
                    | Query::Penetration
                    | Query::DistanceField
                    | Query::SampledSeparation
                    | Query::FreeformCollide
                    | Query::FreeformDistance
            );
            let want = if on_device && kernels {
                RunsOn::Device
            } else {
                RunsOn::Cpu
            };
            assert_eq!(on, want, "{q} on {:?}", ctx.backend());
        }
    }
}
