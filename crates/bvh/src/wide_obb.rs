//! OBB trees with eight boxes per node in lanes: a [`BvTree<Obb>`] collapsed by
//! [`WideTree::from_binary`], each node's eight slot boxes stored field by field (structure of
//! arrays) so that one node is tested against one box in eight SIMD lanes at once.
//!
//! The lanes hold what the f32 separating-axis test reads: the centres in f64 (the test maps and
//! subtracts them in f64), the axes rounded to f32, and the half-extents rounded *up* to f32 (so
//! every lane box contains the box it came from). The binary tree stays alongside for the
//! queries that need the f64 test (figures beyond the f32 test's range, non-rigid poses).

use glam::DVec3;
use gprox_geometry::TriMesh;

use crate::bounding_volume::BoundingVolume;
use crate::bv_tree::BvTree;
use crate::obb::Obb;
use crate::wide::{Wide8Node, WideError, WideTree, EMPTY, LEAF_BIT};

/// Boxes per node.
pub const LANES: usize = 8;

/// One node: its eight slots' boxes in lanes (unused slots repeat a used one and hold
/// [`EMPTY`]), 640 bytes.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideObbNode {
    /// Centres: `center[c][s]` is coordinate `c` of slot `s`.
    pub center: [[f64; LANES]; 3],
    /// Axes rounded to f32: `axes[3 * i + c][s]` is coordinate `c` of axis `i` of slot `s`.
    pub axes: [[f32; LANES]; 9],
    /// Half-extents rounded up to f32: `half[i][s]` along axis `i`.
    pub half: [[f32; LANES]; 3],
    /// The slot's [`BoundingVolume::size`] (the traversal descends the larger box).
    pub size: [f32; LANES],
    /// Child slots: a node index, `LEAF_BIT | face`, or [`EMPTY`] (as [`Wide8Node`]).
    pub children: [u32; LANES],
}

impl WideObbNode {
    /// Bit `s` set for every used slot.
    #[inline]
    pub fn used(&self) -> u32 {
        let mut m = 0;
        for (s, &c) in self.children.iter().enumerate() {
            m |= u32::from(c != EMPTY) << s;
        }
        m
    }

    /// Writes `b` into slot `s` (its child link unchanged).
    pub fn set_slot(&mut self, s: usize, b: &Obb) {
        let (axes, half) = lanes_of(b);
        for (c, h) in half.iter().enumerate() {
            self.center[c][s] = b.center[c];
            self.half[c][s] = *h;
        }
        for (k, v) in axes.iter().enumerate() {
            self.axes[k][s] = *v;
        }
        self.size[s] = b.size() as f32;
    }
}

/// `b`'s axes rounded to f32 (`[3 * i + c]`: coordinate `c` of axis `i`) and its half-extents
/// rounded up to f32.
pub fn lanes_of(b: &Obb) -> ([f32; 9], [f32; 3]) {
    let cols = [b.axes.x_axis, b.axes.y_axis, b.axes.z_axis];
    let axes = std::array::from_fn(|k| cols[k / 3][k % 3] as f32);
    let half = std::array::from_fn(|i| up32(b.half_extents[i]));
    (axes, half)
}

/// The least f32 not below `x` (NaN stays NaN; beyond the f32 range, +∞).
fn up32(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) >= x || y.is_nan() {
        y
    } else if y == 0.0 {
        f32::from_bits(1)
    } else if y > 0.0 {
        f32::from_bits(y.to_bits() + 1)
    } else {
        f32::from_bits(y.to_bits() - 1)
    }
}

/// An OBB tree in eight-box lanes, with the binary tree it was collapsed from.
#[derive(Clone, Debug)]
pub struct WideObbTree {
    tree: BvTree<Obb>,
    nodes: Vec<WideObbNode>,
}

impl WideObbTree {
    /// Builds the OBB tree of `mesh` ([`BvTree::build`]) and collapses it.
    ///
    /// ```
    /// use gprox_bvh::wide_obb::WideObbTree;
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

    /// Collapses `tree` (checked: links in range, no node reached twice).
    pub fn from_tree(tree: BvTree<Obb>) -> Result<Self, WideError> {
        let wide = WideTree::<Obb, Wide8Node>::from_binary(&tree)?;
        let nodes = wide
            .nodes
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let mut out = WideObbNode {
                    center: [[0.0; LANES]; 3],
                    axes: [[0.0; LANES]; 9],
                    half: [[0.0; LANES]; 3],
                    size: [0.0; LANES],
                    children: n.children,
                };
                for s in 0..LANES {
                    out.set_slot(s, wide.slot_bv(k, s));
                }
                out
            })
            .collect();
        Ok(Self { tree, nodes })
    }

    /// The binary tree (for the f64 test).
    pub fn tree(&self) -> &BvTree<Obb> {
        &self.tree
    }

    /// The wide nodes; node 0 holds the root's children.
    pub fn nodes(&self) -> &[WideObbNode] {
        &self.nodes
    }

    /// The root's box (the binary tree's root volume).
    pub fn root(&self) -> &Obb {
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

/// The centre of slot `s` of `n`.
#[inline]
pub fn slot_center(n: &WideObbNode, s: usize) -> DVec3 {
    DVec3::new(n.center[0][s], n.center[1][s], n.center[2][s])
}

#[cfg(test)]
mod tests {
    use super::up32;

    /// `up32(x)` is the least f32 not below `x`: not below it, and the f32 just under it is.
    #[test]
    fn rounds_up() {
        let mut x = 1e-45f64;
        while x < 1e39 {
            for v in [x, x * (1.0 + 1e-12), x * std::f64::consts::PI, -x] {
                let y = up32(v);
                assert!(f64::from(y) >= v, "{v}");
                let below = if y > 0.0 {
                    f32::from_bits(y.to_bits() - 1)
                } else if y == 0.0 {
                    -f32::from_bits(1)
                } else {
                    f32::from_bits(y.to_bits() + 1)
                };
                assert!(f64::from(below) < v || y.is_infinite(), "{v}");
            }
            x *= 3.7;
        }
        assert_eq!(up32(0.0), 0.0);
        assert_eq!(up32(f64::INFINITY), f32::INFINITY);
        assert!(up32(f64::NAN).is_nan());
    }
}
