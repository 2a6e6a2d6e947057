//! The balanced BVTT traversal (gProximity §3.3, `balance.cu`) run on the test device
//! (`Device::for_tests()`: the emulator, or CUDA device 0 with `GPROX_TEST_DEVICE=cuda`) for
//! inter-object collision, self-collision and CCD candidates, against the CPU backend and
//! brute-force oracles — with default queues and with tiny ones that force spilling into global
//! memory, full queues and many rebalancing rounds.

mod common;

use gprox_bvh::refit::triangle_aabb;
use gprox_bvh::swept::swept_triangle_aabbs;
use gprox_bvh::{lbvh, Aabb, Bvh};
use gprox_cuda::{BalanceOptions, CollisionObject, Device, GpuCollideOptions, MovingMesh};
use gprox_geometry::glam::{Affine3A, Vec3};
use gprox_geometry::transform::Pose64;
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;
use gprox_query::ccd::{ccd_pair, ccd_self_with_bvh, CcdOptions, Feature};
use gprox_query::collide as cpu;
use gprox_query::self_collide::traverse::{pair_leaves_by, self_leaves_by};
use gprox_query::self_collide::{self_collide, share_vertex, Topology};
use proptest::prelude::*;

/// Default tuning, or tiny queues (2–4 shared slots, 0–4 spill slots), 1–6 tasks, any idle
/// threshold and a result buffer of 1–3 pairs (so it grows and reruns).
fn balance_opts() -> impl Strategy<Value = BalanceOptions> {
    prop_oneof![
        1 => Just(BalanceOptions::default()),
        3 => (2u32..=4, 0u32..=4, 1u32..=6, 0.0f64..=1.0, 1usize..=3).prop_map(
            |(queue_capacity, spill_capacity, tasks, idle_threshold, initial_result_capacity)| {
                BalanceOptions {
                    tasks,
                    queue_capacity,
                    spill_capacity,
                    idle_threshold,
                    initial_result_capacity,
                }
            }
        ),
    ]
}

fn tiny() -> BalanceOptions {
    BalanceOptions {
        tasks: 4,
        queue_capacity: 2,
        spill_capacity: 2,
        idle_threshold: 0.5,
        initial_result_capacity: 1,
    }
}

/// Every intersecting pair of faces sharing no vertex, by testing all of them exactly.
fn brute_force_self(m: &TriMesh) -> Vec<[u32; 2]> {
    let (f, p) = (m.faces(), m.positions());
    let tri = |i: usize| f[i].map(|v| p[v as usize].as_dvec3());
    let mut out = Vec::new();
    for i in 0..f.len() {
        for j in i + 1..f.len() {
            if !share_vertex(&f[i], &f[j]) && triangles_intersect(&tri(i), &tri(j)) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

fn collide(
    d: &Device,
    a: &TriMesh,
    pa: Pose64,
    b: &TriMesh,
    pb: Pose64,
    opts: &BalanceOptions,
) -> (Vec<[u32; 2]>, gprox_cuda::BalanceStats) {
    let (ba, bb) = (lbvh::build(a), lbvh::build(b));
    let oa = CollisionObject {
        mesh: a,
        bvh: &ba,
        pose: pa,
    };
    let ob = CollisionObject {
        mesh: b,
        bvh: &bb,
        pose: pb,
    };
    d.collide_all_balanced(&oa, &ob, &GpuCollideOptions::default(), opts)
        .unwrap()
}

fn cpu_collide(a: &TriMesh, pa: Pose64, b: &TriMesh, pb: Pose64) -> Vec<[u32; 2]> {
    let (ba, bb) = (lbvh::build(a), lbvh::build(b));
    cpu::collide_all(
        &cpu::CollisionObject {
            mesh: a,
            bvh: &ba,
            pose: pa,
        },
        &cpu::CollisionObject {
            mesh: b,
            bvh: &bb,
            pose: pb,
        },
        &cpu::CollideOptions::default(),
    )
}

/// A mesh and end positions: every vertex moves by a grid or random offset (or stays).
fn moving(max_faces: usize) -> impl Strategy<Value = (TriMesh, Vec<Vec3>)> {
    common::mesh(max_faces)
        .prop_flat_map(|m| {
            let nv = m.vertex_count();
            let offset = prop_oneof![
                1 => Just(Vec3::ZERO),
                3 => (common::coord(), common::coord(), common::coord())
                    .prop_map(|(x, y, z)| Vec3::new(x, y, z) * 0.5),
            ];
            (Just(m), prop::collection::vec(offset, nv))
        })
        .prop_map(|(m, d)| {
            let end = m.positions().iter().zip(d).map(|(p, o)| *p + o).collect();
            (m, end)
        })
}

/// A CCD minimum separation: none (mostly), or one comparable to the coordinate grid, so that
/// it changes which node pairs and contacts survive.
fn separation() -> impl Strategy<Value = f64> {
    prop_oneof![2 => Just(0.0), 1 => 0.0f64..0.3]
}

/// The CCD tree of the CPU: an LBVH over the swept boxes.
fn swept_bvh(m: &TriMesh, end: &[Vec3]) -> Bvh {
    lbvh::build_from_aabbs(&swept_triangle_aabbs(m, end).unwrap())
}

/// Face boxes at the start and the end of the step.
fn face_boxes(m: &TriMesh, end: &[Vec3]) -> Vec<[Aabb; 2]> {
    let p = m.positions();
    m.faces()
        .iter()
        .map(|f| {
            [
                triangle_aabb(&f.map(|v| p[v as usize])),
                triangle_aabb(&f.map(|v| end[v as usize])),
            ]
        })
        .collect()
}

/// The dual-box node test, written out: not separated on one axis, same order, at both ends.
fn dual_passes(a: &[Aabb; 2], b: &[Aabb; 2], sep: f64) -> bool {
    // Exact: f32 differences are exact in f64.
    let gap = |lo: f32, hi: f32| f64::from(lo) - f64::from(hi) > sep;
    !(0..3).any(|k| {
        (gap(a[0].min[k], b[0].max[k]) && gap(a[1].min[k], b[1].max[k]))
            || (gap(b[0].min[k], a[0].max[k]) && gap(b[1].min[k], a[1].max[k]))
    })
}

/// Node boxes of `bvh` at both ends of the step (refit at the start and at the end).
fn node_boxes(bvh: &Bvh, m: &TriMesh, end: &[Vec3]) -> Vec<[Aabb; 2]> {
    let fb = face_boxes(m, end);
    let at = |k: usize| {
        let leaf: Vec<Aabb> = fb.iter().map(|b| b[k]).collect();
        let mut t = bvh.clone();
        gprox_bvh::refit::refit(&mut t, &leaf).unwrap();
        t.nodes.iter().map(|n| n.aabb).collect::<Vec<_>>()
    };
    let (s, e) = (at(0), at(1));
    s.into_iter().zip(e).map(|(x, y)| [x, y]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn collision_matches_cpu_and_brute_force(
        a in common::mesh(24),
        b in common::mesh(24),
        pa in common::pose(),
        pb in common::pose(),
        opts in balance_opts(),
    ) {
        let d = Device::for_tests();
        let (gpu, stats) = collide(&d, &a, pa, &b, pb, &opts);
        prop_assert_eq!(&gpu, &common::brute_force_pairs(&a, &pa, &b, &pb));
        prop_assert_eq!(&gpu, &cpu_collide(&a, pa, &b, pb));
        prop_assert!(stats.rounds >= 1);
    }

    #[test]
    fn self_collision_matches_cpu_and_brute_force(
        m in common::mesh(30),
        opts in balance_opts(),
    ) {
        let d = Device::for_tests();
        let bvh = lbvh::build(&m);
        let gpu = d.self_collide(&m, &bvh, &opts).unwrap();
        let topo = Topology::new(m.faces(), m.vertex_count());
        let cpu = self_collide(&m, &bvh, &topo, None).unwrap();
        prop_assert_eq!(&gpu.pairs, &brute_force_self(&m));
        prop_assert_eq!(&gpu.pairs, &cpu.pairs);
        prop_assert_eq!(gpu.candidates, cpu.candidates);
    }

    #[test]
    fn self_ccd_matches_cpu(
        (m, end) in moving(12),
        opts in balance_opts(),
        sep in separation(),
    ) {
        let d = Device::for_tests();
        let bvh = swept_bvh(&m, &end);
        let mm = MovingMesh { mesh: &m, end: &end, bvh: &bvh };
        // Candidates: the same oriented pairs as the CPU's self traversal with the same test,
        // and as unordered pairs every pair of distinct faces passing the test (brute force).
        let (cand, _) = d.ccd_self_candidates(&mm, sep, &opts).unwrap();
        let nb = node_boxes(&bvh, &m, &end);
        let mut cpu_cand = Vec::new();
        self_leaves_by(&bvh, |i, j| dual_passes(&nb[i as usize], &nb[j as usize], sep),
            |_, _, _| false, |x, y| cpu_cand.push([x, y]));
        cpu_cand.sort_unstable();
        prop_assert_eq!(&cand, &cpu_cand);
        let fb = face_boxes(&m, &end);
        let mut brute = Vec::new();
        for i in 0..fb.len() {
            for j in i + 1..fb.len() {
                if dual_passes(&fb[i], &fb[j], sep) {
                    brute.push([i as u32, j as u32]);
                }
            }
        }
        let mut unordered: Vec<[u32; 2]> = cand.iter().map(|p| [p[0].min(p[1]), p[0].max(p[1])]).collect();
        unordered.sort_unstable();
        prop_assert_eq!(&unordered, &brute);
        // Contacts: those of the CPU's CCD over the same tree, times of impact included.
        let topo = Topology::new(m.faces(), m.vertex_count());
        let ccd = CcdOptions { min_separation: sep, ..CcdOptions::default() };
        let (gpu, _) = d.ccd_self(&mm, &topo, &ccd, &opts).unwrap();
        let cpu = ccd_self_with_bvh(&m, &end, &topo, &bvh, &ccd).unwrap();
        // One narrow phase (`gprox_query::ccd::ccd_candidates`) with a canonical point order:
        // the same result, certified intervals, face pairs and counts included.
        prop_assert!(gpu.contacts.iter().all(|c| c.toi.t_lo <= c.toi.t_hi));
        prop_assert_eq!(&gpu, &cpu);
        // The face pair a contact was found from holds its features, and self contacts are
        // between primitives sharing no vertex.
        let f = m.faces();
        for c in &gpu.contacts {
            let [x, y] = c.faces.map(|i| f[i as usize]);
            let ok = match c.feature {
                Feature::VertexFace { vertex, face } => {
                    x.contains(&vertex) && c.faces[1] == face && !y.contains(&vertex)
                }
                Feature::EdgeEdge { a, b } => {
                    let has = |t: [u32; 3], e: [u32; 2]| t.contains(&e[0]) && t.contains(&e[1]);
                    has(x, a) && has(y, b) && !a.iter().any(|v| b.contains(v))
                }
                Feature::FaceVertex { .. } => false,
            };
            prop_assert!(ok, "{:?}", c);
        }
    }

    #[test]
    fn pair_ccd_matches_cpu(
        (a, a_end) in moving(10),
        (b, b_end) in moving(10),
        opts in balance_opts(),
        sep in separation(),
    ) {
        let d = Device::for_tests();
        let (ba, bb) = (swept_bvh(&a, &a_end), swept_bvh(&b, &b_end));
        let ma = MovingMesh { mesh: &a, end: &a_end, bvh: &ba };
        let mb = MovingMesh { mesh: &b, end: &b_end, bvh: &bb };
        let (cand, _) = d.ccd_pair_candidates(&ma, &mb, sep, &opts).unwrap();
        let (na, nb) = (node_boxes(&ba, &a, &a_end), node_boxes(&bb, &b, &b_end));
        let mut cpu_cand = Vec::new();
        pair_leaves_by(&ba, &bb, |i, j| dual_passes(&na[i as usize], &nb[j as usize], sep),
            |x, y| cpu_cand.push([x, y]));
        cpu_cand.sort_unstable();
        prop_assert_eq!(&cand, &cpu_cand);
        let (fa, fb) = (face_boxes(&a, &a_end), face_boxes(&b, &b_end));
        let mut brute = Vec::new();
        for (i, x) in fa.iter().enumerate() {
            for (j, y) in fb.iter().enumerate() {
                if dual_passes(x, y, sep) {
                    brute.push([i as u32, j as u32]);
                }
            }
        }
        prop_assert_eq!(&cand, &brute);
        let (ta, tb) = (Topology::new(a.faces(), a.vertex_count()), Topology::new(b.faces(), b.vertex_count()));
        let ccd = CcdOptions { min_separation: sep, ..CcdOptions::default() };
        let (gpu, _) = d.ccd_pair(&ma, &ta, &mb, &tb, &ccd, &opts).unwrap();
        let cpu = ccd_pair(&a, &a_end, &ta, &b, &b_end, &tb, &ccd).unwrap();
        prop_assert_eq!(&gpu, &cpu);
    }
}

/// One mesh made of two sheets crossing at right angles (many self-intersections).
fn crossed_sheets(n: u32) -> TriMesh {
    let (mut p, mut f) = common::sheet_parts(n, Affine3A::IDENTITY, 0, |_, _| 0.0);
    let upright = Affine3A::from_translation(Vec3::new(0.0, 0.5, -0.5))
        * Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let (p2, f2) = common::sheet_parts(n, upright, p.len() as u32, |_, _| 0.0);
    p.extend(p2);
    f.extend(f2);
    TriMesh::new(p, f).unwrap()
}

#[test]
fn tiny_queues_spill_and_rebalance_many_rounds() {
    let d = Device::for_tests();
    // Collision: two sheets crossing along a line.
    let a = common::sheet(6);
    let upright = Pose64::from_affine(
        &(Affine3A::from_translation(Vec3::new(0.0, 0.5, -0.5))
            * Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2)),
    );
    let (small, s) = collide(&d, &a, Pose64::IDENTITY, &a, upright, &tiny());
    let (big, b) = collide(
        &d,
        &a,
        Pose64::IDENTITY,
        &a,
        upright,
        &BalanceOptions::default(),
    );
    let oracle = common::brute_force_pairs(&a, &Pose64::IDENTITY, &a, &upright);
    assert!(
        oracle.len() > 10,
        "the scene has many pairs ({})",
        oracle.len()
    );
    assert_eq!(small, oracle);
    assert_eq!(big, oracle);
    assert_eq!(small, cpu_collide(&a, Pose64::IDENTITY, &a, upright));
    assert!(s.spilled > 0 && s.full_exits > 0, "{s:?}");
    assert!(s.rounds >= 8, "tiny queues need many rounds: {s:?}");
    assert!(s.result_reruns > 0, "a 1-pair result buffer grows: {s:?}");
    assert!(b.rounds < s.rounds, "default {b:?} vs tiny {s:?}");

    // Self-collision of one mesh folded through itself.
    let m = crossed_sheets(5);
    let bvh = lbvh::build(&m);
    let got = d.self_collide(&m, &bvh, &tiny()).unwrap();
    let oracle = brute_force_self(&m);
    assert!(oracle.len() > 10, "{}", oracle.len());
    assert_eq!(got.pairs, oracle);
    let st = got.stats;
    assert!(
        st.spilled > 0 && st.full_exits > 0 && st.rounds >= 8,
        "{st:?}"
    );

    // CCD: a sheet sweeping through another.
    let end: Vec<Vec3> = m
        .positions()
        .iter()
        .enumerate()
        .map(|(i, p)| if i < 36 { *p + Vec3::Z * 0.3 } else { *p })
        .collect();
    let cbvh = swept_bvh(&m, &end);
    let mm = MovingMesh {
        mesh: &m,
        end: &end,
        bvh: &cbvh,
    };
    let (cand, st) = d.ccd_self_candidates(&mm, 0.0, &tiny()).unwrap();
    let (cand_big, _) = d
        .ccd_self_candidates(&mm, 0.0, &BalanceOptions::default())
        .unwrap();
    assert!(cand.len() > 50, "{}", cand.len());
    assert_eq!(cand, cand_big);
    assert!(
        st.spilled > 0 && st.full_exits > 0 && st.rounds >= 8,
        "{st:?}"
    );
    let f = m.faces();
    assert!(
        cand.iter()
            .any(|p| share_vertex(&f[p[0] as usize], &f[p[1] as usize])),
        "adjacent face pairs are self-CCD candidates"
    );
    let topo = Topology::new(m.faces(), m.vertex_count());
    let ccd = CcdOptions::default();
    let (gpu, st) = d.ccd_self(&mm, &topo, &ccd, &tiny()).unwrap();
    assert!(st.rounds >= 8, "{st:?}");
    assert!(
        gpu.earliest.is_some(),
        "the sheets sweep through each other"
    );
    assert_eq!(
        gpu,
        ccd_self_with_bvh(&m, &end, &topo, &cbvh, &ccd).unwrap()
    );
}

#[test]
fn idle_threshold_zero_makes_tasks_leave_early() {
    let d = Device::for_tests();
    let m = crossed_sheets(4);
    let bvh = lbvh::build(&m);
    let opts = BalanceOptions {
        tasks: 6,
        idle_threshold: 0.0,
        queue_capacity: 8,
        spill_capacity: 8,
        ..BalanceOptions::default()
    };
    let got = d.self_collide(&m, &bvh, &opts).unwrap();
    assert_eq!(got.pairs, brute_force_self(&m));
    assert!(got.stats.threshold_exits > 0, "{:?}", got.stats);
    // Threshold 1: no task ever leaves for the threshold.
    let never = BalanceOptions {
        idle_threshold: 1.0,
        ..opts
    };
    let got = d.self_collide(&m, &bvh, &never).unwrap();
    assert_eq!(got.stats.threshold_exits, 0);
    assert_eq!(got.pairs, brute_force_self(&m));
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let d = Device::for_tests();
    let m = common::sheet(2);
    let bvh = lbvh::build(&m);
    for opts in [
        BalanceOptions {
            queue_capacity: 0,
            ..BalanceOptions::default()
        },
        BalanceOptions {
            queue_capacity: 5000,
            ..BalanceOptions::default()
        },
        BalanceOptions {
            idle_threshold: f64::NAN,
            ..BalanceOptions::default()
        },
        BalanceOptions {
            idle_threshold: 1.5,
            ..BalanceOptions::default()
        },
    ] {
        assert!(d.self_collide(&m, &bvh, &opts).is_err(), "{opts:?}");
    }
    let other = common::sheet(3);
    assert!(d
        .self_collide(&other, &bvh, &BalanceOptions::default())
        .is_err());
    // CCD: wrong end length, NaN end position.
    let short = vec![Vec3::ZERO; m.vertex_count() - 1];
    let mm = MovingMesh {
        mesh: &m,
        end: &short,
        bvh: &bvh,
    };
    assert!(d
        .ccd_self_candidates(&mm, 0.0, &BalanceOptions::default())
        .is_err());
    let mut nan = m.positions().to_vec();
    nan[3].y = f32::NAN;
    let mm = MovingMesh {
        mesh: &m,
        end: &nan,
        bvh: &bvh,
    };
    assert!(d
        .ccd_self_candidates(&mm, 0.0, &BalanceOptions::default())
        .is_err());
}
