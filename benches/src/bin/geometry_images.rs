//! Geometry-image timings (issue #18): medians over frames of
//!
//! 1. two deforming 512 × 512 geometry images (bicubic B-spline sheets, 8 × 8 control points,
//!    waving and crossing each other): per frame, new positions for the moved control points
//!    (`GeometryImage::update_positions`), the two hierarchies (`HierarchyImage::rebuild`) and
//!    the traversal (`collide_images`, approximate mode), with the sum;
//! 2. the hierarchy of one 1024 × 1024-quad image alone;
//! 3. the traversal alone (part of 1);
//! 4. with `--cuda` (CUDA device 0), 1 on the device per frame: the positions evaluated from the
//!    control points and the hierarchies built (`DeviceImage::evaluate`), the traversal and the
//!    sort of its pairs (`Device::image_collide`, one synchronisation), against the baseline of
//!    host positions uploaded (`DeviceImage::update`); wall clock and GPU time by CUDA events,
//!    with the pairs checked against the CPU's (see `device_frames`), the whole frame also with
//!    its pairs appended to a Vec kept across frames (`Device::image_collide_into`), and the
//!    kernel profile of the whole frame (per kernel: launches and GPU time per frame).
//!
//! ```text
//! RAYON_NUM_THREADS=2 cargo run --release -p gprox-bench --bin geometry_images -- [frames] [--cuda]
//! ```
use std::time::Instant;

use glam::DVec3;
use gprox::cuda::geometry_image::Evaluation;
use gprox::cuda::{Device, DeviceImage};
use gprox_geometry::freeform::{NurbsSurface, ParamRect, TrimmedFace};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{collide_images, GeometryImage, HierarchyImage, ImageSpec, Mode};

/// An 8 × 8 bicubic B-spline sheet over the unit square at time `t`: heights
/// `z0 + amp sin(2π (x + t)) cos(π (y − t))`, or with the roles of y and z swapped.
fn sheet(t: f64, z0: f64, amp: f64, phase: f64) -> NurbsSurface {
    let n = 8;
    let knots = vec![0.0, 0.0, 0.0, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0];
    let pts = (0..n * n)
        .map(|k| {
            let (x, y) = ((k / n) as f64 / 7.0, (k % n) as f64 / 7.0);
            let tau = std::f64::consts::TAU;
            let z = z0 + amp * (tau * (x + t + phase)).sin() * (0.5 * tau * (y - t)).cos();
            DVec3::new(x, y, z)
        })
        .collect();
    NurbsSurface::new([3, 3], [knots.clone(), knots], [n, n], pts, None).unwrap()
}

fn spec(texels: usize) -> ImageSpec {
    let eps = 1e-3;
    ImageSpec {
        rect: ParamRect::new(0.0, 1.0, 0.0, 1.0),
        width: texels,
        height: texels,
        eps,
        sigma: eps / (2.0 * 3f64.sqrt()),
        trim_tolerance: 0.5 / (texels - 1) as f64,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frames: usize = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(40, |s| s.parse().expect("frames: a number"));
    let cuda = args.iter().any(|a| a == "--cuda");
    let pose = Pose64::IDENTITY;
    let face = |s: NurbsSurface| TrimmedFace::untrimmed(s).unwrap();
    let (fa, fb) = (
        face(sheet(0.0, 0.0, 0.1, 0.0)),
        face(sheet(0.0, 0.02, 0.1, 0.3)),
    );
    let mut a = GeometryImage::from_spec(0, &fa, &pose, spec(512)).unwrap();
    let mut b = GeometryImage::from_spec(1, &fb, &pose, spec(512)).unwrap();
    let (mut ha, mut hb) = (HierarchyImage::build(&a), HierarchyImage::build(&b));
    let (mut gen, mut hier, mut trav, mut total) = (vec![], vec![], vec![], vec![]);
    let mut pairs = 0;
    for f in 0..frames + 3 {
        let t = f as f64 / 50.0;
        let (sa, sb) = (sheet(t, 0.0, 0.1, 0.0), sheet(t, 0.02, 0.1, 0.3));
        let t0 = Instant::now();
        a.update_positions(&sa, &pose).unwrap();
        b.update_positions(&sb, &pose).unwrap();
        let g = ms(t0);
        let t1 = Instant::now();
        ha.rebuild(&a);
        hb.rebuild(&b);
        let h = ms(t1);
        let t2 = Instant::now();
        let out = collide_images((&a, &ha), (&b, &hb), Mode::Approximate);
        let c = ms(t2);
        if f >= 3 {
            gen.push(g);
            hier.push(h);
            trav.push(c);
            total.push(ms(t0));
            pairs += out.len();
        }
    }
    if cuda {
        device_frames(frames, &mut a, &mut b);
    }
    let big = GeometryImage::from_spec(2, &fa, &pose, spec(1025)).unwrap();
    let mut hbig = HierarchyImage::build(&big);
    let mut h1024 = vec![];
    for _ in 0..frames {
        let t = Instant::now();
        hbig.rebuild(&big);
        h1024.push(ms(t));
    }
    println!(
        "threads {}, {frames} frames, mean {:.0} texel pairs per frame",
        rayon::current_num_threads(),
        pairs as f64 / frames as f64
    );
    println!("two deforming 512x512 images, per frame (median ms):");
    println!("  generate (positions)  {:8.3}", median(&mut gen));
    println!("  hierarchy (both)      {:8.3}", median(&mut hier));
    println!("  traverse              {:8.3}", median(&mut trav));
    println!("  total                 {:8.3}", median(&mut total));
    println!(
        "hierarchy of a 1024x1024-quad image (median ms): {:8.3}",
        median(&mut h1024)
    );
}

/// Both sheets' positions and hierarchies of one frame on the device, in one batch
/// ([`DeviceImage::evaluate_all`]: uploads, evaluations, paddings on the host, builds).
fn evaluate_both(
    d: &Device,
    [a, b]: [&mut DeviceImage; 2],
    [sa, sb]: [&NurbsSurface; 2],
) -> gprox::cuda::Result<()> {
    let pose = Pose64::IDENTITY;
    DeviceImage::evaluate_all(
        d,
        &mut [
            Evaluation {
                image: a,
                surface: sa,
                pose: &pose,
            },
            Evaluation {
                image: b,
                surface: sb,
                pose: &pose,
            },
        ],
    )
}

/// The device part of the deforming 512 × 512 pair on CUDA device 0, per frame and as medians of
/// wall clock (and GPU time by CUDA events where noted):
///
/// * baseline (the previous pipeline's first stage): positions sampled on the host
///   (`GeometryImage::update_positions`, not timed) and uploaded, hierarchies built
///   (`DeviceImage::update`), synchronised;
/// * generate on the device: only the control points up, positions evaluated and hierarchies
///   built (both images in one batch, `DeviceImage::evaluate_all`), synchronised;
/// * the traversal with the pairs sorted on the device (`Device::image_collide_keys`: wall and
///   GPU events), and as `TexelPair`s (`Device::image_collide`);
/// * total: generate + hierarchies + traverse with sorted pairs, all on the device (the
///   issue's target, ≤ 0.3 ms), one synchronisation a frame; and the same with the pairs
///   appended to a Vec kept across frames (`Device::image_collide_into`: no fresh pages).
fn device_frames(frames: usize, a: &mut GeometryImage, b: &mut GeometryImage) {
    let d = match Device::cuda(0) {
        Ok(d) => d,
        Err(e) => {
            println!("--cuda: no device ({e})");
            return;
        }
    };
    let pose = Pose64::IDENTITY;
    let mut da = DeviceImage::new(&d, a, false).unwrap();
    let mut db = DeviceImage::new(&d, b, false).unwrap();
    let (mut upload, mut eval, mut keys, mut gpu, mut full, mut total, mut total_gpu) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let (mut total_reused, mut total_reused_gpu, mut reused) = (vec![], vec![], Vec::new());
    for f in 0..frames + 3 {
        let t = f as f64 / 50.0;
        let (sa, sb) = (sheet(t, 0.0, 0.1, 0.0), sheet(t, 0.02, 0.1, 0.3));
        a.update_positions(&sa, &pose).unwrap();
        b.update_positions(&sb, &pose).unwrap();
        let t0 = Instant::now();
        da.update(&d, a).unwrap();
        db.update(&d, b).unwrap();
        d.synchronize().unwrap();
        let u = ms(t0);
        let t1 = Instant::now();
        evaluate_both(&d, [&mut da, &mut db], [&sa, &sb]).unwrap();
        d.synchronize().unwrap();
        let e = ms(t1);
        let t2 = Instant::now();
        let _ = d.image_collide_keys(&da, &db).unwrap();
        let k = ms(t2);
        let (_, g) = d.time(|| d.image_collide_keys(&da, &db).unwrap()).unwrap();
        let t3 = Instant::now();
        let pairs = d
            .image_collide((a, &da), (b, &db), Mode::Approximate)
            .unwrap();
        let c = ms(t3);
        // The whole frame on the device, one synchronisation.
        let t4 = Instant::now();
        let (frame_pairs, fg) = d
            .time(|| {
                evaluate_both(&d, [&mut da, &mut db], [&sa, &sb]).unwrap();
                d.image_collide((a, &da), (b, &db), Mode::Approximate)
                    .unwrap()
            })
            .unwrap();
        let tt = ms(t4);
        // The same frame appending to a Vec kept from frame to frame (no fresh pages).
        let t5 = Instant::now();
        let ((), rg) = d
            .time(|| {
                evaluate_both(&d, [&mut da, &mut db], [&sa, &sb]).unwrap();
                reused.clear();
                d.image_collide_into((a, &da), (b, &db), Mode::Approximate, &mut reused)
                    .unwrap();
            })
            .unwrap();
        let tr = ms(t5);
        if f >= 3 {
            total_reused.push(tr);
            total_reused_gpu.push(rg.unwrap_or(f64::NAN));
            upload.push(u);
            eval.push(e);
            keys.push(k);
            gpu.push(g.unwrap_or(f64::NAN));
            full.push(c);
            total.push(tt);
            total_gpu.push(fg.unwrap_or(f64::NAN));
        }
        if f == frames + 2 {
            let (ha, hb) = (HierarchyImage::build(a), HierarchyImage::build(b));
            let cpu = collide_images((a, &ha), (b, &hb), Mode::Approximate);
            assert_eq!(pairs, cpu);
            assert_eq!(frame_pairs, cpu);
            assert_eq!(reused, cpu);
        }
    }
    // The whole frame again with the kernel profiler on: where the device time goes.
    let profile = gprox_bench::kernel_profile::profile_frames(&d, frames, |f| {
        let t = f as f64 / 50.0;
        let (sa, sb) = (sheet(t, 0.0, 0.1, 0.0), sheet(t, 0.02, 0.1, 0.3));
        evaluate_both(&d, [&mut da, &mut db], [&sa, &sb])?;
        d.image_collide((a, &da), (b, &db), Mode::Approximate)
            .map(|_| ())
    })
    .unwrap();
    println!(
        "cuda:0 kernel profile of the whole frame (GPU events around each launch):\n{profile}"
    );
    // One more frame, untimed, for the device counter: the control points of both sheets up,
    // evaluate + hierarchies + traversal + sort, one synchronisation.
    let (sa, sb) = (sheet(0.5, 0.0, 0.1, 0.0), sheet(0.5, 0.02, 0.1, 0.3));
    let ops0 = d.ops();
    evaluate_both(&d, [&mut da, &mut db], [&sa, &sb]).unwrap();
    let n = d
        .image_collide((a, &da), (b, &db), Mode::Approximate)
        .unwrap()
        .len();
    let o = d.ops() - ops0;
    println!(
        "cuda:0 ops of one frame: {} launches, {} syncs, {} B host->device, {} B device->host, {} allocations ({n} pairs)",
        o.launches, o.syncs, o.h2d_bytes, o.d2h_bytes, o.allocations
    );
    println!("cuda:0, two deforming 512x512 images, per frame (median ms):");
    println!(
        "  baseline: host positions up + hierarchies (synchronised)  {:8.3}",
        median(&mut upload)
    );
    println!(
        "  control points up + evaluate + hierarchies (synchronised) {:8.3}",
        median(&mut eval)
    );
    println!(
        "  traverse + device sort (sorted keys), wall                {:8.3}",
        median(&mut keys)
    );
    println!(
        "  same, GPU events                                          {:8.3}",
        median(&mut gpu)
    );
    println!(
        "  traverse with sorted TexelPairs, wall                     {:8.3}",
        median(&mut full)
    );
    println!(
        "  total on the device (evaluate + hierarchies + traverse + sort), wall {:8.3}",
        median(&mut total)
    );
    println!(
        "  same, GPU events                                          {:8.3}",
        median(&mut total_gpu)
    );
    println!(
        "  total, pairs appended to a Vec kept across frames, wall   {:8.3}",
        median(&mut total_reused)
    );
    println!(
        "  same, GPU events                                          {:8.3}",
        median(&mut total_reused_gpu)
    );
}
