//! The shared layouts are the same on both sides: sizes and field offsets of the Rust types
//! (`std::mem::{size_of, offset_of}`) equal those the emulator's C++ compiler reports for the
//! mirrors in `include/gprox/{layout,params,distance}.cuh`.

use std::mem::{offset_of, size_of};

use gprox_bvh::rss::Rss;
use gprox_bvh::{Aabb, BvhNode, LEAF};
use gprox_cuda::distance::{
    DistanceMinParams, DistanceOut, DistanceQueryParams, DistanceState, DistanceTree,
};
use gprox_cuda::kernel::emulator_layout;
use gprox_cuda::params::*;
use gprox_cuda::Kernel;
use gprox_geometry::transform::Pose64;

fn check(name: &str, rust: usize) {
    assert_eq!(emulator_layout(name), rust, "{name}: C++ vs Rust");
}

macro_rules! size {
    ($t:ident) => {
        check(concat!("sizeof(", stringify!($t), ")"), size_of::<$t>())
    };
}
macro_rules! offset {
    ($t:ident, $($f:ident),*) => {
        $(check(concat!("offsetof(", stringify!($t), ",", stringify!($f), ")"), offset_of!($t, $f));)*
    };
}

#[test]
fn shared_types_match() {
    size!(Aabb);
    offset!(Aabb, min, max);
    size!(BvhNode);
    offset!(BvhNode, aabb, left, right);
    size!(Pose64);
    offset!(Pose64, rows);
    assert_eq!(LEAF, u32::MAX);
}

#[test]
fn params_match() {
    size!(PrimBoxesParams);
    offset!(PrimBoxesParams, positions, faces, boxes, count);
    size!(ReduceBoundsParams);
    offset!(ReduceBoundsParams, input, output, count, centroids);
    size!(MortonParams);
    offset!(MortonParams, boxes, scene, codes, indices, count);
    size!(RadixParams);
    offset!(
        RadixParams,
        keys_in,
        values_in,
        keys_out,
        values_out,
        status,
        totals,
        count_at,
        count,
        shift,
        tile,
        tiles,
        passes
    );
    size!(HierarchyParams);
    offset!(HierarchyParams, codes, order, nodes, parents, count);
    size!(RefitParams);
    offset!(RefitParams, nodes, parents, boxes, flags, count);
    size!(WorldBoxesParams);
    offset!(WorldBoxesParams, pose, nodes, boxes, margin, count);
    size!(CollideParams);
    offset!(
        CollideParams,
        nodes_a,
        nodes_b,
        boxes_a,
        boxes_b,
        front_in,
        front_out,
        pairs,
        counters
    );
    offset!(
        CollideParams,
        front_count,
        front_capacity,
        pair_capacity,
        depth_first
    );
    size!(TriPairParams);
    offset!(
        TriPairParams,
        pose_a,
        pose_b,
        positions_a,
        faces_a,
        positions_b,
        faces_b,
        pairs,
        status,
        count_at,
        count
    );
    size!(BalanceTraverseParams);
    offset!(
        BalanceTraverseParams,
        nodes_a,
        nodes_b,
        boxes_a0,
        boxes_a1,
        boxes_b0,
        boxes_b1,
        faces,
        faces_b,
        positions_a,
        positions_b,
        work,
        counts,
        results,
        counters,
        bodies
    );
    offset!(
        BalanceTraverseParams,
        pose_a,
        pose_b,
        min_separation,
        task_capacity,
        headroom,
        body_count,
        local_capacity,
        result_capacity,
        idle_permille,
        box_stride,
        first_leaf_a,
        first_leaf_b,
        flags
    );
    size!(BalanceInitParams);
    offset!(BalanceInitParams, work, counts, counters, tasks, root);
    size!(BalanceScanParams);
    offset!(
        BalanceScanParams,
        counts_in,
        offsets,
        counts_out,
        counters,
        tasks,
        stride,
        headroom
    );
    size!(BalanceSpreadParams);
    offset!(
        BalanceSpreadParams,
        work_in,
        offsets,
        work_out,
        counters,
        tasks,
        stride
    );
    size!(WorldBody);
    offset!(WorldBody, pose, nodes, positions, faces, base, leaves);
    size!(WorldBodyBoxesParams);
    offset!(WorldBodyBoxesParams, bodies, boxes, margin, count, total);
    size!(WorldPairsParams);
    offset!(
        WorldPairsParams,
        bodies,
        boxes,
        work,
        counts,
        counters,
        list,
        count,
        tasks,
        stride,
        list_count
    );
    size!(WorldContactsParams);
    offset!(
        WorldContactsParams,
        bodies,
        counters,
        pairs,
        out,
        count,
        capacity,
        test
    );
    size!(PairsOutParams);
    offset!(PairsOutParams, counters, pairs, status, out, capacity);
}

#[test]
fn distance_layouts_match() {
    size!(Rss);
    offset!(Rss, axes, half_lengths, radius);
    size!(DistanceTree);
    size!(DistanceState);
    offset!(
        DistanceState,
        pair,
        level_lower,
        leaf_pairs,
        front_count,
        host_count,
        status,
        need_leaves
    );
    size!(DistanceOut);
    offset!(
        DistanceOut,
        lower,
        point_a,
        point_b,
        tri_a,
        status,
        host_count,
        child_pairs,
        leaf_pairs
    );
    size!(DistanceQueryParams);
    offset!(
        DistanceQueryParams,
        pose_b,
        a,
        b,
        q,
        t,
        grow,
        sigma,
        abs_tol,
        threshold,
        state,
        front,
        next,
        lower,
        leaves,
        leaf_d,
        host,
        out,
        front_capacity,
        host_capacity,
        has_threshold
    );
    size!(DistanceMinParams);
    offset!(DistanceMinParams, out_indices, count);
}

#[test]
fn unknown_names_are_reported() {
    assert_eq!(emulator_layout("sizeof(Nothing)"), usize::MAX);
}

#[test]
fn every_kernel_has_a_params_size() {
    for k in Kernel::ALL {
        assert!(k.params_size() > 0 && k.params_size() % 8 == 0, "{k:?}");
        assert!(k.name().starts_with("gprox_"));
    }
}
