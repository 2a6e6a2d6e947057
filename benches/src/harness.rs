//! Command-line options and the top-level loop: scenes × targets × backend configurations.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use clap::Parser;
use gprox::geometry::scene::{Scene, Truth};
use gprox::{Backend, Context};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::check::check_reference;
use crate::oracle;
use crate::peers::PeerResults;
use crate::report::{DeviceOpsRecord, LbvhRecord, Machine, PeerRatio, Report, RunRecord};
use crate::run::{run_target, same_answer, targets, RunData, Timing};
use crate::stats::{median, Summary};

/// Options of the harness.
#[derive(Clone, Debug, Parser)]
#[command(name = "gprox-bench", about = "gprox benchmark harness")]
pub struct Args {
    /// Folder of `proxbench-scene/1` scenes (default: $GPROX_SCENES, else ../shared/peers/scenes
    /// next to the workspace). Missing folder: only the built-in scene runs.
    #[arg(long)]
    pub scenes: Option<PathBuf>,
    /// Folder of reference/peer result files `<scene>.json` (default: `<scenes>/../results`).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Only these scenes (comma separated names; `builtin-two-tori`,
    /// `builtin-deforming-tori`, `builtin-flag-balls` and `builtin-folding-sheet` are the
    /// built-in ones).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Use the first N frames of every scene (default: all).
    #[arg(long)]
    pub frames: Option<usize>,
    /// CPU thread counts to run (default: 1 and all cores).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Repetitions of every build and every frame's update and query.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// How a frame's repetitions give its time: `median` (warm caches) or `first` (the first
    /// call of every frame, as the peers' harness times them; `scripts/compare-peers.sh`).
    #[arg(long, value_enum, default_value_t = Timing::Median)]
    pub timing: Timing,
    /// Output folder for report.json, report.md and the plots.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Skip the built-in scenes.
    #[arg(long)]
    pub no_builtin: bool,
    /// Skip the CUDA backend even when a device is present.
    #[arg(long)]
    pub no_cuda: bool,
    /// Also run the CUDA kernels through the host emulator (slow: use with `--only` and
    /// `--frames`), so device-op counts (`device_ops` in report.json) appear without a GPU.
    #[arg(long)]
    pub emulated: bool,
    /// Triangle count of the generated mesh for the LBVH build/refit timing (0: skip).
    #[arg(long, default_value_t = 1_000_000)]
    pub lbvh_triangles: usize,
    /// Threads for the LBVH timing.
    #[arg(long, default_value_t = 2)]
    pub lbvh_threads: usize,
    /// parry3d-f64 side by side: frames per target (evenly spaced over the run's frames;
    /// 0: no parry). Needs the default cargo feature `parry`.
    #[arg(long, default_value_t = 10)]
    pub parry_frames: usize,
    /// Skip the stage table (update / traversal / exact tests, front tracking off and on).
    #[arg(long)]
    pub no_stages: bool,
}

impl Default for Args {
    fn default() -> Self {
        Self::parse_from(["gprox-bench"])
    }
}

fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// One backend configuration to time.
struct Config {
    backend: Backend,
    threads: usize,
    pool: Option<rayon::ThreadPool>,
}

impl Config {
    fn label(&self) -> String {
        self.backend.to_string()
    }
}

fn configs(args: &Args) -> Result<(Vec<Config>, Vec<String>)> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = if args.threads.is_empty() {
        vec![1, all]
    } else {
        args.threads.clone()
    };
    threads.retain(|&t| t > 0);
    threads.dedup();
    let mut out = Vec::new();
    for t in threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
        out.push(Config {
            backend: Backend::Cpu,
            threads: t,
            pool: Some(pool),
        });
    }
    let mut devices = Vec::new();
    if args.emulated {
        out.push(Config {
            backend: Backend::Emulated,
            threads: 0,
            pool: None,
        });
    }
    if !args.no_cuda {
        if let Ok(ctx) = Context::new(Backend::Cuda(0)) {
            devices.push(ctx.backend().to_string());
            out.push(Config {
                backend: Backend::Cuda(0),
                threads: 0,
                pool: None,
            });
        }
    }
    Ok((out, devices))
}

fn scene_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("scene.json").is_file())
        .collect();
    v.sort();
    v
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn lbvh_timing(triangles: usize, threads: usize, repeats: usize) -> Result<LbvhRecord> {
    // A torus with 2 * segments * sides ≈ triangles, sides = segments / 2.
    let segments = ((triangles as f64).sqrt().ceil() as u32).max(3);
    let sides = (segments / 2).max(3);
    let mut mesh =
        gprox::geometry::scene::torus(1.0, 0.3, segments, sides).context("torus parameters")?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let moved: Vec<_> = mesh
        .positions()
        .iter()
        .map(|p| *p * 1.01 + glam::Vec3::splat(0.001))
        .collect();
    let (mut build, mut refit, mut planned) = (Vec::new(), Vec::new(), Vec::new());
    pool.install(|| -> Result<()> {
        let mut bvh = gprox::bvh::lbvh::build(&mesh);
        for _ in 0..repeats.max(3) {
            let t = Instant::now();
            bvh = gprox::bvh::lbvh::build(&mesh);
            build.push(t.elapsed().as_secs_f64() * 1e3);
        }
        mesh.set_positions(moved)?;
        for _ in 0..repeats.max(3) {
            let t = Instant::now();
            gprox::bvh::refit::refit_from_mesh(&mut bvh, &mesh)?;
            refit.push(t.elapsed().as_secs_f64() * 1e3);
        }
        // A deforming model's per-frame refit: its plan is made once per tree and mesh.
        let plan = gprox::bvh::refit_plan::MeshRefitPlan::new(&bvh, &mesh)?;
        for _ in 0..repeats.max(3) {
            let t = Instant::now();
            plan.refit(&mut bvh, &mesh)?;
            planned.push(t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(())
    })?;
    Ok(LbvhRecord {
        mesh: format!("torus {segments}x{sides}"),
        triangles: mesh.face_count(),
        threads,
        build_ms: Summary::of(&build),
        refit_ms: Summary::of(&refit),
        refit_plan_ms: Summary::of(&planned),
    })
}

/// Runs everything `args` asks for, writes the reports, prints the markdown table.
/// Returns `Ok(false)` when results disagree (with the reference or between backends).
pub fn run_all(args: &Args) -> Result<bool> {
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let scenes_dir = args.scenes.clone().unwrap_or_else(|| {
        std::env::var_os("GPROX_SCENES")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_dir().join("../shared/peers/scenes"))
    });
    let results_dir = args
        .results
        .clone()
        .unwrap_or_else(|| scenes_dir.join("../results"));
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| workspace_dir().join("target/bench"));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("{}", out_dir.display()))?;
    let load = loadavg();
    let (configs, cuda_devices) = configs(args)?;

    let mut report = Report {
        schema: crate::report::SCHEMA,
        date: crate::report::iso_date(unix),
        machine: Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            loadavg: load,
            cuda_devices,
        },
        repeats: args.repeats.max(1),
        timing: args.timing,
        runs: Vec::new(),
        lbvh: Vec::new(),
        stages: Vec::new(),
        skipped: Vec::new(),
        failures: Vec::new(),
        unverified: Vec::new(),
        parry_disagreements: Vec::new(),
    };
    if !scenes_dir.is_dir() {
        eprintln!(
            "note: scene folder {} not found; running the built-in scene only",
            scenes_dir.display()
        );
    }
    // A built-in scene is `Err(its name)`, a scene folder `Ok(path)`.
    let mut sources: Vec<std::result::Result<PathBuf, &'static str>> = Vec::new();
    if !args.no_builtin {
        sources.push(Err("builtin-two-tori"));
        sources.push(Err("builtin-deforming-tori"));
        sources.push(Err("builtin-flag-balls"));
        sources.push(Err("builtin-folding-sheet"));
    }
    sources.extend(scene_dirs(&scenes_dir).into_iter().map(Ok));
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);

    let mut staged = Vec::new();
    let bars = MultiProgress::new();
    let style = ProgressStyle::with_template("{prefix:>28} [{bar:30}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    for src in sources {
        match &src {
            Ok(dir) => {
                let name = dir.file_name().map(|n| n.to_string_lossy().to_string());
                if !wanted(name.as_deref().unwrap_or("")) {
                    continue;
                }
            }
            Err(name) if !wanted(name) => continue,
            Err(_) => {}
        }
        let spinner = bars.add(ProgressBar::new_spinner());
        spinner.set_message(format!(
            "loading {}",
            src.as_ref()
                .map_or_else(|n| (*n).to_string(), |d| d.display().to_string())
        ));
        let scene = match &src {
            Err("builtin-deforming-tori") => Scene::builtin_deforming_tori(),
            Err("builtin-flag-balls") => Scene::builtin_flag_balls(),
            Err("builtin-folding-sheet") => Scene::builtin_folding_sheet(),
            Err(_) => Scene::builtin(),
            Ok(dir) => Scene::load(dir)?,
        };
        spinner.finish_and_clear();
        let peer_path = results_dir.join(format!("{}.json", scene.name()));
        let peers = if src.is_ok() {
            PeerResults::load(&peer_path)?
        } else {
            None
        };
        let n = args.frames.unwrap_or(usize::MAX).min(scene.frame_count());
        let frames: Vec<usize> = (0..n).collect();
        let (tgts, skipped) = targets(&scene);
        report.skipped.extend(skipped);
        let runs: usize = tgts
            .iter()
            .map(|t| configs.iter().filter(|c| t.runs_on(c.backend)).count())
            .sum();
        let bar = bars.add(ProgressBar::new((runs * n) as u64));
        bar.set_style(style.clone());
        bar.set_prefix(scene.name().to_string());
        for t in &tgts {
            let first_run = report.runs.len();
            let mut first_data: Option<RunData> = None;
            let mut oracle_truth: Option<Option<Truth>> = None;
            for c in configs.iter().filter(|c| t.runs_on(c.backend)) {
                bar.set_message(format!(
                    "{} {} {} x{}",
                    t.kind.as_str(),
                    t.label,
                    c.label(),
                    c.threads
                ));
                let ctx = Context::new(c.backend)?;
                let go = || {
                    run_target(
                        &ctx,
                        &scene,
                        t,
                        &frames,
                        (args.repeats, args.timing),
                        || bar.inc(1),
                    )
                };
                let data = match &c.pool {
                    Some(pool) => pool.install(go),
                    None => go(),
                }
                .with_context(|| format!("{} {} {}", scene.name(), t.kind.as_str(), t.label))?;
                let pq = peers
                    .as_ref()
                    .and_then(|p| p.get(t.kind.as_str(), &t.label));
                // The scene's truth, else (small collision targets with no reference) the
                // brute-force sweep of `oracle`, computed once per target.
                let truth = match scene.truth().get(t.kind.as_str(), &t.label) {
                    Some(truth) => Some(("scene.json: truth", truth)),
                    None if pq.is_none_or(|p| p.reference.is_empty()) => oracle_truth
                        .get_or_insert_with(|| oracle::collide_truth(&scene, t, frames.len()))
                        .clone()
                        .map(|truth| ("brute force (oracle.rs)", truth)),
                    None => None,
                };
                let mut reference =
                    check_reference(&data, pq, &format!("{}: ref", peer_path.display()), truth);
                if t.kind == gprox::geometry::scene::QueryKind::PenetrationField {
                    // Every run of the image-space target is checked by the brute-force
                    // sample oracle (the scene needs no stored truth).
                    crate::field_oracle::check(&scene, t, &data, &mut reference)?;
                    reference.source = match reference.source.as_str() {
                        "none" => "ray-parity oracle".into(),
                        s => format!("{s} + ray-parity oracle"),
                    };
                }
                if reference.source == "none" {
                    let what = format!("{} {} {}", scene.name(), t.kind.as_str(), t.label);
                    eprintln!(
                        "warning: {what}: no reference results and no truth in the scene: \
                         unverified"
                    );
                    if !report.unverified.contains(&what) {
                        report.unverified.push(what);
                    }
                }
                for m in &reference.mismatches {
                    report.failures.push(format!(
                        "{} {} {} on {} x{}: {m}",
                        scene.name(),
                        t.kind.as_str(),
                        t.label,
                        c.label(),
                        c.threads
                    ));
                }
                if let Some(base) = &first_data {
                    for (k, (a, b)) in base.frames.iter().zip(&data.frames).enumerate() {
                        let hashes_differ = base.pair_hashes[k] != data.pair_hashes[k]
                            && t.kind != gprox::geometry::scene::QueryKind::Distance;
                        if !same_answer(a, b) || hashes_differ {
                            report.failures.push(format!(
                                "{} {} {} frame {}: {} x{} disagrees with the first configuration",
                                scene.name(),
                                t.kind.as_str(),
                                t.label,
                                a.frame,
                                c.label(),
                                c.threads
                            ));
                        }
                    }
                }
                let upd: Vec<f64> = data.frames.iter().map(|f| f.update_ms).collect();
                let qry: Vec<f64> = data.frames.iter().map(|f| f.query_ms).collect();
                let qry_wall: Vec<f64> = data.frames.iter().map(|f| f.query_wall_ms).collect();
                let tot: Vec<f64> = data
                    .frames
                    .iter()
                    .map(|f| f.update_ms + f.query_ms)
                    .collect();
                let total_ms = Summary::of(&tot);
                let noise: Vec<f64> = data.frames.iter().map(|f| f.query_noise_pct).collect();
                let peers_ratio = pq
                    .map(|pq| {
                        pq.peers
                            .iter()
                            .map(|p| {
                                let peer_ms = p.median_query_ms + p.median_update_ms;
                                PeerRatio {
                                    peer: p.peer.clone(),
                                    peer_ms,
                                    ratio: total_ms.median / peer_ms.max(1e-12),
                                    peer_disagrees: p.disagrees,
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                report.runs.push(RunRecord {
                    scene: scene.name().to_string(),
                    query: t.kind.as_str().to_string(),
                    target: t.label.clone(),
                    backend: c.label(),
                    threads: c.threads,
                    triangles: data.triangles,
                    build_ms: Summary::of(&data.build_ms),
                    update_ms: Summary::of(&upd),
                    query_ms: Summary::of(&qry),
                    query_wall_ms: Summary::of(&qry_wall),
                    device_ops: DeviceOpsRecord::medians(
                        data.frames.iter().filter_map(|f| f.device_ops.as_ref()),
                    ),
                    total_ms,
                    query_noise_pct: median(&noise),
                    elements_per_s: data.triangles as f64 / (total_ms.median.max(1e-9) * 1e-3),
                    count_total: data.frames.iter().filter_map(|f| f.count).sum(),
                    frames_colliding: data
                        .frames
                        .iter()
                        .filter(|f| f.collide == Some(true))
                        .count(),
                    frames: data.frames.clone(),
                    reference,
                    peers: peers_ratio,
                    parry: None,
                });
                if first_data.is_none() {
                    first_data = Some(data);
                }
            }
            let runs: Vec<&RunRecord> = report.runs[first_run..].iter().collect();
            if let Err(e) = crate::plot::frame_times(&out_dir, &runs) {
                eprintln!("warning: plot for {} {}: {e:#}", scene.name(), t.label);
            }
            #[cfg(feature = "parry")]
            if let (true, Some(base)) = (
                args.parry_frames > 0 && crate::parry::supports(t),
                &first_data,
            ) {
                bar.set_message(format!("{} {} parry3d-f64", t.kind.as_str(), t.label));
                let pq = peers
                    .as_ref()
                    .and_then(|p| p.get(t.kind.as_str(), &t.label));
                crate::parry::attach(&mut report, first_run, &scene, t, base, pq, args, &bars);
            }
        }
        bar.finish();
        if !args.no_stages {
            staged.push((scene, frames));
        }
    }
    // The stage runs come after every scene's main measurements, which they would otherwise
    // disturb (their fronts leave large freed heaps behind); single-threaded, like the peers.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    for (scene, frames) in &staged {
        let recs = pool
            .install(|| crate::stages::stages(scene, frames, &mut report.failures))
            .with_context(|| format!("{} stages", scene.name()))?;
        report.stages.extend(recs);
    }
    if args.lbvh_triangles > 0 {
        let spinner = bars.add(ProgressBar::new_spinner());
        spinner.set_message(format!(
            "LBVH build/refit, {} triangles",
            args.lbvh_triangles
        ));
        report
            .lbvh
            .push(lbvh_timing(args.lbvh_triangles, args.lbvh_threads, 11)?);
        spinner.finish_and_clear();
    }
    let md = report.markdown();
    println!("{md}");
    let json_path = out_dir.join("report.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("{}", json_path.display()))?;
    std::fs::write(out_dir.join("report.md"), &md)?;
    eprintln!(
        "wrote {} and report.md, plots in {}",
        json_path.display(),
        out_dir.display()
    );
    Ok(report.failures.is_empty())
}
