// Mirror of gprox_geometry::transform::transform_point: f32 point under an f64 pose,
// `((r0*x + r1*y) + r2*z) + t` per row, no FMA (nvcc --fmad=false, g++ -ffp-contract=off),
// so world coordinates are bit-identical on the CPU, the GPU and the emulator.
#pragma once
#include "gprox/layout.cuh"

namespace gprox {
/// An f64 point.
struct DVec3 {
  double x, y, z;
};

/// World position of the f32 point `(px, py, pz)` under `pose`.
__host__ __device__ __forceinline__ DVec3 transform_point(const Pose64& pose, float px, float py,
                                                          float pz) {
  const double x = px, y = py, z = pz;
  double out[3];
  for (int r = 0; r < 3; ++r) {
    const double* m = pose.rows[r];
    out[r] = ((m[0] * x + m[1] * y) + m[2] * z) + m[3];
  }
  return DVec3{out[0], out[1], out[2]};
}

/// World corners of face `f` of a mesh given as packed f32 positions and u32 faces.
__host__ __device__ __forceinline__ void transform_triangle(const Pose64& pose,
                                                           const float* positions,
                                                           const uint32_t* faces, uint32_t f,
                                                           DVec3 out[3]) {
  for (int c = 0; c < 3; ++c) {
    const float* v = positions + 3 * static_cast<size_t>(faces[3 * static_cast<size_t>(f) + c]);
    out[c] = transform_point(pose, v[0], v[1], v[2]);
  }
}
}  // namespace gprox
