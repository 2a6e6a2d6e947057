// Triangle pair test of candidate pairs (the filtered test of gprox/tri_tri.cuh), one thread per
// pair in a grid-stride loop; the pair count is a launch parameter or, for pairs a traversal
// left on the device, read from its counter there (no host round trip in between).
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/tri_tri.cuh"

using namespace gprox;

GPROX_KERNEL(gprox_tri_pair, TriPairParams) {
  uint32_t count = p.count;
  if (p.count_at != 0) {
    const uint32_t counted = *dev_ptr<const uint32_t>(p.count_at);
    if (counted < count) count = counted;
  }
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.pairs);
  for (uint32_t i = global_thread(); i < count; i += gridDim.x * blockDim.x) {
    DVec3 ta[3], tb[3];
    transform_triangle(p.pose_a, dev_ptr<const float>(p.positions_a),
                       dev_ptr<const uint32_t>(p.faces_a), pairs[2 * static_cast<size_t>(i)], ta);
    transform_triangle(p.pose_b, dev_ptr<const float>(p.positions_b),
                       dev_ptr<const uint32_t>(p.faces_b), pairs[2 * static_cast<size_t>(i) + 1],
                       tb);
    dev_ptr<uint32_t>(p.status)[i] = triangles_intersect(ta, tb);
  }
}
GPROX_KERNEL_EXPORT(gprox_tri_pair, TriPairParams)
