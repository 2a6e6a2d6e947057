//! Many bodies in one device query (`Device::collide_world`): the device broad phase, the world
//! traversal and the contact finish give, body pair by body pair, the CPU's
//! `try_collide_many` and the exact brute force over every body pair; tiny queues and result
//! buffers force the grow-and-rerun paths; a warm frame costs one host synchronisation and
//! uploads only the body table.

mod common;

use gprox_bvh::{lbvh, Bvh};
use gprox_cuda::{BalanceOptions, Device, GpuCollideOptions, ResidentMesh, ResidentObject};
use gprox_geometry::glam::{Affine3A, Vec3};
use gprox_geometry::scene::torus;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::broad_phase::{try_collide_many, ManyContacts};
use gprox_query::collide::{CollideOptions, CollisionObject};
use proptest::prelude::*;

/// The CPU's answer for the same bodies.
fn cpu(bodies: &[(&TriMesh, &Bvh, Pose64)], margin: f64) -> ManyContacts {
    let objects: Vec<_> = bodies
        .iter()
        .map(|(m, b, p)| CollisionObject::new(m, b, *p).unwrap())
        .collect();
    let opts = CollideOptions { margin };
    try_collide_many(&objects, &opts).unwrap()
}

/// The brute-force pair list of every body pair with contacts.
fn brute_force(bodies: &[(&TriMesh, &Bvh, Pose64)]) -> Vec<(u32, u32, Vec<[u32; 2]>)> {
    let mut out = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let (a, _, pa) = bodies[i];
            let (b, _, pb) = bodies[j];
            let pairs = common::brute_force_pairs(a, &pa, b, &pb);
            if !pairs.is_empty() {
                out.push((i as u32, j as u32, pairs));
            }
        }
    }
    out
}

fn as_lists(m: &ManyContacts) -> Vec<(u32, u32, Vec<[u32; 2]>)> {
    m.object_pairs
        .iter()
        .map(|c| (c.a, c.b, c.pairs.clone()))
        .collect()
}

fn tiny() -> BalanceOptions {
    BalanceOptions {
        tasks: 3,
        queue_capacity: 2,
        spill_capacity: 3,
        idle_threshold: 0.5,
        initial_result_capacity: 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random meshes at random poses: device == CPU == brute force, any tuning.
    #[test]
    fn world_matches_cpu_and_brute_force(
        bodies in prop::collection::vec((common::mesh(10), common::pose()), 0..7),
        small in any::<bool>(),
    ) {
        let d = Device::for_tests();
        let trees: Vec<Bvh> = bodies.iter().map(|(m, _)| lbvh::build(m)).collect();
        let resident: Vec<ResidentMesh> = bodies
            .iter()
            .zip(&trees)
            .map(|((m, _), t)| ResidentMesh::new(&d, m, t).unwrap())
            .collect();
        let objects: Vec<ResidentObject<'_>> = bodies
            .iter()
            .zip(&resident)
            .map(|((m, p), r)| ResidentObject::new(r, m, *p))
            .collect();
        let balance = if small { tiny() } else { BalanceOptions::default() };
        let (got, _) = d
            .collide_world_balanced(&objects, &GpuCollideOptions::default(), &balance)
            .unwrap();
        let host: Vec<(&TriMesh, &Bvh, Pose64)> =
            bodies.iter().zip(&trees).map(|((m, p), t)| (m, t, *p)).collect();
        prop_assert_eq!(&got, &cpu(&host, 0.0));
        prop_assert_eq!(as_lists(&got), brute_force(&host));
    }
}

/// Sixty tori in a loose pile: the same contacts as the CPU with a margin and without; a warm
/// frame synchronises once, allocates nothing and uploads only the body table.
#[test]
fn torus_pile_matches_cpu_within_budget() {
    let d = Device::for_tests();
    let mesh = torus(0.5, 0.15, 16, 8).unwrap();
    let tree = lbvh::build(&mesh);
    let r = ResidentMesh::new(&d, &mesh, &tree).unwrap();
    let poses: Vec<Pose64> = (0..60)
        .map(|i| {
            let (x, y, z) = ((i % 5) as f32, ((i / 5) % 4) as f32, (i / 20) as f32);
            let turn = Affine3A::from_rotation_x(0.7 * i as f32)
                * Affine3A::from_rotation_z(0.3 * i as f32);
            Pose64::from_affine(&(Affine3A::from_translation(Vec3::new(x, y, z) * 0.9) * turn))
        })
        .collect();
    let objects: Vec<_> = poses
        .iter()
        .map(|&p| ResidentObject::new(&r, &mesh, p))
        .collect();
    let host: Vec<(&TriMesh, &Bvh, Pose64)> = poses.iter().map(|&p| (&mesh, &tree, p)).collect();
    for margin in [0.0, 0.05] {
        let opts = GpuCollideOptions {
            margin,
            ..Default::default()
        };
        let want = cpu(&host, margin);
        assert!(want.object_pairs.len() > 10, "{}", want.object_pairs.len());
        assert_eq!(
            d.collide_world(&objects, &opts).unwrap(),
            want,
            "margin {margin}"
        );
    }
    let opts = GpuCollideOptions::default();
    let before = d.ops();
    let got = d.collide_world(&objects, &opts).unwrap();
    let used = d.ops() - before;
    assert_eq!(got, cpu(&host, 0.0));
    assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
    // The body table: 128 bytes a body.
    assert_eq!(used.h2d_bytes, 128 * 60, "{used:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The batch call: each listed pair (objects may repeat, in any order) gets exactly the
    /// pairs of its own query and of the brute force.
    #[test]
    fn batch_matches_single_queries(
        objects in prop::collection::vec((common::mesh(8), common::pose()), 1..5),
        picks in prop::collection::vec((0usize..5, 0usize..5), 0..8),
        small in any::<bool>(),
    ) {
        let d = Device::for_tests();
        let trees: Vec<Bvh> = objects.iter().map(|(m, _)| lbvh::build(m)).collect();
        let resident: Vec<ResidentMesh> = objects
            .iter()
            .zip(&trees)
            .map(|((m, _), t)| ResidentMesh::new(&d, m, t).unwrap())
            .collect();
        let obj = |i: usize| {
            let i = i % objects.len();
            ResidentObject::new(&resident[i], &objects[i].0, objects[i].1)
        };
        let pairs: Vec<_> = picks.iter().map(|&(i, j)| (obj(i), obj(j))).collect();
        let balance = if small { tiny() } else { BalanceOptions::default() };
        let opts = GpuCollideOptions::default();
        let (got, _) = d.collide_batch_balanced(&pairs, &opts, &balance).unwrap();
        prop_assert_eq!(got.len(), pairs.len());
        for (k, (a, b)) in pairs.iter().enumerate() {
            prop_assert_eq!(&got[k], &d.collide_all_resident(a, b, &opts).unwrap());
            prop_assert_eq!(&got[k], &common::brute_force_pairs(a.mesh, &a.pose, b.mesh, &b.pose));
        }
    }
}

/// A warm batch of 100 pairs is one synchronisation, no allocation, and uploads only the body
/// table and the pair list (2 × 128 + 8 bytes a pair).
#[test]
fn warm_batch_is_one_sync() {
    let d = Device::for_tests();
    let mesh = torus(0.5, 0.15, 12, 6).unwrap();
    let tree = lbvh::build(&mesh);
    let r = ResidentMesh::new(&d, &mesh, &tree).unwrap();
    let at = |x: f32, turn: f32| {
        let p =
            Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)) * Affine3A::from_rotation_x(turn);
        ResidentObject::new(&r, &mesh, Pose64::from_affine(&p))
    };
    let pairs: Vec<_> = (0..100)
        .map(|k| (at(0.0, 0.0), at(0.1 + 0.01 * k as f32, 0.03 * k as f32)))
        .collect();
    let opts = GpuCollideOptions::default();
    let first = d.collide_batch(&pairs, &opts).unwrap();
    let touching = first.iter().filter(|p| !p.is_empty()).count();
    assert!(touching > 50, "{touching}");
    let before = d.ops();
    let again = d.collide_batch(&pairs, &opts).unwrap();
    let used = d.ops() - before;
    assert_eq!(again, first);
    assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
    assert_eq!(used.h2d_bytes, 100 * (2 * 128 + 8), "{used:?}");
}
