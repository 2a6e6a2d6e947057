// Block-wide exclusive scan through shared memory (no warp vote or shuffle, so the host
// emulator stays fast): used by the radix sort's digit starts (radix_sort.cu) and by the stream
// compaction of the geometry-image traversal (geometry_image.cu).
#pragma once
#include "gprox/common.cuh"

namespace gprox {
/// Shared memory of block_scan.
struct BlockScanShared {
  uint64_t values[GPROX_MAX_BLOCK];
  uint64_t group_start[33];  // exclusive prefix of the 32 groups; [32]: the total
};

/// Exclusive scan of `v` over the block (a multiple of 32 threads); `total` gets the block's
/// sum. Every thread must call. Through shared memory, no warp vote or shuffle (3 barriers):
/// lane l of warp 0 sums group l (blockDim.x / 32 consecutive values), thread 0 scans the 32
/// group sums, every thread adds the values before it in its group.
__device__ __forceinline__ uint64_t block_scan(uint64_t v, BlockScanShared& sh,
                                                     uint64_t& total) {
  const uint32_t group = blockDim.x / 32u;
  sh.values[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x < 32u) {
    uint64_t sum = 0;
    for (uint32_t j = 0; j < group; ++j) sum += sh.values[threadIdx.x * group + j];
    sh.group_start[threadIdx.x] = sum;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t at = 0;
    for (uint32_t g = 0; g < 32u; ++g) {
      const uint64_t sum = sh.group_start[g];
      sh.group_start[g] = at;
      at += sum;
    }
    sh.group_start[32] = at;
  }
  __syncthreads();
  const uint32_t g = threadIdx.x / group;
  uint64_t before = sh.group_start[g];
  for (uint32_t j = g * group; j < threadIdx.x; ++j) before += sh.values[j];
  total = sh.group_start[32];
  return before;
}
}  // namespace gprox
