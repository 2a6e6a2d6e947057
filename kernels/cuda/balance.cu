// Balanced BVTT traversal: gProximity's lightweight work balancing (Lauterbach, Mo & Manocha 2010,
// §3.3), for inter-object collision (all pairs, or any with an early out), self-collision and CCD
// candidates. Every round's end test runs on the device, so the host enqueues many rounds and
// synchronises once (kernels/src/balance.rs).
//
// * gprox_balance_init: the root pair in task 0's queue, zeroed counters (no upload).
// * gprox_balance_traverse: one persistent task per block. The task's work queue is a bag of node
//   pairs: a shared-memory part (`local_capacity` items) that overflows into the task's own region
//   of global memory (`task_capacity` items in all). Each step pops up to blockDim items from the
//   shared part (refilled from the region when it runs dry), one per thread; every thread tests
//   the child pairs of its item and pushes the overlapping ones back (atomic on the shared queue
//   size; past `local_capacity` atomic on the region's size: "spilled"). Leaf pairs go to the
//   result buffer through a global atomic counter that keeps counting past its capacity. A step
//   is only taken when its worst case (every item pushes 4 children, net +3 each) fits the queue,
//   so no work is ever dropped: a queue that cannot take a step is "full". A task that had work
//   and whose queue runs empty or full adds one to the single global idle counter; after every
//   step a task compares that counter with `idle_permille` of the tasks that had work this round
//   (tasks given nothing are not idle in gProximity's sense: they never started). While more
//   than half the tasks got no work, a task whose queue holds two blocks' worth of items leaves
//   too, so the next round spreads its work ("spread"). Leaving, it writes its shared items back
//   to its region.
// * gprox_balance_scan (one block): exclusive prefix sum of the queue sizes, the total that is
//   left, the even share of every task, the tasks given work, the idle counter reset — and the end
//   test: nothing left, an early out, or shares that no longer fit the regions (overflow: the host
//   grows them and reruns) set DONE, after which every launch of the round returns at once.
// * gprox_balance_spread: every remaining item moves to its task in the even distribution.
//
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/tri_tri.cuh"
#include "gprox/world.cuh"

namespace gprox {
/// Box `i` of a box array with `stride` bytes between boxes.
__device__ __forceinline__ const Aabb& box_at(uint64_t base, uint32_t stride, uint32_t i) {
  return *dev_ptr<const Aabb>(base + static_cast<uint64_t>(i) * stride);
}

/// Whether `lo - hi > sep`, exactly (the difference of two floats is exact in double).
__device__ __forceinline__ bool gap_above(float lo, float hi, double sep) {
  return static_cast<double>(lo) - static_cast<double>(hi) > sep;
}

/// The node-pair test: closed boxes overlap, or in DUAL mode: not separated by more than
/// `min_separation` on one axis in the same order at both ends (gprox_query's
/// `boxes_separated_both_ends`, negated), compared exactly as on the CPU.
__device__ __forceinline__ bool pair_passes(const BalanceTraverseParams& p, uint32_t x,
                                            uint32_t y) {
  const Aabb& a0 = box_at(p.boxes_a0, p.box_stride, x);
  const Aabb& b0 = box_at(p.boxes_b0, p.box_stride, y);
  if ((p.flags & GPROX_BALANCE_DUAL) == 0) return overlaps(a0, b0);
  const Aabb& a1 = box_at(p.boxes_a1, p.box_stride, x);
  const Aabb& b1 = box_at(p.boxes_b1, p.box_stride, y);
  const double sep = p.min_separation;
  for (int k = 0; k < 3; ++k) {
    if ((gap_above(a0.min[k], b0.max[k], sep) && gap_above(a1.min[k], b1.max[k], sep)) ||
        (gap_above(b0.min[k], a0.max[k], sep) && gap_above(b1.min[k], a1.max[k], sep))) {
      return false;
    }
  }
  return true;
}

/// Whether two faces share a vertex index.
__device__ __forceinline__ bool faces_share_vertex(const uint32_t* faces, uint32_t f, uint32_t g) {
  const uint32_t* a = faces + 3 * static_cast<size_t>(f);
  const uint32_t* b = faces + 3 * static_cast<size_t>(g);
  for (int i = 0; i < 3; ++i) {
    if (a[i] == b[0] || a[i] == b[1] || a[i] == b[2]) return true;
  }
  return false;
}

/// One task's queue as seen by one thread: the shared part, its size, and the global region.
struct TaskQueue {
  uint32_t* local;         ///< shared: 2 * local_capacity
  uint32_t* local_count;   ///< shared
  uint32_t* region;        ///< global: 2 * task_capacity
  uint32_t* region_count;  ///< shared mirror of the region's size
  uint32_t* spilled;       ///< shared: items pushed into the region this launch
  uint32_t local_capacity;

  /// Pushes (x, y): into shared memory while it has room, else into the region. The caller
  /// guarantees the region has room (a step is only taken when its worst case fits).
  __device__ __forceinline__ void push(uint32_t x, uint32_t y) const {
    const uint32_t at = atomicAdd(local_count, 1u);
    if (at < local_capacity) {
      local[2 * at] = x;
      local[2 * at + 1] = y;
      return;
    }
    const uint32_t g = atomicAdd(region_count, 1u);
    region[2 * static_cast<size_t>(g)] = x;
    region[2 * static_cast<size_t>(g) + 1] = y;
    atomicAdd(spilled, 1u);
  }
};

/// ANY mode: the filtered triangle test of face `fa` of A against face `fb` of B in world
/// coordinates. Not inlined: it is big, and only leaf pairs reach it.
__device__ GPROX_NOINLINE uint32_t leaf_status(const BalanceTraverseParams& p, uint32_t fa,
                                             uint32_t fb) {
  DVec3 ta[3], tb[3];
  transform_triangle(p.pose_a, dev_ptr<const float>(p.positions_a),
                     dev_ptr<const uint32_t>(p.faces), fa, ta);
  transform_triangle(p.pose_b, dev_ptr<const float>(p.positions_b),
                     dev_ptr<const uint32_t>(p.faces_b), fb, tb);
  return triangles_intersect(ta, tb);
}

/// Traversal variants: the plain one, the early out (GPROX_BALANCE_ANY; its triangle test lives
/// in a kernel of its own, so the registers it needs do not lower the occupancy of the others),
/// and the world of many bodies (GPROX_BALANCE_WORLD).
#define GPROX_MODE_PLAIN 0
#define GPROX_MODE_ANY 1
#define GPROX_MODE_WORLD 2

/// The tree a node index belongs to: its nodes, the index of its node 0 and of its first leaf
/// (0 and n - 1 for a single tree; the body's base and base + leaves - 1 in a world).
struct Side {
  const BvhNode* nodes;
  uint32_t base;
  uint32_t first_leaf;
  /// Node `i` (an index of this side).
  __device__ __forceinline__ const BvhNode& node(uint32_t i) const { return nodes[i - base]; }
  /// World index of a child named by a node of this side.
  __device__ __forceinline__ uint32_t at(uint32_t child) const { return base + child; }
};

/// The side of node `x` of A (`a`) or B.
template <int kMode>
__device__ __forceinline__ Side side_of(const BalanceTraverseParams& p, bool a, uint32_t x) {
  if constexpr (kMode == GPROX_MODE_WORLD) {
    const WorldBody* bodies = dev_ptr<const WorldBody>(p.bodies);
    const WorldBody& b = bodies[body_of(bodies, p.body_count, x)];
    return Side{dev_ptr<const BvhNode>(b.nodes), b.base, b.base + b.leaves - 1};
  } else {
    return a ? Side{dev_ptr<const BvhNode>(p.nodes_a), 0, p.first_leaf_a}
             : Side{dev_ptr<const BvhNode>(p.nodes_b), 0, p.first_leaf_b};
  }
}

/// Tests the child pair (x, y): emits a leaf pair, or pushes an internal one.
template <int kMode>
__device__ __forceinline__ void visit(const BalanceTraverseParams& p, const TaskQueue& q,
                                      const Side sa, const Side sb, uint32_t x, uint32_t y) {
  if (!pair_passes(p, x, y)) return;
  if (x < sa.first_leaf || y < sb.first_leaf) {
    q.push(x, y);
    return;
  }
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  // A world's leaf pairs keep their world indices: the finishing kernel finds their bodies.
  uint32_t fa = x, fb = y;
  if constexpr (kMode != GPROX_MODE_WORLD) {
    fa = sa.node(x).left;
    fb = sb.node(y).left;
    if ((p.flags & GPROX_BALANCE_SKIP_ADJACENT) != 0 &&
        faces_share_vertex(dev_ptr<const uint32_t>(p.faces), fa, fb)) {
      return;
    }
  }
  if constexpr (kMode == GPROX_MODE_ANY) {
    const uint32_t status = leaf_status(p, fa, fb);
    if (status == GPROX_TRI_SEPARATE) return;
    if (status == GPROX_TRI_INTERSECT) {
      atomicExch(&counters[GPROX_BC_FOUND], 1u);
      return;
    }
  }
  const uint32_t at = atomicAdd(&counters[GPROX_BC_RESULTS], 1u);
  if (at < p.result_capacity) {
    uint32_t* results = dev_ptr<uint32_t>(p.results);
    results[2 * static_cast<size_t>(at)] = fa;
    results[2 * static_cast<size_t>(at) + 1] = fb;
  }
}

/// Expands one work item (at most 4 pushes).
template <int kMode>
__device__ __forceinline__ void expand(const BalanceTraverseParams& p, const TaskQueue& q,
                                       uint32_t x, uint32_t y) {
  const Side sa = side_of<kMode>(p, true, x);
  const Side sb = side_of<kMode>(p, false, y);
  const bool x_leaf = x >= sa.first_leaf;
  const bool y_leaf = y >= sb.first_leaf;
  if ((p.flags & GPROX_BALANCE_SELF) != 0 && x == y) {
    if (x_leaf) return;
    const uint32_t l = sa.at(sa.node(x).left), r = sa.at(sa.node(x).right);
    if (l < sa.first_leaf) q.push(l, l);
    if (r < sa.first_leaf) q.push(r, r);
    visit<kMode>(p, q, sa, sb, l, r);
    return;
  }
  if (x_leaf && y_leaf) {
    visit<kMode>(p, q, sa, sb, x, y);  // only the root pair of two one-face meshes gets here
  } else if (x_leaf) {
    visit<kMode>(p, q, sa, sb, x, sb.at(sb.node(y).left));
    visit<kMode>(p, q, sa, sb, x, sb.at(sb.node(y).right));
  } else if (y_leaf) {
    visit<kMode>(p, q, sa, sb, sa.at(sa.node(x).left), y);
    visit<kMode>(p, q, sa, sb, sa.at(sa.node(x).right), y);
  } else {
    const uint32_t xl = sa.at(sa.node(x).left), xr = sa.at(sa.node(x).right);
    const uint32_t yl = sb.at(sb.node(y).left), yr = sb.at(sb.node(y).right);
    visit<kMode>(p, q, sa, sb, xl, yl);
    visit<kMode>(p, q, sa, sb, xl, yr);
    visit<kMode>(p, q, sa, sb, xr, yl);
    visit<kMode>(p, q, sa, sb, xr, yr);
  }
}

/// Task states of a step.
#define GPROX_TASK_RUN 0u
#define GPROX_TASK_EMPTY 1u
#define GPROX_TASK_FULL 2u
#define GPROX_TASK_THRESHOLD 3u
#define GPROX_TASK_SPREAD 4u
#define GPROX_TASK_FOUND 5u

/// Reads a counter another block may be changing (atomic, so never a stale cached copy).
__device__ __forceinline__ uint32_t read_counter(uint32_t* counters, int which) {
  return atomicAdd(&counters[which], 0u);
}
}  // namespace gprox

using namespace gprox;

namespace gprox {
/// The persistent task of a round (see the file's comment), in traversal variant `kMode`.
template <int kMode>
__device__ __forceinline__ void balance_traverse(const BalanceTraverseParams& p) {
  __shared__ uint32_t s_queue[2 * GPROX_BALANCE_MAX_LOCAL];
  __shared__ uint32_t s_local, s_global, s_spilled, s_processed;
  __shared__ uint32_t s_take, s_top, s_refill, s_refill_from, s_state, s_stop, s_done, s_limit;
  __shared__ uint32_t s_starved, s_capacity;
  const uint32_t tid = threadIdx.x;
  const uint32_t task = blockIdx.x;
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  uint32_t* region = dev_ptr<uint32_t>(p.work) + 2 * static_cast<size_t>(task) * p.task_capacity;
  const uint32_t local_capacity =
      p.local_capacity < GPROX_BALANCE_MAX_LOCAL ? p.local_capacity : GPROX_BALANCE_MAX_LOCAL;
  if (tid == 0) {
    s_done = read_counter(counters, GPROX_BC_DONE);
    if (s_done == 0 && task == 0) atomicAdd(&counters[GPROX_BC_ROUNDS], 1u);
    const uint32_t active = read_counter(counters, GPROX_BC_ACTIVE);
    s_limit = static_cast<uint32_t>(static_cast<uint64_t>(active) * p.idle_permille / 1000u);
    s_starved = 2 * active < gridDim.x ? 1u : 0u;
    // As many items as the round's largest share plus the headroom, within the region.
    const uint32_t remaining = read_counter(counters, GPROX_BC_REMAINING);
    const uint64_t cap = (static_cast<uint64_t>(remaining) + gridDim.x - 1) / gridDim.x + p.headroom;
    s_capacity = cap < p.task_capacity ? static_cast<uint32_t>(cap) : p.task_capacity;
    s_local = 0;
    s_global = dev_ptr<const uint32_t>(p.counts)[task];
    s_spilled = 0;
    s_processed = 0;
  }
  __syncthreads();
  // The traversal is over (an earlier round ended it) or this task got no work: nothing to do,
  // and a task without work is not idle in the threshold's sense. (Every thread reads the flags
  // before thread 0 may change s_global in the loop.)
  const bool skip = s_done != 0 || s_global == 0;
  __syncthreads();
  if (skip) return;
  const TaskQueue q{s_queue, &s_local, region, &s_global, &s_spilled, local_capacity};
  // Shared decisions are written by thread 0 and read by all after a barrier; each variable is
  // written again only after a later barrier every thread has passed since reading it.
  uint32_t reason = GPROX_TASK_RUN;
  for (;;) {
    if (tid == 0) {
      uint32_t l = s_local, g = s_global;
      uint32_t refill = 0;
      if (l == 0 && g > 0) {
        refill = g < local_capacity ? g : local_capacity;
        g -= refill;
      }
      s_refill = refill;
      s_refill_from = g;
      l += refill;
      const uint32_t total = l + g;
      // Worst case of a step: every item pushes 4 children (net +3).
      const uint32_t room = s_capacity > total ? (s_capacity - total) / 3 : 0;
      uint32_t k = l < blockDim.x ? l : blockDim.x;
      if (k > room) k = room;
      s_state = l == 0 ? GPROX_TASK_EMPTY : (k == 0 ? GPROX_TASK_FULL : GPROX_TASK_RUN);
      s_take = k;
      s_top = l;
      s_global = g;
      s_local = l - k;
    }
    __syncthreads();
    const uint32_t refill = s_refill, refill_from = s_refill_from, state = s_state;
    const uint32_t k = s_take, top = s_top;
    for (uint32_t i = tid; i < refill; i += blockDim.x) {
      s_queue[2 * i] = region[2 * static_cast<size_t>(refill_from + i)];
      s_queue[2 * i + 1] = region[2 * static_cast<size_t>(refill_from + i) + 1];
    }
    __syncthreads();
    if (state != GPROX_TASK_RUN) {
      reason = state;
      break;
    }
    uint32_t x = 0, y = 0;
    if (tid < k) {
      const uint32_t at = top - k + tid;
      x = s_queue[2 * at];
      y = s_queue[2 * at + 1];
    }
    __syncthreads();  // every item is read before pushes overwrite its slot
    if (tid < k) expand<kMode>(p, q, x, y);
    __syncthreads();
    if (tid == 0) {
      if (s_local > local_capacity) s_local = local_capacity;
      s_processed += k;
      uint32_t stop = GPROX_TASK_RUN;
      if (kMode == GPROX_MODE_ANY && read_counter(counters, GPROX_BC_FOUND) != 0) {
        stop = GPROX_TASK_FOUND;
      } else if (read_counter(counters, GPROX_BC_IDLE) > s_limit) {
        stop = GPROX_TASK_THRESHOLD;
      } else if (s_starved != 0 && s_local + s_global >= 2 * blockDim.x) {
        stop = GPROX_TASK_SPREAD;
      }
      s_stop = stop;
    }
    __syncthreads();
    if (s_stop != GPROX_TASK_RUN) {
      reason = s_stop;
      break;
    }
  }
  // Write the shared items back behind the region's own.
  const uint32_t l = s_local, g = s_global;
  for (uint32_t i = tid; i < l; i += blockDim.x) {
    region[2 * static_cast<size_t>(g + i)] = s_queue[2 * i];
    region[2 * static_cast<size_t>(g + i) + 1] = s_queue[2 * i + 1];
  }
  if (tid == 0) {
    dev_ptr<uint32_t>(p.counts)[task] = g + l;
    if (reason == GPROX_TASK_EMPTY || reason == GPROX_TASK_FULL) {
      atomicAdd(&counters[GPROX_BC_IDLE], 1u);
    }
    const int which = reason == GPROX_TASK_EMPTY       ? GPROX_BC_EMPTY
                      : reason == GPROX_TASK_FULL      ? GPROX_BC_FULL
                      : reason == GPROX_TASK_SPREAD    ? GPROX_BC_SPREAD
                      : reason == GPROX_TASK_THRESHOLD ? GPROX_BC_THRESHOLD
                                                       : -1;
    if (which >= 0) atomicAdd(&counters[which], 1u);
    atomicAdd(&counters[GPROX_BC_SPILLED], s_spilled);
    atomicAdd(&counters[GPROX_BC_PROCESSED], s_processed);
  }
}
}  // namespace gprox

GPROX_KERNEL_OCCUPANCY(gprox_balance_traverse, BalanceTraverseParams, 4) {
  balance_traverse<GPROX_MODE_PLAIN>(p);
}
GPROX_KERNEL_EXPORT(gprox_balance_traverse, BalanceTraverseParams)

/// The early-out traversal (GPROX_BALANCE_ANY): leaf pairs get the filtered triangle test, and
/// every task stops once one is certified intersecting.
GPROX_KERNEL(gprox_balance_traverse_any, BalanceTraverseParams) {
  balance_traverse<GPROX_MODE_ANY>(p);
}
GPROX_KERNEL_EXPORT(gprox_balance_traverse_any, BalanceTraverseParams)

/// The world traversal (GPROX_BALANCE_WORLD): node indices are world indices of many bodies.
GPROX_KERNEL_OCCUPANCY(gprox_balance_traverse_world, BalanceTraverseParams, 4) {
  balance_traverse<GPROX_MODE_WORLD>(p);
}
GPROX_KERNEL_EXPORT(gprox_balance_traverse_world, BalanceTraverseParams)

GPROX_KERNEL(gprox_balance_init, BalanceInitParams) {
  const uint32_t i = global_thread();
  if (i < GPROX_BALANCE_COUNTERS) {
    // One item (the root pair) in one task, or nothing yet.
    const bool one = p.root != 0 && (i == GPROX_BC_REMAINING || i == GPROX_BC_ACTIVE);
    dev_ptr<uint32_t>(p.counters)[i] = one ? 1u : 0u;
  }
  if (i < p.tasks) dev_ptr<uint32_t>(p.counts)[i] = i == 0 && p.root != 0 ? 1u : 0u;
  if (i < 2 && p.root != 0) dev_ptr<uint32_t>(p.work)[i] = 0u;
}
GPROX_KERNEL_EXPORT(gprox_balance_init, BalanceInitParams)

GPROX_KERNEL(gprox_balance_scan, BalanceScanParams) {
  __shared__ uint32_t s_sums[GPROX_MAX_BLOCK];
  __shared__ uint32_t s_carry, s_done;
  const uint32_t tid = threadIdx.x;
  const uint32_t* counts_in = dev_ptr<const uint32_t>(p.counts_in);
  uint32_t* offsets = dev_ptr<uint32_t>(p.offsets);
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  if (tid == 0) {
    s_carry = 0;
    s_done = counters[GPROX_BC_DONE];
  }
  __syncthreads();
  if (s_done != 0) return;
  // Exclusive scan, one block-wide chunk at a time (Hillis–Steele in shared memory).
  for (uint32_t base = 0; base < p.tasks; base += blockDim.x) {
    const uint32_t i = base + tid;
    const uint32_t v = i < p.tasks ? counts_in[i] : 0u;
    s_sums[tid] = v;
    __syncthreads();
    for (uint32_t d = 1; d < blockDim.x; d *= 2) {
      const uint32_t add = tid >= d ? s_sums[tid - d] : 0u;
      __syncthreads();
      s_sums[tid] += add;
      __syncthreads();
    }
    const uint32_t carry = s_carry;
    if (i < p.tasks) offsets[i] = carry + s_sums[tid] - v;
    __syncthreads();
    if (tid == blockDim.x - 1) s_carry = carry + s_sums[tid];
    __syncthreads();
  }
  const uint32_t total = s_carry;
  const uint64_t share = (static_cast<uint64_t>(total) + p.tasks - 1) / p.tasks;
  const bool overflow = share + p.headroom > p.stride;
  const bool found = counters[GPROX_BC_FOUND] != 0;
  if (tid == 0) {
    offsets[p.tasks] = total;
    counters[GPROX_BC_REMAINING] = total;
    counters[GPROX_BC_IDLE] = 0;
    counters[GPROX_BC_ACTIVE] = total < p.tasks ? total : p.tasks;
    if (total > counters[GPROX_BC_MAX_REMAINING]) counters[GPROX_BC_MAX_REMAINING] = total;
    if (overflow) counters[GPROX_BC_OVERFLOW] = 1;
    if (total == 0 || overflow || found) counters[GPROX_BC_DONE] = 1;
  }
  // On overflow the queues stay as they are (the host reruns with larger regions).
  if (overflow) return;
  // Task d's share: items [d * total / tasks, (d + 1) * total / tasks).
  uint32_t* counts_out = dev_ptr<uint32_t>(p.counts_out);
  for (uint32_t d = tid; d < p.tasks; d += blockDim.x) {
    const uint64_t lo = static_cast<uint64_t>(d) * total / p.tasks;
    const uint64_t hi = static_cast<uint64_t>(d + 1) * total / p.tasks;
    counts_out[d] = static_cast<uint32_t>(hi - lo);
  }
}
GPROX_KERNEL_EXPORT(gprox_balance_scan, BalanceScanParams)

GPROX_KERNEL(gprox_balance_spread, BalanceSpreadParams) {
  const uint32_t* counters = dev_ptr<const uint32_t>(p.counters);
  if (counters[GPROX_BC_DONE] != 0) return;
  const uint32_t total = counters[GPROX_BC_REMAINING];
  const uint32_t* offsets = dev_ptr<const uint32_t>(p.offsets);
  const uint32_t* in = dev_ptr<const uint32_t>(p.work_in);
  uint32_t* out = dev_ptr<uint32_t>(p.work_out);
  for (uint32_t j = global_thread(); j < total; j += gridDim.x * blockDim.x) {
    // Source task: the last s with offsets[s] <= j (empty tasks repeat an offset).
    uint32_t lo = 0, hi = p.tasks;  // offsets[lo] <= j < offsets[hi]
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (offsets[mid] <= j) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const size_t src = static_cast<size_t>(lo) * p.stride + (j - offsets[lo]);
    // Destination task: d = ceil((j + 1) * tasks / total) - 1, whose share starts at
    // d * total / tasks.
    const uint64_t d = (static_cast<uint64_t>(j + 1) * p.tasks - 1) / total;
    const uint64_t start = d * total / p.tasks;
    const size_t dst = static_cast<size_t>(d) * p.stride + static_cast<size_t>(j - start);
    out[2 * dst] = in[2 * src];
    out[2 * dst + 1] = in[2 * src + 1];
  }
}
GPROX_KERNEL_EXPORT(gprox_balance_spread, BalanceSpreadParams)
