// Stable LSD radix sort of (u64 key, u32 value), 8-bit digits (LBVH spec step 4): eight passes
// of three kernels, each parallel over its whole grid. Mirrors gprox_bvh::sort (any stable sort
// gives the same result).
//
// * gprox_radix_histogram: block b counts the digits of tile b into histogram[digit * tiles + b]
//   (digit-major) and adds them to the pass's digit counts `totals[pass * 256 + digit]`.
// * gprox_radix_scan: the exclusive scan of the digit-major histogram, reduce-then-scan with the
//   reduction already done (the totals): block g of G scans the contiguous segment of digits
//   [256 g / G, 256 (g + 1) / G), each thread a run of it, starting from the number of keys
//   with a smaller digit (a block sum over the totals). No block waits for another.
// * gprox_radix_scatter: block b walks tile b in rounds of GPROX_RADIX_ITEMS elements a thread,
//   as rows of 32 (warp w holds rows w * ITEMS .. w * ITEMS + ITEMS - 1, loaded coalesced). Every
//   thread puts the digits of its items in shared memory; each item compares its row's 32 digits
//   with its own, four at a time, for the mask of lanes with the same digit ("peers"), so its
//   rank among the equal digits before it in the row is popc(peers & lanes below). The first lane
//   of each digit records the row's count, one thread per digit turns the counts of the rows into
//   offsets (row after row; the running start of each digit carries from round to round,
//   beginning at the tile's scanned histogram entry), and every element is written once, to its
//   final place. Element order in a tile is (round, row, lane), so the pass is stable. The
//   histogram counts with the same masks: one shared atomic per distinct digit of a row.
//
// Peer masks and the block scan go through shared memory rather than warp votes or shuffles: a
// round costs a few __syncthreads and no warp-wide exchange, which keeps the host emulator (one
// OS thread per CUDA thread, two barriers per warp vote) as fast as with the old serial kernels.
//
// A pass whose digit is the same for every key (its count in `totals` is the whole input) is the
// identity: its scan does nothing and its scatter copies the tile. The check is on the device;
// the host enqueues every pass without waiting.
//
// With `count_at` set the element count is read on the device (at most `count`, which sizes the
// grid), so a sort can follow the kernel that counted its input without a host round trip.
//
// Launch shape: any block size that is a multiple of 32 (<= 256), any tile size >= 1 (the same
// for the three kernels of a pass), any scan grid of 1 to 256 blocks. `totals` (8 * 256
// counters) must be zero before pass 0.
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/scan.cuh"

using namespace gprox;

/// Elements a thread holds per round of the histogram and scatter kernels.
#define GPROX_RADIX_ITEMS 4
/// Rows of 32 elements in a round of the largest block (a warp takes GPROX_RADIX_ITEMS rows).
#define GPROX_RADIX_ROWS (GPROX_MAX_BLOCK / 32 * GPROX_RADIX_ITEMS)

namespace gprox {
__device__ __forceinline__ uint32_t radix_digit(uint64_t key, uint32_t shift) {
  return static_cast<uint32_t>((key >> shift) & 0xffu);
}

/// Elements to sort: `count`, or when `count_at` is set the device word there, at most `count`
/// (a count made on the device, e.g. the leaf pairs of a geometry-image traversal).
__device__ __forceinline__ uint32_t radix_count(const RadixParams& p) {
  if (p.count_at == 0) return p.count;
  const uint32_t n = *dev_ptr<const uint32_t>(p.count_at);
  return n < p.count ? n : p.count;
}

/// Digit counts of the running pass (`totals[pass * 256 + digit]`, by its histogram kernel).
__device__ __forceinline__ const uint32_t* radix_pass_totals(const RadixParams& p) {
  return dev_ptr<const uint32_t>(p.totals) + (p.shift / 8u) * GPROX_RADIX_BUCKETS;
}

/// Whether every key has the same digit in this pass (then the pass is the identity): that
/// digit, which the first key has too, counts every key. The same answer in every thread; only
/// after the pass's histogram kernel.
__device__ __forceinline__ bool radix_pass_trivial(const RadixParams& p) {
  const uint64_t first = dev_ptr<const uint64_t>(p.keys_in)[0];
  return radix_pass_totals(p)[radix_digit(first, p.shift)] == radix_count(p);
}

/// Lanes of a row of 32 elements from `first` that lie before `end` (a prefix of the lanes).
__device__ __forceinline__ uint32_t radix_valid_lanes(uint32_t first, uint32_t end) {
  const uint32_t n = end > first ? end - first : 0;
  return n >= 32u ? 0xffffffffu : (1u << n) - 1u;
}

/// The lanes among `valid` of a row whose digit equals `digit`; `words` holds the row's 32
/// digits, one byte each (8 words in shared memory).
__device__ __forceinline__ uint32_t radix_row_peers(const uint32_t* words, uint32_t digit,
                                                    uint32_t valid) {
  const uint32_t pattern = digit * 0x01010101u;
  uint32_t peers = 0;
#pragma unroll
  for (uint32_t w = 0; w < 8u; ++w) {
    // Bytes of x are zero where lanes 4w..4w+3 hold the digit; take bit 7 of each such byte.
    const uint32_t x = words[w] ^ pattern;
    const uint32_t zero = ~(((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;
    // Gather bits 0, 8, 16, 24 of zero >> 7 into bits 21..24 (no partial products overlap).
    peers |= (((zero >> 7) * 0x00204081u) >> 21 & 0xfu) << (4u * w);
  }
  return peers & valid;
}

}  // namespace gprox

/// Block b counts the digits of tile b into histogram[digit * tiles + b] and adds them to the
/// pass's totals. Rounds of blockDim.x * GPROX_RADIX_ITEMS elements: every thread puts the
/// digits of its items in shared memory, then the first lane of each digit of each row adds the
/// row's count (one shared atomic per distinct digit of a row).
GPROX_KERNEL(gprox_radix_histogram, RadixParams) {
  __shared__ uint32_t counts[GPROX_RADIX_BUCKETS];
  __shared__ uint32_t digit_words[GPROX_RADIX_ROWS * 8];
  uint8_t* digit_bytes = reinterpret_cast<uint8_t*>(digit_words);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) counts[d] = 0;
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t start = blockIdx.x * p.tile;
  const uint32_t end = min(start + p.tile, radix_count(p));
  const uint32_t warp = threadIdx.x / 32u;
  const uint32_t lane = threadIdx.x % 32u;
  const uint32_t lanes_below = (1u << lane) - 1u;
  for (uint32_t base = start; base < end; base += blockDim.x * GPROX_RADIX_ITEMS) {
    uint32_t digit[GPROX_RADIX_ITEMS];
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      const uint32_t i = base + row * 32u + lane;
      digit[k] = i < end ? radix_digit(keys[i], p.shift) : 0u;
      digit_bytes[row * 32u + lane] = static_cast<uint8_t>(digit[k]);
    }
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      const uint32_t valid = radix_valid_lanes(base + row * 32u, end);
      const uint32_t peers = radix_row_peers(&digit_words[row * 8u], digit[k], valid);
      if ((valid >> lane & 1u) != 0 && (peers & lanes_below) == 0) {
        atomicAdd(&counts[digit[k]], static_cast<uint32_t>(__popc(peers)));
      }
    }
    __syncthreads();
  }
  uint32_t* hist = dev_ptr<uint32_t>(p.histogram);
  uint32_t* totals = dev_ptr<uint32_t>(p.totals) + (p.shift / 8u) * GPROX_RADIX_BUCKETS;
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
    const uint32_t c = counts[d];
    hist[d * p.tiles + blockIdx.x] = c;
    if (c != 0) atomicAdd(&totals[d], c);
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_histogram, RadixParams)

/// Block g of G: exclusive scan, in place, of histogram[256 g / G * tiles .. 256 (g + 1) / G *
/// tiles), offset by the count of keys whose digit is below the segment's first digit. Each
/// thread takes a contiguous run of the segment: one block scan a block.
GPROX_KERNEL(gprox_radix_scan, RadixParams) {
  __shared__ BlockScanShared scan_shared;
  if (radix_pass_trivial(p)) return;
  const uint32_t* totals = radix_pass_totals(p);
  const uint32_t first_digit = blockIdx.x * GPROX_RADIX_BUCKETS / gridDim.x;
  const uint32_t end_digit = (blockIdx.x + 1) * GPROX_RADIX_BUCKETS / gridDim.x;
  uint32_t below = 0;  // keys with a digit below the segment's (this thread's share)
  for (uint32_t d = threadIdx.x; d < first_digit; d += blockDim.x) below += totals[d];
  uint32_t* hist = dev_ptr<uint32_t>(p.histogram);
  const uint32_t seg_end = end_digit * p.tiles;
  const uint32_t seg_len = seg_end - first_digit * p.tiles;
  const uint32_t run = (seg_len + blockDim.x - 1) / blockDim.x;
  const uint32_t begin = min(first_digit * p.tiles + threadIdx.x * run, seg_end);
  const uint32_t end = min(begin + run, seg_end);
  uint32_t run_sum = 0;
  for (uint32_t i = begin; i < end; ++i) run_sum += hist[i];
  // One scan for both: the high halves add up to the segment's base (no carry crosses from the
  // low halves, whose sums stay <= count < 2^32).
  uint64_t total;
  const uint64_t before =
      block_scan((static_cast<uint64_t>(below) << 32) | run_sum, scan_shared, total);
  uint32_t at = static_cast<uint32_t>(total >> 32) + static_cast<uint32_t>(before);
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t c = hist[i];
    hist[i] = at;
    at += c;
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_scan, RadixParams)

/// Block b writes every element of tile b to its place: the tile's start for its digit (the
/// scanned histogram) plus the elements of the tile before it with the same digit. Rounds of
/// blockDim.x * GPROX_RADIX_ITEMS elements in rows of 32 (warp w holds rows
/// w * GPROX_RADIX_ITEMS ..; element order is row-major, so rows in order keep the pass stable).
GPROX_KERNEL(gprox_radix_scatter, RadixParams) {
  // Output start of every digit for the round, and for the rounds after it.
  __shared__ uint32_t round_start[GPROX_RADIX_BUCKETS];
  __shared__ uint32_t next_start[GPROX_RADIX_BUCKETS];
  // Count, then offset in the round, of each (row, digit); valid where `present` has its bit.
  __shared__ uint16_t row_counts[GPROX_RADIX_ROWS][GPROX_RADIX_BUCKETS];
  __shared__ uint32_t present[GPROX_RADIX_ROWS][GPROX_RADIX_BUCKETS / 32];
  __shared__ uint32_t digit_words[GPROX_RADIX_ROWS * 8];
  uint8_t* digit_bytes = reinterpret_cast<uint8_t*>(digit_words);
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t* values = dev_ptr<const uint32_t>(p.values_in);
  uint64_t* keys_out = dev_ptr<uint64_t>(p.keys_out);
  uint32_t* values_out = dev_ptr<uint32_t>(p.values_out);
  const uint32_t start = blockIdx.x * p.tile;
  const uint32_t end = min(start + p.tile, radix_count(p));
  if (radix_pass_trivial(p)) {
    for (uint32_t i = start + threadIdx.x; i < end; i += blockDim.x) {
      keys_out[i] = keys[i];
      values_out[i] = values[i];
    }
    return;
  }
  const uint32_t warp = threadIdx.x / 32u;
  const uint32_t lane = threadIdx.x % 32u;
  const uint32_t lanes_below = (1u << lane) - 1u;
  const uint32_t rows = blockDim.x / 32u * GPROX_RADIX_ITEMS;
  const uint32_t round = blockDim.x * GPROX_RADIX_ITEMS;
  const uint32_t* hist = dev_ptr<const uint32_t>(p.histogram);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
    next_start[d] = hist[d * p.tiles + blockIdx.x];
  }
  for (uint32_t base = start; base < end; base += round) {
    // Load the items, publish their digits, clear the presence bits.
    uint64_t key[GPROX_RADIX_ITEMS];
    uint32_t value[GPROX_RADIX_ITEMS], digit[GPROX_RADIX_ITEMS], rank[GPROX_RADIX_ITEMS];
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      const uint32_t i = base + row * 32u + lane;
      key[k] = i < end ? keys[i] : 0;
      value[k] = i < end ? values[i] : 0;
      digit[k] = radix_digit(key[k], p.shift);
      digit_bytes[row * 32u + lane] = static_cast<uint8_t>(digit[k]);
    }
    for (uint32_t w = threadIdx.x; w < rows * (GPROX_RADIX_BUCKETS / 32); w += blockDim.x) {
      present[w / (GPROX_RADIX_BUCKETS / 32)][w % (GPROX_RADIX_BUCKETS / 32)] = 0;
    }
    __syncthreads();
    // Rank of each item among the equal digits before it in its row; the first lane of each
    // digit records the row's count.
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      const uint32_t valid = radix_valid_lanes(base + row * 32u, end);
      const uint32_t peers = radix_row_peers(&digit_words[row * 8u], digit[k], valid);
      rank[k] = static_cast<uint32_t>(__popc(peers & lanes_below));
      if ((valid >> lane & 1u) != 0 && rank[k] == 0) {
        row_counts[row][digit[k]] = static_cast<uint16_t>(__popc(peers));
        // Distinct digits of a row own distinct bits: the add is an or.
        atomicAdd(&present[row][digit[k] / 32u], 1u << (digit[k] % 32u));
      }
    }
    __syncthreads();
    // One thread per digit: counts of the rows -> offsets in the round, row after row.
    for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
      uint32_t at = 0;
      for (uint32_t r = 0; r < rows; ++r) {
        const uint32_t c = (present[r][d / 32u] >> (d % 32u) & 1u) != 0 ? row_counts[r][d] : 0u;
        row_counts[r][d] = static_cast<uint16_t>(at);
        at += c;
      }
      const uint32_t first = next_start[d];
      round_start[d] = first;
      next_start[d] = first + at;
    }
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      if (base + row * 32u + lane < end) {
        const uint32_t at = round_start[digit[k]] + row_counts[row][digit[k]] + rank[k];
        keys_out[at] = key[k];
        values_out[at] = value[k];
      }
    }
    // The next round rewrites the shared arrays read above.
    if (base + round < end) __syncthreads();
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_scatter, RadixParams)
