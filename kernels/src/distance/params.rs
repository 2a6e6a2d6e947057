//! Parameter structs of the distance kernels (`include/gprox/distance.cuh`), mirrored field for
//! field (`tests/layout.rs` compares sizes and offsets with the emulator's C++ side).

use gprox_bvh::rss::Rss;
use gprox_geometry::transform::Pose64;

use crate::params::params;

/// Device mirror of `gprox_bvh::rss::Rss` (`dist::Rss` in `distance.cuh`): the Rust type is
/// `#[repr(C)]` + Pod already, so it is uploaded as is.
pub type DeviceRss = Rss;

/// One side of the traversal on the device (`DistanceTree` in `distance.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DistanceTree {
    /// `u32[8 · nodes]`: wide node, `LEAF_BIT | face`, or `EMPTY`.
    pub children: u64,
    /// `Rss[8 · nodes]`: slot volumes (model frame).
    pub bvs: u64,
    /// `u32[8 · nodes]`: a face below each slot (its corner 0 is the representative point).
    pub reps: u64,
    /// `f32[3 · vertices]`.
    pub positions: u64,
    /// `u32[3 · faces]`.
    pub faces: u64,
}

params!(
    /// `gprox_distance_expand`: bounds of every child pair of every front pair.
    DistanceExpandParams {
        /// Pose of A.
        pose_a: Pose64,
        /// Pose of B.
        pose_b: Pose64,
        /// Tree A.
        a: DistanceTree,
        /// Tree B.
        b: DistanceTree,
        /// B-model → A-model rotation, columns.
        q: [[f64; 3]; 3],
        /// B-model → A-model translation.
        t: [f64; 3],
        /// Growth of B's mapped volumes.
        grow: f64,
        /// A-model distances times this are world lower bounds.
        sigma: f64,
        /// `u32[2 · count]`: entity pairs.
        front: u64,
        /// `f64[64 · count]` (out): lower bounds (∞: no such child pair).
        lower: u64,
        /// `f64[64 · count]` (out): upper bounds.
        upper: u64,
        /// Front pairs.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_distance_filter`: survivors to the next front or the leaf pairs.
    DistanceFilterParams {
        /// `u32[8 · nodes of A]`.
        children_a: u64,
        /// `u32[8 · nodes of B]`.
        children_b: u64,
        /// `u32[2 · count]`.
        front: u64,
        /// `f64[64 · count]`.
        lower: u64,
        /// `f64[64 · count]` (out): bounds of the pruned pairs, else ∞.
        pruned: u64,
        /// `u32[2 · next_capacity]` (out).
        next: u64,
        /// `u32[2 · leaf_capacity]` (out): (face a, face b).
        leaves: u64,
        /// `u32[2]`: next pairs and leaf pairs needed.
        counters: u64,
        /// Prune when lower > this.
        rep_bound: f64,
        /// Prune when lower ≥ this.
        cut: f64,
        /// Front pairs.
        count: u32,
        /// Capacity of `next`.
        next_capacity: u32,
        /// Capacity of `leaves`.
        leaf_capacity: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_distance_triangles`: exact distance of every leaf pair.
    DistanceTrianglesParams {
        /// Pose of A.
        pose_a: Pose64,
        /// Pose of B.
        pose_b: Pose64,
        /// `f32[3 · vertices of A]`.
        positions_a: u64,
        /// `u32[3 · faces of A]`.
        faces_a: u64,
        /// `f32[3 · vertices of B]`.
        positions_b: u64,
        /// `u32[3 · faces of B]`.
        faces_b: u64,
        /// `u32[2 · count]`: (face a, face b).
        pairs: u64,
        /// `f64[count]` (out): distance, ∞ when undecided.
        distances: u64,
        /// `f64[6 · count]` (out): closest point on a, then on b.
        points: u64,
        /// `u32[count]` (out): indices of the undecided pairs.
        undecided: u64,
        /// `u32[1]`: undecided pairs.
        counters: u64,
        /// Pairs.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_distance_min`: per-block minimum with argmin (ties: smallest index).
    DistanceMinParams {
        /// `f64[count]`.
        values: u64,
        /// `u32[count]`, or 0 for the identity.
        indices: u64,
        /// `f64[blocks]` (out).
        out_values: u64,
        /// `u32[blocks]` (out).
        out_indices: u64,
        /// Values.
        count: u32,
        /// Padding.
        pad: u32,
    }
);
