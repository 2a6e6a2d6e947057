//! Temporal coherence of a `Context`: the last witness pair of each model pair, remembered
//! and tried first by the next collide-any and distance query, and the tree picked from what
//! the last query found (`CollisionTree::Auto`), never change an answer.

#[path = "common/oracle.rs"]
mod oracle;

use gprox::geometry::scene::torus;
use gprox::geometry::transform::Pose64;
use gprox::geometry::TriMesh;
use gprox::{
    Affine3A, Backend, CollideOptions, CollisionTree, Context, DistanceOptions, Model,
    ModelOptions, Vec3,
};

/// `a` at the identity against `b` at `pose`: collide-any and collide-all of `ctx` answer as
/// the brute-force pairs `want`.
fn check_collisions(
    ctx: &Context,
    (a, b): (&Model, &Model),
    pose: &Affine3A,
    want: &[[u32; 2]],
    what: &str,
) {
    let opts = CollideOptions::default();
    let any = ctx
        .collide_any(a, &Affine3A::IDENTITY, b, pose, &opts)
        .unwrap();
    assert_eq!(any, !want.is_empty(), "{what}");
    let all = ctx
        .collide_all(a, &Affine3A::IDENTITY, b, pose, &opts)
        .unwrap();
    assert_eq!(all, want, "{what}");
}

/// Updates `model` (made from `mesh`) to `mesh` scaled by `scale`; returns the scaled mesh.
fn stretch(ctx: &Context, model: &mut Model, mesh: &TriMesh, scale: Vec3) -> TriMesh {
    let moved: Vec<Vec3> = mesh.positions().iter().map(|p| *p * scale).collect();
    ctx.update(model, &moved).unwrap();
    TriMesh::new(moved, mesh.faces().to_vec()).unwrap()
}

/// A context remembers each model pair's last witness (temporal coherence) and tries it first:
/// over a sliding sequence — touching, staying in touch, parting, apart, touching again, and
/// after the models deform — its collide-any and distance answers equal brute force and those of
/// a fresh context, which has no witness.
#[test]
fn remembered_witnesses_change_no_answer() {
    let (ma, mb) = (
        torus(1.0, 0.3, 16, 8).unwrap(),
        torus(0.8, 0.25, 12, 6).unwrap(),
    );
    let xs = [0.5, 0.52, 0.55, 0.6, 1.6, 2.6, 2.7, 0.9, 0.92];
    let ctx = Context::new(Backend::Cpu).unwrap();
    let (mut a, b) = (
        ctx.model(ma.clone()).unwrap(),
        ctx.model(mb.clone()).unwrap(),
    );
    let mut stretched = ma.clone();
    for (k, &x) in xs.iter().enumerate() {
        if k == 7 {
            // Deform A (stretch along x): the remembered faces now lie elsewhere.
            stretched = stretch(&ctx, &mut a, &ma, Vec3::new(1.3, 1.0, 1.0));
        }
        let pose = Affine3A::from_rotation_translation(
            gprox::geometry::glam::Quat::from_rotation_y(0.3 * k as f32),
            Vec3::new(x, 0.1, 0.0),
        );
        let want = oracle::brute_force_pairs(
            &stretched,
            &Pose64::IDENTITY,
            &mb,
            &Pose64::from_affine(&pose),
        );
        let fresh = Context::new(Backend::Cpu).unwrap();
        let (fa, fb) = (
            fresh.model(stretched.clone()).unwrap(),
            fresh.model(mb.clone()).unwrap(),
        );
        for _ in 0..2 {
            check_collisions(&ctx, (&a, &b), &pose, &want, &format!("frame {k}"));
            let d = ctx
                .distance(
                    &a,
                    &Affine3A::IDENTITY,
                    &b,
                    &pose,
                    &DistanceOptions::default(),
                )
                .unwrap();
            let f = fresh
                .distance(
                    &fa,
                    &Affine3A::IDENTITY,
                    &fb,
                    &pose,
                    &DistanceOptions::default(),
                )
                .unwrap();
            assert_eq!(d.distance.to_bits(), f.distance.to_bits(), "frame {k}");
        }
    }
}

/// Rigid models through touching, parting, apart and touching again, each query asked twice:
/// with every collision tree option — `Auto` switches to the OBB trees once a pair was found
/// apart and back after a contact — collide-any and collide-all equal brute force, and with
/// mixed options (one model `Auto`, one `Aabb` or `Obb`) too.
#[test]
fn every_collision_tree_option_gives_the_same_answers() {
    let (ma, mb) = (
        torus(1.0, 0.3, 16, 8).unwrap(),
        torus(0.8, 0.25, 12, 6).unwrap(),
    );
    let xs = [0.5, 1.6, 2.6, 2.7, 0.9, 0.92, 3.0, 0.55];
    let trees = [CollisionTree::Auto, CollisionTree::Aabb, CollisionTree::Obb];
    for (ta, tb) in trees
        .iter()
        .flat_map(|&t| [(t, t), (CollisionTree::Auto, t)])
    {
        let ctx = Context::new(Backend::Cpu).unwrap();
        let with = |m: &TriMesh, t| {
            let o = ModelOptions {
                collision_tree: t,
                ..Default::default()
            };
            ctx.model_with(m.clone(), &o).unwrap()
        };
        let (a, b) = (with(&ma, ta), with(&mb, tb));
        for (k, &x) in xs.iter().enumerate() {
            let pose = Affine3A::from_rotation_translation(
                gprox::geometry::glam::Quat::from_rotation_y(0.4 * k as f32),
                Vec3::new(x, 0.1, 0.0),
            );
            let want =
                oracle::brute_force_pairs(&ma, &Pose64::IDENTITY, &mb, &Pose64::from_affine(&pose));
            for _ in 0..2 {
                check_collisions(
                    &ctx,
                    (&a, &b),
                    &pose,
                    &want,
                    &format!("{ta:?}/{tb:?} frame {k}"),
                );
            }
        }
    }
}

/// A pair in a large contact for its meshes' size is answered in world space from its second
/// `collide_all` on (the many-body placement, `Context::world_pays`): with and without a margin,
/// frame after frame, through a deformation of one model and a pair found apart, the pairs
/// equal those of the pair query (a fresh context, whose first query of a pair never takes that
/// way) and, without a margin, brute force.
#[test]
fn large_contacts_in_world_space_give_the_same_pairs() {
    let (ma, mb) = (
        torus(1.0, 0.3, 24, 12).unwrap(),
        torus(0.8, 0.3, 20, 10).unwrap(),
    );
    let ctx = Context::new(Backend::Cpu).unwrap();
    let (mut a, b) = (
        ctx.model(ma.clone()).unwrap(),
        ctx.model(mb.clone()).unwrap(),
    );
    let mut current = ma.clone();
    for margin in [0.0, 0.02] {
        let opts = CollideOptions { margin };
        for (k, x) in [0.3, 0.32, 0.35, 0.4, 3.0, 0.3, 0.31]
            .into_iter()
            .enumerate()
        {
            if k == 5 {
                current = stretch(&ctx, &mut a, &ma, Vec3::new(1.0, 1.2, 1.0));
            }
            let pose = Affine3A::from_rotation_translation(
                gprox::geometry::glam::Quat::from_rotation_x(1.2 + 0.05 * k as f32),
                Vec3::new(x, 0.05, 0.0),
            );
            let fresh = Context::new(Backend::Cpu).unwrap();
            let (fa, fb) = (
                fresh.model(current.clone()).unwrap(),
                fresh.model(mb.clone()).unwrap(),
            );
            let want = fresh
                .collide_all(&fa, &Affine3A::IDENTITY, &fb, &pose, &opts)
                .unwrap();
            if margin == 0.0 {
                let brute = oracle::brute_force_pairs(
                    &current,
                    &Pose64::IDENTITY,
                    &mb,
                    &Pose64::from_affine(&pose),
                );
                assert_eq!(want, brute, "frame {k}");
            }
            let faces = current.face_count() + mb.face_count();
            if x < 1.0 {
                // Large for the meshes: the second query runs in world space.
                assert!(64 * want.len() >= faces, "frame {k}: {} pairs", want.len());
            }
            for repeat in 0..3 {
                let got = ctx
                    .collide_all(&a, &Affine3A::IDENTITY, &b, &pose, &opts)
                    .unwrap();
                assert_eq!(got, want, "margin {margin} frame {k} repeat {repeat}");
            }
        }
    }
}
