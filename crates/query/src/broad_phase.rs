//! Many-body collision: a broad phase over object boxes, then the exact narrow phase per
//! candidate object pair.
//!
//! 1. **World boxes** ([`world_aabb`]): each object's BVH root box mapped by its pose in f64
//!    (centre `R c + t`, half-extent `|R| h`), padded by a rigorous bound on the rounding of
//!    [`gprox_geometry::transform::transform_point`] and of the mapping itself, plus half the
//!    contact margin. Every rounded world corner the narrow phase can compute for the object lies
//!    in this box, so two objects whose boxes are disjoint cannot have a contact.
//! 2. **Sweep and prune** ([`sweep_and_prune`]): the boxes are sorted by their lower bound along
//!    the axis on which the box centres vary most, and every box is compared with the following
//!    ones until their lower bound passes its upper bound. For a few hundred objects this costs
//!    microseconds, far below the narrow phase. Each box is clipped to the box of the object's
//!    bounding ball ([`world_sphere`]), and candidates whose balls are apart are dropped: for
//!    round objects under rotation this removes most pairs the boxes let through.
//! 3. **Narrow phase**: collide-all places every candidate object in world space once (f32
//!    boxes, each tree's shape validated once per distinct tree) and traverses each candidate
//!    pair with plain box tests (`broad_phase/narrow.rs`, the same pairs as
//!    [`crate::collide::try_collide_all`]); collide-any runs
//!    [`crate::collide::try_collide_any`] on each candidate pair; both in parallel with
//!    rayon; results are returned in candidate order, i.e. sorted by `(a, b)`, independent of the
//!    schedule.

mod many;
mod narrow;

pub use crate::world::TreeShape;
pub use many::{
    collide_many, collide_many_any, try_collide_many, try_collide_many_any,
    try_collide_many_shaped, ShapedObject,
};

use rayon::prelude::*;

use crate::collide::{CollideError, CollideOptions, CollisionObject};

/// Relative bound used for every rounding term: far above the handful of `2^-53` roundings of a
/// corner transform and of the box mapping.
const K: f64 = 1e-14;

/// A closed axis-aligned box in f64 world coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldAabb {
    /// Lower corner.
    pub min: [f64; 3],
    /// Upper corner.
    pub max: [f64; 3],
}

impl WorldAabb {
    /// Whether the two closed boxes share a point.
    #[inline]
    pub fn overlaps(&self, o: &Self) -> bool {
        (0..3).all(|i| self.min[i] <= o.max[i] && o.min[i] <= self.max[i])
    }

    /// Whether `o` lies inside this box.
    #[inline]
    pub fn contains(&self, o: &Self) -> bool {
        (0..3).all(|i| self.min[i] <= o.min[i] && o.max[i] <= self.max[i])
    }
}

/// The contacts of one object pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectPairContacts {
    /// Index of the first object (`a < b`).
    pub a: u32,
    /// Index of the second object.
    pub b: u32,
    /// Every `[face of a, face of b]` in contact, sorted (as [`crate::collide::collide_all`]).
    pub pairs: Vec<[u32; 2]>,
}

/// Result of [`collide_many`]: the object pairs with at least one contact, sorted by `(a, b)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManyContacts {
    /// Object pairs with a non-empty contact list, sorted by `(a, b)`.
    pub object_pairs: Vec<ObjectPairContacts>,
    /// Number of triangle pairs over all object pairs.
    pub total: usize,
}

/// Errors of the many-body queries, naming the object (index into the slice) concerned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BroadPhaseError {
    /// The contact margin is negative or not finite.
    #[error("margin {margin} must be finite and >= 0")]
    BadMargin {
        /// The given margin.
        margin: f64,
    },
    /// More objects than `u32` indices can name.
    #[error("{count} objects: at most u32::MAX objects are supported")]
    TooManyObjects {
        /// The number of objects given.
        count: usize,
    },
    /// An object's BVH does not have `2 * faces - 1` nodes.
    #[error("object {object}: bvh has {nodes} nodes, mesh has {faces} faces (expected 2*faces-1)")]
    BvhMismatch {
        /// Index of the object.
        object: usize,
        /// Nodes in its tree.
        nodes: usize,
        /// Faces in its mesh.
        faces: usize,
    },
    /// An object's pose has a NaN or infinite entry.
    #[error("object {object}: pose has a non-finite entry")]
    NonFinitePose {
        /// Index of the object.
        object: usize,
    },
    /// An object's BVH root box is empty or not finite (tree not refitted?).
    #[error("object {object}: bvh root box is not finite")]
    NonFiniteBounds {
        /// Index of the object.
        object: usize,
    },
    /// The narrow phase failed on an object pair (e.g. a corrupt tree).
    #[error("object pair ({a}, {b}): {source}")]
    Narrow {
        /// First object of the pair.
        a: u32,
        /// Second object of the pair.
        b: u32,
        /// What the pair query reported (its `Side::A` is object `a`).
        source: CollideError,
    },
}

fn check_margin(opts: &CollideOptions) -> Result<(), BroadPhaseError> {
    if opts.margin.is_finite() && opts.margin >= 0.0 {
        Ok(())
    } else {
        Err(BroadPhaseError::BadMargin {
            margin: opts.margin,
        })
    }
}

/// The padded world box of object `index` (see the module docs): it holds every world corner
/// [`gprox_geometry::transform::transform_point`] computes for the object's vertices, grown by
/// half of `margin` (plus rounding slack) so boxes of objects within `margin` overlap.
///
/// `margin` must be finite and `>= 0` (checked by the callers in this module).
pub fn world_aabb(
    object: &CollisionObject<'_>,
    index: usize,
    margin: f64,
) -> Result<WorldAabb, BroadPhaseError> {
    let faces = object.mesh.face_count();
    let nodes = object.bvh.nodes.len();
    if faces == 0 || nodes != 2 * faces - 1 {
        return Err(BroadPhaseError::BvhMismatch {
            object: index,
            nodes,
            faces,
        });
    }
    let rows = &object.pose.rows;
    if rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(BroadPhaseError::NonFinitePose { object: index });
    }
    let r = object.bvh.root_aabb();
    if r.min.iter().chain(&r.max).any(|v| !v.is_finite()) || (0..3).any(|i| r.min[i] > r.max[i]) {
        return Err(BroadPhaseError::NonFiniteBounds { object: index });
    }
    Ok(BoxMap::new(object, margin).map(&r))
}

/// Bound on the magnitude of every world coordinate of `object` whose local coordinates are
/// bounded by its root box and by `local` (`‖R‖∞ · local magnitude + max |t|`).
fn world_reach(object: &CollisionObject<'_>, local: f64) -> f64 {
    let (rows, r) = (&object.pose.rows, object.bvh.root_aabb());
    let mag = (0..3)
        .map(|i| (r.min[i] as f64).abs().max((r.max[i] as f64).abs()))
        .fold(0.0, f64::max)
        .max(local);
    let norm = rows
        .iter()
        .map(|row| row[0].abs() + row[1].abs() + row[2].abs())
        .fold(0.0, f64::max);
    let tmax = rows.iter().map(|row| row[3].abs()).fold(0.0, f64::max);
    norm * mag + tmax
}

/// Maps the boxes of an object's tree (in its own frame) to padded world boxes, as
/// [`world_aabb`] maps the root: centre `R c + t`, half-extent `|R| h`, plus a pad that covers
/// the rounding of every world corner and of the mapping, and half the margin. A box that holds
/// some of the object's vertices maps to a box that holds their world corners: two objects whose
/// mapped boxes are disjoint have no contact between those parts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxMap {
    rows: [[f64; 4]; 3],
    pad: f64,
}

impl BoxMap {
    /// The map of `object` (finite pose and root box, checked by [`world_aabb`]) for `margin`
    /// (finite, `>= 0`); its rounding pad is sized by the root box, which holds every node's.
    pub(crate) fn new(object: &CollisionObject<'_>, margin: f64) -> Self {
        let rows = object.pose.rows;
        let reach = world_reach(object, 0.0);
        // Rounding of a world corner (≤ K·reach) plus rounding of this mapping (a few more
        // terms of the same size); margin: half on each object, with the slack the triangle
        // prefilter uses.
        let mut pad = 4.0 * K * reach;
        if margin > 0.0 {
            pad += 0.5 * margin * (1.0 + 1e-12) + 1e-12 * reach;
        }
        Self { rows, pad }
    }

    /// The padded world box of `b`, a box in the object's frame.
    #[inline]
    pub(crate) fn map(&self, b: &gprox_bvh::aabb::Aabb) -> WorldAabb {
        // Local box as centre and half-extent (f64; rounding covered by the pad).
        let c = [0, 1, 2].map(|i| (b.min[i] as f64 + b.max[i] as f64) * 0.5);
        let h = [0, 1, 2].map(|i| (b.max[i] as f64 - b.min[i] as f64) * 0.5);
        let mut out = WorldAabb {
            min: [0.0; 3],
            max: [0.0; 3],
        };
        for (i, row) in self.rows.iter().enumerate() {
            let wc = row[0] * c[0] + row[1] * c[1] + row[2] * c[2] + row[3];
            let wh = row[0].abs() * h[0] + row[1].abs() * h[1] + row[2].abs() * h[2] + self.pad;
            out.min[i] = wc - wh;
            out.max[i] = wc + wh;
        }
        out
    }
}

/// Every pair `[i, j]` (`i < j`) of overlapping closed boxes, sorted: sweep and prune along the
/// axis of largest variance of the box centres.
///
/// ```
/// use gprox_query::broad_phase::{sweep_and_prune, WorldAabb};
/// let b = |x: f64| WorldAabb { min: [x, 0.0, 0.0], max: [x + 1.0, 1.0, 1.0] };
/// // Boxes at x = 0, 3, 1 (touching counts: [0, 1] closes at 1.0 where the third opens).
/// assert_eq!(sweep_and_prune(&[b(0.0), b(3.0), b(1.0)]), vec![[0, 2]]);
/// ```
pub fn sweep_and_prune(boxes: &[WorldAabb]) -> Vec<[u32; 2]> {
    let n = boxes.len();
    if n < 2 {
        return Vec::new();
    }
    // Axis of largest variance of the centres.
    let centre = |b: &WorldAabb, k: usize| 0.5 * b.min[k] + 0.5 * b.max[k];
    let axis = (0..3)
        .map(|k| {
            let mean = boxes.iter().map(|b| centre(b, k)).sum::<f64>() / n as f64;
            let var = boxes
                .iter()
                .map(|b| (centre(b, k) - mean).powi(2))
                .sum::<f64>();
            (k, var)
        })
        .fold((0, f64::NEG_INFINITY), |best, cur| {
            if cur.1 > best.1 {
                cur
            } else {
                best
            }
        })
        .0;
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        boxes[a as usize].min[axis]
            .total_cmp(&boxes[b as usize].min[axis])
            .then(a.cmp(&b))
    });
    // Sorted copy in a compact layout: [lo_axis, hi_axis, lo_u, hi_u, lo_v, hi_v].
    let sorted: Vec<[f64; 6]> = order
        .iter()
        .map(|&i| {
            let b = &boxes[i as usize];
            [
                b.min[axis],
                b.max[axis],
                b.min[u],
                b.max[u],
                b.min[v],
                b.max[v],
            ]
        })
        .collect();
    let mut out = Vec::new();
    for (k, s) in sorted.iter().enumerate() {
        for (t, o) in sorted[k + 1..].iter().enumerate() {
            if o[0] > s[1] {
                break;
            }
            if o[2] <= s[3] && s[2] <= o[3] && o[4] <= s[5] && s[4] <= o[5] {
                let (i, j) = (order[k], order[k + 1 + t]);
                out.push([i.min(j), i.max(j)]);
            }
        }
    }
    out.sort_unstable();
    out
}

/// A ball in f64 world coordinates holding every world corner of an object (see
/// [`world_sphere`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldSphere {
    /// Centre: the image of the root box centre.
    pub centre: [f64; 3],
    /// Radius, padded for rounding and half the margin.
    pub radius: f64,
}

/// Centre of the root box and an upper bound on the distance from it to every vertex of the
/// mesh, in the mesh's own coordinates (f64).
fn local_ball(object: &CollisionObject<'_>) -> ([f64; 3], f64) {
    let r = object.bvh.root_aabb();
    let c = [0, 1, 2].map(|i| (r.min[i] as f64 + r.max[i] as f64) * 0.5);
    let sq = object
        .mesh
        .positions()
        .iter()
        .map(|v| {
            let d = [v.x as f64 - c[0], v.y as f64 - c[1], v.z as f64 - c[2]];
            d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        })
        .fold(0.0, f64::max);
    // A few roundings of relative size 2^-53 at most.
    (c, sq.sqrt() * (1.0 + 1e-12))
}

/// An upper bound on the spectral norm of the linear part of a pose (how much it can stretch
/// a ball): `‖R‖₂² = ρ(RᵀR) ≤ ‖RᵀR‖∞`, with slack for the rounding of `RᵀR`; never above the
/// Frobenius norm. About 1 for a rotation.
fn spectral_bound(rows: &[[f64; 4]; 3]) -> f64 {
    let col = |j: usize| [rows[0][j], rows[1][j], rows[2][j]];
    let cols = [col(0), col(1), col(2)];
    let dot = |a: &[f64; 3], b: &[f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let n_inf = (0..3)
        .map(|i| (0..3).map(|j| dot(&cols[i], &cols[j]).abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let norm_inf = rows
        .iter()
        .map(|r| r[0].abs() + r[1].abs() + r[2].abs())
        .fold(0.0, f64::max);
    let norm_one = cols
        .iter()
        .map(|c| c[0].abs() + c[1].abs() + c[2].abs())
        .fold(0.0, f64::max);
    // Each entry of RᵀR rounds by at most a few 2^-53 of Σ|r_ki||r_kj| ≤ ‖R‖₁‖R‖∞.
    let sq = n_inf * (1.0 + 1e-12) + 1e-12 * norm_one * norm_inf;
    let fro = rows
        .iter()
        .map(|r| r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
        .sum::<f64>();
    sq.min(fro).sqrt() * (1.0 + 1e-12)
}

/// The padded world ball of an object whose local ball ([`local_ball`]) is `(c, r)`. The
/// object must have passed [`world_aabb`]'s checks.
fn world_sphere_from(
    object: &CollisionObject<'_>,
    (c, r): ([f64; 3], f64),
    margin: f64,
) -> WorldSphere {
    let rows = &object.pose.rows;
    let reach = world_reach(object, r);
    let spec = spectral_bound(rows);
    // Rounding of every world corner and of the centre (each <= K·reach per coordinate, <= 2K
    // in Euclidean norm), with room to spare.
    let mut radius = spec * r * (1.0 + 1e-12) + 8.0 * K * reach;
    if margin > 0.0 {
        radius += 0.5 * margin * (1.0 + 1e-12) + 1e-12 * reach;
    }
    let centre = [0, 1, 2].map(|i| {
        let row = &rows[i];
        row[0] * c[0] + row[1] * c[1] + row[2] * c[2] + row[3]
    });
    WorldSphere { centre, radius }
}

/// The padded world ball of object `index`: centre the image of its root box centre, radius
/// bounding the distance to every world corner
/// [`gprox_geometry::transform::transform_point`] computes for its vertices (scans the
/// vertices), plus half of `margin`.
pub fn world_sphere(
    object: &CollisionObject<'_>,
    index: usize,
    margin: f64,
) -> Result<WorldSphere, BroadPhaseError> {
    world_aabb(object, index, margin)?;
    Ok(world_sphere_from(object, local_ball(object), margin))
}

/// Whether two padded world balls can hold points of both objects within contact.
#[inline]
fn balls_meet(a: &WorldSphere, b: &WorldSphere) -> bool {
    let d2 = (0..3)
        .map(|k| (a.centre[k] - b.centre[k]).powi(2))
        .sum::<f64>();
    // Relative slack for the rounding of the difference, the squares and the sum.
    let reach = (a.radius + b.radius) * (1.0 + 1e-12);
    d2 <= reach * reach
}

/// The distinct (mesh, tree) pairs of a set of objects, recognised by address, so per-model
/// work (local balls, validated tree shapes) is done once per model rather than per object.
struct Models {
    /// Sorted (mesh address, tree address) keys.
    keys: Vec<(usize, usize)>,
    /// The first object (in the given order) of each key.
    first: Vec<u32>,
}

impl Models {
    fn key(o: &CollisionObject<'_>) -> (usize, usize) {
        (o.mesh as *const _ as usize, o.bvh as *const _ as usize)
    }

    /// The models of `objects[i]` for the indices `chosen`.
    fn new(objects: &[CollisionObject<'_>], chosen: impl Iterator<Item = u32>) -> Self {
        let mut keys: Vec<((usize, usize), u32)> = chosen
            .map(|i| (Self::key(&objects[i as usize]), i))
            .collect();
        keys.sort_unstable();
        keys.dedup_by_key(|k| k.0);
        let (keys, first) = keys.into_iter().unzip();
        Self { keys, first }
    }

    /// Index of `o`'s model (`o` must be one of the chosen objects).
    fn of(&self, o: &CollisionObject<'_>) -> usize {
        self.keys.partition_point(|&k| k < Self::key(o))
    }
}

/// Candidate object pairs `[a, b]` (`a < b`), sorted: every pair whose padded world boxes
/// ([`world_aabb`], clipped to the box of the object's [`world_sphere`]) overlap and whose
/// world balls meet. A superset of the pairs with a contact.
///
/// The local balls scan each distinct mesh's vertices once per call (meshes shared by several
/// objects are recognised by address).
pub fn broad_phase_pairs(
    objects: &[CollisionObject<'_>],
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, BroadPhaseError> {
    Ok(candidates(objects, opts)?.0)
}

/// [`broad_phase_pairs`] with the clipped world box of every object.
pub(crate) fn candidates(
    objects: &[CollisionObject<'_>],
    opts: &CollideOptions,
) -> Result<(Vec<[u32; 2]>, Vec<WorldAabb>), BroadPhaseError> {
    check_margin(opts)?;
    if u32::try_from(objects.len()).is_err() {
        return Err(BroadPhaseError::TooManyObjects {
            count: objects.len(),
        });
    }
    let mut boxes = objects
        .iter()
        .enumerate()
        .map(|(i, o)| world_aabb(o, i, opts.margin))
        .collect::<Result<Vec<_>, _>>()?;
    // Local balls per distinct (mesh, tree).
    let models = Models::new(objects, 0..objects.len() as u32);
    let balls: Vec<([f64; 3], f64)> = models
        .first
        .par_iter()
        .map(|&i| local_ball(&objects[i as usize]))
        .collect();
    let spheres: Vec<WorldSphere> = objects
        .iter()
        .map(|o| world_sphere_from(o, balls[models.of(o)], opts.margin))
        .collect();
    for (b, s) in boxes.iter_mut().zip(&spheres) {
        for k in 0..3 {
            b.min[k] = b.min[k].max(s.centre[k] - s.radius * (1.0 + 1e-12));
            b.max[k] = b.max[k].min(s.centre[k] + s.radius * (1.0 + 1e-12));
        }
    }
    let mut pairs = sweep_and_prune(&boxes);
    pairs.retain(|&[a, b]| balls_meet(&spheres[a as usize], &spheres[b as usize]));
    Ok((pairs, boxes))
}
