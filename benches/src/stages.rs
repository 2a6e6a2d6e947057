//! Stage times of the collide-all and self-collision queries, with front tracking on and off:
//! per frame the update (refit of deforming meshes), the traversal (broad phase and BVTT down to
//! candidate leaf pairs), the exact triangle tests and their total (gProximity §4.1.2's front
//! tracking against a traversal from the roots).
//!
//! Both modes run the same BVTT (a pair of internal nodes descends both,
//! [`gprox::query::front::Front`]); "off" forgets the front before every frame. Every frame's
//! pairs are checked against the library's main query ([`gprox::Context::collide_all`],
//! [`gprox::query::broad_phase::try_collide_many`], the self-collision of
//! [`gprox::query::self_collide::self_collide`]); a difference is a failure of the run.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context as _, Result};
use gprox::bvh::Bvh;
use gprox::geometry::scene::{QueryKind, Scene};
use gprox::geometry::tri_tri::triangles_intersect;
use gprox::geometry::TriMesh;
use gprox::query::broad_phase::{broad_phase_pairs, try_collide_many};
use gprox::query::collide::{exact_pairs, CollideOptions, CollisionObject, TrackedCollision};
use gprox::query::front::Front;
use gprox::query::self_collide::{self_collide, share_vertex, Topology};
use gprox::{Backend, Context, Model};
use serde::Serialize;

use crate::run::{targets, Target};
use crate::stats::Summary;

/// Stage times of one (scene, query, target) in one mode, medians over frames.
#[derive(Clone, Debug, Serialize)]
pub struct StageRecord {
    /// Scene name.
    pub scene: String,
    /// Query kind (`collide-all`, `self`).
    pub query: String,
    /// Target label as in the main table.
    pub target: String,
    /// Whether the traversal restarted from the last frame's front.
    pub front_tracking: bool,
    /// Per-frame refit of the deforming meshes, ms.
    pub update_ms: Summary,
    /// Broad phase (many objects) and BVTT traversal to candidate leaf pairs, ms.
    pub traversal_ms: Summary,
    /// Exact triangle tests of the candidates, ms.
    pub exact_ms: Summary,
    /// Sum of the three per frame, ms.
    pub total_ms: Summary,
    /// Candidate leaf pairs, summed over frames.
    pub candidates: u64,
    /// BVTT front size (node pairs) after the last frame, summed over object pairs.
    pub front_pairs: u64,
    /// Colliding face pairs, summed over frames.
    pub pairs: u64,
}

/// Per-frame samples of one mode.
#[derive(Default)]
struct Samples {
    update: Vec<f64>,
    traversal: Vec<f64>,
    exact: Vec<f64>,
    candidates: u64,
    pairs: u64,
}

impl Samples {
    fn push(&mut self, update: f64, traversal: f64, exact: f64) {
        self.update.push(update);
        self.traversal.push(traversal);
        self.exact.push(exact);
    }

    fn record(self, scene: &Scene, t: &Target, front: bool, front_pairs: u64) -> StageRecord {
        let total: Vec<f64> = (0..self.update.len())
            .map(|k| self.update[k] + self.traversal[k] + self.exact[k])
            .collect();
        StageRecord {
            scene: scene.name().to_string(),
            query: t.kind.as_str().to_string(),
            target: t.label.clone(),
            front_tracking: front,
            update_ms: Summary::of(&self.update),
            traversal_ms: Summary::of(&self.traversal),
            exact_ms: Summary::of(&self.exact),
            total_ms: Summary::of(&total),
            candidates: self.candidates,
            front_pairs,
            pairs: self.pairs,
        }
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// One CPU model per object of the scene (deforming objects at `frame`'s positions).
fn models(ctx: &Context, scene: &Scene, objects: &[usize], frame: usize) -> Result<Vec<Model>> {
    objects
        .iter()
        .map(|&o| {
            let mut mesh = scene.mesh(o).clone();
            if scene.is_deforming(o) {
                mesh.set_positions(scene.positions(frame, o).to_vec())?;
            }
            Ok(ctx.model(mesh)?)
        })
        .collect()
}

/// Refits the deforming objects to frame `f`; the time taken, ms.
fn update(
    ctx: &Context,
    scene: &Scene,
    objects: &[usize],
    models: &mut [Model],
    f: usize,
) -> Result<f64> {
    let t = Instant::now();
    for (m, &o) in models.iter_mut().zip(objects) {
        if scene.is_deforming(o) {
            ctx.update(m, scene.positions(f, o))?;
        }
    }
    Ok(ms_since(t))
}

/// The stage records of every collide-all and self target of `scene` over `frames`, front
/// tracking off then on; mismatches with the main query are appended to `failures`.
pub fn stages(
    scene: &Scene,
    frames: &[usize],
    failures: &mut Vec<String>,
) -> Result<Vec<StageRecord>> {
    let ctx = Context::new(Backend::Cpu)?;
    let mut out = Vec::new();
    let (tgts, _) = targets(scene);
    for t in &tgts {
        for front in [false, true] {
            let rec = match (&t.kind, t.object) {
                (QueryKind::SelfCollide, Some(o)) => {
                    self_stages(&ctx, scene, t, o, frames, front, failures)?
                }
                (QueryKind::CollideAll, None) => {
                    pair_stages(&ctx, scene, t, frames, front, failures)?
                }
                _ => continue,
            };
            out.push(rec);
        }
    }
    Ok(out)
}

/// Collide-all of a target's object pairs (or of all objects through the broad phase).
fn pair_stages(
    ctx: &Context,
    scene: &Scene,
    t: &Target,
    frames: &[usize],
    front: bool,
    failures: &mut Vec<String>,
) -> Result<StageRecord> {
    let objects: Vec<usize> = (0..scene.object_count()).collect();
    let first = frames.first().copied().unwrap_or(0);
    let mut models = models(ctx, scene, &objects, first)?;
    let opts = CollideOptions::default();
    let mut tracked: HashMap<[u32; 2], TrackedCollision> = HashMap::new();
    let mut s = Samples::default();
    for &f in frames {
        let update_ms = update(ctx, scene, &objects, &mut models, f)?;
        let objs: Vec<CollisionObject<'_>> = models
            .iter()
            .enumerate()
            .map(|(o, m)| CollisionObject::new(m.mesh(), m.bvh(), scene.pose64(f, o)))
            .collect::<Result<_, _>>()?;
        let t0 = Instant::now();
        let pairs: Vec<[u32; 2]> = if t.all_pairs {
            broad_phase_pairs(&objs, &opts)?
        } else {
            t.pairs.iter().map(|p| p.map(|o| o as u32)).collect()
        };
        let mut candidates = Vec::with_capacity(pairs.len());
        for &[a, b] in &pairs {
            let tc = tracked.entry([a, b]).or_default();
            if !front {
                tc.reset();
            }
            candidates.push(tc.candidates(&objs[a as usize], &objs[b as usize], &opts)?);
        }
        let traversal_ms = ms_since(t0);
        let t1 = Instant::now();
        let mut found = Vec::with_capacity(pairs.len());
        for (&[a, b], c) in pairs.iter().zip(&candidates) {
            let hits = exact_pairs(&objs[a as usize], &objs[b as usize], c, &opts)?;
            if !hits.is_empty() {
                found.push(([a, b], hits));
            }
        }
        let exact_ms = ms_since(t1);
        s.push(update_ms, traversal_ms, exact_ms);
        s.candidates += candidates.iter().map(|c| c.len() as u64).sum::<u64>();
        s.pairs += found.iter().map(|(_, h)| h.len() as u64).sum::<u64>();
        // The library's main query on the same frame (not timed).
        let want: Vec<([u32; 2], Vec<[u32; 2]>)> = if t.all_pairs {
            let many = try_collide_many(&objs, &opts)?;
            many.object_pairs
                .into_iter()
                .map(|p| ([p.a, p.b], p.pairs))
                .collect()
        } else {
            let mut w = Vec::new();
            for &[a, b] in &pairs {
                let (ma, mb) = (&models[a as usize], &models[b as usize]);
                let hits = ctx.collide_all(
                    ma,
                    &scene.pose(f, a as usize),
                    mb,
                    &scene.pose(f, b as usize),
                    &opts,
                )?;
                if !hits.is_empty() {
                    w.push(([a, b], hits));
                }
            }
            w
        };
        found.sort_unstable();
        if found != want {
            failures.push(format!(
                "{} {} {} frame {f}: stage run (front tracking {}) differs from the main query",
                scene.name(),
                t.kind.as_str(),
                t.label,
                if front { "on" } else { "off" }
            ));
        }
    }
    let front_pairs = tracked.values().map(|c| c.front_len() as u64).sum();
    Ok(s.record(scene, t, front, front_pairs))
}

/// Self-collision of one deforming object: BVTT self traversal (no normal-cone culling, which
/// the main query adds), topology filter, exact tests.
fn self_stages(
    ctx: &Context,
    scene: &Scene,
    t: &Target,
    object: usize,
    frames: &[usize],
    front: bool,
    failures: &mut Vec<String>,
) -> Result<StageRecord> {
    let first = frames.first().copied().unwrap_or(0);
    let mut models = models(ctx, scene, &[object], first)?;
    let topo = Topology::new(
        scene.mesh(object).faces(),
        scene.mesh(object).vertex_count(),
    );
    let mut tracked: Option<Front> = None;
    let mut s = Samples::default();
    for &f in frames {
        let update_ms = update(ctx, scene, &[object], &mut models, f)?;
        let m = models.first().context("no model")?;
        let (mesh, bvh): (&TriMesh, &Bvh) = (m.mesh(), m.bvh());
        let faces = mesh.faces();
        let overlap = |i: u32, j: u32| {
            bvh.nodes[i as usize]
                .aabb
                .overlaps(&bvh.nodes[j as usize].aabb)
        };
        let t0 = Instant::now();
        let mut candidates = Vec::new();
        let keep = |x: u32, y: u32| {
            if !share_vertex(&faces[x as usize], &faces[y as usize]) {
                candidates.push([x.min(y), x.max(y)]);
            }
        };
        match tracked.as_mut().filter(|_| front) {
            Some(fr) => fr.update_self(bvh, overlap, keep),
            None => tracked = Some(Front::new_self(bvh, overlap, keep)),
        }
        let traversal_ms = ms_since(t0);
        let t1 = Instant::now();
        let pos = mesh.positions();
        let tri = |i: u32| faces[i as usize].map(|v| pos[v as usize].as_dvec3());
        let mut found: Vec<[u32; 2]> = candidates
            .iter()
            .copied()
            .filter(|&[x, y]| triangles_intersect(&tri(x), &tri(y)))
            .collect();
        found.sort_unstable();
        let exact_ms = ms_since(t1);
        s.push(update_ms, traversal_ms, exact_ms);
        s.candidates += candidates.len() as u64;
        s.pairs += found.len() as u64;
        let want = self_collide(mesh, bvh, &topo, None)?;
        if found != want.pairs {
            failures.push(format!(
                "{} self {} frame {f}: stage run (front tracking {}) differs from the main query",
                scene.name(),
                t.label,
                if front { "on" } else { "off" }
            ));
        }
    }
    let front_pairs = tracked.map_or(0, |f| f.pairs.len() as u64);
    Ok(s.record(scene, t, front, front_pairs))
}
