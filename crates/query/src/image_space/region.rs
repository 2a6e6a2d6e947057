//! Localisation (§4 of Hoff et al.): boxes that contain the intersection volume of two closed
//! meshes, tight and split where the contact is.
//!
//! The intersection `A ∩ B` of the two solids is compact, so its bounding box is that of its
//! boundary, and `∂(A ∩ B) ⊆ ((∂A ∩ B) ∪ (∂B ∩ A)) ∩ R` for any box `R ⊇ A ∩ B`. Starting
//! from the overlap of the two root boxes, `R` is replaced by the union of the boxes of both
//! trees, clipped to `R`, that cover the part of each surface inside the other solid (a leaf
//! that meets the other surface's leaf boxes, or a subtree that misses the other surface and
//! whose centre is inside the other mesh by the exact test) until it stops shrinking: every
//! step keeps `A ∩ B`. Surface outside the other solid — most of it, when two meshes only
//! graze or pass through each other's holes — is dropped subtree by subtree.
//!
//! Split: two of these boxes that overlap share a cell of a coarse grid over `R` (the index
//! of a point is monotone in it), so grouping the boxes by shared coarse cells (union–find)
//! keeps every connected piece of the covered surface in one group; the outer boundary of a
//! connected component of `A ∩ B` is connected, so each component lies in the box of one
//! group. The groups' boxes are the regions (made disjoint on the lattice by the caller).
//! A long face that spans two contacts joins them into one region (correct, less tight).

use glam::DVec3;

use crate::penetration::inside::{classify, Place, SEEDS};
use crate::world::World;

/// Coarse grid cells per axis of the split.
const SPLIT: usize = 16;
/// Most refinement passes.
const PASSES: usize = 8;

/// The refined box `R` and the boxes of the groups of surface inside it.
pub(crate) struct Localised {
    /// Box holding `A ∩ B` (the lattice is anchored at its low corner).
    pub(crate) lo: DVec3,
    /// One box per connected group of surface boxes, each inside `[lo, hi]`.
    pub(crate) groups: Vec<[DVec3; 2]>,
}

/// Boxes of `w`'s surface that may lie in the solid of `o`, clipped to `[lo, hi]`, appended
/// to `out`: a walk of `w`'s tree inside `[lo, hi]` carrying the front of `o`'s nodes that
/// overlap the current node (nodes of `o` larger than it are opened; at a leaf of `w`, all of
/// them down to leaves). A leaf that some leaf box of `o` overlaps is kept. A node that no leaf
/// box of `o` overlaps does not meet `∂o`, so its whole box lies on one side of it: one exact
/// inside test of its centre keeps or drops the node's box at once.
fn surface_in(w: &World<'_>, o: &World<'_>, lo: DVec3, hi: DVec3, out: &mut Vec<[DVec3; 2]>) {
    let overlap = |l: DVec3, h: DVec3, l2: DVec3, h2: DVec3| l.cmple(h2).all() && l2.cmple(h).all();
    let (mut ray, mut crossed) = (Vec::new(), ([0u32; SEEDS], 0usize));
    let mut todo = Vec::new();
    // (node of w, start of its front in `fronts`, end).
    let mut fronts: Vec<u32> = vec![o.root()];
    let mut stack = vec![(w.root(), 0usize, 1usize)];
    while let Some((i, f0, f1)) = stack.pop() {
        let n = w.nodes[i as usize];
        if !overlap(n.lo, n.hi, lo, hi) {
            continue;
        }
        let extent = |l: DVec3, h: DVec3| (h - l).max_element();
        let start = fronts.len();
        todo.clear();
        todo.extend_from_slice(&fronts[f0..f1]);
        while let Some(j) = todo.pop() {
            let m = &o.nodes[j as usize];
            if !overlap(m.lo, m.hi, n.lo, n.hi) {
                continue;
            }
            if m.is_leaf() || (!n.is_leaf() && extent(m.lo, m.hi) <= extent(n.lo, n.hi)) {
                fronts.push(j);
            } else {
                todo.push(m.left);
                todo.push(m.right);
            }
        }
        let end = fronts.len();
        let clipped = [n.lo.max(lo), n.hi.min(hi)];
        if start == end {
            let centre = (n.lo + n.hi) * 0.5;
            if classify(o, centre, &mut ray, &mut crossed) != Place::Outside {
                out.push(clipped);
            }
        } else if n.is_leaf() {
            out.push(clipped);
        } else {
            stack.push((n.right, start, end));
            stack.push((n.left, start, end));
        }
    }
}

/// Localises `A ∩ B` (see the module docs); `None` when the root boxes do not overlap or no
/// surface is left in the overlap (then `A ∩ B` is empty).
pub(crate) fn localise(wa: &World<'_>, wb: &World<'_>) -> Option<Localised> {
    let (ra, rb) = (&wa.nodes[wa.root() as usize], &wb.nodes[wb.root() as usize]);
    let (mut lo, mut hi) = (ra.lo.max(rb.lo), ra.hi.min(rb.hi));
    let mut boxes = Vec::new();
    for _ in 0..PASSES {
        if !lo.cmple(hi).all() {
            return None;
        }
        boxes.clear();
        surface_in(wa, wb, lo, hi, &mut boxes);
        surface_in(wb, wa, lo, hi, &mut boxes);
        let (l, h) = bounds(&boxes)?;
        if l == lo && h == hi {
            break;
        }
        (lo, hi) = (l, h);
    }
    // After the last pass the boxes may stick out of a shrunken `R` by nothing: they were
    // clipped to the previous `R` and their union is the new one.
    let groups = split(&boxes, lo, hi);
    Some(Localised { lo, groups })
}

/// The box of all `boxes` (`None` when there are none).
fn bounds(boxes: &[[DVec3; 2]]) -> Option<(DVec3, DVec3)> {
    let first = boxes.first()?;
    Some(
        boxes
            .iter()
            .fold((first[0], first[1]), |(l, h), b| (l.min(b[0]), h.max(b[1]))),
    )
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

/// Groups `boxes` (all inside `[lo, hi]`) by shared coarse cells; one box per group, sorted.
fn split(boxes: &[[DVec3; 2]], lo: DVec3, hi: DVec3) -> Vec<[DVec3; 2]> {
    let ext = hi - lo;
    let cell = |p: DVec3| -> [usize; 3] {
        [0, 1, 2].map(|a| {
            if ext[a] > 0.0 {
                (((p[a] - lo[a]) / ext[a] * SPLIT as f64).floor().max(0.0) as usize).min(SPLIT - 1)
            } else {
                0
            }
        })
    };
    let mut owner = vec![u32::MAX; SPLIT * SPLIT * SPLIT];
    let mut parent: Vec<u32> = (0..boxes.len() as u32).collect();
    for (i, b) in boxes.iter().enumerate() {
        let (c0, c1) = (cell(b[0]), cell(b[1]));
        for z in c0[2]..=c1[2] {
            for y in c0[1]..=c1[1] {
                for x in c0[0]..=c1[0] {
                    let o = &mut owner[(z * SPLIT + y) * SPLIT + x];
                    if *o == u32::MAX {
                        *o = i as u32;
                    } else {
                        let (r1, r2) = (find(&mut parent, *o), find(&mut parent, i as u32));
                        parent[r1.max(r2) as usize] = r1.min(r2);
                    }
                }
            }
        }
    }
    let mut group_box: Vec<Option<[DVec3; 2]>> = vec![None; boxes.len()];
    for (i, b) in boxes.iter().enumerate() {
        let r = find(&mut parent, i as u32) as usize;
        group_box[r] = Some(match group_box[r] {
            None => *b,
            Some(g) => [g[0].min(b[0]), g[1].max(b[1])],
        });
    }
    let mut groups: Vec<[DVec3; 2]> = group_box.into_iter().flatten().collect();
    groups.sort_by(|a, b| {
        let key = |g: &[DVec3; 2]| [g[0].z, g[0].y, g[0].x, g[1].z, g[1].y, g[1].x];
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    groups
}
