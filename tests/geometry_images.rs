//! Geometry-image queries of trimmed models through the facade: contacts against the closed
//! form of two crossing squares, regenerated images against fresh ones, and misuse as typed
//! errors (mesh and freeform queries on trimmed models, image queries on meshes, bad accuracy).

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
