//! The leaf half of a refit: each leaf's box from its primitive, checked against the tree,
//! with the random reads prefetched ahead. Shared by the free refit ([`super::Ctx`]) and the
//! refit plans (a [`MeshRefitPlan`](crate::refit_plan::MeshRefitPlan) brings its own pass).

use super::{prefetch, Ctx, LeafSource, RefitError};
use crate::{Aabb, BvhNode, LEAF};

/// Leaves ahead of the current one whose reads are started (faces first, then positions).
const FAR: usize = 96;
pub(crate) const NEAR: usize = 32;
/// Leaves ahead of the current one whose node and parent entries are prefetched (the
/// sequential streams).
pub(crate) const STREAM: usize = 256;

/// Prefetches the sequential streams [`STREAM`] leaves ahead of leaf `k` of `leaves`: the leaf
/// node and the internal node merged after it (`internal + k`, an address only).
#[inline(always)]
pub(crate) fn prefetch_streams(leaves: &[BvhNode], internal: *const BvhNode, k: usize) {
    prefetch(internal.wrapping_add(k + STREAM));
    prefetch(leaves.as_ptr().wrapping_add(k + STREAM));
}

/// The leaf half of a refit: the boxes of a run of leaf slots, each checked against the tree
/// (the free refit's primitive source, or a [`MeshRefitPlan`](crate::refit_plan::MeshRefitPlan)'s
/// faces in leaf order).
pub(crate) trait LeafPass: Sync {
    /// Index of the first leaf node (`n - 1`).
    fn n1(&self) -> usize;
    /// Fills the boxes of `leaves[range]` (leaf slots `first + range`); `internal + k` is only
    /// an address to prefetch for leaf `k`: the internal node merged after it.
    fn leaves(
        &self,
        leaves: &mut [BvhNode],
        range: std::ops::Range<usize>,
        first: usize,
        internal: *const BvhNode,
    ) -> Result<(), Box<RefitError>>;
    /// The box of two children.
    fn merge(&self, a: &Aabb, b: &Aabb) -> Aabb;
}

impl<S: LeafSource> LeafPass for Ctx<'_, S> {
    fn n1(&self) -> usize {
        self.n1
    }

    /// Refits the leaves `range` of `leaves` (slots `first + range`), one independent
    /// iteration per leaf. The primitive reads are random, so they are prefetched a few leaves
    /// ahead, and so are the internal nodes from `internal` on (the one of leaf `k` at
    /// `internal + k`; only an address for the prefetch hints, never read) that are merged next.
    fn leaves(
        &self,
        leaves: &mut [BvhNode],
        range: std::ops::Range<usize>,
        first: usize,
        internal: *const BvhNode,
    ) -> Result<(), Box<RefitError>> {
        for k in range {
            prefetch_streams(leaves, internal, k);
            if let Some(ahead) = leaves.get(k + FAR) {
                self.src.prefetch_far(ahead.left);
            }
            if let Some(ahead) = leaves.get(k + NEAR) {
                self.src.prefetch_near(ahead.left);
            }
            let leaf = &mut leaves[k];
            if leaf.right != LEAF || leaf.left as usize >= self.count {
                return Err(Box::new(RefitError::PrimitiveOutOfRange {
                    node: self.n1 + first + k,
                    primitive: leaf.left,
                    count: self.count,
                }));
            }
            leaf.aabb = self.src.aabb(leaf.left);
        }
        Ok(())
    }

    #[inline(always)]
    fn merge(&self, a: &Aabb, b: &Aabb) -> Aabb {
        self.src.merge(a, b)
    }
}
