//! OBB trees with eight boxes per node in lanes ([`crate::lane_tree`]): each node's eight slot
//! boxes stored field by field (structure of arrays) so that one node is tested against one box
//! in eight SIMD lanes at once.
//!
//! The lanes hold what the f32 separating-axis test reads: the centres in f64 (the test maps and
//! subtracts them in f64), the axes rounded to f32, and the half-extents rounded *up* to f32 (so
//! every lane box contains the box it came from). The binary tree stays alongside for the
//! queries that need the f64 test (figures beyond the f32 test's range, non-rigid poses).

use glam::DVec3;

use crate::bounding_volume::BoundingVolume;
pub use crate::lane_tree::LANES;
use crate::lane_tree::{LaneNode, LaneTree};
use crate::obb::Obb;

/// One node: its eight slots' boxes in lanes (unused slots hold the whole node's box and
/// [`EMPTY`](crate::wide::EMPTY)), 640 bytes.
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
    /// Child slots: a node index, `LEAF_BIT | face`, or [`EMPTY`](crate::wide::EMPTY) (as
    /// [`Wide8Node`](crate::wide::Wide8Node)).
    pub children: [u32; LANES],
}

impl LaneNode for WideObbNode {
    type Bv = Obb;

    fn with_children(children: [u32; LANES]) -> Self {
        Self {
            center: [[0.0; LANES]; 3],
            axes: [[0.0; LANES]; 9],
            half: [[0.0; LANES]; 3],
            size: [0.0; LANES],
            children,
        }
    }

    fn set_slot(&mut self, s: usize, b: &Obb) {
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

    #[inline]
    fn children(&self) -> &[u32; LANES] {
        &self.children
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
pub type WideObbTree = LaneTree<WideObbNode>;

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
