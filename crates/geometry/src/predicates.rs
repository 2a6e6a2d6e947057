//! Exact orientation predicates on f64 points (Shewchuk's adaptive arithmetic, via `robust`).
//!
//! The returned values have the **exact sign** of the determinant they stand for; the magnitude is
//! only an approximation. Exactness holds for every finite input whose intermediate products
//! neither overflow nor underflow (coordinates between about `1e-140` and `1e140` in magnitude, or
//! exactly zero) — all meshes gprox handles (f32 positions under an f32 pose, promoted to f64).
//!
//! # Sign conventions (Shewchuk's, unchanged)
//! * [`orient2d`]`(a, b, c)` = `det[a - c; b - c]` `> 0` when `a, b, c` turn counter-clockwise
//!   (`c` left of the directed line `a → b`), `< 0` clockwise, `0` collinear.
//! * [`orient3d`]`(a, b, c, d)` = `det[a - d; b - d; c - d]` `> 0` when `d` lies **below** the plane
//!   of `a, b, c`, "below" meaning opposite to the right-hand normal `(b - a) × (c - a)` (so that
//!   `a, b, c` look counter-clockwise seen from above); `< 0` above; `0` coplanar.
//!   Equivalently `orient3d(a, b, c, d) = -((b - a) × (c - a)) · (d - a)` in exact arithmetic.
//!
//! The CUDA kernels use the same conventions (with a floating filter in front).

use glam::{DVec2, DVec3};
use robust::{Coord, Coord3D};

/// Exact sign of `det[a - c; b - c]`: positive when `a, b, c` are counter-clockwise.
///
/// ```
/// use gprox_geometry::{glam::DVec2, predicates::orient2d};
/// assert!(orient2d(DVec2::ZERO, DVec2::X, DVec2::Y) > 0.0);
/// assert_eq!(orient2d(DVec2::ZERO, DVec2::X, DVec2::new(2.0, 0.0)), 0.0);
/// ```
#[inline]
pub fn orient2d(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    robust::orient2d(
        Coord { x: a.x, y: a.y },
        Coord { x: b.x, y: b.y },
        Coord { x: c.x, y: c.y },
    )
}

/// Exact sign of `det[a - d; b - d; c - d]`: positive when `d` is below the plane of `a, b, c`
/// (opposite to the normal `(b - a) × (c - a)`), negative above, zero when coplanar.
///
/// ```
/// use gprox_geometry::{glam::DVec3, predicates::orient3d};
/// // (0,0,0), x, y: counter-clockwise seen from +z, so a point at -z is "below".
/// assert!(orient3d(DVec3::ZERO, DVec3::X, DVec3::Y, -DVec3::Z) > 0.0);
/// assert!(orient3d(DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z) < 0.0);
/// assert_eq!(orient3d(DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::new(3.0, 5.0, 0.0)), 0.0);
/// ```
#[inline]
pub fn orient3d(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> f64 {
    // Shewchuk's first stage, inlined (the same evaluation and static bound as `robust`'s).
    let (ad, bd, cd) = (a - d, b - d, c - d);
    let (bdxcdy, cdxbdy) = (bd.x * cd.y, cd.x * bd.y);
    let (cdxady, adxcdy) = (cd.x * ad.y, ad.x * cd.y);
    let (adxbdy, bdxady) = (ad.x * bd.y, bd.x * ad.y);
    let det = ad.z * (bdxcdy - cdxbdy) + bd.z * (cdxady - adxcdy) + cd.z * (adxbdy - bdxady);
    let permanent = (bdxcdy.abs() + cdxbdy.abs()) * ad.z.abs()
        + (cdxady.abs() + adxcdy.abs()) * bd.z.abs()
        + (adxbdy.abs() + bdxady.abs()) * cd.z.abs();
    if det.abs() > O3D_ERRBOUND_A * permanent {
        return det;
    }
    let p = |v: DVec3| Coord3D {
        x: v.x,
        y: v.y,
        z: v.z,
    };
    robust::orient3d(p(a), p(b), p(c), p(d))
}

/// Shewchuk's static error bound factor for the first stage of `orient3d`, `(7 + 56ε) ε` with
/// `ε = 2⁻⁵³`: a floating determinant larger than this times its permanent has the exact sign.
pub const O3D_ERRBOUND_A: f64 = (7.0 + 56.0 * EPS) * EPS;
const EPS: f64 = f64::EPSILON / 2.0;

/// The sign of `x` as `-1`, `0` or `1` (`0` for `±0.0`).
#[inline]
pub fn sign(x: f64) -> i32 {
    (x > 0.0) as i32 - (x < 0.0) as i32
}

/// Drops coordinate `axis` (0 = x, 1 = y, 2 = z) of `p`, keeping the other two in cyclic order
/// (`axis 0 → (y, z)`, `1 → (z, x)`, `2 → (x, y)`), so that
/// `orient2d` of projected points equals the `axis` component of the 3-D normal
/// `(b - a) × (c - a)` in sign.
#[inline]
pub fn project(p: DVec3, axis: usize) -> DVec2 {
    match axis {
        0 => DVec2::new(p.y, p.z),
        1 => DVec2::new(p.z, p.x),
        _ => DVec2::new(p.x, p.y),
    }
}

/// Exact sign of component `axis` of the normal `(b - a) × (c - a)`, as an `orient2d` value on
/// the projection that drops `axis` (see [`project`]).
#[inline]
pub fn normal_component(a: DVec3, b: DVec3, c: DVec3, axis: usize) -> f64 {
    orient2d(project(a, axis), project(b, axis), project(c, axis))
}

/// The axis whose normal component `(b - a) × (c - a)` is largest in magnitude and not zero
/// (exactly), or `None` when `a, b, c` are collinear (exactly; includes repeated points).
///
/// Dropping that axis projects the plane of `a, b, c` one-to-one onto a coordinate plane.
#[inline]
pub fn dominant_axis(a: DVec3, b: DVec3, c: DVec3) -> Option<usize> {
    let n = [0, 1, 2].map(|k| normal_component(a, b, c, k).abs());
    let mut best = None;
    let mut best_val = 0.0;
    for (k, &v) in n.iter().enumerate() {
        if v > best_val {
            best_val = v;
            best = Some(k);
        }
    }
    best
}

/// Whether `a, b, c` are collinear (exactly; repeated points count as collinear).
#[inline]
pub fn collinear3(a: DVec3, b: DVec3, c: DVec3) -> bool {
    dominant_axis(a, b, c).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orient3d_matches_cross_product_sign() {
        let (a, b, c) = (DVec3::ZERO, DVec3::X, DVec3::Y);
        for d in [DVec3::Z, -DVec3::Z, DVec3::new(0.3, 0.2, 1e-300)] {
            let n = (b - a).cross(c - a);
            assert_eq!(sign(orient3d(a, b, c, d)), -sign(n.dot(d - a)));
        }
    }

    #[test]
    fn orient3d_exact_near_degenerate() {
        // d is 1 ulp off the plane x + y + z = 1 through three exactly representable points.
        let a = DVec3::new(1.0, 0.0, 0.0);
        let b = DVec3::new(0.0, 1.0, 0.0);
        let c = DVec3::new(0.0, 0.0, 1.0);
        let on = DVec3::new(0.5, 0.25, 0.25);
        assert_eq!(orient3d(a, b, c, on), 0.0);
        let up = DVec3::new(0.5, 0.25, f64::from_bits(0.25f64.to_bits() + 1));
        assert!(orient3d(a, b, c, up) < 0.0);
    }

    #[test]
    fn projection_keeps_normal_sign() {
        let a = DVec3::new(0.1, -2.0, 3.0);
        let b = DVec3::new(1.5, 0.5, -1.0);
        let c = DVec3::new(-0.7, 2.0, 0.25);
        let n = (b - a).cross(c - a);
        for k in 0..3 {
            assert_eq!(sign(normal_component(a, b, c, k)), sign(n[k]));
        }
        assert!(collinear3(a, a, c));
        assert!(collinear3(DVec3::ZERO, DVec3::ONE, DVec3::splat(2.0)));
        assert!(!collinear3(a, b, c));
    }
}
