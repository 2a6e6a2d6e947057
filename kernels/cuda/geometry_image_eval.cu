// Geometry-image positions on the device (Greß, Guthe, Klein 2006, §6.1): the device twin of
// gprox_geometry::freeform::GridEvaluator as GeometryImage::update_positions uses it. Per frame
// only the surface's homogeneous control points (and the pose, by value) change; the u and v
// basis tables of the grid (grid.rs AxisBasis) stay resident.
//
// gprox_gi_eval: one block per tile of GPROX_GI_EVAL_TILE_U x GPROX_GI_EVAL_TILE_V texels (the
// block's threads take its texels in turn). A texel (i, j) needs the q + 1 column points
// `sum_r h[(first_u + r) * m + k] * N_r(u_i)` (grid.rs column_point, r ascending from zero), each
// mapped by the pose (transform_homogeneous), then summed against the v basis of row j and
// projected (curve.rs project) and rounded to f32: the CPU's operations in the CPU's order (no
// FMA: --fmad=false / -ffp-contract=off), so the positions are bit-identical. The rows of a
// tile share most of their control rows k, so the block first makes the mapped column points of
// its columns for the control rows its rows need (at most GPROX_GI_EVAL_ROWS of them) in shared
// memory, then every texel sums q + 1 of them: (p + 1)(q + 1) products per column point and
// control row instead of per texel. A tile whose rows need more control rows (knots denser than
// the texels) evaluates each texel on its own, the same operations.
#include "gprox/common.cuh"
#include "gprox/geometry_image.cuh"

using namespace gprox;

/// Texels of a tile along u and v.
#define GPROX_GI_EVAL_TILE_U 32u
#define GPROX_GI_EVAL_TILE_V 8u
/// Most control rows a tile keeps column points for.
#define GPROX_GI_EVAL_ROWS 12u

namespace {
/// The mapped column point of column i for control row k: the u sum, then the pose.
__device__ __forceinline__ void mapped_column_point(const ImageEvalParams& p, uint32_t i, uint32_t k,
                                                    double t[4]) {
  const double* h = dev_ptr<const double>(p.points);
  const uint32_t fu = dev_ptr<const uint32_t>(p.u_first)[i];
  const double* bu = dev_ptr<const double>(p.u_basis) + static_cast<size_t>(p.degree_u + 1) * i;
  double c[4] = {0.0, 0.0, 0.0, 0.0};
  for (uint32_t r = 0; r <= p.degree_u; ++r) {
    const double* hp = h + 4 * (static_cast<size_t>(fu + r) * p.m + k);
    const double b = bu[r];
#pragma unroll
    for (int a = 0; a < 4; ++a) c[a] = c[a] + hp[a] * b;
  }
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    t[a] = ((p.pose.rows[a][0] * c[0] + p.pose.rows[a][1] * c[1]) + p.pose.rows[a][2] * c[2]) +
           p.pose.rows[a][3] * c[3];
  }
  t[3] = c[3];
}

/// Texel k = j * width + i from the accumulated homogeneous point.
__device__ __forceinline__ void store_texel(const ImageEvalParams& p, uint32_t i, uint32_t j,
                                            const double acc[4]) {
  float* out = dev_ptr<float>(p.positions) + 3 * (static_cast<size_t>(j) * p.width + i);
#pragma unroll
  for (int a = 0; a < 3; ++a) out[a] = static_cast<float>(acc[a] / acc[3]);
}
}  // namespace

GPROX_KERNEL(gprox_gi_eval, ImageEvalParams) {
  // Mapped column points of the tile's columns: column[row - k_lo][column in the tile].
  __shared__ double column[GPROX_GI_EVAL_ROWS][GPROX_GI_EVAL_TILE_U][4];
  const uint32_t tiles_u = (p.width + GPROX_GI_EVAL_TILE_U - 1) / GPROX_GI_EVAL_TILE_U;
  const uint32_t i0 = blockIdx.x % tiles_u * GPROX_GI_EVAL_TILE_U;
  const uint32_t j0 = blockIdx.x / tiles_u * GPROX_GI_EVAL_TILE_V;
  const uint32_t j_last = min(j0 + GPROX_GI_EVAL_TILE_V, p.height) - 1;
  const uint32_t* v_first = dev_ptr<const uint32_t>(p.v_first);
  // Control rows of the tile's rows (the first index grows with j): the same for every thread.
  const uint32_t k_lo = v_first[j0];
  const uint32_t rows = v_first[j_last] + p.degree_v + 1 - k_lo;
  const bool shared = rows <= GPROX_GI_EVAL_ROWS;
  if (shared) {
    for (uint32_t t = threadIdx.x; t < rows * GPROX_GI_EVAL_TILE_U; t += blockDim.x) {
      const uint32_t c = t % GPROX_GI_EVAL_TILE_U, r = t / GPROX_GI_EVAL_TILE_U;
      if (i0 + c < p.width) mapped_column_point(p, i0 + c, k_lo + r, column[r][c]);
    }
    __syncthreads();
  }
  for (uint32_t t = threadIdx.x; t < GPROX_GI_EVAL_TILE_U * GPROX_GI_EVAL_TILE_V; t += blockDim.x) {
    const uint32_t c = t % GPROX_GI_EVAL_TILE_U, i = i0 + c, j = j0 + t / GPROX_GI_EVAL_TILE_U;
    if (i >= p.width || j > j_last) continue;
    const uint32_t fv = v_first[j];
    const double* bv = dev_ptr<const double>(p.v_basis) + static_cast<size_t>(p.degree_v + 1) * j;
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t s = 0; s <= p.degree_v; ++s) {
      double own[4];
      const double* tp = own;
      if (shared) {
        tp = column[fv + s - k_lo][c];
      } else {
        mapped_column_point(p, i, fv + s, own);
      }
      const double b = bv[s];
#pragma unroll
      for (int a = 0; a < 4; ++a) acc[a] = acc[a] + tp[a] * b;
    }
    store_texel(p, i, j, acc);
  }
}
GPROX_KERNEL_EXPORT(gprox_gi_eval, ImageEvalParams)
