// Emulator only: sizes and field offsets of the shared layouts as the C++ compiler sees them,
// for kernels/tests/layout.rs (compared with std::mem::{size_of, offset_of} in Rust).
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/distance.cuh"

#ifndef __CUDACC__
#include <cstddef>
#include <cstring>

using namespace gprox;
using Rss = dist::Rss;

#define GPROX_SIZE(T) \
  if (std::strcmp(name, "sizeof(" #T ")") == 0) return sizeof(T);
#define GPROX_OFFSET(T, field) \
  if (std::strcmp(name, "offsetof(" #T "," #field ")") == 0) return offsetof(T, field);

/// sizeof / offsetof by name ("sizeof(Aabb)", "offsetof(BvhNode,left)"); SIZE_MAX if unknown.
extern "C" size_t gprox_emu_layout(const char* name) {
  GPROX_SIZE(Aabb) GPROX_OFFSET(Aabb, min) GPROX_OFFSET(Aabb, max)
  GPROX_SIZE(BvhNode) GPROX_OFFSET(BvhNode, aabb) GPROX_OFFSET(BvhNode, left)
  GPROX_OFFSET(BvhNode, right)
  GPROX_SIZE(Pose64) GPROX_OFFSET(Pose64, rows)
  GPROX_SIZE(PrimBoxesParams) GPROX_OFFSET(PrimBoxesParams, positions)
  GPROX_OFFSET(PrimBoxesParams, faces) GPROX_OFFSET(PrimBoxesParams, boxes)
  GPROX_OFFSET(PrimBoxesParams, count)
  GPROX_SIZE(ReduceBoundsParams) GPROX_OFFSET(ReduceBoundsParams, input)
  GPROX_OFFSET(ReduceBoundsParams, output) GPROX_OFFSET(ReduceBoundsParams, count)
  GPROX_OFFSET(ReduceBoundsParams, centroids)
  GPROX_SIZE(MortonParams) GPROX_OFFSET(MortonParams, boxes) GPROX_OFFSET(MortonParams, scene)
  GPROX_OFFSET(MortonParams, codes) GPROX_OFFSET(MortonParams, indices)
  GPROX_OFFSET(MortonParams, count)
  GPROX_SIZE(RadixParams) GPROX_OFFSET(RadixParams, keys_in) GPROX_OFFSET(RadixParams, values_in)
  GPROX_OFFSET(RadixParams, keys_out) GPROX_OFFSET(RadixParams, values_out)
  GPROX_OFFSET(RadixParams, histogram) GPROX_OFFSET(RadixParams, count)
  GPROX_OFFSET(RadixParams, shift) GPROX_OFFSET(RadixParams, tile) GPROX_OFFSET(RadixParams, tiles)
  GPROX_SIZE(HierarchyParams) GPROX_OFFSET(HierarchyParams, codes)
  GPROX_OFFSET(HierarchyParams, order) GPROX_OFFSET(HierarchyParams, nodes)
  GPROX_OFFSET(HierarchyParams, parents) GPROX_OFFSET(HierarchyParams, count)
  GPROX_SIZE(RefitParams) GPROX_OFFSET(RefitParams, nodes) GPROX_OFFSET(RefitParams, parents)
  GPROX_OFFSET(RefitParams, boxes) GPROX_OFFSET(RefitParams, flags) GPROX_OFFSET(RefitParams, count)
  GPROX_SIZE(WorldBoxesParams) GPROX_OFFSET(WorldBoxesParams, pose)
  GPROX_OFFSET(WorldBoxesParams, nodes) GPROX_OFFSET(WorldBoxesParams, boxes)
  GPROX_OFFSET(WorldBoxesParams, margin) GPROX_OFFSET(WorldBoxesParams, count)
  GPROX_SIZE(CollideParams) GPROX_OFFSET(CollideParams, nodes_a) GPROX_OFFSET(CollideParams, nodes_b)
  GPROX_OFFSET(CollideParams, boxes_a) GPROX_OFFSET(CollideParams, boxes_b)
  GPROX_OFFSET(CollideParams, front_in) GPROX_OFFSET(CollideParams, front_out)
  GPROX_OFFSET(CollideParams, pairs) GPROX_OFFSET(CollideParams, counters)
  GPROX_OFFSET(CollideParams, front_count) GPROX_OFFSET(CollideParams, front_capacity)
  GPROX_OFFSET(CollideParams, pair_capacity) GPROX_OFFSET(CollideParams, depth_first)
  GPROX_SIZE(TriPairParams) GPROX_OFFSET(TriPairParams, pose_a) GPROX_OFFSET(TriPairParams, pose_b)
  GPROX_OFFSET(TriPairParams, positions_a) GPROX_OFFSET(TriPairParams, faces_a)
  GPROX_OFFSET(TriPairParams, positions_b) GPROX_OFFSET(TriPairParams, faces_b)
  GPROX_OFFSET(TriPairParams, pairs) GPROX_OFFSET(TriPairParams, status)
  GPROX_OFFSET(TriPairParams, count)
  GPROX_SIZE(SelftestParams) GPROX_OFFSET(SelftestParams, out) GPROX_OFFSET(SelftestParams, count)
  GPROX_SIZE(BalanceTraverseParams) GPROX_OFFSET(BalanceTraverseParams, nodes_a)
  GPROX_OFFSET(BalanceTraverseParams, nodes_b) GPROX_OFFSET(BalanceTraverseParams, boxes_a0)
  GPROX_OFFSET(BalanceTraverseParams, boxes_a1) GPROX_OFFSET(BalanceTraverseParams, boxes_b0)
  GPROX_OFFSET(BalanceTraverseParams, boxes_b1) GPROX_OFFSET(BalanceTraverseParams, faces)
  GPROX_OFFSET(BalanceTraverseParams, work) GPROX_OFFSET(BalanceTraverseParams, counts)
  GPROX_OFFSET(BalanceTraverseParams, results) GPROX_OFFSET(BalanceTraverseParams, counters)
  GPROX_OFFSET(BalanceTraverseParams, min_separation)
  GPROX_OFFSET(BalanceTraverseParams, task_capacity)
  GPROX_OFFSET(BalanceTraverseParams, local_capacity)
  GPROX_OFFSET(BalanceTraverseParams, result_capacity)
  GPROX_OFFSET(BalanceTraverseParams, idle_limit) GPROX_OFFSET(BalanceTraverseParams, box_stride)
  GPROX_OFFSET(BalanceTraverseParams, first_leaf_a)
  GPROX_OFFSET(BalanceTraverseParams, first_leaf_b) GPROX_OFFSET(BalanceTraverseParams, flags)
  GPROX_SIZE(BalanceScanParams) GPROX_OFFSET(BalanceScanParams, counts_in)
  GPROX_OFFSET(BalanceScanParams, offsets) GPROX_OFFSET(BalanceScanParams, counts_out)
  GPROX_OFFSET(BalanceScanParams, counters) GPROX_OFFSET(BalanceScanParams, tasks)
  GPROX_SIZE(BalanceSpreadParams) GPROX_OFFSET(BalanceSpreadParams, work_in)
  GPROX_OFFSET(BalanceSpreadParams, offsets) GPROX_OFFSET(BalanceSpreadParams, work_out)
  GPROX_OFFSET(BalanceSpreadParams, tasks) GPROX_OFFSET(BalanceSpreadParams, total)
  GPROX_OFFSET(BalanceSpreadParams, stride_in) GPROX_OFFSET(BalanceSpreadParams, stride_out)
  GPROX_SIZE(Rss) GPROX_OFFSET(Rss, axes) GPROX_OFFSET(Rss, half_lengths) GPROX_OFFSET(Rss, radius)
  GPROX_SIZE(DistanceTree)
  GPROX_SIZE(DistanceExpandParams) GPROX_OFFSET(DistanceExpandParams, a)
  GPROX_OFFSET(DistanceExpandParams, b) GPROX_OFFSET(DistanceExpandParams, q)
  GPROX_OFFSET(DistanceExpandParams, t) GPROX_OFFSET(DistanceExpandParams, grow)
  GPROX_OFFSET(DistanceExpandParams, sigma) GPROX_OFFSET(DistanceExpandParams, front)
  GPROX_OFFSET(DistanceExpandParams, count)
  GPROX_SIZE(DistanceFilterParams) GPROX_OFFSET(DistanceFilterParams, rep_bound)
  GPROX_OFFSET(DistanceFilterParams, cut) GPROX_OFFSET(DistanceFilterParams, count)
  GPROX_OFFSET(DistanceFilterParams, leaf_capacity)
  GPROX_SIZE(DistanceTrianglesParams) GPROX_OFFSET(DistanceTrianglesParams, pairs)
  GPROX_OFFSET(DistanceTrianglesParams, counters) GPROX_OFFSET(DistanceTrianglesParams, count)
  GPROX_SIZE(DistanceMinParams) GPROX_OFFSET(DistanceMinParams, out_indices)
  GPROX_OFFSET(DistanceMinParams, count)
  return SIZE_MAX;
}
#endif
