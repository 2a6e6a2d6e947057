//! The simultaneous traversal of two [`WideObbTree`]s: a pair of slots is expanded by testing
//! the box of one against the eight slot boxes of the other's node in one lane test
//! ([`super::obb8`]), descending the larger box as the binary traversal does. It visits about
//! three binary levels per step, so a separation proof of two 50,000-triangle models takes a
//! few dozen lane tests instead of a few hundred single ones.
//!
//! A slot is named by `node * LANES + slot`; [`ROOT`] names the tree's root box, whose child is
//! node 0.

use std::sync::atomic::AtomicBool;

use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::obb::Obb;
use gprox_bvh::wide_obb::{WideObbNode, WideObbTree, LANES};

use super::obb8::{q32_of, slots_of_a, slots_of_b, BoxA, BoxB};
use super::volume::{LocalMap, Mapping};
use super::{binary, drive, setup, CollideError, CollideOptions, Faces, Posed, Walk};

/// The root box of a tree.
const ROOT: u32 = u32::MAX;

/// One query over two wide OBB trees under an f32-capable local map.
struct WideWalk<'q> {
    faces: Faces<'q>,
    ta: &'q WideObbTree,
    tb: &'q WideObbTree,
    map: LocalMap,
    q32: [f32; 9],
}

/// What slot `r` of `t` holds: a node index, `LEAF_BIT | face`, or `EMPTY` (never reached).
#[inline]
fn child(t: &WideObbTree, r: u32) -> u32 {
    if r == ROOT {
        0
    } else {
        t.nodes()[(r as usize) / LANES].children[(r as usize) % LANES]
    }
}

#[inline]
fn size(t: &WideObbTree, r: u32) -> f32 {
    if r == ROOT {
        t.root().half_extents.length() as f32
    } else {
        t.nodes()[(r as usize) / LANES].size[(r as usize) % LANES]
    }
}

impl WideWalk<'_> {
    fn box_a(&self, r: u32) -> BoxA {
        if r == ROOT {
            return BoxA::of(self.ta.root(), &self.q32);
        }
        let n = &self.ta.nodes()[(r as usize) / LANES];
        BoxA::slot(n, (r as usize) % LANES, &self.q32)
    }

    fn box_b(&self, r: u32) -> BoxB {
        if r == ROOT {
            return BoxB::of(self.tb.root(), &self.map, &self.q32);
        }
        let n = &self.tb.nodes()[(r as usize) / LANES];
        BoxB::slot(n, (r as usize) % LANES, &self.map, &self.q32)
    }
}

/// Asks the cache for the nodes below the kept slots of `n` (the traversal visits them next).
#[inline]
fn prefetch_kept(t: &WideObbTree, n: &WideObbNode, kept: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut m = kept;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            let c = n.children[s];
            if WideObbTree::face(c).is_none() {
                if let Some(node) = t.nodes().get(c as usize) {
                    let p = (node as *const WideObbNode).cast::<i8>();
                    for line in 0..std::mem::size_of::<WideObbNode>() / 64 {
                        // SAFETY: a prefetch of an address inside `node` (it never faults).
                        unsafe {
                            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                                p.add(64 * line),
                            )
                        };
                    }
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (t, n, kept);
}

/// Pushes `pair(s)` for every bit `s` of `kept`, the lowest last (popped first).
#[inline]
fn push_kept(kept: u32, out: &mut Vec<[u32; 2]>, pair: impl Fn(u32) -> [u32; 2]) {
    let mut m = kept;
    while m != 0 {
        let s = 31 - m.leading_zeros();
        out.push(pair(s));
        m &= !(1 << s);
    }
}

impl Walk for WideWalk<'_> {
    type Pair = [u32; 2];

    fn expand(&self, p: [u32; 2], out: &mut Vec<[u32; 2]>) -> Result<bool, CollideError> {
        let (ca, cb) = (child(self.ta, p[0]), child(self.tb, p[1]));
        let (leaf_a, leaf_b) = (
            WideObbTree::face(ca).is_some(),
            WideObbTree::face(cb).is_some(),
        );
        if leaf_a && leaf_b {
            return Ok(false);
        }
        let split_a = !leaf_a && (leaf_b || size(self.ta, p[0]) >= size(self.tb, p[1]));
        if split_a {
            let n = &self.ta.nodes()[ca as usize];
            let kept = slots_of_a(n, &self.box_b(p[1]));
            prefetch_kept(self.ta, n, kept);
            push_kept(kept, out, |s| [ca * LANES as u32 + s, p[1]]);
        } else {
            let n = &self.tb.nodes()[cb as usize];
            let kept = slots_of_b(&self.box_a(p[0]), n, &self.map);
            prefetch_kept(self.tb, n, kept);
            push_kept(kept, out, |s| [p[0], cb * LANES as u32 + s]);
        }
        Ok(true)
    }

    fn leaf(&self, p: [u32; 2]) -> Result<Option<[u32; 2]>, CollideError> {
        let fa = WideObbTree::face(child(self.ta, p[0])).unwrap_or(u32::MAX);
        let fb = WideObbTree::face(child(self.tb, p[1])).unwrap_or(u32::MAX);
        self.faces.touch(fa, fb)
    }

    fn budget(&self) -> u64 {
        // Every pair of slots at most once, plus the root pairs.
        let slots = |t: &WideObbTree| (t.nodes().len() * LANES + 1) as u64;
        slots(self.ta) * slots(self.tb) + 1
    }
}

/// The side with its wide tree read as its binary tree.
fn binary_of<'a>((m, t, p): Posed<'a, WideObbTree>) -> Posed<'a, BvTree<Obb>> {
    (m, t.tree(), p)
}

/// One query over two wide OBB trees: the lane traversal when the poses give an f32-capable
/// local map, else the binary trees' traversal (same pairs either way).
pub(super) fn run_wide(
    a: Posed<'_, WideObbTree>,
    b: Posed<'_, WideObbTree>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<[u32; 2]>,
) -> Result<Vec<[u32; 2]>, CollideError> {
    let ((ma, ta, pa), (mb, tb, pb)) = (a, b);
    let s = match setup(binary_of(a), binary_of(b), opts, any, hint)? {
        Ok(s) => s,
        Err(w) => return Ok(vec![w]),
    };
    let lanes = match &s.map {
        Mapping::Local(m) => q32_of(m).map(|q32| (*m, q32)),
        _ => None,
    };
    let Some((map, q32)) = lanes else {
        return binary(binary_of(a), binary_of(b), opts, any, s);
    };
    let w = WideWalk {
        faces: Faces::new((ma, pa), (mb, pb), opts, &s),
        ta,
        tb,
        map,
        q32,
    };
    drive(&w, [ROOT, ROOT], s.threads, any)
}
