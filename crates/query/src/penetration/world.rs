//! An object in world coordinates: its f64 world vertices (from
//! [`gprox_geometry::transform::transform_point`], bit-identical to what every exact test sees)
//! and its LBVH's topology refitted to them, with exact f64 boxes.
//!
//! Refitting in world space costs one pass over the nodes per query (a few tens of µs for
//! 5,000 triangles) and needs no padding at all: a leaf box is the exact min/max of its three
//! world corners, so every box contains its world triangles exactly — the same guarantee the
//! padded box mapping of `collide/frame.rs` gives, without its rounding analysis.

use glam::DVec3;
use gprox_bvh::LEAF;
use gprox_geometry::transform::transform_point;
use gprox_geometry::tri_distance::point_triangle_distance;

use super::PenetrationError;
use crate::collide::{CollisionObject, Side};

/// A node of the world tree: exact f64 box, children (or `left` = face and `right == LEAF`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) lo: DVec3,
    pub(super) hi: DVec3,
    pub(super) left: u32,
    pub(super) right: u32,
}

impl Node {
    #[inline]
    pub(super) fn is_leaf(&self) -> bool {
        self.right == LEAF
    }

    /// Whether the closed box contains `p`.
    #[inline]
    pub(super) fn contains(&self, p: DVec3) -> bool {
        self.lo.cmple(p).all() && p.cmple(self.hi).all()
    }

    /// Squared distance from `p` to the box (0 inside).
    #[inline]
    fn distance_squared(&self, p: DVec3) -> f64 {
        let d = (self.lo - p).max(p - self.hi).max(DVec3::ZERO);
        d.length_squared()
    }
}

/// A posed mesh in world coordinates with its refitted tree.
pub(super) struct World<'a> {
    pub(super) faces: &'a [[u32; 3]],
    pub(super) vertices: Vec<DVec3>,
    pub(super) nodes: Vec<Node>,
    /// Largest absolute world coordinate (scale of the rounding slack).
    pub(super) magnitude: f64,
}

/// The nearest face to a point.
#[derive(Clone, Copy, Debug)]
pub(super) struct Nearest {
    pub(super) distance: f64,
    pub(super) point: DVec3,
    pub(super) face: u32,
}

impl<'a> World<'a> {
    /// Transforms the vertices and refits the tree (validating its links: every child in
    /// range, every node reached once, every leaf naming an existing face).
    pub(super) fn new(o: &CollisionObject<'a>, object: Side) -> Result<Self, PenetrationError> {
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
                    return Err(PenetrationError::InvalidTree { object, node: i });
                }
                seen[i as usize] = true;
                let f = faces
                    .get(s.left as usize)
                    .ok_or(PenetrationError::FaceOutOfRange {
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
                    return Err(PenetrationError::InvalidTree { object, node: i });
                }
                seen[i as usize] = true;
                for c in [s.left, s.right] {
                    if c as usize >= src.len() {
                        return Err(PenetrationError::InvalidTree { object, node: c });
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
    pub(super) fn triangle(&self, f: u32) -> [DVec3; 3] {
        self.faces[f as usize].map(|v| self.vertices[v as usize])
    }

    /// The face nearest to `p` by [`point_triangle_distance`], smallest face id among equal
    /// distances: exactly the minimum a loop over all faces finds. `seeds` (faces known to be
    /// near, e.g. those the inside ray crossed) give the first bound; then depth-first, nearer
    /// child first. A subtree is skipped only when its box is farther than the best distance
    /// plus a bound on the rounding of the box and triangle distances (so the minimum is never
    /// pruned, and a seed never hides a smaller face id at the same distance).
    pub(super) fn nearest(&self, p: DVec3, seeds: &[u32], stack: &mut Vec<(u32, f64)>) -> Nearest {
        let slack = 1e-13 * (self.magnitude + p.abs().max_element());
        let mut best = Nearest {
            distance: f64::INFINITY,
            point: p,
            face: u32::MAX,
        };
        let mut cut = f64::INFINITY;
        let offer = |face: u32, best: &mut Nearest, cut: &mut f64| {
            let (d, q) = point_triangle_distance(p, &self.triangle(face));
            if d < best.distance || (d == best.distance && face < best.face) {
                *best = Nearest {
                    distance: d,
                    point: q,
                    face,
                };
                let r = d + slack;
                *cut = r * r * (1.0 + 1e-12);
            }
        };
        for &f in seeds {
            offer(f, &mut best, &mut cut);
        }
        stack.clear();
        stack.push((0, self.nodes[0].distance_squared(p)));
        while let Some((i, lb)) = stack.pop() {
            if lb > cut {
                continue;
            }
            let n = &self.nodes[i as usize];
            if n.is_leaf() {
                offer(n.left, &mut best, &mut cut);
                continue;
            }
            let (l, r) = (n.left, n.right);
            let dl = self.nodes[l as usize].distance_squared(p);
            let dr = self.nodes[r as usize].distance_squared(p);
            let (near, far) = if dl <= dr {
                ((l, dl), (r, dr))
            } else {
                ((r, dr), (l, dl))
            };
            if far.1 <= cut {
                stack.push(far);
            }
            if near.1 <= cut {
                stack.push(near);
            }
        }
        best
    }
}
