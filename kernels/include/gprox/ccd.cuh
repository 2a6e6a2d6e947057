// Elementary CCD tests on the device: gprox_query::ccd's certified pre-filters (filter.rs) and
// the feature expansion of a candidate face pair (candidates.rs: ownership, self/pair jobs,
// canonical point order), mirrored function by function in f64 with glam's operation order, no
// FMA (nvcc --fmad=false, g++ -ffp-contract=off), Rust's f64::min/max and total_cmp — so every
// pair the device rules out is ruled out by the CPU too, bit for bit.
//
// The device decides only certified no-contact: the pre-filters, then the per-axis range of the
// whole (t, u, v) domain (the root box of inclusion.rs). Every other pair comes back UNDECIDED
// and the host runs the CPU's solver (gprox_query::ccd::{vertex_face_toi, edge_edge_toi}) for it,
// so the answers — time of impact, CcdStatus, separation bound, witness — are the CPU's exactly.
// (Since issue #15 the CPU solver projects each box onto directions from its geometry and
// reports a certainty; that search is not mirrored here.)
//
// The certified pre-filters and the feature expansion of a face pair are in ccd_filter.cuh.
// Mirrored by kernels/src/ccd_narrow.rs (tests/layout.rs compares the layouts).
#pragma once
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/transform.cuh"

#ifndef __CUDACC__
#include <cstring>
#endif

/// CcdResult::status: certified contact-free.
#define GPROX_CCD_FREE 0u
/// CcdResult::status: contact at [t_lo, t_hi] (not produced since issue #15).
#define GPROX_CCD_CONTACT 1u
/// CcdResult::status: not decided on the device: the host runs the CPU test.
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

/// Search options (CcdOptions).
struct Opts {
  double tolerance;
  double min_separation;
  double max_time_width;
  uint64_t max_checks;
};

/// The root box of inclusion::solve (the whole domain, per-axis range only):
/// GPROX_CCD_FREE when it certainly holds no contact, else GPROX_CCD_UNDECIDED (the host runs
/// the CPU solver). Never GPROX_CCD_CONTACT.
__host__ __device__ __forceinline__ uint32_t solve(const Problem& p, const Opts& o, double* t_lo,
                                                   double* t_hi) {
  (void)o;
  *t_lo = 0.0;
  *t_hi = 1.0;
  DVec3 lo = splat(INFINITY);
  DVec3 hi = splat(-INFINITY);
  for (int i = 0; i < 2; ++i) {
    DVec3 g[3];
    ghk(p, static_cast<double>(i), g);
    lo = vmin(lo, add(add(g[0], vmin(mul(g[1], 0.0), g[1])), vmin(mul(g[2], 0.0), g[2])));
    hi = vmax(hi, add(add(g[0], vmax(mul(g[1], 0.0), g[1])), vmax(mul(g[2], 0.0), g[2])));
  }
  lo = sub(lo, p.eps);
  hi = add(hi, p.eps);
  const double s = p.sep;
  if (!(lo.x <= s && lo.y <= s && lo.z <= s && hi.x >= -s && hi.y >= -s && hi.z >= -s)) {
    return GPROX_CCD_FREE;
  }
  return GPROX_CCD_UNDECIDED;
}

/// vertex_face_unchecked / edge_edge_unchecked.
__host__ __device__ __forceinline__ uint32_t elementary(bool edge_edge, const DVec3 start[4],
                                                        const DVec3 end[4], const Opts& o,
                                                        double* t_lo, double* t_hi) {
  Problem p;
  problem_new(p, edge_edge, start, end, o.min_separation);
  return solve(p, o, t_lo, t_hi);
}
}  // namespace ccd
}  // namespace gprox
