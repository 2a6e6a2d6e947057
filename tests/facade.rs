//! The facade: backends agree with each other and with the exact brute-force oracle; errors
//! are typed.

#[path = "common/device.rs"]
mod device;
#[path = "common/gen.rs"]
mod gen;
#[path = "common/oracle.rs"]
mod oracle;

use gprox::cuda::CudaError;
use gprox::geometry::glam::{Affine3A, Vec3};
use gprox::geometry::scene::{torus, Scene};
use gprox::geometry::transform::Pose64;
use gprox::geometry::GeometryError;
use gprox::{Backend, CollideOptions, Context, Error, Model};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// CPU pairs == exact rational brute force, and collide_any == "some pair".
    #[test]
    fn cpu_matches_brute_force((ma, pa, mb, pb) in gen::mesh_pair_case()) {
        let want = oracle::brute_force_pairs(&ma, &gen::pose64(&pa), &mb, &gen::pose64(&pb));
        let (a, b) = (Model::new(ma), Model::new(mb));
        let opts = CollideOptions::default();
        let got = gprox::collide_all(Backend::Cpu, &a, &pa, &b, &pb, &opts).unwrap();
        prop_assert_eq!(&got, &want);
        let any = gprox::collide_any(Backend::Cpu, &a, &pa, &b, &pb, &opts).unwrap();
        prop_assert_eq!(any, !want.is_empty());
    }
}

#[cfg(feature = "emulated")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The CUDA kernels (through the host emulator, or on CUDA device 0 with
    /// `GPROX_TEST_DEVICE=cuda`) give the CPU's pair sets and trees.
    #[test]
    fn emulated_matches_cpu((ma, pa, mb, pb) in gen::mesh_pair_case()) {
        let cpu = Context::new(Backend::Cpu).unwrap();
        let emu = Context::new(device::test_backend()).unwrap();
        let (ca, cb) = (cpu.model(ma.clone()).unwrap(), cpu.model(mb.clone()).unwrap());
        let (ea, eb) = (emu.model(ma).unwrap(), emu.model(mb).unwrap());
        prop_assert_eq!(&ca.bvh().nodes, &ea.bvh().nodes);
        let opts = CollideOptions::default();
        let want = cpu.collide_all(&ca, &pa, &cb, &pb, &opts).unwrap();
        let got = emu.collide_all(&ea, &pa, &eb, &pb, &opts).unwrap();
        prop_assert_eq!(&got, &want);
        let any = emu.collide_any(&ea, &pa, &eb, &pb, &opts).unwrap();
        prop_assert_eq!(any, !want.is_empty());
    }
}

/// Refit after a deformation gives the same pairs as a fresh build, and both match the oracle.
#[test]
fn refit_model_matches_fresh_build() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let mesh = torus(1.0, 0.3, 24, 12).unwrap();
    let mut refitted = ctx.model(mesh.clone()).unwrap();
    let squashed: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| Vec3::new(p.x * 1.3, p.y * 0.7, p.z + 0.1 * p.x))
        .collect();
    ctx.update(&mut refitted, &squashed).unwrap();
    let mut moved = mesh.clone();
    moved.set_positions(squashed).unwrap();
    let fresh = Model::new(moved.clone());
    let other = Model::new(torus(1.0, 0.3, 20, 10).unwrap());
    let pose = Affine3A::from_translation(Vec3::new(0.45, 0.1, 0.05));
    let opts = CollideOptions::default();
    let a = ctx
        .collide_all(&refitted, &Affine3A::IDENTITY, &other, &pose, &opts)
        .unwrap();
    let b = ctx
        .collide_all(&fresh, &Affine3A::IDENTITY, &other, &pose, &opts)
        .unwrap();
    assert_eq!(a, b);
    assert!(!a.is_empty());
    let want = oracle::brute_force_pairs(
        &moved,
        &Pose64::IDENTITY,
        other.mesh(),
        &Pose64::from_affine(&pose),
    );
    assert_eq!(a, want);
}

/// The built-in scene collides in some frames and not in others (CPU == oracle on one frame).
#[test]
fn builtin_scene_has_contact_and_free_frames() {
    let scene = Scene::builtin();
    let ctx = Context::new(Backend::Cpu).unwrap();
    let a = ctx.model(scene.mesh(0).clone()).unwrap();
    let b = ctx.model(scene.mesh(1).clone()).unwrap();
    let opts = CollideOptions::default();
    let counts: Vec<usize> = (0..scene.frame_count())
        .map(|f| {
            ctx.collide_all(&a, &scene.pose(f, 0), &b, &scene.pose(f, 1), &opts)
                .unwrap()
                .len()
        })
        .collect();
    assert!(
        counts.iter().any(|&c| c > 0) && counts.contains(&0),
        "{counts:?}"
    );
}

#[test]
fn cuda_backend_without_device_is_a_typed_error() {
    // No test machine has a GPU at index 4096.
    match Context::new(Backend::Cuda(4096)) {
        Err(Error::Cuda(
            CudaError::NoDriver | CudaError::NoDevice { .. } | CudaError::NoDeviceCode,
        )) => {}
        other => panic!("expected a typed 'no CUDA' error, got {other:?}"),
    }
    // auto() always gives something usable.
    assert!(Context::new(Backend::auto()).is_ok());
}

#[test]
fn negative_margin_is_a_typed_error() {
    let m = Model::new(torus(1.0, 0.3, 8, 4).unwrap());
    let opts = CollideOptions { margin: -1.0 };
    let r = gprox::collide_all(
        Backend::Cpu,
        &m,
        &Affine3A::IDENTITY,
        &m,
        &Affine3A::IDENTITY,
        &opts,
    );
    assert!(matches!(r, Err(Error::Collide(_))), "{r:?}");
}

#[test]
fn bad_positions_are_typed_errors() {
    let mut m = Model::new(torus(1.0, 0.3, 8, 4).unwrap());
    match m.set_positions(vec![Vec3::ZERO; 3]) {
        Err(Error::Geometry(GeometryError::VertexCountMismatch { expected, got })) => {
            assert_eq!((expected, got), (32, 3));
        }
        other => panic!("expected VertexCountMismatch, got {other:?}"),
    }
    let mut p = m.mesh().positions().to_vec();
    p[5].y = f32::NAN;
    match m.update_positions(&p) {
        Err(Error::Geometry(GeometryError::NonFiniteVertex { index, .. })) => assert_eq!(index, 5),
        other => panic!("expected NonFiniteVertex, got {other:?}"),
    }
    match m.update_positions(&p[..4]) {
        Err(Error::Geometry(GeometryError::VertexCountMismatch { expected, got })) => {
            assert_eq!((expected, got), (32, 4));
        }
        other => panic!("expected VertexCountMismatch, got {other:?}"),
    }
    // A rejected update leaves the mesh as it was.
    assert!(m.mesh().positions().iter().all(|v| v.is_finite()));
    match m.set_positions(p) {
        Err(Error::Geometry(GeometryError::NonFiniteVertex { index, .. })) => assert_eq!(index, 5),
        other => panic!("expected NonFiniteVertex, got {other:?}"),
    }
}

#[test]
fn scene_errors_convert() {
    let r: Result<Scene, Error> = Scene::load("/nonexistent/gprox/scene").map_err(Error::from);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Scene(_)));
    assert!(e.to_string().contains("scene.json"));
}
