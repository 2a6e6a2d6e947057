// LBVH spec step 5: the Karras 2012 hierarchy over sorted codes, every internal node on its own
// thread, with the duplicate-code tie break. Mirrors gprox_bvh::lbvh::{delta, internal_children,
// hierarchy}; boxes are left empty for the refit kernel.
#include "gprox/common.cuh"
#include "gprox/params.cuh"

namespace gprox {
/// δ(i, j): common prefix length of codes i and j, `64 + clz32(i ^ j)` for equal codes, -1
/// outside [0, n).
__device__ __forceinline__ int lbvh_delta(const uint64_t* codes, int64_t n, int64_t i, int64_t j) {
  if (j < 0 || j >= n) return -1;
  const uint64_t x = codes[i] ^ codes[j];
  if (x != 0) return __clzll(static_cast<long long>(x));
  return 64 + __clz(static_cast<int>(static_cast<uint32_t>(i) ^ static_cast<uint32_t>(j)));
}
}  // namespace gprox

using namespace gprox;

/// Threads `0..n`: leaf k gets its primitive; threads `0..n-1`: internal node i gets its
/// children, and the children their parent.
GPROX_KERNEL(gprox_hierarchy, HierarchyParams) {
  const uint32_t t = global_thread();
  const int64_t n = p.count;
  if (t >= p.count) return;
  const uint64_t* codes = dev_ptr<const uint64_t>(p.codes);
  BvhNode* nodes = dev_ptr<BvhNode>(p.nodes);
  uint32_t* parents = dev_ptr<uint32_t>(p.parents);
  const int64_t leaf0 = n - 1;
  BvhNode leaf;
  leaf.aabb = empty_aabb();
  leaf.left = dev_ptr<const uint32_t>(p.order)[t];
  leaf.right = GPROX_LEAF;
  nodes[leaf0 + t] = leaf;
  if (t == 0) parents[0] = GPROX_LEAF;
  if (static_cast<int64_t>(t) >= n - 1) return;

  const int64_t i = t;
  const int64_t d = lbvh_delta(codes, n, i, i + 1) - lbvh_delta(codes, n, i, i - 1) >= 0 ? 1 : -1;
  const int delta_min = lbvh_delta(codes, n, i, i - d);
  int64_t lmax = 2;
  while (lbvh_delta(codes, n, i, i + lmax * d) > delta_min) lmax *= 2;
  int64_t l = 0;
  for (int64_t s = lmax / 2; s >= 1; s /= 2) {
    if (lbvh_delta(codes, n, i, i + (l + s) * d) > delta_min) l += s;
  }
  const int64_t j = i + l * d;
  const int delta_node = lbvh_delta(codes, n, i, j);
  int64_t s = 0;
  int64_t step = l;
  for (;;) {
    step = (step + 1) / 2;
    if (lbvh_delta(codes, n, i, i + (s + step) * d) > delta_node) s += step;
    if (step <= 1) break;
  }
  const int64_t gamma = i + s * d + (d < 0 ? d : 0);
  const int64_t first = i < j ? i : j;
  const int64_t last = i < j ? j : i;
  const uint32_t left = static_cast<uint32_t>(first == gamma ? leaf0 + gamma : gamma);
  const uint32_t right = static_cast<uint32_t>(last == gamma + 1 ? leaf0 + gamma + 1 : gamma + 1);
  BvhNode node;
  node.aabb = empty_aabb();
  node.left = left;
  node.right = right;
  nodes[i] = node;
  parents[left] = static_cast<uint32_t>(i);
  parents[right] = static_cast<uint32_t>(i);
}
GPROX_KERNEL_EXPORT(gprox_hierarchy, HierarchyParams)
