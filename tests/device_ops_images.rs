//! Op budgets of geometry-image queries of trimmed models on a device context (see
//! `device_ops.rs` for the budgets of the mesh queries): positions evaluated and hierarchies
//! rebuilt on the device, one synchronisation per query, nothing allocated when warm, and the
//! CPU's contacts every frame. With `GPROX_TEST_DEVICE=cuda` the same budgets are checked on
//! CUDA device 0.
#![cfg(feature = "emulated")]

#[path = "common/device.rs"]
mod device;

use device::ops;
use gprox::geometry::glam::{Affine3A, Vec3};
use gprox::{Backend, Context};

/// A trimmed bicubic patch (a square hole) whose net is bent by `bend`.
fn trimmed_patch(bend: f64) -> gprox::geometry::freeform::TrimmedFace {
    use gprox::geometry::freeform::trimmed::{LoopRole, TrimLoop};
    use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    use gprox::geometry::glam::{DVec2, DVec3};
    let pts = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            let z = bend * ((i as f64 * 1.3).sin() + (j as f64 * 0.9).cos());
            DVec3::new(i as f64 / 3.0, j as f64 / 3.0, z)
        })
        .collect();
    let surface = NurbsSurface::bezier([3, 3], pts, None).unwrap();
    let hole = [
        DVec2::new(0.3, 0.3),
        DVec2::new(0.3, 0.6),
        DVec2::new(0.6, 0.6),
        DVec2::new(0.6, 0.3),
    ];
    let mut loops = TrimmedFace::untrimmed(surface.clone())
        .unwrap()
        .loops()
        .to_vec();
    loops.push(TrimLoop::polygon(LoopRole::Hole, &hole).unwrap());
    TrimmedFace::new(surface, loops).unwrap()
}

/// Geometry-image collision and self-collision of trimmed models on a device context: the
/// CPU's contacts every frame; when warm, a moved model uploads nothing (its positions are
/// evaluated and its hierarchy rebuilt on the device), a query synchronises once per face
/// pair, reads back a 16 B header and 8 B per pair, and nothing is allocated.
#[test]
fn geometry_images_of_trimmed_models() {
    use gprox::{GeometryImageOptions, ImageMode, ModelOptions};
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let faces = (vec![trimmed_patch(0.08)], vec![trimmed_patch(-0.06)]);
    let mo = ModelOptions::default();
    let (ca, cb) = (
        cpu.trimmed_model(faces.0.clone(), &mo).unwrap(),
        cpu.trimmed_model(faces.1.clone(), &mo).unwrap(),
    );
    let (ea, eb) = (
        emu.trimmed_model(faces.0, &mo).unwrap(),
        emu.trimmed_model(faces.1, &mo).unwrap(),
    );
    let opts = GeometryImageOptions {
        epsilon: 0.03,
        mode: ImageMode::Approximate,
        normal_test: true,
    };
    let poses: Vec<Affine3A> = (0..3)
        .map(|k| Affine3A::from_translation(Vec3::new(0.1 * k as f32, 0.05, 0.02)))
        .collect();
    let id = Affine3A::IDENTITY;
    for pass in 0..2 {
        for pose in &poses {
            let want = cpu.image_collide(&ca, &id, &cb, pose, &opts).unwrap();
            assert!(!want.is_empty());
            let (got, used) = ops(&emu, || {
                emu.image_collide(&ea, &id, &eb, pose, &opts).unwrap()
            });
            assert_eq!(got, want);
            if pass == 1 {
                // A new pose of the same control points: nothing goes up.
                assert_eq!(
                    (used.h2d_bytes, used.syncs, used.allocations),
                    (0, 1, 0),
                    "{used:?}"
                );
                assert_eq!(used.d2h_bytes, 16 + 8 * got.pairs.len() as u64);
            }
        }
    }
    // The same pose again: the device images are reused, nothing goes up.
    let (_, used) = ops(&emu, || {
        emu.image_collide(&ea, &id, &eb, &poses[2], &opts).unwrap()
    });
    assert_eq!((used.h2d_bytes, used.syncs, used.allocations), (0, 1, 0));
    for mode in [ImageMode::Approximate, ImageMode::Exact] {
        let o = GeometryImageOptions { mode, ..opts };
        assert_eq!(
            emu.image_self_collide(&ea, &id, &o).unwrap(),
            cpu.image_self_collide(&ca, &id, &o).unwrap()
        );
    }
}

/// The grid the CPU's resolution rule picks for `face` under `pose` at `epsilon` of the
/// model's size.
fn grid_of(
    face: &gprox::geometry::freeform::TrimmedFace,
    pose: &Affine3A,
    epsilon: f64,
) -> gprox::query::geometry_image::ImageSpec {
    use gprox::geometry::freeform::FreeformModel;
    use gprox::geometry::transform::Pose64;
    use gprox::query::geometry_image::ImageSpec;
    let unit = FreeformModel::new(vec![face.surface().clone()])
        .unwrap()
        .unit();
    let pose = Pose64::from_affine(pose);
    ImageSpec::new(0, face.surface(), &pose, epsilon * unit, None)
        .unwrap()
        .unwrap()
}

/// Launches of a device image's evaluation for `face` under `pose` at `epsilon` of the model's
/// size: one for the texels and one per five stored levels of its hierarchy (every level above
/// the leaves, the root alone when it is the leaf), from the grid the CPU's resolution rule
/// picks.
fn evaluation_launches(
    face: &gprox::geometry::freeform::TrimmedFace,
    pose: &Affine3A,
    epsilon: f64,
) -> u64 {
    let spec = grid_of(face, pose, epsilon);
    let (mut w, mut h, mut levels) = (spec.width - 1, spec.height - 1, 1u64);
    while w > 1 || h > 1 {
        (w, h) = (w.div_ceil(2), h.div_ceil(2));
        levels += 1;
    }
    1 + (levels - 1)
        .max(1)
        .div_ceil(gprox::cuda::geometry_image::LEVELS_PER_BUILD as u64)
}

/// A deforming trimmed model (`Model::set_trimmed_surfaces`) against a rigidly moving one on a
/// device context. When warm, a frame uploads exactly the moved control points (32 B each, none
/// for the rigid face), adds to a query's launches one per image for its texels and one per
/// five stored levels, synchronises once, reads back the 16 B header and 8 B per pair and allocates
/// nothing; contacts (pairs and display points) equal the CPU's in both modes, self too. An
/// exact query on the current images also waits once and reads back no position: at most the
/// header and 8 + 100 B per overlapping leaf pair (the pairs the device's filtered triangle test
/// does not certify apart, with the corners of the undecided ones), far below the 12 B per
/// texel of a position read-back.
#[test]
fn deforming_trimmed_model_uploads_only_control_points() {
    use gprox::{GeometryImageOptions, ImageMode, ModelOptions};
    let cpu = Context::new(Backend::Cpu).unwrap();
    let emu = Context::new(device::test_backend()).unwrap();
    let mo = ModelOptions::default();
    let (mut ca, cb) = (
        cpu.trimmed_model(vec![trimmed_patch(0.08)], &mo).unwrap(),
        cpu.trimmed_model(vec![trimmed_patch(-0.06)], &mo).unwrap(),
    );
    let (mut ea, eb) = (
        emu.trimmed_model(vec![trimmed_patch(0.08)], &mo).unwrap(),
        emu.trimmed_model(vec![trimmed_patch(-0.06)], &mo).unwrap(),
    );
    let opts = GeometryImageOptions {
        epsilon: 0.03,
        mode: ImageMode::Approximate,
        normal_test: false,
    };
    let id = Affine3A::IDENTITY;
    // Bends the first grid still certifies (`ImageSpec::admits`; a bend that needs a finer
    // grid makes the image anew, its stencil included, on both backends).
    let frames: Vec<(f64, Affine3A)> = (0..4)
        .map(|k| {
            let pose = Affine3A::from_translation(Vec3::new(0.05 * k as f32, 0.05, 0.02));
            (0.08 + 0.004 * k as f64, pose)
        })
        .collect();
    let (mut touching, mut exact_found) = (0, 0);
    for pass in 0..2 {
        for (bend, pose) in &frames {
            let face = trimmed_patch(*bend);
            ca.set_trimmed_surfaces(vec![face.surface().clone()])
                .unwrap();
            ea.set_trimmed_surfaces(vec![face.surface().clone()])
                .unwrap();
            let want = cpu.image_collide(&ca, &id, &cb, pose, &opts).unwrap();
            let (got, moved) = ops(&emu, || {
                emu.image_collide(&ea, &id, &eb, pose, &opts).unwrap()
            });
            assert_eq!(got, want, "bend {bend}");
            touching += usize::from(!want.is_empty());
            let exact = GeometryImageOptions {
                mode: ImageMode::Exact,
                ..opts
            };
            let (got_exact, exact_used) = ops(&emu, || {
                emu.image_collide(&ea, &id, &eb, pose, &exact).unwrap()
            });
            assert_eq!(
                got_exact,
                cpu.image_collide(&ca, &id, &cb, pose, &exact).unwrap(),
                "bend {bend}"
            );
            exact_found += got_exact.pairs.len();
            if pass == 1 {
                let u = &exact_used;
                assert_eq!((u.syncs, u.h2d_bytes, u.allocations), (1, 0, 0), "{u:?}");
                assert!(
                    u.d2h_bytes >= 16 + 8 * got_exact.pairs.len() as u64,
                    "{u:?}"
                );
                assert!(u.d2h_bytes <= 16 + 108 * got.pairs.len() as u64, "{u:?}");
                let texels = [(&face, id), (&trimmed_patch(-0.06), *pose)]
                    .iter()
                    .map(|(f, p)| {
                        let g = grid_of(f, p, opts.epsilon);
                        (g.width * g.height) as u64
                    })
                    .sum::<u64>();
                assert!(u.d2h_bytes < 12 * texels, "{u:?}, {texels} texels");
            }
            // The same frame again: the device images are current, only the query runs.
            let (again, still) = ops(&emu, || {
                emu.image_collide(&ea, &id, &eb, pose, &opts).unwrap()
            });
            assert_eq!(again, want);
            assert_eq!((still.h2d_bytes, still.syncs, still.allocations), (0, 1, 0));
            if pass == 1 {
                assert_eq!(moved.h2d_bytes, 32 * 16, "{moved:?}");
                assert_eq!((moved.syncs, moved.allocations), (1, 0), "{moved:?}");
                assert_eq!(moved.d2h_bytes, 16 + 8 * got.pairs.len() as u64);
                let eval = evaluation_launches(&face, &id, opts.epsilon)
                    + evaluation_launches(&trimmed_patch(-0.06), pose, opts.epsilon);
                assert_eq!(moved.launches, still.launches + eval, "{moved:?} {still:?}");
            }
        }
    }
    assert!(touching >= 4, "{touching}");
    assert!(exact_found > 0, "the exact triangles meet in some frame");
    for mode in [ImageMode::Approximate, ImageMode::Exact] {
        let o = GeometryImageOptions {
            mode,
            normal_test: true,
            ..opts
        };
        let want = cpu.image_self_collide(&ca, &id, &o).unwrap();
        assert_eq!(emu.image_self_collide(&ea, &id, &o).unwrap(), want);
    }
}
