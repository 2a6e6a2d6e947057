// Flat layouts shared with Rust: mirrors of gprox_bvh::{Aabb, BvhNode, LEAF} and
// gprox_geometry::transform::Pose64. kernels/tests/layout.rs compares sizes and offsets.
#pragma once
#include "gprox/common.cuh"

namespace gprox {
/// gprox_bvh::Aabb: f32 box `[min, max]`, 24 bytes.
struct Aabb {
  float min[3];
  float max[3];
};
/// gprox_bvh::BvhNode: 32 bytes; a leaf has `right == LEAF` and `left` = primitive index.
struct BvhNode {
  Aabb aabb;
  uint32_t left;
  uint32_t right;
};
/// gprox_geometry::transform::Pose64: row-major `[R | t]` in f64.
struct Pose64 {
  double rows[3][4];
};
/// gprox_bvh::LEAF.
#define GPROX_LEAF 0xffffffffu

/// `a.min(b)` as Rust's f32::min on x86-64: the non-NaN operand, and `a` on ties (so also for
/// -0.0 vs +0.0, where fminf and the GPU's min.f32 may pick differently).
__host__ __device__ __forceinline__ float min_f(float a, float b) { return (b < a || a != a) ? b : a; }
/// `a.max(b)` as Rust's f32::max on x86-64 (see min_f).
__host__ __device__ __forceinline__ float max_f(float a, float b) { return (b > a || a != a) ? b : a; }

/// The empty box (identity of merge).
__host__ __device__ __forceinline__ Aabb empty_aabb() {
  Aabb b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = INFINITY;
    b.max[k] = -INFINITY;
  }
  return b;
}
/// `a.merge(b)` as gprox_bvh::Aabb::merge (min/max are exact, zero signs as on the CPU).
__host__ __device__ __forceinline__ Aabb merge(const Aabb& a, const Aabb& b) {
  Aabb r;
  for (int k = 0; k < 3; ++k) {
    r.min[k] = min_f(a.min[k], b.min[k]);
    r.max[k] = max_f(a.max[k], b.max[k]);
  }
  return r;
}
/// Whether the closed boxes share a point.
__host__ __device__ __forceinline__ bool overlaps(const Aabb& a, const Aabb& b) {
  return a.min[0] <= b.max[0] && b.min[0] <= a.max[0] && a.min[1] <= b.max[1] &&
         b.min[1] <= a.max[1] && a.min[2] <= b.max[2] && b.min[2] <= a.max[2];
}
}  // namespace gprox
