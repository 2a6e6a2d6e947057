//! The built-in folding trimmed sheet of the geometry-image self-collision (Greß et al. 2006,
//! Fig. 6b): a trimmed bicubic sheet whose right half folds back over its left half; in the
//! later frames the folded flap passes through the sheet. Generated in memory with its
//! per-frame truth from a certified rule on the control net ([`fold_self_contact`]).

use glam::{DVec2, DVec3};

use super::builtin_trimmed::{blob_hole, domain_loop, knots, spline, translation};
use super::{
    Motion, QueryKind, QueryTargets, Scene, SceneObject, SceneQuery, SceneSurfaces,
    IMAGE_EPSILON_REL,
};
use crate::freeform::TrimmedFace;

/// Frames of the folding-sheet scene.
pub const FOLD_FRAMES: usize = 24;
/// Arc length of the sheet's profile along u (before the fold the sheet is `FOLD_LENGTH` long).
pub const FOLD_LENGTH: f64 = 1.6;
/// Width of the sheet: y = `FOLD_WIDTH` v exactly.
pub const FOLD_WIDTH: f64 = 0.2;
/// Arc length where the bend starts (the base `0 ≤ s ≤ FOLD_AT` stays on z = 0).
const FOLD_AT: f64 = 0.8;
/// Radius of the bend.
const FOLD_RADIUS: f64 = 0.06;
/// Control points along u (the profile) and along v.
const FOLD_NET: [usize; 2] = [40, 4];
/// The hole of the trim stays above this v: the rows below are material at every u.
const MATERIAL_ROWS: f64 = 0.3;
/// How far inside the flat base's x range a crossing must lie (larger than a texel at the
/// scene's ε; the base image then has quads on both sides of it).
const BASE_INSET: f64 = 0.05;

/// The fold angle of frame `f` in radians: 0°–170° over frames 0–13 (flat, then the flap rises
/// over the base; no contact), 200°–212° over frames 14–23 (the flap passes through the base).
pub fn fold_angle(f: usize) -> f64 {
    let deg = if f < 14 {
        170.0 * f as f64 / 13.0
    } else {
        200.0 + 12.0 * (f - 14) as f64 / 9.0
    };
    deg.to_radians()
}

/// The profile (x, z) at arc length `s` folded by `phi`: flat, a circular bend of
/// [`FOLD_RADIUS`], then a straight flap at angle `phi`.
fn profile(s: f64, phi: f64) -> DVec2 {
    let r = FOLD_RADIUS;
    if s <= FOLD_AT {
        return DVec2::new(s, 0.0);
    }
    let theta = ((s - FOLD_AT) / r).min(phi);
    let bend = DVec2::new(FOLD_AT + r * theta.sin(), r - r * theta.cos());
    let rest = s - FOLD_AT - r * phi;
    if rest <= 0.0 {
        return bend;
    }
    bend + rest * DVec2::new(phi.cos(), phi.sin())
}

/// The sheet folded by `phi` (40 × 4 control points; an extrusion along y of a cubic profile)
/// with a spline-shaped hole in its base.
pub fn fold_face(phi: f64) -> TrimmedFace {
    let s = spline(FOLD_NET[0], FOLD_NET[1], |u, v| {
        let p = profile(FOLD_LENGTH * u, phi);
        DVec3::new(p.x, FOLD_WIDTH * v, p.y)
    });
    let hole = blob_hole(DVec2::new(0.25, 0.7), 0.06, 0.3);
    match TrimmedFace::new(s, vec![domain_loop(), hole]) {
        Ok(f) => f,
        Err(e) => unreachable!("valid sheet: {e}"),
    }
}

/// Whether all vectors lie in one open half-plane (their directions span less than π).
fn in_open_half_plane(d: &[DVec2]) -> bool {
    let a = d[0];
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for x in d {
        let ang = a.perp_dot(*x).atan2(a.dot(*x));
        lo = lo.min(ang);
        hi = hi.max(ang);
    }
    if hi - lo >= std::f64::consts::PI {
        return false;
    }
    let dir = DVec2::from_angle((lo + hi) / 2.0).rotate(a);
    d.iter().all(|x| x.dot(dir) > 0.0)
}

/// A lower bound of the distance between the convex hulls of two point sets (the largest gap
/// of their projections over 180 directions).
fn hull_gap(a: &[DVec2], b: &[DVec2]) -> f64 {
    (0..180)
        .map(|k| {
            let d = DVec2::from_angle(k as f64 * std::f64::consts::PI / 180.0);
            let (amin, amax) = a
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p.dot(d)), h.max(p.dot(d)))
                });
            let (bmin, bmax) = b
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p.dot(d)), h.max(p.dot(d)))
                });
            (bmin - amax).max(amin - bmax)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The profile net of an extruded sheet: control point `i`'s (x, z), if the surface is a
/// polynomial cubic in u on a uniform clamped knot vector, every row of the net has the same x
/// and z, and each row's y is the same along u and increases with v.
fn extruded_profile(face: &TrimmedFace) -> Option<Vec<DVec2>> {
    let s = face.surface();
    let [n, m] = s.count();
    if s.is_rational() || n < 4 || s.degree()[0] != 3 || s.knots()[0] != knots(n).as_slice() {
        return None;
    }
    let q: Vec<DVec2> = (0..n)
        .map(|i| {
            let p = s.control_point(i, 0);
            DVec2::new(p.x, p.z)
        })
        .collect();
    for j in 0..m {
        let y = s.control_point(0, j).y;
        if j > 0 && y <= s.control_point(0, j - 1).y {
            return None;
        }
        for (i, qi) in q.iter().enumerate() {
            let p = s.control_point(i, j);
            if p.y != y || p.x != qi.x || p.z != qi.y {
                return None;
            }
        }
    }
    Some(q)
}

/// Whether the sheet intersects itself (`Some(true)`), any two of its non-neighbouring parts
/// stay farther than `margin` apart (`Some(false)`), or neither is certain. The sheet must be
/// an extrusion along y of a cubic profile Q (so it intersects itself exactly where the profile
/// does, within the rows both points are material in), with a uniform clamped knot vector of
/// `S` spans (span k over control points k..k+3, lying in their hull).
///
/// * Contact: the first spans have all control points on z = 0 (a flat base over
///   [x0, x1]); a later span's end points (curve points) lie above `margin` and below
///   `-margin`, and the hull of it and its neighbours lies inside the base's x range
///   (by [`BASE_INSET`]); or the same over two spans. The flap then crosses the base along a line in the material rows
///   v < [`MATERIAL_ROWS`], which the trim's hole stays above.
/// * Apart: for every pair of spans i ≤ j, either the control differences of spans i−1..j+1
///   lie in an open half-plane (that part of the profile, and every chord polyline of it, is
///   monotone in one direction and cannot meet itself) or the hulls of spans i and j are more
///   than `margin` apart.
pub fn fold_self_contact(face: &TrimmedFace, margin: f64) -> Option<bool> {
    let q = extruded_profile(face)?;
    let spans = q.len() - 3;
    let hull = |k: usize| &q[k..k + 4];
    let poly = face.polygon();
    let hole_low = poly.loops[1..]
        .iter()
        .flatten()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let rows_clear = hole_low - poly.tolerance > MATERIAL_ROWS;
    let flat = (0..spans)
        .take_while(|&k| hull(k).iter().all(|p| p.y == 0.0))
        .count();
    let base_monotone = q[..(flat + 3).min(q.len())]
        .windows(2)
        .all(|w| w[1].x > w[0].x);
    if rows_clear && flat > 0 && base_monotone {
        let at = |u: f64| face.point(u, 0.5 * MATERIAL_ROWS);
        let (x0, x1) = (at(0.0).x, at(flat as f64 / spans as f64).x);
        // The flap goes from above `margin` to below `-margin` over spans k..k+w.
        let crosses = (1..=2).any(|w| {
            (flat + 2..spans.saturating_sub(w)).any(|k| {
                let (za, zb) = (
                    at(k as f64 / spans as f64).z,
                    at((k + w) as f64 / spans as f64).z,
                );
                let near = &q[k - 1..k + w + 4];
                let inside = near
                    .iter()
                    .all(|p| p.x > x0 + BASE_INSET && p.x < x1 - BASE_INSET);
                inside && ((za > margin && zb < -margin) || (za < -margin && zb > margin))
            })
        });
        if crosses {
            return Some(true);
        }
    }
    let diffs: Vec<DVec2> = q.windows(2).map(|w| w[1] - w[0]).collect();
    for i in 0..spans {
        for j in i..spans {
            let (lo, hi) = (i.saturating_sub(1), (j + 1).min(spans - 1));
            if in_open_half_plane(&diffs[lo..hi + 3]) {
                continue;
            }
            if hull_gap(hull(i), hull(j)) > margin {
                continue;
            }
            return None;
        }
    }
    Some(false)
}

/// The folding-sheet scene (see [`Scene::builtin_folding_sheet`]).
pub(super) fn folding_sheet() -> Scene {
    let frames = FOLD_FRAMES;
    let sheets: Vec<TrimmedFace> = (0..frames).map(|f| fold_face(fold_angle(f))).collect();
    let control: Vec<DVec3> = sheets
        .iter()
        .flat_map(|fl| {
            let s = fl.surface();
            let [n, m] = s.count();
            (0..n)
                .flat_map(move |i| (0..m).map(move |j| (i, j)))
                .map(|(i, j)| s.control_point(i, j))
                .collect::<Vec<_>>()
        })
        .collect();
    let surf = match SceneSurfaces::deforming(
        std::path::Path::new("builtin-folding-sheet"),
        vec![sheets[0].clone()],
        frames,
        control,
    ) {
        Ok(s) => s,
        Err(e) => unreachable!("consistent sheet: {e}"),
    };
    let mesh = match surf.display_mesh("sheet".as_ref()) {
        Ok(m) => m,
        Err(e) => unreachable!("display mesh: {e}"),
    };
    let objects = vec![SceneObject {
        name: "sheet".into(),
        mesh: 0,
        motion: Motion::Rigid,
    }];
    let queries = vec![SceneQuery {
        kind: QueryKind::ImageSelfCollide,
        targets: QueryTargets::Objects(vec![0]),
    }];
    let scene = Scene::from_parts(
        "builtin-folding-sheet",
        "Built-in (Greß et al. Fig. 6b): a trimmed NURBS sheet (40 x 4 bicubic net, a \
         spline-shaped hole) folding over itself, 0 to 170 degrees in frames 0-13 (no contact), \
         200 to 212 degrees in frames 14-23 (the flap passes through the sheet); 24 frames, \
         image-self-collide at eps = 1e-3",
        frames,
        vec![mesh],
        objects,
        vec![translation(DVec3::ZERO); frames],
        vec![Vec::new()],
        queries,
    )
    .and_then(|s| s.with_surfaces(0, surf));
    let mut scene = match scene {
        Ok(s) => s,
        Err(e) => unreachable!("built-in scene is consistent: {e}"),
    };
    let margin = 3.0 * IMAGE_EPSILON_REL * scene.surface_size();
    let truth: Option<Vec<bool>> = sheets
        .iter()
        .map(|s| fold_self_contact(s, margin))
        .collect();
    if let Some(collide) = truth {
        scene
            .truth
            .set_collide("image-self-collide", "sheet", collide);
    }
    scene
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame of the folding sheet is decided by the certified rule; frames 0–13 are
    /// apart and 14–23 in contact, as the fold's closed form says (the flap's end is above the
    /// base up to 170° and below it from 200°).
    #[test]
    fn fold_scene_truth_is_decided_and_varied() {
        let s = Scene::builtin_folding_sheet();
        let t = s
            .truth()
            .get("image-self-collide", "sheet")
            .expect("truth decided");
        let c = t.collide.unwrap();
        assert_eq!(c.len(), FOLD_FRAMES);
        for (f, &hit) in c.iter().enumerate() {
            let phi = fold_angle(f);
            let end = profile(FOLD_LENGTH, phi);
            assert_eq!(hit, end.y < 0.0, "frame {f}: tip {end}");
        }
        assert!(c.iter().any(|&x| x) && c.iter().any(|&x| !x));
        // The faces the scene hands out are the ones the truth was decided on.
        let f = s.surfaces(0).unwrap().faces_at(20).unwrap().remove(0);
        assert_eq!(fold_self_contact(&f, 3e-3), Some(true));
    }

    /// The rule on plain cases: a flat sheet is apart, a sheet whose net is not an extrusion
    /// is undecided, and a fold whose flap dives through the base is in contact.
    #[test]
    fn contact_rule_cases() {
        let flat = fold_face(0.0);
        assert_eq!(fold_self_contact(&flat, 1e-3), Some(false));
        assert_eq!(
            fold_self_contact(&fold_face(210f64.to_radians()), 1e-3),
            Some(true)
        );
        let twisted = spline(FOLD_NET[0], FOLD_NET[1], |u, v| {
            DVec3::new(u, v, 0.1 * u * v)
        });
        let face = TrimmedFace::untrimmed(twisted).unwrap();
        assert_eq!(fold_self_contact(&face, 1e-3), None);
    }

    /// Half-plane and hull-gap helpers against closed forms.
    #[test]
    fn helpers_closed_form() {
        let e = |a: f64| DVec2::from_angle(a.to_radians());
        assert!(in_open_half_plane(&[e(0.0), e(80.0), e(170.0)]));
        assert!(!in_open_half_plane(&[e(0.0), e(90.0), e(181.0)]));
        assert!(!in_open_half_plane(&[e(10.0), e(-10.0), e(180.0)]));
        let a = [DVec2::ZERO, DVec2::X];
        let b = [DVec2::new(0.0, 2.0), DVec2::new(1.0, 3.0)];
        assert!((hull_gap(&a, &b) - 2.0).abs() < 1e-12);
        assert!(hull_gap(&a, &[DVec2::new(0.5, 0.0)]) <= 0.0);
    }
}
