//! An object in world coordinates: its f64 world vertices (from
//! [`gprox_geometry::transform::transform_point`], bit-identical to what every exact test sees)
//! and its LBVH's topology refitted to them, with exact f64 boxes.
//!
//! Used by the penetration query (inside tests and nearest faces) and by the broad phase's
//! narrow phase (many small rigid bodies: one refit per body and frame, then plain box tests).
//! Refitting in world space costs one pass over the nodes per query (a few tens of µs for
//! 5,000 triangles) and needs no padding at all: a leaf box is the exact min/max of its three
//! world corners, so every box contains its world triangles exactly — the same guarantee the
//! padded box mapping of `collide/frame.rs` gives, without its rounding analysis.

use glam::DVec3;
use gprox_bvh::LEAF;
use gprox_geometry::transform::transform_point;

use crate::collide::{CollisionObject, Side};

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
    pub(crate) nodes: Vec<Node>,
    /// Largest absolute world coordinate (scale of the rounding slack).
    pub(crate) magnitude: f64,
}

impl<'a> World<'a> {
    /// Transforms the vertices and refits the tree (validating its links: every child in
    /// range, every node reached once, every leaf naming an existing face).
    pub(crate) fn new(o: &CollisionObject<'a>, object: Side) -> Result<Self, WorldTreeError> {
        let faces = o.mesh.faces();
        let vertices: Vec<DVec3> = o
            .mesh
            .positions()
            .iter()
            .map(|&p| transform_point(&o.pose, p))
            .collect();
        let src = &o.bvh.nodes;
        let empty = Node {
            lo: DVec3::INFINITY,
            hi: DVec3::NEG_INFINITY,
            left: 0,
            right: LEAF,
        };
        let mut nodes = vec![empty; src.len()];
        let mut seen = vec![false; src.len()];
        // Post-order: (node, children done).
        let mut stack = vec![(0u32, false)];
        while let Some((i, done)) = stack.pop() {
            let s = src[i as usize];
            if s.right == LEAF {
                if seen[i as usize] {
                    return Err(WorldTreeError::InvalidTree { object, node: i });
                }
                seen[i as usize] = true;
                let f = faces
                    .get(s.left as usize)
                    .ok_or(WorldTreeError::FaceOutOfRange {
                        object,
                        face: s.left,
                    })?;
                let [a, b, c] = f.map(|v| vertices[v as usize]);
                nodes[i as usize] = Node {
                    lo: a.min(b).min(c),
                    hi: a.max(b).max(c),
                    left: s.left,
                    right: LEAF,
                };
            } else if done {
                let (l, r) = (nodes[s.left as usize], nodes[s.right as usize]);
                nodes[i as usize] = Node {
                    lo: l.lo.min(r.lo),
                    hi: l.hi.max(r.hi),
                    left: s.left,
                    right: s.right,
                };
            } else {
                if seen[i as usize] {
                    return Err(WorldTreeError::InvalidTree { object, node: i });
                }
                seen[i as usize] = true;
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
        let magnitude = nodes[0].lo.abs().max(nodes[0].hi.abs()).max_element();
        Ok(Self {
            faces,
            vertices,
            nodes,
            magnitude,
        })
    }

    /// The world corners of face `f`.
    #[inline]
    pub(crate) fn triangle(&self, f: u32) -> [DVec3; 3] {
        self.faces[f as usize].map(|v| self.vertices[v as usize])
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
}
