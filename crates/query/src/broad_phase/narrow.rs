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

use std::sync::Mutex;

use glam::{DVec3, Vec3A};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;

use crate::collide::{CollideError, CollisionObject, GATHER};
use crate::world::{world_vertices_into, TreeShape};

/// A closed f32 box.
#[derive(Clone, Copy, Debug)]
struct Box32 {
    lo: Vec3A,
    hi: Vec3A,
}

/// Buffers (world vertices, boxes) of dropped bodies, for the next placements: freed, the
/// buffers of large bodies went back to the system and faulted in again page by page
/// (two 5,000-triangle tori: a third of a many-body call). At most [`SPARE_BYTES`] are kept.
static SPARE: Mutex<Spare> = Mutex::new(Spare {
    buffers: Vec::new(),
    bytes: 0,
});

/// Most bytes of buffers [`SPARE`] keeps (a many-body call holds one pair per candidate body).
const SPARE_BYTES: usize = 64 << 20;

/// The kept buffers and their total capacity in bytes.
struct Spare {
    buffers: Vec<(Vec<DVec3>, Vec<Box32>)>,
    bytes: usize,
}

/// Capacity in bytes of a buffer pair.
fn bytes((v, b): &(Vec<DVec3>, Vec<Box32>)) -> usize {
    v.capacity() * std::mem::size_of::<DVec3>() + b.capacity() * std::mem::size_of::<Box32>()
}

impl Spare {
    /// A kept buffer pair, or two new empty ones.
    fn take() -> (Vec<DVec3>, Vec<Box32>) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        let buffers = spare.buffers.pop().unwrap_or_default();
        spare.bytes -= bytes(&buffers);
        buffers
    }
}

impl Drop for Body<'_> {
    fn drop(&mut self) {
        let buffers = (
            std::mem::take(&mut self.vertices),
            std::mem::take(&mut self.boxes),
        );
        let size = bytes(&buffers);
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.bytes + size <= SPARE_BYTES {
            spare.bytes += size;
            spare.buffers.push(buffers);
        }
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
        let (vertices, boxes) = Spare::take();
        let vertices = world_vertices_into(o, vertices);
        // Rounded to nearest f32 and clamped to the finite range: both monotonic, so the
        // min/max of the rounded corners are the rounded exact min/max (see the module docs).
        let max = Vec3A::splat(f32::MAX);
        let rounded: Vec<Vec3A> = vertices
            .iter()
            .map(|v| v.as_vec3a().clamp(-max, max))
            .collect();
        let boxes = shape.refit_into(
            boxes,
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

    /// Writes the world corners of face `f` into `out`, corner by corner (see [`test_leaves`]).
    #[inline(always)]
    fn triangle_into(&self, f: u32, out: &mut [DVec3; 3]) {
        for (c, &v) in out.iter_mut().zip(&self.faces[f as usize]) {
            *c = self.vertices[v as usize];
        }
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
    let root = [a.shape.root(), b.shape.root()];
    if !near(&a.boxes[root[0] as usize], &b.boxes[root[1] as usize]) {
        return out;
    }
    let trees = [Tree::of(a), Tree::of(b)];
    let test =
        |leaves: &[[u32; 2]], out: &mut Vec<[u32; 2]>| test_leaves((a, b), leaves, margin, out);
    if root[0] < trees[0].leaves && root[1] < trees[1].leaves {
        test(&[root], &mut out);
        return out;
    }
    // Near pairs to expand (`stack`), expanded a batch of up to `BATCH` at a time, and near
    // leaf pairs (`leaves`), tested once `BATCH` have gathered. The pairs of a batch are
    // independent, so the processor overlaps their box loads; which child pairs are near, or
    // leaf pairs, is as good as random, so every child pair is written to both lists and each
    // list's end moves past the ones that belong there, with no branch on them. A pair of two
    // inner nodes is expanded on both sides at once (four child pairs: half the expansions,
    // each with twice the independent box tests; many-body collide-all −18 %, two-tori −11 %,
    // docs/benchmarks.md, session 22). Memory stays bounded: at most `4 BATCH` pairs per level
    // of the trees.
    const BATCH: usize = 256;
    let mut stack = vec![root];
    let mut next = vec![[0u32; 2]; 4 * BATCH];
    let mut leaves = vec![[0u32; 2]; 5 * BATCH];
    let mut found = 0;
    while !stack.is_empty() {
        let from = stack.len().saturating_sub(BATCH);
        let mut n = 0;
        for &pair in &stack[from..] {
            let leaf = [pair[0] < trees[0].leaves, pair[1] < trees[1].leaves];
            if !(leaf[0] | leaf[1]) {
                // Both inner nodes: the four child pairs.
                let ca = trees[0].links[(pair[0] - trees[0].leaves) as usize];
                let cb = trees[1].links[(pair[1] - trees[1].leaves) as usize];
                for x in ca {
                    let bx = &trees[0].boxes[x as usize];
                    let lx = x < trees[0].leaves;
                    for y in cb {
                        let near = near(bx, &trees[1].boxes[y as usize]);
                        let both = lx & (y < trees[1].leaves);
                        next[n] = [x, y];
                        leaves[found] = [x, y];
                        n += usize::from(near & !both);
                        found += usize::from(near & both);
                    }
                }
                continue;
            }
            // One inner node and a leaf: descend side `k`, the inner one.
            let k = usize::from(leaf[0]);
            let other = match k {
                0 => &b.boxes[pair[1] as usize],
                _ => &a.boxes[pair[0] as usize],
            };
            let (tree, other_leaf) = (&trees[k], leaf[1 - k]);
            let c = tree.links[(pair[k] - tree.leaves) as usize];
            for child in c {
                let mut pair = pair;
                pair[k] = child;
                let near = near(&tree.boxes[child as usize], other);
                let both = other_leaf & (child < tree.leaves);
                next[n] = pair;
                leaves[found] = pair;
                n += usize::from(near & !both);
                found += usize::from(near & both);
            }
        }
        stack.truncate(from);
        stack.extend_from_slice(&next[..n]);
        if found >= BATCH {
            test(&leaves[..found], &mut out);
            found = 0;
        }
    }
    test(&leaves[..found], &mut out);
    crate::pairs::sort_pairs(&mut out);
    out
}

/// The leaf tests of [`world_pairs`]: each pair `[i, j]` of `leaves` (leaf `i` of `a`, leaf `j`
/// of `b`) whose faces intersect (or come within `margin`) goes to `out` as its face pair.
///
/// The corners of [`GATHER`] pairs are copied out first and tested after (see [`GATHER`]).
fn test_leaves(
    (a, b): (&Body<'_>, &Body<'_>),
    leaves: &[[u32; 2]],
    margin: f64,
    out: &mut Vec<[u32; 2]>,
) {
    let mut tris = [[[DVec3::ZERO; 3]; 2]; GATHER];
    let mut faces = [[0u32; 2]; GATHER];
    for chunk in leaves.chunks(GATHER) {
        for ((&[i, j], t), f) in chunk.iter().zip(&mut tris).zip(&mut faces) {
            *f = [a.shape.faces()[i as usize], b.shape.faces()[j as usize]];
            a.triangle_into(f[0], &mut t[0]);
            b.triangle_into(f[1], &mut t[1]);
        }
        for ([ta, tb], &f) in tris.iter().zip(&faces).take(chunk.len()) {
            let hit = if margin > 0.0 {
                triangle_distance(ta, tb).distance <= margin
            } else {
                triangles_intersect(ta, tb)
            };
            if hit {
                out.push(f);
            }
        }
    }
}

/// One side of a [`world_pairs`] traversal: the placed body's boxes and its tree's links.
struct Tree<'t> {
    boxes: &'t [Box32],
    links: &'t [[u32; 2]],
    leaves: u32,
}

impl<'t> Tree<'t> {
    fn of(body: &'t Body<'_>) -> Self {
        Self {
            boxes: &body.boxes,
            links: body.shape.links(),
            leaves: body.shape.leaves(),
        }
    }
}

/// The pair query's input checks for a body of a many-body query.
pub(super) fn check(o: &CollisionObject<'_>) -> Result<(), CollideError> {
    CollisionObject::new(o.mesh, o.bvh, o.pose).map(|_| ())
}
