//! The many-body queries over the broad phase's candidate pairs: collide-all places every
//! candidate body in the world once and traverses each pair there (`narrow.rs`); collide-any
//! runs the pair query [`crate::collide::try_collide_any`] on each pair.

use rayon::prelude::*;
use std::sync::OnceLock;

use super::{
    broad_phase_pairs, narrow, BroadPhaseError, ManyContacts, Models, ObjectPairContacts,
    TreeShape, WorldAabb,
};
use crate::collide::{try_collide_any, CollideError, CollideOptions, CollisionObject, Side};

/// An object of [`try_collide_many_shaped`]: a posed mesh with its tree, and that tree's
/// [`TreeShape`], made once and kept while the tree's links do not change (a rigid body, or a
/// deforming one whose tree is only refitted).
#[derive(Clone, Copy, Debug)]
pub struct ShapedObject<'a> {
    /// The mesh, its tree (whose root box the broad phase reads) and the pose.
    pub object: CollisionObject<'a>,
    /// The shape the narrow phase refits to the world corners: [`TreeShape::new`] of
    /// `object`'s tree. Where the shape's links differ from the tree's at a node the placement
    /// examines (large bodies are refitted only near their partners, from the tree's boxes),
    /// the body is refitted whole and the pairs are the same; a shape that matches the tree's
    /// top but not its lower levels is a caller error that can lose pairs.
    pub shape: &'a TreeShape,
}

/// All contacts between all objects: for every object pair the sorted triangle pairs of
/// [`crate::collide::try_collide_all`], keeping the pairs with at least one contact.
///
/// Every object in a candidate pair is placed in the world once (its vertices transformed and
/// its tree refitted to them, the tree's links validated once per distinct tree), then each
/// candidate pair is traversed with plain box tests (`broad_phase/narrow.rs`): the same pairs
/// as the pair query, found without mapping boxes between frames at every node pair. Bodies
/// queried frame after frame save the validation with [`try_collide_many_shaped`].
pub fn try_collide_many(
    objects: &[CollisionObject<'_>],
    opts: &CollideOptions,
) -> Result<ManyContacts, BroadPhaseError> {
    let (candidates, boxes) = super::candidates(objects, opts)?;
    let used = used_objects(&candidates);
    // Tree shapes validated once per model, then checked per object in `used` order (the
    // first failing object names the error).
    let models = Models::new(objects, used.iter().copied());
    let shapes: Vec<Result<TreeShape, CollideError>> = models
        .first
        .par_iter()
        .map(|&o| TreeShape::new(objects[o as usize].bvh, objects[o as usize].mesh))
        .collect();
    let chosen = checked_shapes(&candidates, &used, |o| {
        let object = &objects[o as usize];
        narrow::check(object)
            .and_then(|()| shapes[models.of(object)].as_ref().map_err(Clone::clone))
    })?;
    Ok(narrow_phase(
        objects,
        (&candidates, &boxes),
        &used,
        &chosen,
        opts,
    ))
}

/// [`try_collide_many`] with each tree's [`TreeShape`] given: the same result, without the
/// validating walk over every node of every candidate body's tree (with many small bodies the
/// largest cost of a call after the narrow phase itself). Each object is checked as
/// [`try_collide_many`] checks it, and its shape must cover its mesh's faces
/// ([`CollideError::BvhMismatch`] otherwise).
///
/// ```
/// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
/// use gprox_query::broad_phase::{try_collide_many, try_collide_many_shaped, ShapedObject, TreeShape};
/// use gprox_query::collide::{CollideOptions, CollisionObject};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let shape = TreeShape::new(&bvh, &tri).unwrap(); // once, kept across frames
/// let opts = CollideOptions::default();
/// for turn in [0.5f32, 1.5707964] {
///     let objects = [Pose64::IDENTITY, Pose64::from_affine(&Affine3A::from_rotation_x(turn))]
///         .map(|pose| CollisionObject::new(&tri, &bvh, pose).unwrap());
///     let shaped = objects.map(|object| ShapedObject { object, shape: &shape });
///     let found = try_collide_many_shaped(&shaped, &opts).unwrap();
///     assert_eq!(found, try_collide_many(&objects, &opts).unwrap());
///     assert_eq!(found.total, 1);
/// }
/// ```
pub fn try_collide_many_shaped(
    objects: &[ShapedObject<'_>],
    opts: &CollideOptions,
) -> Result<ManyContacts, BroadPhaseError> {
    let plain: Vec<CollisionObject<'_>> = objects.iter().map(|o| o.object).collect();
    let (candidates, boxes) = super::candidates(&plain, opts)?;
    let used = used_objects(&candidates);
    let chosen = checked_shapes(&candidates, &used, |o| {
        let ShapedObject { object, shape } = &objects[o as usize];
        narrow::check(object)?;
        let faces = object.mesh.face_count();
        if shape.face_count() != faces {
            return Err(CollideError::BvhMismatch {
                side: Side::A,
                nodes: shape.node_count(),
                faces,
            });
        }
        Ok(*shape)
    })?;
    Ok(narrow_phase(
        &plain,
        (&candidates, &boxes),
        &used,
        &chosen,
        opts,
    ))
}

/// The objects taking part in a candidate pair, sorted.
fn used_objects(candidates: &[[u32; 2]]) -> Vec<u32> {
    let mut used: Vec<u32> = candidates.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// The shape of every object of `used` (in order) from `shape_of`; the first failure becomes
/// the error of the first candidate pair holding that object.
fn checked_shapes<'s>(
    candidates: &[[u32; 2]],
    used: &[u32],
    shape_of: impl Fn(u32) -> Result<&'s TreeShape, CollideError>,
) -> Result<Vec<&'s TreeShape>, BroadPhaseError> {
    used.iter()
        .map(|&o| {
            shape_of(o).map_err(|source| {
                let [a, b] = candidates
                    .iter()
                    .find(|p| p.contains(&o))
                    .copied()
                    .unwrap_or([o, o]);
                BroadPhaseError::Narrow { a, b, source }
            })
        })
        .collect()
}

/// Places every object of `used` (with its shape in `shapes`, same order) in the world and
/// traverses every candidate pair; `boxes`: the world box of every object from the broad
/// phase, by which each body is refitted only where its candidate partners can reach it.
fn narrow_phase(
    objects: &[CollisionObject<'_>],
    (candidates, boxes): (&[[u32; 2]], &[WorldAabb]),
    used: &[u32],
    shapes: &[&TreeShape],
    opts: &CollideOptions,
) -> ManyContacts {
    // The world boxes of the candidate partners of body `o`: asked for by large bodies only.
    let near = |o: u32| -> Vec<WorldAabb> {
        let partner = |&[a, b]: &[u32; 2]| match (a == o, b == o) {
            (true, _) => Some(boxes[b as usize]),
            (_, true) => Some(boxes[a as usize]),
            _ => None,
        };
        candidates.iter().filter_map(partner).collect()
    };
    // Each body is placed on first use, just before the traversal that needs it, while its
    // boxes are likely still in cache (all bodies placed first do not fit in L2; the gain on
    // the nbody scene is within the host's noise, docs/benchmarks.md, session 17).
    let bodies: Vec<OnceLock<narrow::Body<'_>>> = used.iter().map(|_| OnceLock::new()).collect();
    let world = |o: u32| {
        let k = used.partition_point(|&u| u < o);
        bodies[k].get_or_init(|| {
            narrow::Body::new(&objects[o as usize], shapes[k], || near(o), opts.margin)
        })
    };
    let found: Vec<ObjectPairContacts> = candidates
        .par_iter()
        .map(|&[a, b]| ObjectPairContacts {
            a,
            b,
            pairs: narrow::world_pairs(world(a), world(b), opts.margin),
        })
        .collect();
    let mut out = ManyContacts::default();
    for c in found {
        if !c.pairs.is_empty() {
            out.total += c.pairs.len();
            out.object_pairs.push(c);
        }
    }
    out
}

/// The object pairs `[a, b]` (`a < b`, sorted) whose surfaces touch (or come within the margin):
/// [`crate::collide::try_collide_any`] on each broad-phase candidate.
pub fn try_collide_many_any(
    objects: &[CollisionObject<'_>],
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, BroadPhaseError> {
    let candidates = broad_phase_pairs(objects, opts)?;
    let hits: Vec<Result<Option<[u32; 2]>, BroadPhaseError>> = candidates
        .par_iter()
        .map(|&[a, b]| {
            try_collide_any(&objects[a as usize], &objects[b as usize], opts)
                .map(|hit| hit.then_some([a, b]))
                .map_err(|source| BroadPhaseError::Narrow { a, b, source })
        })
        .collect();
    hits.into_iter().filter_map(Result::transpose).collect()
}

/// All contacts between all objects (the `pairs: "all"` collide-all query): the object pairs
/// with at least one intersecting triangle pair, sorted by `(a, b)`, each with its sorted
/// `[face of a, face of b]` list, and the total count.
///
/// # Panics
/// On the errors of [`try_collide_many`] (a BVH not built for its mesh, a non-finite pose, a
/// negative margin).
///
/// ```
/// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
/// use gprox_query::broad_phase::{collide_many, collide_many_any};
/// use gprox_query::collide::{CollideOptions, CollisionObject};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let pose = |a: Affine3A| Pose64::from_affine(&a);
/// let objects = [
///     CollisionObject::new(&tri, &bvh, Pose64::IDENTITY).unwrap(),
///     // Far away: no contact with anything.
///     CollisionObject::new(&tri, &bvh, pose(Affine3A::from_translation(Vec3::splat(5.0)))).unwrap(),
///     // A quarter turn about x through the first one's corner: they touch.
///     CollisionObject::new(&tri, &bvh, pose(Affine3A::from_rotation_x(1.5707964))).unwrap(),
/// ];
/// let opts = CollideOptions::default();
/// let all = collide_many(&objects, &opts);
/// assert_eq!(all.total, 1);
/// assert_eq!((all.object_pairs[0].a, all.object_pairs[0].b), (0, 2));
/// assert_eq!(all.object_pairs[0].pairs, vec![[0, 0]]);
/// assert_eq!(collide_many_any(&objects, &opts), vec![[0, 2]]);
/// ```
pub fn collide_many(objects: &[CollisionObject<'_>], opts: &CollideOptions) -> ManyContacts {
    match try_collide_many(objects, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_many: {e}"),
    }
}

/// The object pairs `[a, b]` (`a < b`, sorted) with at least one contact (the `pairs: "all"`
/// collide-any query); the same pairs as [`collide_many`]'s `object_pairs`.
///
/// # Panics
/// On the errors of [`try_collide_many_any`], as [`collide_many`].
pub fn collide_many_any(objects: &[CollisionObject<'_>], opts: &CollideOptions) -> Vec<[u32; 2]> {
    match try_collide_many_any(objects, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_many_any: {e}"),
    }
}
