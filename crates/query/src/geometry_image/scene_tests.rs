//! Scene-level tests of the geometry-image queries: the built-in folding sheet's
//! self-collision against its certified truth, and two models of `shared/data/trimmed` posed
//! to interpenetrate, touch and stay apart, against the tessellated-mesh path (LBVH + exact
//! triangles, and the exact mesh distance).

use glam::{DMat3, DVec3};
use gprox_bvh::{bv_tree::BvTree, rss::Rss};
use gprox_geometry::freeform::trimmed::load_trimmed_model;
use gprox_geometry::freeform::{FreeformModel, TrimmedFace};
use gprox_geometry::scene::{Scene, IMAGE_EPSILON_REL};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;

use super::tests::{data_dir, intersect, model_box, model_images};
use super::*;
use crate::collide::{collide_all, CollideOptions, CollisionObject};
use crate::distance::{distance, DistanceObject, DistanceOptions};

/// Exact-mode self-collision of the folding sheet (normal test on, as the harness runs it)
/// reports contacts in exactly the frames its certified truth says the sheet passes through
/// itself (frames sampled here: the images have ~3 M texels; the harness runs all 24).
#[test]
fn folding_sheet_self_collision_matches_truth() {
    let s = Scene::builtin_folding_sheet();
    let truth = s
        .truth()
        .get("image-self-collide", "sheet")
        .and_then(|t| t.collide.clone())
        .expect("decided truth");
    let eps = IMAGE_EPSILON_REL * s.surface_size();
    for f in [0, 7, 13, 14, 19, 23] {
        let hit = truth[f];
        let face = s.surfaces(0).unwrap().faces_at(f).unwrap().remove(0);
        let img = GeometryImage::generate(0, &face, &s.pose64(f, 0), eps, None)
            .unwrap()
            .unwrap();
        let h = HierarchyImage::build_with_signs(&img);
        let found = self_collide_image(&img, &h, Mode::Exact, true);
        assert_eq!(!found.is_empty(), hit, "frame {f}: {} pairs", found.len());
    }
}

/// `[R | t]` of a rotation about `axis` by `deg` degrees, then a translation.
fn pose(axis: DVec3, deg: f64, t: DVec3) -> Pose64 {
    let r = DMat3::from_axis_angle(axis.normalize(), deg.to_radians());
    let mut p = Pose64::IDENTITY;
    for (i, row) in p.rows.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().take(3).enumerate() {
            *x = r.col(j)[i];
        }
        row[3] = t[i];
    }
    p
}

/// The triangles of a `n × n` grid over each face's domain whose three corners lie in the
/// face (an inner approximation of the trimmed faces; chords of the surfaces).
fn trimmed_mesh(faces: &[TrimmedFace], n: usize) -> TriMesh {
    let (mut pos, mut tris) = (Vec::new(), Vec::new());
    for f in faces {
        let d = f.surface().domain();
        let base = pos.len() as u32;
        let mut inside = Vec::new();
        for i in 0..=n {
            for j in 0..=n {
                let u = d.u0 + (d.u1 - d.u0) * i as f64 / n as f64;
                let v = d.v0 + (d.v1 - d.v0) * j as f64 / n as f64;
                pos.push(f.point(u, v).as_vec3());
                inside.push(f.contains(u, v));
            }
        }
        let k = |i: usize, j: usize| i * (n + 1) + j;
        for i in 0..n {
            for j in 0..n {
                for t in [
                    [k(i, j), k(i + 1, j), k(i + 1, j + 1)],
                    [k(i, j), k(i + 1, j + 1), k(i, j + 1)],
                ] {
                    if t.iter().all(|&x| inside[x]) {
                        tris.push(t.map(|x| base + x as u32));
                    }
                }
            }
        }
    }
    TriMesh::new(pos, tris).unwrap()
}

/// Exact distance between two posed meshes.
fn mesh_distance(a: &TriMesh, pa: Pose64, b: &TriMesh, pb: Pose64) -> f64 {
    let (ta, tb) = (BvTree::<Rss>::build(a), BvTree::<Rss>::build(b));
    let oa = DistanceObject {
        mesh: a,
        tree: &ta,
        pose: pa,
    };
    let ob = DistanceObject {
        mesh: b,
        tree: &tb,
        pose: pb,
    };
    distance(&oa, &ob, &DistanceOptions::default())
        .unwrap()
        .distance
}

/// The image query of two posed models (images clipped to the overlap of their boxes, §3).
fn image_pairs(
    fa: &[TrimmedFace],
    pa: &Pose64,
    fb: &[TrimmedFace],
    pb: &Pose64,
    eps: f64,
    mode: Mode,
) -> Vec<TexelPair> {
    let clip = intersect(&model_box(fa, pa), &model_box(fb, pb));
    if hierarchy::is_empty(&clip) {
        return Vec::new();
    }
    let ia = model_images(fa, pa, eps, &clip).unwrap();
    let ib = model_images(fb, pb, eps, &clip).unwrap();
    collide_models(&ia, &ib, Mode::Approximate)
        .into_iter()
        .filter(|t| {
            mode == Mode::Approximate || {
                let a = ia.iter().find(|x| x.0.face == t.face_a).unwrap();
                let b = ib.iter().find(|x| x.0.face == t.face_b).unwrap();
                traverse::quads_intersect(&a.0, t.quad_a, &b.0, t.quad_b)
            }
        })
        .collect()
}

/// The plate and the slotted block of `shared/data/trimmed`, posed to interpenetrate, to touch
/// (the block standing on the plate) and to stay apart by more than 2ε (lifted, and tilted
/// over the plate's edge so that their boxes overlap): contacts are found whenever the
/// tessellated trimmed faces intersect or touch, and nothing when the exact distance of the
/// tessellated untrimmed surfaces (a superset, less its tolerance) exceeds 2ε.
#[test]
fn posed_data_models_agree_with_the_mesh_path() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    let plate = load_trimmed_model(dir.join("plate")).unwrap().faces;
    let block = load_trimmed_model(dir.join("slotted_block")).unwrap().faces;
    // 1% of the plate's largest side (2): the images of the fillets stay within MAX_SIDE.
    let eps = 0.02;
    let (mp, mb) = (trimmed_mesh(&plate, 40), trimmed_mesh(&block, 40));
    let tol = 0.1 * eps;
    let untrimmed = |faces: &[TrimmedFace]| {
        FreeformModel::new(faces.iter().map(|f| f.surface().clone()).collect())
            .unwrap()
            .tessellate(tol)
            .unwrap()
    };
    let (up, ub) = (untrimmed(&plate), untrimmed(&block));
    let id = Pose64::IDENTITY;

    // Interpenetrating: the block sunk 0.25 into the plate, turned 25° about z.
    let sunk = pose(DVec3::Z, 25.0, DVec3::new(0.55, 0.05, -0.1));
    let (ba, bb) = (gprox_bvh::lbvh::build(&mp), gprox_bvh::lbvh::build(&mb));
    let oa = CollisionObject::new(&mp, &ba, id).unwrap();
    let ob = CollisionObject::new(&mb, &bb, sunk).unwrap();
    assert!(!collide_all(&oa, &ob, &CollideOptions::default()).is_empty());
    assert!(!image_pairs(&plate, &id, &block, &sunk, eps, Mode::Approximate).is_empty());
    assert!(!image_pairs(&plate, &id, &block, &sunk, eps, Mode::Exact).is_empty());

    // Touching: the block's bottom (z = 0) on the plate's top (z = 0.15).
    let on = pose(DVec3::Z, 0.0, DVec3::new(0.3, 0.0, 0.15));
    assert!(mesh_distance(&mp, id, &mb, on) < 1e-6);
    assert!(!image_pairs(&plate, &id, &block, &on, eps, Mode::Approximate).is_empty());

    // Apart: lifted 4ε above the plate; tilted 20° about y over the plate's +x edge with its
    // lowest edge beyond the plate and below its top, lifted until 4ε from it.
    let lifted = pose(DVec3::Z, 0.0, DVec3::new(0.3, 0.0, 0.15 + 4.0 * eps));
    let mut z = 0.0;
    let tilted = |z: f64| pose(DVec3::Y, 20.0, DVec3::new(1.05, 0.0, z));
    for _ in 0..4 {
        let d = mesh_distance(&up, id, &ub, tilted(z));
        z -= (d - 4.0 * eps) / 20f64.to_radians().cos();
    }
    let tilted = tilted(z);
    let clip = intersect(&model_box(&plate, &id), &model_box(&block, &tilted));
    assert!(!hierarchy::is_empty(&clip), "the tilted boxes overlap");
    for (name, p) in [("lifted", lifted), ("tilted", tilted)] {
        let d = mesh_distance(&up, id, &ub, p) - 2.0 * tol - 1e-6;
        assert!(d > 2.0 * eps, "{name}: {d}");
        let found = image_pairs(&plate, &id, &block, &p, eps, Mode::Approximate);
        assert!(found.is_empty(), "{name}: {} pairs at {d}", found.len());
        // Sunk by 4ε more than the gap, the same pose interpenetrates and is found.
        let mut q = p;
        q.rows[2][3] -= d + 4.0 * eps;
        let ob = CollisionObject::new(&mb, &bb, q).unwrap();
        if !collide_all(&oa, &ob, &CollideOptions::default()).is_empty() {
            assert!(!image_pairs(&plate, &id, &block, &q, eps, Mode::Approximate).is_empty());
        }
    }
}
