//! Coons BVH build statistics per surface (issue #15): nodes, Coons / exact leaves, depth, BVH
//! and cache bytes, estimated build working memory, wall time and the process's peak resident
//! memory, at ε (default 1e-5) on the surfaces of `../shared/data/nurbs` (when present) and on
//! rational test surfaces with weights in [0.2, 5]. Run one thread, one surface per process, for
//! the per-surface peak memory:
//!
//! ```text
//! for s in 7x6 crease "10x10 w" checker deg5 deg9 sphere torus vase loft sweep coons plate interp; do
//!   RAYON_NUM_THREADS=1 cargo run --release -p gprox-bench --bin coons_build -- 1e-5 "$s"; done
//! ```
//!
//! Arguments: `[epsilon] [name filter] [max nodes per surface]`.
use glam::DVec3;
use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
use gprox_geometry::freeform::{load_nurbs_json, NurbsSurface};

/// A `nu x nv` rational surface of degrees `(p, q)` over a unit grid with pseudo-random heights
/// and log-uniform weights in `[wlo, whi]`; `crease`: a full-multiplicity u-knot (C0) at 0.5.
fn wavy(
    nu: usize,
    nv: usize,
    p: usize,
    q: usize,
    wlo: f64,
    whi: f64,
    crease: bool,
) -> NurbsSurface {
    let knots = |n: usize, d: usize, crease: bool| {
        let mut k = vec![0.0; d + 1];
        let inner = n - d - 1;
        if crease {
            // Full-multiplicity interior knot at 0.5 (C0).
            k.extend(std::iter::repeat_n(0.5, d));
            let rest = inner - d;
            for i in 1..=rest {
                k.push(0.5 + 0.5 * i as f64 / (rest + 1) as f64);
            }
        } else {
            for i in 1..=inner {
                k.push(i as f64 / (inner + 1) as f64);
            }
        }
        k.extend(std::iter::repeat_n(1.0, d + 1));
        k
    };
    let mut pts = Vec::new();
    let mut w = Vec::new();
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64) / ((1u64 << 53) as f64)
    };
    for i in 0..nu {
        for j in 0..nv {
            let z = if crease && i == nu / 2 {
                0.6
            } else {
                0.3 * (rnd() - 0.5)
            };
            pts.push(DVec3::new(i as f64, j as f64, z));
            let t = rnd();
            w.push(wlo * (whi / wlo).powf(t));
        }
    }
    NurbsSurface::new(
        [p, q],
        [knots(nu, p, crease), knots(nv, q, false)],
        [nu, nv],
        pts,
        Some(w),
    )
    .unwrap()
}

/// The same net with checkerboard weights 0.2 / 5 (the largest neighbour ratio).
fn checker(s: NurbsSurface) -> NurbsSurface {
    let [n, m] = s.count();
    let [ku, kv] = s.knots();
    let pts: Vec<DVec3> = s
        .homogeneous_points()
        .iter()
        .map(|h| h.truncate() / h.w)
        .collect();
    let w = (0..n * m)
        .map(|k| if (k / m + k % m) % 2 == 0 { 0.2 } else { 5.0 })
        .collect();
    NurbsSurface::new(s.degree(), [ku.to_vec(), kv.to_vec()], [n, m], pts, Some(w)).unwrap()
}

fn main() {
    let eps: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1e-5);
    let mut cases: Vec<(String, Vec<NurbsSurface>)> = vec![
        (
            "7x6 w0.2..5".into(),
            vec![wavy(7, 6, 3, 3, 0.2, 5.0, false)],
        ),
        ("7x7 crease".into(), vec![wavy(7, 7, 2, 3, 0.2, 5.0, true)]),
        (
            "10x10 w0.2..5".into(),
            vec![wavy(10, 10, 3, 3, 0.2, 5.0, false)],
        ),
        (
            "10x10 checker".into(),
            vec![checker(wavy(10, 10, 3, 3, 0.2, 5.0, false))],
        ),
        (
            "10x10 deg5 checker".into(),
            vec![checker(wavy(10, 10, 5, 5, 0.2, 5.0, false))],
        ),
        (
            "10x10 deg9 checker".into(),
            vec![checker(wavy(10, 10, 9, 9, 0.2, 5.0, false))],
        ),
    ];
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/nurbs"
    ));
    for f in [
        "sphere_patch",
        "torus_full",
        "revolved_vase",
        "loft",
        "sweep_tube",
        "coons_patch",
        "plate_filling",
        "interp_wave",
    ] {
        if let Ok(s) = load_nurbs_json(dir.join(format!("{f}.json"))) {
            cases.push((f.into(), vec![s]));
        }
    }
    let only = std::env::args().nth(2);
    let budget: usize = std::env::args()
        .nth(3)
        .map(|s| s.parse().unwrap())
        .unwrap_or(CoonsOptions::default().max_nodes_per_surface);
    for (name, s) in &cases {
        if let Some(o) = &only {
            if !name.contains(o.as_str()) {
                continue;
            }
        }
        let t = std::time::Instant::now();
        let r = CoonsBvh::build(
            s,
            &CoonsOptions {
                epsilon: eps,
                max_nodes_per_surface: budget,
                ..Default::default()
            },
        );
        let hwm = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmHWM"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        match r {
            Ok(b) => {
                let st = b.stats();
                println!("{name:18} nodes {:6} coons {:6} exact {:5} depth {:2} bytes {:7} cache {:7} build {:8} {:.3}s hwm {hwm} kB", st.nodes, st.coons_leaves, st.exact_leaves, st.max_depth, st.bytes, st.cache_bytes, st.build_bytes, t.elapsed().as_secs_f64())
            }
            Err(e) => println!("{name:18} error {e} {:.3}s", t.elapsed().as_secs_f64()),
        }
    }
}
