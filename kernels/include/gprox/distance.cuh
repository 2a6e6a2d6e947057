// Separation distance on the device: the RSS layout of gprox_bvh::rss::Rss, its rigid map and
// cheap lower bound (gprox_bvh::rss), the triangle–triangle distance of
// gprox_geometry::tri_distance mirrored function by function in f64 (same operation order as
// glam, no FMA, so every decided result is bit-identical to the CPU), the device-side minima
// (atomicMin on the ordered bits of non-negative doubles, block reductions), and the state,
// output and params structs of distance.cu. Mirrored by kernels/src/distance/params.rs
// (tests/layout.rs compares layouts).
//
// Exact orientation signs (robust::orient3d on the CPU) go through a static f64 filter; a sign it
// cannot certify makes the pair UNDECIDED and the host finishes it with the exact CPU function.
#pragma once
#include "gprox/common.cuh"
#include "gprox/orient.cuh"
#include "gprox/transform.cuh"

namespace gprox {
namespace dist {

/// gprox_bvh::rss::Rss (120 bytes): glam DMat3 is column-major (axes[0..3] = a0, a1, normal).
struct Rss {
  double center[3];
  double axes[3][3];
  double half_lengths[2];
  double radius;
};

/// Slot value of an unused wide-node slot (gprox_bvh::wide::EMPTY).
#define GPROX_DIST_EMPTY 0xffffffffu
/// Tag of a leaf slot (gprox_bvh::wide::LEAF_BIT).
#define GPROX_DIST_LEAF_BIT 0x80000000u
/// Front entity "root node of the tree" (every other entity is a slot index).
#define GPROX_DIST_ROOT 0xfffffffeu
/// Status of a triangle pair: distance decided on the device.
#define GPROX_DIST_DECIDED 0u
/// Status of a triangle pair: an orientation sign was not certified (host finishes it).
#define GPROX_DIST_UNDECIDED 1u

// ---- f64 vectors with glam's operation order ----
__host__ __device__ __forceinline__ DVec3 v3(double x, double y, double z) { return DVec3{x, y, z}; }
__host__ __device__ __forceinline__ DVec3 add(DVec3 a, DVec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__host__ __device__ __forceinline__ DVec3 sub(DVec3 a, DVec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__host__ __device__ __forceinline__ DVec3 mul(DVec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
__host__ __device__ __forceinline__ double dot(DVec3 a, DVec3 b) { return (a.x * b.x) + (a.y * b.y) + (a.z * b.z); }
__host__ __device__ __forceinline__ DVec3 cross(DVec3 a, DVec3 b) {
  return v3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
}
__host__ __device__ __forceinline__ double clamp01(double x) {
  if (x < 0.0) x = 0.0;
  if (x > 1.0) x = 1.0;
  return x;
}
/// Rust's f64::max (the non-NaN operand).
__host__ __device__ __forceinline__ double max_d(double a, double b) { return (b > a || a != a) ? b : a; }
/// Rust's f64::min (the non-NaN operand).
__host__ __device__ __forceinline__ double min_d(double a, double b) { return (b < a || a != a) ? b : a; }
/// Column `c` of an Rss frame.
__host__ __device__ __forceinline__ DVec3 col(const double m[3][3], int c) { return v3(m[c][0], m[c][1], m[c][2]); }
/// glam `DMat3 * DVec3` (columns m[0..3]): `(c0 x + c1 y) + c2 z`.
__host__ __device__ __forceinline__ DVec3 mat_vec(const double m[3][3], DVec3 v) {
  return add(add(mul(col(m, 0), v.x), mul(col(m, 1), v.y)), mul(col(m, 2), v.z));
}

/// Relative slack of gprox_bvh::rss (SLACK * 4 = 2^-47).
#define GPROX_DIST_SLACK4 (4.0 * 8.0 * 2.220446049250313e-16)

/// Rss::transform_rigid: the image under `x -> q x + t`, grown by `grow`.
__host__ __device__ __forceinline__ Rss transform_rigid(const Rss& r, const double q[3][3], DVec3 t,
                                                       double grow) {
  Rss o;
  const DVec3 c = add(mat_vec(q, v3(r.center[0], r.center[1], r.center[2])), t);
  o.center[0] = c.x;
  o.center[1] = c.y;
  o.center[2] = c.z;
  for (int k = 0; k < 3; ++k) {
    const DVec3 a = mat_vec(q, col(r.axes, k));
    o.axes[k][0] = a.x;
    o.axes[k][1] = a.y;
    o.axes[k][2] = a.z;
  }
  o.half_lengths[0] = r.half_lengths[0];
  o.half_lengths[1] = r.half_lengths[1];
  const double ax = fabs(c.x), ay = fabs(c.y), az = fabs(c.z);
  const double m = ax > (ay > az ? ay : az) ? ax : (ay > az ? ay : az);
  const double scale = ((m + r.half_lengths[0]) + r.half_lengths[1]) + r.radius;
  o.radius = (r.radius + grow) + GPROX_DIST_SLACK4 * scale;
  return o;
}

/// Rss::distance_lower_bound: largest gap over 7 separating axes minus both radii (>= 0).
__host__ __device__ __forceinline__ double rss_lower_bound(const Rss& s, const Rss& o) {
  const DVec3 t = sub(v3(o.center[0], o.center[1], o.center[2]),
                      v3(s.center[0], s.center[1], s.center[2]));
  const DVec3 a0 = col(s.axes, 0), a1 = col(s.axes, 1), na = col(s.axes, 2);
  const DVec3 b0 = col(o.axes, 0), b1 = col(o.axes, 1), nb = col(o.axes, 2);
  const double hax = s.half_lengths[0], hay = s.half_lengths[1];
  const double hbx = o.half_lengths[0], hby = o.half_lengths[1];
  const double a0b0 = dot(a0, b0), a0b1 = dot(a0, b1), a1b0 = dot(a1, b0), a1b1 = dot(a1, b1);
  const double nab0 = dot(na, b0), nab1 = dot(na, b1), nba0 = dot(nb, a0), nba1 = dot(nb, a1);
  const double ta0 = dot(t, a0), ta1 = dot(t, a1), tna = dot(t, na);
  const double tb0 = dot(t, b0), tb1 = dot(t, b1), tnb = dot(t, nb);
  double gap = fabs(tna) - (hbx * fabs(nab0) + hby * fabs(nab1));
  gap = max_d(gap, fabs(tnb) - (hax * fabs(nba0) + hay * fabs(nba1)));
  gap = max_d(gap, fabs(ta0) - hax - (hbx * fabs(a0b0) + hby * fabs(a0b1)));
  gap = max_d(gap, fabs(ta1) - hay - (hbx * fabs(a1b0) + hby * fabs(a1b1)));
  gap = max_d(gap, fabs(tb0) - hbx - (hax * fabs(a0b0) + hay * fabs(a1b0)));
  gap = max_d(gap, fabs(tb1) - hby - (hax * fabs(a0b1) + hay * fabs(a1b1)));
  const double tl = sqrt(dot(t, t));
  if (tl > 0.0) {
    const double ea = hax * fabs(ta0) + hay * fabs(ta1);
    const double eb = hbx * fabs(tb0) + hby * fabs(tb1);
    gap = max_d(gap, tl - (ea + eb) / tl);
  }
  gap = gap - s.radius - o.radius;
  const double scale = (((tl + hax) + hay) + hbx) + hby;
  return max_d(gap - GPROX_DIST_SLACK4 * scale, 0.0);
}

// ---- gprox_geometry::tri_distance, function by function ----

/// DBL_MIN (f64::MIN_POSITIVE).
#define GPROX_DIST_MIN_POSITIVE 2.2250738585072014e-308

/// segment_segment_closest: closest points of [p0, p1] and [q0, q1].
__host__ __device__ __forceinline__ void segment_segment_closest(DVec3 p0, DVec3 p1, DVec3 q0,
                                                                DVec3 q1, DVec3* pp, DVec3* pq) {
  const DVec3 d1 = sub(p1, p0), d2 = sub(q1, q0), r = sub(p0, q0);
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  double s, t;
  if (a <= GPROX_DIST_MIN_POSITIVE && e <= GPROX_DIST_MIN_POSITIVE) {
    s = 0.0;
    t = 0.0;
  } else if (a <= GPROX_DIST_MIN_POSITIVE) {
    s = 0.0;
    t = clamp01(f / e);
  } else {
    const double c = dot(d1, r);
    if (e <= GPROX_DIST_MIN_POSITIVE) {
      t = 0.0;
      s = clamp01(-c / a);
    } else {
      const double b = dot(d1, d2);
      const double denom = a * e - b * b;
      const double s0 = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
      const double t0 = (b * s0 + f) / e;
      if (t0 < 0.0) {
        t = 0.0;
        s = clamp01(-c / a);
      } else if (t0 > 1.0) {
        t = 1.0;
        s = clamp01((b - c) / a);
      } else {
        t = t0;
        s = s0;
      }
    }
  }
  *pp = add(p0, mul(d1, s));
  *pq = add(q0, mul(d2, t));
}

/// face_projection: projection of `p` into the closed triangle, false when outside or flat
/// (FacePlane::new then FacePlane::project: the barycentric weights of t[2] and t[1], times
/// `n2`, are `w · (n × e0)` and `w · (e1 × n)`, in that operation order).
__host__ __device__ __forceinline__ bool face_projection(DVec3 p, const DVec3 t[3], DVec3* out) {
  const DVec3 e0 = sub(t[1], t[0]), e1 = sub(t[2], t[0]);
  const DVec3 n = cross(e0, e1);
  const double n2 = dot(n, n);
  if (!(n2 > GPROX_DIST_MIN_POSITIVE)) return false;
  const DVec3 w = sub(p, t[0]);
  const double c1 = dot(w, cross(n, e0));
  const double c2 = dot(w, cross(e1, n));
  const double c0 = n2 - c1 - c2;
  if (c0 < 0.0 || c1 < 0.0 || c2 < 0.0) return false;
  *out = sub(p, mul(n, dot(w, n) / n2));
  return true;
}

/// closest_on_segment: closest point of the segment [a, b] to `p` (robust for a == b).
__host__ __device__ __forceinline__ DVec3 closest_on_segment(DVec3 p, DVec3 a, DVec3 b) {
  const DVec3 d = sub(b, a);
  const double l2 = dot(d, d);
  if (l2 <= GPROX_DIST_MIN_POSITIVE) return a;
  return add(a, mul(d, clamp01(dot(sub(p, a), d) / l2)));
}

/// point_triangle_distance: distance from `p` to the closed triangle `t`, closest point in `q`.
__host__ __device__ __forceinline__ double point_triangle_distance(DVec3 p, const DVec3 t[3], DVec3* q) {
  DVec3 f;
  if (face_projection(p, t, &f)) {
    const DVec3 d = sub(p, f);
    *q = f;
    return sqrt(dot(d, d));
  }
  double best = INFINITY;
  DVec3 bq = t[0];
  for (int i = 0; i < 3; ++i) {
    const DVec3 c = closest_on_segment(p, t[i], t[(i + 1) % 3]);
    const DVec3 d = sub(p, c);
    const double d2 = dot(d, d);
    if (d2 < best) {
      best = d2;
      bq = c;
    }
  }
  *q = bq;
  return sqrt(best);
}

/// An orientation sign the filter could not certify (see orient.cuh).
#define GPROX_DIST_UNKNOWN GPROX_SIGN_UNKNOWN

/// Outcome of crossing_point on the device.
#define GPROX_CROSS_NONE 0
#define GPROX_CROSS_FOUND 1
#define GPROX_CROSS_UNKNOWN 2

/// segment_crosses_triangle with certified signs `sp`, `sq` (values `vp`, `vq`).
__host__ __device__ __forceinline__ int segment_crosses_triangle(DVec3 p, DVec3 q, const DVec3 t[3],
                                                                int sp, int sq, double vp,
                                                                double vq, DVec3* x) {
  if ((sp > 0 && sq > 0) || (sp < 0 && sq < 0)) return GPROX_CROSS_NONE;
  int u[3];
  orient3d_filtered(p, q, t[0], t[1], &u[0]);
  orient3d_filtered(p, q, t[1], t[2], &u[1]);
  orient3d_filtered(p, q, t[2], t[0], &u[2]);
  bool pos = false, neg = false, unknown = false;
  for (int i = 0; i < 3; ++i) {
    pos = pos || u[i] == 1;
    neg = neg || u[i] == -1;
    unknown = unknown || u[i] == GPROX_DIST_UNKNOWN;
  }
  if (pos && neg) return GPROX_CROSS_NONE;
  if (unknown) return GPROX_CROSS_UNKNOWN;
  const double s = clamp01(vp / (vp - vq));
  *x = add(p, mul(sub(q, p), s));
  return GPROX_CROSS_FOUND;
}

/// crossing_point: a proper crossing of the triangles (certified), none, or UNKNOWN.
__host__ __device__ __forceinline__ int crossing_point(const DVec3 a[3], const DVec3 b[3], DVec3* x) {
  int sa[3], sb[3];
  double va[3], vb[3];
  bool unknown = false;
  for (int i = 0; i < 3; ++i) {
    va[i] = orient3d_filtered(b[0], b[1], b[2], a[i], &sa[i]);
    unknown = unknown || sa[i] == GPROX_DIST_UNKNOWN;
  }
  if (unknown) return GPROX_CROSS_UNKNOWN;
  if ((sa[0] > 0 && sa[1] > 0 && sa[2] > 0) || (sa[0] < 0 && sa[1] < 0 && sa[2] < 0)) {
    return GPROX_CROSS_NONE;
  }
  for (int i = 0; i < 3; ++i) {
    vb[i] = orient3d_filtered(a[0], a[1], a[2], b[i], &sb[i]);
    unknown = unknown || sb[i] == GPROX_DIST_UNKNOWN;
  }
  if (unknown) return GPROX_CROSS_UNKNOWN;
  if ((sb[0] > 0 && sb[1] > 0 && sb[2] > 0) || (sb[0] < 0 && sb[1] < 0 && sb[2] < 0)) {
    return GPROX_CROSS_NONE;
  }
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3;
    int r = segment_crosses_triangle(a[i], a[j], b, sa[i], sa[j], va[i], va[j], x);
    if (r != GPROX_CROSS_NONE) return r;
    r = segment_crosses_triangle(b[i], b[j], a, sb[i], sb[j], vb[i], vb[j], x);
    if (r != GPROX_CROSS_NONE) return r;
  }
  return GPROX_CROSS_NONE;
}

/// triangle_distance: distance and closest points; returns GPROX_DIST_UNDECIDED when the CPU's
/// answer depends on an exact sign the filter could not certify (crossing or touching test).
__host__ __device__ __forceinline__ uint32_t triangle_distance(const DVec3 a[3], const DVec3 b[3],
                                                              double* distance, DVec3* pa,
                                                              DVec3* pb) {
  double best = INFINITY;
  DVec3 ba = a[0], bb = b[0];
  for (int i = 0; i < 3; ++i) {
    const DVec3 a0 = a[i], a1 = a[(i + 1) % 3];
    for (int j = 0; j < 3; ++j) {
      DVec3 p, q;
      segment_segment_closest(a0, a1, b[j], b[(j + 1) % 3], &p, &q);
      const DVec3 d = sub(p, q);
      const double d2 = dot(d, d);
      if (d2 < best) {
        best = d2;
        ba = p;
        bb = q;
      }
    }
  }
  // 6 vertex-face pairs (the CPU sets each plane up once; the same bits).
  for (int i = 0; i < 3; ++i) {
    DVec3 q;
    if (face_projection(a[i], b, &q)) {
      const DVec3 d = sub(a[i], q);
      const double d2 = dot(d, d);
      if (d2 < best) {
        best = d2;
        ba = a[i];
        bb = q;
      }
    }
  }
  for (int i = 0; i < 3; ++i) {
    DVec3 q;
    if (face_projection(b[i], a, &q)) {
      const DVec3 d = sub(b[i], q);
      const double d2 = dot(d, d);
      if (d2 < best) {
        best = d2;
        ba = q;
        bb = b[i];
      }
    }
  }
  if (best > 0.0) {
    DVec3 x;
    const int c = crossing_point(a, b, &x);
    if (c == GPROX_CROSS_UNKNOWN) return GPROX_DIST_UNDECIDED;
    if (c == GPROX_CROSS_FOUND) {
      *distance = 0.0;
      *pa = x;
      *pb = x;
      return GPROX_DIST_DECIDED;
    }
    double scale = 0.0;
    for (int i = 0; i < 6; ++i) {
      const DVec3 p = i < 3 ? a[i] : b[i - 3];
      const double ax = fabs(p.x), ay = fabs(p.y), az = fabs(p.z);
      const double m = ax > (ay > az ? ay : az) ? ax : (ay > az ? ay : az);
      scale = max_d(scale, m);
    }
    // Touching up to rounding: the CPU asks the exact intersection test.
    if (best <= (1e-12 * scale) * (1e-12 * scale)) return GPROX_DIST_UNDECIDED;
  }
  const DVec3 d = sub(ba, bb);
  *distance = sqrt(dot(d, d));
  *pa = ba;
  *pb = bb;
  return GPROX_DIST_DECIDED;
}

// ---- device-side minima: ordered bits of non-negative doubles ----

/// Ordered bits of +infinity (the empty minimum).
#define GPROX_DIST_INF_BITS 0x7ff0000000000000ull
/// No pair yet (DistanceState::pair).
#define GPROX_DIST_NO_PAIR 0xffffffffffffffffull

/// The bits of `d + 0.0` (so -0 counts as +0): for d >= 0 (and +inf) the u64 bit patterns order
/// like the values; NaN maps above +inf and never wins a minimum.
__device__ __forceinline__ uint64_t key(double d) {
  const double z = d + 0.0;
#ifdef __CUDACC__
  return static_cast<uint64_t>(__double_as_longlong(z));
#else
  uint64_t u;
  memcpy(&u, &z, sizeof u);
  return u;
#endif
}
/// The double behind `key`.
__device__ __forceinline__ double from_key(uint64_t u) {
#ifdef __CUDACC__
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
#endif
}
/// Face pair as one u64: (face a, face b) in lexicographic order.
__device__ __forceinline__ uint64_t pair_key(uint32_t fa, uint32_t fb) {
  return (static_cast<uint64_t>(fa) << 32) | fb;
}

/// atomicMin on a u64.
__device__ __forceinline__ void atomic_min_u64(uint64_t* p, uint64_t v) {
#ifdef __CUDACC__
  atomicMin(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  uint64_t old = GPROX_DIST_NO_PAIR;
  while (v < old) {
    const uint64_t seen = atomicCAS(p, old, v);
    if (seen == old) break;
    old = seen;
  }
#endif
}

/// Minimum of `v` over the block (blockDim.x a power of two, every thread calls); `sh` holds
/// blockDim.x entries.
__device__ __forceinline__ uint64_t block_min(uint64_t v, uint64_t* sh) {
  const uint32_t t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride && sh[t + stride] < sh[t]) sh[t] = sh[t + stride];
    __syncthreads();
  }
  const uint64_t r = sh[0];
  __syncthreads();
  return r;
}
}  // namespace dist

// ---- state, output and params of distance.cu (mirrored by kernels/src/distance/params.rs) ----

/// DistanceState::status: levels still to run.
#define GPROX_DIST_RUNNING 0u
/// DistanceState::status: the traversal is over (front empty, or early stop below threshold).
#define GPROX_DIST_DONE 1u
/// DistanceState::status: a buffer was too small (the counters say how large it must be); the
/// host grows the buffers and reruns.
#define GPROX_DIST_OVERFLOW 2u

/// One side of a distance traversal on the device.
struct DistanceTree {
  uint64_t children;   ///< const uint32_t[8 * nodes]: wide node, LEAF_BIT | face, or EMPTY
  uint64_t bvs;        ///< const dist::Rss[8 * nodes]: volume of each slot (model frame)
  uint64_t reps;       ///< const uint32_t[8 * nodes]: a face below each slot (its corner 0 is
                       ///< the slot's representative point)
  uint64_t positions;  ///< const float[3 * vertices]
  uint64_t faces;      ///< const uint32_t[3 * faces]
};

/// A query's state on the device: minima as ordered bits (dist::key), counters that count past
/// their buffers' capacities, and the status every later launch checks first.
struct DistanceState {
  uint64_t best;         ///< key of the smallest decided triangle distance
  uint64_t pair;         ///< dist::pair_key of the smallest (face a, face b) at `pair_d`
  uint64_t pair_d;       ///< the distance key `pair` belongs to
  uint64_t rep_bound;    ///< key of the smallest representative upper bound so far
  uint64_t lower;        ///< key of the smallest bound of a pruned pair
  uint64_t level_lower;  ///< key of the smallest bound of this level's child pairs
  uint64_t child_pairs;  ///< child pairs bounded (statistics)
  uint64_t leaf_pairs;   ///< triangle pairs evaluated (statistics)
  uint32_t front_count;  ///< pairs of the current front
  uint32_t next_count;   ///< pairs pushed to the next front (past its capacity too)
  uint32_t leaf_count;   ///< leaf pairs of this level (past the capacity too)
  uint32_t host_count;   ///< pairs left to the host (past the capacity too)
  uint32_t status;       ///< GPROX_DIST_RUNNING / DONE / OVERFLOW
  uint32_t levels;       ///< levels completed
  uint32_t need_front;   ///< next-front pairs the overflowing level needed
  uint32_t need_leaves;  ///< leaf pairs the overflowing level needed
};

/// What a batch of levels hands back (host-mapped memory, written by gprox_distance_finish).
struct DistanceOut {
  double distance;       ///< smallest decided distance (INFINITY: none)
  double lower;          ///< smallest pruned bound (INFINITY: none)
  double point_a[3];     ///< closest point on face a (world)
  double point_b[3];     ///< closest point on face b (world)
  uint32_t tri_a;        ///< face of A (0xffffffff: none)
  uint32_t tri_b;        ///< face of B
  uint32_t status;       ///< DistanceState::status
  uint32_t levels;
  uint32_t need_front;
  uint32_t need_leaves;
  uint32_t host_count;   ///< pairs in the host list (past its capacity too)
  uint32_t pad;
  uint64_t child_pairs;
  uint64_t leaf_pairs;
};

/// Every distance kernel's params: the query and the buffers of one level (front and next swap
/// between levels).
struct DistanceQueryParams {
  Pose64 pose_a;
  Pose64 pose_b;
  DistanceTree a;
  DistanceTree b;
  double q[3][3];           ///< B-model -> A-model rotation (columns)
  double t[3];              ///< B-model -> A-model translation
  double grow;              ///< growth of B's mapped volumes
  double sigma;             ///< A-model distances times sigma are world lower bounds
  double abs_tol;           ///< cut(u) = min(u - max(abs_tol, rel_tol u), threshold)
  double rel_tol;
  double threshold;         ///< INFINITY without a threshold
  uint64_t state;           ///< DistanceState*
  uint64_t front;           ///< const uint32_t[2 * front_capacity]: this level's entity pairs
  uint64_t next;            ///< uint32_t[2 * front_capacity] (out): the next level's
  uint64_t lower;           ///< double[64 * front_capacity]: child pairs' lower bounds
  uint64_t leaves;          ///< uint32_t[2 * leaf_capacity]: this level's (face a, face b)
  uint64_t leaf_d;          ///< double[leaf_capacity]: their distances (INFINITY: undecided)
  uint64_t host;            ///< uint32_t[2 * host_capacity] (host-mapped): pairs for the host
  uint64_t out;             ///< DistanceOut* (host-mapped)
  uint32_t front_capacity;  ///< pairs of `front` and `next` (below 2^25)
  uint32_t leaf_capacity;   ///< at most 2^31
  uint32_t host_capacity;   ///< at most 2^31
  uint32_t has_threshold;   ///< 1: stop after the first level with a distance below threshold
};

/// gprox_distance_min: per-block minimum with argmin (ties: smallest index).
struct DistanceMinParams {
  uint64_t values;       ///< const double[count]
  uint64_t indices;      ///< const uint32_t[count], or 0 for the identity
  uint64_t out_values;   ///< double[blocks] (out)
  uint64_t out_indices;  ///< uint32_t[blocks] (out)
  uint32_t count;
  uint32_t pad;
};
}  // namespace gprox
