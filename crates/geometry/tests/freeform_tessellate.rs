//! Tessellation stays within its chordal tolerance (checked by dense evaluation).

use std::path::Path;

use gprox_geometry::freeform::tessellate::{surface_grid, tessellate_surface};
use gprox_geometry::freeform::{load_nurbs_json, teapot, FreeformModel, NurbsSurface};
use gprox_geometry::glam::DVec3;

/// For every grid cell, points of its two triangles at barycentric samples must lie within
/// `tol` of the surface point at the same parameters (a Hausdorff bound both ways).
fn check(s: &NurbsSurface, tol: f64) -> usize {
    let (us, vs) = surface_grid(s, tol).unwrap();
    let (pts, faces) = tessellate_surface(s, tol).unwrap();
    let m = vs.len();
    assert_eq!(pts.len(), us.len() * m);
    assert_eq!(faces.len(), 2 * (us.len() - 1) * (m - 1));
    let mut worst = 0.0f64;
    for i in 0..us.len() - 1 {
        for j in 0..m - 1 {
            let p = |a: usize, b: usize| pts[a * m + b];
            let (p00, p10, p01, p11) = (p(i, j), p(i + 1, j), p(i, j + 1), p(i + 1, j + 1));
            for a in 0..=6 {
                for b in 0..=6 {
                    let (s_, t) = (a as f64 / 6.0, b as f64 / 6.0);
                    // Triangle (00,10,11) for s >= t, (00,11,01) otherwise.
                    let tri: DVec3 = if s_ >= t {
                        p00 + (p10 - p00) * (s_ - t) + (p11 - p00) * t
                    } else {
                        p00 + (p11 - p00) * s_ + (p01 - p00) * (t - s_)
                    };
                    let u = us[i] + s_ * (us[i + 1] - us[i]);
                    let v = vs[j] + t * (vs[j + 1] - vs[j]);
                    worst = worst.max(tri.distance(s.point(u, v)));
                }
            }
        }
    }
    assert!(worst <= tol, "chordal error {worst} > {tol}");
    faces.len()
}

#[test]
fn teapot_patches_within_tolerance() {
    for s in teapot().iter().step_by(3) {
        check(s, 1e-2);
        check(s, 1e-3);
    }
    let mesh = FreeformModel::new(teapot())
        .unwrap()
        .tessellate(1e-2)
        .unwrap();
    assert!(mesh.face_count() > 32 * 2);
    assert!(FreeformModel::new(teapot())
        .unwrap()
        .tessellate(0.0)
        .is_err());
    assert!(FreeformModel::new(teapot())
        .unwrap()
        .tessellate(f64::NAN)
        .is_err());
}

#[test]
fn nurbs_surfaces_within_tolerance() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/nurbs");
    if !dir.is_dir() {
        eprintln!("note: {} absent; skipping", dir.display());
        return;
    }
    for name in [
        "sphere_patch",
        "torus_full",
        "revolved_vase",
        "loft",
        "coons_patch",
        "interp_wave",
    ] {
        let s = load_nurbs_json(dir.join(format!("{name}.json"))).unwrap();
        let (lo, hi) = s.control_bounds();
        let tol = 2e-3 * (hi - lo).max_element();
        check(&s, tol);
    }
}
