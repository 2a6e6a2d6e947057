//! The built-in trimmed NURBS scenes of the geometry-image queries (Greß et al. 2006, Fig. 6):
//! a waving flag with a spline-shaped hole and rigid balls passing, some through the hole; a
//! folding sheet that folds through itself. Generated in memory with their per-frame truth.

use glam::{DVec2, DVec3, Mat3};

use super::{
    Motion, QueryKind, QueryTargets, Scene, SceneObject, SceneQuery, SceneSurfaces,
    IMAGE_EPSILON_REL,
};
use crate::freeform::trimmed::{LoopRole, TrimCurve, TrimLoop};
use crate::freeform::{NurbsSurface, TrimmedFace};

/// Frames of the flag scene.
pub const FLAG_FRAMES: usize = 24;
/// Height of the flag (its width is 1; x = u and y = `FLAG_HEIGHT` v exactly).
pub const FLAG_HEIGHT: f64 = 0.6;
/// Radius of the balls (their control points lie on this sphere).
pub const BALL_RADIUS: f64 = 0.03;

/// A uniform clamped knot vector of degree 3 with `n` control points.
pub(super) fn knots(n: usize) -> Vec<f64> {
    let spans = n - 3;
    let mut k = vec![0.0; 4];
    k.extend((1..spans).map(|i| i as f64 / spans as f64));
    k.extend([1.0; 4]);
    k
}

/// Greville abscissae of [`knots`] (a cubic B-spline with control values f(g_i) reproduces
/// linear f exactly).
pub(super) fn greville(n: usize) -> Vec<f64> {
    let k = knots(n);
    (0..n)
        .map(|i| (k[i + 1] + k[i + 2] + k[i + 3]) / 3.0)
        .collect()
}

/// A bicubic B-spline surface with an `n × m` net from `f(g_i, g_j)`.
pub(super) fn spline(n: usize, m: usize, f: impl Fn(f64, f64) -> DVec3) -> NurbsSurface {
    let (gu, gv) = (greville(n), greville(m));
    let pts = gu
        .iter()
        .flat_map(|&u| gv.iter().map(move |&v| (u, v)))
        .map(|(u, v)| f(u, v))
        .collect();
    match NurbsSurface::new([3, 3], [knots(n), knots(m)], [n, m], pts, None) {
        Ok(s) => s,
        Err(e) => unreachable!("valid built-in net: {e}"),
    }
}

/// The domain boundary `[0,1]²` as a counter-clockwise outer loop of four lines.
pub(super) fn domain_loop() -> TrimLoop {
    let c = [
        DVec2::new(0.0, 0.0),
        DVec2::new(1.0, 0.0),
        DVec2::new(1.0, 1.0),
        DVec2::new(0.0, 1.0),
    ];
    let curves = (0..4).map(|k| line(c[k], c[(k + 1) % 4])).collect();
    TrimLoop {
        role: LoopRole::Outer,
        curves,
    }
}

fn line(a: DVec2, b: DVec2) -> TrimCurve {
    match TrimCurve::new(
        1,
        vec![0.0, 0.0, 1.0, 1.0],
        &[a, b],
        None,
        [0.0, 1.0],
        false,
    ) {
        Ok(c) => c,
        Err(e) => unreachable!("valid line: {e}"),
    }
}

/// A closed cubic B-spline hole (clockwise) around `centre` in (u, v): control points at
/// `centre + r(θ) (cos θ, sin θ / aspect)` with `r(θ) = radius (1 + 0.15 sin 3θ)`, the first
/// repeated at the end.
pub(super) fn blob_hole(centre: DVec2, radius: f64, aspect: f64) -> TrimLoop {
    let n = 10;
    let mut pts: Vec<DVec2> = (0..n)
        .map(|k| {
            let t = -std::f64::consts::TAU * k as f64 / n as f64;
            let r = radius * (1.0 + 0.15 * (3.0 * t).sin());
            centre + DVec2::new(r * t.cos(), r * t.sin() / aspect)
        })
        .collect();
    pts.push(pts[0]);
    let curve = match TrimCurve::new(3, knots(pts.len()), &pts, None, [0.0, 1.0], false) {
        Ok(c) => c,
        Err(e) => unreachable!("valid hole curve: {e}"),
    };
    TrimLoop {
        role: LoopRole::Hole,
        curves: vec![curve],
    }
}

/// The flag's height at `(x, y)` and time `t ∈ [0, 1]`: a travelling wave growing from the
/// pole (x = 0).
fn wave(x: f64, y: f64, t: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    x * (0.06 * (tau * (1.2 * x - t)).sin() + 0.015 * (tau * (y / FLAG_HEIGHT + 0.5 * t)).sin())
}

/// The flag at time `t` (36 × 20 control points) with its spline-shaped hole.
pub fn flag_face(t: f64) -> TrimmedFace {
    let s = spline(36, 20, |u, v| {
        DVec3::new(u, FLAG_HEIGHT * v, wave(u, FLAG_HEIGHT * v, t))
    });
    let hole = blob_hole(DVec2::new(0.55, 0.5), 0.1, FLAG_HEIGHT);
    match TrimmedFace::new(s, vec![domain_loop(), hole]) {
        Ok(f) => f,
        Err(e) => unreachable!("valid flag: {e}"),
    }
}

/// A closed ball of six bicubic B-spline faces (a cube projected onto the sphere of `radius`,
/// 7 × 7 control points each), centred at the origin; its surface lies between
/// [`ball_inner_radius`] and `radius` from the centre.
pub fn ball_faces(radius: f64) -> Vec<TrimmedFace> {
    let mut faces = Vec::with_capacity(6);
    for axis in 0..3 {
        for sign in [-1.0, 1.0] {
            let s = spline(7, 7, |a, b| {
                let mut p = [0.0; 3];
                p[axis] = sign;
                p[(axis + 1) % 3] = (2.0 * a - 1.0) * sign;
                p[(axis + 2) % 3] = 2.0 * b - 1.0;
                DVec3::from_array(p).normalize() * radius
            });
            match TrimmedFace::untrimmed(s) {
                Ok(f) => faces.push(f),
                Err(e) => unreachable!("valid ball face: {e}"),
            }
        }
    }
    faces
}

/// A certified lower bound of the distance from the centre to the surface of
/// [`ball_faces`]: each Bézier piece lies in its control hull, on the far side of the plane
/// through its nearest control point normal to the mean direction of its points.
pub fn ball_inner_radius(faces: &[TrimmedFace]) -> f64 {
    let mut r = f64::INFINITY;
    for f in faces {
        for (_, pts) in f.surface().bezier_patches() {
            let mean = pts.iter().map(|h| h.truncate() / h.w).sum::<DVec3>();
            let n = mean.normalize();
            for h in &pts {
                r = r.min((h.truncate() / h.w).dot(n));
            }
        }
    }
    r
}

/// Ball `k`'s centre at frame `f`: ball 0 falls straight through the hole; balls 1 and 2 pass
/// through the cloth (1 downwards in frames 3–11, 2 upwards in frames 12–20) at offsets from
/// the flag chosen away from grazing contact.
fn ball_centre(k: usize, f: usize, flag: &TrimmedFace) -> DVec3 {
    const OFFSETS: [f64; 9] = [0.2, 0.12, 0.07, 0.025, 0.0, -0.025, -0.07, -0.12, -0.2];
    let s = f as f64 / (FLAG_FRAMES - 1) as f64;
    let (x, y) = [(0.55, 0.3), (0.25, 0.18), (0.8, 0.42)][k];
    let z = match k {
        0 => 0.2 - 0.4 * s,
        _ => {
            let start = if k == 1 { 3 } else { 12 };
            let at = f as isize - start as isize;
            let d = if at < 0 {
                0.25
            } else if at as usize >= OFFSETS.len() {
                -0.25
            } else {
                OFFSETS[at as usize]
            };
            let d = if k == 2 { -d } else { d };
            flag.point(x, y / FLAG_HEIGHT).z + d
        }
    };
    DVec3::new(x, y, z)
}

/// Whether a ball of outer radius `r_out` and inner radius `r_in` centred at `c` meets the flag
/// (`Some(true)`), stays farther than `margin` from it (`Some(false)`), or neither is certain.
///
/// * The flag is the graph of its height over the plane (x = u, y = `FLAG_HEIGHT` v): if
///   `(c.x, c.y)` lies in the material and the flag point above it is inside the inner sphere,
///   the connected sheet crosses the ball's surface.
/// * A centre inside the hole at least `r_out + margin` (in the plane) from the hole's curve
///   keeps the ball that far from the flag.
/// * Points of the flag outside the cylinder of radius `R = r_out + margin` about the centre
///   are farther than `margin`; inside it the flag lies between the lowest and highest control
///   point of the Bézier pieces meeting the cylinder's footprint.
pub fn flag_ball_contact(
    flag: &TrimmedFace,
    c: DVec3,
    r_in: f64,
    r_out: f64,
    margin: f64,
) -> Option<bool> {
    let (u, v) = (c.x, c.y / FLAG_HEIGHT);
    let to_xy = |p: DVec2| DVec2::new(p.x, p.y * FLAG_HEIGHT);
    let plane = DVec2::new(c.x, c.y);
    let inside = (0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v);
    if inside && flag.contains(u, v) && (c.z - flag.point(u, v).z).abs() < r_in {
        return Some(true);
    }
    if inside && !flag.contains(u, v) {
        let poly = flag.polygon();
        let clear = poly
            .edges()
            .map(|(a, b, _, _)| {
                let (a, b) = (to_xy(a), to_xy(b));
                let t =
                    ((plane - a).dot(b - a) / (b - a).length_squared().max(1e-300)).clamp(0.0, 1.0);
                plane.distance(a + (b - a) * t)
            })
            .fold(f64::INFINITY, f64::min);
        // The polygon is within its tolerance of the curves (x and y scale by at most 1).
        if clear - poly.tolerance > r_out + margin {
            return Some(false);
        }
    }
    let big = r_out + margin;
    let (u0, u1) = (c.x - big, c.x + big);
    let (v0, v1) = ((c.y - big) / FLAG_HEIGHT, (c.y + big) / FLAG_HEIGHT);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (rect, pts) in flag.surface().bezier_patches() {
        if rect.u1 < u0 || rect.u0 > u1 || rect.v1 < v0 || rect.v0 > v1 {
            continue;
        }
        for h in &pts {
            lo = lo.min(h.z / h.w);
            hi = hi.max(h.z / h.w);
        }
    }
    if c.z - r_out - hi >= margin || lo - (c.z + r_out) >= margin {
        return Some(false);
    }
    None
}

/// Row-major `[R | t]` of a translation.
pub(super) fn translation(t: DVec3) -> [f32; 12] {
    let t = t.as_vec3();
    let r = Mat3::IDENTITY;
    let (x, y, z) = (r.row(0), r.row(1), r.row(2));
    [x.x, x.y, x.z, t.x, y.x, y.y, y.z, t.y, z.x, z.y, z.z, t.z]
}

/// The flag-and-balls scene (see [`Scene::builtin_flag_balls`]).
pub(super) fn flag_balls() -> Scene {
    let frames = FLAG_FRAMES;
    let flags: Vec<TrimmedFace> = (0..frames)
        .map(|f| flag_face(f as f64 / frames as f64))
        .collect();
    let balls = ball_faces(BALL_RADIUS);
    let r_in = ball_inner_radius(&balls);
    let eps = IMAGE_EPSILON_REL; // the flag's size is 1
    let mut transforms = Vec::with_capacity(frames * 4);
    let mut collide = Vec::with_capacity(frames);
    let mut decided = true;
    for (f, flag) in flags.iter().enumerate() {
        transforms.push(translation(DVec3::ZERO));
        let mut any = false;
        for k in 0..3 {
            let c = ball_centre(k, f, flag);
            // The f32 transform is what the queries see.
            let c = c.as_vec3().as_dvec3();
            transforms.push(translation(c));
            match flag_ball_contact(flag, c, r_in, BALL_RADIUS, 3.0 * eps) {
                Some(hit) => any |= hit,
                None => decided = false,
            }
        }
        collide.push(any);
    }
    let control: Vec<DVec3> = flags
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
    let flag_s = match SceneSurfaces::deforming(
        std::path::Path::new("builtin-flag-balls"),
        vec![flags[0].clone()],
        frames,
        control,
    ) {
        Ok(s) => s,
        Err(e) => unreachable!("consistent flag: {e}"),
    };
    let ball_s = SceneSurfaces::rigid(balls);
    let meshes = match (
        flag_s.display_mesh("flag".as_ref()),
        ball_s.display_mesh("ball".as_ref()),
    ) {
        (Ok(a), Ok(b)) => vec![a, b],
        (Err(e), _) | (_, Err(e)) => unreachable!("display meshes: {e}"),
    };
    let objects = ["flag", "ball0", "ball1", "ball2"]
        .iter()
        .enumerate()
        .map(|(k, n)| SceneObject {
            name: (*n).into(),
            mesh: usize::from(k > 0),
            motion: Motion::Rigid,
        })
        .collect();
    let queries = vec![SceneQuery {
        kind: QueryKind::ImageCollide,
        targets: QueryTargets::AllPairs,
    }];
    let scene = Scene::from_parts(
        "builtin-flag-balls",
        "Built-in (Greß et al. Fig. 6a): a waving trimmed NURBS flag (36 x 20 bicubic net, a \
         spline-shaped hole) and three rigid NURBS balls; ball0 falls through the hole, ball1 and \
         ball2 pass through the cloth; 24 frames, image-collide at eps = 1e-3",
        frames,
        meshes,
        objects,
        transforms,
        vec![Vec::new(); 4],
        queries,
    )
    .and_then(|s| s.with_surfaces(0, flag_s))
    .and_then(|s| (1..4).try_fold(s, |s, k| s.with_surfaces(k, ball_s.clone())));
    let mut scene = match scene {
        Ok(s) => s,
        Err(e) => unreachable!("built-in scene is consistent: {e}"),
    };
    if decided {
        scene.truth.set_collide("image-collide", "all", collide);
    }
    scene
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame of the flag scene is decided by the certified construction, contacts appear
    /// and disappear, the hole ball never touches, and the cloth balls touch in some frames.
    #[test]
    fn flag_scene_truth_is_decided_and_varied() {
        let s = Scene::builtin_flag_balls();
        let t = s
            .truth()
            .get("image-collide", "all")
            .expect("truth decided");
        let c = t.collide.unwrap();
        assert_eq!(c.len(), FLAG_FRAMES);
        assert!(c.iter().any(|&x| x) && c.iter().any(|&x| !x));
        let balls = ball_faces(BALL_RADIUS);
        let r_in = ball_inner_radius(&balls);
        assert!(r_in > 0.85 * BALL_RADIUS && r_in < BALL_RADIUS, "{r_in}");
        let (mut hits1, mut hits2) = (0, 0);
        for f in 0..FLAG_FRAMES {
            let flag = s.surfaces(0).unwrap().faces_at(f).unwrap().remove(0);
            let centre = |o: usize| s.pose64(f, o).rows.map(|r| r[3]);
            let c0 = DVec3::from_array(centre(1));
            let hole = flag_ball_contact(&flag, c0, r_in, BALL_RADIUS, 3e-3);
            assert_eq!(hole, Some(false), "frame {f}: the hole ball");
            hits1 += usize::from(
                flag_ball_contact(&flag, DVec3::from_array(centre(2)), r_in, BALL_RADIUS, 3e-3)
                    == Some(true),
            );
            hits2 += usize::from(
                flag_ball_contact(&flag, DVec3::from_array(centre(3)), r_in, BALL_RADIUS, 3e-3)
                    == Some(true),
            );
        }
        assert_eq!((hits1, hits2), (3, 3));
    }

    /// A point of the flag's surface is inside any ball centred on it, and a ball far above is
    /// reported apart.
    #[test]
    fn contact_rule_closed_form() {
        let flag = flag_face(0.3);
        let p = flag.point(0.2, 0.2);
        assert_eq!(flag_ball_contact(&flag, p, 0.02, 0.03, 1e-3), Some(true));
        let up = p + DVec3::new(0.0, 0.0, 0.5);
        assert_eq!(flag_ball_contact(&flag, up, 0.02, 0.03, 1e-3), Some(false));
    }
}
