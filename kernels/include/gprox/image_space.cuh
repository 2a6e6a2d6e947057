// Image-space inside classification (Hoff et al. 2002, §5.1) on the device: the layouts shared
// with kernels/src/image_space.rs and the mirror of crates/query/src/image_space/near.rs
// (`triangle_meets_box`, glam's operation order, no FMA).
#pragma once

#include "gprox/inside.cuh"
#include "gprox/layout.cuh"
#include "gprox/transform.cuh"

/// Sample code bits (gprox_query::image_space::SAMPLE_*).
#define GPROX_SAMPLE_INSIDE 1u
#define GPROX_SAMPLE_NEAR 2u
#define GPROX_SAMPLE_SURFACE 4u
#define GPROX_SAMPLE_UNDECIDED 0x80u
/// With UNDECIDED: the column's faces overflowed the scratch (gprox_cuda::image_space::SAMPLE_OVERFLOW).
#define GPROX_SAMPLE_OVERFLOW 0x40u
/// Depth of the per-thread tree walk stack (deeper trees leave the column undecided).
#define GPROX_IMAGE_STACK 64

namespace gprox {
/// One tile of a batch (gprox_query::image_space::SweepTile + where its codes go), 40 bytes.
struct ImageTile {
  uint32_t lo[3];
  uint32_t hi[3];
  /// Column axis k.
  uint32_t axis;
  /// Index of the tile's first column among the batch's columns (scratch slots).
  uint32_t column_base;
  /// Byte offset of the tile's codes (A's, then B's) in the output.
  uint64_t code_offset;
};

/// `gprox_image_columns`.
struct ImageColumnsParams {
  Pose64 pose_a;
  Pose64 pose_b;
  uint64_t nodes_a, positions_a, faces_a;
  uint64_t nodes_b, positions_b, faces_b;
  /// `const ImageTile[count]`.
  uint64_t tiles;
  /// `ImageItem[2 * columns * capacity]` scratch.
  uint64_t items;
  /// `uint32_t[2 * columns * capacity]` scratch (active lists).
  uint64_t active;
  /// Mapped `uint8_t[]`: one code per sample and mesh.
  uint64_t codes;
  double origin[3];
  double spacing;
  uint32_t count;
  uint32_t capacity;
};

/// A face of one column (column.rs `ColumnItem`), 24 bytes.
struct ImageItem {
  double lo_k;
  double hi_k;
  uint32_t face;
  /// Winding contribution of the perturbed line's crossing (low 16 bits, signed) and
  /// bit 16: the column's line meets the face's box.
  int32_t sig_line;
};

/// Depth of the per-thread nearest-face search stack (deeper trees leave the sample undecided).
#define GPROX_DEPTH_STACK 64
/// ImageDepth::status: the nearest face is certified (the exact minimum over all faces).
#define GPROX_DEPTH_DECIDED 0u
/// ImageDepth::status: the search stack overflowed; the host computes the sample.
#define GPROX_DEPTH_UNDECIDED 1u

/// `gprox_image_depths`: the nearest face of both meshes to every listed sample.
struct ImageDepthParams {
  Pose64 pose_a;
  Pose64 pose_b;
  uint64_t nodes_a, positions_a, faces_a;
  uint64_t nodes_b, positions_b, faces_b;
  /// `const Aabb[]`: the world boxes of A's and of B's nodes (gprox_world_boxes, no margin).
  uint64_t boxes_a, boxes_b;
  /// `const uint32_t[3 * count]`: the samples' cells.
  uint64_t cells;
  /// Mapped `ImageDepth[2 * count]`: A's surface for every sample, then B's.
  uint64_t out;
  double origin[3];
  double spacing;
  uint32_t count;
  uint32_t pad;
};

/// The nearest point of one surface to one sample (gprox_query::image_space::SurfacePoint and
/// a status), 40 bytes.
struct ImageDepth {
  double distance;
  double point[3];
  uint32_t face;
  uint32_t status;
};

__host__ __device__ __forceinline__ double dot(DVec3 a, DVec3 b) { return (a.x * b.x) + (a.y * b.y) + (a.z * b.z); }
__host__ __device__ __forceinline__ DVec3 sub(DVec3 a, DVec3 b) { return DVec3{a.x - b.x, a.y - b.y, a.z - b.z}; }
__host__ __device__ __forceinline__ DVec3 abs3(DVec3 a) { return DVec3{fabs(a.x), fabs(a.y), fabs(a.z)}; }
/// glam's `DVec3::max`.
__host__ __device__ __forceinline__ DVec3 max3(DVec3 a, DVec3 b) {
  return DVec3{a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
/// glam's `max_element`.
__host__ __device__ __forceinline__ double max_element(DVec3 a) {
  const double yz = a.y > a.z ? a.y : a.z;
  return a.x > yz ? a.x : yz;
}
/// glam's `cross`.
__host__ __device__ __forceinline__ DVec3 cross(DVec3 a, DVec3 b) {
  return DVec3{a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y};
}
/// Rust's f64::min / max on non-NaN values.
__host__ __device__ __forceinline__ double min_d(double a, double b) { return b < a ? b : a; }
__host__ __device__ __forceinline__ double max_d(double a, double b) { return b > a ? b : a; }

/// near.rs `separated`: `a` separates the triangle `v` (relative to the centre) from the box
/// of half-extent `e`, beyond the relative margin.
__host__ __device__ __forceinline__ bool separated(DVec3 a, const DVec3 v[3], DVec3 e, double size) {
  const double p0 = dot(a, v[0]), p1 = dot(a, v[1]), p2 = dot(a, v[2]);
  const DVec3 aa = abs3(a);
  const double r = dot(e, aa);
  const double margin = 1e-10 * ((aa.x + aa.y) + aa.z) * size;
  return min_d(min_d(p0, p1), p2) > r + margin || max_d(max_d(p0, p1), p2) < -r - margin;
}

/// near.rs `triangle_meets_box`: whether the triangle `t` may meet the box with centre `c` and
/// half-extent `e` (never false when it does).
__host__ __device__ __forceinline__ bool triangle_meets_box(const DVec3 t[3], DVec3 c, DVec3 e) {
  const DVec3 v[3] = {sub(t[0], c), sub(t[1], c), sub(t[2], c)};
  const double size = max_element(max3(max3(abs3(v[0]), abs3(v[1])), abs3(v[2]))) + max_element(e);
  const DVec3 axes[3] = {DVec3{1.0, 0.0, 0.0}, DVec3{0.0, 1.0, 0.0}, DVec3{0.0, 0.0, 1.0}};
  for (int i = 0; i < 3; ++i) {
    if (separated(axes[i], v, e, size)) return false;
  }
  const DVec3 edges[3] = {sub(v[1], v[0]), sub(v[2], v[1]), sub(v[0], v[2])};
  if (separated(cross(edges[0], edges[1]), v, e, size)) return false;
  for (int f = 0; f < 3; ++f) {
    for (int i = 0; i < 3; ++i) {
      if (separated(cross(edges[f], axes[i]), v, e, size)) return false;
    }
  }
  return true;
}

/// lattice.rs `Lattice::coordinate`: `origin[axis] + (i + f) * h`.
__host__ __device__ __forceinline__ double coordinate(const ImageColumnsParams& p, int axis, uint32_t i, double f) {
  return p.origin[axis] + (static_cast<double>(i) + f) * p.spacing;
}
}  // namespace gprox
