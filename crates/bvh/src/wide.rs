//! Wide trees: a binary [`BvTree`] collapsed into 4- or 8-wide nodes (gProximity §4.2: wider
//! nodes give more independent work per traversal step and shallower trees).
//!
//! Flat `#[repr(C)]` layout shared with kernels: `nodes[k].children[s]` is the slot `s` of wide
//! node `k` — another wide node index, a leaf `LEAF_BIT | face`, or [`EMPTY`] — and
//! `bvs[k * W + s]` bounds everything below that slot. Collapsing pulls in, for each wide node,
//! the largest (by [`BoundingVolume::size`]) internal descendant until `W` slots are filled.

use crate::bounding_volume::BoundingVolume;
use crate::bv_tree::BvTree;

/// Marker of an unused slot.
pub const EMPTY: u32 = u32::MAX;
/// Bit marking a slot that holds a face (leaf) instead of a wide node.
pub const LEAF_BIT: u32 = 1 << 31;

/// Errors of [`WideTree::from_binary`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WideError {
    /// Face indices must stay below `2^31` to be tagged with [`LEAF_BIT`].
    #[error("face index {face} does not fit below 2^31 (leaf tag bit)")]
    FaceIndexTooLarge {
        /// The offending face index.
        face: u32,
    },
    /// The binary tree is empty.
    #[error("cannot collapse an empty tree")]
    EmptyTree,
    /// A link of the binary tree points past its nodes.
    #[error("binary node {node} links to node {link}, past the tree's {count} nodes")]
    BadLink {
        /// The node holding the link.
        node: u32,
        /// The link.
        link: u32,
        /// Nodes in the tree.
        count: usize,
    },
    /// The binary tree's links revisit a node (a cycle or a shared subtree).
    #[error("the binary tree's links revisit a node")]
    NotATree,
    /// More wide nodes than slot references (`node · 8 + slot`, below `u32::MAX`) can name.
    #[error("{nodes} wide nodes: slot references would overflow 32 bits")]
    TooManyNodes {
        /// Wide nodes of the collapsed tree.
        nodes: usize,
    },
}

/// A wide node layout with `WIDTH` child slots.
pub trait WideNode: Copy + bytemuck::Pod + std::fmt::Debug + Send + Sync {
    /// Number of child slots.
    const WIDTH: usize;
    /// A node with every slot [`EMPTY`].
    fn empty() -> Self;
    /// The child slots.
    fn children(&self) -> &[u32];
    /// The child slots, mutable.
    fn children_mut(&mut self) -> &mut [u32];
}

macro_rules! wide_node {
    ($name:ident, $w:expr, $doc:expr) => {
        #[doc = $doc]
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            /// Child slots: wide node index, `LEAF_BIT | face`, or `EMPTY`.
            pub children: [u32; $w],
        }

        impl WideNode for $name {
            const WIDTH: usize = $w;
            fn empty() -> Self {
                Self {
                    children: [EMPTY; $w],
                }
            }
            fn children(&self) -> &[u32] {
                &self.children
            }
            fn children_mut(&mut self) -> &mut [u32] {
                &mut self.children
            }
        }
    };
}

wide_node!(Wide4Node, 4, "A 4-wide node (16 bytes).");
wide_node!(Wide8Node, 8, "An 8-wide node (32 bytes).");

/// A wide tree: nodes and one volume per slot (`bvs[k * WIDTH + s]`); node 0 is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct WideTree<B, N> {
    /// The wide nodes.
    pub nodes: Vec<N>,
    /// Slot volumes (unused slots hold a copy of the whole node's volume).
    pub bvs: Vec<B>,
}

impl<B: BoundingVolume, N: WideNode> WideTree<B, N> {
    /// Collapses a binary tree. A single-leaf tree gives one node with one leaf slot.
    ///
    /// ```
    /// use gprox_bvh::{bv_tree::BvTree, rss::Rss, wide::{WideTree, Wide8Node}};
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mesh = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
    ///     vec![[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]],
    /// )
    /// .unwrap();
    /// let wide = WideTree::<Rss, Wide8Node>::from_binary(&BvTree::build(&mesh)).unwrap();
    /// assert_eq!(wide.nodes.len(), 1); // four leaves fit in one 8-wide node
    /// ```
    pub fn from_binary(tree: &BvTree<B>) -> Result<Self, WideError> {
        let bin = &tree.nodes;
        if bin.is_empty() {
            return Err(WideError::EmptyTree);
        }
        let count = bin.len();
        let check = |node: u32, link: u32| {
            if (link as usize) < count {
                Ok(link)
            } else {
                Err(WideError::BadLink { node, link, count })
            }
        };
        let tag = |i: u32| -> Result<u32, WideError> {
            let n = &bin[i as usize];
            if n.is_leaf() {
                if n.left >= LEAF_BIT {
                    return Err(WideError::FaceIndexTooLarge { face: n.left });
                }
                Ok(LEAF_BIT | n.left)
            } else {
                Ok(i)
            }
        };
        let mut nodes: Vec<N> = Vec::new();
        let mut bvs: Vec<B> = Vec::new();
        // Queue of (wide node index, binary node it stands for).
        let mut queue = std::collections::VecDeque::new();
        nodes.push(N::empty());
        bvs.extend(std::iter::repeat_n(bin[0].bv, N::WIDTH));
        queue.push_back((0usize, 0u32));
        while let Some((k, root)) = queue.pop_front() {
            // Gather up to WIDTH binary descendants, always opening the largest internal one.
            let mut slots: Vec<u32> = vec![root];
            if bin[root as usize].is_leaf() {
                // Only a single-leaf tree reaches here.
            } else {
                loop {
                    let open = slots
                        .iter()
                        .enumerate()
                        .filter(|(_, &i)| !bin[i as usize].is_leaf())
                        .max_by(|a, b| {
                            bin[*a.1 as usize]
                                .bv
                                .size()
                                .total_cmp(&bin[*b.1 as usize].bv.size())
                        })
                        .map(|(p, _)| p);
                    let Some(p) = open else { break };
                    if slots.len() + 1 > N::WIDTH {
                        break;
                    }
                    let i = slots.swap_remove(p);
                    slots.push(check(i, bin[i as usize].left)?);
                    slots.push(check(i, bin[i as usize].right)?);
                }
            }
            for (s, &i) in slots.iter().enumerate() {
                bvs[k * N::WIDTH + s] = bin[i as usize].bv;
                let t = tag(i)?;
                let child = if t & LEAF_BIT != 0 {
                    t
                } else {
                    let c = nodes.len();
                    // A tree has fewer internal nodes than nodes; more wide nodes than that
                    // means some node was reached twice.
                    if c >= count {
                        return Err(WideError::NotATree);
                    }
                    nodes.push(N::empty());
                    bvs.extend(std::iter::repeat_n(bin[i as usize].bv, N::WIDTH));
                    queue.push_back((c, i));
                    c as u32
                };
                nodes[k].children_mut()[s] = child;
            }
        }
        Ok(Self { nodes, bvs })
    }

    /// The volume of slot `s` of node `k`.
    #[inline]
    pub fn slot_bv(&self, k: usize, s: usize) -> &B {
        &self.bvs[k * N::WIDTH + s]
    }
}
