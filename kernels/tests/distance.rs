//! The distance kernels (level-synchronous 8-wide RSS traversal, min-reductions, triangle
//! distance), run on the test device (`Device::for_tests()`: the emulator, or CUDA device 0 with
//! `GPROX_TEST_DEVICE=cuda`), against the CPU backend (`gprox_query::distance`) and a brute-force
//! minimum over all face pairs with `gprox_geometry::tri_distance::triangle_distance`.

mod common;

use gprox_bvh::{bv_tree::BvTree, rss::Rss};
use gprox_cuda::distance::{GpuDistanceOptions, ResidentDistanceMesh};
use gprox_cuda::Device;
use gprox_geometry::glam::{Affine3A, DVec3, Quat, Vec3};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::{point_triangle_distance, triangle_distance};
use gprox_geometry::TriMesh;
use gprox_query::distance::{self as cpu, DistanceObject, DistanceOptions, DistanceResult};
use proptest::prelude::*;

/// Minimum triangle distance over every face pair.
fn brute_force(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> f64 {
    let mut best = f64::INFINITY;
    for i in 0..a.face_count() {
        let ta = transform_triangle(pa, a.triangle(i));
        for j in 0..b.face_count() {
            let d = triangle_distance(&ta, &transform_triangle(pb, b.triangle(j))).distance;
            best = best.min(d);
        }
    }
    best
}

/// The reported points lie on the reported triangles and are `distance` apart.
fn check_witness(r: &DistanceResult, a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) {
    let ta = transform_triangle(pa, a.triangle(r.tri_a as usize));
    let tb = transform_triangle(pb, b.triangle(r.tri_b as usize));
    let scale = ta
        .iter()
        .chain(&tb)
        .map(|p| p.abs().max_element())
        .fold(1.0, f64::max);
    let tol = 1e-12 * scale;
    assert!(point_triangle_distance(r.point_a, &ta).0 <= tol, "{r:?}");
    assert!(point_triangle_distance(r.point_b, &tb).0 <= tol, "{r:?}");
    assert!(
        (r.point_a.distance(r.point_b) - r.distance).abs() <= tol,
        "{r:?}"
    );
    assert!(!r.distance.is_nan() && !r.lower.is_nan() && !r.upper.is_nan());
}

struct Run {
    gpu: DistanceResult,
    cpu: DistanceResult,
}

fn run(a: &TriMesh, pa: Pose64, b: &TriMesh, pb: Pose64, opts: GpuDistanceOptions) -> Run {
    let (ta, tb) = (BvTree::<Rss>::build(a), BvTree::<Rss>::build(b));
    let oa = DistanceObject {
        mesh: a,
        tree: &ta,
        pose: pa,
    };
    let ob = DistanceObject {
        mesh: b,
        tree: &tb,
        pose: pb,
    };
    let gpu = Device::for_tests().distance(&oa, &ob, &opts).unwrap();
    let cpu_opts = DistanceOptions {
        abs_tol: opts.abs_tol,
        rel_tol: opts.rel_tol,
        threshold: opts.threshold,
        parallel: false,
    };
    let cpu = cpu::distance(&oa, &ob, &cpu_opts).unwrap();
    Run { gpu, cpu }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Exact query: the device distance is the CPU's and the brute force's, bit for bit (the
    /// arithmetic is mirrored), with witnesses on the reported triangles and lower = upper.
    #[test]
    fn exact_distance_matches_cpu_and_brute_force(
        a in common::mesh(16), b in common::mesh(16),
        pa in common::pose(), pb in common::pose(),
        small in any::<bool>(),
    ) {
        let opts = GpuDistanceOptions {
            initial_capacity: if small { 1 } else { 1 << 12 },
            ..GpuDistanceOptions::default()
        };
        let r = run(&a, pa, &b, pb, opts);
        let brute = brute_force(&a, &pa, &b, &pb);
        prop_assert_eq!(r.gpu.distance, brute);
        prop_assert_eq!(r.gpu.distance, r.cpu.distance);
        prop_assert_eq!(r.gpu.lower, r.gpu.distance);
        prop_assert_eq!(r.gpu.upper, r.gpu.distance);
        check_witness(&r.gpu, &a, &pa, &b, &pb);
    }

    /// Tolerance queries: `lower ≤ brute ≤ upper = distance`, within the tolerance.
    #[test]
    fn tolerance_bounds_hold(
        a in common::mesh(16), b in common::mesh(16),
        pa in common::pose(), pb in common::pose(),
        abs_tol in 0.0f64..0.5, rel_tol in 0.0f64..0.5,
    ) {
        let opts = GpuDistanceOptions { abs_tol, rel_tol, ..GpuDistanceOptions::default() };
        let r = run(&a, pa, &b, pb, opts);
        let brute = brute_force(&a, &pa, &b, &pb);
        let g = r.gpu;
        prop_assert!(g.lower <= brute && brute <= g.upper, "{g:?} brute {brute}");
        prop_assert_eq!(g.upper, g.distance);
        prop_assert!(g.upper - g.lower <= abs_tol.max(rel_tol * g.upper) * (1.0 + 1e-12) + 1e-300);
        check_witness(&g, &a, &pa, &b, &pb);
    }

    /// Threshold queries answer "below δ?" like the brute force.
    #[test]
    fn threshold_answers_like_brute_force(
        a in common::mesh(16), b in common::mesh(16),
        pa in common::pose(), pb in common::pose(),
        delta in 0.0f64..2.0,
    ) {
        let opts = GpuDistanceOptions { threshold: Some(delta), ..GpuDistanceOptions::default() };
        let r = run(&a, pa, &b, pb, opts);
        let brute = brute_force(&a, &pa, &b, &pb);
        prop_assert_eq!(r.gpu.below_threshold, brute < delta);
        prop_assert!(r.gpu.lower <= brute && brute <= r.gpu.upper);
        check_witness(&r.gpu, &a, &pa, &b, &pb);
    }
}

/// A finite f32 from every corner of the range (ordinary values, zeros, ±1e±30, the extremes).
fn wide_coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -2.0f32..2.0,
        1 => prop::sample::select(vec![
            0.0, -0.0, 1e30, -1e30, 1e-30, -1e-30, f32::MAX, f32::MIN, f32::MIN_POSITIVE,
        ]),
    ]
}

/// One triangle with `wide_coord` corners.
fn wide_triangle() -> impl Strategy<Value = TriMesh> {
    prop::array::uniform9(wide_coord()).prop_filter_map("not a mesh", |c| {
        let p = c.chunks(3).map(|v| Vec3::new(v[0], v[1], v[2])).collect();
        TriMesh::new(p, vec![[0, 1, 2]]).ok()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One triangle against one under any affine pose (singular ones too), with coordinates
    /// where every rounding shows: the device's triangle distance is the host's, bit for bit
    /// (the mirrored arithmetic has drifted from the CPU's operation order before).
    #[test]
    fn triangle_distance_is_the_hosts_bit_for_bit(
        a in wide_triangle(), b in wide_triangle(), m in prop::array::uniform12(wide_coord()),
    ) {
        let pb = Pose64::from_affine(&Affine3A::from_cols_array(&m));
        let r = run(&a, Pose64::IDENTITY, &b, pb, GpuDistanceOptions::default());
        let want = triangle_distance(
            &transform_triangle(&Pose64::IDENTITY, a.triangle(0)),
            &transform_triangle(&pb, b.triangle(0)),
        );
        prop_assert_eq!(r.gpu.distance.to_bits(), want.distance.to_bits(), "{:?}", r.gpu);
        prop_assert_eq!((r.gpu.point_a, r.gpu.point_b), (want.point_a, want.point_b));
        prop_assert_eq!(r.gpu.distance.to_bits(), r.cpu.distance.to_bits());
    }
}

/// A wavy grid of `n × n` quads (2 n² triangles) in the xy plane.
fn grid(n: usize, phase: f32) -> TriMesh {
    let (v, f) = common::sheet_parts(n as u32, Affine3A::IDENTITY, 0, |x, y| {
        0.05 * (7.0 * x + phase).sin() * (5.0 * y).cos()
    });
    TriMesh::new(v, f).unwrap()
}

/// Two meshes of a few hundred triangles: several levels, tiny buffers force reruns, and the
/// answer is the CPU's and the brute force's.
#[test]
fn larger_meshes_grow_and_rerun() {
    let a = grid(10, 0.0);
    let b = grid(8, 1.0);
    let pb = Pose64::from_affine(&Affine3A::from_rotation_translation(
        Quat::from_axis_angle(Vec3::new(1.0, 0.5, 0.2).normalize(), 0.7),
        Vec3::new(0.3, 0.2, 0.4),
    ));
    let pa = Pose64::IDENTITY;
    let (ta, tb) = (BvTree::<Rss>::build(&a), BvTree::<Rss>::build(&b));
    let oa = DistanceObject {
        mesh: &a,
        tree: &ta,
        pose: pa,
    };
    let ob = DistanceObject {
        mesh: &b,
        tree: &tb,
        pose: pb,
    };
    let tiny = GpuDistanceOptions {
        initial_capacity: 1,
        ..GpuDistanceOptions::default()
    };
    let (g, stats) = Device::for_tests()
        .distance_with_stats(&oa, &ob, &tiny)
        .unwrap();
    assert!(stats.reruns > 0, "{stats:?}");
    assert!(stats.levels >= 2, "{stats:?}");
    let c = cpu::distance(&oa, &ob, &DistanceOptions::default()).unwrap();
    let brute = brute_force(&a, &pa, &b, &pb);
    assert_eq!(g.distance, brute);
    assert_eq!(g.distance, c.distance);
    check_witness(&g, &a, &pa, &b, &pb);
    // Pruning works: far fewer triangle pairs than all of them.
    assert!(stats.leaf_pairs < (a.face_count() * b.face_count()) as u64 / 4);
    let (g2, _) = Device::for_tests()
        .distance_with_stats(&oa, &ob, &GpuDistanceOptions::default())
        .unwrap();
    assert_eq!(g2.distance, g.distance);
}

/// Identical poses of one mesh and meshes touching at a vertex give exactly 0, no NaN.
#[test]
fn degenerate_cases_give_zero() {
    let a = grid(4, 0.0);
    let r = run(
        &a,
        Pose64::IDENTITY,
        &a,
        Pose64::IDENTITY,
        GpuDistanceOptions::default(),
    );
    assert_eq!(r.gpu.distance, 0.0);
    assert_eq!(r.cpu.distance, 0.0);
    assert_eq!((r.gpu.lower, r.gpu.upper), (0.0, 0.0));
    check_witness(&r.gpu, &a, &Pose64::IDENTITY, &a, &Pose64::IDENTITY);

    // Two tetrahedra touching at one vertex.
    let tet = |o: Vec3, s: f32| {
        TriMesh::new(
            vec![o, o + Vec3::X * s, o + Vec3::Y * s, o + Vec3::Z * s],
            vec![[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]],
        )
        .unwrap()
    };
    let a = tet(Vec3::ZERO, 1.0);
    let b = tet(Vec3::ZERO, -1.0);
    let r = run(
        &a,
        Pose64::IDENTITY,
        &b,
        Pose64::IDENTITY,
        GpuDistanceOptions::default(),
    );
    assert_eq!(r.gpu.distance, 0.0);
    assert_eq!(r.gpu.point_a, DVec3::ZERO);
    check_witness(&r.gpu, &a, &Pose64::IDENTITY, &b, &Pose64::IDENTITY);

    // Zero-area triangles only (segments and points).
    let flat = TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0)],
        vec![[0, 1, 2], [1, 1, 1]],
    )
    .unwrap();
    let lift = Pose64::from_affine(&Affine3A::from_translation(Vec3::new(0.5, 1.0, 0.0)));
    let r = run(
        &flat,
        Pose64::IDENTITY,
        &flat,
        lift,
        GpuDistanceOptions::default(),
    );
    assert_eq!(r.gpu.distance, 1.0);
    assert_eq!(r.gpu.distance, r.cpu.distance);
}

/// Bad input is a typed error.
#[test]
fn bad_options_and_poses_are_errors() {
    let a = grid(2, 0.0);
    let t = BvTree::<Rss>::build(&a);
    let o = DistanceObject {
        mesh: &a,
        tree: &t,
        pose: Pose64::IDENTITY,
    };
    let d = Device::for_tests();
    let bad = GpuDistanceOptions {
        rel_tol: f64::NAN,
        ..GpuDistanceOptions::default()
    };
    assert!(d.distance(&o, &o, &bad).is_err());
    let mut pose = Pose64::IDENTITY;
    pose.rows[0][3] = f64::INFINITY;
    let ob = DistanceObject { pose, ..o };
    assert!(d.distance(&o, &ob, &GpuDistanceOptions::default()).is_err());
    let other = grid(3, 0.0);
    let wrong = DistanceObject { mesh: &other, ..o };
    assert!(d
        .distance(&wrong, &o, &GpuDistanceOptions::default())
        .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The min-reduction kernel: the smallest value and the first index holding it.
    #[test]
    fn min_reduction_finds_first_minimum(
        values in prop::collection::vec(prop_oneof![4 => 0.0f64..4.0, 1 => Just(1.0), 1 => Just(f64::INFINITY)], 1..300),
    ) {
        let d = Device::for_tests();
        let buf = d.upload(&values).unwrap();
        let (v, i) = d.min_reduce(&buf, values.len()).unwrap();
        let best = values.iter().copied().fold(f64::INFINITY, f64::min);
        prop_assert_eq!(v, best);
        if best.is_finite() {
            prop_assert_eq!(i as usize, values.iter().position(|&x| x == best).unwrap());
        }
    }
}

/// A rigid pose from an axis-angle rotation and a translation.
fn posed(axis: Vec3, angle: f32, t: Vec3) -> Pose64 {
    Pose64::from_affine(&Affine3A::from_rotation_translation(
        Quat::from_axis_angle(axis.normalize(), angle),
        t,
    ))
}

/// The reported pair's closest points and distance are the host's exact `triangle_distance` of
/// that pair, bit for bit.
fn check_pair_bits(r: &DistanceResult, a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) {
    let ta = transform_triangle(pa, a.triangle(r.tri_a as usize));
    let tb = transform_triangle(pb, b.triangle(r.tri_b as usize));
    let e = triangle_distance(&ta, &tb);
    assert_eq!(e.distance.to_bits(), r.distance.to_bits(), "{r:?}");
    assert_eq!(
        e.point_a.to_array().map(f64::to_bits),
        r.point_a.to_array().map(f64::to_bits)
    );
    assert_eq!(
        e.point_b.to_array().map(f64::to_bits),
        r.point_b.to_array().map(f64::to_bits)
    );
}

/// The op budget of a warm resident query (two tori of a few thousand triangles, apart and
/// interlocked): one synchronisation, nothing allocated or uploaded, a small read-back — and
/// the CPU's answer bit for bit.
#[test]
fn warm_resident_query_op_budget() {
    let a = gprox_geometry::scene::torus(1.0, 0.3, 48, 32).unwrap();
    let b = gprox_geometry::scene::torus(0.8, 0.25, 40, 30).unwrap();
    let (ta, tb) = (BvTree::<Rss>::build(&a), BvTree::<Rss>::build(&b));
    let d = Device::for_tests();
    let ra = ResidentDistanceMesh::new(&d, &a, &ta).unwrap();
    let rb = ResidentDistanceMesh::new(&d, &b, &tb).unwrap();
    let pa = Pose64::IDENTITY;
    // Apart (one closest pair), and interlocked (distance 0, many touching pairs).
    let apart = posed(Vec3::new(1.0, 0.3, 0.2), 0.7, Vec3::new(2.5, 0.4, 0.3));
    let overlap = posed(Vec3::new(0.2, 1.0, 0.1), 0.4, Vec3::new(0.5, 0.2, 0.1));
    let opts = GpuDistanceOptions::default();
    // Cold queries: the pool's buffers grow to what these scenes need.
    for pb in [apart, overlap] {
        d.distance_resident(&ra, &pa, &rb, &pb, &opts).unwrap();
    }
    for (name, pb) in [("apart", apart), ("overlapping", overlap)] {
        let before = d.ops();
        let (g, stats) = d
            .distance_resident_with_stats(&ra, &pa, &rb, &pb, &opts)
            .unwrap();
        let used = d.ops() - before;
        println!("{name}: {used:?} {stats:?}");
        assert!(used.syncs <= 3, "{name}: {used:?}");
        assert_eq!(used.allocations, 0, "{name}: {used:?}");
        assert!(used.h2d_bytes <= 4096, "{name}: {used:?}");
        assert_eq!(stats.reruns, 0, "{name}: {stats:?}");

        let oa = DistanceObject {
            mesh: &a,
            tree: &ta,
            pose: pa,
        };
        let ob = DistanceObject {
            mesh: &b,
            tree: &tb,
            pose: pb,
        };
        let c = cpu::distance(&oa, &ob, &DistanceOptions::default()).unwrap();
        assert_eq!(g.distance.to_bits(), c.distance.to_bits(), "{name}");
        assert_eq!(g.lower.to_bits(), c.lower.to_bits(), "{name}");
        assert_eq!(g.upper.to_bits(), c.upper.to_bits(), "{name}");
        assert_eq!(g.below_threshold, c.below_threshold, "{name}");
        check_pair_bits(&g, &a, &pa, &b, &pb);
        if name == "apart" {
            // One pair at the minimum: the same pair and points as the CPU.
            assert_eq!(g, c, "{name}");
        } else {
            assert_eq!(g.distance, 0.0);
        }
        // The non-resident path gives the same answer.
        assert_eq!(d.distance(&oa, &ob, &opts).unwrap(), g, "{name}");
    }
}

/// Pairs of exactly equal distance (a vertex of each torus on the x axis, facing each other:
/// every face around one vertex against every face around the other) resolve to the smallest
/// (face a, face b), whatever the launch order — also with tiny buffers (reruns).
#[test]
fn ties_break_by_faces() {
    let a = gprox_geometry::scene::torus(1.0, 0.3, 12, 8).unwrap();
    let b = gprox_geometry::scene::torus(0.8, 0.25, 10, 8).unwrap();
    let pa = Pose64::IDENTITY;
    let pb = posed(Vec3::X, 0.0, Vec3::new(3.0, 0.0, 0.0));
    let mut ties = Vec::new();
    let mut best = f64::INFINITY;
    for i in 0..a.face_count() {
        let x = transform_triangle(&pa, a.triangle(i));
        for j in 0..b.face_count() {
            let dist = triangle_distance(&x, &transform_triangle(&pb, b.triangle(j))).distance;
            if dist < best {
                best = dist;
                ties.clear();
            }
            if dist == best {
                ties.push((i as u32, j as u32));
            }
        }
    }
    assert!(ties.len() > 1, "the scene must have ties: {ties:?}");
    for initial_capacity in [1, 1 << 12] {
        let opts = GpuDistanceOptions {
            initial_capacity,
            ..GpuDistanceOptions::default()
        };
        let r = run(&a, pa, &b, pb, opts);
        assert_eq!(r.gpu.distance, best);
        assert_eq!(r.gpu.distance, r.cpu.distance);
        assert_eq!((r.gpu.tri_a, r.gpu.tri_b), ties[0], "ties {ties:?}");
        check_pair_bits(&r.gpu, &a, &pa, &b, &pb);
    }
}

/// A resident mesh belongs to its device; bad poses are errors on the resident path too.
#[test]
fn resident_meshes_stay_on_their_device() {
    let a = grid(3, 0.0);
    let t = BvTree::<Rss>::build(&a);
    let d = Device::for_tests();
    let other = Device::emulated();
    let r = ResidentDistanceMesh::new(&d, &a, &t).unwrap();
    let foreign = ResidentDistanceMesh::new(&other, &a, &t).unwrap();
    let id = Pose64::IDENTITY;
    let opts = GpuDistanceOptions::default();
    assert!(d.distance_resident(&r, &id, &foreign, &id, &opts).is_err());
    let mut bad = id;
    bad.rows[1][1] = f64::NAN;
    assert!(d.distance_resident(&r, &id, &r, &bad, &opts).is_err());
    // A tree of another mesh is rejected when the mesh is made resident.
    let b = grid(4, 0.0);
    assert!(ResidentDistanceMesh::new(&d, &b, &t).is_err());
    assert_eq!(
        d.distance_resident(&r, &id, &r, &id, &opts)
            .unwrap()
            .distance,
        0.0
    );
}
