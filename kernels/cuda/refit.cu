// LBVH spec step 6: bottom-up refit, one thread per leaf. Each thread sets its leaf's box and
// climbs; at every internal node the first arriving child stops (atomic visit flag) and the
// second merges both children and goes on, so every node is written once after its children.
// The visit flags count arrivals and are never reset: each refit adds two to every flag, so the
// first arrival always sees an even count (zeroed once, a resident tree's flags serve every
// later refit without a memset or an upload).
#include "gprox/common.cuh"
#include "gprox/params.cuh"

namespace gprox {
/// Box of node `i`, read past L1 (written by another thread of another block).
__device__ __forceinline__ Aabb load_box_cg(const BvhNode* nodes, uint32_t i) {
  const float* f = reinterpret_cast<const float*>(&nodes[i].aabb);
  Aabb b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = __ldcg(f + k);
    b.max[k] = __ldcg(f + 3 + k);
  }
  return b;
}
}  // namespace gprox

using namespace gprox;

GPROX_KERNEL(gprox_refit, RefitParams) {
  const uint32_t k = global_thread();
  if (k >= p.count) return;
  BvhNode* nodes = dev_ptr<BvhNode>(p.nodes);
  const uint32_t* parents = dev_ptr<const uint32_t>(p.parents);
  uint32_t* flags = dev_ptr<uint32_t>(p.flags);
  uint32_t node = p.count - 1 + k;
  nodes[node].aabb = dev_ptr<const Aabb>(p.boxes)[nodes[node].left];
  for (;;) {
    const uint32_t parent = parents[node];
    if (parent == GPROX_LEAF) break;
    __threadfence();  // our box is visible before the sibling can see the flag
    if ((atomicAdd(&flags[parent], 1u) & 1u) == 0) break;  // the sibling is not done yet
    __threadfence();
    const uint32_t l = nodes[parent].left;
    const uint32_t r = nodes[parent].right;
    nodes[parent].aabb = merge(load_box_cg(nodes, l), load_box_cg(nodes, r));
    node = parent;
  }
}
GPROX_KERNEL_EXPORT(gprox_refit, RefitParams)
