//! The collision kernels (world boxes, BVTT traversal, filtered triangle-pair test), run on the
//! test device (`Device::for_tests()`: the emulator, or CUDA device 0 with
//! `GPROX_TEST_DEVICE=cuda`), against the CPU backend (`gprox_query::collide::collide_all`) and
//! against a brute-force oracle over all face pairs with the exact `triangles_intersect`.

mod common;

use gprox_bvh::lbvh;
use gprox_cuda::{CollisionObject, Device, GpuCollideOptions};
use gprox_geometry::glam::Affine3A;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide as cpu;
use proptest::prelude::*;

fn cpu_pairs(a: &TriMesh, pa: Pose64, b: &TriMesh, pb: Pose64, margin: f64) -> Vec<[u32; 2]> {
    let (ba, bb) = (lbvh::build(a), lbvh::build(b));
    cpu::collide_all(
        &cpu::CollisionObject {
            mesh: a,
            bvh: &ba,
            pose: pa,
        },
        &cpu::CollisionObject {
            mesh: b,
            bvh: &bb,
            pose: pb,
        },
        &cpu::CollideOptions { margin },
    )
}

fn gpu_pairs(
    d: &Device,
    a: &TriMesh,
    pa: Pose64,
    b: &TriMesh,
    pb: Pose64,
    opts: GpuCollideOptions,
) -> Vec<[u32; 2]> {
    // The trees come from the device too: the whole pipeline runs through the kernels.
    let (ba, bb) = (d.build_bvh(a).unwrap(), d.build_bvh(b).unwrap());
    d.collide_all(
        &CollisionObject {
            mesh: a,
            bvh: &ba,
            pose: pa,
        },
        &CollisionObject {
            mesh: b,
            bvh: &bb,
            pose: pb,
        },
        &opts,
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pairs_match_cpu_and_brute_force(
        a in common::mesh(40),
        b in common::mesh(40),
        pa in common::pose(),
        pb in common::pose(),
        capacity in prop_oneof![Just(1usize), Just(7), Just(1 << 14)],
    ) {
        let d = Device::for_tests();
        let opts = GpuCollideOptions { margin: 0.0, initial_capacity: capacity };
        let gpu = gpu_pairs(&d, &a, pa, &b, pb, opts);
        prop_assert_eq!(&gpu, &common::brute_force_pairs(&a, &pa, &b, &pb));
        prop_assert_eq!(&gpu, &cpu_pairs(&a, pa, &b, pb, 0.0));
        // The simple (unbalanced) traversal kernel gives the same pairs.
        let (ba, bb) = (lbvh::build(&a), lbvh::build(&b));
        let simple = d.collide_all_simple(
            &CollisionObject { mesh: &a, bvh: &ba, pose: pa },
            &CollisionObject { mesh: &b, bvh: &bb, pose: pb },
            &opts,
        ).unwrap();
        prop_assert_eq!(&simple, &gpu);
    }

    #[test]
    fn margin_pairs_match_cpu(
        a in common::mesh(25),
        b in common::mesh(25),
        pa in common::pose(),
        pb in common::pose(),
        margin in prop_oneof![Just(0.01f64), Just(0.25), 0.0f64..0.5],
    ) {
        let d = Device::for_tests();
        let opts = GpuCollideOptions { margin, initial_capacity: 3 };
        prop_assert_eq!(gpu_pairs(&d, &a, pa, &b, pb, opts), cpu_pairs(&a, pa, &b, pb, margin));
    }
}

#[test]
fn capacity_one_grows_and_loses_nothing() {
    // Two sheets crossing at right angles along a line: many touching and crossing pairs, and
    // a coplanar copy (every pair undecided by the filters, finished exactly on the host).
    let a = common::sheet(8);
    let d = Device::for_tests();
    let upright = Pose64::from_affine(&Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
    for pb in [upright, Pose64::IDENTITY] {
        let small = GpuCollideOptions {
            margin: 0.0,
            initial_capacity: 1,
        };
        let got = gpu_pairs(&d, &a, Pose64::IDENTITY, &a, pb, small);
        let big = gpu_pairs(
            &d,
            &a,
            Pose64::IDENTITY,
            &a,
            pb,
            GpuCollideOptions::default(),
        );
        let oracle = common::brute_force_pairs(&a, &Pose64::IDENTITY, &a, &pb);
        assert!(
            oracle.len() > 16,
            "the scene has many pairs ({})",
            oracle.len()
        );
        assert_eq!(got, oracle);
        assert_eq!(big, oracle);
    }
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let a = common::sheet(2);
    let bvh = lbvh::build(&a);
    let d = Device::for_tests();
    let o = CollisionObject {
        mesh: &a,
        bvh: &bvh,
        pose: Pose64::IDENTITY,
    };
    for margin in [-1.0, f64::NAN, f64::INFINITY] {
        let opts = GpuCollideOptions {
            margin,
            initial_capacity: 4,
        };
        assert!(d.collide_all(&o, &o, &opts).is_err());
    }
    let other = common::sheet(3);
    let wrong = CollisionObject {
        mesh: &other,
        bvh: &bvh,
        pose: Pose64::IDENTITY,
    };
    assert!(d
        .collide_all(&wrong, &o, &GpuCollideOptions::default())
        .is_err());
    let mut nan = o;
    nan.pose.rows[1][3] = f64::NAN;
    assert!(d
        .collide_all(&o, &nan, &GpuCollideOptions::default())
        .is_err());
}
