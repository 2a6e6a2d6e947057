//! Running one (scene, query target) on one backend configuration: build, per-frame update and
//! query, with repetitions.

use std::time::Instant;

use anyhow::{Context as _, Result};
use gprox::bvh::{bv_tree::BvTree, rss::Rss};
use gprox::geometry::scene::{Motion, QueryKind, QueryTargets, Scene};
use gprox::query::broad_phase::{broad_phase_pairs, try_collide_many, try_collide_many_any};
use gprox::query::ccd::{ccd_self_with_bvh, CcdOptions};
use gprox::query::collide::{CollideOptions, CollisionObject};
use gprox::query::distance::{distance, DistanceObject, DistanceOptions};
use gprox::query::self_collide::{self_collide, Topology};
use gprox::{Context, Model};

use crate::report::{FrameRecord, Skipped};
use crate::stats::Summary;

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
    /// Whether `backend` can run this target (single-object queries: CPU only so far).
    pub fn runs_on(&self, backend: gprox::Backend) -> bool {
        let cpu_only = self.object.is_some() || self.kind == QueryKind::Distance;
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
        | QueryKind::Distance => Ok(()),
        QueryKind::Penetration => Err("not wired into the harness yet".into()),
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
                if matches!(q.kind, QueryKind::SelfCollide | QueryKind::Ccd) =>
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

fn fnv(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

/// Runs `target` over `frames` with `repeats` repetitions of the build and of every frame's
/// update and query; `tick` is called once per frame.
pub fn run_target(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    frames: &[usize],
    repeats: usize,
    mut tick: impl FnMut(),
) -> Result<RunData> {
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
    let mut trees: Vec<BvTree<Rss>> = Vec::new();
    let is_distance = target.kind == QueryKind::Distance;
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
            trees = input.iter().map(BvTree::<Rss>::build).collect();
        } else {
            models = input
                .into_iter()
                .map(|m| ctx.model(m))
                .collect::<Result<_, _>>()?;
        }
        // Self-collision also needs the mesh's adjacency (part of its one-off setup).
        topology = target.object.map(|o| {
            let m = scene.mesh(o);
            Topology::new(m.faces(), m.vertex_count())
        });
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
    let mut out = Vec::with_capacity(frames.len());
    let mut hashes = Vec::with_capacity(frames.len());
    // CCD of frame f moves the vertices from frame f to f + 1: the last frame has no step.
    let steps = |f: &&usize| target.kind != QueryKind::Ccd || **f + 1 < scene.frame_count();
    for &f in frames.iter().filter(steps) {
        let mut update = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let t = Instant::now();
            for &(k, o) in &deforming {
                ctx.update(&mut models[k], scene.positions(f, o))?;
            }
            update.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut times = Vec::with_capacity(repeats);
        let mut result = None;
        for _ in 0..repeats {
            let t = Instant::now();
            let r = if is_distance {
                distance_frame(scene, target, f, &meshes, &trees, &slot_of)?
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
                )?
            };
            times.push(t.elapsed().as_secs_f64() * 1e3);
            if let Some((prev, _)) = &result {
                anyhow::ensure!(
                    same_result(prev, &r.0),
                    "{} {} frame {f}: repeated query gave a different result",
                    scene.name(),
                    target.label
                );
            }
            result = Some(r);
        }
        let (rec, hash) = result.context("no repetition ran")?;
        let q = Summary::of(&times);
        out.push(FrameRecord {
            frame: f,
            update_ms: Summary::of(&update).median,
            query_ms: q.median,
            query_noise_pct: q.noise_pct,
            ..rec
        });
        hashes.push(hash);
        tick();
    }
    Ok(RunData {
        build_ms,
        frames: out,
        pair_hashes: hashes,
        triangles,
    })
}

/// Whether two frame records hold the same result (timings ignored).
pub fn same_result(a: &FrameRecord, b: &FrameRecord) -> bool {
    a.count == b.count
        && a.collide == b.collide
        && a.object_pairs == b.object_pairs
        && a.distance == b.distance
        && a.toi == b.toi
}

/// Exact minimum distance of one frame (the target's single pair).
fn distance_frame(
    scene: &Scene,
    target: &Target,
    f: usize,
    meshes: &[gprox::geometry::TriMesh],
    trees: &[BvTree<Rss>],
    slot_of: &dyn Fn(usize) -> Result<usize>,
) -> Result<(FrameRecord, u64)> {
    let &[a, b] = target
        .pairs
        .first()
        .context("distance target without a pair")?;
    let (sa, sb) = (slot_of(a)?, slot_of(b)?);
    let oa = DistanceObject {
        mesh: &meshes[sa],
        tree: &trees[sa],
        pose: scene.pose64(f, a),
    };
    let ob = DistanceObject {
        mesh: &meshes[sb],
        tree: &trees[sb],
        pose: scene.pose64(f, b),
    };
    let r = distance(&oa, &ob, &DistanceOptions::default())?;
    let rec = FrameRecord {
        frame: f,
        distance: Some(r.distance),
        collide: Some(r.distance == 0.0),
        ..Default::default()
    };
    Ok((rec, r.distance.to_bits()))
}

/// One query of one frame: the result record (timings unset) and a hash of the pair lists.
#[allow(clippy::too_many_arguments)]
fn query_frame(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
    opts: &CollideOptions,
    topology: Option<&Topology>,
) -> Result<(FrameRecord, u64)> {
    if let (Some(o), Some(topo), QueryKind::Ccd) = (target.object, topology, &target.kind) {
        let m = &models[slot_of(o)?];
        let end = scene.positions(f + 1, o);
        let r = ccd_self_with_bvh(m.mesh(), end, topo, m.bvh(), &CcdOptions::default())?;
        let toi = r.earliest.map_or(1.0, |t| t.t_lo);
        let rec = FrameRecord {
            frame: f,
            toi: Some(toi),
            collide: Some(r.earliest.is_some()),
            ..Default::default()
        };
        return Ok((rec, toi.to_bits()));
    }
    if let (Some(o), Some(topo)) = (target.object, topology) {
        let m = &models[slot_of(o)?];
        let r = self_collide(m.mesh(), m.bvh(), topo, None)?;
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for [i, j] in &r.pairs {
            hash = fnv(hash, ((*i as u64) << 32) | *j as u64);
        }
        let rec = FrameRecord {
            frame: f,
            count: Some(r.pairs.len() as u64),
            collide: Some(!r.pairs.is_empty()),
            ..Default::default()
        };
        return Ok((rec, hash));
    }
    if target.all_pairs {
        return all_pairs_frame(ctx, scene, target, f, models, slot_of, opts);
    }
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut count = 0u64;
    let mut hit_pairs = Vec::new();
    for &[a, b] in &target.pairs {
        let (ma, mb) = (&models[slot_of(a)?], &models[slot_of(b)?]);
        let (pa, pb) = (scene.pose(f, a), scene.pose(f, b));
        let hit = match target.kind {
            QueryKind::CollideAll => {
                let found = ctx.collide_all(ma, &pa, mb, &pb, opts)?;
                count += found.len() as u64;
                hash = hash_pairs(hash, a as u32, b as u32, &found);
                !found.is_empty()
            }
            QueryKind::CollideAny => ctx.collide_any(ma, &pa, mb, &pb, opts)?,
            _ => anyhow::bail!("query `{}` is not supported", target.kind.as_str()),
        };
        if hit {
            hit_pairs.push([a as u32, b as u32]);
            if target.kind == QueryKind::CollideAny {
                break;
            }
        }
    }
    let rec = FrameRecord {
        frame: f,
        count: (target.kind == QueryKind::CollideAll).then_some(count),
        collide: Some(!hit_pairs.is_empty()),
        ..Default::default()
    };
    Ok((rec, hash))
}

/// Folds one object pair's non-empty contact list into the FNV-1a hash.
fn hash_pairs(mut hash: u64, a: u32, b: u32, found: &[[u32; 2]]) -> u64 {
    if !found.is_empty() {
        hash = fnv(hash, ((a as u64) << 32) | b as u64);
        for [i, j] in found {
            hash = fnv(hash, ((*i as u64) << 32) | *j as u64);
        }
    }
    hash
}

/// A `pairs: "all"` frame: the library's broad phase
/// ([`gprox::query::broad_phase`]); on the CPU backend the whole query is
/// `collide_many` / `collide_many_any`, on other backends the broad-phase candidates go through
/// the backend's narrow phase one object pair at a time.
fn all_pairs_frame(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
    opts: &CollideOptions,
) -> Result<(FrameRecord, u64)> {
    let objects = (0..scene.object_count())
        .map(|o| {
            let m = &models[slot_of(o)?];
            Ok(CollisionObject::new(m.mesh(), m.bvh(), scene.pose64(f, o))?)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut count = 0u64;
    let mut hit_pairs = Vec::new();
    let all = target.kind == QueryKind::CollideAll;
    if ctx.backend() == gprox::Backend::Cpu {
        if all {
            let many = try_collide_many(&objects, opts)?;
            for c in &many.object_pairs {
                hash = hash_pairs(hash, c.a, c.b, &c.pairs);
                hit_pairs.push([c.a, c.b]);
            }
            count = many.total as u64;
        } else {
            hit_pairs = try_collide_many_any(&objects, opts)?;
        }
    } else {
        for [a, b] in broad_phase_pairs(&objects, opts)? {
            let (ua, ub) = (a as usize, b as usize);
            let (ma, mb) = (&models[slot_of(ua)?], &models[slot_of(ub)?]);
            let (pa, pb) = (scene.pose(f, ua), scene.pose(f, ub));
            let hit = if all {
                let found = ctx.collide_all(ma, &pa, mb, &pb, opts)?;
                count += found.len() as u64;
                hash = hash_pairs(hash, a, b, &found);
                !found.is_empty()
            } else {
                ctx.collide_any(ma, &pa, mb, &pb, opts)?
            };
            if hit {
                hit_pairs.push([a, b]);
            }
        }
    }
    let rec = FrameRecord {
        frame: f,
        count: all.then_some(count),
        collide: Some(!hit_pairs.is_empty()),
        object_pairs: Some(hit_pairs),
        ..Default::default()
    };
    Ok((rec, hash))
}
