//! The node-pair test of the collision traversal, specialised per comparison frame.
//!
//! A pair of nodes (A's `i`, B's `j`) is carried through the traversal with the boxes that had
//! to be *mapped* to compare it ([`Mapped`]); boxes used as stored are read from the nodes. A
//! child pair then maps only the one new box (the child's) and reuses its parent's mapped box
//! for the other node — no per-node cache, no recomputation. Each frame is its own type so the
//! traversal loop is compiled once per frame without a branch on it per test. The local-frame
//! tests run in f32 lanes ([`BoxMap32`]: the f64 map's image, grown by a bound on the f32
//! rounding); the world-frame test (any affine pose) stays in f64.

use gprox_bvh::Aabb;

use super::frame::{Box32, BoxMap, BoxMap32};

/// The mapped boxes of a node pair: `a` is A's box in the frame where A is mapped (B's local
/// frame for [`Both`], world for [`World`]; unused by [`Local`]), `b` is B's box in the frame
/// where B is mapped (A's local frame, or world).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Mapped<X> {
    pub(crate) a: X,
    pub(crate) b: X,
}

/// A node pair known to overlap, with its mapped boxes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<X> {
    /// A's node.
    pub(crate) i: u32,
    /// B's node.
    pub(crate) j: u32,
    /// Its mapped boxes.
    pub(crate) m: Mapped<X>,
}

/// The traversal stacks, one per box type (kept across queries).
#[derive(Default)]
pub(crate) struct Stacks {
    f32: Vec<Entry<Box32>>,
    f64: Vec<Entry<[f64; 6]>>,
}

/// Whether two boxes (`[lo; 3]` then `[hi; 3]`) overlap; branch-free.
#[inline(always)]
fn overlap(a: &[f64; 6], b: &[f64; 6]) -> bool {
    (a[0] <= b[3])
        & (b[0] <= a[3])
        & (a[1] <= b[4])
        & (b[1] <= a[4])
        & (a[2] <= b[5])
        & (b[2] <= a[5])
}

/// The node-pair test of one comparison frame.
pub(crate) trait NodeTest: Copy {
    /// A mapped box.
    type Box: Copy + Default;
    /// This box type's stack.
    fn stack(s: &mut Stacks) -> &mut Vec<Entry<Self::Box>>;
    /// The mapped boxes of the pair (A's box `a`, B's box `b`) when the two overlap.
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped<Self::Box>>;
    /// For a child `c` of A against B's node `b` (with its mapped box `mb`): A's child's mapped
    /// box when the two overlap.
    fn child_a(&self, c: &Aabb, b: &Aabb, mb: &Self::Box) -> Option<Self::Box>;
    /// For A's node `a` (with its mapped box `ma`) against a child `c` of B: B's child's
    /// mapped box when the two overlap.
    fn child_b(&self, a: &Aabb, ma: &Self::Box, c: &Aabb) -> Option<Self::Box>;
    /// The volume of the intersection of an overlapping pair's boxes in the frame of the test
    /// (A's node `a`, B's node `b`, the pair's mapped boxes `m`): a heuristic for which child
    /// pair an early-out query enters first, not a bound.
    fn shared_volume(&self, a: &Aabb, b: &Aabb, m: &Mapped<Self::Box>) -> f32;
}

/// The volume of the intersection of two f32 boxes (0 when they are apart).
#[inline(always)]
fn shared32(x: &Box32, y: &Box32) -> f32 {
    let d = (x.hi.min(y.hi) - x.lo.max(y.lo)).max(glam::Vec3A::ZERO);
    d.x * d.y * d.z
}

/// A's boxes as stored, B's mapped into A's frame (relative translation only), in f32.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Local(pub(crate) BoxMap32);

/// As [`Local`], and also A's boxes mapped into B's frame against B's as stored (a relative
/// rotation: the pair must overlap in both frames).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Both {
    /// B's boxes into A's frame.
    pub(crate) to_a: BoxMap32,
    /// A's boxes into B's frame.
    pub(crate) to_b: BoxMap32,
}

/// Both trees' boxes mapped to world space (f64).
#[derive(Clone, Copy, Debug)]
pub(crate) struct World {
    /// A's boxes to world.
    pub(crate) a: BoxMap,
    /// B's boxes to world.
    pub(crate) b: BoxMap,
}

impl NodeTest for Local {
    type Box = Box32;

    fn stack(s: &mut Stacks) -> &mut Vec<Entry<Box32>> {
        &mut s.f32
    }

    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped<Box32>> {
        let mb = self.0.map(b);
        Box32::stored(a).overlaps(&mb).then_some(Mapped {
            a: Box32::default(),
            b: mb,
        })
    }

    #[inline(always)]
    fn child_a(&self, c: &Aabb, _b: &Aabb, mb: &Box32) -> Option<Box32> {
        Box32::stored(c).overlaps(mb).then_some(Box32::default())
    }

    #[inline(always)]
    fn shared_volume(&self, a: &Aabb, _b: &Aabb, m: &Mapped<Box32>) -> f32 {
        shared32(&Box32::stored(a), &m.b)
    }

    #[inline(always)]
    fn child_b(&self, a: &Aabb, _ma: &Box32, c: &Aabb) -> Option<Box32> {
        let mc = self.0.map(c);
        Box32::stored(a).overlaps(&mc).then_some(mc)
    }
}

impl NodeTest for Both {
    type Box = Box32;

    fn stack(s: &mut Stacks) -> &mut Vec<Entry<Box32>> {
        &mut s.f32
    }

    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped<Box32>> {
        let (ma, mb) = (self.to_b.map(a), self.to_a.map(b));
        (Box32::stored(a).overlaps(&mb) && ma.overlaps(&Box32::stored(b)))
            .then_some(Mapped { a: ma, b: mb })
    }

    #[inline(always)]
    fn child_a(&self, c: &Aabb, b: &Aabb, mb: &Box32) -> Option<Box32> {
        // The test needing no mapping first.
        if !Box32::stored(c).overlaps(mb) {
            return None;
        }
        let mc = self.to_b.map(c);
        mc.overlaps(&Box32::stored(b)).then_some(mc)
    }

    #[inline(always)]
    fn child_b(&self, a: &Aabb, ma: &Box32, c: &Aabb) -> Option<Box32> {
        if !ma.overlaps(&Box32::stored(c)) {
            return None;
        }
        let mc = self.to_a.map(c);
        Box32::stored(a).overlaps(&mc).then_some(mc)
    }

    #[inline(always)]
    fn shared_volume(&self, a: &Aabb, _b: &Aabb, m: &Mapped<Box32>) -> f32 {
        shared32(&Box32::stored(a), &m.b)
    }
}

impl NodeTest for World {
    type Box = [f64; 6];

    fn stack(s: &mut Stacks) -> &mut Vec<Entry<[f64; 6]>> {
        &mut s.f64
    }

    #[inline(always)]
    fn pair(&self, a: &Aabb, b: &Aabb) -> Option<Mapped<[f64; 6]>> {
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

    #[inline(always)]
    fn shared_volume(&self, _a: &Aabb, _b: &Aabb, m: &Mapped<[f64; 6]>) -> f32 {
        let d = |k: usize| (m.a[k + 3].min(m.b[k + 3]) - m.a[k].max(m.b[k])).max(0.0);
        (d(0) * d(1) * d(2)) as f32
    }
}
