//! The host's share of an image-space frame on a device context (#16): on the built-in
//! deforming tori, per frame, the CPU query (`intersect`: classification and depths on the
//! CPU) against what the host still does when the device classifies and computes the depths —
//! `IntersectionSweep::new` (validation, world meshes, localisation, tiles),
//! `IntersectionSweep::classify` from the codes and `SweepSamples::finish` from the surface
//! points (here precomputed on the CPU: what the device hands back) — and against the same
//! stages finishing with CPU depths (`finish(None)`: the device path before the depth kernel).
//! Kernel times are not included (no device here); run `penetration-field --backend cuda` on a
//! GPU for whole frames.
//!
//! ```text
//! cargo run --release -p gprox-bench --bin image-depths -- [--repeats N] [--scales 1,0.25]
//! ```
//!
//! Prints a markdown table: per tolerance, samples inside both (mean), and median / worst over
//! the frames (of the per-frame median of the repeats) of each stage, in ms.

use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use gprox_bench::query::field_tolerance;
use gprox_bvh::lbvh;
use gprox_geometry::scene::Scene;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::{CollisionObject, Side};
use gprox_query::image_space::{intersect, ImageSpaceOptions, IntersectionSweep, SurfacePoint};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median over `repeats` runs of `f`, in ms.
fn time(repeats: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..repeats)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn main() -> Result<()> {
    let mut repeats = 5;
    let mut scales = vec![1.0, 0.25];
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--repeats" => repeats = v.parse::<usize>()?.max(1),
            "--scales" => scales = v.split(',').map(str::parse).collect::<Result<_, _>>()?,
            _ => bail!("usage: image-depths [--repeats N] [--scales 1,0.25]"),
        }
    }
    let scene = Scene::builtin_deforming_tori();
    let d = field_tolerance(&scene, 0);
    println!(
        "deforming tori, {} frames, {} rayon threads, median of {repeats} repeats per frame\n",
        scene.frame_count(),
        rayon::current_num_threads()
    );
    println!("| tolerance | samples (mean) | CPU `intersect` median / worst | host share, device depths: median / worst | of which `new` / `new` + `classify` | host share, CPU depths: median / worst |");
    println!("|---|---:|---:|---:|---:|---:|");
    for s in scales {
        let opts = ImageSpaceOptions::new(d * s);
        let (mut cpu, mut host, mut host_cpu) = (Vec::new(), Vec::new(), Vec::new());
        let (mut new, mut classify) = (Vec::new(), Vec::new());
        let mut samples = 0usize;
        for f in 0..scene.frame_count() {
            let meshes: Vec<TriMesh> = (0..2)
                .map(|i| {
                    let mut m = scene.mesh(i).clone();
                    m.set_positions(scene.positions(f, i).to_vec()).map(|_| m)
                })
                .collect::<Result<_, _>>()?;
            let trees: Vec<_> = meshes.iter().map(lbvh::build).collect();
            let poses = [0, 1].map(|i| Pose64::from_affine(&scene.pose(f, i)));
            let objects: Vec<CollisionObject<'_>> = (0..2)
                .map(|i| CollisionObject::new(&meshes[i], &trees[i], poses[i]))
                .collect::<Result<_, _>>()?;
            let (oa, ob) = (&objects[0], &objects[1]);
            // What the device hands back: the codes and the surface points.
            let sweep = IntersectionSweep::new(oa, ob, &opts)?;
            let codes: Vec<u8> = (0..sweep.tiles().len())
                .flat_map(|t| sweep.classify_tile(t))
                .collect();
            let classified = sweep.classify(&codes)?;
            let cells = classified.cells();
            let near: [Vec<SurfacePoint>; 2] = [Side::A, Side::B].map(|side| {
                cells
                    .iter()
                    .map(|&c| classified.surface_point(side, c))
                    .collect()
            });
            samples += cells.len();
            let want = intersect(oa, ob, &opts)?;
            let device = IntersectionSweep::new(oa, ob, &opts)?
                .classify(&codes)?
                .finish(Some([&near[0], &near[1]]))?;
            if device.intersection != want {
                bail!("frame {f}: the device path's result differs from intersect");
            }
            cpu.push(time(repeats, || {
                intersect(oa, ob, &opts).unwrap();
            }));
            host.push(time(repeats, || {
                let s = IntersectionSweep::new(oa, ob, &opts).unwrap();
                s.classify(&codes)
                    .unwrap()
                    .finish(Some([&near[0], &near[1]]))
                    .unwrap();
            }));
            // The host share split into its stages (device depths).
            new.push(time(repeats, || {
                IntersectionSweep::new(oa, ob, &opts).unwrap();
            }));
            classify.push(time(repeats, || {
                let s = IntersectionSweep::new(oa, ob, &opts).unwrap();
                s.classify(&codes).unwrap();
            }));
            host_cpu.push(time(repeats, || {
                let s = IntersectionSweep::new(oa, ob, &opts).unwrap();
                s.classify(&codes).unwrap().finish(None).unwrap();
            }));
        }
        let stat = |v: &Vec<f64>| {
            format!(
                "{:.3} / {:.2}",
                median(v.clone()),
                v.iter().copied().fold(0.0, f64::max)
            )
        };
        println!(
            "| {s} d = {:.4} | {:.0} | {} | {} | {} / {} | {} |",
            d * s,
            samples as f64 / scene.frame_count() as f64,
            stat(&cpu),
            stat(&host),
            stat(&new),
            stat(&classify),
            stat(&host_cpu)
        );
    }
    Ok(())
}
