//! The node-pair test of the collision traversal, specialised per comparison frame.
//!
//! A pair of nodes (A's `i`, B's `j`) is carried through the traversal with the boxes that had
//! to be *mapped* to compare it ([`Mapped`]); boxes used as stored are read from the nodes. A
//! child pair then maps only the one new box (the child's) and reuses its parent's mapped box
//! for the other node — no per-node cache, no recomputation. Each frame is its own type so the
//! traversal loop is compiled once per frame without a branch on it per test.

use gprox_bvh::Aabb;

use super::frame::BoxMap;

/// The mapped boxes of a node pair: `a` is A's box in the frame where A is mapped (B's local
/// frame for [`Both`], world for [`World`]; unused by [`Local`]), `b` is B's box in the frame
/// where B is mapped (A's local frame, or world).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mapped {
    pub(crate) a: [f64; 6],
    pub(crate) b: [f64; 6],
}

/// Whether two boxes (`[lo; 3]` then `[hi; 3]`) overlap; branch-free.
#[inline(always)]
pub(crate) fn overlap(a: &[f64; 6], b: &[f64; 6]) -> bool {
    (a[0] <= b[3])
        & (b[0] <= a[3])
        & (a[1] <= b[4])
        & (b[1] <= a[4])
        & (a[2] <= b[5])
        & (b[2] <= a[5])
}

/// A stored f32 box as f64 (exact).
#[inline(always)]
pub(crate) fn promote(b: &Aabb) -> [f64; 6] {
    [
        b.min[0] as f64,
        b.min[1] as f64,
        b.min[2] as f64,
        b.max[0] as f64,
        b.max[1] as f64,
        b.max[2] as f64,
    ]
}

/// The node-pair test of one comparison frame.
pub(crate) trait NodeTest: Copy {
    /// The mapped boxes of the pair (A's box `a`, B's box `b`) when the two overlap.
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped>;
    /// For a child `c` of A against B's node `b` (with its mapped box `mb`): A's child's mapped
    /// box when the two overlap.
    fn child_a(&self, c: &Aabb, b: &Aabb, mb: &[f64; 6]) -> Option<[f64; 6]>;
    /// For A's node `a` (with its mapped box `ma`) against a child `c` of B: B's child's
    /// mapped box when the two overlap.
    fn child_b(&self, a: &Aabb, ma: &[f64; 6], c: &Aabb) -> Option<[f64; 6]>;
}

/// A's boxes as stored, B's mapped into A's frame (relative translation only).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Local(pub(crate) BoxMap);

/// As [`Local`], and also A's boxes mapped into B's frame against B's as stored (a relative
/// rotation: the pair must overlap in both frames).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Both {
    /// B's boxes into A's frame.
    pub(crate) to_a: BoxMap,
    /// A's boxes into B's frame.
    pub(crate) to_b: BoxMap,
}

/// Both trees' boxes mapped to world space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct World {
    /// A's boxes to world.
    pub(crate) a: BoxMap,
    /// B's boxes to world.
    pub(crate) b: BoxMap,
}

impl NodeTest for Local {
    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped> {
        let mb = self.0.map(b);
        overlap(&promote(a), &mb).then_some(Mapped { a: [0.0; 6], b: mb })
    }

    #[inline(always)]
    fn child_a(&self, c: &Aabb, _b: &Aabb, mb: &[f64; 6]) -> Option<[f64; 6]> {
        overlap(&promote(c), mb).then_some([0.0; 6])
    }

    #[inline(always)]
    fn child_b(&self, a: &Aabb, _ma: &[f64; 6], c: &Aabb) -> Option<[f64; 6]> {
        let mc = self.0.map(c);
        overlap(&promote(a), &mc).then_some(mc)
    }
}

impl NodeTest for Both {
    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped> {
        let (ma, mb) = (self.to_b.map(a), self.to_a.map(b));
        (overlap(&promote(a), &mb) && overlap(&ma, &promote(b))).then_some(Mapped { a: ma, b: mb })
    }

    #[inline(always)]
    fn child_a(&self, c: &Aabb, b: &Aabb, mb: &[f64; 6]) -> Option<[f64; 6]> {
        // The test needing no mapping first.
        if !overlap(&promote(c), mb) {
            return None;
        }
        let mc = self.to_b.map(c);
        overlap(&mc, &promote(b)).then_some(mc)
    }

    #[inline(always)]
    fn child_b(&self, a: &Aabb, ma: &[f64; 6], c: &Aabb) -> Option<[f64; 6]> {
        if !overlap(ma, &promote(c)) {
            return None;
        }
        let mc = self.to_a.map(c);
        overlap(&promote(a), &mc).then_some(mc)
    }
}

impl NodeTest for World {
    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped> {
        let (ma, mb) = (self.a.map(a), self.b.map(b));
        overlap(&ma, &mb).then_some(Mapped { a: ma, b: mb })
    }

    #[inline(always)]
    fn child_a(&self, c: &Aabb, _b: &Aabb, mb: &[f64; 6]) -> Option<[f64; 6]> {
        let mc = self.a.map(c);
        overlap(&mc, mb).then_some(mc)
    }

    #[inline(always)]
    fn child_b(&self, _a: &Aabb, ma: &[f64; 6], c: &Aabb) -> Option<[f64; 6]> {
        let mc = self.b.map(c);
        overlap(ma, &mc).then_some(mc)
    }
}
