//! Geometry-image targets (`image-collide`, `image-self-collide`) of scenes with trimmed NURBS
//! objects: per frame the deforming faces get their control points (the update), then images,
//! hierarchies and traversals are made (the query) on the CPU, at one world-space accuracy
//! ε = [`IMAGE_EPSILON_REL`] × [`Scene::surface_size`].
//!
//! A collision pair samples only what can touch (§3 of Greß et al.): A's faces restricted to
//! the overlap of the two objects' control boxes, B's to the overlap with A's image boxes.

use std::time::Instant;

use anyhow::{Context as _, Result};
use gprox::bvh::aabb::Aabb;
use gprox::geometry::freeform::trimmed::TrimLoop;
use gprox::geometry::freeform::TrimmedFace;
use gprox::geometry::scene::{QueryKind, Scene, IMAGE_EPSILON_REL};
use gprox::geometry::transform::Pose64;
use gprox::query::geometry_image::resolution::world_box;
use gprox::query::geometry_image::{
    clipped_images, collide_models, self_collide_image, GeometryImage, HierarchyImage, Mode,
    TexelPair,
};

use crate::report::FrameRecord;
use crate::run::{check_repeat, timed_record, RunData, Target, Timing};

/// Whether `kind` is a geometry-image query.
pub fn is_image(kind: &QueryKind) -> bool {
    matches!(kind, QueryKind::ImageCollide | QueryKind::ImageSelfCollide)
}

/// The world-space accuracy of the image queries of `scene`.
pub fn epsilon(scene: &Scene) -> f64 {
    IMAGE_EPSILON_REL * scene.surface_size()
}

/// Whether a box holds no point (some axis inverted; an overlap of disjoint boxes).
fn is_empty(b: &Aabb) -> bool {
    (0..3).any(|k| b.min[k] > b.max[k])
}

fn overlap(a: &Aabb, b: &Aabb) -> Aabb {
    Aabb {
        min: std::array::from_fn(|k| a.min[k].max(b.min[k])),
        max: std::array::from_fn(|k| a.max[k].min(b.max[k])),
    }
}

/// The control box of a model's faces under `pose`.
fn model_box(faces: &[TrimmedFace], pose: &Pose64) -> Aabb {
    faces
        .iter()
        .fold(Aabb::EMPTY, |x, f| x.merge(&world_box(f.surface(), pose)))
}

/// The approximate-mode quad pairs of two posed trimmed objects and the texels sampled.
pub fn collide_pair(
    a: (&[TrimmedFace], &Pose64),
    b: (&[TrimmedFace], &Pose64),
    eps: f64,
) -> Result<(Vec<TexelPair>, usize)> {
    let all_a = model_box(a.0, a.1);
    let all_b = model_box(b.0, b.1);
    let clip = overlap(&all_a, &all_b);
    if is_empty(&clip) {
        return Ok((Vec::new(), 0));
    }
    let ia = clipped_images(a.0, a.1, eps, &clip)?;
    let roots = ia.iter().fold(Aabb::EMPTY, |x, (_, h)| x.merge(&h.root()));
    let clip_b = overlap(&clip, &roots);
    if is_empty(&clip_b) {
        return Ok((Vec::new(), texels(&ia)));
    }
    let ib = clipped_images(b.0, b.1, eps, &clip_b)?;
    let n = texels(&ia) + texels(&ib);
    Ok((collide_models(&ia, &ib, Mode::Approximate), n))
}

fn texels(imgs: &[(GeometryImage, HierarchyImage)]) -> usize {
    imgs.iter().map(|(i, _)| i.positions.len()).sum()
}

/// A face's image and hierarchy kept across frames with the trim loops they were made for.
pub type CachedImage = (Vec<TrimLoop>, GeometryImage, HierarchyImage);

/// The exact-mode self-intersecting quad pairs of every face of a posed object (normal test
/// on) and the texels sampled. `cache[k]` keeps face `k`'s image between calls: while its grid
/// still certifies ε for the moved control points ([`gprox::query::geometry_image::ImageSpec::admits`]) and the trim loops
/// are the same, only the positions and the hierarchy are remade.
pub fn self_collide(
    faces: &[TrimmedFace],
    pose: &Pose64,
    eps: f64,
    cache: &mut Vec<Option<CachedImage>>,
) -> Result<(Vec<TexelPair>, usize)> {
    cache.resize_with(faces.len(), || None);
    let mut out = Vec::new();
    let mut n = 0;
    for (k, f) in faces.iter().enumerate() {
        let slot = &mut cache[k];
        let keep = slot.as_ref().is_some_and(|(loops, img, _)| {
            img.spec.eps == eps
                && loops.as_slice() == f.loops()
                && img.spec.admits(f.surface(), pose)
        });
        if let (true, Some((_, img, h))) = (keep, slot.as_mut()) {
            img.update_positions(f.surface(), pose)?;
            h.rebuild(img);
        } else {
            *slot = GeometryImage::generate(k as u32, f, pose, eps, None)?.map(|img| {
                let h = HierarchyImage::build_with_signs(&img);
                (f.loops().to_vec(), img, h)
            });
        }
        let Some((_, img, h)) = slot.as_ref() else {
            continue;
        };
        n += img.positions.len();
        out.extend(self_collide_image(img, h, Mode::Exact, true));
    }
    out.sort_unstable();
    Ok((out, n))
}

fn fnv(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

fn hash_pairs(mut h: u64, a: usize, b: usize, pairs: &[TexelPair]) -> u64 {
    if pairs.is_empty() {
        return h;
    }
    h = fnv(h, ((a as u64) << 32) | b as u64);
    for p in pairs {
        h = fnv(h, (u64::from(p.face_a) << 32) | u64::from(p.face_b));
        h = fnv(h, (u64::from(p.quad_a[0]) << 32) | u64::from(p.quad_a[1]));
        h = fnv(h, (u64::from(p.quad_b[0]) << 32) | u64::from(p.quad_b[1]));
    }
    h
}

/// One frame's query on the faces of every object (`faces[o]`, empty for objects the target
/// does not use): the record, the result hash and the texels sampled.
fn frame(
    scene: &Scene,
    target: &Target,
    f: usize,
    faces: &[Vec<TrimmedFace>],
    eps: f64,
    cache: &mut Vec<Option<CachedImage>>,
) -> Result<(FrameRecord, u64, usize)> {
    let mut hash = 0xcbf2_9ce4_8422_2325;
    let (mut count, mut texels) = (0u64, 0usize);
    let mut hit_pairs = Vec::new();
    if let Some(o) = target.object {
        let (pairs, n) = self_collide(&faces[o], &scene.pose64(f, o), eps, cache)?;
        hash = hash_pairs(hash, o, o, &pairs);
        count = pairs.len() as u64;
        texels = n;
    } else {
        for &[a, b] in &target.pairs {
            let (pa, pb) = (scene.pose64(f, a), scene.pose64(f, b));
            let (pairs, n) = collide_pair((&faces[a], &pa), (&faces[b], &pb), eps)?;
            hash = hash_pairs(hash, a, b, &pairs);
            count += pairs.len() as u64;
            texels += n;
            if !pairs.is_empty() {
                hit_pairs.push([a as u32, b as u32]);
            }
        }
    }
    let rec = FrameRecord {
        frame: f,
        count: Some(count),
        collide: Some(count > 0),
        object_pairs: target.all_pairs.then_some(hit_pairs),
        ..Default::default()
    };
    Ok((rec, hash, texels))
}

/// Runs an image target over `frames` with `repeats` repetitions of every frame's update and
/// query (the build is the reading of the rest faces); `tick` is called once per frame.
/// `RunData::triangles` holds the most texels one frame sampled.
pub fn run_image_target(
    scene: &Scene,
    target: &Target,
    frames: &[usize],
    (repeats, timing): (usize, Timing),
    mut tick: impl FnMut(),
) -> Result<RunData> {
    let repeats = repeats.max(1);
    let eps = epsilon(scene);
    let mut used: Vec<usize> = target.pairs.iter().flatten().copied().collect();
    used.extend(target.object);
    let mut faces: Vec<Vec<TrimmedFace>> = vec![Vec::new(); scene.object_count()];
    let mut build_ms = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        for &o in &used {
            let s = scene.surfaces(o).with_context(|| {
                format!("object `{}` has no trimmed faces", scene.objects()[o].name)
            })?;
            faces[o] = s.faces().to_vec();
        }
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut data = RunData::new(build_ms, 0);
    // Self-collision keeps its images across frames (collision pairs clip them per frame).
    let mut cache = Vec::new();
    for &f in frames {
        let mut update = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let t = Instant::now();
            for &o in &used {
                let s = scene.surfaces(o).context("surface object")?;
                if s.is_deforming() {
                    faces[o] = s.faces_at(f)?;
                }
            }
            update.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut times = Vec::with_capacity(repeats);
        let mut result: Option<(FrameRecord, u64, usize)> = None;
        for _ in 0..repeats {
            let t = Instant::now();
            let r = frame(scene, target, f, &faces, eps, &mut cache)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            let prev = result.as_ref().map(|(prev, _, _)| prev);
            check_repeat(prev, &r.0, scene, target, f)?;
            result = Some(r);
        }
        let (rec, hash, texels) = result.context("no repetition ran")?;
        data.triangles = data.triangles.max(texels);
        // The query runs on the host: its wall-clock time is its time.
        data.push(
            timed_record(f, rec, [&update, &times, &times], timing, None),
            hash,
        );
        tick();
    }
    Ok(data)
}
