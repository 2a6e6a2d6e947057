//! Geometry-image queries of trimmed models through the facade: contacts against the closed
//! form of two crossing squares, regenerated and moved images against fresh ones, and misuse
//! as typed errors (mesh and freeform queries on trimmed models, image queries on meshes, bad accuracy).

use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
use gprox::{
    Affine3A, Backend, CollideOptions, Context, DVec3, Error, GeometryImageOptions, ImageMode,
    Model, ModelKind, ModelOptions, Query, RunsOn, Vec3,
};

/// The unit square `[0,1]² × {0}` as a bilinear face.
fn square() -> TrimmedFace {
    let pts = (0..4)
        .map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, 0.0))
        .collect();
    TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap()
}

fn model(ctx: &Context) -> Model {
    ctx.trimmed_model(vec![square()], &ModelOptions::default())
        .unwrap()
}

/// The square stood upright (in the plane x = x0) through the first one, shifted by `dy`.
fn upright(x0: f32, dy: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x0, dy, 0.5))
        * Affine3A::from_rotation_y(std::f32::consts::FRAC_PI_2)
}

const EPS: f64 = 1e-2;

fn opts(mode: ImageMode) -> GeometryImageOptions {
    GeometryImageOptions {
        epsilon: EPS,
        mode,
        normal_test: true,
    }
}

/// The two squares meet on the segment x = x0, z = 0, y ∈ [dy, 1]: every reported pair lies
/// within 2ε plus a quad of it (approximate) or within a quad (exact), and the segment is
/// covered by the reported points in both modes.
#[test]
fn crossing_squares_match_the_closed_form() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let a = model(&ctx);
    for (x0, dy) in [(0.5f32, 0.0f32), (0.31, 0.4)] {
        let pose_b = upright(x0, dy);
        for mode in [ImageMode::Approximate, ImageMode::Exact] {
            let hits = ctx
                .image_collide(&a, &Affine3A::IDENTITY, &a, &pose_b, &opts(mode))
                .unwrap();
            assert!(!hits.is_empty());
            assert_eq!(hits.pairs.len(), hits.points.len());
            // Texel spacing is at most δ = ε / (2√6) < ε / 4: a quad is within ε / 2.
            let slack = if mode == ImageMode::Exact {
                EPS
            } else {
                3.0 * EPS
            } as f32;
            for p in &hits.points {
                assert!(
                    (p.x - x0).abs() <= slack && p.z.abs() <= slack,
                    "{p} off the line"
                );
                assert!(
                    p.y >= dy - slack && p.y <= 1.0 + slack,
                    "{p} off the segment"
                );
            }
            let mut y = dy + 0.01;
            while y < 0.99 {
                assert!(
                    hits.points.iter().any(|p| (p.y - y).abs() <= EPS as f32),
                    "no contact near y = {y} ({mode:?})"
                );
                y += 0.05;
            }
        }
        let far = Affine3A::from_translation(Vec3::new(0.0, 0.0, 3.0 * EPS as f32));
        let none = ctx
            .image_collide(
                &a,
                &Affine3A::IDENTITY,
                &a,
                &far,
                &opts(ImageMode::Approximate),
            )
            .unwrap();
        assert!(none.is_empty());
    }
}

/// A model queried at one pose, then another, answers as a fresh model does at each (its
/// images are updated in place or regenerated, never stale).
#[test]
fn cached_images_follow_the_pose() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let (a, b) = (model(&ctx), model(&ctx));
    let o = opts(ImageMode::Approximate);
    for pose in [upright(0.5, 0.0), upright(0.2, 0.3), upright(0.5, 0.0)] {
        let got = ctx
            .image_collide(&a, &Affine3A::IDENTITY, &b, &pose, &o)
            .unwrap();
        let fresh = ctx
            .image_collide(&model(&ctx), &Affine3A::IDENTITY, &model(&ctx), &pose, &o)
            .unwrap();
        assert_eq!(got, fresh);
    }
}

/// The unit square lifted to height `z` (the same grid as [`square`]: only a translation).
fn lifted(z: f64) -> NurbsSurface {
    let pts = (0..4)
        .map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, z))
        .collect();
    NurbsSurface::bezier([1, 1], pts, None).unwrap()
}

/// Moving a model's control points (`Model::set_trimmed_surfaces`) moves its cached images:
/// every frame the contacts equal those of a fresh model made from the moved surface (the
/// grid is the same), and the lifted square meets the upright one along z = lift; wrong input
/// is a typed error.
#[test]
fn moved_control_points_move_the_images() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let (mut a, b) = (model(&ctx), model(&ctx));
    let (id, pose, o) = (
        Affine3A::IDENTITY,
        upright(0.5, 0.0),
        opts(ImageMode::Exact),
    );
    for z in [0.2, 0.4, -0.3, 0.0, 0.2] {
        a.set_trimmed_surfaces(vec![lifted(z)]).unwrap();
        let got = ctx.image_collide(&a, &id, &b, &pose, &o).unwrap();
        let face = TrimmedFace::untrimmed(lifted(z)).unwrap();
        let fresh = ctx
            .trimmed_model(vec![face], &ModelOptions::default())
            .unwrap();
        assert_eq!(got, ctx.image_collide(&fresh, &id, &b, &pose, &o).unwrap());
        assert!(!got.is_empty(), "z {z}");
        let near = |p: &Vec3| (p.z - z as f32).abs() < 0.05 && (p.x - 0.5).abs() < 0.05;
        assert!(got.points.iter().all(near), "z {z}");
    }
    assert!(matches!(
        a.set_trimmed_surfaces(vec![lifted(0.0), lifted(1.0)]),
        Err(Error::FaceCount {
            expected: 1,
            got: 2
        })
    ));
    // The lifted square on the domain [0, 2] × [0, 1].
    let wide = NurbsSurface::new(
        [1, 1],
        [vec![0.0, 0.0, 2.0, 2.0], vec![0.0, 0.0, 1.0, 1.0]],
        [2, 2],
        lifted(0.0)
            .homogeneous_points()
            .iter()
            .map(|h| h.truncate())
            .collect(),
        None,
    )
    .unwrap();
    assert!(matches!(
        a.set_trimmed_surfaces(vec![wide]),
        Err(Error::Trim(_))
    ));
    let mut mesh = ctx.model(a.mesh().clone()).unwrap();
    assert!(matches!(
        mesh.set_trimmed_surfaces(vec![lifted(0.0)]),
        Err(Error::Unsupported { .. })
    ));
}

/// A square folded over itself (the second half of its control net above the first)
/// self-intersects; the flat square does not.
#[test]
fn self_collision_finds_a_fold_only() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let flat = model(&ctx);
    let o = opts(ImageMode::Exact);
    assert!(ctx
        .image_self_collide(&flat, &Affine3A::IDENTITY, &o)
        .unwrap()
        .is_empty());
    let pts = (0..8)
        .map(|k| {
            let (i, j) = (k / 2, k % 2);
            let x = [0.0, 1.0, 1.0, 0.1][i];
            let z = [0.0, 0.0, 0.6, -0.05][i];
            DVec3::new(x, j as f64, z)
        })
        .collect();
    let fold = TrimmedFace::untrimmed(NurbsSurface::bezier([3, 1], pts, None).unwrap()).unwrap();
    let m = ctx
        .trimmed_model(vec![fold], &ModelOptions::default())
        .unwrap();
    let hits = ctx.image_self_collide(&m, &Affine3A::IDENTITY, &o).unwrap();
    assert!(!hits.is_empty());
    assert!(hits.pairs.iter().all(|p| p.face_a == 0 && p.face_b == 0));
}

#[test]
fn misuse_is_a_typed_error() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let t = model(&ctx);
    assert_eq!(t.kind(), ModelKind::Trimmed);
    let id = Affine3A::IDENTITY;
    let unsupported = |r: Result<(), Error>, kind: ModelKind| match r {
        Err(Error::Unsupported { kind: k, .. }) => assert_eq!(k, kind),
        other => panic!("expected Unsupported, got {other:?}"),
    };
    unsupported(
        ctx.collide_all(&t, &id, &t, &id, &CollideOptions::default())
            .map(drop),
        ModelKind::Trimmed,
    );
    unsupported(ctx.self_collide(&t).map(drop), ModelKind::Trimmed);
    unsupported(
        ctx.freeform_collide(&t, &id, &t, &id, 1e-3).map(drop),
        ModelKind::Trimmed,
    );
    let mesh = ctx.model(t.mesh().clone()).unwrap();
    let o = GeometryImageOptions::default();
    unsupported(
        ctx.image_collide(&t, &id, &mesh, &id, &o).map(drop),
        ModelKind::Mesh,
    );
    unsupported(
        ctx.image_self_collide(&mesh, &id, &o).map(drop),
        ModelKind::Mesh,
    );
    for eps in [0.0, -1.0, f64::NAN] {
        let bad = GeometryImageOptions { epsilon: eps, ..o };
        assert!(matches!(
            ctx.image_collide(&t, &id, &t, &id, &bad),
            Err(Error::GeometryImage(_))
        ));
    }
    assert!(matches!(
        ctx.trimmed_model(Vec::new(), &ModelOptions::default()),
        Err(Error::Freeform(_))
    ));
    assert_eq!(ctx.runs_on(Query::ImageCollide), RunsOn::Cpu);
    assert_eq!(ctx.runs_on(Query::ImageSelfCollide), RunsOn::Cpu);
}

/// A bicubic Bézier patch over the unit square with a bump `h` (heights of its inner
/// control points), untrimmed.
fn bumped_patch(h: f64) -> NurbsSurface {
    let pts = (0..16)
        .map(|k| {
            let (i, j) = (k / 4, k % 4);
            let inner = (1..3).contains(&i) && (1..3).contains(&j);
            DVec3::new(i as f64 / 3.0, j as f64 / 3.0, if inner { h } else { 0.0 })
        })
        .collect();
    NurbsSurface::bezier([3, 3], pts, None).unwrap()
}

/// On untrimmed curved surfaces the geometry images and the Coons BVH find the same contact
/// region: every witnessed intersection of `freeform_collide` (tolerance 1e-6, so the points
/// lie on the intersection curve) is within 3ε of a reported image contact, and the image
/// contacts are within 3ε of both true surfaces (dense samples of each, spacing < ε / 2; a
/// fixed stride of the contacts).
#[test]
fn contact_regions_agree_with_the_coons_bvh() {
    let ctx = Context::new(Backend::Cpu).unwrap();
    let (sa, sb) = (bumped_patch(0.2), bumped_patch(-0.15));
    let image_a = ctx
        .trimmed_model(
            vec![TrimmedFace::untrimmed(sa.clone()).unwrap()],
            &ModelOptions::default(),
        )
        .unwrap();
    let image_b = ctx
        .trimmed_model(
            vec![TrimmedFace::untrimmed(sb.clone()).unwrap()],
            &ModelOptions::default(),
        )
        .unwrap();
    let mut fopts = ModelOptions::default();
    fopts.coons.epsilon = 1e-4;
    let free_a = ctx.freeform_model(vec![sa.clone()], &fopts).unwrap();
    let free_b = ctx.freeform_model(vec![sb.clone()], &fopts).unwrap();
    // B upright through A's bump, along two lines across it.
    for (x0, dy) in [(0.45f32, -0.1f32), (0.3, 0.2)] {
        let pose_b = upright(x0, dy);
        let hits = ctx
            .image_collide(
                &image_a,
                &Affine3A::IDENTITY,
                &image_b,
                &pose_b,
                &opts(ImageMode::Approximate),
            )
            .unwrap();
        let free = ctx
            .freeform_collide(&free_a, &Affine3A::IDENTITY, &free_b, &pose_b, 1e-6)
            .unwrap();
        assert!(!hits.is_empty() && !free.contacts.is_empty());
        let slack = 3.0 * EPS;
        for c in &free.contacts {
            let near = hits
                .points
                .iter()
                .any(|p| p.as_dvec3().distance(c.point_a) <= slack);
            assert!(
                near,
                "Coons BVH contact {} has no image contact near",
                c.point_a
            );
        }
        // Dense samples of both surfaces in world space.
        let n = (4.0 / EPS) as usize;
        let world_b = pose_b;
        let samples = |s: &NurbsSurface, pose: &Affine3A| -> Vec<DVec3> {
            (0..=n)
                .flat_map(|i| (0..=n).map(move |j| (i, j)))
                .map(|(i, j)| {
                    let p = s.point(i as f64 / n as f64, j as f64 / n as f64);
                    pose.transform_point3(p.as_vec3()).as_dvec3()
                })
                .collect()
        };
        let sorted = |mut v: Vec<DVec3>| {
            v.sort_by(|a, b| a.x.total_cmp(&b.x));
            v
        };
        let on_a = sorted(samples(&sa, &Affine3A::IDENTITY));
        let on_b = sorted(samples(&sb, &world_b));
        // Sample spacing: a patch side is under 1.5 long, so neighbours are < 1.5 / n apart.
        let reach = slack + 1.5 / n as f64;
        // Approximate mode reports every quad pair whose boxes overlap (~10⁵ here): every 37th.
        for p in hits.points.iter().step_by(37) {
            let p = p.as_dvec3();
            // Samples sorted by x: only those within `reach` in x can be close.
            let close = |pts: &[DVec3]| {
                let from = pts.partition_point(|q| q.x < p.x - reach);
                pts[from..]
                    .iter()
                    .take_while(|q| q.x <= p.x + reach)
                    .any(|q| q.distance(p) <= reach)
            };
            assert!(
                close(&on_a) && close(&on_b),
                "image contact {p} off the surfaces"
            );
        }
    }
}
