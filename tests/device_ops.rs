//! Op budgets of the GPU pipeline, counted by the device layer (identically by the emulator and
//! by CUDA): on resident models a collision query synchronises with the host once, uploads
//! nothing, reads back only its header and its pairs, and allocates nothing after the first
//! frame; an update uploads only the positions. These budgets are how the GPU path is checked
//! on machines without a GPU; the answers are compared with the CPU backend frame by frame.
//! With `GPROX_TEST_DEVICE=cuda` the same budgets are checked on CUDA device 0.
#![cfg(feature = "emulated")]

#[path = "common/device.rs"]
mod device;

use device::ops;

use gprox::cuda::DeviceOps;
use gprox::geometry::glam::{Affine3A, Vec3};
use gprox::geometry::scene::{torus, Scene};
use gprox::{Backend, CollideOptions, Context, Model};

/// Header bytes a traversal's mapped result carries (its 16 counters).
const HEADER: u64 = 64;

/// A unit torus stood up through another one's hole, cutting its tube.
fn interlocked() -> Affine3A {
    Affine3A::from_translation(Vec3::new(0.35, 0.05, 0.0))
        * Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2)
}

/// One mesh made of two unit tori, the second placed by `pose` (self-collision and self CCD
/// find their contacts).
fn two_tori(segments: u32, sides: u32, pose: &Affine3A) -> gprox::geometry::TriMesh {
    let a = torus(1.0, 0.3, segments, sides).unwrap();
    let mut positions = a.positions().to_vec();
    positions.extend(a.positions().iter().map(|&p| pose.transform_point3(p)));
    let n = a.positions().len() as u32;
    let mut faces = a.faces().to_vec();
    faces.extend(a.faces().iter().map(|f| f.map(|v| v + n)));
    gprox::geometry::TriMesh::new(positions, faces).unwrap()
}

/// The built-in two-tori scene, every frame: collide-all and collide-any on resident models
/// within budget (one synchronisation a query; on a GPU one query of the scene may take a
/// second, see below), and equal to the CPU's answers.
#[test]
fn two_tori_collide_stays_within_budget() {
    let scene = Scene::builtin();
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let (ca, cb) = (
        Model::new(scene.mesh(0).clone()),
        Model::new(scene.mesh(1).clone()),
    );
    let (ea, eb) = (
        emu.model(scene.mesh(0).clone()).unwrap(),
        emu.model(scene.mesh(1).clone()).unwrap(),
    );
    let opts = CollideOptions::default();
    let mut touching_frames = 0;
    // A query enqueues as many traversal rounds as the last one of its kind needed, with
    // slack; a deeper traversal costs one more synchronisation. The emulator's schedule is
    // fixed and the slack always suffices; on a GPU the work balancing races and the rounds
    // vary, so one query of the scene may take the second synchronisation.
    let mut second_syncs = 0;
    let allowed = u32::from(!matches!(emu.backend(), Backend::Emulated));
    for f in 0..scene.frame_count() {
        let (pa, pb) = (scene.pose(f, 0), scene.pose(f, 1));
        let want = cpu.collide_all(&ca, &pa, &cb, &pb, &opts).unwrap();
        let (got, all) = ops(&emu, || emu.collide_all(&ea, &pa, &eb, &pb, &opts).unwrap());
        assert_eq!(got, want, "frame {f}");
        let (any, any_ops) = ops(&emu, || emu.collide_any(&ea, &pa, &eb, &pb, &opts).unwrap());
        assert_eq!(any, !want.is_empty(), "frame {f}");
        touching_frames += usize::from(any);
        // The first frame warms the pool up (its buffers, grown to the scene's needs).
        if f == 0 {
            continue;
        }
        let pair_bytes = 8 * got.len() as u64;
        second_syncs += u32::from(all.syncs == 2) + u32::from(any_ops.syncs == 2);
        assert!(second_syncs <= allowed, "frame {f}: {all:?} {any_ops:?}");
        assert!(all.syncs <= 2, "frame {f}: {all:?}");
        assert!(all.h2d_bytes <= 4096, "frame {f}: {all:?}");
        // Undecided pairs come back too (flagged for the exact host test): at most the
        // kept pairs plus those, and never more than the header beyond the pairs when none is
        // undecided.
        assert!(all.d2h_bytes >= HEADER + pair_bytes, "frame {f}: {all:?}");
        assert_eq!(all.allocations, 0, "frame {f}: {all:?}");
        assert!(any_ops.syncs <= 2, "frame {f}: {any_ops:?}");
        assert_eq!(any_ops.allocations, 0, "frame {f}: {any_ops:?}");
        assert!(any_ops.h2d_bytes <= 4096, "frame {f}: {any_ops:?}");
        if any {
            // An early out reads the header only.
            assert!(any_ops.d2h_bytes <= HEADER, "frame {f}: {any_ops:?}");
        }
    }
    assert!(touching_frames >= 2, "the scene touches in some frames");
}

/// The device answers exactly the pairs its filters certify; the header is the only overhead:
/// on a scene whose pairs are all certified, the bytes read back are exactly header + pairs.
#[test]
fn collide_all_reads_back_header_and_pairs_only() {
    let emu = Context::new(device::test_backend()).unwrap();
    let a = emu.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
    let b = emu.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
    let pose_b = interlocked();
    let opts = CollideOptions::default();
    let first = emu
        .collide_all(&a, &Affine3A::IDENTITY, &b, &pose_b, &opts)
        .unwrap();
    assert!(first.len() > 20, "{}", first.len());
    let (again, used) = ops(&emu, || {
        emu.collide_all(&a, &Affine3A::IDENTITY, &b, &pose_b, &opts)
            .unwrap()
    });
    assert_eq!(again, first);
    assert_eq!(
        (used.syncs, used.h2d_bytes, used.d2h_bytes, used.allocations),
        (1, 0, HEADER + 8 * first.len() as u64, 0),
        "{used:?}"
    );
}

/// A deforming model: an update uploads exactly its positions (refit on the device, no
/// allocation, no synchronisation), and the next query still costs one synchronisation and gives
/// the CPU's answer; the host tree, refit on demand, equals the CPU's.
#[test]
fn deforming_update_uploads_positions_only() {
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let mesh = torus(1.0, 0.3, 40, 20).unwrap();
    let other = torus(0.8, 0.25, 30, 15).unwrap();
    let mut cm = cpu.model(mesh.clone()).unwrap();
    let mut em = emu.model(mesh.clone()).unwrap();
    let (co, eo) = (cpu.model(other.clone()).unwrap(), emu.model(other).unwrap());
    let pose = interlocked();
    let opts = CollideOptions::default();
    for step in 0..4 {
        let s = 1.0 + 0.1 * step as f32;
        let moved: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|p| Vec3::new(p.x * s, p.y, p.z / s))
            .collect();
        cpu.update(&mut cm, &moved).unwrap();
        let ((), up) = ops(&emu, || emu.update(&mut em, &moved).unwrap());
        assert_eq!(up.h2d_bytes, 12 * moved.len() as u64, "{up:?}");
        assert_eq!(
            (up.syncs, up.allocations, up.d2h_bytes),
            (0, 0, 0),
            "{up:?}"
        );
        let want = cpu
            .collide_all(&cm, &Affine3A::IDENTITY, &co, &pose, &opts)
            .unwrap();
        let (got, q) = ops(&emu, || {
            emu.collide_all(&em, &Affine3A::IDENTITY, &eo, &pose, &opts)
                .unwrap()
        });
        assert_eq!(got, want, "step {step}");
        assert!(!want.is_empty(), "step {step}");
        assert_eq!(q.h2d_bytes, 0, "{q:?}");
        // The first query sizes the pool and learns how many rounds to enqueue.
        if step > 0 {
            assert_eq!((q.syncs, q.allocations), (1, 0), "{q:?}");
        }
        assert_eq!(em.bvh(), cm.bvh(), "step {step}");
    }
}

/// Growing beyond the pool's buffers is a rerun, never a lost pair: a scene with many pairs
/// after a scene with few gives the CPU's answer.
#[test]
fn outgrowing_the_pool_reruns_and_loses_nothing() {
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let m = torus(1.0, 0.3, 48, 24).unwrap();
    let (ca, cb) = (cpu.model(m.clone()).unwrap(), cpu.model(m.clone()).unwrap());
    let (ea, eb) = (emu.model(m.clone()).unwrap(), emu.model(m).unwrap());
    let opts = CollideOptions::default();
    let grazing = Affine3A::from_translation(Vec3::new(2.55, 0.0, 0.0));
    let deep = Affine3A::from_translation(Vec3::new(0.3, 0.0, 0.05));
    for pose in [grazing, deep, grazing, deep] {
        let want = cpu
            .collide_all(&ca, &Affine3A::IDENTITY, &cb, &pose, &opts)
            .unwrap();
        let got = emu
            .collide_all(&ea, &Affine3A::IDENTITY, &eb, &pose, &opts)
            .unwrap();
        assert_eq!(got, want);
    }
}

/// Many bodies in one call: the device's broad phase, world traversal and triangle tests give
/// the CPU's contacts body pair by body pair, and a warm frame is one synchronisation, no
/// allocation, and an upload of the body table only (128 bytes a body).
#[test]
fn many_bodies_are_one_batch() {
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let mesh = torus(0.5, 0.15, 12, 6).unwrap();
    let (cm, em) = (cpu.model(mesh.clone()).unwrap(), emu.model(mesh).unwrap());
    let opts = CollideOptions::default();
    for frame in 0..3 {
        let poses: Vec<Affine3A> = (0..40)
            .map(|i| {
                let (x, y) = ((i % 8) as f32, (i / 8) as f32);
                let spin = 0.5 * i as f32 + 0.2 * frame as f32;
                Affine3A::from_translation(Vec3::new(x * 0.85, y * 0.85, 0.1 * frame as f32))
                    * Affine3A::from_rotation_x(spin)
            })
            .collect();
        let want = cpu
            .collide_many(&poses.iter().map(|p| (&cm, *p)).collect::<Vec<_>>(), &opts)
            .unwrap();
        let bodies: Vec<_> = poses.iter().map(|p| (&em, *p)).collect();
        let (got, used) = ops(&emu, || emu.collide_many(&bodies, &opts).unwrap());
        assert_eq!(got, want, "frame {frame}");
        assert!(want.object_pairs.len() > 10, "{}", want.object_pairs.len());
        if frame > 0 {
            assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
            assert_eq!(used.h2d_bytes, 128 * 40, "{used:?}");
        }
    }
}

/// Self-collision of a resident model (two interlocked tori merged into one mesh): the CPU's
/// pairs, one synchronisation and no allocation when warm, nothing uploaded.
#[test]
fn self_collision_of_a_resident_model() {
    let mesh = two_tori(24, 12, &interlocked());
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let want = cpu.self_collide(&cpu.model(mesh.clone()).unwrap()).unwrap();
    assert!(want.len() > 20, "{}", want.len());
    let m = emu.model(mesh).unwrap();
    assert_eq!(emu.self_collide(&m).unwrap(), want);
    let (again, used) = ops(&emu, || emu.self_collide(&m).unwrap());
    assert_eq!(again, want);
    assert_eq!(
        (used.syncs, used.allocations, used.h2d_bytes),
        (1, 0, 0),
        "{used:?}"
    );
}

/// Distance on resident models: the CPU's distance and bounds (the closest points may belong to
/// another of several tied pairs, but lie at that distance), one synchronisation and nothing
/// uploaded or allocated when warm.
#[test]
fn distance_of_resident_models() {
    use gprox::query::distance::DistanceOptions;
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let (ma, mb) = (
        torus(1.0, 0.3, 32, 16).unwrap(),
        torus(0.7, 0.2, 24, 12).unwrap(),
    );
    let (ca, cb) = (
        cpu.model(ma.clone()).unwrap(),
        cpu.model(mb.clone()).unwrap(),
    );
    let (ea, eb) = (emu.model(ma).unwrap(), emu.model(mb).unwrap());
    let opts = DistanceOptions::default();
    for (k, x) in [3.0f32, 2.2, 1.3, 0.35].into_iter().enumerate() {
        let pose =
            Affine3A::from_translation(Vec3::new(x, 0.1, 0.05)) * Affine3A::from_rotation_x(1.2);
        let want = cpu
            .distance(&ca, &Affine3A::IDENTITY, &cb, &pose, &opts)
            .unwrap();
        let (got, used) = ops(&emu, || {
            emu.distance(&ea, &Affine3A::IDENTITY, &eb, &pose, &opts)
                .unwrap()
        });
        assert_eq!(
            (got.distance, got.lower, got.upper),
            (want.distance, want.lower, want.upper),
            "x = {x}"
        );
        assert!(
            (got.point_a.distance(got.point_b) - got.distance).abs()
                <= 1e-12 * (1.0 + got.distance)
        );
        if k > 0 {
            assert_eq!(
                (used.syncs, used.allocations, used.h2d_bytes),
                (1, 0, 0),
                "{used:?}"
            );
        }
    }
}

/// Self CCD of a resident deforming model (two interlocked tori merged into one mesh, the second
/// sliding through the first): the CPU's contacts and earliest time of impact; a warm step
/// uploads only its end positions and synchronises once.
#[test]
fn self_ccd_of_a_resident_model() {
    use gprox::query::ccd::CcdOptions;
    let place = |x: f32| {
        let pose = Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)) * interlocked();
        two_tori(16, 8, &pose).positions().to_vec()
    };
    let mesh = two_tori(16, 8, &interlocked());
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let (mut cm, mut em) = (cpu.model(mesh.clone()).unwrap(), emu.model(mesh).unwrap());
    let opts = CcdOptions::default();
    let mut hits = 0;
    for step in 0..4 {
        let (now, next) = (place(0.1 * step as f32), place(0.1 * (step + 1) as f32));
        cpu.update(&mut cm, &now).unwrap();
        emu.update(&mut em, &now).unwrap();
        let want = cpu.ccd_self(&cm, &next, &opts).unwrap();
        let (got, used) = ops(&emu, || emu.ccd_self(&em, &next, &opts).unwrap());
        assert_eq!(got, want, "step {step}");
        hits += usize::from(want.earliest.is_some());
        if step > 0 {
            assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
            assert_eq!(used.h2d_bytes, 12 * next.len() as u64, "{used:?}");
        }
    }
    assert!(hits > 0, "the tori cut through each other");
}

/// The batch call on resident models: each pair's own answer on the CPU, one synchronisation
/// for the whole batch when warm.
#[test]
fn batch_of_pairs_is_one_sync() {
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let (ma, mb) = (
        torus(1.0, 0.3, 16, 8).unwrap(),
        torus(0.6, 0.2, 12, 6).unwrap(),
    );
    let (ca, cb) = (
        cpu.model(ma.clone()).unwrap(),
        cpu.model(mb.clone()).unwrap(),
    );
    let (ea, eb) = (emu.model(ma).unwrap(), emu.model(mb).unwrap());
    let poses: Vec<Affine3A> = (0..12)
        .map(|k| Affine3A::from_translation(Vec3::new(0.2 * k as f32, 0.3, 0.0)) * interlocked())
        .collect();
    let cpu_pairs: Vec<_> = poses
        .iter()
        .map(|p| (&ca, Affine3A::IDENTITY, &cb, *p))
        .collect();
    let emu_pairs: Vec<_> = poses
        .iter()
        .map(|p| (&ea, Affine3A::IDENTITY, &eb, *p))
        .collect();
    let opts = CollideOptions::default();
    let want = cpu.collide_batch(&cpu_pairs, &opts).unwrap();
    assert!(want.iter().filter(|p| !p.is_empty()).count() > 3);
    assert_eq!(emu.collide_batch(&emu_pairs, &opts).unwrap(), want);
    let (again, used) = ops(&emu, || emu.collide_batch(&emu_pairs, &opts).unwrap());
    assert_eq!(again, want);
    assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
}

/// The built-in deforming tori, every frame after a warm-up pass: the image-space
/// intersection volume classifies on the device in one batch — one launch, one host
/// synchronisation, the tile table up (40 B per tile), one code per cell and mesh back (2 B per
/// swept cell) — then computes the depths of the samples inside both in one more batch — three
/// launches (world boxes of both trees, depths), one synchronisation, their cells up (12 B
/// each), two 40 B surface points back —
/// with no allocation, and equals the CPU's answer sample for sample. A frame whose meshes
/// cannot meet costs no device operation at all.
#[test]
fn deforming_tori_intersection_volume_stays_within_budget() {
    let scene = Scene::builtin_deforming_tori();
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let opts = gprox::ImageSpaceOptions::new(0.0207);
    let mut cm = [0, 1].map(|i| Model::new(scene.mesh(i).clone()));
    let mut em = [0, 1].map(|i| emu.model(scene.mesh(i).clone()).unwrap());
    let mut touching = 0;
    let mut deep = 0;
    let mut apart = 0;
    for pass in 0..2 {
        for f in 0..scene.frame_count() {
            for i in 0..2 {
                cpu.update(&mut cm[i], scene.positions(f, i)).unwrap();
                emu.update(&mut em[i], scene.positions(f, i)).unwrap();
            }
            let (pa, pb) = (scene.pose(f, 0), scene.pose(f, 1));
            let want = cpu
                .intersection_volume(&cm[0], &pa, &cm[1], &pb, &opts)
                .unwrap();
            // Where the meshes cannot meet (no region), the query touches nothing on the
            // device, not even the deformed positions; elsewhere the resident copies are
            // brought up to date before counting (the update's own cost).
            if !want.regions().is_empty() {
                emu.collide_any(&em[0], &pa, &em[1], &pb, &CollideOptions::default())
                    .unwrap();
            }
            let (got, used) = ops(&emu, || {
                emu.intersection_volume(&em[0], &pa, &em[1], &pb, &opts)
                    .unwrap()
            });
            assert_eq!(got, want, "frame {f}");
            let cells: u64 = got.regions().iter().map(|r| r.count()).sum();
            if cells == 0 {
                assert_eq!(used, DeviceOps::default(), "frame {f}");
                apart += 1;
                continue;
            }
            touching += 1;
            // Classification, then the depths of the samples inside both (if any).
            let samples = got.samples().len() as u64;
            let batches = 1 + u64::from(samples > 0);
            deep += u64::from(samples > 0);
            // The depths' batch launches the world boxes of both trees first.
            let launches = 1 + 3 * u64::from(samples > 0);
            assert_eq!(
                (used.launches, used.syncs),
                (launches, batches),
                "frame {f}"
            );
            assert_eq!(used.d2h_bytes, 2 * cells + 80 * samples, "frame {f}");
            let tiles = used.h2d_bytes - 12 * samples;
            assert!(tiles > 0 && tiles.is_multiple_of(40), "frame {f}");
            assert!(tiles <= 40 * cells.div_ceil(16), "frame {f}");
            if pass == 1 {
                assert_eq!(used.allocations, 0, "frame {f}");
            }
        }
    }
    assert!(touching >= 8, "{touching}");
    assert!(deep >= 8, "{deep}");
    assert!(apart >= 2, "{apart}");
}
