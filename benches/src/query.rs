//! One frame of one query target: the library calls the harness times (shared by the harness
//! and the `gprox-peer` external mode, so both run exactly the same code).

use anyhow::{Context as _, Result};
use gprox::bvh::wide_rss::WideRssTree;
use gprox::geometry::scene::{QueryKind, Scene};
use gprox::query::broad_phase::try_collide_many_any;
use gprox::query::ccd::{ccd_self_with_bvh, CcdOptions};
use gprox::query::collide::{CollideOptions, CollisionObject};
use gprox::query::distance::{distance_wide, DistanceOptions, DistanceResult, WideDistanceObject};
use gprox::query::penetration::penetration;
use gprox::query::self_collide::Topology;
use gprox::{Context, Model};

use crate::report::FrameRecord;
use crate::run::Target;

fn fnv(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

/// Exact minimum distance of one frame (the target's single pair).
pub(crate) fn distance_frame(
    scene: &Scene,
    target: &Target,
    f: usize,
    meshes: &[gprox::geometry::TriMesh],
    trees: &[WideRssTree],
    slot_of: &dyn Fn(usize) -> Result<usize>,
) -> Result<(FrameRecord, u64)> {
    let &[a, b] = target
        .pairs
        .first()
        .context("distance target without a pair")?;
    let (sa, sb) = (slot_of(a)?, slot_of(b)?);
    let oa = WideDistanceObject {
        mesh: &meshes[sa],
        tree: &trees[sa],
        pose: scene.pose64(f, a),
    };
    let ob = WideDistanceObject {
        mesh: &meshes[sb],
        tree: &trees[sb],
        pose: scene.pose64(f, b),
    };
    let r = distance_wide(&oa, &ob, &DistanceOptions::default())?;
    Ok((distance_record(f, &r), r.distance.to_bits()))
}

/// The frame record of a distance answer.
fn distance_record(f: usize, r: &DistanceResult) -> FrameRecord {
    FrameRecord {
        frame: f,
        distance: Some(r.distance),
        p1: Some(r.point_a.to_array()),
        p2: Some(r.point_b.to_array()),
        collide: Some(r.distance == 0.0),
        ..Default::default()
    }
}

/// One-off setup of a single-object target (self-collision, CCD): the mesh's adjacency.
pub(crate) struct SelfSetup {
    /// Adjacency of the object's mesh.
    pub(crate) topology: Topology,
}

impl SelfSetup {
    /// Setup for `mesh`.
    pub(crate) fn new(mesh: &gprox::geometry::TriMesh) -> Self {
        Self {
            topology: Topology::new(mesh.faces(), mesh.vertex_count()),
        }
    }
}

/// One query of one frame: the result record (timings unset) and a hash of the pair lists.
#[allow(clippy::too_many_arguments)]
pub(crate) fn query_frame(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
    opts: &CollideOptions,
    setup: Option<&SelfSetup>,
) -> Result<(FrameRecord, u64)> {
    let topology = setup.map(|s| &s.topology);
    if let (Some(o), Some(topo), QueryKind::Ccd) = (target.object, topology, &target.kind) {
        let m = &models[slot_of(o)?];
        let end = scene.positions(f + 1, o);
        let r = if ctx.backend() == gprox::Backend::Cpu {
            ccd_self_with_bvh(m.mesh(), end, topo, m.bvh(), &CcdOptions::default())?
        } else {
            ctx.ccd_self(m, end, &CcdOptions::default())?
        };
        let toi = r.earliest.map_or(1.0, |t| t.t_lo);
        let rec = FrameRecord {
            frame: f,
            toi: Some(toi),
            collide: Some(r.earliest.is_some()),
            ..Default::default()
        };
        return Ok((rec, toi.to_bits()));
    }
    if let (Some(o), Some(_)) = (target.object, setup) {
        // The CPU model keeps its normal-cone culling data across frames; a device traverses
        // its resident tree (same pairs).
        let pairs = ctx.self_collide(&models[slot_of(o)?])?;
        let hash = hash_list(FNV_OFFSET, &pairs);
        let rec = FrameRecord {
            frame: f,
            count: Some(pairs.len() as u64),
            collide: Some(!pairs.is_empty()),
            ..Default::default()
        };
        return Ok((rec, hash));
    }
    if target.kind == QueryKind::Penetration {
        return penetration_frame(scene, target, f, models, slot_of);
    }
    if target.kind == QueryKind::PenetrationField {
        return penetration_field_frame(ctx, scene, target, f, models, slot_of);
    }
    if target.kind == QueryKind::Distance {
        // Device backends (the CPU's distance runs on the trees of `distance_frame`).
        let &[a, b] = target
            .pairs
            .first()
            .context("distance target without a pair")?;
        let (ma, mb) = (&models[slot_of(a)?], &models[slot_of(b)?]);
        let r = ctx.distance(
            ma,
            &scene.pose(f, a),
            mb,
            &scene.pose(f, b),
            &DistanceOptions::default(),
        )?;
        return Ok((distance_record(f, &r), r.distance.to_bits()));
    }
    if target.all_pairs {
        return all_pairs_frame(ctx, scene, target, f, models, slot_of, opts);
    }
    let mut hash = FNV_OFFSET;
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

/// Penetration of one frame (`gprox_query::penetration`), summed over the target's pairs:
/// vertices of either mesh strictly inside the other, their largest and summed depth.
fn penetration_frame(
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
) -> Result<(FrameRecord, u64)> {
    let (mut inside, mut max_depth, mut sum_depth) = (0u64, 0f64, 0f64);
    for &[a, b] in &target.pairs {
        let (ma, mb) = (&models[slot_of(a)?], &models[slot_of(b)?]);
        let oa = CollisionObject::new(ma.mesh(), ma.bvh(), scene.pose64(f, a))?;
        let ob = CollisionObject::new(mb.mesh(), mb.bvh(), scene.pose64(f, b))?;
        let r = penetration(&oa, &ob)?;
        inside += r.inside_vertices() as u64;
        max_depth = max_depth.max(r.max_depth());
        sum_depth += r.sum_depth();
    }
    let rec = FrameRecord {
        frame: f,
        collide: Some(inside > 0),
        inside_vertices: Some(inside),
        max_depth: Some(max_depth),
        sum_depth: Some(sum_depth),
        ..Default::default()
    };
    let hash = fnv(fnv(inside, max_depth.to_bits()), sum_depth.to_bits());
    Ok((rec, hash))
}

/// The tolerance of the `penetration-field` query on `scene`: the box diagonal of `object`'s
/// mesh (as loaded, frame 0) divided by 180 — 0.0207 for the built-in deforming tori.
pub fn field_tolerance(scene: &Scene, object: usize) -> f64 {
    let p = scene.mesh(object).positions();
    let lo = p.iter().fold(gprox::Vec3::INFINITY, |a, &b| a.min(b));
    let hi = p.iter().fold(gprox::Vec3::NEG_INFINITY, |a, &b| a.max(b));
    f64::from((hi - lo).length()) / 180.0
}

/// Image-space penetration field of one frame (`Context::intersection_volume` on every listed
/// pair): samples inside both meshes (`count`), the deepest contact (`max_depth`), the summed
/// depths of the samples in the other mesh (`sum_depth`); the hash covers every sample.
fn penetration_field_frame(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
) -> Result<(FrameRecord, u64)> {
    let (mut count, mut max_depth, mut sum_depth) = (0u64, 0f64, 0f64);
    let mut hash = FNV_OFFSET;
    for &[a, b] in &target.pairs {
        let (ma, mb) = (&models[slot_of(a)?], &models[slot_of(b)?]);
        let opts = gprox::ImageSpaceOptions::new(field_tolerance(scene, a));
        let r = ctx.intersection_volume(ma, &scene.pose(f, a), mb, &scene.pose(f, b), &opts)?;
        count += r.count();
        hash = fnv(fnv(hash, r.count()), r.uncertain());
        for c in r.contacts() {
            max_depth = max_depth.max(c.depth);
        }
        for s in r.samples() {
            sum_depth += s.depth_in_a() + s.depth_in_b();
            let cell =
                (u64::from(s.cell[0]) << 42) ^ (u64::from(s.cell[1]) << 21) ^ u64::from(s.cell[2]);
            hash = fnv(
                fnv(fnv(hash, cell), s.a.distance.to_bits()),
                s.b.distance.to_bits(),
            );
        }
    }
    let rec = FrameRecord {
        frame: f,
        count: Some(count),
        collide: Some(count > 0),
        max_depth: Some(max_depth),
        sum_depth: Some(sum_depth),
        ..Default::default()
    };
    Ok((rec, hash))
}

/// Initial value of the FNV-1a hashes of results.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds a list of index pairs into the FNV-1a hash.
fn hash_list(hash: u64, found: &[[u32; 2]]) -> u64 {
    found
        .iter()
        .fold(hash, |h, [i, j]| fnv(h, ((*i as u64) << 32) | *j as u64))
}

/// Folds one object pair's non-empty contact list into the FNV-1a hash.
fn hash_pairs(hash: u64, a: u32, b: u32, found: &[[u32; 2]]) -> u64 {
    if found.is_empty() {
        return hash;
    }
    hash_list(fnv(hash, ((a as u64) << 32) | b as u64), found)
}

/// A `pairs: "all"` frame: the library's broad phase ([`gprox::query::broad_phase`]).
/// Collide-all is `Context::collide_many` on every backend; collide-any on the CPU backend is
/// `try_collide_many_any` (early-out pair queries), on device backends the batched
/// `Context::collide_many`.
fn all_pairs_frame(
    ctx: &Context,
    scene: &Scene,
    target: &Target,
    f: usize,
    models: &[Model],
    slot_of: &dyn Fn(usize) -> Result<usize>,
    opts: &CollideOptions,
) -> Result<(FrameRecord, u64)> {
    let mut hash = FNV_OFFSET;
    let mut count = 0u64;
    let mut hit_pairs = Vec::new();
    let all = target.kind == QueryKind::CollideAll;
    if ctx.backend() == gprox::Backend::Cpu && !all {
        let objects = (0..scene.object_count())
            .map(|o| {
                let m = &models[slot_of(o)?];
                Ok(CollisionObject::new(m.mesh(), m.bvh(), scene.pose64(f, o))?)
            })
            .collect::<Result<Vec<_>>>()?;
        hit_pairs = try_collide_many_any(&objects, opts)?;
    } else {
        // `Context::collide_many`: on the CPU the world-space narrow phase over each model's
        // kept tree shape; on a device the broad phase, traversals and triangle tests of every
        // body pair in one batch (collide-any reads the same answer).
        let bodies = (0..scene.object_count())
            .map(|o| Ok((&models[slot_of(o)?], scene.pose(f, o))))
            .collect::<Result<Vec<_>>>()?;
        let many = ctx.collide_many(&bodies, opts)?;
        for c in &many.object_pairs {
            if all {
                hash = hash_pairs(hash, c.a, c.b, &c.pairs);
            }
            hit_pairs.push([c.a, c.b]);
        }
        count = many.total as u64;
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
