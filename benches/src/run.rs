//! Running one (scene, query target) on one backend configuration: build, per-frame update and
//! query, with repetitions.

use std::time::Instant;

use anyhow::{Context as _, Result};
use gprox::bvh::wide_rss::WideRssTree;
use gprox::geometry::scene::{Motion, QueryKind, QueryTargets, Scene};
use gprox::query::collide::CollideOptions;
use gprox::{Context, Model};

use crate::query::{distance_frame, query_frame, SelfSetup};
use crate::report::{DeviceOpsRecord, FrameRecord, Skipped};
use crate::stats::Summary;
use gprox::cuda::DeviceOps;

/// One measurable target of a scene query.
#[derive(Clone, Debug)]
pub struct Target {
    /// The query.
    pub kind: QueryKind,
    /// `"a|b"`, `"all"` or an object name (the peers' result files use the same labels).
    pub label: String,
    /// Object pairs to test (all unordered pairs for `"all"`).
    pub pairs: Vec<[usize; 2]>,
    /// `pairs: "all"`: a broad phase picks the pairs, results carry `object_pairs`.
    pub all_pairs: bool,
    /// The object of a single-object query (self-collision).
    pub object: Option<usize>,
}

impl Target {
    /// Whether `backend` can run this target (penetration and the geometry-image queries: CPU
    /// only so far; collision,
    /// collide-any, self-collision, CCD, distance, penetration field and `"all"` targets
    /// everywhere).
    pub fn runs_on(&self, backend: gprox::Backend) -> bool {
        let cpu_only = matches!(
            self.kind,
            QueryKind::Penetration | QueryKind::ImageCollide | QueryKind::ImageSelfCollide
        );
        !cpu_only || backend == gprox::Backend::Cpu
    }
}

/// Whether gprox implements `kind` in the harness yet; the reason when not.
///
/// Extension point: a new query gets a `Target` here and an arm in [`query_frame`].
pub fn supported(kind: &QueryKind) -> Result<(), String> {
    match kind {
        QueryKind::CollideAll
        | QueryKind::CollideAny
        | QueryKind::SelfCollide
        | QueryKind::Ccd
        | QueryKind::Distance
        | QueryKind::Penetration
        | QueryKind::PenetrationField
        | QueryKind::ImageCollide
        | QueryKind::ImageSelfCollide => Ok(()),
        QueryKind::Other(k) => Err(format!("unknown query kind `{k}`")),
    }
}

/// The targets of every query of `scene` the harness can run, and the ones it skips.
pub fn targets(scene: &Scene) -> (Vec<Target>, Vec<Skipped>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for q in scene.queries() {
        if let Err(why) = supported(&q.kind) {
            skipped.push(Skipped {
                scene: scene.name().to_string(),
                query: q.kind.as_str().to_string(),
                why,
            });
            continue;
        }
        let name = |i: usize| scene.objects()[i].name.clone();
        match &q.targets {
            QueryTargets::AllPairs => out.push(Target {
                kind: q.kind.clone(),
                label: "all".into(),
                pairs: scene.query_pairs(q),
                all_pairs: true,
                object: None,
            }),
            QueryTargets::Pairs(pairs) => {
                for &[a, b] in pairs {
                    out.push(Target {
                        kind: q.kind.clone(),
                        label: format!("{}|{}", name(a), name(b)),
                        pairs: vec![[a, b]],
                        all_pairs: false,
                        object: None,
                    });
                }
            }
            QueryTargets::Objects(objects)
                if matches!(
                    q.kind,
                    QueryKind::SelfCollide | QueryKind::Ccd | QueryKind::ImageSelfCollide
                ) =>
            {
                for &o in objects {
                    out.push(Target {
                        kind: q.kind.clone(),
                        label: name(o),
                        pairs: Vec::new(),
                        all_pairs: false,
                        object: Some(o),
                    });
                }
            }
            QueryTargets::Objects(_) => skipped.push(Skipped {
                scene: scene.name().to_string(),
                query: q.kind.as_str().to_string(),
                why: "single-object targets are only wired for `self` and `ccd`".into(),
            }),
        }
    }
    (out, skipped)
}

/// Timings and results of one target on one backend.
#[derive(Clone, Debug)]
pub struct RunData {
    /// Build time per repetition, ms.
    pub build_ms: Vec<f64>,
    /// Per-frame records.
    pub frames: Vec<FrameRecord>,
    /// Per frame: FNV-1a hash of the pair lists (collide-all), to compare backends exactly.
    pub pair_hashes: Vec<u64>,
    /// Triangles taking part.
    pub triangles: usize,
}

impl RunData {
    /// No frames yet: the build times and the triangles taking part.
    pub fn new(build_ms: Vec<f64>, triangles: usize) -> Self {
        Self {
            build_ms,
            frames: Vec::new(),
            pair_hashes: Vec::new(),
            triangles,
        }
    }

    /// Adds the next frame's record and pair hash.
    pub fn push(&mut self, record: FrameRecord, pair_hash: u64) {
        self.frames.push(record);
        self.pair_hashes.push(pair_hash);
    }
}

/// Objects of `target`, each mapped to a model slot: rigid objects share their mesh's model,
/// deforming objects get their own.
fn model_slots(scene: &Scene, target: &Target) -> (Vec<usize>, Vec<Option<usize>>) {
    let mut objects: Vec<usize> = target.pairs.iter().flatten().copied().collect();
    objects.extend(target.object);
    objects.sort_unstable();
    objects.dedup();
    let mut keys: Vec<(bool, usize)> = Vec::new();
    let mut slot = vec![None; scene.object_count()];
    for &o in &objects {
        let key = if scene.objects()[o].motion == Motion::Deforming {
            (true, o)
        } else {
            (false, scene.objects()[o].mesh)
        };
        let k = keys.iter().position(|&x| x == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        });
        slot[o] = Some(k);
    }
    // The first object of each slot represents it.
    let reps = (0..keys.len())
        .map(|k| {
            objects
                .iter()
                .copied()
                .find(|&o| slot[o] == Some(k))
                .unwrap_or(0)
        })
        .collect();
    (reps, slot)
}

/// Which of a frame's repeated calls give the frame's time.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// The median of the repetitions: every repetition after the first finds the caches as
    /// the one before left them (warm).
    #[default]
    Median,
    /// The first call of every frame only, as the peers' harness times every frame once
    /// (caches as the previous frame's query left them); the other repetitions still check
    /// that the result repeats.
    First,
}

impl Timing {
    /// The time of one frame from the times of its repetitions (0 for none).
    pub fn pick(self, times: &[f64]) -> f64 {
        match self {
            Timing::Median => Summary::of(times).median,
            Timing::First => times.first().copied().unwrap_or_default(),
        }
    }
}

/// Runs `target` over `frames` with `repeats` repetitions of the build and of every frame's
/// update and query, each frame timed as `timing` says; `tick` is called once per frame.
pub fn run_target(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    frames: &[usize],
    (repeats, timing): (usize, Timing),
    mut tick: impl FnMut(),
) -> Result<RunData> {
    if crate::image_query::is_image(&target.kind) {
        return crate::image_query::run_image_target(
            scene,
            target,
            frames,
            (repeats, timing),
            tick,
        );
    }
    let repeats = repeats.max(1);
    let (reps, slot) = model_slots(scene, target);
    let first = frames.first().copied().unwrap_or(0);
    let rest_mesh = |o: usize| -> Result<gprox::geometry::TriMesh> {
        let mut mesh = scene.mesh(o).clone();
        if scene.is_deforming(o) {
            mesh.set_positions(scene.positions(first, o).to_vec())?;
        }
        Ok(mesh)
    };
    let meshes: Vec<_> = reps.iter().map(|&o| rest_mesh(o)).collect::<Result<_>>()?;
    let mut build_ms = Vec::with_capacity(repeats);
    let mut models: Vec<Model> = Vec::new();
    let mut topology = None;
    let mut trees: Vec<WideRssTree> = Vec::new();
    // Distance on the CPU runs on eight-wide RSS trees built here (timed as the build); device backends go
    // through `Context::distance`, whose models keep their own distance trees.
    let is_distance = target.kind == QueryKind::Distance && ctx.backend() == gprox::Backend::Cpu;
    if is_distance {
        if let Some(&o) = reps.iter().find(|&&o| scene.is_deforming(o)) {
            anyhow::bail!(
                "distance on the deforming object `{}` is not supported yet",
                scene.objects()[o].name
            );
        }
    }
    for _ in 0..repeats {
        let input = meshes.clone();
        let t = Instant::now();
        if is_distance {
            // Distance runs on RSS trees (gprox_query::distance), not on the LBVH.
            trees = input
                .iter()
                .map(WideRssTree::build)
                .collect::<Result<_, _>>()?;
        } else {
            models = input
                .into_iter()
                .map(|m| ctx.model(m))
                .collect::<Result<_, _>>()?;
        }
        // Self-collision and CCD also need the mesh's adjacency (part of the one-off setup).
        topology = target.object.map(|o| SelfSetup::new(scene.mesh(o)));
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let slot_of = |o: usize| slot[o].context("object without a model");
    let deforming: Vec<(usize, usize)> = reps
        .iter()
        .enumerate()
        .filter(|(_, &o)| scene.is_deforming(o))
        .map(|(k, &o)| (k, o))
        .collect();
    let triangles = reps
        .iter()
        .map(|&o| scene.mesh(o).face_count())
        .sum::<usize>()
        + target
            .pairs
            .iter()
            .flatten()
            .filter(|&&o| !reps.contains(&o))
            .map(|&o| scene.mesh(o).face_count())
            .sum::<usize>();

    let opts = CollideOptions::default();
    let mut data = RunData::new(build_ms, triangles);
    // CCD of frame f moves the vertices from frame f to f + 1: the last frame has no step.
    let steps = |f: &&usize| target.kind != QueryKind::Ccd || **f + 1 < scene.frame_count();
    for &f in frames.iter().filter(steps) {
        let mut update = Vec::with_capacity(repeats);
        let mut update_ops = None;
        for _ in 0..repeats {
            let before = ctx.device_ops();
            let t = Instant::now();
            let (done, gpu_ms) = ctx.time_on_device(|| -> Result<()> {
                for &(k, o) in &deforming {
                    ctx.update(&mut models[k], scene.positions(f, o))?;
                }
                Ok(())
            })?;
            done?;
            // On a GPU the time between CUDA events on its stream, else the host's clock.
            update.push(gpu_ms.unwrap_or(t.elapsed().as_secs_f64() * 1e3));
            update_ops = ctx.device_ops().zip(before).map(|(after, b)| after - b);
        }
        let mut times = Vec::with_capacity(repeats);
        let mut wall = Vec::with_capacity(repeats);
        let mut query_ops = None;
        let mut result = None;
        for _ in 0..repeats {
            let before = ctx.device_ops();
            let t = Instant::now();
            let (r, gpu_ms) = ctx.time_on_device(|| {
                if is_distance {
                    distance_frame(scene, target, f, &meshes, &trees, &slot_of)
                } else {
                    query_frame(
                        ctx,
                        scene,
                        target,
                        f,
                        &models,
                        &slot_of,
                        &opts,
                        topology.as_ref(),
                    )
                }
            })?;
            let r = r?;
            let wall_ms = t.elapsed().as_secs_f64() * 1e3;
            times.push(gpu_ms.unwrap_or(wall_ms));
            wall.push(wall_ms);
            query_ops = ctx.device_ops().zip(before).map(|(after, b)| after - b);
            check_repeat(
                result.as_ref().map(|(prev, _)| prev),
                &r.0,
                scene,
                target,
                f,
            )?;
            result = Some(r);
        }
        let (rec, hash) = result.context("no repetition ran")?;
        let device_ops = match (update_ops, query_ops) {
            (Some(u), Some(q)) => Some(DeviceOpsRecord::of(&DeviceOps {
                launches: u.launches + q.launches,
                syncs: u.syncs + q.syncs,
                h2d_bytes: u.h2d_bytes + q.h2d_bytes,
                d2h_bytes: u.d2h_bytes + q.d2h_bytes,
                allocations: u.allocations + q.allocations,
            })),
            _ => None,
        };
        data.push(
            timed_record(f, rec, [&update, &times, &wall], timing, device_ops),
            hash,
        );
        tick();
    }
    Ok(data)
}

/// Checks that a repetition of frame `f`'s query gave the same result as the one before it
/// (`prev`, none for the first).
pub fn check_repeat(
    prev: Option<&FrameRecord>,
    next: &FrameRecord,
    scene: &Scene,
    target: &Target,
    f: usize,
) -> Result<()> {
    if let Some(prev) = prev {
        anyhow::ensure!(
            same_result(prev, next),
            "{} {} frame {f}: repeated query gave a different result",
            scene.name(),
            target.label
        );
    }
    Ok(())
}

/// Frame `f`'s record `rec` with the times of its repeated update, query and query
/// wall-clock times (ms) picked by `timing`, the query's noise and the device operations.
pub fn timed_record(
    f: usize,
    rec: FrameRecord,
    [update, query, wall]: [&[f64]; 3],
    timing: Timing,
    device_ops: Option<DeviceOpsRecord>,
) -> FrameRecord {
    let q = Summary::of(query);
    FrameRecord {
        frame: f,
        update_ms: timing.pick(update),
        query_ms: timing.pick(query),
        query_wall_ms: timing.pick(wall),
        device_ops,
        query_noise_pct: q.noise_pct,
        ..rec
    }
}

/// Whether two frame records of different backends give the same answer: [`same_result`]
/// except the closest points, which may be any of several triangle pairs tied at the minimum
/// distance (the distance itself must be equal).
pub fn same_answer(a: &FrameRecord, b: &FrameRecord) -> bool {
    let points_free = |r: &FrameRecord| FrameRecord {
        p1: None,
        p2: None,
        ..r.clone()
    };
    same_result(&points_free(a), &points_free(b))
}

/// Whether two frame records hold the same result (timings ignored).
pub fn same_result(a: &FrameRecord, b: &FrameRecord) -> bool {
    a.count == b.count
        && a.collide == b.collide
        && a.object_pairs == b.object_pairs
        && a.distance == b.distance
        && a.toi == b.toi
        && a.p1 == b.p1
        && a.p2 == b.p2
        && a.inside_vertices == b.inside_vertices
        && a.max_depth == b.max_depth
        && a.sum_depth == b.sum_depth
}

/// Every difference of `theirs` (named `who`) from `ours` on one frame: counts, flags and
/// object pairs exactly, distances to 1e-5 relative, penetration within 2 vertices and 1e-4
/// depth (the rules of `shared/peers/run_peers.py`). Timings are ignored.
pub fn differences(ours: &FrameRecord, theirs: &FrameRecord, me: &str, who: &str) -> Vec<String> {
    let f = ours.frame;
    let mut d = Vec::new();
    if let (Some(a), Some(b)) = (theirs.count, ours.count) {
        if a != b {
            d.push(format!("f{f}: count {a} ({who}) vs {b} ({me})"));
        }
    }
    if let (Some(a), Some(b)) = (theirs.collide, ours.collide) {
        if a != b {
            d.push(format!("f{f}: collide {a} ({who}) vs {b} ({me})"));
        }
    }
    if let (Some(a), Some(b)) = (&theirs.object_pairs, &ours.object_pairs) {
        if a != b {
            let missing = b.iter().filter(|p| !a.contains(p)).count();
            let extra = a.iter().filter(|p| !b.contains(p)).count();
            d.push(format!(
                "f{f}: object pairs {} ({who}) vs {} ({me}): {missing} missing, {extra} extra",
                a.len(),
                b.len()
            ));
        }
    }
    if let (Some(a), Some(b)) = (theirs.distance, ours.distance) {
        if (a - b).abs() > 1e-5 * b.abs().max(1e-12) {
            d.push(format!(
                "f{f}: distance {a:.9} ({who}) vs {b:.9} ({me}), diff {:.2e}",
                a - b
            ));
        }
    }
    if let (Some(a), Some(b)) = (theirs.inside_vertices, ours.inside_vertices) {
        let (ma, mb) = (
            theirs.max_depth.unwrap_or(0.0),
            ours.max_depth.unwrap_or(0.0),
        );
        if a.abs_diff(b) > 2 || (ma - mb).abs() > 1e-4 {
            d.push(format!(
                "f{f}: inside {a} / max depth {ma:.6} ({who}) vs {b} / {mb:.6} ({me})"
            ));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::Timing;

    #[test]
    fn timing_picks_the_first_call_or_the_median() {
        let times = [5.0, 1.0, 2.0, 9.0, 3.0];
        assert_eq!(Timing::First.pick(&times), 5.0);
        assert_eq!(Timing::Median.pick(&times), 3.0);
        assert_eq!(Timing::First.pick(&[]), 0.0);
    }
}
