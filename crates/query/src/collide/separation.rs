//! Separating planes: a proof that two posed meshes are apart that costs a few support steps on
//! their convex hulls instead of a traversal of their trees.
//!
//! A plane with every vertex of A on one side and every vertex of B beyond the other side by
//! more than the margin proves that no triangle pair touches: triangles are convex hulls of
//! their corners. The search is GJK on the two hulls ([`ConvexHull`]), started from the
//! direction between the hulls' centres and stopped at the first axis that separates them by
//! more than the margin: first on each hull's direction table, then, if that plane does not
//! hold, on supports that climb the hull's edges. The proof is then checked on its own, beyond
//! rounding:
//!
//! * each side's extent along the plane's normal is a certified hull support
//!   ([`ConvexHull::support`]: an upper bound of the dot product over all of the mesh's
//!   vertices);
//! * it is taken in the model frame with the normal mapped by the pose's transpose, which equals
//!   the world dot product of the exact pose; the gap between that and the f64 world corners the
//!   exact triangle tests read ([`gprox_geometry::transform::transform_point`]) is bounded by
//!   `PAD` times the world coordinates' magnitude, on each side.
//!
//! A search that finds no plane — the hulls overlap, or their gap is within rounding — says
//! nothing, and the caller traverses the trees. Any affine pose works (the normal is mapped by
//! the transpose of the linear part).

use glam::DVec3;
use gprox_geometry::hull::ConvexHull;
use gprox_geometry::transform::{transform_point, Pose64};

use std::cell::Cell;

use crate::gjk::{gjk_run_from, Outcome, SupportMap};

/// Bound on the rounding of one side's extent, relative to the magnitude of the world
/// coordinates times the normal's 1-norm: the pose's product, the normal's mapping and the
/// dot products each round a few times at `2⁻⁵³`.
const PAD: f64 = 1e-13;

/// Bound on the rounding of a triangle distance, relative to the coordinates' magnitude (far
/// above the few roundings of the distance computation).
const DISTANCE_ROUNDING: f64 = 1e-12;

/// A mesh's convex hull under a pose.
#[derive(Clone, Copy, Debug)]
pub struct PosedHull<'a> {
    /// The hull of the mesh's vertices (model frame).
    pub hull: &'a ConvexHull,
    /// Local-to-world pose.
    pub pose: Pose64,
}

impl PosedHull<'_> {
    /// `Mᵀ d`: the model-frame direction whose dot product with a model point equals `d`'s
    /// with its world image, less the translation's.
    fn local(&self, d: DVec3) -> DVec3 {
        let r = &self.pose.rows;
        DVec3::new(
            r[0][0] * d.x + r[1][0] * d.y + r[2][0] * d.z,
            r[0][1] * d.x + r[1][1] * d.y + r[2][1] * d.z,
            r[0][2] * d.x + r[1][2] * d.y + r[2][2] * d.z,
        )
    }

    fn translation(&self) -> DVec3 {
        let r = &self.pose.rows;
        DVec3::new(r[0][3], r[1][3], r[2][3])
    }

    /// World image of a model point (hull vertices are f32 values, so this is exactly
    /// [`transform_point`] of the mesh vertex).
    fn world(&self, p: DVec3) -> DVec3 {
        transform_point(&self.pose, p.as_vec3())
    }

    /// A bound on the magnitude of every world coordinate of the mesh (and of the pose's
    /// product before the translation).
    fn magnitude(&self) -> f64 {
        let reach = self.hull.reach();
        self.pose
            .rows
            .iter()
            .map(|r| (r[0].abs() + r[1].abs() + r[2].abs()) * reach + r[3].abs())
            .fold(0.0, f64::max)
    }
}

/// A GJK support map of a posed hull: approximate, in one read of the hull's direction table
/// ([`ConvexHull::seed_point`], small enough to stay in cache from frame to frame), or exact,
/// climbing the hull's edges from the better of the last answer and the table's vertex.
struct HullSupport<'h> {
    posed: &'h PosedHull<'h>,
    exact: bool,
    last: Cell<Option<u32>>,
}

impl<'h> HullSupport<'h> {
    fn new(posed: &'h PosedHull<'h>, exact: bool) -> Self {
        Self {
            posed,
            exact,
            last: Cell::new(None),
        }
    }
}

impl SupportMap for HullSupport<'_> {
    fn support(&self, dir: DVec3) -> (DVec3, u32) {
        let local = self.posed.local(dir);
        let hull = self.posed.hull;
        let (seed, p) = hull.seed_point(local);
        let v = if self.exact {
            let from = match self.last.get() {
                Some(last) if local.dot(hull.points()[last as usize]) > local.dot(p) => last,
                _ => seed,
            };
            hull.climb(local, from)
        } else {
            seed
        };
        self.last.set(Some(v));
        (self.posed.world(hull.points()[v as usize]), v)
    }
}

/// A unit normal `n` (world) such that every vertex of `a` lies beyond every vertex of `b`
/// along `n` by more than `margin`: `min n·a − max n·b > margin`, proven beyond rounding, so
/// no triangle of `a` comes within `margin` of a triangle of `b`. `None` when the search finds
/// no such plane (the hulls overlap or come too close); that proves nothing.
///
/// `steps = 0` tries the line between the hulls' centres only. Otherwise up to `steps` GJK
/// steps run from that line on approximate supports read from each hull's table of 1,536
/// directions ([`ConvexHull::seed_point`]: a small table that stays in cache, where a walk
/// over the hull's edges is a chain of dependent memory reads); where the plane they give
/// does not hold, up to `steps` more run on the exact supports from there. A separated pair of
/// smooth hulls takes a handful of steps; overlapping hulls stop sooner, when the simplex holds
/// the origin. Each plane is checked on the exact hulls (two certified supports,
/// [`ConvexHull::support_from`]) before it is returned.
///
/// ```
/// use gprox_geometry::{glam::{Affine3A, DVec3, Vec3}, hull::ConvexHull, scene::torus, transform::Pose64};
/// use gprox_query::collide::{separating_plane, PosedHull};
/// let mesh = torus(1.0, 0.3, 24, 12).unwrap();
/// let hull = ConvexHull::of_mesh(&mesh).unwrap();
/// let at = |x: f32| Pose64::from_affine(&Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)));
/// let a = PosedHull { hull: &hull, pose: at(0.0) };
/// let n = separating_plane(&PosedHull { hull: &hull, pose: at(3.0) }, &a, 0.0, 0).unwrap();
/// assert!(n.x > 0.99);
/// // Interlocked tori: their hulls overlap, so no plane (the trees must decide).
/// assert!(separating_plane(&PosedHull { hull: &hull, pose: at(1.0) }, &a, 0.0, 16).is_none());
/// ```
pub fn separating_plane(
    a: &PosedHull<'_>,
    b: &PosedHull<'_>,
    margin: f64,
    steps: usize,
) -> Option<DVec3> {
    if !(margin.is_finite() && margin >= 0.0) {
        return None;
    }
    let (ca, cb) = (a.world(a.hull.centroid()), b.world(b.hull.centroid()));
    if steps == 0 {
        return proven(a, b, ca - cb, margin, [None; 2]);
    }
    // The tables first; where they fall short, the exact supports from where they stopped.
    let mut v = ca - cb;
    for exact in [false, true] {
        let (sa, sb) = (HullSupport::new(a, exact), HullSupport::new(b, exact));
        let (simplex, outcome) = gjk_run_from(&sa, &sb, 1e-12, Some(margin), v, steps);
        if outcome == Outcome::Intersecting {
            return None;
        }
        v = simplex.point();
        let n = v / v.length();
        if !n.is_finite() {
            return None;
        }
        // A table's gap along `n` is at least the true one (its points are hull vertices):
        // only a gap beyond the margin there is worth the exact check.
        let ((pa, va), (pb, vb)) = (sa.support(-n), sb.support(n));
        if n.dot(pa) - n.dot(pb) > margin {
            if let Some(n) = proven(a, b, n, margin, [Some(va), Some(vb)]) {
                return Some(n);
            }
        }
    }
    None
}

/// The unit normal along `v` if it separates `a` from `b` by more than `margin`, proven beyond
/// rounding; supports climb from `from` where given.
fn proven(
    a: &PosedHull<'_>,
    b: &PosedHull<'_>,
    v: DVec3,
    margin: f64,
    from: [Option<u32>; 2],
) -> Option<DVec3> {
    let n = v / v.length();
    if !n.is_finite() {
        return None;
    }
    // `min n·a` is `−max (−n)·a`: both extents as certified upper bounds in the model frames.
    let low_a = -extent(a, -n, from[0])?;
    let high_b = extent(b, n, from[1])?;
    // With a margin the contact test compares rounded triangle distances with it: a gap within
    // their rounding (relative to the coordinates, not to the margin) is not claimed. Without
    // one the contact test is exact, and any positive gap stands.
    let slack = if margin > 0.0 {
        margin * 1e-12 + DISTANCE_ROUNDING * (a.magnitude() + b.magnitude())
    } else {
        0.0
    };
    (low_a - high_b > margin + slack).then_some(n)
}

/// A certified upper bound of `n · w` over the world corners `w` of `p`'s mesh, widened by
/// the rounding between model and world frames; `None` if the support is not certified.
fn extent(p: &PosedHull<'_>, n: DVec3, from: Option<u32>) -> Option<f64> {
    let local = p.local(n);
    let s = match from {
        Some(v) => p.hull.support_from(local, v),
        None => p.hull.support(local),
    };
    if !s.certified {
        return None;
    }
    let bound = s.value + n.dot(p.translation());
    let pad = PAD * p.magnitude() * (n.x.abs() + n.y.abs() + n.z.abs());
    let e = bound + pad;
    e.is_finite().then_some(e)
}
