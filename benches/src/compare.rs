//! The combined comparison table: gprox's harness report (`report.json`, single-thread CPU
//! runs) next to every peer of the Python harness's result files (`results/<scene>.json` of
//! `shared/peers/run.sh --external gprox=…`), one row per scene × query × target, with the
//! fastest peer whose results agree with the reference and the ratio gprox / that peer.
//! Written by `gprox-compare` (see `scripts/compare-peers.sh`) as markdown and JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;
use serde_json::Value;

/// Peer columns in this order first (the rest follow alphabetically); `ref` is the oracle, not
/// a peer.
const PEER_ORDER: [&str; 7] = [
    "coal",
    "python-fcl",
    "parry3d",
    "parry3d-f64",
    "warp",
    "ipctk",
    "open3d",
];

/// One peer's figure for one row.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PeerCell {
    /// Peer name as in the result file.
    pub peer: String,
    /// Median update + query per frame, ms (`None`: not run).
    pub ms: Option<f64>,
    /// Frames the peer ran.
    pub frames: usize,
    /// Frames where its results disagree with the reference (the file's `disagreements`).
    pub disagreeing_frames: usize,
    /// Up to three examples of its disagreements.
    pub examples: Vec<String>,
    /// Why it did not run (unsupported, error), if it did not.
    pub not_run: Option<String>,
    /// Whether its results are exact answers to the query (false for the vertex-sampled
    /// distance bounds of open3d and warp).
    pub exact: bool,
}

/// One scene × query × target row.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Row {
    /// Scene name.
    pub scene: String,
    /// Query kind.
    pub query: String,
    /// `a|b`, `all` or an object name.
    pub target: String,
    /// gprox harness, CPU, 1 thread: median update + query per frame, ms.
    pub gprox_ms: Option<f64>,
    /// The gprox harness's own reference check: mismatching frames (0 = all agree).
    pub gprox_mismatches: usize,
    /// The gprox external peer as timed by the Python harness (same frames as the peers).
    pub gprox_external: Option<PeerCell>,
    /// Every other peer.
    pub peers: Vec<PeerCell>,
    /// Fastest exact peer without disagreements: (name, ms).
    pub best: Option<(String, f64)>,
    /// `gprox_ms / best` (< 1: gprox faster).
    pub ratio: Option<f64>,
    /// gprox / parry3d-f64 measured in the same process by the harness, if it ran.
    pub parry_same_process: Option<f64>,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Combined {
    /// Date of the gprox harness run (`report.json`).
    pub gprox_date: String,
    /// How the gprox harness timed a frame (`report.json`'s `timing`: `median` of its
    /// repetitions or its `first` call; `median` for reports written before the field).
    pub gprox_timing: String,
    /// Machine line of the peers' run (`meta.machine`) and its load average.
    pub peers_machine: String,
    /// Date of the peers' run.
    pub peers_date: String,
    /// Peer columns, in table order.
    pub peer_names: Vec<String>,
    /// Rows, in the order of the result files' queries.
    pub rows: Vec<Row>,
}

fn peer_cell(
    run: &Value,
    disagreements: &BTreeMap<String, (usize, Vec<String>)>,
    kind: &str,
) -> PeerCell {
    let peer = run["peer"].as_str().unwrap_or("?").to_string();
    let s = &run["summary"];
    let ms = s["median_query_ms"]
        .as_f64()
        .map(|q| q + s["median_update_ms"].as_f64().unwrap_or(0.0));
    let (n, ex) = disagreements.get(&peer).cloned().unwrap_or_default();
    PeerCell {
        exact: !(kind == "distance" && (peer == "open3d" || peer == "warp")),
        frames: run["frames"].as_array().map_or(0, Vec::len),
        disagreeing_frames: n,
        examples: ex,
        not_run: run["error"].as_str().map(|e| format!("error: {e}")),
        ms: if run.get("error").is_some() { None } else { ms },
        peer,
    }
}

/// Builds the comparison from a gprox harness report and the peers' result files.
/// `gprox_peer` is the name the gprox external binary was registered under (`gprox`).
pub fn combine(report: &Value, results: &[Value], gprox_peer: &str) -> Combined {
    let mut out = Combined {
        gprox_date: report["date"].as_str().unwrap_or("").to_string(),
        gprox_timing: report["timing"].as_str().unwrap_or("median").to_string(),
        ..Default::default()
    };
    let mut names: Vec<String> = Vec::new();
    for file in results {
        let meta = &file["meta"];
        if out.peers_date.is_empty() {
            out.peers_date = meta["date"].as_str().unwrap_or("").to_string();
            out.peers_machine = format!(
                "{} (load {})",
                meta["machine"].as_str().unwrap_or("?"),
                meta["loadavg"].as_str().unwrap_or("?")
            );
        }
        let scene = file["scene"].as_str().unwrap_or("?");
        for q in file["queries"].as_array().into_iter().flatten() {
            let kind = q["kind"].as_str().unwrap_or("?");
            let target = q["target"].as_str().unwrap_or("?");
            let disagreements: BTreeMap<String, (usize, Vec<String>)> = q["disagreements"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    let ex = d["examples"].as_array().into_iter().flatten().take(3);
                    (
                        d["peer"].as_str().unwrap_or("?").to_string(),
                        (
                            d["n"].as_u64().unwrap_or(1) as usize,
                            ex.filter_map(|e| e.as_str().map(String::from)).collect(),
                        ),
                    )
                })
                .collect();
            let mut row = Row {
                scene: scene.to_string(),
                query: kind.to_string(),
                target: target.to_string(),
                ..Default::default()
            };
            for run in q["runs"].as_array().into_iter().flatten() {
                let cell = peer_cell(run, &disagreements, kind);
                if cell.peer == "ref" {
                    continue;
                }
                if cell.peer == gprox_peer {
                    row.gprox_external = Some(cell);
                } else {
                    if !names.contains(&cell.peer) {
                        names.push(cell.peer.clone());
                    }
                    row.peers.push(cell);
                }
            }
            for u in q["unsupported"].as_array().into_iter().flatten() {
                let peer = u["peer"].as_str().unwrap_or("?").to_string();
                let why = u["why"].as_str().unwrap_or("").to_string();
                if peer == gprox_peer {
                    row.gprox_external = Some(PeerCell {
                        peer,
                        not_run: Some(why),
                        ..Default::default()
                    });
                } else if peer != "ref" && !row.peers.iter().any(|c| c.peer == peer) {
                    if !names.contains(&peer) {
                        names.push(peer.clone());
                    }
                    row.peers.push(PeerCell {
                        peer,
                        not_run: Some(why),
                        ..Default::default()
                    });
                }
            }
            // Our own numbers: the single-thread CPU run of the harness.
            if let Some(r) = report["runs"].as_array().into_iter().flatten().find(|r| {
                r["scene"] == scene
                    && r["query"] == kind
                    && r["target"] == target
                    && r["backend"] == "cpu"
                    && r["threads"] == 1
            }) {
                row.gprox_ms = r["total_ms"]["median"].as_f64();
                row.gprox_mismatches = r["reference"]["mismatches"].as_array().map_or(0, Vec::len);
                row.parry_same_process = r["parry"]["ratio"].as_f64();
            }
            row.best = row
                .peers
                .iter()
                .filter(|c| c.exact && c.disagreeing_frames == 0)
                .filter_map(|c| Some((c.peer.clone(), c.ms?)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            row.ratio = match (row.gprox_ms, &row.best) {
                (Some(g), Some((_, b))) if *b > 0.0 => Some(g / b),
                _ => None,
            };
            out.rows.push(row);
        }
    }
    names.sort_by_key(|n| {
        (
            PEER_ORDER
                .iter()
                .position(|p| p == n)
                .unwrap_or(PEER_ORDER.len()),
            n.clone(),
        )
    });
    out.peer_names = names;
    out
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn ratio(x: f64) -> String {
    if x >= 0.095 {
        format!("{x:.2}")
    } else {
        format!("{x:.2e}")
    }
}

fn cell_text(c: &PeerCell) -> String {
    match (c.ms, &c.not_run) {
        (Some(m), _) if c.disagreeing_frames > 0 => format!("{} ✗", ms(m)),
        (Some(m), _) if !c.exact => format!("{} ≈", ms(m)),
        (Some(m), _) => ms(m),
        (None, Some(w)) if w.starts_with("error") => "error".into(),
        _ => "—".into(),
    }
}

impl Combined {
    /// The markdown table and its legend.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "gprox harness run {} (CPU, 1 thread, a frame timed by its {}); peers' run {} on {} \
             (every frame called once).\n",
            self.gprox_date,
            if self.gprox_timing == "first" {
                "first call"
            } else {
                "median of repeated calls"
            },
            self.peers_date,
            self.peers_machine
        );
        s.push_str(
            "Median update + query per frame, ms. ✗ = the peer's results disagree with the \
             brute-force reference on some frame (see the flags); ≈ = not an exact answer \
             (vertex-sampled distance); — = not supported / not run. *best* = fastest exact peer \
             without disagreements; ratio < 1: gprox faster. *gprox ext* = the `gprox-peer` \
             binary timed by the Python harness on the peers' frames.\n\n",
        );
        let _ = write!(s, "| scene | query | target | gprox 1 thr | gprox ext |");
        for n in &self.peer_names {
            let _ = write!(s, " {n} |");
        }
        s.push_str(" best exact peer | gprox / best | gprox / parry3d-f64 (same process) | flags |\n|---|---|---|---:|---:|");
        for _ in &self.peer_names {
            s.push_str("---:|");
        }
        s.push_str("---|---:|---:|---|\n");
        for r in &self.rows {
            let mut flags: Vec<String> = Vec::new();
            if r.gprox_mismatches > 0 {
                flags.push(format!(
                    "**gprox: {} mismatches vs ref**",
                    r.gprox_mismatches
                ));
            }
            if let Some(g) = r
                .gprox_external
                .as_ref()
                .filter(|g| g.disagreeing_frames > 0)
            {
                flags.push(format!(
                    "**gprox ext: {} frames differ ({})**",
                    g.disagreeing_frames,
                    g.examples.join("; ")
                ));
            }
            let _ = write!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.scene,
                r.query,
                r.target.replace('|', "\\|"),
                r.gprox_ms.map_or("—".into(), ms),
                r.gprox_external.as_ref().map_or("—".into(), cell_text)
            );
            for n in &self.peer_names {
                let c = r.peers.iter().find(|c| &c.peer == n);
                let _ = write!(s, " {} |", c.map_or("—".into(), cell_text));
                if let Some(c) = c.filter(|c| c.disagreeing_frames > 0) {
                    flags.push(format!(
                        "{}: {} frames differ",
                        c.peer, c.disagreeing_frames
                    ));
                }
            }
            let _ = writeln!(
                s,
                " {} | {} | {} | {} |",
                r.best
                    .as_ref()
                    .map_or("—".into(), |(p, m)| format!("{p} {}", ms(*m))),
                r.ratio.map_or("—".into(), ratio),
                r.parry_same_process.map_or("—".into(), ratio),
                if flags.is_empty() {
                    "all agree".into()
                } else {
                    flags.join("; ").replace('|', "\\|")
                }
            );
        }
        s
    }
}

/// Reads `report` (gprox harness JSON) and every `results_dir/*.json`, writes
/// `out_dir/combined.md` and `out_dir/combined.json`; returns the comparison.
pub fn run(
    report: &Path,
    results_dir: &Path,
    out_dir: &Path,
    gprox_peer: &str,
) -> Result<Combined> {
    let read = |p: &Path| -> Result<Value> {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
    };
    let rep = read(report)?;
    let mut files: Vec<_> = std::fs::read_dir(results_dir)
        .with_context(|| format!("reading {}", results_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let results = files.iter().map(|p| read(p)).collect::<Result<Vec<_>>>()?;
    anyhow::ensure!(
        !results.is_empty(),
        "no result files in {}",
        results_dir.display()
    );
    let c = combine(&rep, &results, gprox_peer);
    std::fs::create_dir_all(out_dir).with_context(|| format!("{}", out_dir.display()))?;
    std::fs::write(out_dir.join("combined.md"), c.markdown())?;
    std::fs::write(
        out_dir.join("combined.json"),
        serde_json::to_string_pretty(&c)?,
    )?;
    Ok(c)
}
