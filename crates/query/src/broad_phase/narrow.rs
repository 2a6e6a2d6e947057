//! The narrow phase of many-body collision in world space.
//!
//! A pair query ([`crate::collide::try_collide_all`]) compares two trees through a padded box
//! mapping, paid per node pair. With many small rigid bodies every body takes part in a few
//! candidate pairs only, so it is cheaper to place each candidate body in the world once per
//! call: its f64 world vertices (exactly the corners the exact tests see) and its tree refitted
//! to them ([`World`]), then to traverse every candidate pair with plain box tests. The leaf
//! test is the pair query's own (`triangles_intersect`, or `triangle_distance ≤ margin`), on the
//! same f64 corners, so the pair sets are identical.
//!
//! Boxes are exact min/max of the world corners: with no margin, the box test needs no padding.
//! With a margin, every comparison gets the margin plus a relative rounding slack.

use glam::DVec3;
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;

use crate::collide::{CollideError, CollisionObject, Side};
pub(super) use crate::world::World;
use crate::world::{Node, WorldTreeError};

/// Every intersecting (or within-`margin`) pair `[face of a, face of b]` of two world-placed
/// objects, sorted.
pub(super) fn world_pairs(a: &World<'_>, b: &World<'_>, margin: f64) -> Vec<[u32; 2]> {
    let reach = if margin > 0.0 {
        margin + 1e-14 * (a.magnitude + b.magnitude + margin)
    } else {
        0.0
    };
    let near = |x: &Node, y: &Node| {
        (x.lo - DVec3::splat(reach)).cmple(y.hi).all()
            && (y.lo - DVec3::splat(reach)).cmple(x.hi).all()
    };
    let mut out = Vec::new();
    if !near(&a.nodes[0], &b.nodes[0]) {
        return out;
    }
    let mut stack = vec![(0u32, 0u32)];
    while let Some((i, j)) = stack.pop() {
        let (x, y) = (&a.nodes[i as usize], &b.nodes[j as usize]);
        match (x.is_leaf(), y.is_leaf()) {
            (true, true) => {
                let (ta, tb) = (a.triangle(x.left), b.triangle(y.left));
                let hit = if margin > 0.0 {
                    triangle_distance(&ta, &tb).distance <= margin
                } else {
                    triangles_intersect(&ta, &tb)
                };
                if hit {
                    out.push([x.left, y.left]);
                }
            }
            (true, false) => {
                for c in [y.left, y.right] {
                    if near(x, &b.nodes[c as usize]) {
                        stack.push((i, c));
                    }
                }
            }
            (false, true) => {
                for c in [x.left, x.right] {
                    if near(&a.nodes[c as usize], y) {
                        stack.push((c, j));
                    }
                }
            }
            (false, false) => {
                // Descend the larger node (by box extent), as the pair query does.
                let size = |n: &Node| (n.hi - n.lo).element_sum();
                if size(x) >= size(y) {
                    for c in [x.left, x.right] {
                        if near(&a.nodes[c as usize], y) {
                            stack.push((c, j));
                        }
                    }
                } else {
                    for c in [y.left, y.right] {
                        if near(x, &b.nodes[c as usize]) {
                            stack.push((i, c));
                        }
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// [`World::new`] for a body of a many-body query, with the pair query's input checks and
/// errors.
pub(super) fn world_of<'a>(o: &CollisionObject<'a>) -> Result<World<'a>, CollideError> {
    let checked = CollisionObject::new(o.mesh, o.bvh, o.pose)?;
    World::new(&checked, Side::A).map_err(|e| match e {
        WorldTreeError::InvalidTree { node, .. } => CollideError::InvalidTree {
            side: Side::A,
            node,
        },
        WorldTreeError::FaceOutOfRange { face, .. } => CollideError::FaceOutOfRange {
            side: Side::A,
            face,
        },
    })
}
