// Geometry images on the device (Greß, Guthe, Klein 2006, §4–6): the device twin of
// crates/query/src/geometry_image/{hierarchy, traverse, self_collide}.rs.
//
// 1. gprox_gi_build: up to five levels of a hierarchy image in one launch (the host's
//    `LEVELS_PER_BUILD`), one block per tile of nodes. Level 1 straight from the texels (the leaf level is not
//    stored: leaf boxes are made from the texels when the traversal reaches them), every further
//    level the stencil-aware min/max of the up to four children below; the normal sign bytes
//    with them when the image keeps signs. A tile is 2^k nodes square at the launch's first
//    level, so the children of every node of its later levels lie in the tile: the block builds
//    one level, waits at a barrier (its global writes are then visible to the whole block) and
//    builds the next. Five levels a launch (tiles of 16 x 16 nodes): a 512^2 image takes two
//    launches instead of nine, all enqueued without waiting.
// 2. gprox_gi_init: counters zeroed and the root pair (when the roots overlap); or, in collide
//    mode with `step` = k > 0, the seed: one block tests every pair of nodes of the levels the
//    first k steps would reach (at most the host's `SEED_PAIRS`: traverse.rs) and
//    writes the survivors as the frontier of step k + 1 — the top levels' steps, each a
//    launch around a few hundred pairs, in one launch.
// 3. gprox_gi_step: one breadth-first step, one thread per pair of the frontier (grid-stride
//    rounds, the pair count is read on the device so the host enqueues every step at once):
//    each pair's up to 16 child pairs are tested (or kept untested before the first level with
//    GPROX_GI_MIN_PAIRS pairs, but always at the leaves) into a bit mask; the survivors are
//    compacted by a block prefix sum of the mask counts (scan.cuh) and one atomic per block for
//    the block's place in the next frontier, each thread writing its pairs in the CPU's order.
//    A frontier larger than the capacity sets the overflow flag: the later steps do nothing and
//    the host grows the buffers and runs the traversal again (no pair is ever dropped).
// 4. gprox_gi_keys: a header into host-mapped memory and the leaf pairs as sort keys (TexelPair
//    order); the radix sort (radix_sort.cu, count read on the device) sorts them. Exact mode runs
//    gprox_gi_exact instead: the filtered triangle test of tri_tri.cuh on each leaf pair's quads
//    (two triangles each, as traverse.rs `quads_intersect`); certainly separate pairs are
//    dropped by a block-scan compaction, the others keyed with bit 0 set when undecided.
// 5. In approximate mode the sort's last pass writes the sorted keys straight into the
//    host-mapped output after the header; in exact mode gprox_gi_out copies them there and adds
//    the corners of every undecided pair (ImageUndecided records) for the host's exact test.
//    The host waits once.
#include "gprox/common.cuh"
#include "gprox/geometry_image.cuh"
#include "gprox/scan.cuh"
#include "gprox/tri_tri.cuh"

using namespace gprox;

namespace {
/// The existing children of node k of a level `upper_width` wide in level `low` of `f`
/// (traverse.rs `children`); returns their count.
__device__ __forceinline__ uint32_t children(const ImageFace& f, uint32_t upper_width, uint32_t low,
                                             uint32_t k, uint32_t out[4]) {
  const uint32_t x = k % upper_width, y = k / upper_width;
  const uint32_t w = level_width(f, low), h = level_height(f, low);
  uint32_t n = 0;
#pragma unroll
  for (uint32_t c = 0; c < 4; ++c) {
    const uint32_t cx = 2 * x + (c & 1u), cy = 2 * y + (c >> 1);
    if (cx < w && cy < h) out[n++] = cy * w + cx;
  }
  return n;
}

/// Whether nodes p and q of level l are the same or adjacent (self_collide.rs `near`).
__device__ __forceinline__ bool near_nodes(const ImageFace& f, uint32_t l, uint32_t p, uint32_t q) {
  const uint32_t w = level_width(f, l);
  const uint32_t px = p % w, py = p / w, qx = q % w, qy = q / w;
  return px + 1 >= qx && qx + 1 >= px && py + 1 >= qy && qy + 1 >= py;
}

/// Whether level l keeps sign bytes.
__device__ __forceinline__ bool has_signs(const ImageFace& f, uint32_t l) {
  return f.signs != 0 && (l > 0 || f.levels == 1);
}

/// The sign bytes of node k of a level that keeps them.
__device__ __forceinline__ const int8_t* node_signs(const ImageFace& f, uint32_t l, uint32_t k) {
  return dev_ptr<const int8_t>(f.signs) + 4 * static_cast<size_t>(f.level_offset[l] + k);
}

/// Self mode: whether the pair (p, q) of level l survives (self_collide.rs `survives`).
__device__ __forceinline__ bool survives(const ImageFace& f, uint32_t l, uint32_t p, uint32_t q,
                                         bool normal_test) {
  const Aabb bp = node_box(f, l, p), bq = node_box(f, l, q);
  if (is_empty(bp) || is_empty(bq) || !overlaps(bp, bq)) return false;
  if (!normal_test || !has_signs(f, l) || !near_nodes(f, l, p, q)) return true;
  const int8_t* sp = node_signs(f, l, p);
  const int8_t* sq = node_signs(f, l, q);
  for (int d = 0; d < 4; ++d) {
    if (sp[d] != 0 && sp[d] == sq[d]) return false;
  }
  return true;
}

/// The surviving child pairs of (x, y) as bits `4 i + j` (child i of A, child j of B); the
/// children are left in ca / cb.
__device__ __forceinline__ uint32_t expand(const ImageTraverseParams& p, bool test, uint32_t x,
                                           uint32_t y, uint32_t ca[4], uint32_t& ka, uint32_t cb[4],
                                           uint32_t& kb) {
  const uint32_t na = p.level_a - p.descend_a, nb = p.level_b - p.descend_b;
  const ImageFace& fb = p.self_mode ? p.a : p.b;
  if (p.descend_a) {
    ka = children(p.a, level_width(p.a, p.level_a), na, x, ca);
  } else {
    ca[0] = x;
    ka = 1;
  }
  if (p.descend_b) {
    kb = children(fb, level_width(fb, p.level_b), nb, y, cb);
  } else {
    cb[0] = y;
    kb = 1;
  }
  uint32_t mask = 0;
  if (p.self_mode) {
    const bool normal = p.normal_test != 0;
#pragma unroll
    for (uint32_t i = 0; i < 4; ++i) {
      if (i >= ka) break;
#pragma unroll
      for (uint32_t j = 0; j < 4; ++j) {
        if (j >= kb) break;
        if (x == y && j < i) continue;
        if (na == 0 && near_nodes(p.a, 0, ca[i], cb[j])) continue;
        if (survives(p.a, na, ca[i], cb[j], normal)) mask |= 1u << (4 * i + j);
      }
    }
    return mask;
  }
  Aabb bb[4];
#pragma unroll
  for (uint32_t j = 0; j < 4; ++j) {
    if (j < kb) bb[j] = node_box(fb, nb, cb[j]);
  }
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i) {
    if (i >= ka) break;
    const Aabb ba = node_box(p.a, na, ca[i]);
    if (is_empty(ba)) continue;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      if (j >= kb) break;
      if ((!test && !is_empty(bb[j])) || overlaps(ba, bb[j])) mask |= 1u << (4 * i + j);
    }
  }
  return mask;
}

/// Grid-stride rounds over `count` items with block-scan compaction (gprox_gi_step,
/// gprox_gi_exact): `test(t)` gives the number of survivors of item t (< count), a block prefix
/// sum (scan.cuh) places each thread's survivors within its block, one atomic on `counter` per
/// block reserves the block's range, and `write(at)` stores the thread's survivors from place
/// `at` on (called only when it has some). Every thread of the block must call it.
template <typename Test, typename Write>
__device__ __forceinline__ void compact_rounds(uint32_t count, uint32_t* counter,
                                               BlockScanShared& scan, uint32_t& block_base,
                                               Test test, Write write) {
  const uint32_t stride = gridDim.x * blockDim.x;
  // The rounds in which this block has items (the same for all its threads): none for most of
  // the grid when the frontier is small.
  const uint32_t first = blockIdx.x * blockDim.x;
  const uint32_t rounds = count > first ? (count - first + stride - 1) / stride : 0u;
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t t = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t n = t < count ? test(t) : 0u;
    uint64_t total;
    const uint32_t before = static_cast<uint32_t>(block_scan(n, scan, total));
    if (threadIdx.x == 0 && total != 0) {
      block_base = atomicAdd(counter, static_cast<uint32_t>(total));
    }
    __syncthreads();
    if (n != 0) write(block_base + before);
    // block_base and the scan's shared memory are reused by the next round.
    __syncthreads();
  }
}
}  // namespace

namespace {
/// Node (x, y) of level l (hierarchy.rs `merge_row`, `merge_signs_row`): at level 1 (or 0 for
/// a one-quad image) from the quads, above from the up to four children of level l - 1.
__device__ __forceinline__ void build_node(const ImageFace& f, uint32_t l, uint32_t x, uint32_t y) {
  const uint32_t k = y * level_width(f, l) + x;
  Aabb* boxes = dev_ptr<Aabb>(f.boxes) + f.level_offset[l];
  int8_t* signs = f.signs != 0 ? dev_ptr<int8_t>(f.signs) + 4 * static_cast<size_t>(f.level_offset[l]) : nullptr;
  int8_t s[4] = {0, 0, 0, 0};
  bool any = false;
  if (l <= 1) {
    // From the quads (2x..=2x+1, 2y..=2y+1) at level 1, or the one quad of a one-quad image.
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    const uint32_t span = 1u << l;
    for (uint32_t j = y * span; j < min((y + 1) * span, quads_v(f)); ++j) {
      for (uint32_t i = x * span; i < min((x + 1) * span, quads_u(f)); ++i) {
        add_quad(f, i, j, lo, hi);
        if (signs != nullptr && dev_ptr<const uint8_t>(f.quad_stencil)[j * quads_u(f) + i] != 0) {
          int8_t cs[4];
          quad_signs(f, i, j, cs);
          merge_signs(s, cs, any);
        }
      }
    }
    boxes[k] = padded(f, lo, hi);
  } else {
    // Stencil-aware min/max of the children (hierarchy.rs `merge_row`, `merge_signs_row`).
    const uint32_t cw = level_width(f, l - 1), ch = level_height(f, l - 1);
    const Aabb* below = dev_ptr<const Aabb>(f.boxes) + f.level_offset[l - 1];
    Aabb b = empty_aabb();
    for (uint32_t c = 0; c < 4; ++c) {
      const uint32_t cx = 2 * x + (c & 1u), cy = 2 * y + (c >> 1);
      if (cx >= cw || cy >= ch) continue;
      const Aabb cb = below[cy * cw + cx];
      b = merge(b, cb);
      if (signs != nullptr && !is_empty(cb)) {
        merge_signs(s, node_signs(f, l - 1, cy * cw + cx), any);
      }
    }
    boxes[k] = b;
  }
  if (signs != nullptr) {
    for (int d = 0; d < 4; ++d) signs[4 * static_cast<size_t>(k) + d] = s[d];
  }
}
}  // namespace

GPROX_KERNEL(gprox_gi_build, ImageBuildParams) {
  const ImageFace& f = p.face;
  // Levels p.level..=p.last; the tile is `side` nodes square at p.level, halving each level.
  const uint32_t side = 1u << (p.last - p.level);
  const uint32_t tiles_u = (level_width(f, p.level) + side - 1) / side;
  const uint32_t tx = blockIdx.x % tiles_u, ty = blockIdx.x / tiles_u;
  for (uint32_t l = p.level; l <= p.last; ++l) {
    const uint32_t s = side >> (l - p.level);
    const uint32_t w = level_width(f, l), h = level_height(f, l);
    for (uint32_t t = threadIdx.x; t < s * s; t += blockDim.x) {
      const uint32_t x = tx * s + t % s, y = ty * s + t / s;
      if (x < w && y < h) build_node(f, l, x, y);
    }
    // Every thread of the block reaches the barrier, the level's nodes written before it.
    __syncthreads();
  }
}
GPROX_KERNEL_EXPORT(gprox_gi_build, ImageBuildParams)

GPROX_KERNEL(gprox_gi_init, ImageTraverseParams) {
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  if (p.step != 0) {
    // The seed (collide mode): the frontier after the first p.step steps at once, tested.
    __shared__ uint32_t found;
    for (uint32_t i = threadIdx.x; i < GPROX_GI_COUNTERS; i += blockDim.x) counters[i] = 0;
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    const uint32_t na = level_width(p.a, p.level_a) * level_height(p.a, p.level_a);
    const uint32_t nb = level_width(p.b, p.level_b) * level_height(p.b, p.level_b);
    uint32_t* front = dev_ptr<uint32_t>(p.frontier_out);
    for (uint32_t t = threadIdx.x; t < na * nb; t += blockDim.x) {
      const uint32_t x = t / nb, y = t % nb;
      if (!overlaps(node_box(p.a, p.level_a, x), node_box(p.b, p.level_b, y))) continue;
      // Frontier order does not matter: the leaf pairs are sorted at the end.
      const uint32_t at = atomicAdd(&found, 1u);
      if (at < p.capacity) {
        front[2 * static_cast<size_t>(at)] = x;
        front[2 * static_cast<size_t>(at) + 1] = y;
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      // More than the capacity: the next step flags the overflow (the host grows and reruns).
      counters[GPROX_GI_COUNT + p.step] = found;
      counters[GPROX_GI_TESTED + p.step] = 1;
    }
    return;
  }
  if (global_thread() != 0) return;
  for (uint32_t i = 0; i < GPROX_GI_COUNTERS; ++i) counters[i] = 0;
  const uint32_t ta = p.a.levels - 1;
  const Aabb ra = node_box(p.a, ta, 0);
  bool alive;
  if (p.self_mode) {
    alive = !is_empty(ra) && (p.normal_test == 0 || ta == 0 || survives(p.a, ta, 0, 0, true));
  } else {
    alive = overlaps(ra, node_box(p.b, p.b.levels - 1, 0));
  }
  uint32_t* front = dev_ptr<uint32_t>(p.frontier_out);
  front[0] = 0;
  front[1] = 0;
  counters[GPROX_GI_COUNT] = alive ? 1u : 0u;
}
GPROX_KERNEL_EXPORT(gprox_gi_init, ImageTraverseParams)

GPROX_KERNEL(gprox_gi_step, ImageTraverseParams) {
  __shared__ BlockScanShared scan;
  __shared__ uint32_t block_base;
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  const uint32_t count = counters[GPROX_GI_COUNT + p.step - 1];
  if (counters[GPROX_GI_OVERFLOW] != 0) return;
  if (count > p.capacity) {
    // The previous step lost pairs: the host grows the frontier and runs again.
    if (global_thread() == 0) {
      counters[GPROX_GI_OVERFLOW] = 1;
      counters[GPROX_GI_NEEDED] = count;
    }
    return;
  }
  const uint32_t fanout = (p.descend_a ? 4u : 1u) * (p.descend_b ? 4u : 1u);
  const bool test = p.self_mode || p.last || counters[GPROX_GI_TESTED + p.step - 1] != 0 ||
                    static_cast<uint64_t>(count) * fanout >= GPROX_GI_MIN_PAIRS;
  if (global_thread() == 0) counters[GPROX_GI_TESTED + p.step] = test ? 1u : 0u;
  const uint32_t* in = dev_ptr<const uint32_t>(p.frontier_in);
  uint32_t* out = dev_ptr<uint32_t>(p.frontier_out);
  uint32_t ca[4], cb[4], ka = 0, kb = 0, mask = 0;
  compact_rounds(
      count, &counters[GPROX_GI_COUNT + p.step], scan, block_base,
      [&](uint32_t t) {
        mask = expand(p, test, in[2 * static_cast<size_t>(t)], in[2 * static_cast<size_t>(t) + 1],
                      ca, ka, cb, kb);
        return static_cast<uint32_t>(__popc(mask));
      },
      [&](uint32_t at) {
        while (mask != 0) {
          const uint32_t bit = static_cast<uint32_t>(__ffs(static_cast<int>(mask)) - 1);
          mask &= mask - 1;
          if (at < p.capacity) {
            out[2 * static_cast<size_t>(at)] = ca[bit >> 2];
            out[2 * static_cast<size_t>(at) + 1] = cb[bit & 3u];
          }
          ++at;
        }
      });
}
GPROX_KERNEL_EXPORT(gprox_gi_step, ImageTraverseParams)

namespace {
/// The leaf pairs of a finished traversal: thread 0 writes the mapped header (pairs, overflow
/// flag, frontier needed) and, outside exact mode, the count to sort; every thread clears its
/// share of the radix totals. Returns false after an overflow (nothing to sort).
__device__ __forceinline__ bool leaf_header(const ImageTraverseParams& p, uint32_t& count) {
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  count = counters[GPROX_GI_COUNT + p.step];
  const bool overflow = counters[GPROX_GI_OVERFLOW] != 0 || count > p.capacity;
  if (global_thread() == 0) {
    uint32_t* out = dev_ptr<uint32_t>(p.out);
    out[0] = count;
    out[1] = overflow ? 1u : 0u;
    out[2] = counters[GPROX_GI_OVERFLOW] != 0 ? counters[GPROX_GI_NEEDED] : count;
    out[3] = 0;
    // Exact mode counts the kept pairs with atomics (zeroed by gprox_gi_init).
    if (p.exact == 0) counters[GPROX_GI_SORT_COUNT] = overflow ? 0u : count;
  }
  uint32_t* totals = dev_ptr<uint32_t>(p.totals);
  for (uint32_t i = global_thread(); i < 8u * 256u; i += gridDim.x * blockDim.x) totals[i] = 0;
  return !overflow;
}

/// The sort key of leaf pair (quad qa of A, quad qb of B): TexelPair order.
__device__ __forceinline__ uint64_t leaf_key(const ImageTraverseParams& p, uint32_t qa, uint32_t qb) {
  const uint32_t wa = quads_u(p.a), wb = quads_u(p.self_mode ? p.a : p.b);
  return (static_cast<uint64_t>(qa % wa) << p.shift_ia) |
         (static_cast<uint64_t>(qa / wa) << p.shift_ja) |
         (static_cast<uint64_t>(qb % wb) << p.shift_ib) | static_cast<uint64_t>(qb / wb);
}

/// The quads (as leaf indices of A and B) of a key made by leaf_key.
__device__ __forceinline__ void key_quads(const ImageTraverseParams& p, uint64_t k, uint32_t& qa,
                                          uint32_t& qb) {
  const auto field = [k](uint32_t lo, uint32_t hi) {
    return static_cast<uint32_t>((k >> lo) & ((uint64_t{1} << (hi - lo)) - 1u));
  };
  const uint32_t wa = quads_u(p.a), wb = quads_u(p.self_mode ? p.a : p.b);
  qa = field(p.shift_ja, p.shift_ia) * wa + static_cast<uint32_t>(k >> p.shift_ia);
  qb = field(0, p.shift_ib) * wb + field(p.shift_ib, p.shift_ja);
}

/// The two triangles (diagonal 00–11) of leaf quad q of f in f64 (traverse.rs
/// `quads_intersect`: 00 10 11 and 00 11 01).
__device__ __forceinline__ void quad_triangles(const ImageFace& f, uint32_t q, DVec3 t[2][3]) {
  float c[4][3];
  quad_corners(f, q % quads_u(f), q / quads_u(f), c);
  DVec3 d[4];
  for (int k = 0; k < 4; ++k) d[k] = DVec3{c[k][0], c[k][1], c[k][2]};
  t[0][0] = d[0];
  t[0][1] = d[1];
  t[0][2] = d[3];
  t[1][0] = d[0];
  t[1][1] = d[3];
  t[1][2] = d[2];
}

/// The filtered exact test (tri_tri.cuh) of quad qa of A against quad qb of B, both triangles
/// each: INTERSECT when one triangle pair certainly meets, SEPARATE when all four are certainly
/// apart, else UNDECIDED (the host runs traverse.rs `quads_intersect` on the corners).
__device__ __forceinline__ uint32_t quads_status(const ImageFace& fa, uint32_t qa,
                                                 const ImageFace& fb, uint32_t qb) {
  DVec3 ta[2][3], tb[2][3];
  quad_triangles(fa, qa, ta);
  quad_triangles(fb, qb, tb);
  bool undecided = false;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      const uint32_t s = triangles_intersect(ta[i], tb[j]);
      if (s == GPROX_TRI_INTERSECT) return GPROX_TRI_INTERSECT;
      undecided = undecided || s == GPROX_TRI_UNDECIDED;
    }
  }
  return undecided ? GPROX_TRI_UNDECIDED : GPROX_TRI_SEPARATE;
}
}  // namespace

GPROX_KERNEL(gprox_gi_keys, ImageTraverseParams) {
  uint32_t count;
  if (!leaf_header(p, count)) return;
  const uint32_t* in = dev_ptr<const uint32_t>(p.frontier_in);
  uint64_t* keys = dev_ptr<uint64_t>(p.keys);
  for (uint32_t i = global_thread(); i < count; i += gridDim.x * blockDim.x) {
    keys[i] = leaf_key(p, in[2 * static_cast<size_t>(i)], in[2 * static_cast<size_t>(i) + 1]);
  }
}
GPROX_KERNEL_EXPORT(gprox_gi_keys, ImageTraverseParams)

GPROX_KERNEL(gprox_gi_exact, ImageTraverseParams) {
  __shared__ BlockScanShared scan;
  __shared__ uint32_t block_base;
  uint32_t count;
  // The overflow test reads counters no thread of this kernel writes: every thread agrees.
  if (!leaf_header(p, count)) return;
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  const ImageFace& fb = p.self_mode ? p.a : p.b;
  const uint32_t* in = dev_ptr<const uint32_t>(p.frontier_in);
  uint64_t* keys = dev_ptr<uint64_t>(p.keys);
  uint64_t key = 0;
  // Kept pairs are at most the leaf pairs, which fit the keys.
  compact_rounds(
      count, &counters[GPROX_GI_SORT_COUNT], scan, block_base,
      [&](uint32_t t) {
        const uint32_t qa = in[2 * static_cast<size_t>(t)], qb = in[2 * static_cast<size_t>(t) + 1];
        const uint32_t s = quads_status(p.a, qa, fb, qb);
        key = (leaf_key(p, qa, qb) << 1) | (s == GPROX_TRI_UNDECIDED ? 1u : 0u);
        if (s == GPROX_TRI_UNDECIDED) atomicAdd(&counters[GPROX_GI_UNDECIDED], 1u);
        return s != GPROX_TRI_SEPARATE ? 1u : 0u;
      },
      [&](uint32_t at) { keys[at] = key; });
}
GPROX_KERNEL_EXPORT(gprox_gi_exact, ImageTraverseParams)

GPROX_KERNEL(gprox_gi_out, ImageTraverseParams) {
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  const uint32_t count = counters[GPROX_GI_SORT_COUNT];
  if (p.exact != 0 && global_thread() == 0) {
    // gprox_gi_exact has finished: the kept pairs (0 after an overflow) and the undecided.
    uint32_t* header = dev_ptr<uint32_t>(p.out);
    header[0] = count;
    header[3] = counters[GPROX_GI_UNDECIDED];
  }
  const uint64_t* keys = dev_ptr<const uint64_t>(p.keys);
  uint64_t* out = dev_ptr<uint64_t>(p.out + 4u * GPROX_GI_HEADER);
  const ImageFace& fb = p.self_mode ? p.a : p.b;
  for (uint32_t i = global_thread(); i < count; i += gridDim.x * blockDim.x) {
    const uint64_t k = keys[i];
    out[i] = k;
    if (p.exact == 0 || (k & 1u) == 0) continue;
    // An undecided pair: its corners for the host (a slot past the capacity makes the host
    // grow the records and run again).
    const uint32_t slot = atomicAdd(&counters[GPROX_GI_SLOT], 1u);
    if (slot >= p.corner_capacity) continue;
    ImageUndecided* rec = dev_ptr<ImageUndecided>(p.corners) + slot;
    uint32_t qa, qb;
    key_quads(p, k >> 1, qa, qb);
    rec->index = i;
    quad_corners(p.a, qa % quads_u(p.a), qa / quads_u(p.a), rec->a);
    quad_corners(fb, qb % quads_u(fb), qb / quads_u(fb), rec->b);
  }
}
GPROX_KERNEL_EXPORT(gprox_gi_out, ImageTraverseParams)

#ifndef __CUDACC__
#include <cstring>
/// sizeof / offsetof of the geometry-image layouts as the host compiler sees them.
extern "C" size_t gprox_emu_geometry_image_layout(const char* name) {
#define GPROX_L(expr)                          \
  if (std::strcmp(name, #expr) == 0) return expr;
  GPROX_L(sizeof(ImageFace))
  GPROX_L(offsetof(ImageFace, positions))
  GPROX_L(offsetof(ImageFace, quad_stencil))
  GPROX_L(offsetof(ImageFace, boxes))
  GPROX_L(offsetof(ImageFace, signs))
  GPROX_L(offsetof(ImageFace, width))
  GPROX_L(offsetof(ImageFace, height))
  GPROX_L(offsetof(ImageFace, pad))
  GPROX_L(offsetof(ImageFace, levels))
  GPROX_L(offsetof(ImageFace, level_offset))
  GPROX_L(sizeof(ImageBuildParams))
  GPROX_L(offsetof(ImageBuildParams, level))
  GPROX_L(sizeof(ImageTraverseParams))
  GPROX_L(offsetof(ImageTraverseParams, b))
  GPROX_L(offsetof(ImageTraverseParams, frontier_in))
  GPROX_L(offsetof(ImageTraverseParams, out))
  GPROX_L(offsetof(ImageTraverseParams, capacity))
  GPROX_L(offsetof(ImageTraverseParams, step))
  GPROX_L(offsetof(ImageTraverseParams, self_mode))
  GPROX_L(offsetof(ImageTraverseParams, last))
  GPROX_L(offsetof(ImageTraverseParams, keys))
  GPROX_L(offsetof(ImageTraverseParams, totals))
  GPROX_L(offsetof(ImageTraverseParams, shift_ia))
  GPROX_L(offsetof(ImageTraverseParams, shift_ib))
  GPROX_L(offsetof(ImageTraverseParams, corners))
  GPROX_L(offsetof(ImageTraverseParams, exact))
  GPROX_L(offsetof(ImageTraverseParams, corner_capacity))
  GPROX_L(sizeof(ImageUndecided))
  GPROX_L(offsetof(ImageUndecided, a))
  GPROX_L(offsetof(ImageUndecided, b))
  GPROX_L(sizeof(ImageEvalParams))
  GPROX_L(offsetof(ImageEvalParams, points))
  GPROX_L(offsetof(ImageEvalParams, v_basis))
  GPROX_L(offsetof(ImageEvalParams, pose))
  GPROX_L(offsetof(ImageEvalParams, width))
  GPROX_L(offsetof(ImageEvalParams, degree_v))
#undef GPROX_L
  return static_cast<size_t>(-1);
}
#endif
