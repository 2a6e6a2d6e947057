// BVTT collision traversal of two LBVHs under rigid poses (a simple version: no work balancing).
//
// 1. gprox_world_boxes: every node's box mapped to world space conservatively: the box of its
//    eight corners under transform_point, widened by a bound on the rounding of transform_point
//    (so it holds the computed world position of every point of the local box), plus half the
//    margin on each side, rounded outward to f32.
// 2. gprox_collide: each thread takes one node pair of the input front and, if the boxes overlap,
//    either expands it one level into the output front (breadth-first mode) or descends with a
//    local stack (depth-first mode), spilling to the output front when the stack is full. Leaf
//    pairs are appended to `pairs` through an atomic counter that keeps counting past the
//    capacity, so the host learns how much it needed and reruns with a larger buffer.
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/transform.cuh"
#include "gprox/world.cuh"

namespace gprox {
/// Local stack of the depth-first mode (node pairs).
#define GPROX_COLLIDE_STACK 48

/// Sum of the world box's extents: descend the larger node first.
__device__ __forceinline__ float box_size(const Aabb& b) {
  return (b.max[0] - b.min[0]) + (b.max[1] - b.min[1]) + (b.max[2] - b.min[2]);
}

/// Appends the pair (x, y) to a buffer of `capacity` pairs; the counter counts every attempt.
__device__ __forceinline__ void push_pair(uint32_t* buffer, uint32_t* counter, uint32_t capacity,
                                          uint32_t x, uint32_t y) {
  const uint32_t at = atomicAdd(counter, 1u);
  if (at < capacity) {
    buffer[2 * static_cast<size_t>(at)] = x;
    buffer[2 * static_cast<size_t>(at) + 1] = y;
  }
}
}  // namespace gprox

using namespace gprox;

GPROX_KERNEL(gprox_world_boxes, WorldBoxesParams) {
  const uint32_t i = global_thread();
  if (i >= p.count) return;
  dev_ptr<Aabb>(p.boxes)[i] = world_box(dev_ptr<const BvhNode>(p.nodes)[i].aabb, p.pose, p.margin);
}
GPROX_KERNEL_EXPORT(gprox_world_boxes, WorldBoxesParams)

GPROX_KERNEL(gprox_collide, CollideParams) {
  const uint32_t t = global_thread();
  if (t >= p.front_count) return;
  const BvhNode* na = dev_ptr<const BvhNode>(p.nodes_a);
  const BvhNode* nb = dev_ptr<const BvhNode>(p.nodes_b);
  const Aabb* ba = dev_ptr<const Aabb>(p.boxes_a);
  const Aabb* bb = dev_ptr<const Aabb>(p.boxes_b);
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  uint32_t* pairs = dev_ptr<uint32_t>(p.pairs);
  uint32_t* front_out = dev_ptr<uint32_t>(p.front_out);
  const uint32_t* front_in = dev_ptr<const uint32_t>(p.front_in);

  uint32_t stack[GPROX_COLLIDE_STACK][2];
  int top = 0;
  uint32_t x = front_in[2 * static_cast<size_t>(t)];
  uint32_t y = front_in[2 * static_cast<size_t>(t) + 1];
  bool have = overlaps(ba[x], bb[y]);
  for (;;) {
    if (have) {
      const BvhNode& u = na[x];
      const BvhNode& v = nb[y];
      const bool u_leaf = u.right == GPROX_LEAF;
      const bool v_leaf = v.right == GPROX_LEAF;
      if (u_leaf && v_leaf) {
        push_pair(pairs, &counters[0], p.pair_capacity, u.left, v.left);
      } else {
        // Descend A when B is a leaf or A's box is at least as large.
        const bool split_a = !u_leaf && (v_leaf || box_size(ba[x]) >= box_size(bb[y]));
        const uint32_t c0 = split_a ? u.left : v.left;
        const uint32_t c1 = split_a ? u.right : v.right;
        for (int c = 0; c < 2; ++c) {
          const uint32_t cx = split_a ? (c ? c1 : c0) : x;
          const uint32_t cy = split_a ? y : (c ? c1 : c0);
          if (!overlaps(ba[cx], bb[cy])) continue;
          if (p.depth_first && top < GPROX_COLLIDE_STACK) {
            stack[top][0] = cx;
            stack[top][1] = cy;
            ++top;
          } else {
            push_pair(front_out, &counters[1], p.front_capacity, cx, cy);
          }
        }
      }
    }
    if (top == 0) break;
    --top;
    x = stack[top][0];
    y = stack[top][1];
    have = true;  // pushed pairs were tested before
  }
}
GPROX_KERNEL_EXPORT(gprox_collide, CollideParams)
