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

use super::{BoxMap, WorldAabb};
use crate::collide::{CollideError, CollisionObject, GATHER};
use crate::world::{world_vertices_into, TreeShape};

/// A closed f32 box.
#[derive(Clone, Copy, Debug)]
struct Box32 {
    lo: Vec3A,
    hi: Vec3A,
}

impl Box32 {
    /// The empty box (`lo = +∞`, `hi = -∞`): near nothing in [`world_pairs`], and the
    /// identity of [`Box32::union`].
    const EMPTY: Self = Self {
        lo: Vec3A::INFINITY,
        hi: Vec3A::NEG_INFINITY,
    };

    /// The smallest box holding both.
    #[inline(always)]
    fn union(&self, o: &Self) -> Self {
        Self {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    fn is_empty(&self) -> bool {
        self.lo.cmpgt(self.hi).any()
    }
}

/// Subtrees of at most this many leaves are refitted whole, not examined node by node.
const SMALL_SUBTREE: u32 = 64;

/// Bodies of at most this many faces are refitted whole.
const SMALL_BODY: u32 = 1024;

/// The boxes of a body's tree refitted to its world corners (`leaf` gives a leaf's box from its
/// face) where they can reach a body of `near`, into `boxes` (its allocation reused).
///
/// Top down from the root, each node's box in the tree's own frame is mapped to the world
/// ([`BoxMap`], padded for rounding and half the margin, as the broad phase maps the root):
/// - where that box meets none of `near`, no face below the node can touch those bodies: the
///   node gets [`Box32::EMPTY`] (never near, so the traversal never reads below it);
/// - where it lies inside one of them, or the subtree is small, the subtree is refitted whole
///   (one forward pass over its consecutive nodes, as the full refit runs);
/// - elsewhere (the node straddles the border of the region) its children are examined, and it
///   then takes the union of their boxes.
///
/// A body that reaches into a small part of another is refitted there only (two interlocked
/// tori: a fifth to a half of each tree), and only the nodes along the border are mapped.
///
/// `Err(boxes)` when the tree is not the one `shape` was made from (node count, root, or the
/// links and faces of an examined node): the caller then refits everything, which does not
/// depend on the tree.
fn refit_near(
    shape: &TreeShape,
    o: &CollisionObject<'_>,
    (map, near): (&BoxMap, &[WorldAabb]),
    mut boxes: Vec<Box32>,
    [stack, border]: [&mut Vec<u32>; 2],
    leaf: impl Fn(u32) -> Box32,
) -> Result<Vec<Box32>, Vec<Box32>> {
    let (nodes, source) = (&o.bvh.nodes, shape.source());
    // The tree's root is node 0.
    if nodes.len() != shape.node_count() || source[shape.root() as usize] != 0 {
        return Err(boxes);
    }
    // Grows only: nodes below an empty one keep whatever a previous body left (never read).
    boxes.resize(nodes.len(), Box32::EMPTY);
    let leaves = shape.leaves();
    stack.clear();
    stack.push(shape.root());
    // Straddling internal nodes, parents before children.
    border.clear();
    while let Some(k) = stack.pop() {
        let node = &nodes[source[k as usize] as usize];
        let world = map.map(&node.aabb);
        if !near.iter().any(|b| b.overlaps(&world)) {
            boxes[k as usize] = Box32::EMPTY;
        } else if k < leaves {
            let face = shape.faces()[k as usize];
            if !node.is_leaf() || node.left != face {
                return Err(boxes);
            }
            boxes[k as usize] = leaf(face);
        } else {
            let [l, r] = shape.links()[(k - leaves) as usize];
            if node.is_leaf() || [node.left, node.right] != [source[l as usize], source[r as usize]]
            {
                return Err(boxes);
            }
            if shape.leaves_below(k) <= SMALL_SUBTREE || near.iter().any(|b| b.contains(&world)) {
                shape.refit_subtree(k, &mut boxes, &leaf, |_, l, r| l.union(r));
            } else {
                border.push(k);
                stack.extend([r, l]);
            }
        }
    }
    for &k in border.iter().rev() {
        let [l, r] = shape.links()[(k - leaves) as usize];
        boxes[k as usize] = boxes[l as usize].union(&boxes[r as usize]);
    }
    Ok(boxes)
}

/// Buffers of dropped bodies, for the next placements: freed, the buffers of large bodies went
/// back to the system and faulted in again page by page (two 5,000-triangle tori: a third of a
/// many-body call). At most [`SPARE_BYTES`] are kept.
static SPARE: Mutex<Spare> = Mutex::new(Spare {
    buffers: Vec::new(),
    bytes: 0,
});

/// Most bytes of buffers [`SPARE`] keeps (a many-body call holds one set per candidate body).
const SPARE_BYTES: usize = 64 << 20;

/// The kept buffers and their total capacity in bytes.
struct Spare {
    buffers: Vec<Buffers>,
    bytes: usize,
}

/// The buffers of a [`Body`]: world vertices, the same rounded to f32, boxes, and the node
/// lists of [`refit_near`].
#[derive(Default)]
struct Buffers {
    vertices: Vec<DVec3>,
    rounded: Vec<Vec3A>,
    boxes: Vec<Box32>,
    walk: [Vec<u32>; 2],
}

impl Buffers {
    /// Capacity in bytes.
    fn bytes(&self) -> usize {
        self.vertices.capacity() * std::mem::size_of::<DVec3>()
            + self.rounded.capacity() * std::mem::size_of::<Vec3A>()
            + self.boxes.capacity() * std::mem::size_of::<Box32>()
            + self.walk.iter().map(Vec::capacity).sum::<usize>() * 4
    }
}

impl Spare {
    /// A kept set of buffers, or new empty ones: the last kept if its boxes hold `nodes`
    /// already, else the one that holds `nodes` with the fewest boxes, else the largest. The
    /// boxes are then only overwritten ([`refit_near`] leaves some untouched, so it fills the
    /// boxes beyond their length first: a cloth given a sphere's buffers every frame paid a
    /// quarter of its placement for that).
    fn take(nodes: usize) -> Buffers {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        let fits = |b: &Buffers| b.boxes.len() >= nodes;
        let pick = match spare.buffers.last() {
            Some(b) if fits(b) => spare.buffers.len() - 1,
            _ => {
                let sizes = spare.buffers.iter().map(|b| b.boxes.len()).enumerate();
                let fitting = sizes
                    .clone()
                    .filter(|&(_, n)| n >= nodes)
                    .min_by_key(|&(_, n)| n);
                match fitting.or_else(|| sizes.max_by_key(|&(_, n)| n)) {
                    Some((i, _)) => i,
                    None => return Buffers::default(),
                }
            }
        };
        let buffers = spare.buffers.swap_remove(pick);
        spare.bytes -= buffers.bytes();
        buffers
    }
}

impl Drop for Body<'_> {
    fn drop(&mut self) {
        let buffers = std::mem::take(&mut self.buffers);
        let size = buffers.bytes();
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
    shape: &'a TreeShape,
    buffers: Buffers,
    /// Largest absolute coordinate of the root box (scale of the rounding slack).
    magnitude: f32,
}

impl<'a> Body<'a> {
    /// Places `o`, whose tree's validated shape is `shape`, to be traversed against the bodies
    /// whose world boxes ([`world_aabb`](super::world_aabb), padded by half the margin) `near`
    /// gives. A body of more than [`SMALL_BODY`] faces is refitted only where one of them can
    /// reach it ([`refit_near`]); a smaller one (`near` is not asked), or one whose tree is not
    /// the one `shape` was made from, is refitted whole.
    pub(super) fn new(
        o: &CollisionObject<'a>,
        shape: &'a TreeShape,
        near: impl FnOnce() -> Vec<WorldAabb>,
        margin: f64,
    ) -> Self {
        let faces = o.mesh.faces();
        let mut buffers = Spare::take(shape.node_count());
        buffers.vertices = world_vertices_into(o, std::mem::take(&mut buffers.vertices));
        // Rounded to nearest f32 and clamped to the finite range: both monotonic, so the
        // min/max of the rounded corners are the rounded exact min/max (see the module docs).
        let max = Vec3A::splat(f32::MAX);
        buffers.rounded.clear();
        buffers.rounded.extend(
            buffers
                .vertices
                .iter()
                .map(|v| v.as_vec3a().clamp(-max, max)),
        );
        let rounded = &buffers.rounded;
        let leaf = |f: u32| {
            let [a, b, c] = faces[f as usize].map(|v| rounded[v as usize]);
            Box32 {
                lo: a.min(b).min(c),
                hi: a.max(b).max(c),
            }
        };
        let boxes = std::mem::take(&mut buffers.boxes);
        let [stack, border] = &mut buffers.walk;
        let near = match shape.leaves() > SMALL_BODY {
            true => near(),
            false => Vec::new(),
        };
        let boxes = match near.is_empty() {
            true => Err(boxes),
            false => {
                let map = BoxMap::new(o, margin);
                refit_near(shape, o, (&map, &near), boxes, [stack, border], leaf)
            }
        };
        buffers.boxes =
            boxes.unwrap_or_else(|boxes| shape.refit_into(boxes, leaf, |_, l, r| l.union(r)));
        let root = buffers.boxes[shape.root() as usize];
        // An empty root (nothing near) has no magnitude.
        let magnitude = match root.is_empty() {
            true => 0.0,
            false => root.lo.abs().max(root.hi.abs()).max_element(),
        };
        Self {
            faces,
            shape,
            buffers,
            magnitude,
        }
    }

    /// Writes the world corners of face `f` into `out`, corner by corner (see [`test_leaves`]).
    #[inline(always)]
    fn triangle_into(&self, f: u32, out: &mut [DVec3; 3]) {
        for (c, &v) in out.iter_mut().zip(&self.faces[f as usize]) {
            *c = self.buffers.vertices[v as usize];
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
    if !near(
        &a.buffers.boxes[root[0] as usize],
        &b.buffers.boxes[root[1] as usize],
    ) {
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
                0 => &b.buffers.boxes[pair[1] as usize],
                _ => &a.buffers.boxes[pair[0] as usize],
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
            boxes: &body.buffers.boxes,
            links: body.shape.links(),
            leaves: body.shape.leaves(),
        }
    }
}

/// The pair query's input checks for a body of a many-body query.
pub(super) fn check(o: &CollisionObject<'_>) -> Result<(), CollideError> {
    CollisionObject::new(o.mesh, o.bvh, o.pose).map(|_| ())
}
