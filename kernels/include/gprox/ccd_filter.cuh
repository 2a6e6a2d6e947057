// Elementary CCD on the device, part two: gprox_query::ccd's certified pre-filters (filter.rs)
// and the feature expansion of a candidate face pair (candidates.rs), mirrored function by
// function on top of the layouts, scalar helpers and inclusion solver of ccd.cuh (see there for
// the rules that keep every device answer bit-identical to the CPU's).
#pragma once
#include "gprox/ccd.cuh"

namespace gprox {
namespace ccd {

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
