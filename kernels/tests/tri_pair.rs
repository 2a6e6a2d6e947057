//! The triangle-pair kernel's filters are sound: a certified answer (separate / intersect) always
//! equals the exact `gprox_geometry::tri_tri::triangles_intersect`; only "undecided" defers. And
//! they are useful: generic pairs are decided on the device.

mod common;

use gprox_cuda::params::{TRI_INTERSECT, TRI_SEPARATE, TRI_UNDECIDED};
use gprox_cuda::Device;
use gprox_geometry::glam::{Affine3A, Quat, Vec3};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

/// All pairs of the two meshes, their statuses, and the exact answers.
fn statuses(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> Vec<(u32, bool)> {
    let pairs: Vec<[u32; 2]> = (0..a.face_count() as u32)
        .flat_map(|i| (0..b.face_count() as u32).map(move |j| [i, j]))
        .collect();
    let s = Device::for_tests()
        .tri_pair_status(a, pa, b, pb, &pairs)
        .unwrap();
    pairs
        .iter()
        .zip(s)
        .map(|(p, s)| {
            let ta = transform_triangle(pa, a.triangle(p[0] as usize));
            let tb = transform_triangle(pb, b.triangle(p[1] as usize));
            (s, triangles_intersect(&ta, &tb))
        })
        .collect()
}

fn assert_sound(res: &[(u32, bool)]) {
    for (i, &(s, exact)) in res.iter().enumerate() {
        match s {
            TRI_SEPARATE => assert!(!exact, "pair {i}: certified separate but intersecting"),
            TRI_INTERSECT => assert!(exact, "pair {i}: certified intersecting but separate"),
            TRI_UNDECIDED => {}
            other => panic!("pair {i}: status {other}"),
        }
    }
}

/// A mesh whose vertices lie on the plane z = 0 up to tiny offsets (f32 cannot resolve the
/// orientations once rotated): the filters must defer rather than guess.
fn near_flat() -> impl Strategy<Value = TriMesh> {
    let offset = prop_oneof![
        Just(0.0f32),
        Just(1e-7f32),
        Just(-1e-7f32),
        Just(f32::MIN_POSITIVE),
        Just(1e-30f32),
        -1e-6f32..1e-6
    ];
    prop::collection::vec((common::grid_coord(), common::grid_coord(), offset), 3..12)
        .prop_flat_map(|v| {
            let n = v.len() as u32;
            prop::collection::vec((0..n, 0..n, 0..n), 1..12).prop_map(move |f| {
                TriMesh::new(
                    v.iter().map(|&(x, y, z)| Vec3::new(x, y, z)).collect(),
                    f.into_iter().map(|(a, b, c)| [a, b, c]).collect(),
                )
                .unwrap()
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn certified_answers_are_exact(
        a in common::mesh(12),
        b in common::mesh(12),
        pa in common::pose(),
        pb in common::pose(),
    ) {
        assert_sound(&statuses(&a, &pa, &b, &pb));
    }

    #[test]
    fn near_coplanar_pairs_are_never_misjudged(
        a in near_flat(),
        b in near_flat(),
        angle in -3.2f32..3.2,
        tilt in prop_oneof![Just(0.0f32), -1e-6f32..1e-6],
    ) {
        // The same small rotation of both: the planes stay (nearly) common in f64 world space.
        let r = Quat::from_rotation_z(angle) * Quat::from_rotation_x(0.3);
        let pa = Pose64::from_affine(&Affine3A::from_quat(r));
        let pb = Pose64::from_affine(&Affine3A::from_quat(r * Quat::from_rotation_y(tilt)));
        assert_sound(&statuses(&a, &pa, &b, &pb));
    }
}

#[test]
fn generic_pairs_are_decided_on_the_device() {
    // Random triangles in a unit cube under generic poses: almost all pairs are decided.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut mesh = || {
        let pos: Vec<Vec3> = (0..60).map(|_| Vec3::new(next(), next(), next())).collect();
        let faces = (0..20u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect();
        TriMesh::new(pos, faces).unwrap()
    };
    let (a, b) = (mesh(), mesh());
    let pa = Pose64::from_affine(&Affine3A::from_rotation_y(0.4));
    let pb = Pose64::from_affine(&Affine3A::from_rotation_z(-0.7));
    let res = statuses(&a, &pa, &b, &pb);
    assert_sound(&res);
    let undecided = res.iter().filter(|r| r.0 == TRI_UNDECIDED).count();
    let intersecting = res.iter().filter(|r| r.1).count();
    assert!(intersecting > 0, "the scene has intersecting pairs");
    assert!(
        undecided * 50 < res.len(),
        "{undecided} of {} undecided",
        res.len()
    );
}

#[test]
fn out_of_range_pairs_are_typed_errors() {
    let m = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    let r = Device::for_tests().tri_pair_status(
        &m,
        &Pose64::IDENTITY,
        &m,
        &Pose64::IDENTITY,
        &[[0, 1]],
    );
    assert!(r.is_err());
}
