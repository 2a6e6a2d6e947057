//! The flat binary BVH layout shared with the kernels.

use crate::Aabb;

/// Marker in [`BvhNode::right`] that makes a node a leaf.
pub const LEAF: u32 = u32::MAX;

/// One node of a binary BVH, 32 bytes.
///
/// A tree over `n` primitives has `2n - 1` nodes: internal nodes at `0..n-1` (the root is node 0),
/// leaves at `n-1..2n-1` in Morton order. A leaf has `right == LEAF` and `left` = the primitive
/// (face) index; an internal node has the indices of its two children.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BvhNode {
    /// Bounds of everything below.
    pub aabb: Aabb,
    /// Left child, or the primitive index of a leaf.
    pub left: u32,
    /// Right child, or [`LEAF`].
    pub right: u32,
}

impl BvhNode {
    /// Whether this node is a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.right == LEAF
    }
}

/// A binary BVH in the flat layout (see [`BvhNode`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    /// `2n - 1` nodes; node 0 is the root.
    pub nodes: Vec<BvhNode>,
    /// Parent of every node (`LEAF` for the root), used by bottom-up refit.
    pub parents: Vec<u32>,
}

impl Bvh {
    /// Number of primitives (leaves).
    pub fn leaf_count(&self) -> usize {
        self.nodes.len().div_ceil(2)
    }

    /// Index of the first leaf node.
    pub fn first_leaf(&self) -> usize {
        self.leaf_count() - 1
    }

    /// Bounds of the whole tree.
    pub fn root_aabb(&self) -> Aabb {
        self.nodes[0].aabb
    }
}
