// Image-space per-sample depths (Hoff et al. 2002, §5.4) on the device: the nearest face of
// each mesh to every listed lattice sample, the device twin of
// crates/query/src/penetration/world.rs `World::nearest` (the exact minimum over all faces of
// gprox_geometry::tri_distance::point_triangle_distance, smallest face id among equal
// distances), which crates/query/src/image_space/depth.rs computes block by block on the CPU.
//
// One thread per (sample, mesh): a depth-first walk of the resident tree, nearer child first,
// with the world boxes of its f32 node boxes (gprox_world_boxes before this kernel: world.cuh
// `world_box`, conservative) as lower bounds; a subtree is skipped only when its box is farther than the best distance plus a
// bound on the rounding of box and triangle distances, so the minimum is never pruned and the
// result does not depend on the visiting order. The triangle distance is distance.cuh's mirror
// of the CPU function (glam's operation order, no FMA), so every decided sample equals the CPU's
// bit for bit. A walk deeper than the stack leaves the sample GPROX_DEPTH_UNDECIDED and the host
// computes it (gprox_query::image_space::SweepSamples::finish).
#include "gprox/common.cuh"
#include "gprox/distance.cuh"
#include "gprox/image_space.cuh"
#include "gprox/world.cuh"

using namespace gprox;

namespace {
/// A node waiting on the walk's stack with the squared distance of its box rounded down to f32
/// (still a lower bound; half the stack of an f64).
struct ImageDepthEntry {
  uint32_t node;
  float lb;
};

/// Squared distance from `p` to the box `b` (0 inside).
__device__ __forceinline__ double image_box_distance2(const Aabb& b, DVec3 p) {
  double s[3];
  const double q[3] = {p.x, p.y, p.z};
  for (int k = 0; k < 3; ++k) {
    s[k] = max_d(max_d(static_cast<double>(b.min[k]) - q[k], q[k] - static_cast<double>(b.max[k])), 0.0);
  }
  return (s[0] * s[0] + s[1] * s[1]) + s[2] * s[2];
}

/// The nearest face of one posed mesh to `p` (see the file comment).
__device__ ImageDepth image_nearest_face(const Pose64& pose, const BvhNode* nodes, const Aabb* boxes,
                                         const float* positions, const uint32_t* faces, DVec3 p) {
  ImageDepth best;
  best.distance = INFINITY;
  best.point[0] = p.x;
  best.point[1] = p.y;
  best.point[2] = p.z;
  best.face = 0xffffffffu;
  best.status = GPROX_DEPTH_DECIDED;
  const Aabb root = boxes[0];
  double magnitude = 0.0;
  for (int k = 0; k < 3; ++k) {
    magnitude = max_d(magnitude, max_d(fabs(static_cast<double>(root.min[k])), fabs(static_cast<double>(root.max[k]))));
  }
  // As World::nearest, with the (larger) magnitude of the conservative root box: a larger slack
  // only prunes less.
  const double slack = 1e-13 * (magnitude + max_element(abs3(p)));
  double cut = INFINITY;
  ImageDepthEntry stack[GPROX_DEPTH_STACK];
  int sp = 0;
  stack[sp++] = ImageDepthEntry{0, __double2float_rd(image_box_distance2(root, p))};
  while (sp > 0) {
    const ImageDepthEntry e = stack[--sp];
    if (static_cast<double>(e.lb) > cut) continue;
    const BvhNode n = nodes[e.node];
    if (n.right == GPROX_LEAF) {
      DVec3 tri[3];
      transform_triangle(pose, positions, faces, n.left, tri);
      DVec3 q;
      const double d = dist::point_triangle_distance(p, tri, &q);
      if (d < best.distance || (d == best.distance && n.left < best.face)) {
        best.distance = d;
        best.point[0] = q.x;
        best.point[1] = q.y;
        best.point[2] = q.z;
        best.face = n.left;
        const double r = d + slack;
        cut = r * r * (1.0 + 1e-12);
      }
      continue;
    }
    const float dl = __double2float_rd(image_box_distance2(boxes[n.left], p));
    const float dr = __double2float_rd(image_box_distance2(boxes[n.right], p));
    const bool left_first = dl <= dr;
    const ImageDepthEntry near{left_first ? n.left : n.right, left_first ? dl : dr};
    const ImageDepthEntry far{left_first ? n.right : n.left, left_first ? dr : dl};
    const ImageDepthEntry both[2] = {far, near};
    for (int i = 0; i < 2; ++i) {
      const ImageDepthEntry x = both[i];
      if (static_cast<double>(x.lb) > cut) continue;
      if (sp >= GPROX_DEPTH_STACK) {
        best.status = GPROX_DEPTH_UNDECIDED;
        best.face = 0xffffffffu;
        return best;
      }
      stack[sp++] = x;
    }
  }
  return best;
}
}  // namespace

GPROX_KERNEL(gprox_image_depths, ImageDepthParams) {
  const uint32_t* cells = dev_ptr<const uint32_t>(p.cells);
  ImageDepth* out = dev_ptr<ImageDepth>(p.out);
  const uint64_t total = 2 * static_cast<uint64_t>(p.count);
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t g = global_thread(); g < total; g += step) {
    const uint32_t side = g >= p.count ? 1u : 0u;
    const uint64_t s = g - static_cast<uint64_t>(side) * p.count;
    const uint32_t* c = cells + 3 * s;
    // lattice.rs `Lattice::center`: origin + (i + 0.5) h per axis.
    const DVec3 x{p.origin[0] + (static_cast<double>(c[0]) + 0.5) * p.spacing,
                  p.origin[1] + (static_cast<double>(c[1]) + 0.5) * p.spacing,
                  p.origin[2] + (static_cast<double>(c[2]) + 0.5) * p.spacing};
    out[g] = side == 0 ? image_nearest_face(p.pose_a, dev_ptr<const BvhNode>(p.nodes_a), dev_ptr<const Aabb>(p.boxes_a),
                                            dev_ptr<const float>(p.positions_a),
                                            dev_ptr<const uint32_t>(p.faces_a), x)
                       : image_nearest_face(p.pose_b, dev_ptr<const BvhNode>(p.nodes_b), dev_ptr<const Aabb>(p.boxes_b),
                                            dev_ptr<const float>(p.positions_b),
                                            dev_ptr<const uint32_t>(p.faces_b), x);
  }
}
GPROX_KERNEL_EXPORT(gprox_image_depths, ImageDepthParams)

#ifndef __CUDACC__
#include <cstring>
/// sizeof / offsetof of the image-space depth layouts as the host compiler sees them.
extern "C" size_t gprox_emu_image_depth_layout(const char* name) {
#define GPROX_L(expr)                          \
  if (std::strcmp(name, #expr) == 0) return expr;
  GPROX_L(sizeof(ImageDepthParams))
  GPROX_L(offsetof(ImageDepthParams, pose_b))
  GPROX_L(offsetof(ImageDepthParams, faces_b))
  GPROX_L(offsetof(ImageDepthParams, boxes_b))
  GPROX_L(offsetof(ImageDepthParams, cells))
  GPROX_L(offsetof(ImageDepthParams, out))
  GPROX_L(offsetof(ImageDepthParams, origin))
  GPROX_L(offsetof(ImageDepthParams, spacing))
  GPROX_L(offsetof(ImageDepthParams, count))
  GPROX_L(sizeof(ImageDepth))
  GPROX_L(offsetof(ImageDepth, point))
  GPROX_L(offsetof(ImageDepth, face))
  GPROX_L(offsetof(ImageDepth, status))
#undef GPROX_L
  return static_cast<size_t>(-1);
}
#endif
