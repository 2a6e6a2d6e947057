//! The harness's results: the JSON document (schema `gprox-bench/1`, see docs/bench-schema.md)
//! and its markdown tables.

use std::fmt::Write;

use serde::Serialize;

use crate::stats::Summary;

/// Version tag of the JSON document.
pub const SCHEMA: &str = "gprox-bench/1";

/// Device operations (the device layer's counter, `gprox::cuda::DeviceOps`): counted the same
/// way by CUDA and by the emulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DeviceOpsRecord {
    /// Kernel launches.
    pub launches: f64,
    /// Host synchronisations.
    pub syncs: f64,
    /// Bytes copied host → device.
    pub h2d_bytes: f64,
    /// Bytes read back device → host.
    pub d2h_bytes: f64,
    /// Device (and pinned host) allocations.
    pub allocations: f64,
}

impl DeviceOpsRecord {
    /// The counts of one frame.
    pub fn of(ops: &gprox::cuda::DeviceOps) -> Self {
        Self {
            launches: ops.launches as f64,
            syncs: ops.syncs as f64,
            h2d_bytes: ops.h2d_bytes as f64,
            d2h_bytes: ops.d2h_bytes as f64,
            allocations: ops.allocations as f64,
        }
    }

    /// Field-wise medians over frames (`None` without device frames).
    pub fn medians<'a>(frames: impl Iterator<Item = &'a DeviceOpsRecord> + Clone) -> Option<Self> {
        let field = |f: fn(&DeviceOpsRecord) -> f64| {
            crate::stats::median(&frames.clone().map(f).collect::<Vec<_>>())
        };
        frames.clone().next()?;
        Some(Self {
            launches: field(|o| o.launches),
            syncs: field(|o| o.syncs),
            h2d_bytes: field(|o| o.h2d_bytes),
            d2h_bytes: field(|o| o.d2h_bytes),
            allocations: field(|o| o.allocations),
        })
    }
}

/// One frame of one run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameRecord {
    /// Frame index in the scene.
    pub frame: usize,
    /// Median over repetitions of the per-frame update (refit of deforming objects), ms.
    pub update_ms: f64,
    /// Median over repetitions of the query, ms: on a GPU the time between CUDA events on its
    /// stream, else the host's clock.
    pub query_ms: f64,
    /// Median over repetitions of the query by the host's clock (launch overhead and host work
    /// included), ms.
    pub query_wall_ms: f64,
    /// Device backends: operations of the frame's update and of one (the last) repetition of
    /// its query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ops: Option<DeviceOpsRecord>,
    /// Relative std dev of the query repetitions, %.
    pub query_noise_pct: f64,
    /// Intersecting triangle pairs (collide-all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Whether anything intersects (collide-all, collide-any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collide: Option<bool>,
    /// Minimum distance (distance queries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<f64>,
    /// Earliest time of impact in `[0, 1]` of the step to the next frame, 1 if none (ccd;
    /// gprox reports the certified lower bound `t_lo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toi: Option<f64>,
    /// Colliding object pairs (queries over `"all"` pairs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_pairs: Option<Vec<[u32; 2]>>,
    /// Closest point on the first object, world coordinates (distance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p1: Option<[f64; 3]>,
    /// Closest point on the second object, world coordinates (distance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p2: Option<[f64; 3]>,
    /// Vertices of either mesh strictly inside the other closed mesh (penetration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inside_vertices: Option<u64>,
    /// Largest depth of an inside vertex (penetration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<f64>,
    /// Summed depth of the inside vertices (penetration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_depth: Option<f64>,
}

/// The comparison of a run's results with the reference results of the scene.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RefCheck {
    /// Where the reference came from (`shared/peers/results/<scene>.json: ref`), or `none`.
    pub source: String,
    /// Frames compared.
    pub frames_checked: usize,
    /// Every disagreement, e.g. `f12: count 420 vs 421 (ref)`.
    pub mismatches: Vec<String>,
    /// Differences that are allowed but worth knowing (a conservative time of impact earlier
    /// than the reference).
    pub notes: Vec<String>,
}

/// A peer's median next to ours.
#[derive(Clone, Debug, Serialize)]
pub struct PeerRatio {
    /// Peer name.
    pub peer: String,
    /// Peer's median update + query per frame, ms.
    pub peer_ms: f64,
    /// Our median update + query per frame divided by the peer's (< 1: we are faster).
    pub ratio: f64,
    /// The peer's own results disagree with the reference on some frame.
    pub peer_disagrees: bool,
}

/// One (scene, query, target, backend, threads) measurement.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// Scene name.
    pub scene: String,
    /// Query kind (`collide-all`, ...).
    pub query: String,
    /// `"a|b"`, `"all"` or an object name, as in the peers' result files.
    pub target: String,
    /// `cpu` or `cuda:<i>`.
    pub backend: String,
    /// CPU worker threads (rayon pool size); 0 for GPU runs.
    pub threads: usize,
    /// Triangles taking part.
    pub triangles: usize,
    /// One-off BVH construction of the objects involved, per repetition, ms.
    pub build_ms: Summary,
    /// Per-frame update (refit), over frames, ms.
    pub update_ms: Summary,
    /// Per-frame query, over frames, ms (CUDA events on a GPU).
    pub query_ms: Summary,
    /// Per-frame query by the host's clock, over frames, ms.
    pub query_wall_ms: Summary,
    /// Device backends: per-frame medians of the device operations (update + query).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ops: Option<DeviceOpsRecord>,
    /// Per-frame update + query, over frames, ms.
    pub total_ms: Summary,
    /// Median over frames of the per-frame repetition noise of the query, %.
    pub query_noise_pct: f64,
    /// Triangles processed per second at the median frame time (`triangles / total_ms.median`).
    pub elements_per_s: f64,
    /// Sum of `count` over frames (collide-all, self).
    pub count_total: u64,
    /// Frames where something collides.
    pub frames_colliding: usize,
    /// Per-frame results and timings.
    pub frames: Vec<FrameRecord>,
    /// Agreement with the reference results.
    pub reference: RefCheck,
    /// Peers measured on the same scene and query.
    pub peers: Vec<PeerRatio>,
    /// parry3d-f64 on the same target in the same run (cargo feature `parry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parry: Option<ParryRecord>,
}

/// parry3d-f64 on the same target and frames, in the same process and run.
#[derive(Clone, Debug, Serialize)]
pub struct ParryRecord {
    /// `parry3d-f64 0.25`.
    pub version: String,
    /// Frames parry ran (a subset of the run's frames, evenly spaced).
    pub frames: Vec<usize>,
    /// One-off `TriMesh` construction of the rigid meshes, over repetitions, ms.
    pub build_ms: Summary,
    /// Per frame: `TriMesh` rebuild of the deforming objects, over the frames, ms.
    pub update_ms: Summary,
    /// Per frame: the query, over the frames, ms.
    pub query_ms: Summary,
    /// Per frame: update + query, over the frames, ms.
    pub total_ms: Summary,
    /// This run's median update + query over the same frames, ms.
    pub gprox_ms: f64,
    /// `gprox_ms / total_ms.median` (< 1: gprox faster).
    pub ratio: f64,
    /// Frames whose parry result was compared with gprox's.
    pub frames_checked: usize,
    /// Every frame where parry disagrees with gprox or with the reference, e.g.
    /// `f12: count 420 (parry) vs 421 (gprox)`. Reported, never a failure of the run.
    pub disagreements: Vec<String>,
}

/// LBVH build and refit of a large generated mesh.
#[derive(Clone, Debug, Serialize)]
pub struct LbvhRecord {
    /// What was measured (`torus 1000x500`).
    pub mesh: String,
    /// Triangle count.
    pub triangles: usize,
    /// Worker threads.
    pub threads: usize,
    /// Build times over repetitions, ms.
    pub build_ms: Summary,
    /// Refit times (leaf boxes + bottom-up pass) over repetitions, ms.
    pub refit_ms: Summary,
    /// Refit times with a `MeshRefitPlan` made once beforehand (a deforming model's update), ms.
    pub refit_plan_ms: Summary,
}

/// A (scene, query) the harness did not run, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// Scene name.
    pub scene: String,
    /// Query kind.
    pub query: String,
    /// Reason.
    pub why: String,
}

/// Machine facts recorded with the numbers.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cpus: usize,
    /// `/proc/loadavg` at the start (empty when unavailable).
    pub loadavg: String,
    /// CUDA devices used (empty: none).
    pub cuda_devices: Vec<String>,
}

/// The whole JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Start time, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// Where it ran.
    pub machine: Machine,
    /// Repetitions per frame (queries) and per build.
    pub repeats: usize,
    /// Which repetition times a frame (`median` or `first`).
    #[serde(default)]
    pub timing: crate::run::Timing,
    /// Every measurement.
    pub runs: Vec<RunRecord>,
    /// Large-mesh LBVH timings.
    pub lbvh: Vec<LbvhRecord>,
    /// Stage times (update, traversal, exact tests) with front tracking off and on.
    pub stages: Vec<crate::stages::StageRecord>,
    /// Scene/query combinations not run.
    pub skipped: Vec<Skipped>,
    /// Disagreements (with the reference or between backends); non-empty = failed run.
    pub failures: Vec<String>,
    /// Targets (`scene query target`) whose results nothing checked: no reference results
    /// and no truth in the scene. A report with any is unverified.
    pub unverified: Vec<String>,
    /// parry3d-f64 results that differ from gprox's or the reference's (not failures).
    pub parry_disagreements: Vec<String>,
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (proleptic Gregorian, UTC).
pub fn iso_date(unix: u64) -> String {
    let days = (unix / 86400) as i64;
    let secs = unix % 86400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Escapes `|` for markdown table cells (targets look like `a|b`).
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

impl Report {
    /// The markdown tables: runs, peers side by side, LBVH timings, failures.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# gprox bench — {} ({} CPUs, load {})\n",
            self.date, self.machine.cpus, self.machine.loadavg
        );
        let _ = writeln!(
            s,
            "Times in ms per frame: min / **median** / max over frames (each frame: median of {} \
             repetitions); noise = median relative std dev of the repetitions.\n",
            self.repeats
        );
        s.push_str(
            "| scene | query | target | backend | thr | build | update (median) | query min / **med** / max | noise | count total | colliding frames | ref check | best peer (ms) | ratio |\n",
        );
        s.push_str("|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---|---|---:|\n");
        for r in &self.runs {
            let check = if r.reference.frames_checked == 0 {
                "—".to_string()
            } else if r.reference.mismatches.is_empty() {
                format!("ok ({} f)", r.reference.frames_checked)
            } else {
                format!("**{} MISMATCH**", r.reference.mismatches.len())
            };
            let best = r
                .peers
                .iter()
                .filter(|p| !p.peer_disagrees)
                .min_by(|a, b| a.peer_ms.total_cmp(&b.peer_ms));
            let (peer, ratio) = match best {
                Some(p) => (
                    format!("{} {}", p.peer, ms(p.peer_ms)),
                    format!("{:.2}", p.ratio),
                ),
                None => ("—".into(), "—".into()),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} / **{}** / {} | {:.1}% | {} | {} | {} | {} | {} |",
                r.scene,
                r.query,
                cell(&r.target),
                r.backend,
                r.threads,
                ms(r.build_ms.median),
                ms(r.update_ms.median),
                ms(r.query_ms.min),
                ms(r.query_ms.median),
                ms(r.query_ms.max),
                r.query_noise_pct,
                if r.query == "collide-all" || r.query == "self" || r.query == "penetration-field" {
                    r.count_total.to_string()
                } else {
                    "—".into()
                },
                r.frames_colliding,
                check,
                peer,
                ratio
            );
        }
        // Device runs: query time by CUDA events and by the host's clock, and the op counts.
        let device: Vec<&RunRecord> = self
            .runs
            .iter()
            .filter(|r| r.device_ops.is_some())
            .collect();
        if !device.is_empty() {
            s.push_str(
                "\n## Device runs\n\nPer-frame medians: query time by the device clock (CUDA \
                 events; the host's clock in the emulator) and by the host's clock, and the device \
                 operations of update + query.\n\n\
                 | scene | query | target | backend | query ms (device) | query ms (host) | launches | syncs | H→D bytes | D→H bytes | allocations |\n\
                 |---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
            );
            for r in device {
                let o = r.device_ops.unwrap_or_default();
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    r.scene,
                    r.query,
                    cell(&r.target),
                    r.backend,
                    ms(r.query_ms.median),
                    ms(r.query_wall_ms.median),
                    o.launches,
                    o.syncs,
                    o.h2d_bytes,
                    o.d2h_bytes,
                    o.allocations
                );
            }
        }
        // Peers side by side, for the single-thread CPU runs.
        let mut peers = String::new();
        for r in self
            .runs
            .iter()
            .filter(|r| r.threads == 1 && !r.peers.is_empty())
        {
            for p in &r.peers {
                let _ = writeln!(
                    peers,
                    "| {} | {} | {} | {} | {} | {:.2} | {} |",
                    r.scene,
                    r.query,
                    p.peer,
                    ms(p.peer_ms),
                    ms(r.total_ms.median),
                    p.ratio,
                    if p.peer_disagrees {
                        "wrong results"
                    } else {
                        ""
                    }
                );
            }
        }
        if !peers.is_empty() {
            s.push_str("\n## Peers (single thread, median update + query per frame)\n\n");
            s.push_str("| scene | query | peer | peer ms | gprox ms | gprox / peer | note |\n");
            s.push_str("|---|---|---|---:|---:|---:|---|\n");
            s.push_str(&peers);
        }
        let parry: Vec<&RunRecord> = self
            .runs
            .iter()
            .filter(|r| r.threads == 1 && r.parry.is_some())
            .collect();
        if !parry.is_empty() {
            s.push_str(
                "\n## parry3d-f64 side by side (same process, single thread, median update + query per frame over the same frames)\n\n",
            );
            s.push_str("| scene | query | target | frames | parry build | parry update | parry query | parry ms | gprox ms | gprox / parry | disagreements |\n");
            s.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
            for r in parry {
                let Some(p) = &r.parry else { continue };
                let dis = if p.disagreements.is_empty() {
                    format!("none ({} f)", p.frames_checked)
                } else {
                    format!(
                        "**{}**: {}",
                        p.disagreements.len(),
                        cell(&p.disagreements[..p.disagreements.len().min(2)].join("; "))
                    )
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
                    r.scene,
                    r.query,
                    cell(&r.target),
                    p.frames.len(),
                    ms(p.build_ms.median),
                    ms(p.update_ms.median),
                    ms(p.query_ms.median),
                    ms(p.total_ms.median),
                    ms(p.gprox_ms),
                    p.ratio,
                    dis
                );
            }
        }
        if !self.lbvh.is_empty() {
            s.push_str("\n## LBVH on a large mesh\n\n");
            s.push_str("| mesh | triangles | threads | build min / **med** / max | refit min / **med** / max | planned refit min / **med** / max |\n");
            s.push_str("|---|---:|---:|---|---|---|\n");
            for l in &self.lbvh {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} / **{}** / {} | {} / **{}** / {} | {} / **{}** / {} |",
                    l.mesh,
                    l.triangles,
                    l.threads,
                    ms(l.build_ms.min),
                    ms(l.build_ms.median),
                    ms(l.build_ms.max),
                    ms(l.refit_ms.min),
                    ms(l.refit_ms.median),
                    ms(l.refit_ms.max),
                    ms(l.refit_plan_ms.min),
                    ms(l.refit_plan_ms.median),
                    ms(l.refit_plan_ms.max)
                );
            }
        }
        if !self.stages.is_empty() {
            s.push_str(
                "\n## Stages, front tracking off / on (single thread, median per frame, ms)\n\n",
            );
            s.push_str("| scene | query | target | front | update | traversal | exact | total | candidates | front pairs | pairs |\n");
            s.push_str("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for r in &self.stages {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | **{}** | {} | {} | {} |",
                    r.scene,
                    r.query,
                    cell(&r.target),
                    if r.front_tracking { "on" } else { "off" },
                    ms(r.update_ms.median),
                    ms(r.traversal_ms.median),
                    ms(r.exact_ms.median),
                    ms(r.total_ms.median),
                    r.candidates,
                    r.front_pairs,
                    r.pairs
                );
            }
        }
        if !self.skipped.is_empty() {
            s.push_str("\n## Not run\n\n");
            for k in &self.skipped {
                let _ = writeln!(s, "- {} / {}: {}", k.scene, k.query, k.why);
            }
        }
        if !self.unverified.is_empty() {
            s.push_str("\n## UNVERIFIED (no reference results, no truth in the scene)\n\n");
            for u in &self.unverified {
                let _ = writeln!(s, "- {u}");
            }
        }
        if !self.failures.is_empty() {
            s.push_str("\n## FAILURES\n\n");
            for f in &self.failures {
                let _ = writeln!(s, "- {f}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::iso_date;

    #[test]
    fn iso_dates() {
        assert_eq!(iso_date(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_date(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_date(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
