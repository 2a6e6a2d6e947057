//! CCD answer quality (issue #15): per family of `../shared/data/ccd` and of the adversarial
//! families of `common/ccd_families.rs`, how many negatives come back as contacts (certified or
//! undecided), the undecided rate, and one-thread timings. A measurement, not a check:
//! `cargo test -p gprox-query --release --test ccd_quality -- --ignored --nocapture`.

#[path = "common/ccd_families.rs"]
mod ccd_families;
#[path = "common/scalable_ccd.rs"]
mod scalable_ccd;

use std::path::Path;
use std::time::Instant;

use glam::DVec3;
use gprox_query::ccd::{edge_edge_toi, vertex_face_toi, CcdOptions, Toi};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/ccd");

#[derive(Default)]
struct Stats {
    queries: usize,
    negatives: usize,
    fp: usize,
    undecided: usize,
    far_fp: usize,
    far_negatives: usize,
    times: Vec<f64>,
}

impl Stats {
    fn add(&mut self, truth: Option<bool>, far: bool, r: Option<Toi>, secs: f64) {
        self.queries += 1;
        self.times.push(secs * 1e6);
        let reported = r.is_some();
        self.undecided += r.is_some_and(|t| !t.is_certified()) as usize;
        if truth == Some(false) {
            self.negatives += 1;
            self.fp += reported as usize;
            if far {
                self.far_negatives += 1;
                self.far_fp += reported as usize;
            }
        }
        if truth == Some(true) {
            assert!(reported, "false negative");
        }
    }
    fn row(&mut self, name: &str) {
        self.times.sort_by(f64::total_cmp);
        let q = |p: f64| self.times[((self.times.len() - 1) as f64 * p) as usize];
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        println!(
            "| {name} | {} | {} | {:.2} % | {:.2} % | {:.3} % | {:.1} | {:.1} | {:.0} |",
            self.queries,
            self.negatives,
            pct(self.fp, self.negatives),
            pct(self.far_fp, self.far_negatives),
            pct(self.undecided, self.queries),
            q(0.5),
            q(0.99),
            self.times.last().copied().unwrap_or(0.0),
        );
    }
}

fn run(
    edge_edge: bool,
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> (Option<Toi>, f64) {
    let t = Instant::now();
    let r = if edge_edge {
        edge_edge_toi(start, end, opts)
    } else {
        vertex_face_toi(start, end, opts)
    }
    .expect("finite");
    (r, t.elapsed().as_secs_f64())
}

fn header() {
    println!("| family | queries | negatives | negatives reported | far (> 2 tol) negatives reported | undecided | median µs | p99 µs | max µs |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
}

#[test]
#[ignore = "measurement: run in release with --ignored --nocapture"]
fn quality() {
    let opts = CcdOptions::default();
    header();
    let mut all = Stats::default();
    // Data: sample queries per scene directory.
    let dir = Path::new(ROOT).join("sample-queries");
    if dir.exists() {
        for scene in scalable_ccd::sorted_entries(&dir) {
            if !scene.is_dir() {
                continue;
            }
            let mut files = Vec::new();
            scalable_ccd::csv_files(&scene, &mut files);
            let mut st = Stats::default();
            for f in &files {
                let ee = f.to_string_lossy().contains("edge-edge");
                let text = std::fs::read_to_string(f).expect("read");
                let rows: Vec<Vec<f64>> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| {
                        let c: Vec<f64> = l
                            .split(',')
                            .map(|x| x.trim().parse::<f64>().expect("num"))
                            .collect();
                        vec![c[0] / c[1], c[2] / c[3], c[4] / c[5], c[6]]
                    })
                    .collect();
                for q in rows.chunks(8) {
                    let p: Vec<DVec3> = q.iter().map(|r| DVec3::new(r[0], r[1], r[2])).collect();
                    let truth = q[0][3] == 1.0;
                    let (r, s) = run(
                        ee,
                        [p[0], p[1], p[2], p[3]],
                        [p[4], p[5], p[6], p[7]],
                        &opts,
                    );
                    st.add(Some(truth), false, r, s);
                    all.add(Some(truth), false, r, s);
                }
            }
            let name = scene
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            st.row(&name);
        }
    }
    let dir = Path::new(ROOT).join("scalable-ccd-sample");
    if dir.exists() {
        for scene in scalable_ccd::scenes(&dir) {
            let frames = scalable_ccd::frame_pair(&scene);
            let (v0, faces) = scalable_ccd::read_ply(&frames[0]);
            let (v1, _) = scalable_ccd::read_ply(&frames[1]);
            let edges = scalable_ccd::igl_edges(&faces);
            let (nv, ne) = (v0.len() as u64, edges.len() as u64);
            let mut st = Stats::default();
            for bfile in scalable_ccd::sorted_entries(&scene.join("boxes")) {
                let stem = bfile
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default();
                let tf = scene.join("mma_bool").join(format!("{stem}_mma_bool.json"));
                if !tf.exists() {
                    continue;
                }
                let ids = scalable_ccd::json_ints(&bfile);
                let truth = scalable_ccd::json_bools(&tf);
                let ee = stem.ends_with("ee");
                let n = truth.len();
                for q in (0..n).step_by(n.div_ceil(5000).max(1)) {
                    let (a, b) = (ids[2 * q], ids[2 * q + 1]);
                    let idx: [usize; 4] = if ee {
                        let (x, y) = (edges[(a - nv) as usize], edges[(b - nv) as usize]);
                        [x[0], x[1], y[0], y[1]].map(|i| i as usize)
                    } else {
                        let (v, f) = if a < nv { (a, b) } else { (b, a) };
                        let f = faces[(f - nv - ne) as usize];
                        [v as usize, f[0] as usize, f[1] as usize, f[2] as usize]
                    };
                    let (r, s) = run(ee, idx.map(|i| v0[i]), idx.map(|i| v1[i]), &opts);
                    st.add(Some(truth[q]), false, r, s);
                    all.add(Some(truth[q]), false, r, s);
                }
            }
            let name = scene
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            st.row(&format!("scalable {name}"));
        }
    }
    all.row("**all data**");
    let mut adv = Stats::default();
    for (fam, name) in ccd_families::FAMILIES.iter().enumerate() {
        let mut st = Stats::default();
        for seed in 0..2000u64 {
            let c = ccd_families::case(fam, seed);
            let (truth, far) = match c.truth {
                ccd_families::Truth::Contact { .. } => (true, false),
                ccd_families::Truth::Negative { d } => (false, d > 16.0 * opts.tolerance),
            };
            let (r, s) = run(c.edge_edge, c.start, c.end, &opts);
            st.add(Some(truth), far, r, s);
            adv.add(Some(truth), far, r, s);
        }
        st.row(name);
    }
    adv.row("**all adversarial**");
}
