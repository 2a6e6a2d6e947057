// Stable LSD radix sort of (u64 key, u32 value), 8-bit digits (LBVH spec step 4), in three
// kernels per pass: per-tile digit histograms, one exclusive scan over (digit, tile), and a
// stable scatter. Mirrors gprox_bvh::sort (chunks = tiles). Block size is free (<= 256); the
// tile size must be the same for the three kernels of a pass.
#include "gprox/common.cuh"
#include "gprox/params.cuh"

using namespace gprox;

namespace gprox {
__device__ __forceinline__ uint32_t radix_digit(uint64_t key, uint32_t shift) {
  return static_cast<uint32_t>((key >> shift) & 0xffu);
}
}  // namespace gprox

/// Block b counts the digits of tile b into histogram[digit * tiles + b].
GPROX_KERNEL(gprox_radix_histogram, RadixParams) {
  __shared__ uint32_t counts[GPROX_RADIX_BUCKETS];
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) counts[d] = 0;
  __syncthreads();
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t start = blockIdx.x * p.tile;
  const uint32_t end = min(start + p.tile, p.count);
  for (uint32_t i = start + threadIdx.x; i < end; i += blockDim.x) {
    atomicAdd(&counts[radix_digit(keys[i], p.shift)], 1u);
  }
  __syncthreads();
  uint32_t* hist = dev_ptr<uint32_t>(p.histogram);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
    hist[d * p.tiles + blockIdx.x] = counts[d];
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_histogram, RadixParams)

/// One block: exclusive scan of histogram[0 .. 256 * tiles] in place. Each thread scans a
/// contiguous run; thread 0 scans the run totals.
GPROX_KERNEL(gprox_radix_scan, RadixParams) {
  __shared__ uint32_t run_sum[GPROX_MAX_BLOCK];
  uint32_t* hist = dev_ptr<uint32_t>(p.histogram);
  const uint32_t total = GPROX_RADIX_BUCKETS * p.tiles;
  const uint32_t run = (total + blockDim.x - 1) / blockDim.x;
  const uint32_t begin = min(threadIdx.x * run, total);
  const uint32_t end = min(begin + run, total);
  uint32_t sum = 0;
  for (uint32_t i = begin; i < end; ++i) sum += hist[i];
  run_sum[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t acc = 0;
    for (uint32_t t = 0; t < blockDim.x; ++t) {
      const uint32_t s = run_sum[t];
      run_sum[t] = acc;
      acc += s;
    }
  }
  __syncthreads();
  uint32_t acc = run_sum[threadIdx.x];
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t c = hist[i];
    hist[i] = acc;
    acc += c;
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_scan, RadixParams)

/// Block b scatters tile b: the thread owning digit d walks the tile in order and writes every
/// element with digit d to the next slot of its range (stable).
GPROX_KERNEL(gprox_radix_scatter, RadixParams) {
  __shared__ uint8_t digits[GPROX_RADIX_MAX_TILE];
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t* values = dev_ptr<const uint32_t>(p.values_in);
  const uint32_t start = blockIdx.x * p.tile;
  const uint32_t end = min(start + p.tile, p.count);
  const uint32_t len = end > start ? end - start : 0;
  for (uint32_t j = threadIdx.x; j < len; j += blockDim.x) {
    digits[j] = static_cast<uint8_t>(radix_digit(keys[start + j], p.shift));
  }
  __syncthreads();
  const uint32_t* hist = dev_ptr<const uint32_t>(p.histogram);
  uint64_t* keys_out = dev_ptr<uint64_t>(p.keys_out);
  uint32_t* values_out = dev_ptr<uint32_t>(p.values_out);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
    uint32_t at = hist[d * p.tiles + blockIdx.x];
    for (uint32_t j = 0; j < len; ++j) {
      if (digits[j] == d) {
        keys_out[at] = keys[start + j];
        values_out[at] = values[start + j];
        ++at;
      }
    }
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_scatter, RadixParams)
