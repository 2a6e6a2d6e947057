// Self-test of the portability layer: warp intrinsics, shared memory and block barriers, so the
// emulator's versions are checked against their CUDA semantics (kernels/tests/emulator.rs).
#include "gprox/common.cuh"
#include "gprox/params.cuh"

using namespace gprox;

/// Per thread i (lane l): out[5i..5i+5] = ballot(i % 3 == 0), shfl(7i from lane (l + 5) % 32),
/// shfl_down(i, 3), the warp sum of i by an xor butterfly, and the block sum of i through shared
/// memory. Launch with whole warps and `count` = grid * block.
GPROX_KERNEL(gprox_selftest_warp, SelftestParams) {
  __shared__ uint32_t block_values[GPROX_MAX_BLOCK];
  const uint32_t i = global_thread();
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t full = 0xffffffffu;
  uint32_t* out = dev_ptr<uint32_t>(p.out) + 5 * static_cast<size_t>(i);
  out[0] = __ballot_sync(full, i % 3 == 0);
  out[1] = __shfl_sync(full, 7 * i, static_cast<int>((lane + 5) % 32));
  out[2] = __shfl_down_sync(full, i, 3);
  uint32_t sum = i;
  for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(full, sum, m);
  out[3] = sum;
  block_values[threadIdx.x] = i;
  __syncthreads();
  uint32_t total = 0;
  for (uint32_t t = 0; t < blockDim.x; ++t) total += block_values[t];
  out[4] = total;
}
GPROX_KERNEL_EXPORT(gprox_selftest_warp, SelftestParams)
