//! Bounding volumes: containment after fit / merge / transform, distance bounds against the
//! exact triangle distance of their contents, and the rectangle distance against the distance
//! of the rectangles' triangle halves.

use glam::{DMat3, DQuat, DVec2, DVec3, Mat3, Quat, Vec3};
use gprox_bvh::bounding_volume::{
    eigen_frame, eigen_frames4, BoundingVolume, CoordSlices, Moments,
};
use gprox_bvh::obb::Obb;
use gprox_bvh::rss::{rect_distance, Rss};
use gprox_bvh::sphere::Sphere;
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use proptest::prelude::*;

fn pt() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-1.0f64..1.0).prop_map(DVec3::from_array)
}

/// Clouds of triangles, sometimes flat or collinear (zero-area), sometimes far from the origin.
fn tris() -> impl Strategy<Value = Vec<[DVec3; 3]>> {
    (
        prop::collection::vec(prop::array::uniform3(pt()), 1..12),
        0u8..4,
        pt(),
    )
        .prop_map(|(ts, mode, off)| {
            ts.into_iter()
                .map(|t| {
                    let t = match mode {
                        0 => t.map(|p| DVec3::new(p.x, p.y, 0.0)),
                        1 => t.map(|p| DVec3::new(p.x, 0.5 * p.x, 0.0)),
                        _ => t,
                    };
                    t.map(|p| p + off * if mode == 3 { 100.0 } else { 1.0 })
                })
                .collect()
        })
}

fn points(ts: &[[DVec3; 3]]) -> Vec<DVec3> {
    ts.iter().flatten().copied().collect()
}

fn scale_of(p: &[DVec3]) -> f64 {
    p.iter().map(|x| x.abs().max_element()).fold(1.0, f64::max)
}

fn pose() -> impl Strategy<Value = Pose64> {
    (
        prop::array::uniform4(-1.0f32..1.0),
        prop::array::uniform3(-2.0f32..2.0),
    )
        .prop_map(|(q, t)| {
            let r = Mat3::from_quat(Quat::from_xyzw(q[0], q[1], q[2], q[3] + 1.2).normalize());
            Pose64::from_affine(&glam::Affine3A::from_mat3_translation(
                r,
                Vec3::from_array(t),
            ))
        })
}

fn world(pose: &Pose64, p: DVec3) -> DVec3 {
    // The f32 pose applied in f64 (same as transform_point for f32-representable points).
    let r = &pose.rows;
    let row = |k: usize| ((r[k][0] * p.x + r[k][1] * p.y) + r[k][2] * p.z) + r[k][3];
    DVec3::new(row(0), row(1), row(2))
}

fn containment<B: BoundingVolume>(
    ts: &[[DVec3; 3]],
    other: &[[DVec3; 3]],
    pose: &Pose64,
) -> Result<(), TestCaseError> {
    let p = points(ts);
    let tol = 1e-12 * scale_of(&p);
    let bv = B::fit_points(&p);
    for x in &p {
        prop_assert!(bv.contains_point(*x, tol), "fit misses {x:?}: {bv:?}");
    }
    // Fitting in an arbitrary frame also contains.
    // The ball around the volume holds the contents (the rounding of one square root aside).
    let (c, r) = bv.ball();
    for x in &p {
        prop_assert!(
            x.distance(c) <= r * (1.0 + 1e-12) + tol,
            "ball misses {x:?}: {bv:?}"
        );
    }
    let frame = DMat3::from_quat(DQuat::from_rotation_y(0.3) * DQuat::from_rotation_x(1.1));
    let bf = B::fit_in_frame(&p, &frame);
    for x in &p {
        prop_assert!(bf.contains_point(*x, tol));
    }
    let q = points(other);
    let bq = B::fit_points(&q);
    let m = bv.merge(&bq);
    let tol2 = 1e-12 * scale_of(&q).max(scale_of(&p));
    for x in p.iter().chain(&q) {
        prop_assert!(m.contains_point(*x, tol2), "merge misses {x:?}");
    }
    let w = bv.transform(pose);
    for x in &p {
        let y = world(pose, *x);
        prop_assert!(
            w.contains_point(y, 1e-12 * scale_of(&[y])),
            "transform misses"
        );
    }
    // Distance lower bound against the exact distance of the contents (triangles).
    let d_bv = bv.distance(&bq);
    let mut exact = f64::INFINITY;
    for x in ts {
        for y in other {
            exact = exact.min(triangle_distance(x, y).distance);
        }
    }
    prop_assert!(d_bv <= exact + 1e-12, "bv distance {d_bv} > exact {exact}");
    prop_assert!(bv.distance_lower_bound(&bq) <= d_bv + 1e-12);
    if exact > 0.0 {
        prop_assert!(!bv.overlaps(&bq) || d_bv <= exact);
    } else {
        prop_assert!(
            bv.overlaps(&bq),
            "contents touch but volumes do not overlap"
        );
    }
    Ok(())
}

/// `fit_in_frame_soa` over the points cut into two coordinate-slice parts equals
/// `fit_in_frame` over all of them (the tree builder relies on it).
fn soa_fit_matches<B: BoundingVolume + PartialEq>(
    pts: &[DVec3],
    cut: usize,
) -> Result<(), TestCaseError> {
    let frame = Moments::from_points(pts).frame();
    let xs: Vec<f64> = pts.iter().map(|p| p.x).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.y).collect();
    let zs: Vec<f64> = pts.iter().map(|p| p.z).collect();
    let c = cut % (pts.len() + 1);
    let parts: [CoordSlices<'_>; 2] = [
        [&xs[..c], &ys[..c], &zs[..c]],
        [&xs[c..], &ys[c..], &zs[c..]],
    ];
    prop_assert_eq!(
        B::fit_in_frame_soa(&parts, &frame),
        B::fit_in_frame(pts, &frame)
    );
    Ok(())
}

/// `f` (an eigen frame of `c`) is a right-handed orthonormal frame that diagonalises the
/// matrix, largest eigenvalue first.
fn diagonalises(c: &DMat3, f: &DMat3) -> Result<(), TestCaseError> {
    // Near-repeated eigenvalues lose half the digits (acos near ±1): tightness only.
    let tol = 1e-6
        * (1.0
            + c.to_cols_array()
                .iter()
                .map(|x| x.abs())
                .fold(0.0, f64::max));
    let ortho = f.transpose() * f - DMat3::IDENTITY;
    prop_assert!(
        ortho.to_cols_array().iter().all(|x| x.abs() < 1e-12),
        "{f:?}"
    );
    prop_assert!((f.determinant() - 1.0).abs() < 1e-12);
    let d = f.transpose() * *c * *f;
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        prop_assert!(d.col(j)[i].abs() < tol, "off-diagonal {:?} of {c:?}", d);
        prop_assert!(d.col(i)[i] >= d.col(j)[j] - tol, "unsorted {d:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn eigen_frames_diagonalise(q in prop::array::uniform4(-1.0f64..1.0), l in prop::array::uniform3(-2.0f64..2.0), repeat in 0u8..4, scale in -3i32..3) {
        let r = DMat3::from_quat(DQuat::from_xyzw(q[0], q[1], q[2], q[3] + 1.5).normalize());
        // Sometimes repeated eigenvalues (planar / linear / isotropic point sets).
        let l = match repeat {
            0 => [l[0], l[0], l[2]],
            1 => [l[0], l[1], l[1]],
            2 => [l[0], l[0], l[0]],
            _ => l,
        };
        let c = r * DMat3::from_diagonal(DVec3::from_array(l) * 10f64.powi(scale)) * r.transpose();
        // Symmetrise exactly (the product is symmetric only up to rounding).
        let c = (c + c.transpose()) * 0.5;
        let c2 = Moments::from_points(&[r.x_axis, r.y_axis * 0.5, -r.x_axis]).covariance();
        let (f, f2) = (eigen_frame(&c), eigen_frame(&c2));
        diagonalises(&c, &f)?;
        diagonalises(&c2, &f2)?;
        // The batch path, including its fallback lanes (the zero matrix, repeated eigenvalues).
        let batch = [c, c2, DMat3::ZERO, c * 3.0];
        for (m, g) in batch.iter().zip(eigen_frames4(&batch)) {
            diagonalises(m, &g)?;
        }
    }

    #[test]
    fn soa_fits_match_point_fits(a in tris(), cut in 0usize..40) {
        let p = points(&a);
        soa_fit_matches::<Rss>(&p, cut)?;
        soa_fit_matches::<Obb>(&p, cut)?;
        soa_fit_matches::<Sphere>(&p, cut)?;
    }

    #[test]
    fn rss_contains_and_bounds(a in tris(), b in tris(), off in pt(), pose in pose()) {
        let b: Vec<[DVec3; 3]> = b.iter().map(|t| t.map(|p| p + off * 2.0)).collect();
        containment::<Rss>(&a, &b, &pose)?;
    }

    #[test]
    fn obb_contains_and_bounds(a in tris(), b in tris(), off in pt(), pose in pose()) {
        let b: Vec<[DVec3; 3]> = b.iter().map(|t| t.map(|p| p + off * 2.0)).collect();
        containment::<Obb>(&a, &b, &pose)?;
    }

    #[test]
    fn sphere_contains_and_bounds(a in tris(), b in tris(), off in pt(), pose in pose()) {
        let b: Vec<[DVec3; 3]> = b.iter().map(|t| t.map(|p| p + off * 2.0)).collect();
        containment::<Sphere>(&a, &b, &pose)?;
    }

    /// The rectangle distance equals the minimum over the triangle halves of both rectangles.
    #[test]
    fn rect_distance_is_exact(ca in pt(), cb in pt(), qa in prop::array::uniform4(-1.0f64..1.0), qb in prop::array::uniform4(-1.0f64..1.0), ha in prop::array::uniform2(0.0f64..1.0), hb in prop::array::uniform2(0.0f64..1.0), flat in any::<bool>()) {
        let fa = DMat3::from_quat(DQuat::from_xyzw(qa[0], qa[1], qa[2], qa[3] + 1.5).normalize());
        let fb = if flat { fa } else { DMat3::from_quat(DQuat::from_xyzw(qb[0], qb[1], qb[2], qb[3] + 1.5).normalize()) };
        let (ha, hb) = (DVec2::from_array(ha), DVec2::from_array(hb));
        let d = rect_distance(ca, &fa, ha, cb, &fb, hb);
        let halves = |c: DVec3, f: &DMat3, h: DVec2| {
            let (x, y) = (f.x_axis * h.x, f.y_axis * h.y);
            let k = [c - x - y, c + x - y, c + x + y, c - x + y];
            [[k[0], k[1], k[2]], [k[0], k[2], k[3]]]
        };
        let mut exact = f64::INFINITY;
        for x in halves(ca, &fa, ha) {
            for y in halves(cb, &fb, hb) {
                exact = exact.min(triangle_distance(&x, &y).distance);
            }
        }
        prop_assert!((d - exact).abs() <= 1e-9, "rect {d} vs triangles {exact}");
    }
}

#[test]
fn pca_frame_is_orthonormal() {
    let p: Vec<DVec3> = (0..50)
        .map(|i| DVec3::new(i as f64, 0.1 * (i % 7) as f64, 0.01 * (i % 3) as f64))
        .collect();
    let f = Moments::from_points(&p).frame();
    assert!((f.transpose() * f - DMat3::IDENTITY)
        .to_cols_array()
        .iter()
        .all(|x| x.abs() < 1e-12));
    assert!(f.x_axis.x.abs() > 0.99, "largest spread along x: {f:?}");
    let _ = transform_point(&Pose64::IDENTITY, Vec3::ZERO);
}
