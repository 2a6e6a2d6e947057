//! Kernel parameter structs: one `#[repr(C)]` struct per kernel, passed by value; the `u64`
//! fields are device addresses ([`crate::DeviceBuffer::device_ptr`]). Mirrored field for field by
//! `kernels/include/gprox/params.cuh` (the layout test compares sizes and offsets).

use gprox_geometry::transform::Pose64;

/// Marker for the parameter structs that may be passed to [`crate::Device::launch`].
///
/// # Safety
/// Implementors must be `#[repr(C)]`, mirror a struct of `params.cuh` exactly, and contain no
/// padding that the C++ side would read.
pub unsafe trait KernelParams: bytemuck::Pod + cudarc::driver::DeviceRepr {}

macro_rules! params {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        // SAFETY: repr(C), mirrors params.cuh / distance.cuh (checked by tests/layout.rs),
        // all fields Pod.
        unsafe impl $crate::params::KernelParams for $name {}
        // SAFETY: plain old data, passed by value to a kernel with the same layout.
        unsafe impl cudarc::driver::DeviceRepr for $name {}
    };
}
pub(crate) use params;

params!(
    /// `gprox_prim_boxes`: the f32 box of every face.
    PrimBoxesParams {
        /// `const float[3 * vertices]`.
        positions: u64,
        /// `const u32[3 * count]`.
        faces: u64,
        /// `Aabb[count]` (out).
        boxes: u64,
        /// Faces.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_reduce_bounds`: per-block box of boxes (or of their centroids).
    ReduceBoundsParams {
        /// `const Aabb[count]`.
        input: u64,
        /// `Aabb[grid]` (out).
        output: u64,
        /// Input boxes.
        count: u32,
        /// 1: reduce the centroids, 0: the boxes.
        centroids: u32,
    }
);

params!(
    /// `gprox_morton_codes`: 63-bit codes of the box centroids.
    MortonParams {
        /// `const Aabb[count]`.
        boxes: u64,
        /// `const Aabb[1]`: box of the centroids.
        scene: u64,
        /// `u64[count]` (out).
        codes: u64,
        /// `u32[count]` (out): `0..count`.
        indices: u64,
        /// Primitives.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_radix_digits` (every pass's digit counts) and `gprox_radix_pass` (one 8-bit LSD pass).
    RadixParams {
        /// `const u64[count]`.
        keys_in: u64,
        /// `const u32[count]`.
        values_in: u64,
        /// `u64[count]` (out).
        keys_out: u64,
        /// `u32[count]` (out).
        values_out: u64,
        /// `u32[8 + passes * 256 * tiles]`: the pass tickets, then the look-back status of
        /// every pass, tile and digit.
        status: u64,
        /// `u32[8 * 256]`: digit counts by pass, added up by `gprox_radix_digits` (zero
        /// before the sort).
        totals: u64,
        /// 0, or a `const u32` on the device: the element count (at most `count`), for a sort
        /// of a count made on the device.
        count_at: u64,
        /// Elements (with `count_at`: the most there may be; sizes the grid).
        count: u32,
        /// Bit offset of the digit.
        shift: u32,
        /// Elements per block.
        tile: u32,
        /// Blocks.
        tiles: u32,
        /// Passes of the sort (1 to 8).
        passes: u32,
        /// Padding to 8 bytes.
        pad: u32,
    }
);

params!(
    /// `gprox_hierarchy`: Karras topology over sorted codes.
    HierarchyParams {
        /// `const u64[count]`, sorted.
        codes: u64,
        /// `const u32[count]`: primitive of each sorted slot.
        order: u64,
        /// `BvhNode[2 count - 1]` (out).
        nodes: u64,
        /// `u32[2 count - 1]` (out).
        parents: u64,
        /// Leaves.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_refit`: bottom-up boxes with atomic visit flags.
    RefitParams {
        /// `BvhNode[2 count - 1]` (in/out).
        nodes: u64,
        /// `const u32[2 count - 1]`.
        parents: u64,
        /// `const Aabb[primitives]`.
        boxes: u64,
        /// `u32[count - 1]`, zeroed.
        flags: u64,
        /// Leaves.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_world_boxes`: conservative world box of every node.
    WorldBoxesParams {
        /// The pose.
        pose: Pose64,
        /// `const BvhNode[count]`.
        nodes: u64,
        /// `Aabb[count]` (out).
        boxes: u64,
        /// Widening on every side (>= 0).
        margin: f64,
        /// Nodes.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_collide`: BVTT traversal from a front of node pairs.
    CollideParams {
        /// `const BvhNode[]` of A.
        nodes_a: u64,
        /// `const BvhNode[]` of B.
        nodes_b: u64,
        /// World boxes of A's nodes.
        boxes_a: u64,
        /// World boxes of B's nodes.
        boxes_b: u64,
        /// `const u32[2 front_count]`.
        front_in: u64,
        /// `u32[2 front_capacity]` (out).
        front_out: u64,
        /// `u32[2 pair_capacity]` (out): candidate face pairs.
        pairs: u64,
        /// `u32[2]`: pairs needed (cumulative), front needed.
        counters: u64,
        /// Pairs in `front_in`.
        front_count: u32,
        /// Capacity of `front_out` in pairs.
        front_capacity: u32,
        /// Capacity of `pairs` in pairs.
        pair_capacity: u32,
        /// 0: expand one level; 1: descend with a local stack.
        depth_first: u32,
    }
);

params!(
    /// `gprox_tri_pair`: filtered triangle test of candidate pairs.
    TriPairParams {
        /// Pose of A.
        pose_a: Pose64,
        /// Pose of B.
        pose_b: Pose64,
        /// `const float[3 * vertices]` of A.
        positions_a: u64,
        /// `const u32[3 * faces]` of A.
        faces_a: u64,
        /// Positions of B.
        positions_b: u64,
        /// Faces of B.
        faces_b: u64,
        /// `const u32[2 count]`: (face a, face b).
        pairs: u64,
        /// `u32[count]` (out): [`TRI_SEPARATE`], [`TRI_INTERSECT`] or [`TRI_UNDECIDED`].
        status: u64,
        /// 0, or the device address of a `u32` pair count (a traversal's counter): then
        /// `min(*count_at, count)` pairs are tested.
        count_at: u64,
        /// Pairs (the capacity of `pairs` when `count_at` is set).
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_balance_traverse`: persistent tasks traversing the BVTT from their own work
    /// queues (gProximity §3.3; see [`crate::balance`]).
    BalanceTraverseParams {
        /// `const BvhNode[]` of A.
        nodes_a: u64,
        /// `const BvhNode[]` of B (A's in self mode).
        nodes_b: u64,
        /// Box of A's node `i` at byte offset `i * box_stride`.
        boxes_a0: u64,
        /// Second box of A's nodes ([`BALANCE_DUAL`]), else unused.
        boxes_a1: u64,
        /// Boxes of B's nodes.
        boxes_b0: u64,
        /// Second boxes of B's nodes ([`BALANCE_DUAL`]).
        boxes_b1: u64,
        /// `const u32[3 faces]` of A ([`BALANCE_SKIP_ADJACENT`], [`BALANCE_ANY`]), else 0.
        faces: u64,
        /// Faces of B ([`BALANCE_ANY`]), else 0.
        faces_b: u64,
        /// `const f32[3 vertices]` of A ([`BALANCE_ANY`]), else 0.
        positions_a: u64,
        /// Positions of B ([`BALANCE_ANY`]), else 0.
        positions_b: u64,
        /// `u32[2 tasks task_capacity]`: each task's queue region (in/out).
        work: u64,
        /// `u32[tasks]`: items in each region (in/out).
        counts: u64,
        /// `u32[2 result_capacity]` (out): face pairs.
        results: u64,
        /// `u32[BALANCE_COUNTERS]`.
        counters: u64,
        /// [`BALANCE_WORLD`]: `const WorldBody[body_count]`, else 0.
        bodies: u64,
        /// [`BALANCE_ANY`]: world pose of A.
        pose_a: Pose64,
        /// [`BALANCE_ANY`]: world pose of B.
        pose_b: Pose64,
        /// [`BALANCE_DUAL`]: a gap separates two boxes only when it exceeds this (`≥ 0`, the
        /// CCD minimum separation).
        min_separation: f64,
        /// Items one task's region holds (the allocation's stride).
        task_capacity: u32,
        /// A task's queue holds the round's largest share plus this (capped by the stride):
        /// [`crate::BalanceOptions`]' queue and spill capacities.
        headroom: u32,
        /// [`BALANCE_WORLD`]: bodies, else 0.
        body_count: u32,
        /// Shared-memory queue size (`1..=BALANCE_MAX_LOCAL`).
        local_capacity: u32,
        /// Pairs `results` holds.
        result_capacity: u32,
        /// A task leaves when the idle count exceeds `active * idle_permille / 1000`.
        idle_permille: u32,
        /// Bytes between consecutive boxes (24: `Aabb[]`, 32: `BvhNode[]`).
        box_stride: u32,
        /// Node index of A's first leaf.
        first_leaf_a: u32,
        /// Node index of B's first leaf.
        first_leaf_b: u32,
        /// `BALANCE_*` flags.
        flags: u32,
    }
);

params!(
    /// `gprox_balance_init`: the first round's queues (root pair in task 0) and zeroed
    /// counters, written on the device.
    BalanceInitParams {
        /// `u32[2 tasks stride]` (out): the root pair at 0.
        work: u64,
        /// `u32[tasks]` (out).
        counts: u64,
        /// `u32[BALANCE_COUNTERS]` (out).
        counters: u64,
        /// Tasks.
        tasks: u32,
        /// 1: the root pair in task 0; 0: empty queues (a broad phase fills them).
        root: u32,
    }
);

/// One body of a world query (`WorldBody` in `params.cuh`): its resident tree and mesh, its
/// pose, and where its nodes start in the world's node numbering.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WorldBody {
    /// Local-to-world pose.
    pub pose: Pose64,
    /// `const BvhNode[2 leaves - 1]`.
    pub nodes: u64,
    /// `const f32[3 vertices]`.
    pub positions: u64,
    /// `const u32[3 leaves]`.
    pub faces: u64,
    /// World index of the body's node 0.
    pub base: u32,
    /// Faces (`>= 1`).
    pub leaves: u32,
}

params!(
    /// `gprox_world_body_boxes`: the world box of every node of every body.
    WorldBodyBoxesParams {
        /// `const WorldBody[count]`.
        bodies: u64,
        /// `Aabb[total]` (out), by world index.
        boxes: u64,
        /// Half the query margin, on every side.
        margin: f64,
        /// Bodies.
        count: u32,
        /// Nodes of all bodies.
        total: u32,
    }
);

params!(
    /// `gprox_world_pairs`: the broad phase on the device (body pairs whose root boxes overlap,
    /// dealt round-robin into the task queues).
    WorldPairsParams {
        /// `const WorldBody[count]`.
        bodies: u64,
        /// `const Aabb[]`: world boxes by world index.
        boxes: u64,
        /// `u32[2 tasks stride]` (out).
        work: u64,
        /// `u32[tasks]` (in/out).
        counts: u64,
        /// `u32[BALANCE_COUNTERS]`.
        counters: u64,
        /// 0 (every pair of bodies) or `const u32[2 list_count]`: the body pairs to test.
        list: u64,
        /// Bodies.
        count: u32,
        /// Tasks.
        tasks: u32,
        /// Capacity of a task's region.
        stride: u32,
        /// Pairs of `list`.
        list_count: u32,
    }
);

params!(
    /// `gprox_world_contacts`: a world traversal's leaf pairs as (body, face, body, face)
    /// records in host-mapped memory, after the filtered triangle test.
    WorldContactsParams {
        /// `const WorldBody[count]`.
        bodies: u64,
        /// `u32[BALANCE_COUNTERS]`.
        counters: u64,
        /// `const u32[2 capacity]`: leaf pairs, world node indices.
        pairs: u64,
        /// `u32[BALANCE_COUNTERS + 4 capacity]` (out, host-mapped).
        out: u64,
        /// Bodies.
        count: u32,
        /// Pairs `pairs` holds.
        capacity: u32,
        /// 1: triangle test; 0: every pair undecided (a margin: the host decides).
        test: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_balance_scan` (one block): prefix sum of the queue sizes, the even shares and
    /// the device-side end test.
    BalanceScanParams {
        /// `const u32[tasks]`.
        counts_in: u64,
        /// `u32[tasks + 1]` (out): exclusive prefix sum.
        offsets: u64,
        /// `u32[tasks]` (out): each task's share.
        counts_out: u64,
        /// `u32[BALANCE_COUNTERS]`.
        counters: u64,
        /// Tasks.
        tasks: u32,
        /// Capacity of a task's region.
        stride: u32,
        /// Room a task needs beyond its share to take steps.
        headroom: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_balance_spread`: moves every remaining item to its task's even share.
    BalanceSpreadParams {
        /// `const u32[2 tasks stride]`.
        work_in: u64,
        /// `const u32[tasks + 1]`.
        offsets: u64,
        /// `u32[2 tasks stride]` (out).
        work_out: u64,
        /// `const u32[BALANCE_COUNTERS]`: done flag and items left.
        counters: u64,
        /// Tasks.
        tasks: u32,
        /// Capacity of a region.
        stride: u32,
    }
);

params!(
    /// `gprox_pairs_out` / `gprox_pairs_header`: a traversal's leaf pairs compacted into
    /// host-mapped memory (`out[..BALANCE_COUNTERS]` the counters, then the pairs).
    PairsOutParams {
        /// `u32[BALANCE_COUNTERS]`.
        counters: u64,
        /// `const u32[2 capacity]`: the traversal's leaf pairs.
        pairs: u64,
        /// 0 (keep every pair) or `const u32[capacity]`: triangle-test status per pair.
        status: u64,
        /// `u32[BALANCE_COUNTERS + 2 capacity]` (out, host-mapped).
        out: u64,
        /// Pairs `pairs` holds.
        capacity: u32,
        /// Padding.
        pad: u32,
    }
);

/// Capacity of one task's shared-memory queue in node pairs (`GPROX_BALANCE_MAX_LOCAL`).
pub const BALANCE_MAX_LOCAL: u32 = 1024;
/// Entries of the balanced traversal's counters array (the header of a mapped result).
pub const BALANCE_COUNTERS: usize = 16;
/// Counter: leaf pairs found (counts past the result capacity).
pub const BC_RESULTS: usize = 0;
/// Counter: tasks that had work this round and ran empty or full.
pub const BC_IDLE: usize = 1;
/// Counter: work items left after a round.
pub const BC_REMAINING: usize = 2;
/// Counter: items spilled from shared memory into global memory.
pub const BC_SPILLED: usize = 3;
/// Counter: task exits with a full queue.
pub const BC_FULL: usize = 4;
/// Counter: task exits because the idle count passed the threshold.
pub const BC_THRESHOLD: usize = 5;
/// Counter: node pairs expanded.
pub const BC_PROCESSED: usize = 6;
/// Counter: task exits with an empty queue (tasks that had work).
pub const BC_EMPTY: usize = 7;
/// Counter: 1 once the traversal is over (nothing left, queue overflow, early out).
pub const BC_DONE: usize = 8;
/// Counter: tasks given work for the current round.
pub const BC_ACTIVE: usize = 9;
/// Counter: 1 when the work outgrew the queue regions (the host grows them and reruns).
pub const BC_OVERFLOW: usize = 10;
/// Counter: traversal rounds run on the device.
pub const BC_ROUNDS: usize = 11;
/// Counter: [`BALANCE_ANY`]: 1 once a certified intersecting pair was found.
pub const BC_FOUND: usize = 12;
/// Counter: task exits to hand work to tasks that got none.
pub const BC_SPREAD: usize = 13;
/// Counter: pairs written by `gprox_pairs_out` (reset once copied into the header).
pub const BC_OUT: usize = 14;
/// Counter: most work items left after a round.
pub const BC_MAX_REMAINING: usize = 15;
/// Traversal flag: one tree against itself.
pub const BALANCE_SELF: u32 = 1;
/// Traversal flag: two boxes per node (t = 0 and t = 1), pruned only when separated at both ends.
pub const BALANCE_DUAL: u32 = 2;
/// Traversal flag: drop leaf pairs whose faces share a vertex.
pub const BALANCE_SKIP_ADJACENT: u32 = 4;
/// Traversal flag: early out at the first certified intersecting pair (filtered triangle test
/// in the traversal; undecided pairs go to the results).
pub const BALANCE_ANY: u32 = 8;
/// Traversal flag: a world of many bodies (world node indices, broad-phase roots).
pub const BALANCE_WORLD: u32 = 16;
/// Counter ([`BALANCE_WORLD`]): body pairs the broad phase dealt (the slot of [`BC_REMAINING`]).
pub const BC_ROOTS: usize = BC_REMAINING;
/// Flag bit of a pair from `gprox_pairs_out`: left undecided by the filters (host test).
pub const PAIR_UNDECIDED: u32 = 0x8000_0000;

params!(
    /// `gprox_selftest_warp`: checks of the portability layer (warp intrinsics, shared memory).
    SelftestParams {
        /// `u32[5 count]` (out).
        out: u64,
        /// Threads (grid * block, whole warps).
        count: u32,
        /// Padding.
        pad: u32,
    }
);

/// `gprox_tri_pair` status: provably separated.
pub const TRI_SEPARATE: u32 = 0;
/// `gprox_tri_pair` status: provably intersecting.
pub const TRI_INTERSECT: u32 = 1;
/// `gprox_tri_pair` status: the filters could not decide; the host runs the exact test.
pub const TRI_UNDECIDED: u32 = 2;
