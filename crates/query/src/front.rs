//! BVTT front tracking across frames (gProximity §4.1.2).
//!
//! The front is the cut of the bounding-volume test tree where the last traversal stopped:
//! overlapping leaf pairs, and non-overlapping pairs whose BVTT parent overlapped. After a refit
//! (same tree topology) the next frame restarts from it: an overlapping front pair is expanded
//! as in a full traversal; a non-overlapping one stays when its parent still overlaps, and
//! otherwise the front moves up to the parent — only from the parent's *leftmost* child, so the
//! parent is added once. Boxes contain their descendants' boxes, so overlap is monotone up the
//! tree and the reported leaf pairs are exactly those of a full traversal.
//!
//! The BVTT is the one of [`crate::self_collide::traverse`]: two internal nodes descend both,
//! a leaf against an internal node descends the internal one. Hence a visited pair `(x, y)` has
//! equal depths unless one is a leaf, and its parent is `(parent x, parent y)` for equal depths,
//! otherwise the deeper side's parent. Self mode: the roots are the sibling pairs
//! `(left, right)` of every internal node (a node against itself always "overlaps").

use gprox_bvh::{Bvh, LEAF};

/// A BVTT front between two trees, or within one tree (self mode). Valid as long as the
/// trees keep their topology (refit); after a rebuild make a new front.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Front {
    /// Front node pairs `(node of a, node of b)`.
    pub pairs: Vec<(u32, u32)>,
    self_mode: bool,
    depth_a: Vec<u32>,
    depth_b: Vec<u32>,
}

/// Depth of every node (root 0) from the parent links.
pub fn node_depths(bvh: &Bvh) -> Vec<u32> {
    let mut depth = vec![0u32; bvh.nodes.len()];
    let mut stack = if bvh.nodes.is_empty() {
        vec![]
    } else {
        vec![0u32]
    };
    while let Some(i) = stack.pop() {
        let n = &bvh.nodes[i as usize];
        if !n.is_leaf() {
            let di = depth[i as usize] + 1;
            for c in [n.left, n.right] {
                if let Some(d) = depth.get_mut(c as usize) {
                    *d = di;
                    stack.push(c);
                }
            }
        }
    }
    depth
}

struct Ctx<'a, O, F> {
    a: &'a Bvh,
    b: &'a Bvh,
    overlap: O,
    f: F,
}

impl<O: Fn(u32, u32) -> bool, F: FnMut(u32, u32)> Ctx<'_, O, F> {
    /// Full traversal below the overlapping pair `(x, y)`, appending the new front.
    fn expand(&mut self, x: u32, y: u32, front: &mut Vec<(u32, u32)>, stack: &mut Vec<(u32, u32)>) {
        stack.push((x, y));
        while let Some((i, j)) = stack.pop() {
            let (na, nb) = (&self.a.nodes[i as usize], &self.b.nodes[j as usize]);
            let kids: [(u32, u32); 4];
            let n = match (na.is_leaf(), nb.is_leaf()) {
                (true, true) => {
                    (self.f)(na.left, nb.left);
                    front.push((i, j));
                    continue;
                }
                (true, false) => {
                    kids = [(i, nb.left), (i, nb.right), (0, 0), (0, 0)];
                    2
                }
                (false, true) => {
                    kids = [(na.left, j), (na.right, j), (0, 0), (0, 0)];
                    2
                }
                (false, false) => {
                    kids = [
                        (na.left, nb.left),
                        (na.left, nb.right),
                        (na.right, nb.left),
                        (na.right, nb.right),
                    ];
                    4
                }
            };
            for &(p, q) in &kids[..n] {
                if (self.overlap)(p, q) {
                    stack.push((p, q));
                } else {
                    front.push((p, q));
                }
            }
        }
    }
}

impl Front {
    /// Full traversal of `a` against `b` (calling `f(face_a, face_b)` for every leaf pair that
    /// passes `overlap`), recording the front.
    pub fn new_pair(
        a: &Bvh,
        b: &Bvh,
        overlap: impl Fn(u32, u32) -> bool,
        f: impl FnMut(u32, u32),
    ) -> Self {
        let mut front = Self {
            pairs: Vec::new(),
            self_mode: false,
            depth_a: node_depths(a),
            depth_b: node_depths(b),
        };
        if a.nodes.is_empty() || b.nodes.is_empty() {
            return front;
        }
        let mut ctx = Ctx { a, b, overlap, f };
        let mut stack = Vec::new();
        if (ctx.overlap)(0, 0) {
            ctx.expand(0, 0, &mut front.pairs, &mut stack);
        } else {
            front.pairs.push((0, 0));
        }
        front
    }

    /// Full self traversal of `bvh` (every unordered pair of distinct leaves passing `overlap`
    /// reported once, as in [`crate::self_collide::traverse::self_leaves_by`]), recording the
    /// front.
    pub fn new_self(
        bvh: &Bvh,
        overlap: impl Fn(u32, u32) -> bool,
        f: impl FnMut(u32, u32),
    ) -> Self {
        let depth = node_depths(bvh);
        let mut front = Self {
            pairs: Vec::new(),
            self_mode: true,
            depth_a: depth.clone(),
            depth_b: depth,
        };
        let mut ctx = Ctx {
            a: bvh,
            b: bvh,
            overlap,
            f,
        };
        let mut stack = Vec::new();
        for n in bvh.nodes.iter().filter(|n| !n.is_leaf()) {
            if (ctx.overlap)(n.left, n.right) {
                ctx.expand(n.left, n.right, &mut front.pairs, &mut stack);
            } else {
                front.pairs.push((n.left, n.right));
            }
        }
        front
    }

    /// BVTT parent of a front pair, `None` at a root.
    fn parent(&self, a: &Bvh, b: &Bvh, x: u32, y: u32) -> Option<(u32, u32)> {
        let (px, py) = (a.parents[x as usize], b.parents[y as usize]);
        if self.self_mode {
            if px == py {
                return None;
            }
        } else if x == 0 && y == 0 {
            return None;
        }
        let (dx, dy) = (self.depth_a[x as usize], self.depth_b[y as usize]);
        let p = if dx == dy {
            (px, py)
        } else if dx < dy {
            (x, py)
        } else {
            (px, y)
        };
        (p.0 != LEAF && p.1 != LEAF).then_some(p)
    }

    /// Whether `(x, y)` is the first child of the BVTT node `(p, q)`.
    fn is_leftmost(a: &Bvh, b: &Bvh, x: u32, y: u32, p: u32, q: u32) -> bool {
        let (np, nq) = (&a.nodes[p as usize], &b.nodes[q as usize]);
        let first = match (np.is_leaf(), nq.is_leaf()) {
            (true, _) => (p, nq.left),
            (false, true) => (np.left, q),
            (false, false) => (np.left, nq.left),
        };
        first == (x, y)
    }

    /// Restarts the traversal from the front after `a` and `b` were refitted (same topology as
    /// when the front was made), reporting the same leaf pairs as a full traversal would and
    /// updating the front.
    pub fn update(
        &mut self,
        a: &Bvh,
        b: &Bvh,
        overlap: impl Fn(u32, u32) -> bool,
        f: impl FnMut(u32, u32),
    ) {
        let mut ctx = Ctx { a, b, overlap, f };
        let mut next = Vec::with_capacity(self.pairs.len());
        let mut stack = Vec::new();
        let mut work = std::mem::take(&mut self.pairs);
        while let Some((x, y)) = work.pop() {
            if (ctx.overlap)(x, y) {
                ctx.expand(x, y, &mut next, &mut stack);
                continue;
            }
            match self.parent(a, b, x, y) {
                None => next.push((x, y)),
                Some((p, q)) => {
                    if (ctx.overlap)(p, q) {
                        next.push((x, y));
                    } else if Self::is_leftmost(a, b, x, y, p, q) {
                        work.push((p, q));
                    }
                }
            }
        }
        self.pairs = next;
    }

    /// [`Front::update`] for a self front (`a` = `b` = the tree).
    pub fn update_self(
        &mut self,
        bvh: &Bvh,
        overlap: impl Fn(u32, u32) -> bool,
        f: impl FnMut(u32, u32),
    ) {
        self.update(bvh, bvh, overlap, f);
    }
}
