// Separation distance between two meshes: level-synchronous traversal of two 8-wide RSS trees
// (gProximity §4.2) whose levels run on the device one after another without the host.
//
// The query's state lives on the device (DistanceState): minima as the ordered bits of
// non-negative doubles (atomicMin after a block reduction), counters that count past their
// buffers' capacities, and a status. Every kernel reads its counts from the state (grid-stride
// loops over a fixed grid) and returns at once when the status is no longer RUNNING, so the host
// enqueues init, as many levels as the deeper tree has, and finish, then synchronises once.
//
// gprox_distance_init (one thread): resets the state, puts the root pair in the front and
//   evaluates a seed triangle pair (the representatives of the roots' first slots).
// One level, for the front of entity pairs (an entity is a slot of a wide node, or the root):
// 1. gprox_distance_expand: one thread per (pair, child a, child b) — up to 64 per pair — computes
//    the world lower bound of the child pair (B's RSS mapped into A's frame, the CPU's 7-axis
//    bound, scaled by A's smallest stretch) and a cheap upper bound: the distance between the
//    representative points of the two slots (corner 0 of a face below each), inflated for
//    rounding — some triangle pair below the child pair is at most that far apart. The upper
//    bounds' minimum goes into the running representative bound.
// 2. gprox_distance_filter prunes the child pairs whose lower bound exceeds the representative
//    bound (strict, so the pair behind that bound survives) or reaches the cut of the best
//    triangle distance so far (its tolerance applied), folds the pruned bounds into the
//    certified lower bound, and appends the survivors to the next front or, for two leaves, to
//    the leaf pairs.
// 3. gprox_distance_triangles: the exact triangle distance of each leaf pair in f64 (mirrored
//    from the CPU), min-reduced into the best distance; pairs whose answer needs an exact sign the
//    filter cannot certify go to the host list (host-mapped memory).
// 4. gprox_distance_step (one block): among this level's pairs at exactly the best distance the
//    smallest (face a, face b) — ties break by faces, whatever order the threads ran in; then
//    overflow (a counter past its capacity: status OVERFLOW, the host grows and reruns), the end
//    (empty front, or a distance below the threshold: status DONE) or the next level.
// gprox_distance_finish (one thread): the state and the best pair's closest points (recomputed)
//   into host-mapped memory.
#include "gprox/common.cuh"
#include "gprox/distance.cuh"
#include "gprox/transform.cuh"

namespace gprox {
namespace dist {
/// Slot `j` (0..8) below entity `e` of a tree, or EMPTY: the root's slots, a node slot's child
/// node's slots, or a leaf slot itself (for j == 0).
__device__ __forceinline__ uint32_t child_slot(const uint32_t* children, uint32_t e, uint32_t j) {
  uint32_t slot;
  if (e == GPROX_DIST_ROOT) {
    slot = j;
  } else {
    const uint32_t c = children[e];
    if (c & GPROX_DIST_LEAF_BIT) return j == 0 ? e : GPROX_DIST_EMPTY;
    slot = 8 * c + j;
  }
  return children[slot] == GPROX_DIST_EMPTY ? GPROX_DIST_EMPTY : slot;
}

/// World position of corner 0 of `face`.
__device__ __forceinline__ DVec3 rep_point(const Pose64& pose, const DistanceTree& t, uint32_t face) {
  const float* v = dev_ptr<const float>(t.positions) +
                   3 * static_cast<size_t>(dev_ptr<const uint32_t>(t.faces)[3 * static_cast<size_t>(face)]);
  return transform_point(pose, v[0], v[1], v[2]);
}

/// Appends (x, y) to a pair buffer of `capacity`; the counter counts every attempt.
__device__ __forceinline__ void push(uint32_t* buffer, uint32_t* counter, uint32_t capacity,
                                     uint32_t x, uint32_t y) {
  const uint32_t at = atomicAdd(counter, 1u);
  if (at < capacity) {
    buffer[2 * static_cast<size_t>(at)] = x;
    buffer[2 * static_cast<size_t>(at) + 1] = y;
  }
}

/// The query state, or null when the traversal is no longer running (every thread of the grid
/// sees the same status: only gprox_distance_step and init write it).
__device__ __forceinline__ DistanceState* running(const DistanceQueryParams& p) {
  DistanceState* s = dev_ptr<DistanceState>(p.state);
  return s->status == GPROX_DIST_RUNNING ? s : nullptr;
}

/// Distance, closest points and status of face pair (fa, fb) in world coordinates.
__device__ __forceinline__ uint32_t face_pair_distance(const DistanceQueryParams& p, uint32_t fa,
                                                       uint32_t fb, double* d, DVec3* pa,
                                                       DVec3* pb) {
  DVec3 ta[3], tb[3];
  transform_triangle(p.pose_a, dev_ptr<const float>(p.a.positions),
                     dev_ptr<const uint32_t>(p.a.faces), fa, ta);
  transform_triangle(p.pose_b, dev_ptr<const float>(p.b.positions),
                     dev_ptr<const uint32_t>(p.b.faces), fb, tb);
  *d = INFINITY;
  *pa = ta[0];
  *pb = tb[0];
  return triangle_distance(ta, tb, d, pa, pb);
}

/// The best pair's closest points for gprox_distance_finish, out of line: the one-thread
/// kernel's other work then does not share registers with the triangle distance.
__device__ GPROX_NOINLINE void best_pair_points(const DistanceQueryParams& p, uint32_t fa,
                                                uint32_t fb, DVec3* pa, DVec3* pb) {
  double d;
  face_pair_distance(p, fa, fb, &d, pa, pb);
}
}  // namespace dist
}  // namespace gprox

using namespace gprox;

GPROX_KERNEL(gprox_distance_init, DistanceQueryParams) {
  if (global_thread() != 0) return;
  DistanceState* s = dev_ptr<DistanceState>(p.state);
  s->best = GPROX_DIST_INF_BITS;
  s->pair = GPROX_DIST_NO_PAIR;
  s->pair_d = GPROX_DIST_INF_BITS;
  s->rep_bound = GPROX_DIST_INF_BITS;
  s->lower = GPROX_DIST_INF_BITS;
  s->level_lower = GPROX_DIST_INF_BITS;
  s->child_pairs = 0;
  s->leaf_pairs = 1;
  s->front_count = 1;
  s->next_count = 0;
  s->leaf_count = 0;
  s->host_count = 0;
  s->status = GPROX_DIST_RUNNING;
  s->levels = 0;
  s->need_front = 0;
  s->need_leaves = 0;
  uint32_t* front = dev_ptr<uint32_t>(p.front);
  front[0] = GPROX_DIST_ROOT;
  front[1] = GPROX_DIST_ROOT;
  // Seed (like the CPU's greedy descent): the representative faces of the roots' first slots.
  const uint32_t fa = dev_ptr<const uint32_t>(p.a.reps)[0];
  const uint32_t fb = dev_ptr<const uint32_t>(p.b.reps)[0];
  double d;
  DVec3 pa, pb;
  if (dist::face_pair_distance(p, fa, fb, &d, &pa, &pb) == GPROX_DIST_UNDECIDED) {
    s->host_count = 1;  // host_capacity >= 1
    dev_ptr<uint32_t>(p.host)[0] = fa;
    dev_ptr<uint32_t>(p.host)[1] = fb;
  } else if (dist::key(d) < GPROX_DIST_INF_BITS) {
    s->best = dist::key(d);
    s->pair = dist::pair_key(fa, fb);
    s->pair_d = s->best;
  }
}
GPROX_KERNEL_EXPORT(gprox_distance_init, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_expand, DistanceQueryParams) {
  __shared__ uint64_t reduce[GPROX_MAX_BLOCK];
  DistanceState* s = dist::running(p);
  if (s == nullptr) return;
  const uint32_t n = 64 * s->front_count;  // < 2^31 (front_capacity < 2^25)
  const uint32_t* front = dev_ptr<const uint32_t>(p.front);
  const uint32_t* ca = dev_ptr<const uint32_t>(p.a.children);
  const uint32_t* cb = dev_ptr<const uint32_t>(p.b.children);
  double* lower = dev_ptr<double>(p.lower);
  uint64_t upper = GPROX_DIST_INF_BITS;
  for (uint32_t g = global_thread(); g < n; g += gridDim.x * blockDim.x) {
    const size_t i = g / 64;
    const uint32_t ja = (g % 64) / 8, jb = g % 8;
    const uint32_t sa = dist::child_slot(ca, front[2 * i], ja);
    const uint32_t sb = dist::child_slot(cb, front[2 * i + 1], jb);
    if (sa == GPROX_DIST_EMPTY || sb == GPROX_DIST_EMPTY) {
      lower[g] = INFINITY;
      continue;
    }
    const dist::Rss va = dev_ptr<const dist::Rss>(p.a.bvs)[sa];
    const dist::Rss vb = dist::transform_rigid(dev_ptr<const dist::Rss>(p.b.bvs)[sb], p.q,
                                               dist::v3(p.t[0], p.t[1], p.t[2]), p.grow);
    lower[g] = dist::rss_lower_bound(va, vb) * (p.sigma * (1.0 - 1e-12));
    const DVec3 ra = dist::rep_point(p.pose_a, p.a, dev_ptr<const uint32_t>(p.a.reps)[sa]);
    const DVec3 rb = dist::rep_point(p.pose_b, p.b, dev_ptr<const uint32_t>(p.b.reps)[sb]);
    const DVec3 d = dist::sub(ra, rb);
    // sqrt of a sum of three squares of differences: < 8 ulp of rounding; 1e-14 covers it.
    const uint64_t k = dist::key(sqrt(dist::dot(d, d)) * (1.0 + 1e-14));
    if (k < upper) upper = k;
  }
  upper = dist::block_min(upper, reduce);
  if (threadIdx.x == 0 && upper < GPROX_DIST_INF_BITS) dist::atomic_min_u64(&s->rep_bound, upper);
}
GPROX_KERNEL_EXPORT(gprox_distance_expand, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_filter, DistanceQueryParams) {
  __shared__ uint64_t reduce[GPROX_MAX_BLOCK];
  DistanceState* s = dist::running(p);
  if (s == nullptr) return;
  const uint32_t n = 64 * s->front_count;  // < 2^31 (front_capacity < 2^25)
  const double rep_bound = dist::from_key(s->rep_bound);
  const double u = dist::from_key(s->best);
  // The CPU's cut (Rust's f64::max / f64::min: the non-NaN operand).
  const double cut = dist::min_d(u - dist::max_d(p.abs_tol, p.rel_tol * u), p.threshold);
  const uint32_t* front = dev_ptr<const uint32_t>(p.front);
  const uint32_t* ca = dev_ptr<const uint32_t>(p.a.children);
  const uint32_t* cb = dev_ptr<const uint32_t>(p.b.children);
  const double* lower = dev_ptr<const double>(p.lower);
  uint64_t pruned = GPROX_DIST_INF_BITS, all = GPROX_DIST_INF_BITS;
  for (uint32_t g = global_thread(); g < n; g += gridDim.x * blockDim.x) {
    const double lb = lower[g];
    const uint64_t k = dist::key(lb);
    if (k < all) all = k;
    if (lb == INFINITY) continue;
    if (lb > rep_bound || lb >= cut) {
      if (k < pruned) pruned = k;
      continue;
    }
    const size_t i = g / 64;
    const uint32_t ja = (g % 64) / 8, jb = g % 8;
    const uint32_t sa = dist::child_slot(ca, front[2 * i], ja);
    const uint32_t sb = dist::child_slot(cb, front[2 * i + 1], jb);
    const uint32_t xa = ca[sa], xb = cb[sb];
    if ((xa & GPROX_DIST_LEAF_BIT) && (xb & GPROX_DIST_LEAF_BIT)) {
      dist::push(dev_ptr<uint32_t>(p.leaves), &s->leaf_count, p.leaf_capacity,
                 xa & ~GPROX_DIST_LEAF_BIT, xb & ~GPROX_DIST_LEAF_BIT);
    } else {
      dist::push(dev_ptr<uint32_t>(p.next), &s->next_count, p.front_capacity, sa, sb);
    }
  }
  pruned = dist::block_min(pruned, reduce);
  all = dist::block_min(all, reduce);
  if (threadIdx.x == 0) {
    if (pruned < GPROX_DIST_INF_BITS) dist::atomic_min_u64(&s->lower, pruned);
    if (all < GPROX_DIST_INF_BITS) dist::atomic_min_u64(&s->level_lower, all);
  }
}
GPROX_KERNEL_EXPORT(gprox_distance_filter, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_triangles, DistanceQueryParams) {
  __shared__ uint64_t reduce[GPROX_MAX_BLOCK];
  DistanceState* s = dist::running(p);
  if (s == nullptr) return;
  // An overflowing level is rerun with larger buffers: nothing to evaluate now.
  if (s->next_count > p.front_capacity || s->leaf_count > p.leaf_capacity) return;
  const uint32_t n = s->leaf_count;
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.leaves);
  double* leaf_d = dev_ptr<double>(p.leaf_d);
  uint64_t best = GPROX_DIST_INF_BITS;
  for (uint32_t i = global_thread(); i < n; i += gridDim.x * blockDim.x) {
    const uint32_t fa = pairs[2 * static_cast<size_t>(i)], fb = pairs[2 * static_cast<size_t>(i) + 1];
    double d;
    DVec3 pa, pb;
    if (dist::face_pair_distance(p, fa, fb, &d, &pa, &pb) == GPROX_DIST_UNDECIDED) {
      leaf_d[i] = INFINITY;
      dist::push(dev_ptr<uint32_t>(p.host), &s->host_count, p.host_capacity, fa, fb);
    } else {
      leaf_d[i] = d;
      const uint64_t k = dist::key(d);
      if (k < best) best = k;
    }
  }
  best = dist::block_min(best, reduce);
  if (threadIdx.x == 0 && best < GPROX_DIST_INF_BITS) dist::atomic_min_u64(&s->best, best);
}
GPROX_KERNEL_EXPORT(gprox_distance_triangles, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_step, DistanceQueryParams) {
  __shared__ uint64_t reduce[GPROX_MAX_BLOCK];
  DistanceState* s = dist::running(p);
  if (s == nullptr) return;
  const uint32_t fronts = s->front_count, next = s->next_count, leaves = s->leaf_count;
  const bool overflow = next > p.front_capacity || leaves > p.leaf_capacity ||
                        s->host_count > p.host_capacity;
  const uint64_t best = s->best;
  // The smallest (face a, face b) among this level's pairs at exactly the best distance.
  uint64_t pair = GPROX_DIST_NO_PAIR;
  if (!overflow && best < GPROX_DIST_INF_BITS) {
    const uint32_t* pairs = dev_ptr<const uint32_t>(p.leaves);
    const double* leaf_d = dev_ptr<const double>(p.leaf_d);
    for (uint32_t i = threadIdx.x; i < leaves; i += blockDim.x) {
      if (dist::key(leaf_d[i]) != best) continue;
      const uint64_t k = dist::pair_key(pairs[2 * static_cast<size_t>(i)],
                                        pairs[2 * static_cast<size_t>(i) + 1]);
      if (k < pair) pair = k;
    }
  }
  pair = dist::block_min(pair, reduce);
  if (threadIdx.x != 0) return;
  if (overflow) {
    s->status = GPROX_DIST_OVERFLOW;
    s->need_front = next;
    s->need_leaves = leaves;
    return;
  }
  if (pair != GPROX_DIST_NO_PAIR) {
    // A smaller distance replaces the pair; an equal one keeps the smaller faces.
    if (best < s->pair_d || pair < s->pair) s->pair = pair;
    s->pair_d = best;
  }
  s->child_pairs += 64 * static_cast<uint64_t>(fronts);
  s->leaf_pairs += leaves;
  s->levels += 1;
  if (next == 0) {
    s->status = GPROX_DIST_DONE;
  } else if (p.has_threshold != 0 && dist::from_key(best) < p.threshold) {
    // Early stop: every pair left is covered by this level's bounds.
    if (s->level_lower < s->lower) s->lower = s->level_lower;
    s->status = GPROX_DIST_DONE;
  }
  s->front_count = next;
  s->next_count = 0;
  s->leaf_count = 0;
  s->level_lower = GPROX_DIST_INF_BITS;
}
GPROX_KERNEL_EXPORT(gprox_distance_step, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_finish, DistanceQueryParams) {
  if (global_thread() != 0) return;
  const DistanceState* s = dev_ptr<const DistanceState>(p.state);
  DistanceOut* o = dev_ptr<DistanceOut>(p.out);
  o->distance = dist::from_key(s->best);
  o->lower = dist::from_key(s->lower);
  o->status = s->status;
  o->levels = s->levels;
  o->need_front = s->need_front;
  o->need_leaves = s->need_leaves;
  o->host_count = s->host_count;
  o->pad = 0;
  o->child_pairs = s->child_pairs;
  o->leaf_pairs = s->leaf_pairs;
  uint32_t fa = 0xffffffffu, fb = 0xffffffffu;
  DVec3 pa{0.0, 0.0, 0.0}, pb{0.0, 0.0, 0.0};
  if (s->status == GPROX_DIST_DONE && s->pair != GPROX_DIST_NO_PAIR) {
    // The best pair's closest points, recomputed (the same arithmetic: the same bits).
    fa = static_cast<uint32_t>(s->pair >> 32);
    fb = static_cast<uint32_t>(s->pair);
    dist::best_pair_points(p, fa, fb, &pa, &pb);
  }
  o->tri_a = fa;
  o->tri_b = fb;
  o->point_a[0] = pa.x;
  o->point_a[1] = pa.y;
  o->point_a[2] = pa.z;
  o->point_b[0] = pb.x;
  o->point_b[1] = pb.y;
  o->point_b[2] = pb.z;
}
GPROX_KERNEL_EXPORT(gprox_distance_finish, DistanceQueryParams)

GPROX_KERNEL(gprox_distance_min, DistanceMinParams) {
  __shared__ double values[GPROX_MAX_BLOCK];
  __shared__ uint32_t indices[GPROX_MAX_BLOCK];
  const uint32_t t = threadIdx.x;
  const uint32_t g = global_thread();
  double v = INFINITY;
  uint32_t k = 0xffffffffu;
  if (g < p.count) {
    v = dev_ptr<const double>(p.values)[g];
    k = p.indices ? dev_ptr<const uint32_t>(p.indices)[g] : g;
  }
  values[t] = v;
  indices[t] = k;
  __syncthreads();
  // blockDim.x is a power of two (32 or 256).
  for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      const double w = values[t + stride];
      const uint32_t l = indices[t + stride];
      if (w < values[t] || (w == values[t] && l < indices[t])) {
        values[t] = w;
        indices[t] = l;
      }
    }
    __syncthreads();
  }
  if (t == 0) {
    dev_ptr<double>(p.out_values)[blockIdx.x] = values[0];
    dev_ptr<uint32_t>(p.out_indices)[blockIdx.x] = indices[0];
  }
}
GPROX_KERNEL_EXPORT(gprox_distance_min, DistanceMinParams)
