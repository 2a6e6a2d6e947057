//! parry3d-f64 side by side, in the same process and run as gprox (cargo feature `parry`).
//!
//! For every scene target parry can answer (collide-all, collide-any, distance, penetration;
//! object pairs and `"all"`), the same frames are run through parry3d-f64 0.25 the way a parry
//! user would: one `TriMesh` per distinct rigid mesh (built once), a `TriMesh` rebuilt from the
//! frame's vertices for deforming objects (the per-frame update), poses as isometries.
//!
//! - collide-all: `Bvh::leaf_pairs` of the two meshes' trees (B's node boxes moved into A's
//!   frame), leaf boxes re-checked, then `query::intersection_test` (GJK) per triangle pair;
//! - collide-any: `query::intersection_test` on the two `TriMesh`es;
//! - `"all"` targets: a `Bvh` over the objects' world boxes, self-traversed, then the pair query;
//! - distance: `query::distance` on the two `TriMesh`es;
//! - penetration: every vertex of one mesh projected onto the other (pseudo-normal inside test).
//!
//! parry works on f64 copies of the scene's f32 data; rotations are re-orthonormalised into
//! unit quaternions (gprox uses the f32 matrices as given), so near-touching pairs can differ.

use std::time::Instant;

use anyhow::{Context as _, Result};
use gprox::geometry::scene::{QueryKind, Scene};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::{Isometry, Point};
use parry3d_f64::na::{Matrix3, Rotation3, Translation3, UnitQuaternion};
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhNode, BvhWorkspace};
use parry3d_f64::query::{self, PointQueryWithLocation};
use parry3d_f64::shape::{Shape, TriMesh, TriMeshFlags};

use crate::report::FrameRecord;
use crate::run::Target;
use crate::stats::Summary;

/// The parry version this module is built against (Cargo.toml).
pub const VERSION: &str = "parry3d-f64 0.25";

/// A frame whose first parry call takes longer than this (ms) is not repeated.
const SLOW_MS: f64 = 200.0;

/// Whether parry runs `target` (query kinds parry has a mesh-mesh query for).
pub fn supports(target: &Target) -> bool {
    matches!(
        target.kind,
        QueryKind::CollideAll
            | QueryKind::CollideAny
            | QueryKind::Distance
            | QueryKind::Penetration
    ) && target.object.is_none()
}

/// parry's timings and results of one target.
#[derive(Clone, Debug)]
pub struct ParryData {
    /// One-off `TriMesh` construction (BVH included) of the rigid meshes, per repetition, ms.
    pub build_ms: Vec<f64>,
    /// Per-frame records (update = `TriMesh` rebuild of deforming objects).
    pub frames: Vec<FrameRecord>,
}

/// The isometry closest to a scene transform (`[R | t]` rows, R rounded to f32).
fn isometry(m: &[f32; 12]) -> Isometry<f64> {
    let r = Matrix3::new(
        m[0] as f64,
        m[1] as f64,
        m[2] as f64,
        m[4] as f64,
        m[5] as f64,
        m[6] as f64,
        m[8] as f64,
        m[9] as f64,
        m[10] as f64,
    );
    // Nearest rotation (iterative, started from the nearly orthonormal matrix itself).
    let rot = Rotation3::from_matrix_eps(&r, 1e-15, 100, Rotation3::from_matrix_unchecked(r));
    Isometry::from_parts(
        Translation3::new(m[3] as f64, m[7] as f64, m[11] as f64),
        UnitQuaternion::from_rotation_matrix(&rot),
    )
}

fn trimesh(positions: &[glam::Vec3], faces: &[[u32; 3]], flags: TriMeshFlags) -> Result<TriMesh> {
    let v = positions
        .iter()
        .map(|p| Point::new(p.x as f64, p.y as f64, p.z as f64))
        .collect();
    TriMesh::with_flags(v, faces.to_vec(), flags)
        .map_err(|e| anyhow::anyhow!("parry TriMesh: {e:?}"))
}

/// Intersecting triangle pairs of two posed meshes (stops at the first when `first_only`).
fn triangle_pairs(
    a: &TriMesh,
    pa: &Isometry<f64>,
    b: &TriMesh,
    pb: &Isometry<f64>,
    first_only: bool,
) -> u64 {
    let rel = pa.inv_mul(pb);
    let overlap = |na: &BvhNode, nb: &BvhNode| na.aabb().intersects(&nb.aabb().transform_by(&rel));
    let mut hits = 0;
    for (i, j) in a.bvh().leaf_pairs(b.bvh(), overlap) {
        let (ta, tb) = (a.triangle(i), b.triangle(j));
        // The traversal does not test the roots' boxes: re-check the leaves.
        if !ta.local_aabb().intersects(&tb.compute_aabb(&rel)) {
            continue;
        }
        if query::intersection_test(&Isometry::identity(), &ta, &rel, &tb).unwrap_or(false) {
            hits += 1;
            if first_only {
                break;
            }
        }
    }
    hits
}

/// Vertices of each mesh strictly inside the other, their largest and summed depth.
fn penetration(
    a: &TriMesh,
    pa: &Isometry<f64>,
    b: &TriMesh,
    pb: &Isometry<f64>,
) -> (u64, f64, f64) {
    let (mut n, mut max, mut sum) = (0u64, 0f64, 0f64);
    for (src, ps, dst, pd) in [(a, pa, b, pb), (b, pb, a, pa)] {
        let rel = pd.inv_mul(ps);
        for v in src.vertices() {
            let p = rel * v;
            let (proj, _) = dst.project_local_point_and_get_location(&p, false);
            if proj.is_inside {
                let d = (proj.point - p).norm();
                n += 1;
                max = max.max(d);
                sum += d;
            }
        }
    }
    (n, max, sum)
}

/// Runs `target` through parry on `frames`, `repeats` times each (the record keeps the median;
/// a query slower than 200 ms runs once).
pub fn run_target(
    scene: &Scene,
    target: &Target,
    frames: &[usize],
    repeats: usize,
) -> Result<ParryData> {
    let repeats = repeats.max(1);
    let flags = if target.kind == QueryKind::Penetration {
        TriMeshFlags::ORIENTED
    } else {
        TriMeshFlags::empty()
    };
    let objects: Vec<usize> = if target.all_pairs {
        (0..scene.object_count()).collect()
    } else {
        let mut o: Vec<usize> = target.pairs.iter().flatten().copied().collect();
        o.sort_unstable();
        o.dedup();
        o
    };
    // One TriMesh per distinct rigid mesh, built once.
    let mut build_ms = Vec::with_capacity(repeats);
    let mut rigid: Vec<Option<TriMesh>> = vec![None; scene.meshes().len()];
    for _ in 0..repeats {
        let t = Instant::now();
        let mut built: Vec<Option<TriMesh>> = vec![None; scene.meshes().len()];
        for &o in objects.iter().filter(|&&o| !scene.is_deforming(o)) {
            let k = scene.objects()[o].mesh;
            if built[k].is_none() {
                let m = &scene.meshes()[k];
                built[k] = Some(trimesh(m.positions(), m.faces(), flags)?);
            }
        }
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
        rigid = built;
    }
    let mut out = Vec::with_capacity(frames.len());
    for &f in frames {
        let mut update = Vec::with_capacity(repeats);
        let mut deformed: Vec<Option<TriMesh>> = vec![None; scene.object_count()];
        for _ in 0..repeats {
            let t = Instant::now();
            for &o in objects.iter().filter(|&&o| scene.is_deforming(o)) {
                deformed[o] = Some(trimesh(
                    scene.positions(f, o),
                    scene.mesh(o).faces(),
                    flags,
                )?);
            }
            update.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mesh = |o: usize| -> Result<&TriMesh> {
            deformed[o]
                .as_ref()
                .or(rigid[scene.objects()[o].mesh].as_ref())
                .context("parry: object without a mesh")
        };
        let poses: Vec<Isometry<f64>> = (0..scene.object_count())
            .map(|o| isometry(&scene.transform(f, o)))
            .collect();
        let mut times = Vec::with_capacity(repeats);
        let mut rec = FrameRecord::default();
        for _ in 0..repeats {
            let t = Instant::now();
            rec = query_frame(target, &poses, &mesh)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            // Slow calls (parry's mesh distance takes seconds) are timed once.
            if times[0] > SLOW_MS {
                break;
            }
        }
        let q = Summary::of(&times);
        out.push(FrameRecord {
            frame: f,
            update_ms: Summary::of(&update).median,
            query_ms: q.median,
            query_noise_pct: q.noise_pct,
            ..rec
        });
    }
    Ok(ParryData {
        build_ms,
        frames: out,
    })
}

/// One frame of one target (timings unset).
fn query_frame<'m>(
    target: &Target,
    poses: &[Isometry<f64>],
    mesh: &dyn Fn(usize) -> Result<&'m TriMesh>,
) -> Result<FrameRecord> {
    let pairs: Vec<[usize; 2]> = if target.all_pairs {
        // Broad phase: a parry Bvh over the objects' world boxes, self-traversed.
        let boxes: Vec<Aabb> = (0..poses.len())
            .map(|o| Ok(mesh(o)?.aabb(&poses[o])))
            .collect::<Result<_>>()?;
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
        let mut ws = BvhWorkspace::default();
        let mut p = Vec::new();
        bvh.traverse_bvtt_single_tree::<false>(&mut ws, &mut |i, j| {
            p.push([i.min(j) as usize, i.max(j) as usize]);
        });
        p.sort_unstable();
        p
    } else {
        target.pairs.clone()
    };
    let mut rec = FrameRecord::default();
    let (mut count, mut hit_pairs) = (0u64, Vec::new());
    let (mut inside, mut max_depth, mut sum_depth) = (0u64, 0f64, 0f64);
    for [a, b] in pairs {
        let (ma, mb, pa, pb) = (mesh(a)?, mesh(b)?, &poses[a], &poses[b]);
        let hit = match target.kind {
            QueryKind::CollideAll => {
                let n = triangle_pairs(ma, pa, mb, pb, false);
                count += n;
                n > 0
            }
            QueryKind::CollideAny => query::intersection_test(pa, ma, pb, mb)
                .map_err(|e| anyhow::anyhow!("parry intersection_test: {e:?}"))?,
            QueryKind::Distance => {
                let d = query::distance(pa, ma, pb, mb)
                    .map_err(|e| anyhow::anyhow!("parry distance: {e:?}"))?;
                rec.distance = Some(d);
                d == 0.0
            }
            QueryKind::Penetration => {
                let (n, m, s) = penetration(ma, pa, mb, pb);
                inside += n;
                max_depth = max_depth.max(m);
                sum_depth += s;
                n > 0
            }
            _ => anyhow::bail!("parry: query `{}` not supported", target.kind.as_str()),
        };
        if hit {
            hit_pairs.push([a as u32, b as u32]);
        }
    }
    rec.collide = Some(!hit_pairs.is_empty());
    match target.kind {
        QueryKind::CollideAll => rec.count = Some(count),
        QueryKind::Penetration => {
            rec.inside_vertices = Some(inside);
            rec.max_depth = Some(max_depth);
            rec.sum_depth = Some(sum_depth);
        }
        _ => {}
    }
    if target.all_pairs {
        rec.object_pairs = Some(hit_pairs);
    }
    Ok(rec)
}

/// `n` frames spread evenly over `frames` (all of them when `n >= frames.len()`).
pub fn pick_frames(frames: &[usize], n: usize) -> Vec<usize> {
    if n >= frames.len() {
        return frames.to_vec();
    }
    let mut out: Vec<usize> = (0..n).map(|k| frames[k * frames.len() / n]).collect();
    out.dedup();
    out
}

/// Runs parry on up to `max_frames` of the frames gprox ran (`ours`), compares every frame
/// with gprox's result and with the reference frames (`reference`, the brute-force oracle of
/// the peers' result file, where it has the frame).
pub fn side_by_side(
    scene: &Scene,
    target: &Target,
    ours: &[FrameRecord],
    reference: Option<&crate::peers::PeerQuery>,
    max_frames: usize,
    repeats: usize,
) -> Result<crate::report::ParryRecord> {
    let all: Vec<usize> = ours.iter().map(|f| f.frame).collect();
    let frames = pick_frames(&all, max_frames);
    let data = run_target(scene, target, &frames, repeats)?;
    let mut disagreements = Vec::new();
    let mut checked = 0;
    for p in &data.frames {
        if let Some(g) = ours.iter().find(|g| g.frame == p.frame) {
            checked += 1;
            disagreements.extend(crate::run::differences(g, p, "gprox", "parry"));
        }
        if let Some(r) = reference.and_then(|q| q.reference.get(&p.frame)) {
            disagreements.extend(crate::run::differences(
                &r.to_record(p.frame),
                p,
                "ref",
                "parry",
            ));
        }
    }
    let per =
        |k: fn(&FrameRecord) -> f64| Summary::of(&data.frames.iter().map(k).collect::<Vec<_>>());
    let total_ms = per(|f| f.update_ms + f.query_ms);
    let gprox: Vec<f64> = ours
        .iter()
        .filter(|g| frames.contains(&g.frame))
        .map(|g| g.update_ms + g.query_ms)
        .collect();
    let gprox_ms = crate::stats::median(&gprox);
    Ok(crate::report::ParryRecord {
        version: VERSION.into(),
        frames,
        build_ms: Summary::of(&data.build_ms),
        update_ms: per(|f| f.update_ms),
        query_ms: per(|f| f.query_ms),
        total_ms,
        gprox_ms,
        ratio: gprox_ms / total_ms.median.max(1e-12),
        frames_checked: checked,
        disagreements,
    })
}

/// Runs parry3d-f64 on the target gprox just ran, attaches the comparison to the target's runs
/// (`report.runs[first_run..]`) and records parry's disagreements (printed, never failures).
#[allow(clippy::too_many_arguments)]
pub(crate) fn attach(
    report: &mut crate::report::Report,
    first_run: usize,
    scene: &Scene,
    t: &Target,
    base: &crate::run::RunData,
    pq: Option<&crate::peers::PeerQuery>,
    args: &crate::Args,
    bars: &indicatif::MultiProgress,
) {
    let what = format!("{} {} {}", scene.name(), t.kind.as_str(), t.label);
    match side_by_side(scene, t, &base.frames, pq, args.parry_frames, args.repeats) {
        Ok(rec) => {
            for (k, d) in rec.disagreements.iter().enumerate() {
                if k < 5 {
                    let _ = bars.println(format!("parry3d-f64 disagrees: {what}: {d}"));
                }
                report.parry_disagreements.push(format!("{what}: {d}"));
            }
            if rec.disagreements.len() > 5 {
                let _ = bars.println(format!(
                    "parry3d-f64 disagrees: {what}: ... {} in all (see the report)",
                    rec.disagreements.len()
                ));
            }
            for r in &mut report.runs[first_run..] {
                let ours: Vec<f64> = r
                    .frames
                    .iter()
                    .filter(|f| rec.frames.contains(&f.frame))
                    .map(|f| f.update_ms + f.query_ms)
                    .collect();
                let gprox_ms = crate::stats::median(&ours);
                r.parry = Some(crate::report::ParryRecord {
                    gprox_ms,
                    ratio: gprox_ms / rec.total_ms.median.max(1e-12),
                    ..rec.clone()
                });
            }
        }
        Err(e) => report
            .parry_disagreements
            .push(format!("{what}: parry3d-f64 failed: {e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_frames_are_spread_and_distinct() {
        let f: Vec<usize> = (0..60).collect();
        assert_eq!(pick_frames(&f, 4), vec![0, 15, 30, 45]);
        assert_eq!(pick_frames(&f[..3], 10), vec![0, 1, 2]);
        assert_eq!(pick_frames(&[4, 14, 24], 2), vec![4, 14]);
    }

    #[test]
    fn isometry_of_an_exact_rotation_is_exact() {
        // 90° about z, translated: the isometry maps points like the matrix does.
        let m = [0f32, -1., 0., 1., 1., 0., 0., 2., 0., 0., 1., 3.];
        let p = isometry(&m) * Point::new(1.0, 2.0, 3.0);
        assert!((p - Point::new(-1.0, 3.0, 6.0)).norm() < 1e-12, "{p}");
    }
}
