//! Parameter, state and output structs of the distance kernels (`include/gprox/distance.cuh`),
//! mirrored field for field (`tests/layout.rs` compares sizes and offsets with the emulator's C++
//! side).

use gprox_bvh::rss::Rss;
use gprox_geometry::transform::Pose64;

use crate::params::params;

/// Device mirror of `gprox_bvh::rss::Rss` (`dist::Rss` in `distance.cuh`): the Rust type is
/// `#[repr(C)]` + Pod already, so it is uploaded as is.
pub type DeviceRss = Rss;

/// `DistanceState::status`: levels still to run.
pub const STATUS_RUNNING: u32 = 0;
/// `DistanceState::status`: the traversal is over.
pub const STATUS_DONE: u32 = 1;
/// `DistanceState::status`: a buffer was too small; grow and rerun.
pub const STATUS_OVERFLOW: u32 = 2;

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

/// A query's state on the device (`DistanceState`): minima as the ordered bits of non-negative
/// doubles, counters that count past their buffers' capacities, the status.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DistanceState {
    /// Bits of the smallest decided triangle distance.
    pub best: u64,
    /// `(face a << 32) | face b` of the smallest face pair at `pair_d`.
    pub pair: u64,
    /// The distance bits `pair` belongs to.
    pub pair_d: u64,
    /// Bits of the smallest representative upper bound.
    pub rep_bound: u64,
    /// Bits of the smallest pruned bound.
    pub lower: u64,
    /// Bits of the smallest bound of this level's child pairs.
    pub level_lower: u64,
    /// Child pairs bounded.
    pub child_pairs: u64,
    /// Triangle pairs evaluated.
    pub leaf_pairs: u64,
    /// Pairs of the current front.
    pub front_count: u32,
    /// Pairs pushed to the next front.
    pub next_count: u32,
    /// Leaf pairs of this level.
    pub leaf_count: u32,
    /// Pairs left to the host.
    pub host_count: u32,
    /// [`STATUS_RUNNING`], [`STATUS_DONE`] or [`STATUS_OVERFLOW`].
    pub status: u32,
    /// Levels completed.
    pub levels: u32,
    /// Next-front pairs the overflowing level needed.
    pub need_front: u32,
    /// Leaf pairs the overflowing level needed.
    pub need_leaves: u32,
}

/// What a batch of levels hands back in host-mapped memory (`DistanceOut`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DistanceOut {
    /// Smallest decided distance (∞: none).
    pub distance: f64,
    /// Smallest pruned bound (∞: none).
    pub lower: f64,
    /// Closest point on face a (world).
    pub point_a: [f64; 3],
    /// Closest point on face b (world).
    pub point_b: [f64; 3],
    /// Face of A (`u32::MAX`: none).
    pub tri_a: u32,
    /// Face of B.
    pub tri_b: u32,
    /// The state's status.
    pub status: u32,
    /// Levels completed.
    pub levels: u32,
    /// Next-front pairs the overflowing level needed.
    pub need_front: u32,
    /// Leaf pairs the overflowing level needed.
    pub need_leaves: u32,
    /// Pairs in the host list (counted past its capacity).
    pub host_count: u32,
    /// Padding.
    pub pad: u32,
    /// Child pairs bounded.
    pub child_pairs: u64,
    /// Triangle pairs evaluated.
    pub leaf_pairs: u64,
}

params!(
    /// Every distance kernel's params (`gprox_distance_{init,expand,filter,triangles,step,
    /// finish}`): the query and one level's buffers.
    DistanceQueryParams {
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
        /// Absolute tolerance.
        abs_tol: f64,
        /// Relative tolerance.
        rel_tol: f64,
        /// Threshold (∞ without one).
        threshold: f64,
        /// `DistanceState*`.
        state: u64,
        /// `u32[2 · front_capacity]`: this level's entity pairs.
        front: u64,
        /// `u32[2 · front_capacity]` (out): the next level's.
        next: u64,
        /// `f64[64 · front_capacity]`: child pairs' lower bounds.
        lower: u64,
        /// `u32[2 · leaf_capacity]`: this level's leaf pairs.
        leaves: u64,
        /// `f64[leaf_capacity]`: their distances.
        leaf_d: u64,
        /// `u32[2 · host_capacity]` (host-mapped): pairs for the host's exact test.
        host: u64,
        /// `DistanceOut*` (host-mapped).
        out: u64,
        /// Pairs of `front` and `next`.
        front_capacity: u32,
        /// Pairs of `leaves`.
        leaf_capacity: u32,
        /// Pairs of `host`.
        host_capacity: u32,
        /// 1: stop after the first level with a distance below the threshold.
        has_threshold: u32,
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
