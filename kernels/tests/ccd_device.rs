//! The elementary CCD tests on the device (`cuda/ccd.cu`, `include/gprox/ccd.cuh`) against the
//! CPU's `gprox_query::ccd`: every query of `../shared/data/ccd` (when present) with the same
//! status and bounds and 0 false negatives against the ground truth, random feature pairs
//! (proptest), the layouts, and the device ops of a warm mesh CCD query (one synchronisation,
//! bytes back = headers + the records the CPU finishes).

mod common;
#[path = "../../crates/query/tests/common/scalable_ccd.rs"]
mod scalable_ccd;

use std::path::Path;

use gprox_bvh::lbvh;
use gprox_bvh::swept::swept_triangle_aabbs;
use gprox_cuda::ccd_narrow::{
    emulator_layout, CcdElementaryParams, CcdPairsParams, CcdQuery, CcdRecord, CcdResult,
    DeviceToi, ElementaryKind, ElementaryQuery, CCD_HEADER_WORDS,
};
use gprox_cuda::{BalanceOptions, Device, MovingMesh, ResidentMesh};
use gprox_geometry::glam::{Affine3A, DVec3, Vec3};
use gprox_geometry::TriMesh;
use gprox_query::ccd::{ccd_pair, ccd_self_with_bvh, CcdOptions};
use gprox_query::self_collide::Topology;
use proptest::prelude::*;
use scalable_ccd::{
    csv_files, frame_pair, igl_edges, json_bools, json_ints, read_ply, scenes, sorted_entries,
};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/ccd");

fn run_all() -> bool {
    std::env::var("GPROX_CCD_ALL").is_ok_and(|v| v == "1") || !cfg!(debug_assertions)
}

/// Keep query `i` of `n`: at most ~`cap` per file unless `GPROX_CCD_ALL=1` (as the CPU's
/// `crates/query/tests/ccd_data.rs`).
fn keep(i: usize, n: usize, cap: usize) -> bool {
    run_all() || n <= cap || i.is_multiple_of(n.div_ceil(cap))
}

/// What a batch of queries gave.
#[derive(Default, Debug)]
struct Tally {
    queries: usize,
    positives: usize,
    undecided: usize,
    false_negatives: usize,
}

/// Runs `queries` on the device, checks every decided answer against the CPU bit for bit and
/// the finished answers (undecided ones by the CPU) against the CPU and the truth.
fn check_batch(d: &Device, name: &str, queries: &[ElementaryQuery], truth: &[bool]) -> Tally {
    let opts = CcdOptions::default();
    let raw = d.ccd_elementary_device(queries, &opts).unwrap();
    let fin = d.ccd_elementary(queries, &opts).unwrap();
    let mut t = Tally::default();
    for (i, q) in queries.iter().enumerate() {
        let cpu = q.cpu(&opts).unwrap();
        match raw[i] {
            DeviceToi::Free => assert_eq!(cpu, None, "{name} query {i}: device free"),
            DeviceToi::Undecided => t.undecided += 1,
        }
        assert_eq!(fin[i], cpu, "{name} query {i}: finished");
        t.queries += 1;
        t.positives += truth[i] as usize;
        if truth[i] && fin[i].is_none() {
            t.false_negatives += 1;
        }
    }
    println!(
        "{name}: {} queries, {} positive, {} undecided on the device, FN {}",
        t.queries, t.positives, t.undecided, t.false_negatives
    );
    assert_eq!(t.false_negatives, 0, "{name}");
    t
}

/// Exact f64 of `num / den` (power-of-two denominator, |num| ≤ 2^53).
fn exact(num: &str, den: &str) -> f64 {
    let n: i128 = num.trim().parse().expect("numerator");
    let d: i128 = den.trim().parse().expect("denominator");
    assert!(d > 0 && (d & (d - 1)) == 0, "denominator {d}");
    assert!(n.abs() <= 1 << 53, "numerator {n}");
    n as f64 / d as f64
}

#[test]
fn sample_queries_match_the_cpu() {
    let dir = Path::new(ROOT).join("sample-queries");
    if !dir.exists() {
        println!("note: {} absent, skipping", dir.display());
        return;
    }
    let d = Device::for_tests();
    let mut files = Vec::new();
    csv_files(&dir, &mut files);
    let mut total = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read csv");
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').collect())
            .collect();
        let kind = if f.to_string_lossy().contains("edge-edge") {
            ElementaryKind::EdgeEdge
        } else {
            ElementaryKind::VertexFace
        };
        let (mut queries, mut truth) = (Vec::new(), Vec::new());
        for r in rows.chunks_exact(8) {
            let p: Vec<DVec3> = r
                .iter()
                .map(|c| DVec3::new(exact(c[0], c[1]), exact(c[2], c[3]), exact(c[4], c[5])))
                .collect();
            queries.push(ElementaryQuery {
                kind,
                start: [p[0], p[1], p[2], p[3]],
                end: [p[4], p[5], p[6], p[7]],
            });
            truth.push(r[0][6].trim() == "1");
        }
        let name = f.strip_prefix(ROOT).unwrap_or(f).display().to_string();
        total += check_batch(&d, &name, &queries, &truth).queries;
    }
    assert!(total > 0);
}

#[test]
fn scalable_ccd_sample_matches_the_cpu() {
    let dir = Path::new(ROOT).join("scalable-ccd-sample");
    if !dir.exists() {
        println!("note: {} absent, skipping", dir.display());
        return;
    }
    let d = Device::for_tests();
    for scene in scenes(&dir) {
        let frames = frame_pair(&scene);
        let (v0, faces) = read_ply(&frames[0]);
        let (v1, _) = read_ply(&frames[1]);
        let edges = igl_edges(&faces);
        let (nv, ne) = (v0.len() as u64, edges.len() as u64);
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
            let truth_all = json_bools(&truth_file);
            assert_eq!(ids.len(), 2 * truth_all.len(), "{}", bfile.display());
            let is_ee = stem.ends_with("ee");
            let n = truth_all.len();
            let (mut queries, mut truth) = (Vec::new(), Vec::new());
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
                queries.push(ElementaryQuery {
                    kind: if is_ee {
                        ElementaryKind::EdgeEdge
                    } else {
                        ElementaryKind::VertexFace
                    },
                    start: idx.map(|i| v0[i]),
                    end: idx.map(|i| v1[i]),
                });
                truth.push(truth_all[q]);
            }
            let name = bfile
                .strip_prefix(ROOT)
                .unwrap_or(&bfile)
                .display()
                .to_string();
            check_batch(&d, &name, &queries, &truth);
        }
    }
}

/// A coordinate on a coarse grid (touching, coplanar and degenerate cases are frequent) or
/// arbitrary.
fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-4i32..=4).prop_map(|i| i as f64 * 0.25),
        1 => -1.0f64..1.0,
        1 => (-4i32..=4).prop_map(|i| i as f64 * 0.25 + 1e-9),
    ]
}

fn point() -> impl Strategy<Value = DVec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

/// A feature pair: four points at the start and (often) the same points moved.
fn query() -> impl Strategy<Value = ElementaryQuery> {
    (
        prop_oneof![
            Just(ElementaryKind::VertexFace),
            Just(ElementaryKind::EdgeEdge)
        ],
        prop::array::uniform4(point()),
        prop::array::uniform4(prop_oneof![1 => Just(DVec3::ZERO), 3 => point()]),
    )
        .prop_map(|(kind, start, moves)| ElementaryQuery {
            kind,
            start,
            end: std::array::from_fn(|i| start[i] + moves[i]),
        })
}

fn ccd_opts() -> impl Strategy<Value = CcdOptions> {
    (
        prop_oneof![Just(0.0), 0.0f64..0.2],
        prop_oneof![Just(1e-6), 1e-9f64..1e-2],
        prop_oneof![Just(1e-4), 1e-6f64..0.5],
        prop_oneof![Just(10_000usize), 1usize..200],
    )
        .prop_map(
            |(min_separation, tolerance, max_time_width, max_checks)| CcdOptions {
                tolerance,
                min_separation,
                max_time_width,
                max_checks,
                ..CcdOptions::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_feature_pairs_match_the_cpu(
        queries in prop::collection::vec(query(), 1..24),
        opts in ccd_opts(),
    ) {
        let d = Device::for_tests();
        let raw = d.ccd_elementary_device(&queries, &opts).unwrap();
        let fin = d.ccd_elementary(&queries, &opts).unwrap();
        for (i, q) in queries.iter().enumerate() {
            let cpu = q.cpu(&opts).unwrap();
            match raw[i] {
                DeviceToi::Free => prop_assert_eq!(cpu, None, "query {}", i),
                DeviceToi::Undecided => {}
            }
            prop_assert_eq!(fin[i], cpu);
        }
    }
}

#[test]
fn bad_points_are_rejected_as_on_the_cpu() {
    let d = Device::for_tests();
    let mut q = ElementaryQuery {
        kind: ElementaryKind::EdgeEdge,
        start: [DVec3::ZERO; 4],
        end: [DVec3::ONE; 4],
    };
    q.end[2].y = f64::NAN;
    let err = d
        .ccd_elementary(&[q], &CcdOptions::default())
        .unwrap_err()
        .to_string();
    let cpu = q.cpu(&CcdOptions::default()).unwrap_err().to_string();
    assert!(err.contains(&cpu), "{err} vs {cpu}");
    assert!(d
        .ccd_elementary(&[], &CcdOptions::default())
        .unwrap()
        .is_empty());
}

#[test]
fn layouts_match() {
    use std::mem::{offset_of, size_of};
    let check = |name: &str, rust: usize| assert_eq!(emulator_layout(name), rust, "{name}");
    check("sizeof(CcdQuery)", size_of::<CcdQuery>());
    check("offsetof(CcdQuery,end)", offset_of!(CcdQuery, end));
    check("offsetof(CcdQuery,kind)", offset_of!(CcdQuery, kind));
    check("sizeof(CcdResult)", size_of::<CcdResult>());
    check("offsetof(CcdResult,t_hi)", offset_of!(CcdResult, t_hi));
    check("offsetof(CcdResult,status)", offset_of!(CcdResult, status));
    check("sizeof(CcdRecord)", size_of::<CcdRecord>());
    check("offsetof(CcdRecord,v)", offset_of!(CcdRecord, v));
    check("offsetof(CcdRecord,faces)", offset_of!(CcdRecord, faces));
    check("offsetof(CcdRecord,t_lo)", offset_of!(CcdRecord, t_lo));
    check("offsetof(CcdRecord,t_hi)", offset_of!(CcdRecord, t_hi));
    check(
        "sizeof(CcdElementaryParams)",
        size_of::<CcdElementaryParams>(),
    );
    check(
        "offsetof(CcdElementaryParams,results)",
        offset_of!(CcdElementaryParams, results),
    );
    check(
        "offsetof(CcdElementaryParams,tolerance)",
        offset_of!(CcdElementaryParams, tolerance),
    );
    check(
        "offsetof(CcdElementaryParams,max_checks)",
        offset_of!(CcdElementaryParams, max_checks),
    );
    check(
        "offsetof(CcdElementaryParams,count)",
        offset_of!(CcdElementaryParams, count),
    );
    check("sizeof(CcdPairsParams)", size_of::<CcdPairsParams>());
    macro_rules! pairs {
        ($($f:ident),*) => {$(
            check(
                concat!("offsetof(CcdPairsParams,", stringify!($f), ")"),
                offset_of!(CcdPairsParams, $f),
            );
        )*};
    }
    pairs!(
        counters,
        ccd_counters,
        out,
        a_start,
        a_owned,
        b_start,
        b_owned,
        big,
        max_checks,
        capacity,
        record_capacity,
        same
    );
    assert_eq!(emulator_layout("sizeof(Nothing)"), usize::MAX);
}

/// One mesh of two sheets, the second sweeping down through the first.
fn sweeping_sheets(n: u32, drop: f32) -> (TriMesh, Vec<Vec3>) {
    let (mut p, mut f) = common::sheet_parts(n, Affine3A::IDENTITY, 0, |x, y| 0.05 * (x - y));
    let lift =
        Affine3A::from_translation(Vec3::new(0.13, 0.07, 0.3)) * Affine3A::from_rotation_z(0.4);
    let (p2, f2) = common::sheet_parts(n, lift, p.len() as u32, |x, _| 0.1 * x);
    let top = p.len();
    p.extend(p2);
    f.extend(f2);
    let end = p
        .iter()
        .enumerate()
        .map(|(i, &v)| if i >= top { v - Vec3::Z * drop } else { v })
        .collect();
    (TriMesh::new(p, f).unwrap(), end)
}

/// Bytes a mesh CCD query reads back: the traversal's header (16 counters), the narrow
/// phase's header and one record per feature pair the device did not exclude.
fn bytes_back(records: usize) -> u64 {
    (64 + 4 * CCD_HEADER_WORDS + std::mem::size_of::<CcdRecord>() * records) as u64
}

/// Bytes back = headers + one record per feature pair the device left to the CPU: between one
/// per contact and one per elementary test.
fn assert_records(d2h: u64, r: &gprox_query::ccd::MeshCcd) {
    assert!(
        bytes_back(r.contacts.len()) <= d2h && d2h <= bytes_back(r.elementary_tests),
        "{d2h} bytes for {} contacts, {} tests",
        r.contacts.len(),
        r.elementary_tests
    );
}

#[test]
fn mesh_ccd_runs_on_the_device_with_one_sync() {
    let d = Device::for_tests();
    let opts = BalanceOptions::default();
    let ccd = CcdOptions::default();
    for (n, drop) in [(6, 0.6), (4, 0.1)] {
        let (m, end) = sweeping_sheets(n, drop);
        let bvh = lbvh::build_from_aabbs(&swept_triangle_aabbs(&m, &end).unwrap());
        let topo = Topology::new(m.faces(), m.vertex_count());
        let mm = MovingMesh {
            mesh: &m,
            end: &end,
            bvh: &bvh,
        };
        let cpu = ccd_self_with_bvh(&m, &end, &topo, &bvh, &ccd).unwrap();
        // A first query sizes the pools; the next ones are warm.
        let _ = d.ccd_self(&mm, &topo, &ccd, &opts).unwrap();
        let before = d.ops();
        let (gpu, st) = d.ccd_self(&mm, &topo, &ccd, &opts).unwrap();
        let used = d.ops() - before;
        assert_eq!(gpu, cpu, "sheets {n}");
        assert_eq!(st.syncs, 1, "{st:?}");
        // (This entry point uploads the mesh and its tree each call: allocations.)
        assert_eq!(used.syncs, 1, "{used:?}");
        // With feature ownership every feature pair is run once: one record per feature pair
        // the device could not rule out (the CPU finishes them), at least one per contact.
        assert_records(used.d2h_bytes, &gpu);

        // Resident: the end positions are the only upload.
        let resident = ResidentMesh::new(&d, &m, &bvh).unwrap();
        let _ = d
            .ccd_self_resident(&resident, &m, &end, &topo, &ccd, &opts)
            .unwrap();
        let before = d.ops();
        let (res, _) = d
            .ccd_self_resident(&resident, &m, &end, &topo, &ccd, &opts)
            .unwrap();
        let used = d.ops() - before;
        assert_eq!(res, cpu, "resident sheets {n}");
        assert_eq!((used.syncs, used.allocations), (1, 0), "{used:?}");
        assert_eq!(used.h2d_bytes, 12 * end.len() as u64, "{used:?}");
        assert_records(used.d2h_bytes, &res);
        if drop > 0.5 {
            assert!(cpu.contacts.len() > 20, "{}", cpu.contacts.len());
        }
    }
}

#[test]
fn pair_ccd_and_record_overflow() {
    let d = Device::for_tests();
    let ccd = CcdOptions::default();
    let opts = BalanceOptions::default();
    let (a, a_end) = sweeping_sheets(8, 0.7);
    let b = common::sheet(5);
    let b_end: Vec<Vec3> = b
        .positions()
        .iter()
        .map(|&v| v + Vec3::new(0.1, 0.0, 0.4))
        .collect();
    let (ta, tb) = (
        Topology::new(a.faces(), a.vertex_count()),
        Topology::new(b.faces(), b.vertex_count()),
    );
    let ba = lbvh::build_from_aabbs(&swept_triangle_aabbs(&a, &a_end).unwrap());
    let bb = lbvh::build_from_aabbs(&swept_triangle_aabbs(&b, &b_end).unwrap());
    let ma = MovingMesh {
        mesh: &a,
        end: &a_end,
        bvh: &ba,
    };
    let mb = MovingMesh {
        mesh: &b,
        end: &b_end,
        bvh: &bb,
    };
    let (gpu, _) = d.ccd_pair(&ma, &ta, &mb, &tb, &ccd, &opts).unwrap();
    let cpu = ccd_pair(&a, &a_end, &ta, &b, &b_end, &tb, &ccd).unwrap();
    assert_eq!(gpu, cpu);
    assert!(!cpu.contacts.is_empty());
    // Self CCD with many contacts on a fresh device (record buffer of the default size): the
    // record counter keeps counting, the buffer grows and the query reruns.
    let fresh = Device::for_tests();
    let (m, end) = sweeping_sheets(16, 0.6);
    let bvh = lbvh::build_from_aabbs(&swept_triangle_aabbs(&m, &end).unwrap());
    let topo = Topology::new(m.faces(), m.vertex_count());
    let mm = MovingMesh {
        mesh: &m,
        end: &end,
        bvh: &bvh,
    };
    let cpu = ccd_self_with_bvh(&m, &end, &topo, &bvh, &ccd).unwrap();
    assert!(cpu.contacts.len() > 1024, "{}", cpu.contacts.len());
    let (gpu, _) = fresh.ccd_self(&mm, &topo, &ccd, &opts).unwrap();
    assert_eq!(gpu, cpu);
    let (again, st) = fresh.ccd_self(&mm, &topo, &ccd, &opts).unwrap();
    assert_eq!(again, cpu);
    assert_eq!(st.syncs, 1, "{st:?}");
}

/// Self CCD of the scalable-ccd-sample scenes (frames as f32 meshes) on the device == the CPU,
/// every feature pair the device leaves undecided finished by the CPU: cloth-funnel always, the larger
/// scenes with `GPROX_CCD_ALL=1` (minutes in the emulator).
#[test]
fn scalable_scenes_mesh_ccd_matches_the_cpu() {
    let root = Path::new(ROOT).join("scalable-ccd-sample");
    if !root.exists() {
        println!("note: {} absent, skipping", root.display());
        return;
    }
    let d = Device::for_tests();
    let ccd = CcdOptions::default();
    for scene in ["cloth-funnel", "armadillo-rollers", "rod-twist"] {
        let dir = root.join(scene).join("frames");
        if !dir.is_dir() || (scene != "cloth-funnel" && !run_all()) {
            continue;
        }
        let frames = sorted_entries(&dir);
        let (v0, faces) = read_ply(&frames[0]);
        let (v1, _) = read_ply(&frames[1]);
        let f32v = |v: &[DVec3]| v.iter().map(|p| p.as_vec3()).collect::<Vec<Vec3>>();
        let m = TriMesh::new(f32v(&v0), faces).unwrap();
        let end = f32v(&v1);
        let bvh = lbvh::build_from_aabbs(&swept_triangle_aabbs(&m, &end).unwrap());
        let topo = Topology::new(m.faces(), m.vertex_count());
        let cpu = ccd_self_with_bvh(&m, &end, &topo, &bvh, &ccd).unwrap();
        let mm = MovingMesh {
            mesh: &m,
            end: &end,
            bvh: &bvh,
        };
        let (gpu, _) = d
            .ccd_self(&mm, &topo, &ccd, &BalanceOptions::default())
            .unwrap();
        println!(
            "{scene}: {} faces, {} candidate pairs, {} tests, {} contacts",
            m.face_count(),
            cpu.candidate_pairs,
            cpu.elementary_tests,
            cpu.contacts.len()
        );
        assert!(!cpu.contacts.is_empty(), "{scene}");
        assert_eq!(gpu, cpu, "{scene}");
    }
}
