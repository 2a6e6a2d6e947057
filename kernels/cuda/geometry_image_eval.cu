// Geometry-image positions on the device (Greß, Guthe, Klein 2006, §6.1): the device twin of
// gprox_geometry::freeform::GridEvaluator as GeometryImage::update_positions uses it. Per frame
// only the surface's homogeneous control points (and the pose, by value) change; the u and v
// basis tables of the grid (grid.rs AxisBasis) stay resident.
//
// gprox_gi_eval: one thread per texel (i, j). The q + 1 column points it needs are the u sums
// `sum_r h[(first_u + r) * m + k] * N_r(u_i)` (grid.rs column_point, r ascending from zero),
// each mapped by the pose (transform_homogeneous), then summed against the v basis of row j and
// projected (curve.rs project) and rounded to f32: the CPU's operations in the CPU's order
// (no FMA: --fmad=false / -ffp-contract=off), so the positions are bit-identical. A column
// point is recomputed by each texel that needs it instead of stored: (p + 1) more products per
// term, no second launch and no buffer.
#include "gprox/common.cuh"
#include "gprox/geometry_image.cuh"

using namespace gprox;

GPROX_KERNEL(gprox_gi_eval, ImageEvalParams) {
  const uint32_t k = global_thread();
  if (k >= p.width * p.height) return;
  const uint32_t i = k % p.width, j = k / p.width;
  const double* h = dev_ptr<const double>(p.points);
  const uint32_t fu = dev_ptr<const uint32_t>(p.u_first)[i];
  const uint32_t fv = dev_ptr<const uint32_t>(p.v_first)[j];
  const double* bu = dev_ptr<const double>(p.u_basis) + static_cast<size_t>(p.degree_u + 1) * i;
  const double* bv = dev_ptr<const double>(p.v_basis) + static_cast<size_t>(p.degree_v + 1) * j;
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  for (uint32_t s = 0; s <= p.degree_v; ++s) {
    double c[4] = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t r = 0; r <= p.degree_u; ++r) {
      const double* hp = h + 4 * (static_cast<size_t>(fu + r) * p.m + fv + s);
      const double b = bu[r];
#pragma unroll
      for (int a = 0; a < 4; ++a) c[a] = c[a] + hp[a] * b;
    }
    double t[4];
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      t[a] = ((p.pose.rows[a][0] * c[0] + p.pose.rows[a][1] * c[1]) + p.pose.rows[a][2] * c[2]) +
             p.pose.rows[a][3] * c[3];
    }
    t[3] = c[3];
    const double b = bv[s];
#pragma unroll
    for (int a = 0; a < 4; ++a) acc[a] = acc[a] + t[a] * b;
  }
  float* out = dev_ptr<float>(p.positions) + 3 * static_cast<size_t>(k);
#pragma unroll
  for (int a = 0; a < 3; ++a) out[a] = static_cast<float>(acc[a] / acc[3]);
}
GPROX_KERNEL_EXPORT(gprox_gi_eval, ImageEvalParams)
