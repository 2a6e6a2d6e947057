//! CCD against the ground truth in `../shared/data/ccd` (see its SOURCES.md):
//! every query file present must give 0 false negatives, every answer's witness and separation
//! bound must hold in exact arithmetic (a certified contact within the tolerance), and at most
//! 0.5 % of the queries may stay undecided; false-positive rates are printed.
//!
//! * `sample-queries/**.csv`: exact rational coordinates (all exactly representable in f64:
//!   power-of-two denominators, checked here) with the truth in column 7.
//! * `scalable-ccd-sample/<scene>`: two PLY frames, candidate pairs (`boxes/*.json`, ids:
//!   vertices, then libigl edges, then faces) and Mathematica truth (`mma_bool/*.json`).
//!
//! In debug builds (no `GPROX_CCD_ALL=1`) a deterministic subset of each large file runs.

#[path = "common/ccd_oracle.rs"]
mod ccd_oracle;
#[path = "common/scalable_ccd.rs"]
mod scalable_ccd;

use std::path::Path;

use glam::DVec3;
use gprox_query::ccd::{edge_edge_toi, vertex_face_toi, CcdOptions};
use scalable_ccd::{
    csv_files, frame_pair, igl_edges, json_bools, json_ints, read_ply, scenes, sorted_entries,
};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/ccd");

fn run_all() -> bool {
    std::env::var("GPROX_CCD_ALL").is_ok_and(|v| v == "1") || !cfg!(debug_assertions)
}

/// Keep query `i` of `n` in the sampled run: at most ~`cap` per file, deterministic.
fn keep(i: usize, n: usize, cap: usize) -> bool {
    run_all() || n <= cap || i.is_multiple_of(n.div_ceil(cap))
}

#[derive(Default, Debug)]
struct Tally {
    queries: usize,
    positives: usize,
    false_negatives: usize,
    false_positives: usize,
    undecided: usize,
}

impl Tally {
    fn add(&mut self, truth: bool, ours: bool) {
        self.queries += 1;
        self.positives += truth as usize;
        self.false_negatives += (truth && !ours) as usize;
        self.false_positives += (!truth && ours) as usize;
    }
    fn report(&self, name: &str) {
        let negatives = self.queries - self.positives;
        let rate = if negatives > 0 {
            self.false_positives as f64 / negatives as f64
        } else {
            0.0
        };
        println!(
            "{name}: {} queries, {} positive, FN {}, FP {} ({:.2}% of negatives), {} undecided",
            self.queries,
            self.positives,
            self.false_negatives,
            self.false_positives,
            100.0 * rate,
            self.undecided
        );
    }
}

/// Exact f64 of `num / den` (denominator a power of two, |num| ≤ 2^53).
fn exact(num: &str, den: &str) -> f64 {
    let n: i128 = num.trim().parse().expect("numerator");
    let d: i128 = den.trim().parse().expect("denominator");
    assert!(
        d > 0 && (d & (d - 1)) == 0,
        "denominator {d} not a power of two"
    );
    assert!(n.abs() <= 1 << 53, "numerator {n} not exact in f64");
    n as f64 / d as f64
}

#[test]
fn sample_queries_no_false_negatives() {
    let dir = Path::new(ROOT).join("sample-queries");
    if !dir.exists() {
        println!("note: {} absent, skipping", dir.display());
        return;
    }
    let mut files = Vec::new();
    csv_files(&dir, &mut files);
    let opts = CcdOptions::default();
    let mut total_vf = Tally::default();
    let mut total_ee = Tally::default();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read csv");
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len() % 8, 0, "{}", f.display());
        let is_ee = f.to_string_lossy().contains("edge-edge");
        let n = rows.len() / 8;
        let mut tally = Tally::default();
        for q in 0..n {
            if !keep(q, n, 200) {
                continue;
            }
            let r = &rows[8 * q..8 * q + 8];
            let pts: Vec<DVec3> = r
                .iter()
                .map(|c| DVec3::new(exact(c[0], c[1]), exact(c[2], c[3]), exact(c[4], c[5])))
                .collect();
            let truth = r[0][6].trim() == "1";
            let start = [pts[0], pts[1], pts[2], pts[3]];
            let end = [pts[4], pts[5], pts[6], pts[7]];
            let ours = if is_ee {
                edge_edge_toi(start, end, &opts)
            } else {
                vertex_face_toi(start, end, &opts)
            }
            .expect("finite input");
            if truth && ours.is_none() {
                println!("FALSE NEGATIVE: {} query {q}", f.display());
            }
            ccd_oracle::check_answer(is_ee, &start, &end, &ours, &opts)
                .unwrap_or_else(|e| panic!("{}: query {q}: {e}", f.display()));
            let open = ours.is_some_and(|t| !t.is_certified()) as usize;
            tally.undecided += open;
            if is_ee {
                total_ee.undecided += open;
            } else {
                total_vf.undecided += open;
            }
            tally.add(truth, ours.is_some());
            if is_ee {
                total_ee.add(truth, ours.is_some());
            } else {
                total_vf.add(truth, ours.is_some());
            }
        }
        tally.report(&f.strip_prefix(ROOT).unwrap_or(f).display().to_string());
        assert_eq!(tally.false_negatives, 0, "{}", f.display());
    }
    total_vf.report("sample-queries vertex-face total");
    total_ee.report("sample-queries edge-edge total");
    for t in [&total_vf, &total_ee] {
        assert!(t.undecided * 200 <= t.queries, "{t:?}");
    }
}

#[test]
fn scalable_ccd_sample_no_false_negatives() {
    let dir = Path::new(ROOT).join("scalable-ccd-sample");
    if !dir.exists() {
        println!("note: {} absent, skipping", dir.display());
        return;
    }
    let opts = CcdOptions::default();
    let mut scalable = Tally::default();
    for scene in scenes(&dir) {
        let frames = frame_pair(&scene);
        let (v0, faces) = read_ply(&frames[0]);
        let (v1, faces1) = read_ply(&frames[1]);
        assert_eq!(faces, faces1);
        assert_eq!(v0.len(), v1.len());
        let edges = igl_edges(&faces);
        let nv = v0.len() as u64;
        let ne = edges.len() as u64;
        let boxes = sorted_entries(&scene.join("boxes"));
        for bfile in boxes {
            let stem = bfile
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let truth_file = scene.join("mma_bool").join(format!("{stem}_mma_bool.json"));
            if !truth_file.exists() {
                continue;
            }
            let ids = json_ints(&bfile);
            let truth = json_bools(&truth_file);
            assert_eq!(ids.len(), 2 * truth.len(), "{}", bfile.display());
            let is_ee = stem.ends_with("ee");
            let n = truth.len();
            let mut tally = Tally::default();
            for q in 0..n {
                if !keep(q, n, 2000) {
                    continue;
                }
                let (a, b) = (ids[2 * q], ids[2 * q + 1]);
                let idx: [usize; 4] = if is_ee {
                    let ea = edges[(a - nv) as usize];
                    let eb = edges[(b - nv) as usize];
                    [ea[0], ea[1], eb[0], eb[1]].map(|x| x as usize)
                } else {
                    let (v, f) = if a < nv { (a, b) } else { (b, a) };
                    let f = faces[(f - nv - ne) as usize];
                    [v as usize, f[0] as usize, f[1] as usize, f[2] as usize]
                };
                let start = idx.map(|i| v0[i]);
                let end = idx.map(|i| v1[i]);
                let ours = if is_ee {
                    edge_edge_toi(start, end, &opts)
                } else {
                    vertex_face_toi(start, end, &opts)
                }
                .expect("finite input");
                if truth[q] && ours.is_none() {
                    println!("FALSE NEGATIVE: {} pair {q}", bfile.display());
                }
                ccd_oracle::check_answer(is_ee, &start, &end, &ours, &opts)
                    .unwrap_or_else(|e| panic!("{}: pair {q}: {e}", bfile.display()));
                tally.undecided += ours.is_some_and(|t| !t.is_certified()) as usize;
                tally.add(truth[q], ours.is_some());
            }
            let name = bfile
                .strip_prefix(ROOT)
                .unwrap_or(&bfile)
                .display()
                .to_string();
            tally.report(&name);
            assert_eq!(tally.false_negatives, 0, "{name}");
            scalable.queries += tally.queries;
            scalable.undecided += tally.undecided;
        }
    }
    scalable.report("scalable-ccd-sample total");
    assert!(scalable.undecided * 200 <= scalable.queries, "{scalable:?}");
}
