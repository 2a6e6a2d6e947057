//! Geometry-image positions evaluated on the device (`cuda/geometry_image_eval.cu`,
//! `DeviceImage::evaluate`) against the CPU's `GeometryImage::update_positions`: positions,
//! pad and hierarchy bit for bit on Bézier, non-uniform and rational B-spline surfaces, posed
//! and clipped; collision of evaluated deforming images pair for pair; the op budget of an
//! evaluated frame (only the control points go up).

#[path = "common/sheets.rs"]
mod sheets;

use gprox_cuda::geometry_image::Evaluation;
use gprox_cuda::{Device, DeviceImage};
use gprox_geometry::freeform::{NurbsSurface, ParamRect, TrimmedFace};
use gprox_geometry::glam::{DVec2, DVec3};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{collide_images, GeometryImage, HierarchyImage, ImageSpec, Mode};
use sheets::{assert_same_levels, collide_query_launches, image, patch, wave, with_hole};

/// An `n × n` cubic B-spline sheet over [0, 1]² with interior knots at `0.13, 0.4, 0.45, ...`
/// (non-uniform), heights from `h`, optional weights from `w`.
fn bspline(
    n: usize,
    h: impl Fn(usize, usize) -> f64,
    w: Option<&dyn Fn(usize) -> f64>,
) -> NurbsSurface {
    let inner = n - 4;
    let mut knots = vec![0.0; 4];
    for k in 0..inner {
        let t = (k as f64 + 1.0) / (inner as f64 + 1.0);
        knots.push(t + 0.07 * (k as f64 * 2.3).sin() / (inner as f64 + 1.0));
    }
    knots.extend([1.0; 4]);
    let pts = (0..n * n)
        .map(|k| {
            DVec3::new(
                (k / n) as f64 / (n - 1) as f64,
                (k % n) as f64 / (n - 1) as f64,
                h(k / n, k % n),
            )
        })
        .collect();
    let weights = w.map(|w| (0..n * n).map(w).collect());
    NurbsSurface::new([3, 3], [knots.clone(), knots], [n, n], pts, weights).unwrap()
}

/// A rotation about a tilted axis and a translation.
fn pose(angle: f64, t: DVec3) -> Pose64 {
    let (s, c) = angle.sin_cos();
    // Rotation about z, then about x by half the angle.
    let (s2, c2) = (0.5 * angle).sin_cos();
    let rz = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let rx = [[1.0, 0.0, 0.0], [0.0, c2, -s2], [0.0, s2, c2]];
    let mut rows = [[0.0; 4]; 3];
    for (r, row) in rows.iter_mut().enumerate() {
        for (k, x) in row.iter_mut().take(3).enumerate() {
            *x = (0..3).map(|m| rx[r][m] * rz[m][k]).sum();
        }
        row[3] = t[r];
    }
    Pose64 { rows }
}

/// The device's positions after `evaluate` equal the CPU's `update_positions` bit for bit (and
/// so do the pad and the hierarchy), for Bézier, non-uniform and rational B-spline surfaces,
/// posed, on full, clipped and coarse grids (tiles with column points shared, and tiles
/// evaluated texel by texel).
#[test]
fn device_evaluation_equals_cpu_bit_for_bit() {
    let d = Device::for_tests();
    let wave2 =
        |i: usize, j: usize| 0.2 * ((i as f64) * 1.3).sin() * ((j as f64) * 0.7 + 0.4).cos();
    let weight = |k: usize| 0.6 + 0.9 * ((k as f64) * 0.77).sin().abs();
    let surfaces = [
        patch(wave(0.2, 0.3), DVec3::new(0.1, -0.2, 0.3)),
        bspline(7, wave2, None),
        bspline(6, wave2, Some(&weight)),
        // Knots far denser than the texels of a coarse grid: a tile's rows need more control
        // rows than the kernel keeps column points for, and it evaluates texel by texel.
        bspline(60, wave2, None),
    ];
    let poses = [
        Pose64::IDENTITY,
        pose(0.7, DVec3::new(1.5, -2.0, 0.25)),
        pose(-2.1, DVec3::new(-30.0, 4.0, 12.0)),
    ];
    for (si, s) in surfaces.iter().enumerate() {
        let face = TrimmedFace::untrimmed(s.clone()).unwrap();
        let full = ImageSpec::new(0, s, &Pose64::IDENTITY, 0.1, None)
            .unwrap()
            .unwrap();
        let clipped = ImageSpec {
            rect: ParamRect::new(0.2, 0.9, 0.05, 0.6),
            width: 23,
            height: 17,
            ..full
        };
        let coarse = ImageSpec {
            width: 9,
            height: 9,
            ..full
        };
        for spec in [full, clipped, coarse] {
            let mut img = GeometryImage::from_spec(0, &face, &Pose64::IDENTITY, spec).unwrap();
            let mut dev = DeviceImage::new(&d, &img, true).unwrap();
            for (pi, p) in poses.iter().enumerate() {
                img.update_positions(s, p).unwrap();
                dev.evaluate(&d, s, p).unwrap();
                let got = dev.download_positions().unwrap();
                assert_eq!(got.len(), img.positions.len());
                for (k, (g, c)) in got.iter().zip(&img.positions).enumerate() {
                    assert_eq!(
                        g.to_array().map(f32::to_bits),
                        c.to_array().map(f32::to_bits),
                        "surface {si} pose {pi} texel {k}"
                    );
                }
                assert_eq!(dev.face().pad.to_bits(), img.pad.to_bits());
                assert_same_levels(&img, &dev);
            }
        }
    }
}

/// Deforming sheets evaluated on the device frame after frame (one posed, with a hole) collide
/// as on the CPU, pair for pair in both modes (exact mode: the device's filtered test, the host's
/// exact one on the corners of what it leaves undecided).
#[test]
fn evaluated_deforming_collision_equals_cpu() {
    let d = Device::for_tests();
    let tilt = |t: f64| {
        patch(
            move |i, j| 0.6 * (j as f64 / 3.0 - 0.5) + 0.05 * t * i as f64,
            DVec3::new(0.1, 0.05, 0.0),
        )
    };
    let hole = [
        DVec2::new(0.3, 0.3),
        DVec2::new(0.3, 0.6),
        DVec2::new(0.6, 0.6),
        DVec2::new(0.6, 0.3),
    ];
    let (fa, fb) = (
        TrimmedFace::untrimmed(patch(wave(0.0, 0.15), DVec3::ZERO)).unwrap(),
        with_hole(tilt(0.0), &hole),
    );
    let (mut a, mut b) = (image(0, &fa, 0.35), image(1, &fb, 0.35));
    let (mut da, mut db) = (
        DeviceImage::new(&d, &a, false).unwrap(),
        DeviceImage::new(&d, &b, false).unwrap(),
    );
    for frame in 0..2 {
        let t = 0.3 * frame as f64;
        let (sa, sb) = (patch(wave(t, 0.15), DVec3::ZERO), tilt(t));
        let pb = pose(0.1 * frame as f64, DVec3::new(0.02, 0.0, 0.0));
        a.update_positions(&sa, &Pose64::IDENTITY).unwrap();
        b.update_positions(&sb, &pb).unwrap();
        da.evaluate(&d, &sa, &Pose64::IDENTITY).unwrap();
        db.evaluate(&d, &sb, &pb).unwrap();
        let (ha, hb) = (HierarchyImage::build(&a), HierarchyImage::build(&b));
        for mode in [Mode::Approximate, Mode::Exact] {
            let cpu = collide_images((&a, &ha), (&b, &hb), mode);
            assert!(!cpu.is_empty(), "frame {frame} {mode:?}: the sheets cross");
            assert_eq!(
                d.image_collide((&a, &da), (&b, &db), mode).unwrap(),
                cpu,
                "frame {frame} {mode:?}"
            );
        }
    }
}

/// A warm frame with the positions evaluated on the device: only the control points go up (32 B
/// each; nothing for a new pose of the same control points), one launch for the texels and one
/// per stored level, no wait, nothing read back, no allocation; the query then syncs once and
/// reads the header and 8 B per (sorted) pair.
#[test]
fn evaluated_frame_op_budget() {
    let d = Device::for_tests();
    let sheet = |t: f64| patch(wave(t, 0.1), DVec3::ZERO);
    let fb = TrimmedFace::untrimmed(patch(
        |i, _| 0.8 * (i as f64 / 3.0 - 0.5),
        DVec3::new(0.05, 0.1, 0.0),
    ))
    .unwrap();
    let fa = TrimmedFace::untrimmed(sheet(0.0)).unwrap();
    let (a, b) = (image(0, &fa, 0.5), image(1, &fb, 0.5));
    let mut da = DeviceImage::new(&d, &a, false).unwrap();
    let db = DeviceImage::new(&d, &b, false).unwrap();
    let points = 32 * 16u64;
    let levels = da.build_launches() as u64;
    // Frame 0 warms up (basis tables, pool); frames 1 and 2 are measured.
    for frame in 0..3 {
        let s = sheet(0.2 * frame as f64);
        let before = d.ops();
        da.evaluate(&d, &s, &Pose64::IDENTITY).unwrap();
        let upd = d.ops() - before;
        // The same control points at a new pose: nothing goes up.
        let before = d.ops();
        da.evaluate(&d, &s, &pose(0.01, DVec3::new(0.0, 0.0, 0.001)))
            .unwrap();
        let rigid = d.ops() - before;
        let before = d.ops();
        let pairs = d
            .image_collide((&a, &da), (&b, &db), Mode::Approximate)
            .unwrap();
        let query = d.ops() - before;
        if frame == 0 {
            continue;
        }
        assert_eq!(upd.h2d_bytes, points, "{upd:?}");
        assert_eq!(
            (upd.launches, upd.syncs, upd.d2h_bytes, upd.allocations),
            (1 + levels, 0, 0, 0)
        );
        assert_eq!(
            (
                rigid.h2d_bytes,
                rigid.launches,
                rigid.syncs,
                rigid.allocations
            ),
            (0, 1 + levels, 0, 0)
        );
        assert!(!pairs.is_empty());
        assert_eq!(
            query.launches,
            collide_query_launches(&a, &b, false),
            "{query:?}"
        );
        assert_eq!((query.syncs, query.h2d_bytes, query.allocations), (1, 0, 0));
        assert_eq!(query.d2h_bytes, 16 + 8 * pairs.len() as u64);
    }
}

/// Two images in one `DeviceImage::evaluate_all` batch.
fn evaluate_two(
    d: &Device,
    jobs: [(&mut DeviceImage, &NurbsSurface, &Pose64); 2],
) -> gprox_cuda::Result<()> {
    let mut jobs = jobs.map(|(image, surface, pose)| Evaluation {
        image,
        surface,
        pose,
    });
    DeviceImage::evaluate_all(d, &mut jobs)
}

/// Several images evaluated together (`DeviceImage::evaluate_all`: every upload, then every
/// evaluation, the paddings on the host, then every build) hold what one `evaluate` per image
/// makes, bit for bit, with the same operations (warm: the control points up, one launch for
/// the texels and one per stored level, no wait, no allocation); a non-finite pose anywhere in
/// the batch is refused before anything is enqueued.
#[test]
fn evaluate_all_equals_one_evaluate_per_image() {
    let d = Device::for_tests();
    let fa = TrimmedFace::untrimmed(patch(wave(0.0, 0.15), DVec3::ZERO)).unwrap();
    let fb = TrimmedFace::untrimmed(bspline(7, |i, j| 0.1 * ((i * j) as f64).sin(), None)).unwrap();
    let (mut a, mut b) = (image(0, &fa, 0.35), image(1, &fb, 0.35));
    let make = |a: &GeometryImage, b: &GeometryImage| {
        (
            DeviceImage::new(&d, a, true).unwrap(),
            DeviceImage::new(&d, b, true).unwrap(),
        )
    };
    let (mut one_a, mut one_b) = make(&a, &b);
    let (mut all_a, mut all_b) = make(&a, &b);
    for frame in 0..3 {
        let t = 0.25 * frame as f64;
        let sa = patch(wave(t, 0.15), DVec3::ZERO);
        let sb = bspline(7, |i, j| 0.1 * ((i * j) as f64 + t).sin(), None);
        let pb = pose(0.2 * t, DVec3::new(0.03, 0.0, 0.01));
        let before = d.ops();
        one_a.evaluate(&d, &sa, &Pose64::IDENTITY).unwrap();
        one_b.evaluate(&d, &sb, &pb).unwrap();
        let one = d.ops() - before;
        let before = d.ops();
        evaluate_two(
            &d,
            [(&mut all_a, &sa, &Pose64::IDENTITY), (&mut all_b, &sb, &pb)],
        )
        .unwrap();
        let all = d.ops() - before;
        assert_eq!(one, all, "frame {frame}");
        if frame > 0 {
            assert_eq!((all.syncs, all.allocations, all.d2h_bytes), (0, 0, 0));
        }
        a.update_positions(&sa, &Pose64::IDENTITY).unwrap();
        b.update_positions(&sb, &pb).unwrap();
        for (cpu, x, y) in [(&a, &one_a, &all_a), (&b, &one_b, &all_b)] {
            assert_eq!(
                x.face().pad.to_bits(),
                y.face().pad.to_bits(),
                "frame {frame}"
            );
            assert_eq!(cpu.pad.to_bits(), y.face().pad.to_bits(), "frame {frame}");
            assert_eq!(cpu.positions, y.download_positions().unwrap());
            assert_same_levels(cpu, x);
            assert_same_levels(cpu, y);
        }
    }
    let bad = Pose64 {
        rows: [[f64::NAN; 4]; 3],
    };
    let sa = patch(wave(0.9, 0.15), DVec3::ZERO);
    let before = d.ops();
    let err = evaluate_two(
        &d,
        [
            (&mut all_a, &sa, &Pose64::IDENTITY),
            (&mut all_b, &sa, &bad),
        ],
    );
    assert!(err.is_err());
    assert_eq!(d.ops() - before, Default::default(), "nothing enqueued");
}
