// Separation distance between two meshes: level-synchronous traversal of two 8-wide RSS trees
// (gProximity §4.2) with a min-reduction of the upper bound between levels.
//
// One level, for a front of entity pairs (an entity is a slot of a wide node, or the root):
// 1. gprox_distance_expand: one thread per (pair, child a, child b) — up to 64 per pair — computes
//    the world lower bound of the child pair (B's RSS mapped into A's frame, the CPU's 7-axis
//    bound, scaled by A's smallest stretch) and a cheap upper bound: the distance between the
//    representative points of the two slots (corner 0 of a face below each), inflated for
//    rounding — some triangle pair below the child pair is at most that far apart.
// 2. gprox_distance_min reduces the upper bounds (and later the leaf distances) to one minimum
//    with its argmin, block by block, relaunched by the host until one value is left.
// 3. gprox_distance_filter prunes the child pairs whose lower bound exceeds the representative
//    bound (strict, so the pair behind that bound survives) or reaches the cut of the best
//    triangle distance so far (its tolerance applied), records the bounds it pruned (for the
//    certified lower bound), and appends the survivors to the next front or, for two leaves, to
//    the leaf pairs — through counters that count past the capacity (the host grows and reruns).
// 4. gprox_distance_triangles: the exact triangle distance of each leaf pair in f64 (mirrored
//    from the CPU); pairs whose answer needs an exact sign the filter cannot certify are listed
//    for the host.
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
}  // namespace dist
}  // namespace gprox

using namespace gprox;

GPROX_KERNEL(gprox_distance_expand, DistanceExpandParams) {
  const uint32_t g = global_thread();
  if (g >= 64u * p.count) return;
  const uint32_t i = g / 64, ja = (g % 64) / 8, jb = g % 8;
  const uint32_t* front = dev_ptr<const uint32_t>(p.front);
  const uint32_t* ca = dev_ptr<const uint32_t>(p.a.children);
  const uint32_t* cb = dev_ptr<const uint32_t>(p.b.children);
  const uint32_t sa = dist::child_slot(ca, front[2 * static_cast<size_t>(i)], ja);
  const uint32_t sb = dist::child_slot(cb, front[2 * static_cast<size_t>(i) + 1], jb);
  double* lower = dev_ptr<double>(p.lower);
  double* upper = dev_ptr<double>(p.upper);
  if (sa == GPROX_DIST_EMPTY || sb == GPROX_DIST_EMPTY) {
    lower[g] = INFINITY;
    upper[g] = INFINITY;
    return;
  }
  const dist::Rss va = dev_ptr<const dist::Rss>(p.a.bvs)[sa];
  const dist::Rss vb = dist::transform_rigid(dev_ptr<const dist::Rss>(p.b.bvs)[sb], p.q,
                                             dist::v3(p.t[0], p.t[1], p.t[2]), p.grow);
  lower[g] = dist::rss_lower_bound(va, vb) * (p.sigma * (1.0 - 1e-12));
  const DVec3 ra = dist::rep_point(p.pose_a, p.a, dev_ptr<const uint32_t>(p.a.reps)[sa]);
  const DVec3 rb = dist::rep_point(p.pose_b, p.b, dev_ptr<const uint32_t>(p.b.reps)[sb]);
  const DVec3 d = dist::sub(ra, rb);
  // sqrt of a sum of three squares of differences: < 8 ulp of rounding; 1e-14 covers it.
  upper[g] = sqrt(dist::dot(d, d)) * (1.0 + 1e-14);
}
GPROX_KERNEL_EXPORT(gprox_distance_expand, DistanceExpandParams)

GPROX_KERNEL(gprox_distance_filter, DistanceFilterParams) {
  const uint32_t g = global_thread();
  if (g >= 64u * p.count) return;
  const double lb = dev_ptr<const double>(p.lower)[g];
  double* pruned = dev_ptr<double>(p.pruned);
  if (lb == INFINITY) {
    pruned[g] = INFINITY;
    return;
  }
  if (lb > p.rep_bound || lb >= p.cut) {
    pruned[g] = lb;
    return;
  }
  pruned[g] = INFINITY;
  const uint32_t i = g / 64, ja = (g % 64) / 8, jb = g % 8;
  const uint32_t* front = dev_ptr<const uint32_t>(p.front);
  const uint32_t* ca = dev_ptr<const uint32_t>(p.children_a);
  const uint32_t* cb = dev_ptr<const uint32_t>(p.children_b);
  const uint32_t sa = dist::child_slot(ca, front[2 * static_cast<size_t>(i)], ja);
  const uint32_t sb = dist::child_slot(cb, front[2 * static_cast<size_t>(i) + 1], jb);
  const uint32_t xa = ca[sa], xb = cb[sb];
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  if ((xa & GPROX_DIST_LEAF_BIT) && (xb & GPROX_DIST_LEAF_BIT)) {
    dist::push(dev_ptr<uint32_t>(p.leaves), &counters[1], p.leaf_capacity,
               xa & ~GPROX_DIST_LEAF_BIT, xb & ~GPROX_DIST_LEAF_BIT);
  } else {
    dist::push(dev_ptr<uint32_t>(p.next), &counters[0], p.next_capacity, sa, sb);
  }
}
GPROX_KERNEL_EXPORT(gprox_distance_filter, DistanceFilterParams)

GPROX_KERNEL(gprox_distance_triangles, DistanceTrianglesParams) {
  const uint32_t i = global_thread();
  if (i >= p.count) return;
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.pairs);
  DVec3 ta[3], tb[3];
  transform_triangle(p.pose_a, dev_ptr<const float>(p.positions_a),
                     dev_ptr<const uint32_t>(p.faces_a), pairs[2 * static_cast<size_t>(i)], ta);
  transform_triangle(p.pose_b, dev_ptr<const float>(p.positions_b),
                     dev_ptr<const uint32_t>(p.faces_b), pairs[2 * static_cast<size_t>(i) + 1], tb);
  double d = INFINITY;
  DVec3 pa = ta[0], pb = tb[0];
  const uint32_t status = dist::triangle_distance(ta, tb, &d, &pa, &pb);
  double* points = dev_ptr<double>(p.points) + 6 * static_cast<size_t>(i);
  points[0] = pa.x;
  points[1] = pa.y;
  points[2] = pa.z;
  points[3] = pb.x;
  points[4] = pb.y;
  points[5] = pb.z;
  if (status == GPROX_DIST_UNDECIDED) {
    dev_ptr<double>(p.distances)[i] = INFINITY;
    const uint32_t at = atomicAdd(dev_ptr<uint32_t>(p.counters), 1u);
    dev_ptr<uint32_t>(p.undecided)[at] = i;  // at < count: one entry per pair at most
  } else {
    dev_ptr<double>(p.distances)[i] = d;
  }
}
GPROX_KERNEL_EXPORT(gprox_distance_triangles, DistanceTrianglesParams)

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
