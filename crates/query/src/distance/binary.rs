//! The BVTT of two binary trees ([`BvTree`]) for the distance search: a pair expands on the
//! larger volume's side into its two children, both bounded at once
//! ([`BoundingVolume::distance_lower_bounds_mapped`]; for RSS the 7-axis separating bound in
//! f64 lanes, which prunes nearly as well as the exact rectangle distance at a fraction of its
//! cost).

use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::bv_tree::BvTreeNode;

use super::traverse::{Bvtt, Children, Mapped};

/// Two binary trees, B's volumes mapped into A's frame.
pub(super) struct BinaryBvtt<'q, B> {
    pub(super) an: &'q [BvTreeNode<B>],
    pub(super) bn: &'q [BvTreeNode<B>],
    pub(super) map: Mapped,
}

impl<B: BoundingVolume> BinaryBvtt<'_, B> {
    /// Which side of a non-leaf pair to split, and its children.
    #[inline]
    fn children(&self, a: u32, b: u32) -> [(u32, u32); 2] {
        let na = &self.an[a as usize];
        let nb = &self.bn[b as usize];
        let split_a = if na.is_leaf() {
            false
        } else if nb.is_leaf() {
            true
        } else {
            na.bv.size() >= nb.bv.size()
        };
        if split_a {
            [(na.left, b), (na.right, b)]
        } else {
            [(a, nb.left), (a, nb.right)]
        }
    }
}

impl<B: BoundingVolume> Bvtt for BinaryBvtt<'_, B> {
    const ROOT: (u32, u32) = (0, 0);

    #[inline]
    fn is_leaf_pair(&self, a: u32, b: u32) -> bool {
        self.an[a as usize].is_leaf() && self.bn[b as usize].is_leaf()
    }

    fn faces(&self, a: u32, b: u32) -> (u32, u32) {
        (self.an[a as usize].left, self.bn[b as usize].left)
    }

    #[inline]
    fn expand(&self, a: u32, b: u32, out: &mut Children) -> usize {
        let kids = self.children(a, b);
        let [(a0, b0), (a1, b1)] = kids;
        let vols = [
            (&self.an[a0 as usize].bv, &self.bn[b0 as usize].bv),
            (&self.an[a1 as usize].bv, &self.bn[b1 as usize].bv),
        ];
        let m = &self.map;
        let lbs = B::distance_lower_bounds_mapped(vols, &m.q, m.t, m.grow);
        for (k, ((x, y), lb)) in kids.into_iter().zip(lbs).enumerate() {
            out[k] = (x, y, m.world(lb));
        }
        2
    }

    fn centre_gap(&self, a: u32, b: u32) -> f64 {
        let ca = self.an[a as usize].bv.ball().0;
        let cb = self.bn[b as usize].bv.ball().0;
        ca.distance(self.map.q * cb + self.map.t)
    }
}
