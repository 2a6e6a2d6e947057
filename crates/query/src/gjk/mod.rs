//! GJK: distance, closest points and witness barycentrics between convex shapes.
//!
//! Gilbert–Johnson–Keerthi on the Minkowski difference `A − B`, with van den Bergen's robust
//! termination: stop when the lower bound `v·w/|v|` is within `rel_tol` of `|v|`, when a support
//! point repeats, or when `|v|` stops decreasing (rounding); declare contact when `|v|²` is
//! negligible against the simplex or the simplex is a full tetrahedron. The closest point of the
//! simplex comes from Johnson's sub-algorithm ([`simplex`]), whose barycentric weights give the
//! witnesses on both shapes as `(vertex id, weight)` lists.
//!
//! ```
//! use gprox_query::gjk::{gjk_distance, ConvexPoints, Sphere};
//! use glam::DVec3;
//! let tet = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
//! let ball = Sphere { center: DVec3::new(3.0, 0.0, 0.0), radius: 1.0 };
//! let r = gjk_distance(&ConvexPoints(&tet), &ball, 1e-12);
//! assert!((r.distance - 1.0).abs() < 1e-9);
//! assert_eq!(r.witness_a, vec![(1, 1.0)]);
//! ```

mod shapes;
pub(crate) mod simplex;

pub use shapes::{ConvexPoints, Cuboid, Sphere};

use glam::DVec3;
use simplex::{Simplex, Vertex};

/// A convex shape given by its support map.
pub trait SupportMap {
    /// The farthest point of the shape along `dir`, and the id of that vertex/feature.
    fn support(&self, dir: DVec3) -> (DVec3, u32);
}

/// Result of [`gjk_distance`].
#[derive(Clone, Debug, PartialEq)]
pub struct GjkResult {
    /// Distance between the shapes (0 when they intersect).
    pub distance: f64,
    /// Closest point on A.
    pub point_a: DVec3,
    /// Closest point on B.
    pub point_b: DVec3,
    /// Witness on A as (vertex id, barycentric weight), up to 4 entries, weights sum to 1.
    pub witness_a: Vec<(u32, f64)>,
    /// Witness on B as (vertex id, barycentric weight), up to 4 entries, weights sum to 1.
    pub witness_b: Vec<(u32, f64)>,
    /// Whether the shapes intersect (touching counts, up to rounding).
    pub intersecting: bool,
}

/// Iteration cap: polytopes terminate long before; smooth shapes converge linearly.
const MAX_ITERATIONS: usize = 128;
/// `|v|² ≤ CONTACT_TOL · max|y|²` counts as contact.
const CONTACT_TOL: f64 = 1e-26;

/// How a GJK run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Converged to a positive distance.
    Separated,
    /// The origin is in the simplex (up to rounding).
    Intersecting,
}

fn support_vertex<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    dir: DVec3,
) -> Vertex {
    let (pa, ia) = a.support(-dir);
    let (pb, ib) = b.support(dir);
    Vertex {
        w: pa - pb,
        a: pa,
        b: pb,
        ia,
        ib,
    }
}

/// The GJK loop. With `separating_exit`, stops as soon as a separating axis is seen (the
/// returned simplex is then not converged).
pub(crate) fn gjk_run<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    rel_tol: f64,
    separating_exit: bool,
) -> (Simplex, Outcome) {
    let exit = separating_exit.then_some(0.0);
    gjk_run_from(a, b, rel_tol, exit, DVec3::X, MAX_ITERATIONS)
}

/// [`gjk_run`] with the first search direction `first` (a point of `A − B`'s direction from
/// the origin, e.g. between the shapes' centres) and at most `iterations` support steps; when
/// they run out the outcome is `Separated` unless the simplex already holds the origin. With
/// `exit = Some(gap)` it stops at the first axis that separates the shapes by more than `gap`.
pub(crate) fn gjk_run_from<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    rel_tol: f64,
    exit: Option<f64>,
    first: DVec3,
    iterations: usize,
) -> (Simplex, Outcome) {
    let rel_tol = if rel_tol.is_finite() {
        rel_tol.max(1e-15)
    } else {
        1e-12
    };
    let mut s = Simplex::default();
    let first = if first.length_squared() > 0.0 && first.is_finite() {
        first
    } else {
        DVec3::X
    };
    s.add_and_reduce(support_vertex(a, b, first));
    for _ in 0..iterations {
        let v = s.point();
        let vv = v.length_squared();
        if s.verts.len() == 4 || vv <= CONTACT_TOL * s.max_norm2() {
            return (s, Outcome::Intersecting);
        }
        let w = support_vertex(a, b, v);
        let vw = v.dot(w.w);
        if exit.is_some_and(|gap| vw > gap * vv.sqrt()) {
            return (s, Outcome::Separated);
        }
        if vv - vw <= rel_tol * vv || s.contains(w.w) {
            return (s, Outcome::Separated);
        }
        let previous = s.clone();
        s.add_and_reduce(w);
        if s.point().length_squared() >= vv {
            // No progress: rounding. Keep the better simplex.
            return (previous, Outcome::Separated);
        }
    }
    let out = if s.point().length_squared() <= CONTACT_TOL * s.max_norm2() {
        Outcome::Intersecting
    } else {
        Outcome::Separated
    };
    (s, out)
}

fn witnesses(s: &Simplex, side_b: bool) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = Vec::with_capacity(4);
    for (v, &l) in s.verts.iter().zip(&s.weights) {
        let id = if side_b { v.ib } else { v.ia };
        match out.iter_mut().find(|(i, _)| *i == id) {
            Some(e) => e.1 += l,
            None => out.push((id, l)),
        }
    }
    out
}

/// Distance, closest points and witnesses of two convex shapes; `rel_tol` bounds the relative
/// error of the distance (1e-12 is a good default; polytopes usually converge exactly).
pub fn gjk_distance<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    rel_tol: f64,
) -> GjkResult {
    let (s, outcome) = gjk_run(a, b, rel_tol, false);
    let point_a = s.point_a();
    let point_b = s.point_b();
    let intersecting = outcome == Outcome::Intersecting;
    GjkResult {
        distance: if intersecting {
            0.0
        } else {
            point_a.distance(point_b)
        },
        point_a,
        point_b,
        witness_a: witnesses(&s, false),
        witness_b: witnesses(&s, true),
        intersecting,
    }
}

/// Whether two convex shapes intersect (touching counts, up to rounding); stops at the first
/// separating axis.
pub fn gjk_intersect<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(a: &A, b: &B) -> bool {
    gjk_run(a, b, 1e-12, true).1 == Outcome::Intersecting
}
