//! The BVTT of two eight-wide RSS trees ([`WideRssTree`]) for the distance search: a pair
//! expands on the larger volume's side into the eight slots of the node below it, all bounded
//! at once in f64 lanes ([`bounds`]) against the other side's volume, which is mapped once into
//! the node's frame (B's into A's by the pose's nearest rotation, A's into B's by its
//! transpose; either way inflated by the residual, so the bound holds in A's frame). One
//! expansion stands for up to seven of the binary search's.
//!
//! A node pair is a pair of slot references: `node · 8 + slot`, or [`ROOT`] for the whole tree
//! (the binary root's volume, whose children are wide node 0).

use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::lane_tree::LaneNode;
use gprox_bvh::rss::Rss;
use gprox_bvh::wide::LEAF_BIT;
use gprox_bvh::wide_rss::{bounds, slot, WideRssNode, WideRssTree};

use super::traverse::{Bvtt, Children, Mapped};

/// The reference to a tree's root volume.
const ROOT: u32 = u32::MAX;

/// Two wide RSS trees, B's volumes mapped into A's frame.
pub(super) struct WideBvtt<'q> {
    pub(super) a: &'q WideRssTree,
    pub(super) b: &'q WideRssTree,
    pub(super) map: Mapped,
}

/// What a slot reference stands for: the child link below it.
#[inline(always)]
fn child(t: &WideRssTree, r: u32) -> u32 {
    if r == ROOT {
        0
    } else {
        t.nodes()[(r / 8) as usize].children[(r % 8) as usize]
    }
}

#[inline(always)]
fn is_leaf(t: &WideRssTree, r: u32) -> bool {
    r != ROOT && child(t, r) & LEAF_BIT != 0
}

/// The volume of a slot reference.
#[inline(always)]
fn volume(t: &WideRssTree, r: u32) -> Rss {
    if r == ROOT {
        *t.root()
    } else {
        slot(&t.nodes()[(r / 8) as usize], (r % 8) as usize)
    }
}

#[inline(always)]
fn size(t: &WideRssTree, r: u32) -> f64 {
    if r == ROOT {
        t.root().size()
    } else {
        t.nodes()[(r / 8) as usize].size[(r % 8) as usize]
    }
}

/// Writes `(slot reference, other side, bound)` for the used slots of node `k` (`a_side`: the
/// slots are A's) and returns how many.
#[inline(always)]
fn each_used(
    n: &WideRssNode,
    k: u32,
    other: u32,
    a_side: bool,
    lbs: [f64; 8],
    map: &Mapped,
    out: &mut Children,
) -> usize {
    let mut used = n.used();
    let mut count = 0;
    while used != 0 {
        let s = used.trailing_zeros();
        used &= used - 1;
        let r = k * 8 + s;
        let (x, y) = if a_side { (r, other) } else { (other, r) };
        out[count] = (x, y, map.world(lbs[s as usize]));
        count += 1;
    }
    count
}

impl Bvtt for WideBvtt<'_> {
    const ROOT: (u32, u32) = (ROOT, ROOT);

    #[inline]
    fn is_leaf_pair(&self, a: u32, b: u32) -> bool {
        is_leaf(self.a, a) && is_leaf(self.b, b)
    }

    fn faces(&self, a: u32, b: u32) -> (u32, u32) {
        (child(self.a, a) & !LEAF_BIT, child(self.b, b) & !LEAF_BIT)
    }

    #[inline]
    fn expand(&self, a: u32, b: u32, out: &mut Children) -> usize {
        let m = &self.map;
        let split_a = if is_leaf(self.a, a) {
            false
        } else if is_leaf(self.b, b) {
            true
        } else {
            size(self.a, a) >= size(self.b, b)
        };
        if split_a {
            let k = child(self.a, a);
            let n = &self.a.nodes()[k as usize];
            let vb = volume(self.b, b).transform_rigid(&m.q, m.t, m.grow);
            each_used(n, k, b, true, bounds(n, &vb), m, out)
        } else {
            // A's volume into B's frame: rigid (up to the residual `grow`, added to it), so the
            // bound there is a bound in A's frame.
            let k = child(self.b, b);
            let n = &self.b.nodes()[k as usize];
            let va = volume(self.a, a).transform_rigid(&m.q_inv, m.t_inv, m.grow);
            each_used(n, k, a, false, bounds(n, &va), m, out)
        }
    }

    fn centre_gap(&self, a: u32, b: u32) -> f64 {
        let ca = volume(self.a, a).center;
        let cb = volume(self.b, b).center;
        ca.distance(self.map.q * cb + self.map.t)
    }
}
