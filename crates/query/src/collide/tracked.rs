//! Collision of one pair of objects over a sequence of frames, each frame's traversal restarted
//! from the BVTT front of the previous one (gProximity §4.1.2; the front itself is
//! [`crate::front::Front`]).
//!
//! Node pairs are compared with the same padded test as [`super::try_collide_all`] (module
//! `frame`), so every pair of triangles whose rounded world corners meet has all its BVTT
//! ancestors overlapping, and the front reaches it whatever the poses did since the last frame:
//! the result equals [`super::try_collide_all`]'s. The two stages are exposed separately —
//! [`TrackedCollision::candidates`] (traversal) and [`exact_pairs`] (exact triangle tests) — so
//! that their costs can be measured apart.

use gprox_bvh::{Bvh, LEAF};

use super::traverse::{with_scratch, Traversal};
use super::{prepare, CollideError, CollideOptions, CollisionObject, Side};
use crate::front::Front;

/// Front-tracked collision of one pair of objects across frames.
///
/// Meshes may deform (refit their trees between calls) and poses may change freely. A rebuilt
/// tree (new topology) is detected and the traversal starts from the roots again.
///
/// ```
/// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
/// use gprox_query::collide::{try_collide_all, CollideOptions, CollisionObject, TrackedCollision};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&tri);
/// let opts = CollideOptions::default();
/// let mut tracked = TrackedCollision::new();
/// for dx in [0.0, 0.5, 2.0] {
///     let a = CollisionObject::new(&tri, &bvh, Pose64::IDENTITY).unwrap();
///     let pose = Pose64::from_affine(&Affine3A::from_translation(Vec3::new(dx, 0.2, 0.0)));
///     let b = CollisionObject::new(&tri, &bvh, pose).unwrap();
///     assert_eq!(tracked.collide_all(&a, &b, &opts).unwrap(), try_collide_all(&a, &b, &opts).unwrap());
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct TrackedCollision {
    front: Option<Front>,
    /// Fingerprint of both trees' topology when the front was made.
    topology: u64,
}

impl TrackedCollision {
    /// No front yet: the first call traverses from the roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the front: the next call traverses from the roots (front tracking off).
    pub fn reset(&mut self) {
        self.front = None;
    }

    /// Node pairs in the current front (0 before the first call).
    pub fn front_len(&self) -> usize {
        self.front.as_ref().map_or(0, |f| f.pairs.len())
    }

    /// The traversal stage: every face pair `[face of a, face of b]` whose leaf boxes overlap in
    /// the padded comparison (a superset of the colliding pairs, in no particular order),
    /// restarting from the last front and updating it.
    pub fn candidates(
        &mut self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &CollideOptions,
    ) -> Result<Vec<[u32; 2]>, CollideError> {
        let (frame, _) = prepare(a, b, opts)?;
        let topology = fingerprint(
            tree_topology(a.bvh, a.mesh.face_count(), Side::A)?,
            tree_topology(b.bvh, b.mesh.face_count(), Side::B)?,
        );
        if topology != self.topology {
            self.front = None;
        }
        let (ta, tb) = (a.bvh, b.bvh);
        let overlap =
            |i: u32, j: u32| frame.overlaps(&ta.nodes[i as usize].aabb, &tb.nodes[j as usize].aabb);
        let mut out = Vec::new();
        let push = |x: u32, y: u32| out.push([x, y]);
        match &mut self.front {
            Some(front) => front.update(ta, tb, overlap, push),
            None => self.front = Some(Front::new_pair(ta, tb, overlap, push)),
        }
        self.topology = topology;
        Ok(out)
    }

    /// Every colliding face pair, as [`super::try_collide_all`] (sorted, no duplicates):
    /// [`Self::candidates`] then [`exact_pairs`].
    pub fn collide_all(
        &mut self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &CollideOptions,
    ) -> Result<Vec<[u32; 2]>, CollideError> {
        let candidates = self.candidates(a, b, opts)?;
        exact_pairs(a, b, &candidates, opts)
    }
}

/// The exact stage: the pairs of `candidates` (`[face of a, face of b]`) whose world triangles
/// intersect (or lie within `opts.margin`), sorted, without duplicates — the same test as the
/// leaves of [`super::try_collide_all`].
pub fn exact_pairs(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
    candidates: &[[u32; 2]],
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, CollideError> {
    let (frame, mag) = prepare(a, b, opts)?;
    let mut out = with_scratch(|s| {
        let mut t = Traversal::new(a, b, frame, opts.margin, mag, s);
        let mut out = Vec::new();
        for &[fa, fb] in candidates {
            if let Some(p) = t.face_pair(fa, fb)? {
                out.push(p);
            }
        }
        Ok::<_, CollideError>(out)
    })?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fingerprint(a: u64, b: u64) -> u64 {
    (FNV_OFFSET ^ a).wrapping_mul(0x100_0000_01b3) ^ b
}

/// Checks that `bvh` is a tree the front can walk without leaving its arrays (the root's parent
/// is [`LEAF`], every child is in range, distinct and names its parent back, every leaf names a
/// face below `faces`) and returns a hash of its topology.
fn tree_topology(bvh: &Bvh, faces: usize, side: Side) -> Result<u64, CollideError> {
    let n = bvh.nodes.len();
    let bad = |node: u32| CollideError::InvalidTree { side, node };
    if bvh.parents.len() != n || bvh.parents.first().is_some_and(|&p| p != LEAF) {
        return Err(bad(0));
    }
    let mut hash = FNV_OFFSET;
    for (i, node) in bvh.nodes.iter().enumerate() {
        if node.is_leaf() {
            if node.left as usize >= faces {
                return Err(CollideError::FaceOutOfRange {
                    side,
                    face: node.left,
                });
            }
        } else {
            if node.left == node.right {
                return Err(bad(node.left));
            }
            for c in [node.left, node.right] {
                if c == 0 || c as usize >= n || bvh.parents[c as usize] != i as u32 {
                    return Err(bad(c));
                }
            }
        }
        hash = (hash ^ ((u64::from(node.left) << 32) | u64::from(node.right)))
            .wrapping_mul(0x100_0000_01b3);
    }
    Ok(hash)
}
