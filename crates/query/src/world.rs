//! An object in world coordinates: its f64 world vertices (from
//! [`gprox_geometry::transform::transform_point`], bit-identical to what every exact test sees)
//! and its LBVH's topology ([`TreeShape`]) refitted to them, with exact f64 boxes ([`World`]).
//!
//! [`World`] serves the penetration query (inside tests and nearest faces); the broad phase's
//! narrow phase (many small rigid bodies: one refit per body and frame, then plain box tests)
//! refits the same [`TreeShape`] with f32 boxes.
//! Refitting in world space costs one pass over the nodes per query (a few tens of µs for
//! 5,000 triangles) and needs no padding at all: a leaf box is the exact min/max of its three
//! world corners, so every box contains its world triangles exactly — the same guarantee the
//! padded box mapping of `collide/frame.rs` gives, without its rounding analysis.

use std::sync::{Arc, Mutex};

use glam::DVec3;
use gprox_bvh::{Bvh, LEAF};
use gprox_geometry::transform::transform_point;
use gprox_geometry::tri_distance::point_triangle_distance;
use gprox_geometry::TriMesh;

use crate::collide::{CollideError, CollisionObject, Side};

/// A node of the world tree: exact f64 box, children (or `left` = face and `right == LEAF`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) lo: DVec3,
    pub(crate) hi: DVec3,
    pub(crate) left: u32,
    pub(crate) right: u32,
}

impl Node {
    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.right == LEAF
    }

    /// Whether the closed box contains `p`.
    #[inline]
    pub(crate) fn contains(&self, p: DVec3) -> bool {
        self.lo.cmple(p).all() && p.cmple(self.hi).all()
    }

    /// Squared distance from `p` to the box (0 inside).
    #[inline]
    pub(crate) fn distance_squared(&self, p: DVec3) -> f64 {
        let d = (self.lo - p).max(p - self.hi).max(DVec3::ZERO);
        d.length_squared()
    }
}

/// A posed mesh in world coordinates with its refitted tree.
pub(crate) struct World<'a> {
    pub(crate) faces: &'a [[u32; 3]],
    pub(crate) vertices: Vec<DVec3>,
    /// The tree in [`TreeShape`] order (the root is the last node).
    pub(crate) nodes: Vec<Node>,
    /// Largest absolute world coordinate (scale of the rounding slack).
    pub(crate) magnitude: f64,
}

/// A tree's shape, validated and renumbered: the leaves first (`0..leaves`, in depth-first
/// order, left child first), then the internal nodes in depth-first post-order (children
/// before their parent, the root last). It depends only on the tree's links (and the face count
/// it is checked against), not on its boxes: a many-body query refits it to each body's world
/// corners with two branch-free forward passes, with no stack and no
/// validation per body, and traversals walk memory mostly in one direction.
///
/// Made once per tree ([`TreeShape::new`]) and kept, it spares a query over rigid or refitted
/// bodies the validating walk of every tree (a read of every node in tree order, the costliest
/// step of a many-body frame of small bodies): see
/// [`crate::broad_phase::try_collide_many_shaped`].
///
/// ```
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// use gprox_query::broad_phase::TreeShape;
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let shape = TreeShape::new(&gprox_bvh::lbvh::build(&tri), &tri).unwrap();
/// assert_eq!(shape.face_count(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeShape {
    /// Face of every leaf.
    faces: Vec<u32>,
    /// `[left, right]` children of every internal node (node `faces.len() + k` is `links[k]`).
    links: Vec<[u32; 2]>,
    /// Index in the source tree's `nodes` of every node (leaves, then internal nodes): where a
    /// placement finds the node's box in the tree's own frame.
    source: Vec<u32>,
    /// Leaves below every internal node: `[first, count]` (they are consecutive, and so are the
    /// `count - 1` internal nodes of its subtree, which end at the node itself).
    spans: Vec<[u32; 2]>,
}

impl TreeShape {
    /// The shape of `bvh`, a tree over the faces of `mesh`: its links validated (every child in
    /// range, every node reached once, every leaf naming a face of `mesh`, no face named by two
    /// leaves) and renumbered.
    /// Errors name the tree as [`Side::A`].
    pub fn new(bvh: &Bvh, mesh: &TriMesh) -> Result<Self, CollideError> {
        Ok(Self::validate(bvh, mesh.face_count(), Side::A)?)
    }

    /// Number of leaves (the faces of the mesh it was made for).
    pub fn face_count(&self) -> usize {
        self.faces.len()
    }

    /// Number of nodes (leaves and internal nodes).
    pub fn node_count(&self) -> usize {
        self.faces.len() + self.links.len()
    }

    /// [`TreeShape::new`] over `faces` faces, naming the tree `object` in errors.
    pub(crate) fn validate(bvh: &Bvh, faces: usize, object: Side) -> Result<Self, WorldTreeError> {
        const UNSEEN: u32 = u32::MAX;
        const OPEN: u32 = u32::MAX - 1;
        // Internal nodes are numbered from 0 while walking, tagged with this bit, and shifted
        // past the leaves at the end.
        const INTERNAL: u32 = 1 << 31;
        let src = &bvh.nodes;
        let mut leaf_faces: Vec<u32> = Vec::with_capacity(src.len().div_ceil(2));
        let mut links: Vec<[u32; 2]> = Vec::with_capacity(src.len() / 2);
        // Source node of every leaf and of every internal node, in their new order.
        let mut leaf_source: Vec<u32> = Vec::with_capacity(src.len().div_ceil(2));
        let mut link_source: Vec<u32> = Vec::with_capacity(src.len() / 2);
        // New index of every source node (or UNSEEN / OPEN while its subtree is being walked).
        let mut index = vec![UNSEEN; src.len()];
        // Faces met at a leaf so far, one bit each.
        let mut seen = vec![0u64; faces.div_ceil(64)];
        // (node, children done), depth first, left child first.
        let mut stack = vec![(0u32, false)];
        while let Some((i, done)) = stack.pop() {
            let s = src[i as usize];
            if done {
                index[i as usize] = INTERNAL | links.len() as u32;
                links.push([index[s.left as usize], index[s.right as usize]]);
                link_source.push(i);
                continue;
            }
            if index[i as usize] != UNSEEN {
                return Err(WorldTreeError::InvalidTree { object, node: i });
            }
            if s.right == LEAF {
                if s.left as usize >= faces {
                    return Err(WorldTreeError::FaceOutOfRange {
                        object,
                        face: s.left,
                    });
                }
                // Every face under one leaf only: a face named twice leaves another uncovered.
                let (word, bit) = (s.left as usize / 64, 1u64 << (s.left % 64));
                if seen[word] & bit != 0 {
                    return Err(WorldTreeError::DuplicateFace {
                        object,
                        face: s.left,
                    });
                }
                seen[word] |= bit;
                index[i as usize] = leaf_faces.len() as u32;
                leaf_faces.push(s.left);
                leaf_source.push(i);
            } else {
                index[i as usize] = OPEN;
                for c in [s.left, s.right] {
                    if c as usize >= src.len() {
                        return Err(WorldTreeError::InvalidTree { object, node: c });
                    }
                }
                stack.push((i, true));
                stack.push((s.right, false));
                stack.push((s.left, false));
            }
        }
        // At most 2^31 nodes fit the tag; trees are far smaller (u32 node indices, 2n - 1).
        let leaves = leaf_faces.len() as u32;
        for c in links.iter_mut().flatten() {
            if *c & INTERNAL != 0 {
                *c = leaves + (*c & !INTERNAL);
            }
        }
        leaf_source.append(&mut link_source);
        // Children come before their parent: one forward pass.
        let span = |spans: &[[u32; 2]], c: u32| match c.checked_sub(leaves) {
            None => [c, 1],
            Some(k) => spans[k as usize],
        };
        let mut spans: Vec<[u32; 2]> = Vec::with_capacity(links.len());
        for &[l, r] in &links {
            let ([first, n], [_, m]) = (span(&spans, l), span(&spans, r));
            spans.push([first, n + m]);
        }
        Ok(Self {
            faces: leaf_faces,
            links,
            source: leaf_source,
            spans,
        })
    }

    /// One value per node, into `out` (cleared first; its allocation is reused): `leaf(face)`
    /// for the leaves, then `join(link, left, right)` for the internal nodes, children first
    /// (index `i` of the result is node `i`).
    pub(crate) fn refit_into<B>(
        &self,
        mut out: Vec<B>,
        leaf: impl FnMut(u32) -> B,
        mut join: impl FnMut([u32; 2], &B, &B) -> B,
    ) -> Vec<B> {
        out.clear();
        out.reserve(self.faces.len() + self.links.len());
        out.extend(self.faces.iter().copied().map(leaf));
        for &link in &self.links {
            let b = join(link, &out[link[0] as usize], &out[link[1] as usize]);
            out.push(b);
        }
        out
    }

    /// Number of leaves: nodes `0..leaves()` are leaves.
    #[inline]
    pub(crate) fn leaves(&self) -> u32 {
        self.faces.len() as u32
    }

    /// Face of every leaf.
    #[inline]
    pub(crate) fn faces(&self) -> &[u32] {
        &self.faces
    }

    /// Children `[left, right]` of every internal node (node `leaves() + k` is entry `k`).
    #[inline]
    pub(crate) fn links(&self) -> &[[u32; 2]] {
        &self.links
    }

    /// Index in the source tree's `nodes` of every node.
    #[inline]
    pub(crate) fn source(&self) -> &[u32] {
        &self.source
    }

    /// [`TreeShape::refit_into`] for the subtree of node `k` only, into `out` (as long as the
    /// tree): its leaves, then its internal nodes, children first.
    #[inline]
    pub(crate) fn refit_subtree<B>(
        &self,
        k: u32,
        out: &mut [B],
        leaf: impl Fn(u32) -> B,
        join: impl Fn([u32; 2], &B, &B) -> B,
    ) {
        let leaves = self.leaves() as usize;
        let Some(j) = (k as usize).checked_sub(leaves) else {
            out[k as usize] = leaf(self.faces[k as usize]);
            return;
        };
        let [first, count] = self.spans[j].map(|v| v as usize);
        let span = first..first + count;
        for (o, &f) in out[span.clone()].iter_mut().zip(&self.faces[span]) {
            *o = leaf(f);
        }
        // The `count - 1` internal nodes of the subtree end at `j`.
        for i in j + 2 - count..j + 1 {
            let link = self.links[i];
            out[leaves + i] = join(link, &out[link[0] as usize], &out[link[1] as usize]);
        }
    }

    /// Number of leaves below node `k`.
    #[inline]
    pub(crate) fn leaves_below(&self, k: u32) -> u32 {
        k.checked_sub(self.leaves())
            .map_or(1, |j| self.spans[j as usize][1])
    }

    /// Index of the root (the last node).
    #[inline]
    pub(crate) fn root(&self) -> u32 {
        (self.faces.len() + self.links.len()) as u32 - 1
    }
}

/// The world vertices of a posed mesh — exactly the corners every exact test sees — into `out`
/// (cleared first; its allocation is reused).
pub(crate) fn world_vertices_into(o: &CollisionObject<'_>, mut out: Vec<DVec3>) -> Vec<DVec3> {
    out.clear();
    out.extend(
        o.mesh
            .positions()
            .iter()
            .map(|&p| transform_point(&o.pose, p)),
    );
    out
}

/// A tree's [`TreeShape`] with the links it was made from.
struct KnownShape {
    faces: usize,
    links: Vec<[u32; 2]>,
    shape: Arc<TreeShape>,
}

/// How many shapes [`recent_shape`] remembers.
const KNOWN_SHAPES: usize = 4;

/// The shapes of the trees seen last, newest last.
static KNOWN: Mutex<Vec<Arc<KnownShape>>> = Mutex::new(Vec::new());

/// [`TreeShape::validate`] for `bvh`, remembered: a deforming model refits its tree every frame but
/// keeps its links, so its shape (a validating walk that reads the nodes in tree order) is made
/// once. A remembered shape is used only for a tree whose links equal the ones it was made from
/// (compared in full, in one sequential pass) over the same face count: the shape depends on
/// nothing else.
fn recent_shape(bvh: &Bvh, faces: usize, object: Side) -> Result<Arc<TreeShape>, WorldTreeError> {
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let same = |k: &KnownShape| {
        k.faces == faces
            && k.links.len() == bvh.nodes.len()
            && k.links
                .iter()
                .zip(&bvh.nodes)
                .all(|(l, n)| l[0] == n.left && l[1] == n.right)
    };
    if let Some(k) = known.iter().rev().find(|k| same(k)) {
        return Ok(k.shape.clone());
    }
    let shape = Arc::new(TreeShape::validate(bvh, faces, object)?);
    let entry = Arc::new(KnownShape {
        faces,
        links: bvh.nodes.iter().map(|n| [n.left, n.right]).collect(),
        shape: shape.clone(),
    });
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if known.len() == KNOWN_SHAPES {
        known.remove(0);
    }
    known.push(entry);
    Ok(shape)
}

/// How many buffers of each kind are kept from dropped [`World`]s.
const SPARE_BUFFERS: usize = 8;

/// The buffers of dropped [`World`]s, reused by the next ones: a query builds and drops worlds
/// of the same sizes every frame, and fresh allocations that large go back to the operating
/// system when freed and fault in again page by page: on the deforming tori (2 × 5,000
/// triangles) that was two thirds of `IntersectionSweep::new`. One pool for all threads (a
/// pair query builds its two worlds on two threads and drops them on one).
struct Spare {
    vertices: Vec<Vec<DVec3>>,
    nodes: Vec<Vec<Node>>,
}

static SPARE: Mutex<Spare> = Mutex::new(Spare {
    vertices: Vec::new(),
    nodes: Vec::new(),
});

impl Drop for World<'_> {
    fn drop(&mut self) {
        let (vertices, nodes) = (
            std::mem::take(&mut self.vertices),
            std::mem::take(&mut self.nodes),
        );
        let mut s = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if s.vertices.len() < SPARE_BUFFERS {
            s.vertices.push(vertices);
        }
        if s.nodes.len() < SPARE_BUFFERS {
            s.nodes.push(nodes);
        }
    }
}

impl<'a> World<'a> {
    /// Transforms the vertices and refits the tree (validating its links: every child in
    /// range, every node reached once, every leaf naming an existing face).
    pub(crate) fn new(o: &CollisionObject<'a>, object: Side) -> Result<Self, WorldTreeError> {
        let shape = recent_shape(o.bvh, o.mesh.face_count(), object)?;
        Ok(Self::with_shape(o, &shape))
    }

    /// Transforms the vertices and refits `shape` (which must be `o`'s tree's, checked against
    /// `o`'s mesh) to them.
    pub(crate) fn with_shape(o: &CollisionObject<'a>, shape: &TreeShape) -> Self {
        let faces = o.mesh.faces();
        let (vertices, nodes) = {
            let mut s = SPARE.lock().unwrap_or_else(|e| e.into_inner());
            (s.vertices.pop(), s.nodes.pop())
        };
        let vertices = world_vertices_into(o, vertices.unwrap_or_default());
        let nodes = shape.refit_into(
            nodes.unwrap_or_default(),
            |f| {
                let [a, b, c] = faces[f as usize].map(|v| vertices[v as usize]);
                Node {
                    lo: a.min(b).min(c),
                    hi: a.max(b).max(c),
                    left: f,
                    right: LEAF,
                }
            },
            |[left, right], l, r| Node {
                lo: l.lo.min(r.lo),
                hi: l.hi.max(r.hi),
                left,
                right,
            },
        );
        let root = &nodes[shape.root() as usize];
        let magnitude = root.lo.abs().max(root.hi.abs()).max_element();
        Self {
            faces,
            vertices,
            nodes,
            magnitude,
        }
    }

    /// Index of the root node (the last).
    #[inline]
    pub(crate) fn root(&self) -> u32 {
        self.nodes.len() as u32 - 1
    }

    /// The world corners of face `f`.
    #[inline]
    pub(crate) fn triangle(&self, f: u32) -> [DVec3; 3] {
        self.faces[f as usize].map(|v| self.vertices[v as usize])
    }

    /// [`point_triangle_distance`] from `p` to face `f`. The corners are written corner by
    /// corner where the distance reads them: a triangle returned by value was copied in
    /// 16-byte pieces across its 24-byte corners, and reading those back stalled on store
    /// forwarding (about an eighth of the image-space depth pass).
    #[inline]
    pub(crate) fn point_distance(&self, p: DVec3, f: u32) -> (f64, DVec3) {
        let mut t = [DVec3::ZERO; 3];
        for (c, &v) in t.iter_mut().zip(&self.faces[f as usize]) {
            *c = self.vertices[v as usize];
        }
        point_triangle_distance(p, &t)
    }
}

impl From<WorldTreeError> for CollideError {
    fn from(e: WorldTreeError) -> Self {
        use WorldTreeError as W;
        match e {
            W::InvalidTree { object, node } => Self::InvalidTree { side: object, node },
            W::FaceOutOfRange { object, face } => Self::FaceOutOfRange { side: object, face },
            W::DuplicateFace { object, face } => Self::DuplicateFace { side: object, face },
        }
    }
}

/// A malformed tree met while refitting it in world space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorldTreeError {
    /// A node links to a child out of range, or a node is reached twice.
    InvalidTree {
        /// Which object.
        object: Side,
        /// The offending node index.
        node: u32,
    },
    /// A leaf names a face the mesh does not have.
    FaceOutOfRange {
        /// Which object.
        object: Side,
        /// The face index.
        face: u32,
    },
    /// Two leaves name the same face.
    DuplicateFace {
        /// Which object.
        object: Side,
        /// The face index.
        face: u32,
    },
}
