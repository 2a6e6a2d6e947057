//! Trees of eight volumes a node, stored field by field so that one node is tested against one
//! volume in eight SIMD lanes at once: a [`BvTree`] collapsed by [`WideTree::from_binary`],
//! each wide node written into a [`LaneNode`] layout (one per volume kind: [`WideObbNode`] for
//! collision, [`WideRssNode`] for distance). The binary tree stays alongside for the queries
//! that need it.
//!
//! [`WideObbNode`]: crate::wide_obb::WideObbNode
//! [`WideRssNode`]: crate::wide_rss::WideRssNode

use gprox_geometry::TriMesh;

use crate::bounding_volume::BoundingVolume;
use crate::bv_tree::BvTree;
use crate::wide::{Wide8Node, WideError, WideTree, EMPTY, LEAF_BIT};

/// Volumes per node.
pub const LANES: usize = 8;

/// A node layout holding eight slot volumes in lanes.
pub trait LaneNode: Clone + std::fmt::Debug + Send + Sync {
    /// The volume kind of the slots.
    type Bv: BoundingVolume;
    /// A node with these child links (as [`Wide8Node`]) and every slot volume zero.
    fn with_children(children: [u32; LANES]) -> Self;
    /// Writes `b` into slot `s` (its child link unchanged).
    fn set_slot(&mut self, s: usize, b: &Self::Bv);
    /// Child slots: a node index, `LEAF_BIT | face`, or [`EMPTY`].
    fn children(&self) -> &[u32; LANES];
    /// Bit `s` set for every used slot.
    #[inline]
    fn used(&self) -> u32 {
        let mut m = 0;
        for (s, &c) in self.children().iter().enumerate() {
            m |= u32::from(c != EMPTY) << s;
        }
        m
    }
}

/// Whether `nodes` wide nodes can be named by slot references `node · 8 + slot` that stay
/// below `u32::MAX` (the traversals' reference to a root).
pub fn check_node_count(nodes: usize) -> Result<(), WideError> {
    if nodes < (u32::MAX as usize) / LANES {
        Ok(())
    } else {
        Err(WideError::TooManyNodes { nodes })
    }
}

/// A tree in eight-volume lanes, with the binary tree it was collapsed from.
#[derive(Clone, Debug)]
pub struct LaneTree<N: LaneNode> {
    tree: BvTree<N::Bv>,
    nodes: Vec<N>,
}

impl<N: LaneNode> LaneTree<N> {
    /// Builds the binary tree of `mesh` ([`BvTree::build`]) and collapses it.
    ///
    /// ```
    /// use gprox_bvh::{lane_tree::LaneNode, wide_obb::WideObbTree};
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mesh = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
    ///     vec![[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]],
    /// )
    /// .unwrap();
    /// let tree = WideObbTree::build(&mesh).unwrap();
    /// assert_eq!(tree.nodes().len(), 1); // four leaves fit in one node
    /// assert_eq!(tree.nodes()[0].used(), 0b1111);
    /// ```
    pub fn build(mesh: &TriMesh) -> Result<Self, WideError> {
        Self::from_tree(BvTree::build(mesh))
    }

    /// Collapses `tree` (checked: links in range, no node reached twice). Unused slots hold
    /// the volume of the whole node.
    pub fn from_tree(tree: BvTree<N::Bv>) -> Result<Self, WideError> {
        let wide = WideTree::<N::Bv, Wide8Node>::from_binary(&tree)?;
        check_node_count(wide.nodes.len())?;
        let nodes = wide
            .nodes
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let mut out = N::with_children(n.children);
                for s in 0..LANES {
                    out.set_slot(s, wide.slot_bv(k, s));
                }
                out
            })
            .collect();
        Ok(Self { tree, nodes })
    }

    /// The binary tree.
    pub fn tree(&self) -> &BvTree<N::Bv> {
        &self.tree
    }

    /// The wide nodes; node 0 holds the root's children.
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The root's volume (the binary tree's root volume).
    pub fn root(&self) -> &N::Bv {
        &self.tree.nodes[0].bv
    }

    /// Upper bound of `|p|` over the vertices below the root.
    pub fn reach(&self) -> f64 {
        self.root().reach()
    }

    /// Whether slot value `c` is a face (`Some(face)`) rather than a node.
    #[inline]
    pub fn face(c: u32) -> Option<u32> {
        (c & LEAF_BIT != 0 && c != EMPTY).then_some(c & !LEAF_BIT)
    }
}

#[cfg(test)]
mod tests {
    use super::{check_node_count, LANES};

    /// The largest allowed count keeps every slot reference below `u32::MAX`; one more fails.
    #[test]
    fn node_count_limit() {
        let max = (u32::MAX as usize) / LANES - 1;
        assert!(check_node_count(max).is_ok());
        assert!(max * LANES + LANES - 1 < u32::MAX as usize);
        assert!(check_node_count(max + 1).is_err());
    }
}
