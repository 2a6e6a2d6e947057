//! The CPU self traversal of mesh CCD: the node boxes of an LBVH at both ends of the step,
//! computed in one validating pass (no copy of the tree), and a BVTT self traversal over them
//! whose node test is [`super::filter::boxes_separated_both_ends`] (exact f32 comparisons when
//! the minimum separation is 0). It reports the same face pairs as
//! `self_collide::traverse::self_leaves_by` with that test, straight to a callback.

use glam::Vec3;
use gprox_bvh::{refit::triangle_aabb, Aabb, Bvh, LEAF};

use super::filter::boxes_separated_both_ends;
use super::CcdError;

/// A node's boxes: `[min, max]` at `t = 0`, then at `t = 1`.
type DualBox = [[[f32; 3]; 2]; 2];

/// One internal node: its children (node indices; `>= n - 1` are leaves) and their boxes,
/// stored together so expanding a node pair reads two records.
#[derive(Clone, Copy, Debug)]
struct Inner {
    child: [u32; 2],
    boxes: [DualBox; 2],
}

/// The node boxes of an LBVH at both ends of the step.
pub(crate) struct DualTree {
    /// Internal nodes `0..n-1`.
    inner: Vec<Inner>,
    /// Box of each leaf slot.
    leaf_box: Vec<DualBox>,
    /// Face of each leaf slot.
    leaf_face: Vec<u32>,
}

fn bvh_error(bvh: &Bvh, faces: usize) -> CcdError {
    CcdError::Mismatch {
        what: "bvh",
        got: bvh.leaf_count(),
        faces,
    }
}

#[inline]
fn merge(x: &DualBox, y: &DualBox) -> DualBox {
    let mut m = *x;
    for e in 0..2 {
        for k in 0..3 {
            m[e][0][k] = m[e][0][k].min(y[e][0][k]);
            m[e][1][k] = m[e][1][k].max(y[e][1][k]);
        }
    }
    m
}

/// Separated on one axis, same order, at both ends (`lo as f64 - hi as f64 > 0` exactly when
/// `lo > hi`): all twelve comparisons, branch-free.
#[inline]
fn separated_exact(x: &DualBox, y: &DualBox) -> bool {
    let mut out = false;
    for k in 0..3 {
        out |= (x[0][0][k] > y[0][1][k]) & (x[1][0][k] > y[1][1][k])
            | (y[0][0][k] > x[0][1][k]) & (y[1][0][k] > x[1][1][k]);
    }
    out
}

impl DualTree {
    /// Node boxes of `bvh` (which must be an LBVH over `faces`: Karras layout, every face in
    /// exactly one leaf) for positions `start` and `end`. Errors when it is not.
    pub(crate) fn new(
        bvh: &Bvh,
        faces: &[[u32; 3]],
        start: &[Vec3],
        end: &[Vec3],
    ) -> Result<Self, CcdError> {
        let total = bvh.nodes.len();
        let n = faces.len();
        if total != (2 * n).saturating_sub(1) {
            return Err(bvh_error(bvh, n));
        }
        let n1 = n.saturating_sub(1);
        let mut seen = vec![false; n];
        let mut leaf_box = Vec::with_capacity(n);
        let mut leaf_face = Vec::with_capacity(n);
        for node in &bvh.nodes[n1..] {
            let f = node.left as usize;
            if node.right != LEAF || f >= n || seen[f] {
                return Err(bvh_error(bvh, n));
            }
            seen[f] = true;
            let tri = faces[f];
            let b0 = triangle_aabb(&tri.map(|v| start[v as usize]));
            let b1 = triangle_aabb(&tri.map(|v| end[v as usize]));
            leaf_box.push([[b0.min, b0.max], [b1.min, b1.max]]);
            leaf_face.push(node.left);
        }
        let mut inner = Vec::with_capacity(n1);
        if n > 1 {
            // Top-down check of the Karras layout (node covering [first, last] splits at γ:
            // left = leaf γ if first == γ else internal γ, right = leaf γ+1 if last == γ+1
            // else internal γ+1), recording a pre-order; then merge bottom-up in reverse.
            let n1 = n1 as u32;
            inner.extend(bvh.nodes[..n1 as usize].iter().map(|node| Inner {
                child: [node.left, node.right],
                boxes: [[[[0.0; 3]; 2]; 2]; 2],
            }));
            let mut order = Vec::with_capacity(n - 1);
            let mut stack = vec![(0u32, 0u32, n1)];
            while let Some((i, first, last)) = stack.pop() {
                let [left, right] = inner[i as usize].child;
                let gamma = if left >= n1 { left - n1 } else { left };
                let left_ok = if left >= n1 {
                    gamma == first
                } else {
                    first < gamma
                };
                if right == LEAF || !left_ok || gamma >= last {
                    return Err(bvh_error(bvh, n));
                }
                let expect = if gamma + 1 == last {
                    n1 + gamma + 1
                } else {
                    gamma + 1
                };
                if right != expect {
                    return Err(bvh_error(bvh, n));
                }
                order.push(i);
                if left < n1 {
                    stack.push((left, first, gamma));
                }
                if right < n1 {
                    stack.push((right, gamma + 1, last));
                }
            }
            for &i in order.iter().rev() {
                let child = inner[i as usize].child;
                let boxes = child.map(|c| {
                    if c >= n1 {
                        leaf_box[(c - n1) as usize]
                    } else {
                        let b = &inner[c as usize].boxes;
                        merge(&b[0], &b[1])
                    }
                });
                inner[i as usize].boxes = boxes;
            }
        }
        Ok(Self {
            inner,
            leaf_box,
            leaf_face,
        })
    }

    /// Calls `f(face_a, face_b)` once for every unordered pair of distinct leaves whose boxes
    /// are not separated (by more than `sep`) on one axis, in the same order, at both ends.
    pub(crate) fn self_pairs(&self, sep: f64, f: impl FnMut(u32, u32)) {
        if sep == 0.0 {
            self.self_pairs_by(separated_exact, f);
        } else {
            let aabb = |b: &[[f32; 3]; 2]| Aabb {
                min: b[0],
                max: b[1],
            };
            self.self_pairs_by(
                |x: &DualBox, y: &DualBox| {
                    boxes_separated_both_ends(
                        &aabb(&x[0]),
                        &aabb(&x[1]),
                        &aabb(&y[0]),
                        &aabb(&y[1]),
                        sep,
                    )
                },
                f,
            );
        }
    }

    /// The self traversal with node test `separated` (a node against itself: its children
    /// against themselves and against each other). Stack entries are node pairs that passed.
    #[inline]
    fn self_pairs_by(
        &self,
        separated: impl Fn(&DualBox, &DualBox) -> bool,
        mut f: impl FnMut(u32, u32),
    ) {
        let (inner, leaf_box, leaf_face) = (&self.inner, &self.leaf_box, &self.leaf_face);
        let n1 = inner.len() as u32;
        if n1 < 1 {
            return;
        }
        let mut selfs = vec![0u32];
        let mut stack: Vec<(u32, u32)> = Vec::with_capacity(256);
        while let Some(i) = selfs.pop() {
            let node = &inner[i as usize];
            for c in node.child {
                if c < n1 {
                    selfs.push(c);
                }
            }
            // A passing pair of two leaves is reported at once, others are pushed.
            let mut visit = |x: u32, y: u32, stack: &mut Vec<(u32, u32)>| {
                if x >= n1 && y >= n1 {
                    f(leaf_face[(x - n1) as usize], leaf_face[(y - n1) as usize]);
                } else {
                    stack.push((x, y));
                }
            };
            if !separated(&node.boxes[0], &node.boxes[1]) {
                visit(node.child[0], node.child[1], &mut stack);
            }
            while let Some((a, b)) = stack.pop() {
                if a >= n1 {
                    let (la, nb) = (&leaf_box[(a - n1) as usize], &inner[b as usize]);
                    for k in [1, 0] {
                        if !separated(la, &nb.boxes[k]) {
                            visit(a, nb.child[k], &mut stack);
                        }
                    }
                } else if b >= n1 {
                    let (na, lb) = (&inner[a as usize], &leaf_box[(b - n1) as usize]);
                    for k in [1, 0] {
                        if !separated(&na.boxes[k], lb) {
                            visit(na.child[k], b, &mut stack);
                        }
                    }
                } else {
                    let (na, nb) = (&inner[a as usize], &inner[b as usize]);
                    for x in [1, 0] {
                        for y in [1, 0] {
                            if !separated(&na.boxes[x], &nb.boxes[y]) {
                                visit(na.child[x], nb.child[y], &mut stack);
                            }
                        }
                    }
                }
            }
        }
    }
}
