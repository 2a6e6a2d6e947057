//! Tests of geometry images against independent oracles: certified spacing and containment,
//! hierarchy boxes and signs against brute force over the quads, the traversal against all quad
//! pairs, exact mode against the tessellated-mesh path (LBVH + exact triangles), self-collision
//! against brute force, and the OpenCASCADE pairs of `shared/data/trimmed`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use glam::{DVec2, DVec3, Vec3};
use gprox_bvh::aabb::Aabb;
use gprox_geometry::freeform::trimmed::load_trimmed_model;
use gprox_geometry::freeform::trimmed::{LoopRole, TrimLoop};
use gprox_geometry::freeform::{NurbsSurface, TrimmedFace};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

use super::hierarchy::{is_empty, DIRECTIONS};
use super::traverse::children;
use super::*;
use crate::collide::{collide_all, CollideOptions, CollisionObject};

/// A bicubic Bézier face over [0,1]² with heights `h` (4 x 4), placed by `shift`.
fn sheet(h: &[f64], shift: DVec3, swap: bool) -> TrimmedFace {
    let pts = (0..16)
        .map(|k| {
            let (i, j) = ((k / 4) as f64 / 3.0, (k % 4) as f64 / 3.0);
            let p = if swap {
                DVec3::new(i, h[k], j)
            } else {
                DVec3::new(i, j, h[k])
            };
            p + shift
        })
        .collect();
    TrimmedFace::untrimmed(NurbsSurface::bezier([3, 3], pts, None).unwrap()).unwrap()
}

fn image(id: u32, f: &TrimmedFace, eps: f64) -> (GeometryImage, HierarchyImage) {
    let img = GeometryImage::generate(id, f, &Pose64::IDENTITY, eps, None)
        .unwrap()
        .unwrap();
    let h = HierarchyImage::build_with_signs(&img);
    (img, h)
}

fn quads(img: &GeometryImage) -> impl Iterator<Item = [u32; 2]> + '_ {
    let (w, h) = (img.width() - 1, img.height() - 1);
    (0..h).flat_map(move |j| (0..w).map(move |i| [i as u32, j as u32]))
}

fn qbox(img: &GeometryImage, q: [u32; 2]) -> Aabb {
    img.quad_box(q[0] as usize, q[1] as usize)
}

fn brute(a: &GeometryImage, b: &GeometryImage, mode: Mode) -> Vec<TexelPair> {
    let mut out = Vec::new();
    for qa in quads(a) {
        for qb in quads(b) {
            if qbox(a, qa).overlaps(&qbox(b, qb))
                && (mode == Mode::Approximate || traverse::quads_intersect(a, qa, b, qb))
            {
                out.push(TexelPair {
                    face_a: a.face,
                    quad_a: qa,
                    face_b: b.face,
                    quad_b: qb,
                });
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether the surface of `f` over quad `q` of `img`, sampled 5 x 5, lies in the box `b`.
fn quad_in_box(img: &GeometryImage, f: &TrimmedFace, q: [u32; 2], b: &Aabb) -> bool {
    let (p0, p1) = (
        img.texel_param(q[0] as usize, q[1] as usize),
        img.texel_param(q[0] as usize + 1, q[1] as usize + 1),
    );
    (0..25).all(|k| {
        let u = p0.x + (p1.x - p0.x) * (k % 5) as f64 / 4.0;
        let v = p0.y + (p1.y - p0.y) * (k / 5) as f64 / 4.0;
        b.contains_point(f.point(u, v).as_vec3())
    })
}

fn heights() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-0.4f64..0.4, 16)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Neighbouring texels are within δ and the padding is σ with `√6 δ + √3 σ ≤ ε`; every point
    /// of a padded leaf box is within ε of the quad's first texel; the true surface inside sampled
    /// quads lies in their padded boxes.
    #[test]
    fn resolution_is_certified(h in heights(), eps in 0.02f64..0.1) {
        let f = sheet(&h, DVec3::ZERO, false);
        let (img, _) = image(0, &f, eps);
        let (w, ht) = (img.width(), img.height());
        let mut delta = 0.0f64;
        for j in 0..ht {
            for i in 0..w {
                let p = img.positions[j * w + i];
                if i + 1 < w { delta = delta.max(p.distance(img.positions[j * w + i + 1]) as f64); }
                if j + 1 < ht { delta = delta.max(p.distance(img.positions[(j + 1) * w + i]) as f64); }
            }
        }
        prop_assert!(6f64.sqrt() * delta + 3f64.sqrt() * img.spec.sigma <= eps * (1.0 + 1e-5));
        for q in quads(&img).step_by(7) {
            let b = qbox(&img, q);
            let p00 = img.quad(q[0] as usize, q[1] as usize)[0];
            // The box point farthest from p00: per axis the farther of min and max.
            let far = (Vec3::from(b.max) - p00).abs().max((Vec3::from(b.min) - p00).abs());
            prop_assert!(far.length() as f64 <= eps * (1.0 + 1e-4));
            prop_assert!(quad_in_box(&img, &f, q, &b));
        }
    }

    /// A fresh grid admits its own surface; after moving the control points to a more curved
    /// sheet the updated image's padded boxes still hold the true surface of every quad (the
    /// padding follows the moved surface's deviation bound), and `admits` tells whether the
    /// grid still certifies ε: when it says so, neighbours and deviation meet the split.
    #[test]
    fn deformed_update_keeps_boxes_certified(h0 in heights(), h1 in heights(), eps in 0.03f64..0.1) {
        let (f0, f1) = (sheet(&h0.iter().map(|x| 0.1 * x).collect::<Vec<_>>(), DVec3::ZERO, false), sheet(&h1, DVec3::ZERO, false));
        let (mut img, _) = image(0, &f0, eps);
        prop_assert!(img.spec.admits(f0.surface(), &Pose64::IDENTITY));
        img.update_positions(f1.surface(), &Pose64::IDENTITY).unwrap();
        for q in quads(&img).step_by(5) {
            let b = qbox(&img, q);
            prop_assert!(quad_in_box(&img, &f1, q, &b));
        }
        if img.spec.admits(f1.surface(), &Pose64::IDENTITY) {
            let w = img.width();
            let mut delta = 0.0f64;
            for (k, p) in img.positions.iter().enumerate() {
                if k % w + 1 < w { delta = delta.max(p.distance(img.positions[k + 1]) as f64); }
                if k + w < img.positions.len() { delta = delta.max(p.distance(img.positions[k + w]) as f64); }
            }
            let sigma = img.spec.deviation(f1.surface(), &Pose64::IDENTITY);
            prop_assert!(6f64.sqrt() * delta + 3f64.sqrt() * sigma <= eps * (1.0 + 1e-5));
        }
    }

    /// Clipping below the piece level keeps every part of the surface inside the clip box:
    /// each sampled point in the box has its parameters in the image's rectangle.
    #[test]
    fn clipped_rect_holds_the_surface_in_the_clip_box(h in heights(), at in (0.0f64..1.0, 0.0f64..1.0), r in 0.005f64..0.3) {
        let f = sheet(&h, DVec3::ZERO, false);
        let c = f.surface().point(at.0, at.1);
        let clip = Aabb { min: (c - DVec3::splat(r)).as_vec3().into(), max: (c + DVec3::splat(r)).as_vec3().into() };
        let spec = ImageSpec::new(0, f.surface(), &Pose64::IDENTITY, 0.05, Some(&clip)).unwrap();
        prop_assert!(spec.is_some());
        let rect = spec.unwrap().rect;
        for a in 0..=40 {
            for b in 0..=40 {
                let (u, v) = (a as f64 / 40.0, b as f64 / 40.0);
                if clip.contains_point(f.point(u, v).as_vec3()) {
                    prop_assert!(rect.u0 <= u && u <= rect.u1 && rect.v0 <= v && v <= rect.v1, "({u}, {v}) outside {rect:?}");
                }
            }
        }
    }

    /// The traversal returns exactly the quad pairs whose boxes overlap (approximate) or whose
    /// triangles intersect (exact), as brute force over all pairs finds them.
    #[test]
    fn traversal_matches_brute_force(ha in heights(), hb in heights(), dz in -0.2f64..0.2, swap in any::<bool>()) {
        let fa = sheet(&ha, DVec3::ZERO, false);
        let fb = sheet(&hb, DVec3::new(0.3, 0.2, dz), swap);
        let a = image(0, &fa, 0.3);
        let b = image(1, &fb, 0.25);
        for mode in [Mode::Approximate, Mode::Exact] {
            let got = collide_images((&a.0, &a.1), (&b.0, &b.1), mode);
            prop_assert_eq!(&got, &brute(&a.0, &b.0, mode));
        }
    }

    /// Self-collision equals brute force over all non-adjacent quad pairs (normal test off);
    /// with the normal test it reports a subset, and the same exact contacts on these sheets.
    #[test]
    fn self_collision_matches_brute_force(h in heights()) {
        // A sheet folded over itself: the second half is mirrored back above the first.
        let pts: Vec<DVec3> = (0..16).map(|k| {
            let (i, j) = (k / 4, k % 4);
            let x = [0.0, 1.0, 1.0, 0.1][i];
            let z = [0.0, 0.0, 0.6, -0.05][i] + 0.1 * h[k];
            DVec3::new(x, j as f64 / 3.0, z)
        }).collect();
        let f = TrimmedFace::untrimmed(NurbsSurface::bezier([3, 3], pts, None).unwrap()).unwrap();
        let (img, hi) = image(0, &f, 0.25);
        let z = |q: [u32; 2]| {
            let mut code = 0u64;
            for b in 0..16 { code |= (((q[0] >> b) & 1) as u64) << (2 * b) | (((q[1] >> b) & 1) as u64) << (2 * b + 1); }
            code
        };
        for mode in [Mode::Approximate, Mode::Exact] {
            let mut expect = Vec::new();
            for qa in quads(&img) {
                for qb in quads(&img) {
                    let adjacent = qa[0].abs_diff(qb[0]) <= 1 && qa[1].abs_diff(qb[1]) <= 1;
                    if z(qa) < z(qb) && !adjacent && qbox(&img, qa).overlaps(&qbox(&img, qb))
                        && (mode == Mode::Approximate || traverse::quads_intersect(&img, qa, &img, qb)) {
                        expect.push(TexelPair { face_a: 0, quad_a: qa, face_b: 0, quad_b: qb });
                    }
                }
            }
            expect.sort_unstable();
            prop_assert_eq!(&self_collide_image(&img, &hi, mode, false), &expect);
            let culled = self_collide_image(&img, &hi, mode, true);
            prop_assert!(culled.iter().all(|p| expect.binary_search(p).is_ok()));
            if mode == Mode::Exact {
                prop_assert_eq!(&culled, &expect);
            }
        }
    }
}

#[test]
fn hierarchy_matches_brute_force() {
    // Odd sizes and a trimmed face (stencil holes) exercise missing children and empty nodes.
    let h = [
        0.1, -0.2, 0.3, 0.0, 0.2, 0.1, -0.1, 0.3, 0.0, 0.2, 0.1, -0.3, 0.1, 0.0, 0.2, 0.1,
    ];
    let plain_face = sheet(&h, DVec3::ZERO, false);
    let mut loops = plain_face.loops().to_vec();
    let hole = [(0.3, 0.25), (0.3, 0.7), (0.62, 0.7), (0.62, 0.25)].map(|(u, v)| DVec2::new(u, v));
    loops.push(TrimLoop::polygon(LoopRole::Hole, &hole).unwrap());
    let holed = TrimmedFace::new(plain_face.surface().clone(), loops).unwrap();
    for f in [plain_face, holed] {
        hierarchy_matches_brute_force_on(&f);
    }
}

/// [`hierarchy_matches_brute_force`] on one face.
fn hierarchy_matches_brute_force_on(f: &TrimmedFace) {
    let (img, hi) = image(0, f, 0.037);
    assert!(img.width() % 2 == 0 || img.height() % 2 == 0 || hi.levels[0].width % 2 == 1);
    // Without signs: the same boxes, no sign bytes.
    let plain = HierarchyImage::build(&img);
    assert_eq!(plain.levels.len(), hi.levels.len());
    for (p, l) in plain.levels.iter().zip(&hi.levels) {
        assert_eq!(p.boxes, l.boxes);
        assert!(p.signs.is_empty() && l.signs.len() == l.boxes.len());
    }
    // The leaf level is not stored: its boxes come from the image.
    assert!(hi.levels.len() > 1 && hi.levels[0].boxes.is_empty());
    // A node's four quad boxes made from their shared texels are the quads' own boxes, in the
    // order and number the traversal lists the children (odd sizes: missing quads).
    let (qw, qh, uw) = (hi.levels[0].width, hi.levels[0].height, hi.levels[1].width);
    let leaves = hi.nodes(&img, 0);
    for y in 0..qh.div_ceil(2) {
        for x in 0..qw.div_ceil(2) {
            let block = img.block_boxes(x, y);
            for (c, b) in block.iter().enumerate() {
                let (i, j) = (2 * x + (c & 1), 2 * y + (c >> 1));
                let want = if i < qw && j < qh {
                    img.quad_box(i, j)
                } else {
                    Aabb::EMPTY
                };
                assert_eq!(*b, want, "quad ({i}, {j})");
            }
            let (idx, boxes, n) = leaves.children_boxes(uw, (y * uw + x) as u32);
            assert_eq!((idx, n), children(uw, &hi.levels[0], (y * uw + x) as u32));
            for c in 0..n {
                assert_eq!(boxes[c], leaves.aabb(idx[c]));
            }
        }
    }
    for (l, level) in hi.levels.iter().enumerate() {
        for y in 0..level.height {
            for x in 0..level.width {
                let (mut b, mut signs): (Aabb, Option<[i8; 4]>) = (Aabb::EMPTY, None);
                for q in quads(&img) {
                    if (q[0] as usize >> l, q[1] as usize >> l) != (x, y)
                        || is_empty(&qbox(&img, q))
                    {
                        continue;
                    }
                    b = b.merge(&qbox(&img, q));
                    let c = img.quad(q[0] as usize, q[1] as usize);
                    let n1 = (c[1] - c[0]).cross(c[3] - c[0]);
                    let n2 = (c[3] - c[0]).cross(c[2] - c[0]);
                    let s = DIRECTIONS.map(|d| {
                        let (a, b) = (n1.dot(d).signum(), n2.dot(d).signum());
                        if a == b && n1.dot(d) != 0.0 {
                            a as i8
                        } else {
                            0
                        }
                    });
                    signs = Some(match signs {
                        None => s,
                        Some(o) => std::array::from_fn(|k| if o[k] == s[k] { o[k] } else { 0 }),
                    });
                }
                let k = y * level.width + x;
                assert_eq!(
                    hi.node_box(&img, l, k as u32),
                    b,
                    "level {l} node ({x}, {y})"
                );
                if let (Some(s), false) = (signs, level.signs.is_empty()) {
                    assert_eq!(level.signs[k], s, "level {l} node ({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn exact_mode_matches_tessellated_mesh_path() {
    let ha = [
        0.1, -0.2, 0.3, 0.0, 0.2, 0.1, -0.1, 0.3, 0.0, 0.2, 0.1, -0.3, 0.1, 0.0, 0.2, 0.1,
    ];
    let hb = [
        0.0, 0.3, -0.1, 0.2, -0.2, 0.1, 0.2, 0.0, 0.3, -0.1, 0.0, 0.1, 0.2, 0.1, -0.2, 0.0,
    ];
    let a = image(0, &sheet(&ha, DVec3::ZERO, false), 0.03);
    let b = image(1, &sheet(&hb, DVec3::new(0.2, 0.3, 0.0), true), 0.03);
    let mesh = |img: &GeometryImage| {
        let w = img.width() as u32;
        let faces: Vec<[u32; 3]> = quads(img)
            .flat_map(|q| {
                let k = q[1] * w + q[0];
                [[k, k + 1, k + w + 1], [k, k + w + 1, k + w]]
            })
            .collect();
        TriMesh::new(img.positions.clone(), faces).unwrap()
    };
    let (ma, mb) = (mesh(&a.0), mesh(&b.0));
    let (ba, bb) = (gprox_bvh::lbvh::build(&ma), gprox_bvh::lbvh::build(&mb));
    let oa = CollisionObject::new(&ma, &ba, Pose64::IDENTITY).unwrap();
    let ob = CollisionObject::new(&mb, &bb, Pose64::IDENTITY).unwrap();
    let quad_of = |img: &GeometryImage, t: u32| {
        let k = t / 2;
        let w = img.width() as u32 - 1;
        [k % w, k / w]
    };
    let expect: BTreeSet<TexelPair> = collide_all(&oa, &ob, &CollideOptions::default())
        .into_iter()
        .map(|[x, y]| TexelPair {
            face_a: 0,
            quad_a: quad_of(&a.0, x),
            face_b: 1,
            quad_b: quad_of(&b.0, y),
        })
        .collect();
    assert!(!expect.is_empty());
    let got = collide_images((&a.0, &a.1), (&b.0, &b.1), Mode::Exact);
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), expect);
}

#[test]
fn deforming_update_keeps_stencil_and_moves_boxes() {
    let h = [0.0; 16];
    let f = sheet(&h, DVec3::ZERO, false);
    let (mut img, mut hi) = image(0, &f, 0.05);
    let stencil = img.quad_stencil.clone();
    let moved = f
        .surface()
        .map_points(|p| p + DVec3::new(0.0, 0.0, 0.5 * p.x * p.y));
    img.update_positions(&moved, &Pose64::IDENTITY).unwrap();
    hi.rebuild(&img);
    assert_eq!(img.quad_stencil, stencil);
    let fresh = HierarchyImage::build(&img);
    assert_eq!(hi.root(), fresh.root());
    assert!((hi.root().max[2] - (0.5 + img.pad)).abs() < 1e-5);
    let p = img.positions[img.positions.len() - 1];
    assert!(p.distance(Vec3::new(1.0, 1.0, 0.5)) < 1e-6);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The pad bounded through the posed control points (`image::leaf_pad`, shared with the
    /// device) is never below σ plus the rounding allowance of the largest sampled coordinate,
    /// for rational patches posed far from the origin.
    #[test]
    fn control_point_pad_covers_the_samples(
        h in heights(),
        w in proptest::collection::vec(0.5f64..2.0, 16),
        t in proptest::array::uniform3(-1e3f64..1e3),
    ) {
        let pts = (0..16).map(|k| DVec3::new((k / 4) as f64 / 3.0, (k % 4) as f64 / 3.0, h[k])).collect();
        let s = NurbsSurface::bezier([3, 3], pts, Some(w)).unwrap();
        let pose = Pose64 { rows: [[0.0, -1.0, 0.0, t[0]], [1.0, 0.0, 0.0, t[1]], [0.0, 0.0, 1.0, t[2]]] };
        let img = GeometryImage::generate(0, &TrimmedFace::untrimmed(s).unwrap(), &pose, 0.2, None).unwrap().unwrap();
        let max_abs = img.positions.iter().map(|p| f64::from(p.abs().max_element())).fold(0.0, f64::max);
        let need = (img.spec.sigma + 4.0 * max_abs * f64::from(f32::EPSILON)) * (1.0 - 1e-7);
        prop_assert!(f64::from(img.pad) >= need, "pad {} < {need}", img.pad);
    }
}

#[test]
fn bad_accuracy_is_an_error() {
    let f = sheet(&[0.0; 16], DVec3::ZERO, false);
    for eps in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            GeometryImage::generate(3, &f, &Pose64::IDENTITY, eps, None),
            Err(GeometryImageError::BadAccuracy { face: 3, .. })
        ));
    }
    assert!(matches!(
        GeometryImage::generate(2, &f, &Pose64::IDENTITY, 1e-9, None),
        Err(GeometryImageError::TooLarge { face: 2, .. })
    ));
}

pub(super) fn data_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/trimmed");
    d.join("pairs.json").is_file().then_some(d)
}

/// World control box of a whole model under a pose.
pub(super) fn model_box(faces: &[TrimmedFace], pose: &Pose64) -> Aabb {
    faces.iter().fold(Aabb::EMPTY, |b, f| {
        b.merge(&resolution::world_box(f.surface(), pose))
    })
}

pub(super) fn intersect(a: &Aabb, b: &Aabb) -> Aabb {
    Aabb {
        min: std::array::from_fn(|k| a.min[k].max(b.min[k])),
        max: std::array::from_fn(|k| a.max[k].min(b.max[k])),
    }
}

/// Images of every face of a model restricted to the overlap of the two models' boxes (§3).
pub(super) fn model_images(
    faces: &[TrimmedFace],
    pose: &Pose64,
    eps: f64,
    clip: &Aabb,
) -> Result<Vec<(GeometryImage, HierarchyImage)>, GeometryImageError> {
    clipped_images(faces, pose, eps, clip)
}

/// The stencil routine at an image's trim tolerance agrees with OpenCASCADE's classified trim
/// samples, except for samples within that tolerance of a trim curve.
#[test]
fn stencil_agrees_with_trim_samples() {
    let Some(dir) = data_dir() else {
        eprintln!("skipped: shared/data/trimmed not present");
        return;
    };
    for m in ["wavy_two_holes", "sliver", "boundary_touch"] {
        let model = load_trimmed_model(dir.join(m)).unwrap();
        let f = &model.faces[0];
        let img = GeometryImage::generate(0, f, &Pose64::IDENTITY, 0.05, None)
            .unwrap()
            .unwrap();
        let poly = f.flatten(img.spec.trim_tolerance).unwrap();
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&model.files[0]).unwrap()).unwrap();
        let s = &doc["trim_samples"];
        let n = s["u"].as_array().unwrap().len();
        let mut checked = 0;
        for k in 0..n {
            if let Some(off) = s["near"][k].as_array().and_then(|a| a[3].as_f64()) {
                if off.abs() <= 2.0 * img.spec.trim_tolerance {
                    continue;
                }
            }
            let (u, v) = (s["u"][k].as_f64().unwrap(), s["v"][k].as_f64().unwrap());
            let inside = poly.classify_grid(&[u], &[v])[0] == 1;
            let near = poly.edges().any(|(a, b, _, _)| {
                let p = glam::DVec2::new(u, v);
                let t = ((p - a).dot(b - a) / (b - a).length_squared().max(1e-300)).clamp(0.0, 1.0);
                p.distance(a + (b - a) * t) <= 2.0 * img.spec.trim_tolerance
            });
            if !near {
                assert_eq!(inside, s["state"][k] == "in", "{m} sample {k}");
                checked += 1;
            }
        }
        assert!(checked >= 150, "{m}: {checked}");
    }
}

/// Buffers reused across frames of a deforming pair give the answers of fresh traversals, and a
/// hierarchy rebuilt in place equals a fresh one, also when the grid size changes between them.
#[test]
fn reused_buffers_and_rebuilds_match_fresh_runs() {
    let mut bufs = TraversalBuffers::default();
    let mut out = Vec::new();
    let (mut ha, mut hb) = (HierarchyImage::default(), HierarchyImage::default());
    for (k, eps) in [0.05, 0.2, 0.08].into_iter().enumerate() {
        let t = k as f64 * 0.1;
        let h: Vec<f64> = (0..16)
            .map(|i| 0.3 * ((i as f64 + t) * 1.3).sin())
            .collect();
        let g: Vec<f64> = (0..16)
            .map(|i| 0.3 * ((i as f64 - t) * 0.7).cos())
            .collect();
        let (a, fa) = image(0, &sheet(&h, DVec3::ZERO, false), eps);
        let (b, _) = image(1, &sheet(&g, DVec3::new(0.2, 0.1, 0.0), false), eps);
        ha.rebuild(&a);
        hb.rebuild(&b);
        assert_eq!(ha.levels.len(), fa.levels.len());
        for (x, y) in ha.levels.iter().zip(&fa.levels) {
            assert_eq!(x.boxes, y.boxes);
        }
        collide_images_with((&a, &ha), (&b, &hb), Mode::Approximate, &mut bufs, &mut out);
        let expect = brute(&a, &b, Mode::Approximate);
        assert!(!expect.is_empty());
        assert_eq!(out, expect);
    }
}

/// The overlap of two boxes disjoint on one axis only is empty, whichever axis it is (the clip
/// of `model_images` and the harness is such an overlap); overlapping boxes are not.
#[test]
fn overlap_of_disjoint_boxes_is_empty_on_any_axis() {
    assert!(is_empty(&Aabb::EMPTY));
    for k in 0..3 {
        let a = Aabb {
            min: [0.0; 3],
            max: [1.0; 3],
        };
        let mut b = a;
        b.min[k] = 2.0;
        b.max[k] = 3.0;
        assert!(is_empty(&intersect(&a, &b)), "axis {k}");
        b.min[k] = 0.5;
        assert!(!is_empty(&intersect(&a, &b)), "axis {k}");
    }
}
