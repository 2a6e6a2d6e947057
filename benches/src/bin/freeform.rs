//! Freeform benchmark: the teapot Coons BVH next to the paper's Table 1, the RSS tree of the
//! tessellated teapot at the same tolerances, and minimum-distance query times between teapots
//! (and teapot vs a NURBS surface) in close proximity. Prints markdown and writes
//! `target/bench/freeform.md`.

use std::fmt::Write as _;
use std::time::Instant;

use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::coons::build::DEFAULT_CACHE_LEVELS;
use gprox_bvh::coons::teapot::teapot_table;
use gprox_bvh::coons::{Cell, CellKind, CoonsBvh, CoonsOptions};
use gprox_bvh::rss::Rss;
use gprox_geometry::freeform::basis_cache::BasisCache;
use gprox_geometry::freeform::merge::merge_adjacent;
use gprox_geometry::freeform::{teapot, FreeformModel, NurbsSurface};
use gprox_geometry::transform::Pose64;
use gprox_query::freeform::{freeform_distance, DistanceOptions, FreeformObject};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Places `b` along x at `dx` from `a`.
fn objects<'a>(
    a: (&'a [NurbsSurface], &'a CoonsBvh),
    b: (&'a [NurbsSurface], &'a CoonsBvh),
    dx: f64,
) -> (FreeformObject<'a>, FreeformObject<'a>) {
    let pose = Pose64 {
        rows: [
            [1.0, 0.0, 0.0, dx],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };
    (
        FreeformObject {
            surfaces: a.0,
            bvh: a.1,
            pose: Pose64::IDENTITY,
        },
        FreeformObject {
            surfaces: b.0,
            bvh: b.1,
            pose,
        },
    )
}

const OPTS: DistanceOptions = DistanceOptions {
    tolerance: 1e-6,
    max_pairs: 20_000_000,
    batch: 256,
};

/// Distance of `b` translated by `dx` from `a`.
fn distance_at(a: (&[NurbsSurface], &CoonsBvh), b: (&[NurbsSurface], &CoonsBvh), dx: f64) -> f64 {
    let (oa, ob) = objects(a, b, dx);
    freeform_distance(&oa, &ob, &OPTS).distance
}

/// Seconds per query (median, min over `RUNS`) with the basis cache off and on, interleaved
/// so both see the same machine load; also the distance (equal in both).
fn time_cache_off_on(
    a: (&[NurbsSurface], &CoonsBvh),
    b: (&[NurbsSurface], &CoonsBvh),
    dx: f64,
) -> ([(f64, f64); 2], f64) {
    let strip = |bvh: &CoonsBvh| {
        let mut x = bvh.clone();
        x.basis = BasisCache::default();
        x
    };
    let (a_off, b_off) = (strip(a.1), strip(b.1));
    let configs = [((a.0, &a_off), (b.0, &b_off)), (a, b)];
    let mut times = [Vec::new(), Vec::new()];
    let mut d = [0.0; 2];
    for _ in 0..RUNS {
        for (k, &(x, y)) in configs.iter().enumerate() {
            let (oa, ob) = objects(x, y, dx);
            let t = Instant::now();
            d[k] = freeform_distance(&oa, &ob, &OPTS).distance;
            times[k].push(t.elapsed().as_secs_f64());
        }
    }
    assert_eq!(d[0], d[1], "cached evaluation must not change the result");
    let stat = |v: &Vec<f64>| {
        (
            median(v.clone()),
            v.iter().copied().fold(f64::INFINITY, f64::min),
        )
    };
    ([stat(&times[0]), stat(&times[1])], d[1])
}

/// Timed repetitions per configuration.
const RUNS: usize = 5;

/// Timed passes per configuration of the per-cell bound timing.
const BOUND_RUNS: usize = 20;

/// Nanoseconds per `CoonsBvh::bound` call (min over `BOUND_RUNS` passes) with the basis cache off and
/// on, over every cell the cache covers (surface-level nodes and Coons levels up to the cached
/// one), split into surface-level and Coons-level cells; and the number of each.
fn time_bounds(surfaces: &[NurbsSurface], bvh: &CoonsBvh) -> [(f64, f64, usize); 2] {
    let mut direct = bvh.clone();
    direct.basis = BasisCache::default();
    let mut cells = [Vec::new(), Vec::new()];
    let mut stack: Vec<(Cell, u8)> = bvh
        .root_cells(surfaces)
        .into_iter()
        .map(|c| (c, 0))
        .collect();
    while let Some((c, level)) = stack.pop() {
        let coons = matches!(c.kind, CellKind::Coons { .. });
        cells[usize::from(coons)].push(c);
        let next = level + u8::from(bvh.is_coons_level(&c));
        if next <= DEFAULT_CACHE_LEVELS {
            if let Some(k) = bvh.children(surfaces, &c) {
                stack.extend(k.map(|k| (k, next)));
            }
        }
    }
    cells.map(|cs| {
        let mut best = [f64::INFINITY; 2];
        for _ in 0..BOUND_RUNS {
            for (k, b) in [&direct, bvh].into_iter().enumerate() {
                let t = Instant::now();
                for c in &cs {
                    std::hint::black_box(b.bound(surfaces, std::hint::black_box(c)));
                }
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
        }
        let n = cs.len().max(1) as f64;
        (best[0] * 1e9 / n, best[1] * 1e9 / n, cs.len())
    })
}

/// The teapot table (paper Table 1) and the RSS tree of the tessellated teapot (Table 2).
fn tables(md: &mut String, model: &FreeformModel) -> anyhow::Result<()> {
    let unit = model.unit();
    writeln!(md, "## Teapot Coons BVH (paper Table 1)\n")?;
    writeln!(
        md,
        "| ε | Coons patches | paper | bilinear | BVH bytes | paper bytes | build s | paper s | basis cache bytes |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|---|---|")?;
    for r in teapot_table(None)? {
        writeln!(
            md,
            "| {:.0e} | {} | {} | {} | {} | {} | {:.4} | {:.2} | {} |",
            r.epsilon,
            r.coons_patches,
            r.paper_patches,
            r.bilinear,
            r.bytes,
            r.paper_bytes,
            r.build_seconds,
            r.paper_seconds,
            r.cache_bytes
        )?;
    }
    writeln!(
        md,
        "\nBVH bytes: the paper's Table 1 measure (surface tree + ε-lists, everything the traversal \
         reads). Basis cache: basis values at the traversal's evaluation parameters, runtime \
         memory next to the BVH (paper Figure 9), reported apart as the paper does."
    )?;
    writeln!(md, "\n## Tessellated teapot, RSS tree (paper Table 2)\n")?;
    writeln!(
        md,
        "| tolerance | triangles | tree bytes | tessellate s | build s |"
    )?;
    writeln!(md, "|---|---|---|---|---|")?;
    for e in [1e-2, 1e-3, 1e-4, 1e-5] {
        let t = Instant::now();
        let mesh = model.tessellate(e * unit)?;
        let ts = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let tree = BvTree::<Rss>::build(&mesh);
        let bs = t.elapsed().as_secs_f64();
        let bytes = std::mem::size_of_val(tree.nodes.as_slice());
        writeln!(
            md,
            "| {e:.0e} | {} | {bytes} | {ts:.4} | {bs:.4} |",
            mesh.faces().len()
        )?;
    }
    Ok(())
}

/// Per-cell `CoonsBvh::bound` timing, cache off / on.
fn bound_timings(md: &mut String, pot: &[NurbsSurface]) -> anyhow::Result<()> {
    writeln!(
        md,
        "\n## `CoonsBvh::bound` per cell, basis cache off / on (min of {BOUND_RUNS} passes)\n"
    )?;
    writeln!(
        md,
        "| model | ε | cells (surface / Coons) | surface-level ns off / on | Coons-level ns off / on | cache bytes |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|")?;
    let merged = merge_adjacent(pot);
    for (name, surfaces, eps) in [
        ("teapot (32 Bézier)", pot, 1e-3),
        ("teapot (merged)", &merged[..], 1e-5),
    ] {
        let b = CoonsBvh::build(
            surfaces,
            &CoonsOptions {
                epsilon: eps,
                ..Default::default()
            },
        )?;
        let [sl, cl] = time_bounds(surfaces, &b);
        writeln!(
            md,
            "| {name} | {eps:.0e} | {} / {} | {:.0} / {:.0} | {:.0} / {:.0} | {} |",
            sl.2,
            cl.2,
            sl.0,
            sl.1,
            cl.0,
            cl.1,
            b.cache_bytes()
        )?;
    }
    Ok(())
}

/// Minimum-distance query timing, cache off / on: teapot–teapot and teapot vs a NURBS surface.
fn distance_timings(
    md: &mut String,
    pot: &[NurbsSurface],
    model: &FreeformModel,
) -> anyhow::Result<()> {
    let unit = model.unit();
    writeln!(
        md,
        "\n## Minimum distance per query (tolerance 1e-6), basis cache off / on\n"
    )?;
    writeln!(
        md,
        "| pair | gap (× teapot unit) | distance | cache off ms (median / min) | cache on ms (median / min) |"
    )?;
    writeln!(md, "|---|---|---|---|---|")?;
    let opts = CoonsOptions {
        epsilon: 1e-3,
        ..Default::default()
    };
    let bvh = CoonsBvh::build(pot, &opts)?;
    let (lo, hi) = model.control_bounds();
    let width = hi.x - lo.x;
    let row = |md: &mut String, name: &str, gap: f64, r: ([(f64, f64); 2], f64)| {
        let ([off, on], d) = r;
        writeln!(
            md,
            "| {name} | {gap:.0e} | {d:.6} | {:.1} / {:.1} | {:.1} / {:.1} |",
            off.0 * 1e3,
            off.1 * 1e3,
            on.0 * 1e3,
            on.1 * 1e3
        )
    };
    for gap in [1e-1, 1e-2, 1e-3] {
        // Place the second teapot beyond the first along x: the true distance is at least
        // the requested gap (control boxes are conservative).
        let mut dx = width + gap * unit;
        // Slide closer until the measured distance is about the gap (x translation moves the
        // distance by at most the shift, so it never goes below the gap).
        for _ in 0..4 {
            let d = distance_at((pot, &bvh), (pot, &bvh), dx);
            dx -= d - gap * unit;
        }
        let r = time_cache_off_on((pot, &bvh), (pot, &bvh), dx);
        row(md, "teapot–teapot", gap, r)?;
    }
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/nurbs/sphere_patch.json"
    ));
    if path.exists() {
        let s = vec![gprox_geometry::freeform::io::load_nurbs_json(path)?];
        let bs = CoonsBvh::build(&s, &opts)?;
        let (slo, _) = s[0].control_bounds();
        for gap in [1e-1, 1e-2, 1e-3] {
            let mut dx = hi.x - slo.x + gap * unit;
            for _ in 0..4 {
                let d = distance_at((pot, &bvh), (&s, &bs), dx);
                dx -= d - gap * unit;
            }
            let r = time_cache_off_on((pot, &bvh), (&s, &bs), dx);
            row(md, "teapot–sphere_patch", gap, r)?;
        }
    } else {
        writeln!(
            md,
            "\n(note: ../shared/data/nurbs absent, teapot–NURBS rows skipped)"
        )?;
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    // `--distance-only` / `--bounds-only`: one section (for profiling).
    let distance_only = std::env::args().any(|a| a == "--distance-only");
    let bounds_only = std::env::args().any(|a| a == "--bounds-only");
    let mut md = String::new();
    let pot = teapot();
    let model = FreeformModel::new(pot.clone())?;
    if !distance_only && !bounds_only {
        tables(&mut md, &model)?;
    }
    if !distance_only {
        bound_timings(&mut md, &pot)?;
    }
    if !bounds_only {
        distance_timings(&mut md, &pot, &model)?;
    }
    print!("{md}");
    std::fs::create_dir_all("target/bench")?;
    std::fs::write("target/bench/freeform.md", &md)?;
    Ok(())
}
