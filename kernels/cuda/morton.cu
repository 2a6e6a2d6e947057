// LBVH spec steps 1-3: primitive boxes, the box of their centroids, 63-bit Morton codes.
// Mirrors gprox_bvh::{refit::triangle_aabb, morton} operation for operation (plain IEEE f32,
// no FMA), so the codes are bit-identical to the CPU's.
#include "gprox/common.cuh"
#include "gprox/params.cuh"

namespace gprox {
/// Centroid `(min + max) * 0.5` of a box, as a point box.
__device__ __forceinline__ Aabb centroid_box(const Aabb& b) {
  Aabb c;
  for (int k = 0; k < 3; ++k) {
    const float v = (b.min[k] + b.max[k]) * 0.5f;
    c.min[k] = v;
    c.max[k] = v;
  }
  return c;
}

/// Spreads the low 21 bits of `v` so bit k lands at bit 3k (gprox_bvh::morton::spread21).
__device__ __forceinline__ uint64_t spread21(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | (x << 32)) & 0x001f00000000ffffull;
  x = (x | (x << 16)) & 0x001f0000ff0000ffull;
  x = (x | (x << 8)) & 0x100f00f00f00f00full;
  x = (x | (x << 4)) & 0x10c30c30c30c30c3ull;
  x = (x | (x << 2)) & 0x1249249249249249ull;
  return x;
}

/// Quantised cell of coordinate `c` on one axis (spec step 3).
__device__ __forceinline__ uint32_t quantise(float c, float lo, float extent) {
  const float q = (c - lo) / extent;
  float v = q * 2097152.0f;
  v = fminf(fmaxf(v, 0.0f), 2097151.0f);
  return static_cast<uint32_t>(v);
}
}  // namespace gprox

using namespace gprox;

/// One thread per face: the f32 box of its three corners.
GPROX_KERNEL(gprox_prim_boxes, PrimBoxesParams) {
  const uint32_t i = global_thread();
  if (i >= p.count) return;
  const float* pos = dev_ptr<const float>(p.positions);
  const uint32_t* f = dev_ptr<const uint32_t>(p.faces) + 3 * static_cast<size_t>(i);
  const float* a = pos + 3 * static_cast<size_t>(f[0]);
  const float* b = pos + 3 * static_cast<size_t>(f[1]);
  const float* c = pos + 3 * static_cast<size_t>(f[2]);
  Aabb box;
  for (int k = 0; k < 3; ++k) {
    box.min[k] = min_f(min_f(a[k], b[k]), c[k]);
    box.max[k] = max_f(max_f(a[k], b[k]), c[k]);
  }
  dev_ptr<Aabb>(p.boxes)[i] = box;
}
GPROX_KERNEL_EXPORT(gprox_prim_boxes, PrimBoxesParams)

/// Grid-stride reduction: block b writes the box of its share of the input (or of the inputs'
/// centroids) to output[b]. Min/max are exact, so the split does not change the result.
GPROX_KERNEL(gprox_reduce_bounds, ReduceBoundsParams) {
  __shared__ Aabb partial[GPROX_MAX_BLOCK];
  const Aabb* in = dev_ptr<const Aabb>(p.input);
  Aabb acc = empty_aabb();
  for (uint32_t i = global_thread(); i < p.count; i += gridDim.x * blockDim.x) {
    acc = merge(acc, p.centroids ? centroid_box(in[i]) : in[i]);
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    Aabb total = partial[0];
    for (uint32_t t = 1; t < blockDim.x; ++t) total = merge(total, partial[t]);
    dev_ptr<Aabb>(p.output)[blockIdx.x] = total;
  }
}
GPROX_KERNEL_EXPORT(gprox_reduce_bounds, ReduceBoundsParams)

/// One thread per primitive: its 63-bit code (spec step 3) and its index (the sort's payload).
GPROX_KERNEL(gprox_morton_codes, MortonParams) {
  const uint32_t i = global_thread();
  if (i >= p.count) return;
  const Aabb s = *dev_ptr<const Aabb>(p.scene);
  const Aabb c = centroid_box(dev_ptr<const Aabb>(p.boxes)[i]);
  uint32_t cell[3];
  for (int k = 0; k < 3; ++k) {
    float e = s.max[k] - s.min[k];
    if (e == 0.0f) e = 1.0f;
    cell[k] = quantise(c.min[k], s.min[k], e);
  }
  dev_ptr<uint64_t>(p.codes)[i] = (spread21(cell[0]) << 2) | (spread21(cell[1]) << 1) | spread21(cell[2]);
  dev_ptr<uint32_t>(p.indices)[i] = i;
}
GPROX_KERNEL_EXPORT(gprox_morton_codes, MortonParams)
