//! Image-space penetration field (Hoff et al. 2002, `Context::intersection_volume`) on the
//! built-in deforming tori (`Scene::builtin_deforming_tori`: 2 × 5,000 triangles, both
//! deforming every frame, 16 frames): the tolerance sweep d/4 … 4d (d = the harness's
//! `penetration-field` tolerance, 0.0207) with the samples inside both tori and the frame
//! times (update + query, median of the repeats per frame, then median, mean — the paper's
//! average per frame — and worst over the frames; also the CPU time of all threads per frame, steadier than wall time on a shared
//! machine), and a picture of the frame with the most samples: samples coloured by their depth
//! (blue shallow → red deep), dark arrows for the directions out of B (about 80 samples,
//! length = depth).
//!
//! ```text
//! cargo run --release -p gprox-bench --bin penetration-field -- [--backend cpu|cuda|emulated]
//!     [--repeats N] [--frames N] [--frame F] [--scales 0.25,1] [--no-depths] [--profile] [--out DIR]
//! ```
//!
//! `--scales` picks the tolerances (multiples of d, default `0.25,0.5,1,2,4`) and `--frame F`
//! runs only frame `F` (e.g. the deepest at d/4, frame 0) — for profiling one case;
//! `--no-depths` times the classification alone (count and volume, no per-sample depths).
//! `--profile` adds the kernel profile of the frames at `d` on a device backend (per kernel:
//! launches and device time per frame).
//!
//! Prints markdown and writes `DIR/penetration-field.md` and `DIR/penetration-field.png`
//! (default `target/bench`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use gprox::render::Picture;
use gprox::{Backend, Context, ImageSpaceOptions, Intersection, Model};
use gprox_bench::kernel_profile::profile_frames;
use gprox_bench::query::field_tolerance;
use gprox_geometry::scene::Scene;

const USAGE: &str = "penetration-field [--backend cpu|cuda|emulated] [--repeats N] [--frames N] \
[--frame F] [--scales 0.25,1] [--no-depths] [--profile] [--out DIR]
  the image-space tolerance sweep on the built-in deforming tori (see the file's docs)";

struct Args {
    backend: Backend,
    repeats: usize,
    frames: Option<usize>,
    frame: Option<usize>,
    scales: Vec<f64>,
    depths: bool,
    profile: bool,
    out: PathBuf,
}

fn args() -> Result<Args> {
    let mut a = Args {
        backend: Backend::Cpu,
        repeats: 3,
        frames: None,
        frame: None,
        scales: vec![0.25, 0.5, 1.0, 2.0, 4.0],
        depths: true,
        profile: false,
        out: PathBuf::from("target/bench"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().with_context(|| format!("{k} needs a value"));
        match k.as_str() {
            "--backend" => a.backend = v()?.parse().map_err(anyhow::Error::msg)?,
            "--repeats" => a.repeats = v()?.parse::<usize>()?.max(1),
            "--frames" => a.frames = Some(v()?.parse()?),
            "--no-depths" => a.depths = false,
            "--profile" => a.profile = true,
            "--frame" => a.frame = Some(v()?.parse()?),
            "--scales" => a.scales = v()?.split(',').map(str::parse).collect::<Result<_, _>>()?,
            "--out" => a.out = PathBuf::from(v()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The mean (the paper's measure: Hoff et al. report average times per frame).
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// CPU time of every thread of this process so far (ns; Linux `schedstat`, `None`
/// elsewhere): on a shared machine the CPU time of a frame is steadier than its wall time.
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// One frame: update both models, then the query (timed together): wall and CPU ms.
fn frame(
    ctx: &Context,
    scene: &Scene,
    models: &mut [Model; 2],
    f: usize,
    opts: &ImageSpaceOptions,
) -> Result<(f64, f64, Intersection)> {
    let cpu = process_cpu_ns();
    let t = Instant::now();
    for (i, m) in models.iter_mut().enumerate() {
        ctx.update(m, scene.positions(f, i))?;
    }
    let r = ctx.intersection_volume(
        &models[0],
        &scene.pose(f, 0),
        &models[1],
        &scene.pose(f, 1),
        opts,
    )?;
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let cpu = match (cpu, process_cpu_ns()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 * 1e-6,
        _ => f64::NAN,
    };
    Ok((wall, cpu, r))
}

fn main() -> Result<()> {
    let args = args()?;
    let scene = Scene::builtin_deforming_tori();
    let ctx = Context::new(args.backend)?;
    let mut models = [
        ctx.model(scene.mesh(0).clone())?,
        ctx.model(scene.mesh(1).clone())?,
    ];
    let frames = args.frames.unwrap_or(usize::MAX).min(scene.frame_count());
    let frame_list: Vec<usize> = match args.frame {
        Some(f) if f < scene.frame_count() => vec![f],
        Some(f) => bail!("--frame {f}: the scene has {} frames", scene.frame_count()),
        None => (0..frames).collect(),
    };
    let d = field_tolerance(&scene, 0);
    let threads = rayon::current_num_threads();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Penetration field, `{}` ({} frames, 2 × {} triangles, deforming), backend `{}`, {threads} rayon threads, {} repeats per frame; load average at start: {}\n",
        scene.name(),
        frame_list.len(),
        scene.mesh(0).face_count(),
        args.backend,
        args.repeats,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    let _ = writeln!(
        md,
        "| tolerance | samples inside both (mean / max) | volume (mean) | median frame | mean frame | worst frame | CPU ms of the median / worst frame (all threads) |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|");
    let mut best: Option<(u64, usize)> = None;
    for &m in &args.scales {
        let opts = ImageSpaceOptions {
            depths: args.depths,
            ..ImageSpaceOptions::new(d * m)
        };
        let (mut times, mut samples, mut volume, mut most) = (Vec::new(), 0u64, 0.0, 0u64);
        let mut cpus = Vec::new();
        for &f in &frame_list {
            let (mut reps, mut cpu) = (Vec::new(), Vec::new());
            let mut last = None;
            for _ in 0..args.repeats {
                let (ms, c, r) = frame(&ctx, &scene, &mut models, f, &opts)?;
                reps.push(ms);
                cpu.push(c);
                last = Some(r);
            }
            let r = last.context("no repeat")?;
            times.push(median(reps));
            cpus.push(median(cpu));
            samples += r.count();
            volume += r.volume();
            most = most.max(r.count());
            if m == 1.0 && best.is_none_or(|(c, _)| r.count() > c) {
                best = Some((r.count(), f));
            }
        }
        let worst = times.iter().copied().fold(0.0, f64::max);
        let worst_cpu = cpus.iter().copied().fold(0.0, f64::max);
        let label = match m {
            0.25 => "d/4".to_string(),
            0.5 => "d/2".to_string(),
            1.0 => "d".to_string(),
            _ => format!("{m}d"),
        };
        let _ = writeln!(
            md,
            "| {label} = {:.4} | {} / {most} | {:.4} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} / {:.2} ms |",
            d * m,
            samples / frame_list.len().max(1) as u64,
            volume / frame_list.len().max(1) as f64,
            median(times.clone()),
            mean(&times),
            worst,
            median(cpus),
            worst_cpu
        );
    }
    if let (true, Some(device)) = (args.profile, ctx.device()) {
        let opts = ImageSpaceOptions {
            depths: args.depths,
            ..ImageSpaceOptions::new(d)
        };
        let table = profile_frames(device, frame_list.len(), |k| {
            frame(&ctx, &scene, &mut models, frame_list[k], &opts).map(|_| ())
        })?;
        let _ = writeln!(
            md,
            "\nKernel profile of the frames at d (device time around each launch):\n\n{table}"
        );
    }
    print!("{md}");
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join("penetration-field.md"), &md)?;
    // The picture: the frame with the most samples at tolerance d.
    if let Some((_, f)) = best {
        let (_, _, r) = frame(&ctx, &scene, &mut models, f, &ImageSpaceOptions::new(d))?;
        let mut pic = Picture::new(900, 700);
        for (i, m) in models.iter().enumerate() {
            let color = if i == 0 {
                [200, 200, 200]
            } else {
                [170, 190, 170]
            };
            pic.add_mesh(m.mesh(), &scene.pose64(f, i), color, &[]);
        }
        let deepest = r
            .samples()
            .iter()
            .map(|s| s.depth_in_b())
            .fold(0.0, f64::max);
        let step = (r.samples().len() / 80).max(1);
        for (k, s) in r.samples().iter().enumerate() {
            let c = Picture::depth_color(s.depth_in_b() / deepest.max(1e-12));
            pic.add_dot_colored(s.position, c);
            if k % step == 0 {
                pic.add_arrow(s.position, s.b.point, [20, 20, 20]);
            }
        }
        let path = args.out.join("penetration-field.png");
        pic.save_png(&path)?;
        println!(
            "\npicture: {} (frame {f}, {} samples, deepest {:.4} in B)",
            path.display(),
            r.count(),
            deepest
        );
    }
    Ok(())
}
