// Geometry images on the device (Greß, Guthe, Klein 2006): the layouts shared with
// kernels/src/geometry_image/ and the mirrors of crates/query/src/geometry_image/
// {hierarchy, traverse, self_collide}.rs (glam's operation order, no FMA: the build passes
// --fmad=false / -ffp-contract=off).
#pragma once

#include "gprox/layout.cuh"

/// Most levels of a hierarchy image (sides below 2^13 quads: at most 14).
#define GPROX_GI_MAX_LEVELS 16
/// Traversal steps a query may take (both trees descended alone: 2 * levels).
#define GPROX_GI_MAX_STEPS (2 * GPROX_GI_MAX_LEVELS)
/// The traversal tests from the first level with at least this many pairs (traverse.rs MIN_PAIRS).
#define GPROX_GI_MIN_PAIRS 256u
/// Counter slots: overflow flag, largest frontier needed, frontier sizes per step, tested flags.
#define GPROX_GI_OVERFLOW 0
#define GPROX_GI_NEEDED 1
#define GPROX_GI_COUNT 2
#define GPROX_GI_TESTED (GPROX_GI_COUNT + GPROX_GI_MAX_STEPS + 1)
/// The count of leaf pairs to sort (0 after an overflow), read by the radix sort.
#define GPROX_GI_SORT_COUNT (GPROX_GI_TESTED + GPROX_GI_MAX_STEPS + 1)
/// Exact mode: leaf pairs the filtered triangle test left undecided, and the next free slot of
/// their corner records (gprox_gi_out).
#define GPROX_GI_UNDECIDED (GPROX_GI_SORT_COUNT + 1)
#define GPROX_GI_SLOT (GPROX_GI_SORT_COUNT + 2)
#define GPROX_GI_COUNTERS (GPROX_GI_SORT_COUNT + 3)
/// u32 words in front of the keys of the mapped output: pairs, overflow flag, needed frontier,
/// undecided pairs (exact mode).
#define GPROX_GI_HEADER 4

namespace gprox {
/// One geometry image resident on the device (gprox_cuda::geometry_image::ImageFace).
struct ImageFace {
  /// `const float[3 * width * height]`: texel positions, `j * width + i`.
  uint64_t positions;
  /// `const uint8_t[(width - 1) * (height - 1)]`: quad stencil.
  uint64_t quad_stencil;
  /// `Aabb[]`: node boxes of every stored level at `level_offset[l]` (the leaf level only when
  /// it is the root).
  uint64_t boxes;
  /// `int8_t[4 * nodes]` sign bytes at `4 * level_offset[l]`, or 0 without signs.
  uint64_t signs;
  /// Texels along u and v.
  uint32_t width;
  uint32_t height;
  /// Leaf box padding (GeometryImage::pad).
  float pad;
  /// Levels (the last has one node).
  uint32_t levels;
  /// First node of each stored level in `boxes`.
  uint32_t level_offset[GPROX_GI_MAX_LEVELS];
};

/// `gprox_gi_build`: levels `level..=last` of one hierarchy image (at most five: the tile,
/// `2^(last - level)` nodes square at `level`, then fits a block), one block per tile.
struct ImageBuildParams {
  ImageFace face;
  /// The first level made (0 only for a one-quad image).
  uint32_t level;
  /// The last level made.
  uint32_t last;
};

/// `gprox_gi_eval`: the positions of one image from its surface's control points
/// (gprox_geometry::freeform::GridEvaluator, the same sums in the same order).
struct ImageEvalParams {
  /// `float[3 * width * height]` (out): texel positions, `j * width + i`.
  uint64_t positions;
  /// `const double[4 * n * m]`: homogeneous control points `(w x, w y, w z, w)`, `i * m + k`.
  uint64_t points;
  /// `const uint32_t[width]`, `const double[(degree_u + 1) * width]`: the u basis of each column
  /// (grid.rs AxisBasis: first control index, basis values).
  uint64_t u_first;
  uint64_t u_basis;
  /// The same for the rows in v.
  uint64_t v_first;
  uint64_t v_basis;
  /// The pose (rows acting on `(x, y, z, 1)`).
  Pose64 pose;
  /// Texels along u and v.
  uint32_t width;
  uint32_t height;
  /// Control points along v.
  uint32_t m;
  /// Degrees in u and v.
  uint32_t degree_u;
  uint32_t degree_v;
  uint32_t pad;
};

/// `gprox_gi_init`, `gprox_gi_step`, `gprox_gi_out`: one traversal (or self-collision).
struct ImageTraverseParams {
  ImageFace a;
  ImageFace b;
  /// `uint32_t[2 * capacity]` frontiers (pairs of node indices), read and written in turn.
  uint64_t frontier_in;
  uint64_t frontier_out;
  /// `uint32_t[GPROX_GI_COUNTERS]`.
  uint64_t counters;
  /// Mapped `uint32_t[GPROX_GI_HEADER + 2 * capacity]`: header and the sorted leaf pair keys
  /// (one `uint64_t` each).
  uint64_t out;
  /// `uint64_t[capacity]`: the leaf pairs' sort keys (gprox_gi_keys), sorted on the device.
  uint64_t keys;
  /// `uint32_t[8 * 256]`: the radix sort's digit totals, cleared by gprox_gi_keys.
  uint64_t totals;
  /// Exact mode: mapped `ImageUndecided[corner_capacity]`, the corners of the undecided pairs
  /// (0 in approximate mode).
  uint64_t corners;
  /// Frontier capacity (pairs).
  uint32_t capacity;
  /// Step number (1 for the first expansion; 0 is the root pair).
  uint32_t step;
  /// Levels of the step's parents in A and B.
  uint32_t level_a;
  uint32_t level_b;
  /// Whether the step descends A, B (1 or 0).
  uint32_t descend_a;
  uint32_t descend_b;
  /// 1: A against itself (self_collide.rs), 0: A against B (traverse.rs).
  uint32_t self_mode;
  /// Self mode: the normal-direction test.
  uint32_t normal_test;
  /// 1 at the last step (leaf pairs are always tested).
  uint32_t last;
  /// Key of leaf pair (quad (i_a, j_a) of A, (i_b, j_b) of B): `i_a << shift_ia | j_a << shift_ja
  /// | i_b << shift_ib | j_b`, fields just wide enough, so key order is TexelPair order.
  uint32_t shift_ia;
  uint32_t shift_ja;
  uint32_t shift_ib;
  /// 1: exact mode (gprox_gi_exact instead of gprox_gi_keys; keys shifted up one bit, bit 0
  /// set on pairs the filtered triangle test left undecided).
  uint32_t exact;
  /// Corner records `corners` holds.
  uint32_t corner_capacity;
};

/// Exact mode: one leaf pair the device's filtered triangle test left undecided, for the host's
/// exact test (gprox_cuda::geometry_image::ImageUndecided).
struct ImageUndecided {
  /// Its place among the sorted pairs of the mapped output.
  uint32_t index;
  /// The corners (00, 10, 01, 11) of its quad of A and of B.
  float a[4][3];
  float b[4][3];
};

/// Quads along u and v.
__host__ __device__ __forceinline__ uint32_t quads_u(const ImageFace& f) { return f.width - 1; }
__host__ __device__ __forceinline__ uint32_t quads_v(const ImageFace& f) { return f.height - 1; }

/// Width and height of level `l` (each level rounds up: ceil(quads / 2^l)).
__host__ __device__ __forceinline__ uint32_t level_width(const ImageFace& f, uint32_t l) {
  return (quads_u(f) + (1u << l) - 1u) >> l;
}
__host__ __device__ __forceinline__ uint32_t level_height(const ImageFace& f, uint32_t l) {
  return (quads_v(f) + (1u << l) - 1u) >> l;
}

/// Texel `k` of the positions.
__host__ __device__ __forceinline__ void texel(const float* pos, uint32_t k, float out[3]) {
  out[0] = pos[3 * static_cast<size_t>(k)];
  out[1] = pos[3 * static_cast<size_t>(k) + 1];
  out[2] = pos[3 * static_cast<size_t>(k) + 2];
}

/// glam's `Vec3::min` / `max` component (the right operand on ties).
__host__ __device__ __forceinline__ float glam_min(float a, float b) { return a < b ? a : b; }
__host__ __device__ __forceinline__ float glam_max(float a, float b) { return a > b ? a : b; }

/// The four corners (00, 10, 01, 11) of quad (i, j) (GeometryImage::quad).
__host__ __device__ __forceinline__ void quad_corners(const ImageFace& f, uint32_t i, uint32_t j,
                                                     float c[4][3]) {
  const float* pos = dev_ptr<const float>(f.positions);
  const uint32_t k = j * f.width + i;
  texel(pos, k, c[0]);
  texel(pos, k + 1, c[1]);
  texel(pos, k + f.width, c[2]);
  texel(pos, k + f.width + 1, c[3]);
}

/// Unpadded min/max of quad (i, j)'s corners merged into (lo, hi) when its stencil is set.
__host__ __device__ __forceinline__ void add_quad(const ImageFace& f, uint32_t i, uint32_t j,
                                                  float lo[3], float hi[3]) {
  if (dev_ptr<const uint8_t>(f.quad_stencil)[j * quads_u(f) + i] == 0) return;
  float c[4][3];
  quad_corners(f, i, j, c);
  for (int a = 0; a < 3; ++a) {
    const float l = glam_min(glam_min(c[0][a], c[1][a]), glam_min(c[2][a], c[3][a]));
    const float h = glam_max(glam_max(c[0][a], c[1][a]), glam_max(c[2][a], c[3][a]));
    lo[a] = glam_min(lo[a], l);
    hi[a] = glam_max(hi[a], h);
  }
}

/// The padded box of (lo, hi); stays empty when nothing was added (±inf ∓ pad).
__host__ __device__ __forceinline__ Aabb padded(const ImageFace& f, const float lo[3], const float hi[3]) {
  Aabb b;
  for (int a = 0; a < 3; ++a) {
    b.min[a] = lo[a] - f.pad;
    b.max[a] = hi[a] + f.pad;
  }
  return b;
}

/// Whether a box is empty (stencil 0): hierarchy.rs `is_empty`.
__host__ __device__ __forceinline__ bool is_empty(const Aabb& b) { return b.min[0] > b.max[0]; }

/// Box of node `k` of level `l` (HierarchyImage::node_box): stored levels are read, the leaves
/// are made from the texels (GeometryImage::quad_box).
__host__ __device__ __forceinline__ Aabb node_box(const ImageFace& f, uint32_t l, uint32_t k) {
  if (l == 0 && f.levels > 1) {
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    add_quad(f, k % quads_u(f), k / quads_u(f), lo, hi);
    return padded(f, lo, hi);
  }
  return dev_ptr<const Aabb>(f.boxes)[f.level_offset[l] + k];
}

/// Sign of x as −1, 0, 1 (hierarchy.rs `sign`).
__host__ __device__ __forceinline__ int8_t sign_of(float x) { return x > 0.0f ? 1 : (x < 0.0f ? -1 : 0); }

/// Sign bytes of quad (i, j) against the four directions (hierarchy.rs `quad_signs`): the two
/// triangles' normals (diagonal 00–11) in glam's operation order, 0 where they differ.
__host__ __device__ __forceinline__ void quad_signs(const ImageFace& f, uint32_t i, uint32_t j,
                                                    int8_t out[4]) {
  float c[4][3];
  quad_corners(f, i, j, c);
  float e1[3], e3[3], e2[3];
  for (int a = 0; a < 3; ++a) {
    e1[a] = c[1][a] - c[0][a];
    e3[a] = c[3][a] - c[0][a];
    e2[a] = c[2][a] - c[0][a];
  }
  // glam Vec3::cross: (y rz − ry z, z rx − rz x, x ry − rx y).
  const float n1[3] = {e1[1] * e3[2] - e3[1] * e1[2], e1[2] * e3[0] - e3[2] * e1[0],
                       e1[0] * e3[1] - e3[0] * e1[1]};
  const float n2[3] = {e3[1] * e2[2] - e2[1] * e3[2], e3[2] * e2[0] - e2[2] * e3[0],
                       e3[0] * e2[1] - e2[0] * e3[1]};
  // DIRECTIONS: (1,1,1), (1,1,-1), (1,-1,1), (-1,1,1); glam dot: (x dx + y dy) + z dz.
  const float dirs[4][3] = {{1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {-1, 1, 1}};
  for (int d = 0; d < 4; ++d) {
    const float a = n1[0] * dirs[d][0] + n1[1] * dirs[d][1] + n1[2] * dirs[d][2];
    const float b = n2[0] * dirs[d][0] + n2[1] * dirs[d][1] + n2[2] * dirs[d][2];
    const int8_t sa = sign_of(a), sb = sign_of(b);
    out[d] = sa == sb ? sa : 0;
  }
}

/// Merges the sign bytes `cs` of a child into `s` (`any`: a child was merged before).
__host__ __device__ __forceinline__ void merge_signs(int8_t s[4], const int8_t cs[4], bool& any) {
  for (int d = 0; d < 4; ++d) s[d] = any ? (s[d] == cs[d] ? s[d] : 0) : cs[d];
  any = true;
}
}  // namespace gprox
