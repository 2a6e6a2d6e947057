// Mirror of crates/query/src/penetration/inside.rs: the crossing of the symbolically perturbed
// axis-parallel line with a face (`crossing`, `side`), with the exact orient2d signs replaced by
// a certified filter (`orient2d_sign`): a sign the filter cannot certify makes the answer
// GPROX_SIGN_UNKNOWN and the caller leaves its column to the host's exact classification.
#pragma once

#include "gprox/orient.cuh"

namespace gprox {
/// A projected point (`project(p, k)` = `(p[k + 1], p[k + 2])`, indices mod 3).
struct DVec2 {
  double x, y;
};

/// `(x - y)` is exact (the error term of TwoDiff is zero).
__host__ __device__ __forceinline__ bool diff_exact(double a, double b) {
  const double x = a - b;
  const double bv = a - x;
  const double av = x + bv;
  return (a - av) + (bv - b) == 0.0;
}

/// `p = x * y` is exact and free of underflow (a zero only from a zero factor).
__host__ __device__ __forceinline__ bool product_exact(double x, double y, double p) {
  if (p == 0.0) return x == 0.0 || y == 0.0;
  return fabs(p) >= 1e-280 && fma(x, y, -p) == 0.0;
}

/// Sign of orient2d(a, b, c) = (a - c) x (b - c), certified: -1, 0, 1, or GPROX_SIGN_UNKNOWN.
/// The branches of Shewchuk's orient2d (robust::orient2d) up to its error bound; below it, the
/// computed value is still exact when every difference and both products are (then 0 is a
/// certified 0), else the sign is unknown.
__host__ __device__ __forceinline__ int orient2d_sign(DVec2 a, DVec2 b, DVec2 c) {
  const double acx = a.x - c.x, bcy = b.y - c.y, acy = a.y - c.y, bcx = b.x - c.x;
  const double detleft = acx * bcy;
  const double detright = acy * bcx;
  const double det = detleft - detright;
  const int s = det > 0.0 ? 1 : (det < 0.0 ? -1 : 0);
  // Products below this may have underflowed: their signs prove nothing.
  const double tiny = 1e-280;
  const bool small = (detleft != 0.0 && fabs(detleft) < tiny) || (detright != 0.0 && fabs(detright) < tiny);
  if (!small) {
    double detsum;
    if (detleft > 0.0) {
      if (detright <= 0.0) return s;
      detsum = detleft + detright;
    } else if (detleft < 0.0) {
      if (detright >= 0.0) return s;
      detsum = -detleft - detright;
    } else {
      // detleft is exactly 0 (a difference is 0): det = -detright has the exact sign (0 only
      // from a zero difference, not from an underflow).
      if ((acx == 0.0 || bcy == 0.0) && (detright != 0.0 || acy == 0.0 || bcx == 0.0)) return s;
      return GPROX_SIGN_UNKNOWN;
    }
    const double bound = detsum * 3.3306690738754716e-16;  // (3 + 16 eps) eps, robust's ccwerrboundA
    if (det > bound || -det > bound) return s;
  }
  const bool exact = diff_exact(a.x, c.x) && diff_exact(b.y, c.y) && diff_exact(a.y, c.y) &&
                     diff_exact(b.x, c.x) && product_exact(acx, bcy, detleft) &&
                     product_exact(acy, bcx, detright);
  return exact ? s : GPROX_SIGN_UNKNOWN;
}

/// Sign of `orient2d(a, b, p_eps)` for the perturbed point (inside.rs `side`): never 0 for
/// `a != b`; GPROX_SIGN_UNKNOWN when the filter cannot certify orient2d(a, b, p).
__host__ __device__ __forceinline__ int side(DVec2 a, DVec2 b, DVec2 p) {
  const int o = orient2d_sign(a, b, p);
  if (o != 0) return o;
  if (a.y != b.y) return a.y > b.y ? 1 : -1;
  return b.x > a.x ? 1 : (b.x < a.x ? -1 : 0);
}

/// Coordinate `a` (0, 1, 2) of `q`.
__host__ __device__ __forceinline__ double component(const DVec3& q, int a) {
  return a == 0 ? q.x : (a == 1 ? q.y : q.z);
}

/// `project(q, k)`: the coordinates `(q[k + 1], q[k + 2])`.
__host__ __device__ __forceinline__ DVec2 project(const DVec3& q, int k) {
  return DVec2{component(q, (k + 1) % 3), component(q, (k + 2) % 3)};
}

/// inside.rs `crossing`: the crossing of the perturbed line through `pp` (`p` projected along
/// `k`) with face `t`, for a ray along `dir * e_k`: 0 when the line misses it (or the face
/// contains the ray direction), else the winding contribution +-1; GPROX_SIGN_UNKNOWN when a
/// sign it needs is not certified. `&&` short-circuits as in Rust: a sign never evaluated there
/// is never needed here.
__host__ __device__ __forceinline__ int crossing(const DVec3 t[3], int k, DVec2 pp, int dir) {
  const DVec2 a = project(t[0], k), b = project(t[1], k), c = project(t[2], k);
  const int sigma = orient2d_sign(a, b, c);
  if (sigma == GPROX_SIGN_UNKNOWN) return GPROX_SIGN_UNKNOWN;
  if (sigma == 0) return 0;
  const DVec2 e[3][2] = {{a, b}, {b, c}, {c, a}};
  bool inside = true;
  for (int i = 0; i < 3 && inside; ++i) {
    const int s = side(e[i][0], e[i][1], pp);
    if (s == GPROX_SIGN_UNKNOWN) return GPROX_SIGN_UNKNOWN;
    inside = sigma > 0 ? s > 0 : s < 0;
  }
  if (!inside) return 0;
  return sigma > 0 ? dir : -dir;
}
}  // namespace gprox
