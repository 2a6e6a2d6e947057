//! Mesh–mesh collision: every intersecting triangle pair of two posed meshes.
//!
//! A simultaneous traversal of the two BVHs (the bounding-volume test tree) descends the larger
//! node of every overlapping pair; node boxes are compared in A's local frame (B's boxes mapped
//! into it) or in world space, always padded by a rigorous bound on rounding so that no pair is
//! missed (module `frame`). Leaf pairs get the exact test
//! [`gprox_geometry::tri_tri::triangles_intersect`] on the f64 world corners from
//! [`gprox_geometry::transform::transform_triangle`] — or, with a margin, the distance test
//! [`gprox_geometry::tri_distance::triangle_distance`] `≤ margin`.
//!
//! With more than one rayon thread the traversal front is widened breadth-first and split into
//! tasks; the output is sorted, so it does not depend on the schedule.

mod bv;
mod frame;
mod near;
mod node_test;
mod separation;
mod tracked;
mod traverse;

use std::sync::atomic::AtomicBool;

use glam::DVec3;
use gprox_bvh::Bvh;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;
use rayon::prelude::*;

use frame::{box_magnitude, Frame};
use traverse::{with_scratch, Sink, Traversal};

pub use bv::{
    collide_all_bv, collide_all_models, collide_any_bv, collide_any_models, try_collide_all_bv,
    try_collide_all_models, try_collide_any_bv, try_collide_any_models,
    try_collide_any_models_near, try_collide_any_models_witness, BvCollisionObject, CollisionModel,
    CollisionVolume, LocalMap, ModelObject,
};
pub use near::Witness;
pub use separation::{separating_plane, PosedHull};
pub use tracked::{exact_pairs, TrackedCollision};

/// A mesh with its BVH (built or refitted for the mesh's current positions) and a rigid pose.
#[derive(Clone, Copy, Debug)]
pub struct CollisionObject<'a> {
    /// The triangles.
    pub mesh: &'a TriMesh,
    /// Its hierarchy ([`gprox_bvh::lbvh::build`]), with boxes matching `mesh`'s positions.
    pub bvh: &'a Bvh,
    /// Local-to-world pose.
    pub pose: Pose64,
}

impl<'a> CollisionObject<'a> {
    /// Bundles a mesh, its BVH and a pose, checking that the tree has one leaf per face.
    pub fn new(mesh: &'a TriMesh, bvh: &'a Bvh, pose: Pose64) -> Result<Self, CollideError> {
        let o = Self { mesh, bvh, pose };
        o.check(Side::A)?;
        Ok(o)
    }

    fn check(&self, side: Side) -> Result<(), CollideError> {
        let faces = self.mesh.face_count();
        if self.bvh.nodes.len() != 2 * faces - 1 {
            return Err(CollideError::BvhMismatch {
                side,
                nodes: self.bvh.nodes.len(),
                faces,
            });
        }
        if self.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
            return Err(CollideError::NonFinitePose { side });
        }
        let r = self.bvh.root_aabb();
        if r.min.iter().chain(&r.max).any(|v| !v.is_finite()) {
            return Err(CollideError::NonFiniteBounds { side });
        }
        Ok(())
    }
}

/// Which object of a query an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first object.
    A,
    /// The second object.
    B,
}

/// Options of [`collide_all`] / [`collide_any`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollideOptions {
    /// Contact margin: a pair counts when its triangles are within this distance
    /// (`triangle_distance ≤ margin`, f64). `0.0` (default): only intersecting pairs, decided
    /// exactly.
    pub margin: f64,
}

/// Errors of [`try_collide_all`] / [`try_collide_any`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CollideError {
    /// The BVH does not have `2 * faces - 1` nodes.
    #[error(
        "object {side:?}: bvh has {nodes} nodes, mesh has {faces} faces (expected 2*faces-1 nodes)"
    )]
    BvhMismatch {
        /// Which object.
        side: Side,
        /// Nodes in the tree.
        nodes: usize,
        /// Faces in the mesh.
        faces: usize,
    },
    /// A pose entry is NaN or infinite.
    #[error("object {side:?}: pose has a non-finite entry")]
    NonFinitePose {
        /// Which object.
        side: Side,
    },
    /// The root box is empty or not finite (tree not refitted?).
    #[error("object {side:?}: bvh root box is not finite")]
    NonFiniteBounds {
        /// Which object.
        side: Side,
    },
    /// A node refers to a child that does not exist.
    #[error("object {side:?}: bvh node index {node} out of range")]
    InvalidTree {
        /// Which object.
        side: Side,
        /// The missing node.
        node: u32,
    },
    /// A leaf refers to a face that does not exist.
    #[error("object {side:?}: bvh leaf refers to face {face}, which the mesh does not have")]
    FaceOutOfRange {
        /// Which object.
        side: Side,
        /// The face index.
        face: u32,
    },
    /// Two leaves name the same face (so another face is under none).
    #[error("object {side:?}: two bvh leaves refer to face {face}")]
    DuplicateFace {
        /// Which object.
        side: Side,
        /// The face index.
        face: u32,
    },
    /// The traversal visited more node pairs than two trees can have: a cycle.
    #[error("bvh contains a cycle")]
    CyclicTree,
    /// The margin is negative or not finite.
    #[error("margin {margin} must be finite and >= 0")]
    BadMargin {
        /// The given margin.
        margin: f64,
    },
}

/// Front size per rayon thread before the traversal is split into tasks.
const FRONT_PER_THREAD: usize = 32;
/// Below this many faces (both meshes together) one query runs on one thread: splitting costs
/// more than it gains (measured on the two-tori scene, 2 × 5,120 faces).
const PAR_MIN_FACES: usize = 32_768;

/// Checks the inputs of a query and sets up the comparison frame of the two trees and a bound
/// on the world coordinates (for the margin prefilter).
fn prepare(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
) -> Result<(Frame, f64), CollideError> {
    if !(opts.margin.is_finite() && opts.margin >= 0.0) {
        return Err(CollideError::BadMargin {
            margin: opts.margin,
        });
    }
    a.check(Side::A)?;
    b.check(Side::B)?;
    let (mag_a, mag_b) = (
        box_magnitude(&a.bvh.root_aabb()),
        box_magnitude(&b.bvh.root_aabb()),
    );
    let frame = Frame::new(&a.pose, mag_a, &b.pose, mag_b, opts.margin);
    let world = |o: &CollisionObject<'_>, mag: f64| {
        o.pose
            .rows
            .iter()
            .map(|r| (r[0].abs() + r[1].abs() + r[2].abs()) * mag + r[3].abs())
            .fold(0.0, f64::max)
    };
    Ok((frame, world(a, mag_a).max(world(b, mag_b))))
}

/// Leaf pairs whose corners a full traversal fetches before testing any of them. The exact
/// test reads corners in 16-byte pieces that straddle the 24-byte corners, which a load
/// cannot take from a store still in flight: testing a triangle just written stalls on every
/// such load, while `GATHER` pairs later the stores have reached the cache (many-body
/// collide-all −4 %, docs/benchmarks.md, session 17).
pub(crate) const GATHER: usize = 32;

/// The exact test of two world triangles, shared by every traversal: they intersect (margin
/// 0, decided exactly) or lie within `margin` (`triangle_distance ≤ margin`, after a box
/// prefilter padded by `tri_pad`, which rejects only pairs farther apart than the margin).
#[inline]
pub(crate) fn triangles_touch(x: &[DVec3; 3], y: &[DVec3; 3], margin: f64, tri_pad: f64) -> bool {
    // Exact prefilter: the triangles' own boxes (comparisons of f64 values are exact).
    let lo = |t: &[DVec3; 3]| t[0].min(t[1]).min(t[2]);
    let hi = |t: &[DVec3; 3]| t[0].max(t[1]).max(t[2]);
    let pad = DVec3::splat(if margin > 0.0 { tri_pad } else { 0.0 });
    if (lo(x) - hi(y)).cmpgt(pad).any() || (lo(y) - hi(x)).cmpgt(pad).any() {
        return false;
    }
    if margin > 0.0 {
        triangle_distance(x, y).distance <= margin
    } else {
        triangles_intersect(x, y)
    }
}

/// Padding of the triangle-box prefilter for a `margin` and a bound `mag` on the world
/// coordinates: pairs farther apart than this along an axis cannot have a computed distance
/// within the margin.
#[inline]
pub(crate) fn triangle_pad(margin: f64, mag: f64) -> f64 {
    margin * (1.0 + 1e-12) + 1e-12 * mag
}

/// `hint` when it names a face pair of the two meshes that still touches under the current
/// poses (the exact leaf test): an early-out query may stop there without a traversal, since
/// the answer "some pair touches" does not depend on which pair.
pub(crate) fn hint_holds(
    (ma, pa): (&TriMesh, &Pose64),
    (mb, pb): (&TriMesh, &Pose64),
    hint: Option<[u32; 2]>,
    margin: f64,
    mag: f64,
) -> Option<[u32; 2]> {
    let [fa, fb] = hint?;
    if fa as usize >= ma.face_count() || fb as usize >= mb.face_count() {
        return None;
    }
    let x = transform_triangle(pa, ma.triangle(fa as usize));
    let y = transform_triangle(pb, mb.triangle(fb as usize));
    triangles_touch(&x, &y, margin, triangle_pad(margin, mag)).then_some([fa, fb])
}

/// The pairs a traversal found, and the first with its leaves.
type Found = (Vec<[u32; 2]>, Option<Witness>);

/// One query: every touching pair (`any == None`), or the first one found (`any`: raised when
/// found; `hint`'s pair is tested first, then its neighbourhood, module `near`). Also returns
/// the first pair found with its leaves (the smallest, when parallel tasks found several).
fn run_query(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<Witness>,
) -> Result<Found, CollideError> {
    let (frame, mag) = prepare(a, b, opts)?;
    if let Some(flag) = any {
        let faces = hint.map(|w| w.faces);
        if let Some(w) = hint_holds(
            (a.mesh, &a.pose),
            (b.mesh, &b.pose),
            faces,
            opts.margin,
            mag,
        ) {
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok((vec![w], hint));
        }
    }
    let threads = if a.mesh.face_count() + b.mesh.face_count() < PAR_MIN_FACES {
        1
    } else {
        rayon::current_num_threads()
    };
    // Only an early-out query searches the witness's neighbourhood first.
    let near = hint
        .filter(|_| any.is_some())
        .and_then(|w| near::start(a.bvh, b.bvh, &w));
    let finish = |sink: Sink<'_>| match sink.error {
        Some(e) => Err(e),
        None => Ok((sink.pairs, sink.first)),
    };
    let (front, mut out, mut first) = with_scratch(|s| -> Result<(_, _, _), CollideError> {
        let mut t = Traversal::new(a, b, frame, opts.margin, mag, s);
        let mut front = Vec::new();
        // `run` expects overlapping start pairs: a pair whose boxes are apart holds nothing.
        if let Some(start) = near.filter(|&p| t.overlaps(p)) {
            let mut sink = Sink::new(any);
            t.run(&[start], &mut sink);
            let (pairs, first) = finish(sink)?;
            if !pairs.is_empty() {
                return Ok((front, pairs, first));
            }
        }
        if !t.roots_overlap() {
            return Ok((front, Vec::new(), None));
        }
        front.push([0u32, 0u32]);
        if threads > 1 {
            t.widen(&mut front, FRONT_PER_THREAD * threads)?;
        }
        if threads > 1 && front.len() > 1 {
            return Ok((front, Vec::new(), None));
        }
        let mut sink = Sink::new(any);
        t.run(&front, &mut sink);
        let (pairs, first) = finish(sink)?;
        Ok((Vec::new(), pairs, first))
    })?;
    if !front.is_empty() {
        let chunk = front.len().div_ceil(threads * 4).max(1);
        let parts: Vec<Result<Found, CollideError>> = front
            .par_chunks(chunk)
            .map(|start| {
                with_scratch(|s| {
                    let mut t = Traversal::new(a, b, frame, opts.margin, mag, s);
                    let mut sink = Sink::new(any);
                    t.run(start, &mut sink);
                    finish(sink)
                })
            })
            .collect();
        for p in parts {
            let (pairs, found) = p?;
            out.extend(pairs);
            first = first.into_iter().chain(found).min_by_key(|w| w.faces);
        }
    }
    crate::pairs::sort_pairs(&mut out);
    out.dedup();
    Ok((out, first))
}

/// Every pair `[face of a, face of b]` whose closed world triangles intersect (or, with a
/// margin, lie within `opts.margin`), sorted, without duplicates; errors on inconsistent input.
pub fn try_collide_all(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, CollideError> {
    Ok(run_query(a, b, opts, None, None)?.0)
}

/// Whether any triangle pair intersects (or lies within the margin); stops at the first one.
pub fn try_collide_any(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
) -> Result<bool, CollideError> {
    Ok(try_collide_any_witness(a, b, opts, None)?.is_some())
}

/// A touching pair `[face of a, face of b]` if there is one (the early-out query of
/// [`try_collide_any`], which stops at the first pair it finds), trying `hint` first: pass the
/// pair this query returned for the previous frame and, while it still touches, the query costs
/// one exact triangle test instead of a descent (temporal coherence). Whether a pair is
/// returned never depends on the hint; which pair may.
///
/// ```
/// use gprox_geometry::{glam::Affine3A, transform::Pose64, TriMesh};
/// use gprox_query::collide::{try_collide_any_witness, CollideOptions, CollisionObject};
/// let tri = TriMesh::new(vec![[0.0, 0.0, 0.0].into(), [1.0, 0.0, 0.0].into(), [0.0, 1.0, 0.0].into()], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let a = CollisionObject::new(&tri, &bvh, Pose64::IDENTITY).unwrap();
/// let pose = Pose64::from_affine(&Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
/// let b = CollisionObject::new(&tri, &bvh, pose).unwrap();
/// let opts = CollideOptions::default();
/// let w = try_collide_any_witness(&a, &b, &opts, None).unwrap();
/// assert_eq!(w, Some([0, 0]));
/// // Next frame: the same pair is tried first.
/// assert_eq!(try_collide_any_witness(&a, &b, &opts, w).unwrap(), w);
/// ```
pub fn try_collide_any_witness(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
    hint: Option<[u32; 2]>,
) -> Result<Option<[u32; 2]>, CollideError> {
    let near = try_collide_any_near(a, b, opts, hint.map(Witness::of_faces))?;
    Ok(near.map(|w| w.faces))
}

/// [`try_collide_any_witness`] with the leaves of the pair: given the [`Witness`] this query
/// returned for the previous frame, it tests that pair first and, when it no longer touches,
/// the subtree pair a few levels above its leaves before the whole trees (module `near`: a
/// contact that moved a little is found after a few dozen node tests). Whether a pair is
/// returned never depends on the witness; which pair may.
///
/// ```
/// use gprox_geometry::{glam::Affine3A, transform::Pose64, TriMesh};
/// use gprox_query::collide::{try_collide_any_near, CollideOptions, CollisionObject};
/// let tri = TriMesh::new(vec![[0.0, 0.0, 0.0].into(), [1.0, 0.0, 0.0].into(), [0.0, 1.0, 0.0].into()], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let a = CollisionObject::new(&tri, &bvh, Pose64::IDENTITY).unwrap();
/// let pose = Pose64::from_affine(&Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
/// let b = CollisionObject::new(&tri, &bvh, pose).unwrap();
/// let opts = CollideOptions::default();
/// let w = try_collide_any_near(&a, &b, &opts, None).unwrap().unwrap();
/// assert_eq!((w.faces, w.leaves), ([0, 0], [0, 0]));
/// // Next frame: that pair (then its neighbourhood) is searched first.
/// assert_eq!(try_collide_any_near(&a, &b, &opts, Some(w)).unwrap(), Some(w));
/// ```
pub fn try_collide_any_near(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
    hint: Option<Witness>,
) -> Result<Option<Witness>, CollideError> {
    let flag = AtomicBool::new(false);
    let (pairs, first) = run_query(a, b, opts, Some(&flag), hint)?;
    // The first pair with its leaves; a hint that held is returned as given.
    Ok(first.or_else(|| pairs.first().map(|&f| Witness::of_faces(f))))
}

/// Every pair `[face of a, face of b]` whose closed world triangles intersect (or, with a
/// margin, lie within `opts.margin`), sorted, without duplicates.
///
/// # Panics
/// On the errors of [`try_collide_all`] (a BVH not built for its mesh, a non-finite pose, a
/// negative margin); objects made by [`CollisionObject::new`] with a valid margin never do.
///
/// ```
/// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
/// use gprox_query::collide::{collide_all, collide_any, CollideOptions, CollisionObject};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let a = CollisionObject::new(&tri, &bvh, Pose64::IDENTITY).unwrap();
/// // The same triangle rotated a quarter turn about x, through A's corner: they touch.
/// let pose = Pose64::from_affine(&Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
/// let b = CollisionObject::new(&tri, &bvh, pose).unwrap();
/// assert_eq!(collide_all(&a, &b, &CollideOptions::default()), vec![[0, 0]]);
/// assert!(collide_any(&a, &b, &CollideOptions::default()));
/// ```
pub fn collide_all(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
) -> Vec<[u32; 2]> {
    match try_collide_all(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_all: {e}"),
    }
}

/// Whether any triangle pair intersects (or lies within the margin); `== !collide_all(..).is_empty()`.
///
/// # Panics
/// On the errors of [`try_collide_any`], as [`collide_all`].
pub fn collide_any(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    opts: &CollideOptions,
) -> bool {
    match try_collide_any(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_any: {e}"),
    }
}
