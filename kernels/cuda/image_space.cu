// Image-space inside classification (Hoff et al. 2002, §5.1): the device twin of
// crates/query/src/image_space/column.rs. One block per (tile, mesh) of a batch, one thread per
// ray column (threads stride over the columns of larger tiles):
//
// 1. gather: a walk of the resident tree (world boxes of the f32 node boxes, conservative) finds
//    the faces whose exact world box meets the column's footprint and reaches the tile's prism
//    along k — the set column.rs bins into this column — with their crossing of the perturbed
//    line (inside.cuh `crossing`);
// 2. sort them by (lowest k, face) (insertion sort in the column's scratch slots);
// 3. sweep the column's samples upwards with the active list of column.rs, writing one code per
//    sample (inside, near, surface) to host-mapped memory.
//
// Exact where certified: every orient2d / orient3d sign goes through a filter; a sign it cannot
// certify, a column with more faces than the scratch holds, or a walk deeper than the stack
// leaves the whole column GPROX_SAMPLE_UNDECIDED and the host classifies it exactly
// (gprox_query::image_space::IntersectionSweep::finish). Samples on a face are always left to
// the host (orient3d = 0 is never certified).
#include "gprox/common.cuh"
#include "gprox/image_space.cuh"
#include "gprox/world.cuh"

using namespace gprox;

namespace {
/// Column outcomes.
enum ColumnStatus { kColumnDone = 0, kColumnUndecided = 1, kColumnOverflow = 2 };

/// Classifies column (cu, cv) of tile `t` against one mesh into `out` (column_len codes).
__device__ ColumnStatus classify_column(const ImageColumnsParams& p, const ImageTile& t, const Pose64& pose,
                                const BvhNode* nodes, const float* positions, const uint32_t* faces,
                                uint32_t cu, uint32_t cv, ImageItem* items, uint32_t* active,
                                uint8_t* out) {
  const int k = static_cast<int>(t.axis), u = (k + 1) % 3, v = (k + 2) % 3;
  const double ul = coordinate(p, u, cu, 0.0), uh = coordinate(p, u, cu, 1.0);
  const double vl = coordinate(p, v, cv, 0.0), vh = coordinate(p, v, cv, 1.0);
  const double pu = coordinate(p, u, cu, 0.5), pv = coordinate(p, v, cv, 0.5);
  const double zmin = coordinate(p, k, t.lo[k], 0.0) - p.spacing;
  const DVec2 pp{pu, pv};
  // 1. Gather.
  uint32_t n = 0;
  uint32_t stack[GPROX_IMAGE_STACK];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const BvhNode node = nodes[stack[--sp]];
    const Aabb b = world_box(node.aabb, pose, 0.0);
    if (!(b.min[u] <= uh && ul <= b.max[u] && b.min[v] <= vh && vl <= b.max[v] && zmin <= b.max[k])) {
      continue;
    }
    if (node.right != GPROX_LEAF) {
      if (sp + 2 > GPROX_IMAGE_STACK) return kColumnUndecided;
      stack[sp++] = node.right;
      stack[sp++] = node.left;
      continue;
    }
    DVec3 tri[3];
    transform_triangle(pose, positions, faces, node.left, tri);
    double lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      const double x0 = component(tri[0], a), x1 = component(tri[1], a), x2 = component(tri[2], a);
      lo[a] = min_d(min_d(x0, x1), x2);
      hi[a] = max_d(max_d(x0, x1), x2);
    }
    if (!(lo[u] <= uh && ul <= hi[u] && lo[v] <= vh && vl <= hi[v] && zmin <= hi[k])) continue;
    const bool on_line = lo[u] <= pu && pu <= hi[u] && lo[v] <= pv && pv <= hi[v];
    int sig = 0;
    if (on_line) {
      sig = crossing(tri, k, pp, 1);
      if (sig == GPROX_SIGN_UNKNOWN) return kColumnUndecided;
    }
    if (n >= p.capacity) return kColumnOverflow;
    items[n].lo_k = lo[k];
    items[n].hi_k = hi[k];
    items[n].face = node.left;
    items[n].sig_line = (sig & 0xffff) | (on_line ? 0x10000 : 0);
    ++n;
  }
  // 2. Sort by (lo_k, face).
  for (uint32_t i = 1; i < n; ++i) {
    const ImageItem x = items[i];
    uint32_t j = i;
    while (j > 0 && (items[j - 1].lo_k > x.lo_k ||
                     (items[j - 1].lo_k == x.lo_k && items[j - 1].face > x.face))) {
      items[j] = items[j - 1];
      --j;
    }
    items[j] = x;
  }
  // 3. Sweep.
  int ahead = 0;
  for (uint32_t i = 0; i < n; ++i) ahead += static_cast<int16_t>(items[i].sig_line & 0xffff);
  uint32_t next = 0, na = 0;
  const double half = 0.5 * p.spacing;
  const DVec3 e{half, half, half};
  for (uint32_t ck = t.lo[k]; ck < t.hi[k]; ++ck) {
    const double zl = coordinate(p, k, ck, 0.0), z = coordinate(p, k, ck, 0.5),
                 zh = coordinate(p, k, ck, 1.0);
    while (next < n && items[next].lo_k <= zh) {
      ahead -= static_cast<int16_t>(items[next].sig_line & 0xffff);
      active[na++] = next++;
    }
    uint32_t m = 0;
    for (uint32_t j = 0; j < na; ++j) {
      if (items[active[j]].hi_k >= zl) active[m++] = active[j];
    }
    na = m;
    double q[3];
    q[u] = pu;
    q[v] = pv;
    q[k] = z;
    const DVec3 s{q[0], q[1], q[2]};
    int winding = ahead;
    bool near = false;
    for (uint32_t j = 0; j < na; ++j) {
      const ImageItem it = items[active[j]];
      const int sig = static_cast<int16_t>(it.sig_line & 0xffff);
      const bool line = (it.sig_line & 0x10000) != 0;
      DVec3 tri[3];
      bool have = false;
      if (!near) {
        transform_triangle(pose, positions, faces, it.face, tri);
        have = true;
        near = triangle_meets_box(tri, s, e);
      }
      if (it.lo_k > z) {
        winding += sig;
        continue;
      }
      if (it.hi_k < z || (sig == 0 && !line)) continue;
      if (!have) transform_triangle(pose, positions, faces, it.face, tri);
      int o;
      orient3d_filtered(tri[0], tri[1], tri[2], s, &o);
      // Unknown (or on the face's plane: never certified) goes to the host.
      if (o == GPROX_SIGN_UNKNOWN) return kColumnUndecided;
      if (sig != 0 && (o > 0) == (sig > 0)) winding += sig;
    }
    uint8_t code = 0;
    if (winding != 0) code |= GPROX_SAMPLE_INSIDE;
    if (near) code |= GPROX_SAMPLE_NEAR;
    out[ck - t.lo[k]] = code;
  }
  return kColumnDone;
}
}  // namespace

GPROX_KERNEL(gprox_image_columns, ImageColumnsParams) {
  const uint32_t tile = blockIdx.x >> 1, side = blockIdx.x & 1u;
  if (tile >= p.count) return;
  const ImageTile t = dev_ptr<const ImageTile>(p.tiles)[tile];
  const int k = static_cast<int>(t.axis), u = (k + 1) % 3, v = (k + 2) % 3;
  const uint32_t nu = t.hi[u] - t.lo[u], nv = t.hi[v] - t.lo[v], len = t.hi[k] - t.lo[k];
  const uint32_t columns = nu * nv;
  const Pose64& pose = side == 0 ? p.pose_a : p.pose_b;
  const BvhNode* nodes = dev_ptr<const BvhNode>(side == 0 ? p.nodes_a : p.nodes_b);
  const float* positions = dev_ptr<const float>(side == 0 ? p.positions_a : p.positions_b);
  const uint32_t* faces = dev_ptr<const uint32_t>(side == 0 ? p.faces_a : p.faces_b);
  uint8_t* codes = dev_ptr<uint8_t>(p.codes) + t.code_offset + static_cast<uint64_t>(side) * columns * len;
  for (uint32_t c = threadIdx.x; c < columns; c += blockDim.x) {
    const uint64_t slot = (2 * static_cast<uint64_t>(t.column_base + c) + side) * p.capacity;
    uint8_t* out = codes + static_cast<uint64_t>(c) * len;
    const ColumnStatus st = classify_column(p, t, pose, nodes, positions, faces, t.lo[u] + c % nu,
                                    t.lo[v] + c / nu, dev_ptr<ImageItem>(p.items) + slot,
                                    dev_ptr<uint32_t>(p.active) + slot, out);
    if (st != kColumnDone) {
      const uint8_t mark = st == kColumnOverflow ? GPROX_SAMPLE_UNDECIDED | GPROX_SAMPLE_OVERFLOW
                                                 : GPROX_SAMPLE_UNDECIDED;
      for (uint32_t i = 0; i < len; ++i) out[i] = mark;
    }
  }
}
GPROX_KERNEL_EXPORT(gprox_image_columns, ImageColumnsParams)

#ifndef __CUDACC__
#include <cstring>
/// sizeof / offsetof of the image-space layouts as the host compiler sees them.
extern "C" size_t gprox_emu_image_layout(const char* name) {
#define GPROX_L(expr)                          \
  if (std::strcmp(name, #expr) == 0) return expr;
  GPROX_L(sizeof(ImageTile))
  GPROX_L(offsetof(ImageTile, axis))
  GPROX_L(offsetof(ImageTile, column_base))
  GPROX_L(offsetof(ImageTile, code_offset))
  GPROX_L(sizeof(ImageColumnsParams))
  GPROX_L(offsetof(ImageColumnsParams, pose_b))
  GPROX_L(offsetof(ImageColumnsParams, nodes_a))
  GPROX_L(offsetof(ImageColumnsParams, faces_b))
  GPROX_L(offsetof(ImageColumnsParams, tiles))
  GPROX_L(offsetof(ImageColumnsParams, codes))
  GPROX_L(offsetof(ImageColumnsParams, origin))
  GPROX_L(offsetof(ImageColumnsParams, spacing))
  GPROX_L(offsetof(ImageColumnsParams, count))
  GPROX_L(offsetof(ImageColumnsParams, capacity))
  GPROX_L(sizeof(ImageItem))
#undef GPROX_L
  return static_cast<size_t>(-1);
}
#endif
