// World-space helpers: the conservative world box of a local f32 box under an f64 pose
// (gprox_world_boxes and the world query's per-body boxes): the box of the eight corners under transform_point, widened by
// a bound on the rounding of transform_point, plus half the margin on each side, rounded outward
// to f32.
#pragma once
#include "gprox/layout.cuh"
#include "gprox/params.cuh"
#include "gprox/transform.cuh"

namespace gprox {
/// World box of `b` under `pose`, widened by `margin` (half the query's margin) on every side.
__device__ __forceinline__ Aabb world_box(const Aabb& b, const Pose64& pose, double margin) {
  double lo[3] = {INFINITY, INFINITY, INFINITY};
  double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int c = 0; c < 8; ++c) {
    const DVec3 w = transform_point(pose, (c & 1) ? b.max[0] : b.min[0],
                                    (c & 2) ? b.max[1] : b.min[1], (c & 4) ? b.max[2] : b.min[2]);
    const double v[3] = {w.x, w.y, w.z};
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], v[k]);
      hi[k] = fmax(hi[k], v[k]);
    }
  }
  Aabb out;
  for (int k = 0; k < 3; ++k) {
    // |rounding of transform_point| <= 4 * 2^-53 * (sum |r_j| |x_j| + |t|), once for the corners
    // and once for any point inside: 2e-15 covers both with room to spare; 1e-280 covers
    // underflow.
    const double* m = pose.rows[k];
    double mag = fabs(m[3]);
    for (int j = 0; j < 3; ++j) {
      mag += fabs(m[j]) * fmax(fabs(static_cast<double>(b.min[j])), fabs(static_cast<double>(b.max[j])));
    }
    double slack = mag * 2e-15 + 1e-280;
    // With a margin (each side gets half of it), pairs are finished by a floating-point distance:
    // widen by a relative 1e-12 as the CPU traversal does, far above that distance's rounding.
    if (margin > 0.0) slack += margin * (1.0 + 1e-12) + 1e-12 * mag;
    out.min[k] = __double2float_rd(lo[k] - slack);
    out.max[k] = __double2float_ru(hi[k] + slack);
  }
  return out;
}

/// The body of a world holding world node `x` (bodies sorted by base; see world.cu).
__device__ __forceinline__ uint32_t body_of(const WorldBody* bodies, uint32_t count, uint32_t x) {
  uint32_t lo = 0, hi = count;  // bodies[lo].base <= x < bodies[hi].base
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (bodies[mid].base <= x) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}
}  // namespace gprox
