//! The narrow phase of many-body collision in world space.
//!
//! A pair query ([`crate::collide::try_collide_all`]) compares two trees through a padded box
//! mapping, paid per node pair. With many small rigid bodies every body takes part in a few
//! candidate pairs only, so it is cheaper to place each candidate body in the world once per
//! call: its f64 world vertices (exactly the corners the exact tests see) and its tree refitted
//! to them ([`Body`]), then to traverse every candidate pair with plain box tests. The leaf
//! test is the pair query's own (`triangles_intersect`, or `triangle_distance ≤ margin`), on the
//! same f64 corners, so the pair sets are identical.
//!
//! The boxes are f32: each is the exact f64 box of its world corners, every coordinate rounded
//! to the nearest f32 and clamped to the finite range. Rounding and clamping are monotonic, so
//! a rounded box is the rounded min/max of the rounded corners (one rounding per vertex, not per
//! node), and two boxes whose exact f64 versions overlap still overlap once rounded: the
//! traversal reaches every pair the exact boxes would (and the leaf test decides), at half the
//! memory of f64 boxes and with one SIMD compare per box test. With no margin the box test
//! needs no padding; with a margin every comparison gets the margin plus a relative slack that
//! covers the roundings (of the coordinates, of the margin, of the subtraction), each within
//! `2^-24` of the magnitudes involved; clamping moves two coordinates no closer together.

use glam::{DVec3, Vec3A};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;

use crate::collide::{CollideError, CollisionObject};
use crate::world::{world_vertices, TreeShape};

/// A closed f32 box.
#[derive(Clone, Copy, Debug)]
struct Box32 {
    lo: Vec3A,
    hi: Vec3A,
}

impl Box32 {
    /// Sum of the edge lengths (which node of a pair to descend).
    #[inline]
    fn size(&self) -> f32 {
        (self.hi - self.lo).element_sum()
    }
}

/// A body of a many-body query placed in world space: f64 world vertices and its tree's
/// [`TreeShape`] refitted to them, with f32 boxes (see the module docs).
pub(super) struct Body<'a> {
    faces: &'a [[u32; 3]],
    vertices: Vec<DVec3>,
    shape: &'a TreeShape,
    boxes: Vec<Box32>,
    /// Largest absolute coordinate of the root box (scale of the rounding slack).
    magnitude: f32,
}

impl<'a> Body<'a> {
    /// Places `o`, whose tree's validated shape is `shape`.
    pub(super) fn new(o: &CollisionObject<'a>, shape: &'a TreeShape) -> Self {
        let faces = o.mesh.faces();
        let vertices = world_vertices(o);
        // Rounded to nearest f32 and clamped to the finite range: both monotonic, so the
        // min/max of the rounded corners are the rounded exact min/max (see the module docs).
        let max = Vec3A::splat(f32::MAX);
        let rounded: Vec<Vec3A> = vertices
            .iter()
            .map(|v| v.as_vec3a().clamp(-max, max))
            .collect();
        let boxes = shape.refit(
            |f| {
                let [a, b, c] = faces[f as usize].map(|v| rounded[v as usize]);
                Box32 {
                    lo: a.min(b).min(c),
                    hi: a.max(b).max(c),
                }
            },
            |_, l, r| Box32 {
                lo: l.lo.min(r.lo),
                hi: l.hi.max(r.hi),
            },
        );
        let root = boxes[shape.root() as usize];
        let magnitude = root.lo.abs().max(root.hi.abs()).max_element();
        Self {
            faces,
            vertices,
            shape,
            boxes,
            magnitude,
        }
    }

    /// The world corners of face `f`.
    #[inline]
    fn triangle(&self, f: u32) -> [DVec3; 3] {
        self.faces[f as usize].map(|v| self.vertices[v as usize])
    }
}

/// Every intersecting (or within-`margin`) pair `[face of a, face of b]` of two placed bodies,
/// sorted.
pub(super) fn world_pairs(a: &Body<'_>, b: &Body<'_>, margin: f64) -> Vec<[u32; 2]> {
    // Box gap allowed: the margin, the slack of the exact tests' own rounding, and room for
    // the f32 roundings of both coordinates, of `reach` and of `lo - reach` (each within 2^-24
    // of the magnitudes involved; 2^-20 of them is ample). A reach beyond the f32 range turns
    // infinite: every box is then near, never NaN (the coordinates are finite).
    let reach = if margin > 0.0 {
        let mag = a.magnitude as f64 + b.magnitude as f64;
        let r = margin + 1e-14 * (mag + margin);
        (r + 2f64.powi(-20) * (mag + r)) as f32
    } else {
        0.0
    };
    let reach = Vec3A::splat(reach);
    // Both comparisons at once, no branch between them.
    let near =
        |x: &Box32, y: &Box32| ((x.lo - reach).cmple(y.hi) & (y.lo - reach).cmple(x.hi)).all();
    let mut out = Vec::new();
    let (mut i, mut j) = (a.shape.root(), b.shape.root());
    if !near(&a.boxes[i as usize], &b.boxes[j as usize]) {
        return out;
    }
    let (leaves_a, leaves_b) = (a.shape.leaves(), b.shape.leaves());
    let (links_a, links_b) = (a.shape.links(), b.shape.links());
    let mut stack = Vec::with_capacity(64);
    loop {
        let (x, y) = (&a.boxes[i as usize], &b.boxes[j as usize]);
        let (leaf_a, leaf_b) = (i < leaves_a, j < leaves_b);
        if leaf_a && leaf_b {
            let (fa, fb) = (a.shape.faces()[i as usize], b.shape.faces()[j as usize]);
            let (ta, tb) = (a.triangle(fa), b.triangle(fb));
            let hit = if margin > 0.0 {
                triangle_distance(&ta, &tb).distance <= margin
            } else {
                triangles_intersect(&ta, &tb)
            };
            if hit {
                out.push([fa, fb]);
            }
        } else if !leaf_a && (leaf_b || x.size() >= y.size()) {
            // Descend the larger node (by box extent), as the pair query does; go on with the
            // first child that is near, keep the other for later.
            let c = links_a[(i - leaves_a) as usize];
            let near_c = c.map(|k| near(&a.boxes[k as usize], y));
            if let Some((now, later)) = near_children(c, near_c) {
                if let Some(k) = later {
                    stack.push((k, j));
                }
                i = now;
                continue;
            }
        } else {
            let c = links_b[(j - leaves_b) as usize];
            let near_c = c.map(|k| near(x, &b.boxes[k as usize]));
            if let Some((now, later)) = near_children(c, near_c) {
                if let Some(k) = later {
                    stack.push((i, k));
                }
                j = now;
                continue;
            }
        }
        match stack.pop() {
            Some((p, q)) => (i, j) = (p, q),
            None => break,
        }
    }
    crate::pairs::sort_pairs(&mut out);
    out
}

/// The pair query's input checks for a body of a many-body query.
pub(super) fn check(o: &CollisionObject<'_>) -> Result<(), CollideError> {
    CollisionObject::new(o.mesh, o.bvh, o.pose).map(|_| ())
}

/// Of the children `c` of a descended node, the one to visit now and the one to keep for later,
/// given which are near the other node; `None` when neither is.
#[inline]
fn near_children(c: [u32; 2], near: [bool; 2]) -> Option<(u32, Option<u32>)> {
    match near {
        [true, true] => Some((c[0], Some(c[1]))),
        [true, false] => Some((c[0], None)),
        [false, true] => Some((c[1], None)),
        [false, false] => None,
    }
}
