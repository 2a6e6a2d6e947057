// Elementary CCD tests on the device: gprox_query::ccd's certified pre-filters (filter.rs), its
// inclusion-based root finder (inclusion.rs) and the feature expansion of a candidate face pair
// (candidates.rs: ownership, self/pair jobs, canonical point order), mirrored function by
// function in f64 with glam's operation order, no FMA (nvcc --fmad=false, g++
// -ffp-contract=off), Rust's f64::min/max and total_cmp, and the exact sift order of Rust's
// BinaryHeap — so every answer the device gives is bit-identical to the CPU's. The CPU uses no
// directed rounding: its rounding bounds are a-priori constants, reproduced as is.
//
// The one difference: the CPU's heap grows without bound, the device's holds GPROX_CCD_HEAP
// boxes. A test whose live boxes outgrow it stops as UNDECIDED and the host runs the CPU's test
// (gprox_query::ccd::{vertex_face_toi, edge_edge_toi}) for it.
//
// Mirrored by kernels/src/ccd_narrow.rs (tests/layout.rs compares the layouts).
#pragma once
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/transform.cuh"

#ifndef __CUDACC__
#include <cstring>
#endif

/// Boxes a device test may keep alive at once (the CPU's heap is unbounded).
#define GPROX_CCD_HEAP 64
/// CcdResult::status: certified contact-free.
#define GPROX_CCD_FREE 0u
/// CcdResult::status: contact at [t_lo, t_hi].
#define GPROX_CCD_CONTACT 1u
/// CcdResult::status: the device could not finish (heap full): the host runs the CPU test.
#define GPROX_CCD_UNDECIDED 2u
/// CcdQuery::kind / CcdRecord::kind (low bits): vertex–face (vertex of the first mesh).
#define GPROX_CCD_VERTEX_FACE 1u
/// CcdRecord::kind: face of the first mesh against a vertex of the second.
#define GPROX_CCD_FACE_VERTEX 2u
/// CcdQuery::kind / CcdRecord::kind: edge–edge.
#define GPROX_CCD_EDGE_EDGE 3u
/// CcdRecord::kind flag: undecided on the device (t_lo / t_hi meaningless).
#define GPROX_CCD_RECORD_UNDECIDED 16u
/// u32 words of the mapped header in front of the records (records, tests, undecided, pad).
#define GPROX_CCD_HEADER_WORDS 8

namespace gprox {

/// One elementary query: points [p, a, b, c] (vertex–face) or [a0, a1, b0, b1] (edge–edge) at
/// t = 0 and t = 1. 200 bytes.
struct CcdQuery {
  double start[4][3];
  double end[4][3];
  uint32_t kind;
  uint32_t pad;
};

/// Outcome of one elementary query. 24 bytes.
struct CcdResult {
  double t_lo;
  double t_hi;
  uint32_t status;
  uint32_t pad;
};

/// One contact (or undecided feature pair) of mesh CCD. `v`: the feature's vertices in the
/// solver's canonical order (vertex–face: [vertex, face corners]; edge–edge: [a0, a1, b0, b1]);
/// `faces`: the face pair the test ran for, as FeatureToi::faces. 48 bytes.
struct CcdRecord {
  uint32_t kind;
  uint32_t v[4];
  uint32_t faces[2];
  uint32_t pad;
  double t_lo;
  double t_hi;
};

/// gprox_ccd_elementary: queries[i] -> results[i].
struct CcdElementaryParams {
  uint64_t queries;  // const CcdQuery[count]
  uint64_t results;  // CcdResult[count] (out)
  double tolerance;
  double min_separation;
  double max_time_width;
  uint64_t max_checks;
  uint32_t count;
  uint32_t pad;
};

/// gprox_ccd_pairs / gprox_ccd_header: the narrow phase of a CCD traversal's candidate pairs.
struct CcdPairsParams {
  uint64_t pairs;         // const u32[2 * capacity]: the traversal's leaf pairs
  uint64_t counters;      // u32[GPROX_BALANCE_COUNTERS]: the traversal's counters
  uint64_t ccd_counters;  // u32[4]: records, tests, undecided (zero between queries)
  uint64_t out;           // mapped: u32[GPROX_CCD_HEADER_WORDS] header, then CcdRecord[]
  uint64_t a_start;       // const float[3 * vertices]: mesh a at t = 0
  uint64_t a_end;         // const float[3 * vertices]: mesh a at t = 1
  uint64_t a_faces;       // const u32[3 * faces]
  uint64_t a_owned;       // const u8[faces]: owned vertex bits | owned edge bits << 3
  uint64_t b_start;       // mesh b (= mesh a in self CCD)
  uint64_t b_end;
  uint64_t b_faces;
  uint64_t b_owned;
  double big;             // largest |coordinate| of both meshes, both frames
  double tolerance;
  double min_separation;
  double max_time_width;
  uint64_t max_checks;
  uint32_t capacity;         // pairs the results buffer holds
  uint32_t record_capacity;  // records `out` holds
  uint32_t same;             // self CCD
  uint32_t pad;
};

namespace ccd {

// ---- f64 scalars and vectors with Rust's / glam's semantics ----
__host__ __device__ __forceinline__ DVec3 v3(double x, double y, double z) { return DVec3{x, y, z}; }
__host__ __device__ __forceinline__ DVec3 add(DVec3 a, DVec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__host__ __device__ __forceinline__ DVec3 sub(DVec3 a, DVec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__host__ __device__ __forceinline__ DVec3 mul(DVec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
__host__ __device__ __forceinline__ DVec3 divv(DVec3 a, DVec3 b) { return v3(a.x / b.x, a.y / b.y, a.z / b.z); }
__host__ __device__ __forceinline__ double dot(DVec3 a, DVec3 b) { return (a.x * b.x) + (a.y * b.y) + (a.z * b.z); }
__host__ __device__ __forceinline__ DVec3 cross(DVec3 a, DVec3 b) {
  return v3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}
__host__ __device__ __forceinline__ DVec3 vabs(DVec3 a) { return v3(fabs(a.x), fabs(a.y), fabs(a.z)); }
/// glam DVec3::min / max (plain comparisons).
__host__ __device__ __forceinline__ DVec3 vmin(DVec3 a, DVec3 b) {
  return v3(a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z);
}
__host__ __device__ __forceinline__ DVec3 vmax(DVec3 a, DVec3 b) {
  return v3(a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z);
}
/// glam DVec3::max_element.
__host__ __device__ __forceinline__ double max_element(DVec3 a) {
  const double yz = a.y > a.z ? a.y : a.z;
  return a.x > yz ? a.x : yz;
}
__host__ __device__ __forceinline__ DVec3 splat(double s) { return v3(s, s, s); }
__host__ __device__ __forceinline__ double comp(DVec3 a, int k) { return k == 0 ? a.x : (k == 1 ? a.y : a.z); }
__host__ __device__ __forceinline__ bool finite(double x) { return fabs(x) <= 1.7976931348623157e308; }
__host__ __device__ __forceinline__ bool vfinite(DVec3 a) { return finite(a.x) && finite(a.y) && finite(a.z); }
__host__ __device__ __forceinline__ bool vzero(DVec3 a) { return a.x == 0.0 && a.y == 0.0 && a.z == 0.0; }
/// Rust's f64::max / f64::min (the non-NaN operand, `a` on ties).
__host__ __device__ __forceinline__ double max_d(double a, double b) { return (b > a || a != a) ? b : a; }
__host__ __device__ __forceinline__ double min_d(double a, double b) { return (b < a || a != a) ? b : a; }
/// Rust's f64::clamp(0.0, 1.0).
__host__ __device__ __forceinline__ double clamp01(double x) {
  if (x < 0.0) x = 0.0;
  if (x > 1.0) x = 1.0;
  return x;
}
/// Rust's f64::total_cmp: -1, 0, 1.
__host__ __device__ __forceinline__ int total_cmp(double x, double y) {
  int64_t l, r;
#ifdef __CUDACC__
  l = __double_as_longlong(x);
  r = __double_as_longlong(y);
#else
  std::memcpy(&l, &x, sizeof l);
  std::memcpy(&r, &y, sizeof r);
#endif
  l ^= static_cast<int64_t>(static_cast<uint64_t>(l >> 63) >> 1);
  r ^= static_cast<int64_t>(static_cast<uint64_t>(r >> 63) >> 1);
  return l < r ? -1 : (l > r ? 1 : 0);
}

/// f64::EPSILON * 0.5 and f64::MIN_POSITIVE.
#define GPROX_CCD_U 1.1102230246251565e-16
#define GPROX_CCD_MIN_POSITIVE 2.2250738585072014e-308

// ---- inclusion.rs ----

/// inclusion::error_bound.
__host__ __device__ __forceinline__ double error_bound(double m) {
  return m * (128.0 * 2.220446049250313e-16 * 0.5) + GPROX_CCD_MIN_POSITIVE;
}

/// inclusion::Problem.
struct Problem {
  DVec3 start[4];
  DVec3 delta[4];
  uint8_t terms[3][2];
  bool edge_edge;
  double sep;
  DVec3 eps;
};

__host__ __device__ __forceinline__ void problem_new(Problem& p, bool edge_edge, const DVec3 start[4],
                                                     const DVec3 end[4], double min_separation) {
  DVec3 m = v3(0.0, 0.0, 0.0);
  for (int i = 0; i < 4; ++i) m = vmax(m, vabs(start[i]));
  for (int i = 0; i < 4; ++i) m = vmax(m, vabs(end[i]));
  p.eps = v3(error_bound(m.x), error_bound(m.y), error_bound(m.z));
  for (int i = 0; i < 4; ++i) {
    p.start[i] = start[i];
    p.delta[i] = sub(end[i], start[i]);
  }
  // Vertex-face: (0,1), (1,2), (1,3); edge-edge: (0,2), (1,0), (2,3).
  const uint8_t vf[3][2] = {{0, 1}, {1, 2}, {1, 3}};
  const uint8_t ee[3][2] = {{0, 2}, {1, 0}, {2, 3}};
  for (int i = 0; i < 3; ++i) {
    p.terms[i][0] = edge_edge ? ee[i][0] : vf[i][0];
    p.terms[i][1] = edge_edge ? ee[i][1] : vf[i][1];
  }
  p.edge_edge = edge_edge;
  p.sep = max_d(min_separation, 0.0);
}

/// Problem::ghk.
__host__ __device__ __forceinline__ void ghk(const Problem& p, double t, DVec3 out[3]) {
  DVec3 x[4];
  for (int i = 0; i < 4; ++i) x[i] = add(p.start[i], mul(p.delta[i], t));
  for (int i = 0; i < 3; ++i) out[i] = sub(x[p.terms[i][0]], x[p.terms[i][1]]);
}

/// A (t, u, v) box of the search, with what the search needs of its widened range.
struct Box3 {
  double t[2], u[2], v[2];
  double score;
  uint32_t depth;
  uint32_t small;  // the range is within the tolerance on every axis
};

/// Box3's Ord (max-heap order): -1, 0, 1.
__host__ __device__ __forceinline__ int box_cmp(const Box3& s, const Box3& o) {
  int c = total_cmp(o.t[0], s.t[0]);
  if (c != 0) return c;
  c = total_cmp(o.score, s.score);
  if (c != 0) return c;
  return s.depth < o.depth ? -1 : (s.depth > o.depth ? 1 : 0);
}
__host__ __device__ __forceinline__ bool box_le(const Box3& a, const Box3& b) { return box_cmp(a, b) != 1; }

/// Rust's BinaryHeap<Box3> (same sift order, so equal boxes pop in the same order), bounded.
struct Heap {
  Box3 data[GPROX_CCD_HEAP];
  uint32_t len;
};

__host__ __device__ __forceinline__ uint32_t heap_sift_up(Heap& h, uint32_t start, uint32_t pos) {
  const Box3 elem = h.data[pos];
  while (pos > start) {
    const uint32_t parent = (pos - 1) / 2;
    if (box_le(elem, h.data[parent])) break;
    h.data[pos] = h.data[parent];
    pos = parent;
  }
  h.data[pos] = elem;
  return pos;
}

/// Pushes `b`; false when the heap is full.
__host__ __device__ __forceinline__ bool heap_push(Heap& h, const Box3& b) {
  if (h.len >= GPROX_CCD_HEAP) return false;
  h.data[h.len] = b;
  h.len += 1;
  heap_sift_up(h, 0, h.len - 1);
  return true;
}

/// Pops the greatest box into `out` (heap not empty).
__host__ __device__ __forceinline__ void heap_pop(Heap& h, Box3& out) {
  h.len -= 1;
  Box3 item = h.data[h.len];
  if (h.len > 0) {
    const Box3 top = h.data[0];
    h.data[0] = item;
    item = top;
    // sift_down_to_bottom(0)
    const uint32_t end = h.len;
    uint32_t pos = 0;
    const Box3 elem = h.data[0];
    uint32_t child = 1;
    const uint32_t last = end >= 2 ? end - 2 : 0;
    while (child <= last) {
      child += box_le(h.data[child], h.data[child + 1]) ? 1u : 0u;
      h.data[pos] = h.data[child];
      pos = child;
      child = 2 * pos + 1;
    }
    if (child == end - 1) {
      h.data[pos] = h.data[child];
      pos = child;
    }
    h.data[pos] = elem;
    heap_sift_up(h, 0, pos);
  }
  out = item;
}

/// Evaluates a box (inclusion::evaluate): false when it is outside the domain or certainly holds
/// no contact.
__host__ __device__ __forceinline__ bool evaluate(const Problem& p, double tol, const double t[2],
                                                  const double u[2], const double v[2],
                                                  uint32_t depth, Box3& b) {
  for (int i = 0; i < 2; ++i) {
    b.t[i] = t[i];
    b.u[i] = u[i];
    b.v[i] = v[i];
  }
  b.depth = depth;
  // in_domain (dyadic corners: the sum is exact)
  if (!(p.edge_edge || u[0] + v[0] <= 1.0)) return false;
  // range
  DVec3 lo = splat(INFINITY);
  DVec3 hi = splat(-INFINITY);
  for (int i = 0; i < 2; ++i) {
    DVec3 g[3];
    ghk(p, t[i], g);
    const DVec3 ha = mul(g[1], u[0]), hb = mul(g[1], u[1]);
    const DVec3 ka = mul(g[2], v[0]), kb = mul(g[2], v[1]);
    lo = vmin(lo, add(add(g[0], vmin(ha, hb)), vmin(ka, kb)));
    hi = vmax(hi, add(add(g[0], vmax(ha, hb)), vmax(ka, kb)));
  }
  lo = sub(lo, p.eps);
  hi = add(hi, p.eps);
  // may_contain_root
  const double s = p.sep;
  if (!(lo.x <= s && lo.y <= s && lo.z <= s && hi.x >= -s && hi.y >= -s && hi.z >= -s)) {
    return false;
  }
  const DVec3 w = vmax(sub(hi, lo), splat(GPROX_CCD_MIN_POSITIVE));
  b.score = max_element(divv(vabs(add(lo, hi)), w));
  b.small = max_element(sub(hi, lo)) <= tol ? 1u : 0u;
  return true;
}

/// Problem::split_weights.
__host__ __device__ __forceinline__ void split_weights(const Problem& p, const Box3& b, double w[3]) {
  DVec3 a[3], c[3];
  ghk(p, b.t[0], a);
  ghk(p, b.t[1], c);
  const DVec3 motion = add(add(vabs(sub(c[0], a[0])), mul(vabs(sub(c[1], a[1])), b.u[1])),
                           mul(vabs(sub(c[2], a[2])), b.v[1]));
  const double wh = max_element(vmax(vabs(a[1]), vabs(c[1])));
  const double wk = max_element(vmax(vabs(a[2]), vabs(c[2])));
  w[0] = max_element(motion);
  w[1] = (b.u[1] - b.u[0]) * wh;
  w[2] = (b.v[1] - b.v[0]) * wk;
}

/// Search options (CcdOptions).
struct Opts {
  double tolerance;
  double min_separation;
  double max_time_width;
  uint64_t max_checks;
};

/// inclusion::solve: GPROX_CCD_FREE, GPROX_CCD_CONTACT (with [t_lo, t_hi]) or
/// GPROX_CCD_UNDECIDED (the heap is full). Out of line: large, and called from loops.
static __host__ __device__ GPROX_NOINLINE uint32_t solve(const Problem& p, const Opts& o,
                                                         double* t_lo, double* t_hi) {
  const double tol = max_d(o.tolerance, 0.0) + 2.0 * max_element(p.eps);
  const double unit[2] = {0.0, 1.0};
  Heap h;
  h.len = 0;
  Box3 root;
  if (!evaluate(p, tol, unit, unit, unit, 0, root)) return GPROX_CCD_FREE;
  const double min_width = 3.552713678800501e-15;  // 0.5^48
  heap_push(h, root);
  uint64_t checks = 1;
  while (h.len > 0) {
    Box3 b;
    heap_pop(h, b);
    const double widths[3] = {b.t[1] - b.t[0], b.u[1] - b.u[0], b.v[1] - b.v[0]};
    const bool t_ok = widths[0] <= o.max_time_width;
    if ((b.small != 0 && t_ok) || checks >= o.max_checks) {
      *t_lo = b.t[0];
      *t_hi = b.t[1];
      return GPROX_CCD_CONTACT;
    }
    double wts[3];
    split_weights(p, b, wts);
    int dim = -1;
    double best = -1.0;
    for (int i = 0; i < 3; ++i) {
      if (widths[i] > min_width && wts[i] > best) {
        best = wts[i];
        dim = i;
      }
    }
    if (b.small != 0 && widths[0] > min_width) dim = 0;
    if (dim < 0) {
      *t_lo = b.t[0];
      *t_hi = b.t[1];
      return GPROX_CCD_CONTACT;
    }
    double ta[2] = {b.t[0], b.t[1]}, tb[2] = {b.t[0], b.t[1]};
    double ua[2] = {b.u[0], b.u[1]}, ub[2] = {b.u[0], b.u[1]};
    double va[2] = {b.v[0], b.v[1]}, vb[2] = {b.v[0], b.v[1]};
    double* x = dim == 0 ? ta : (dim == 1 ? ua : va);
    double* y = dim == 0 ? tb : (dim == 1 ? ub : vb);
    const double mid = 0.5 * (x[0] + x[1]);
    x[1] = mid;
    y[0] = mid;
    for (int c = 0; c < 2; ++c) {
      checks += 1;
      Box3 child;
      if (evaluate(p, tol, c == 0 ? ta : tb, c == 0 ? ua : ub, c == 0 ? va : vb, b.depth + 1,
                   child)) {
        if (!heap_push(h, child)) return GPROX_CCD_UNDECIDED;
      }
    }
  }
  return GPROX_CCD_FREE;
}

/// vertex_face_unchecked / edge_edge_unchecked.
__host__ __device__ __forceinline__ uint32_t elementary(bool edge_edge, const DVec3 start[4],
                                                        const DVec3 end[4], const Opts& o,
                                                        double* t_lo, double* t_hi) {
  Problem p;
  problem_new(p, edge_edge, start, end, o.min_separation);
  return solve(p, o, t_lo, t_hi);
}

// ---- filter.rs ----

/// Groups::axis_separated (points ..split against split..).
__host__ __device__ __forceinline__ bool axis_separated(const DVec3 start[4], const DVec3 end[4],
                                                        int split, double d) {
  DVec3 lo[4], hi[4];  // a0, b0, a1, b1
  for (int f = 0; f < 2; ++f) {
    const DVec3* pts = f == 0 ? start : end;
    DVec3 al = pts[0], ah = pts[0];
    for (int i = 1; i < split; ++i) {
      al = vmin(al, pts[i]);
      ah = vmax(ah, pts[i]);
    }
    DVec3 bl = pts[split], bh = pts[split];
    for (int i = split + 1; i < 4; ++i) {
      bl = vmin(bl, pts[i]);
      bh = vmax(bh, pts[i]);
    }
    lo[2 * f] = al;
    hi[2 * f] = ah;
    lo[2 * f + 1] = bl;
    hi[2 * f + 1] = bh;
  }
  const double need = d * (1.0 + 4.0 * GPROX_CCD_U) + GPROX_CCD_MIN_POSITIVE;
  for (int k = 0; k < 3; ++k) {
    const double a0l = comp(lo[0], k), a0h = comp(hi[0], k), b0l = comp(lo[1], k), b0h = comp(hi[1], k);
    const double a1l = comp(lo[2], k), a1h = comp(hi[2], k), b1l = comp(lo[3], k), b1h = comp(hi[3], k);
#define GPROX_CCD_GT(x, y) ((x) - (y) > need && (x) > (y))
    if ((GPROX_CCD_GT(a0l, b0h) && GPROX_CCD_GT(a1l, b1h)) ||
        (GPROX_CCD_GT(b0l, a0h) && GPROX_CCD_GT(b1l, a1h))) {
      return true;
    }
#undef GPROX_CCD_GT
  }
  return false;
}

/// Groups::separated_along.
__host__ __device__ __forceinline__ bool separated_along(const DVec3 start[4], const DVec3 end[4],
                                                         int split, double sep, DVec3 w) {
  if (!vfinite(w) || vzero(w)) return false;
  const DVec3 wa = vabs(w);
  bool ok_pos = true, ok_neg = true;
  for (int f = 0; f < 2; ++f) {
    const DVec3* pts = f == 0 ? start : end;
    double m = 0.0;
    double alo = INFINITY, ahi = -INFINITY, blo = INFINITY, bhi = -INFINITY;
    for (int i = 0; i < 4; ++i) {
      const DVec3 p = pts[i];
      const double v = w.x * p.x + w.y * p.y + w.z * p.z;
      m = max_d(m, dot(wa, vabs(p)));
      if (i < split) {
        alo = min_d(alo, v);
        ahi = max_d(ahi, v);
      } else {
        blo = min_d(blo, v);
        bhi = max_d(bhi, v);
      }
    }
    const double need = 12.0 * GPROX_CCD_U * m +
                        sep * (wa.x + wa.y + wa.z) * (1.0 + 4.0 * GPROX_CCD_U) +
                        GPROX_CCD_MIN_POSITIVE;
    ok_pos &= blo - ahi > need;
    ok_neg &= alo - bhi > need;
    if (!ok_pos && !ok_neg) return false;
  }
  return ok_pos || ok_neg;
}

/// filter::closest_on_triangle.
__host__ __device__ __forceinline__ DVec3 closest_on_triangle(DVec3 p, DVec3 a, DVec3 b, DVec3 c) {
  const DVec3 ab = sub(b, a);
  const DVec3 ac = sub(c, a);
  const DVec3 ap = sub(p, a);
  const double d1 = dot(ab, ap);
  const double d2 = dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) return a;
  const DVec3 bp = sub(p, b);
  const double d3 = dot(ab, bp);
  const double d4 = dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return add(a, mul(ab, v));
  }
  const DVec3 cp = sub(p, c);
  const double d5 = dot(ab, cp);
  const double d6 = dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return add(a, mul(ac, w));
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return add(b, mul(sub(c, b), w));
  }
  const double denom = 1.0 / (va + vb + vc);
  return add(add(a, mul(ab, vb * denom)), mul(ac, vc * denom));
}

/// filter::closest_segments: the direction `q - p` between the closest points.
__host__ __device__ __forceinline__ DVec3 closest_segments_dir(DVec3 p0, DVec3 p1, DVec3 q0, DVec3 q1) {
  const DVec3 d1 = sub(p1, p0);
  const DVec3 d2 = sub(q1, q0);
  const DVec3 r = sub(p0, q0);
  const double a = dot(d1, d1);
  const double e = dot(d2, d2);
  const double f = dot(d2, r);
  double s, t;
  if (a <= GPROX_CCD_MIN_POSITIVE && e <= GPROX_CCD_MIN_POSITIVE) return sub(q0, p0);
  if (a <= GPROX_CCD_MIN_POSITIVE) {
    s = 0.0;
    t = clamp01(f / e);
  } else {
    const double c = dot(d1, r);
    if (e <= GPROX_CCD_MIN_POSITIVE) {
      t = 0.0;
      s = clamp01(-c / a);
    } else {
      const double b = dot(d1, d2);
      const double denom = a * e - b * b;
      double s0 = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
      double t0 = (b * s0 + f) / e;
      if (t0 < 0.0) {
        t0 = 0.0;
        s0 = clamp01(-c / a);
      } else if (t0 > 1.0) {
        t0 = 1.0;
        s0 = clamp01((b - c) / a);
      }
      s = s0;
      t = t0;
    }
  }
  return sub(add(q0, mul(d2, t)), add(p0, mul(d1, s)));
}

/// filter::never_coplanar.
__host__ __device__ __forceinline__ bool never_coplanar(const DVec3 start[4], const DVec3 end[4]) {
  DVec3 e0[3], e1[3];
  for (int k = 0; k < 3; ++k) {
    e0[k] = sub(start[k + 1], start[0]);
    e1[k] = sub(end[k + 1], end[0]);
  }
  const DVec3 c00 = cross(e0[0], e0[1]);
  const DVec3 c01 = cross(e0[0], e1[1]);
  const DVec3 c10 = cross(e1[0], e0[1]);
  const DVec3 c11 = cross(e1[0], e1[1]);
  const double b0 = dot(c00, e0[2]);
  const double b1 = (dot(c10, e0[2]) + dot(c01, e0[2]) + dot(c00, e1[2])) / 3.0;
  const double b2 = (dot(c11, e0[2]) + dot(c10, e1[2]) + dot(c01, e1[2])) / 3.0;
  const double b3 = dot(c11, e1[2]);
  double m[3];
  for (int k = 0; k < 3; ++k) m[k] = max_element(vmax(vabs(e0[k]), vabs(e1[k])));
  const double eps = 1024.0 * GPROX_CCD_U * m[0] * m[1] * m[2] * (1.0 + 16.0 * GPROX_CCD_U) +
                     GPROX_CCD_MIN_POSITIVE;
  const bool all_pos = b0 > eps && b1 > eps && b2 > eps && b3 > eps;
  const bool all_neg = b0 < -eps && b1 < -eps && b2 < -eps && b3 < -eps;
  return all_pos || all_neg;
}

/// filter::excluded.
__host__ __device__ __forceinline__ bool excluded(const DVec3 start[4], const DVec3 end[4], int split,
                                                  double sep) {
  if (axis_separated(start, end, split, sep)) return true;
  for (int f = 0; f < 2; ++f) {
    const DVec3* pts = f == 0 ? start : end;
    const DVec3 w = split == 1 ? sub(pts[0], closest_on_triangle(pts[0], pts[1], pts[2], pts[3]))
                               : closest_segments_dir(pts[0], pts[1], pts[2], pts[3]);
    if (separated_along(start, end, split, sep, w)) return true;
  }
  return sep == 0.0 && never_coplanar(start, end);
}

/// filter::Projected.
struct Projected {
  double start[6];
  double end[6];
  double need;
};

/// Projected::new: false when the direction is degenerate.
__host__ __device__ __forceinline__ bool projected_new(Projected& pr, const DVec3 c0[6],
                                                       const DVec3 c1[6], double sep, double big) {
  DVec3 w = v3(0.0, 0.0, 0.0);
  for (int k = 0; k < 3; ++k) w = add(w, sub(add(c0[k + 3], c1[k + 3]), add(c0[k], c1[k])));
  if (!vfinite(w) || vzero(w)) return false;
  for (int k = 0; k < 6; ++k) {
    const DVec3 p = c0[k], q = c1[k];
    pr.start[k] = w.x * p.x + w.y * p.y + w.z * p.z;
    pr.end[k] = w.x * q.x + w.y * q.y + w.z * q.z;
  }
  const DVec3 wa = vabs(w);
  const double w1 = wa.x + wa.y + wa.z;
  const double need = (12.0 * GPROX_CCD_U * big + sep * (1.0 + 4.0 * GPROX_CCD_U)) * w1 *
                          (1.0 + 4.0 * GPROX_CCD_U) +
                      GPROX_CCD_MIN_POSITIVE;
  pr.need = need;
  return finite(need);
}

/// Projected::separated.
__host__ __device__ __forceinline__ bool projected_separated(const Projected& pr, const uint8_t s[4],
                                                             int split) {
  const uint8_t a[2] = {s[0], s[split - 1]};
  const uint8_t b[3] = {s[split], s[2], s[3]};
  double lo[4], hi[4];  // a0, b0, a1, b1
  for (int f = 0; f < 2; ++f) {
    const double* v = f == 0 ? pr.start : pr.end;
    const double a0 = v[a[0]], a1 = v[a[1]];
    const double b0 = v[b[0]], b1 = v[b[1]], b2 = v[b[2]];
    lo[2 * f] = min_d(a0, a1);
    hi[2 * f] = max_d(a0, a1);
    lo[2 * f + 1] = min_d(min_d(b0, b1), b2);
    hi[2 * f + 1] = max_d(max_d(b0, b1), b2);
  }
  const bool pos = (lo[1] - hi[0] > pr.need) & (lo[3] - hi[2] > pr.need);
  const bool neg = (lo[0] - hi[1] > pr.need) & (lo[2] - hi[3] > pr.need);
  return pos | neg;
}

}  // namespace ccd
}  // namespace gprox
