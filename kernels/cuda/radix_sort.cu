// Stable LSD radix sort of (u64 key, u32 value), 8-bit digits (LBVH spec step 4), one launch
// per pass after one launch that counts every pass's digits: the chained scan of Merrill and
// Garland's decoupled look-back, as in Adinets and Merrill's "Onesweep" (2022). Mirrors
// gprox_bvh::sort (any stable sort gives the same result).
//
// * gprox_radix_digits: block b counts the digits of tile b for every pass (shared counts, added
//   to `totals[pass * 256 + digit]`), and the grid clears the pass tickets and the status words
//   of the tiles the count needs.
// * gprox_radix_pass, once per pass: a block takes the next tile by ticket (an atomic counter,
//   so every tile before it belongs to a block that started earlier), counts its digits,
//   publishes them (AGGREGATE) in its status words, and for each digit looks back over the
//   tiles before it, adding their counts until one has published its inclusive prefix (PREFIX);
//   then it publishes its own inclusive prefix. The tile's start for digit d is the number of
//   keys with a smaller digit (a block scan of the pass's totals) plus that exclusive prefix.
//   The scatter walks the tile in rounds of GPROX_RADIX_ITEMS elements a thread, as rows of 32
//   (warp w holds rows w * ITEMS .. w * ITEMS + ITEMS - 1, loaded coalesced). Every thread puts
//   the digits of its items in shared memory; each item compares its row's 32 digits with its
//   own, four at a time, for the mask of lanes with the same digit ("peers"), so its rank among
//   the equal digits before it in the row is popc(peers & lanes below). The first lane of each
//   digit records the row's count, one thread per digit turns the counts of the rows into
//   offsets (row after row; the running start of each digit carries from round to round), and
//   every element is written once, to its final place. Element order in a tile is (round, row,
//   lane), so the pass is stable. The counts use the same masks: one shared atomic per distinct
//   digit of a row.
//
// Peer masks and the block scan go through shared memory rather than warp votes or shuffles: a
// round costs a few __syncthreads and no warp-wide exchange, which keeps the host emulator (one
// OS thread per CUDA thread, two barriers per warp vote) fast. The emulator runs blocks one
// after another in launch order, so its look-back always finds the previous tile's prefix; on a
// GPU a block waits only for blocks that took their tickets before it, which are running.
//
// A pass whose digit is the same for every key (its count in `totals` is the whole input) is the
// identity: its blocks copy their tiles. The check is on the device; the host enqueues every
// pass without waiting.
//
// With `count_at` set the element count is read on the device (at most `count`, which sizes the
// grid), so a sort can follow the kernel that counted its input without a host round trip.
//
// Launch shape: any block size that is a multiple of 32 (<= 256), any tile size >= 1 (the same
// for every kernel of a sort), `tiles` blocks. `totals` (8 * 256 counters) must be zero before
// gprox_radix_digits; `status` holds GPROX_RADIX_TICKETS + passes * tiles * 256 words.
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/scan.cuh"

using namespace gprox;

/// Elements a thread holds per round of the counting and scatter loops.
#define GPROX_RADIX_ITEMS 4
/// Rows of 32 elements in a round of the largest block (a warp takes GPROX_RADIX_ITEMS rows).
#define GPROX_RADIX_ROWS (GPROX_MAX_BLOCK / 32 * GPROX_RADIX_ITEMS)
/// Pass tickets in front of the status words (one per pass; at most 8 passes).
#define GPROX_RADIX_TICKETS 8u
/// Status word: the tile's own digit count is published (aggregate) / the count of the digit
/// in this tile and every tile before it (inclusive prefix); the low 30 bits hold the count.
#define GPROX_RADIX_AGGREGATE (1u << 30)
#define GPROX_RADIX_PREFIX (2u << 30)
#define GPROX_RADIX_VALUE ((1u << 30) - 1u)

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

/// Digit counts of the running pass (`totals[pass * 256 + digit]`, by gprox_radix_digits).
__device__ __forceinline__ const uint32_t* radix_pass_totals(const RadixParams& p) {
  return dev_ptr<const uint32_t>(p.totals) + (p.shift / 8u) * GPROX_RADIX_BUCKETS;
}

/// Whether every key has the same digit in this pass (then the pass is the identity): that
/// digit, which the first key has too, counts every key. The same answer in every thread; only
/// after gprox_radix_digits.
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

/// Adds the digit counts (the byte at `shift`) of keys[start, end) to the shared `counts`, in
/// rounds of blockDim.x * GPROX_RADIX_ITEMS keys: every thread puts the digits of its keys in
/// shared memory (`digit_words`, GPROX_RADIX_ROWS * 8 words), then the first lane of each digit
/// of each row adds the row's count (one shared atomic per distinct digit of a row). Every
/// thread of the block calls it with the same range; it ends with a barrier.
__device__ __forceinline__ void radix_tile_counts(const uint64_t* keys, uint32_t start, uint32_t end,
                                                  uint32_t shift, uint32_t* counts,
                                                  uint32_t* digit_words) {
  uint8_t* digit_bytes = reinterpret_cast<uint8_t*>(digit_words);
  const uint32_t warp = threadIdx.x / 32u;
  const uint32_t lane = threadIdx.x % 32u;
  const uint32_t lanes_below = (1u << lane) - 1u;
  for (uint32_t base = start; base < end; base += blockDim.x * GPROX_RADIX_ITEMS) {
    uint32_t digit[GPROX_RADIX_ITEMS];
#pragma unroll
    for (uint32_t k = 0; k < GPROX_RADIX_ITEMS; ++k) {
      const uint32_t row = warp * GPROX_RADIX_ITEMS + k;
      const uint32_t i = base + row * 32u + lane;
      digit[k] = i < end ? radix_digit(keys[i], shift) : 0u;
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
}

/// The status words of tile `tile` in the running pass (256, one per digit).
__device__ __forceinline__ uint32_t* radix_status(const RadixParams& p, uint32_t tile) {
  const size_t at = (static_cast<size_t>(p.shift / 8u) * p.tiles + tile) * GPROX_RADIX_BUCKETS;
  return dev_ptr<uint32_t>(p.status) + GPROX_RADIX_TICKETS + at;
}

}  // namespace gprox

/// Every pass's digit counts of tile b (into `totals`), and the tickets and look-back status
/// words of the tiles the count needs cleared.
GPROX_KERNEL(gprox_radix_digits, RadixParams) {
  __shared__ uint32_t counts[8 * GPROX_RADIX_BUCKETS];
  __shared__ uint32_t digit_words[GPROX_RADIX_ROWS * 8];
  const uint32_t n = radix_count(p);
  const uint32_t needed = (n + p.tile - 1) / p.tile;
  // Tickets and the status words of the tiles the count needs, pass by pass.
  uint32_t* status = dev_ptr<uint32_t>(p.status);
  const size_t per_pass = static_cast<size_t>(needed) * GPROX_RADIX_BUCKETS;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = global_thread(); i < GPROX_RADIX_TICKETS + p.passes * per_pass; i += stride) {
    if (i < GPROX_RADIX_TICKETS) {
      status[i] = 0;
    } else {
      const size_t k = i - GPROX_RADIX_TICKETS;
      const size_t pass = k / per_pass;
      status[GPROX_RADIX_TICKETS + pass * p.tiles * GPROX_RADIX_BUCKETS + k % per_pass] = 0;
    }
  }
  for (uint32_t d = threadIdx.x; d < p.passes * GPROX_RADIX_BUCKETS; d += blockDim.x) counts[d] = 0;
  __syncthreads();
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t start = blockIdx.x * p.tile;
  const uint32_t end = min(start + p.tile, n);
  for (uint32_t pass = 0; pass < p.passes; ++pass) {
    radix_tile_counts(keys, start, end, 8u * pass, &counts[pass * GPROX_RADIX_BUCKETS], digit_words);
  }
  uint32_t* totals = dev_ptr<uint32_t>(p.totals);
  for (uint32_t d = threadIdx.x; d < p.passes * GPROX_RADIX_BUCKETS; d += blockDim.x) {
    if (counts[d] != 0) atomicAdd(&totals[d], counts[d]);
  }
}
GPROX_KERNEL_EXPORT(gprox_radix_digits, RadixParams)

/// One pass: the block's tile by ticket, its digit counts, the look-back for its start of every
/// digit, then the stable scatter of the tile.
GPROX_KERNEL(gprox_radix_pass, RadixParams) {
  __shared__ uint32_t ticket;
  __shared__ uint32_t counts[GPROX_RADIX_BUCKETS];
  __shared__ BlockScanShared scan_shared;
  // Output start of every digit for the round, and for the rounds after it.
  __shared__ uint32_t round_start[GPROX_RADIX_BUCKETS];
  __shared__ uint32_t next_start[GPROX_RADIX_BUCKETS];
  // Count, then offset in the round, of each (row, digit); valid where `present` has its bit.
  __shared__ uint16_t row_counts[GPROX_RADIX_ROWS][GPROX_RADIX_BUCKETS];
  __shared__ uint32_t present[GPROX_RADIX_ROWS][GPROX_RADIX_BUCKETS / 32];
  __shared__ uint32_t digit_words[GPROX_RADIX_ROWS * 8];
  uint8_t* digit_bytes = reinterpret_cast<uint8_t*>(digit_words);
  const uint32_t pass = p.shift / 8u;
  if (threadIdx.x == 0) ticket = atomicAdd(&dev_ptr<uint32_t>(p.status)[pass], 1u);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) counts[d] = 0;
  __syncthreads();
  const uint32_t tile = ticket;
  const uint32_t n = radix_count(p);
  const uint32_t start = tile * p.tile;
  if (start >= n) return;
  const uint32_t end = min(start + p.tile, n);
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys_in);
  const uint32_t* values = dev_ptr<const uint32_t>(p.values_in);
  uint64_t* keys_out = dev_ptr<uint64_t>(p.keys_out);
  uint32_t* values_out = dev_ptr<uint32_t>(p.values_out);
  if (radix_pass_trivial(p)) {
    for (uint32_t i = start + threadIdx.x; i < end; i += blockDim.x) {
      keys_out[i] = keys[i];
      values_out[i] = values[i];
    }
    return;
  }
  radix_tile_counts(keys, start, end, p.shift, counts, digit_words);
  uint32_t* mine = radix_status(p, tile);
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS; d += blockDim.x) {
    atomicExch(&mine[d], (tile == 0 ? GPROX_RADIX_PREFIX : GPROX_RADIX_AGGREGATE) | counts[d]);
  }
  // Start of every digit in the output: the keys with a smaller digit (each thread a run of
  // digits, one block scan).
  const uint32_t* totals = radix_pass_totals(p);
  const uint32_t run = (GPROX_RADIX_BUCKETS + blockDim.x - 1) / blockDim.x;
  const uint32_t run_first = min(threadIdx.x * run, static_cast<uint32_t>(GPROX_RADIX_BUCKETS));
  const uint32_t run_end = min(run_first + run, static_cast<uint32_t>(GPROX_RADIX_BUCKETS));
  uint32_t run_sum = 0;
  for (uint32_t d = run_first; d < run_end; ++d) run_sum += totals[d];
  uint64_t all;
  uint32_t at = static_cast<uint32_t>(block_scan(run_sum, scan_shared, all));
  for (uint32_t d = run_first; d < run_end; ++d) {
    next_start[d] = at;
    at += totals[d];
  }
  __syncthreads();
  // Look back: the digit's count in every tile before this one, four status words read at once
  // (independent loads, so their latencies overlap), newest first; an unpublished word is read
  // again.
  for (uint32_t d = threadIdx.x; d < GPROX_RADIX_BUCKETS && tile > 0; d += blockDim.x) {
    // The digit's word of tile t is column[t * 256].
    const volatile uint32_t* column = radix_status(p, 0) + d;
    uint32_t before = 0;
    uint32_t t = tile - 1;  // the newest tile not yet counted
    bool done = false;
    while (!done) {
      // Four words at once (independent loads); 0 (unpublished) past tile 0.
      const auto word = [&](uint32_t j) {
        return j <= t ? column[static_cast<size_t>(t - j) * GPROX_RADIX_BUCKETS] : 0u;
      };
      const uint32_t w0 = word(0), w1 = word(1), w2 = word(2), w3 = word(3);
      // Count the words in order up to the first unpublished one or the first prefix; tile 0
      // publishes its prefix at once, so the count never passes tile 0.
      for (const uint32_t w : {w0, w1, w2, w3}) {
        if ((w & ~GPROX_RADIX_VALUE) == 0) break;
        before += w & GPROX_RADIX_VALUE;
        done = (w & GPROX_RADIX_PREFIX) != 0;
        if (done) break;
        --t;
      }
    }
    atomicExch(&mine[d], GPROX_RADIX_PREFIX | (before + counts[d]));
    next_start[d] += before;
  }
  __syncthreads();
  const uint32_t warp = threadIdx.x / 32u;
  const uint32_t lane = threadIdx.x % 32u;
  const uint32_t lanes_below = (1u << lane) - 1u;
  const uint32_t rows = blockDim.x / 32u * GPROX_RADIX_ITEMS;
  const uint32_t round = blockDim.x * GPROX_RADIX_ITEMS;
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
GPROX_KERNEL_EXPORT(gprox_radix_pass, RadixParams)
