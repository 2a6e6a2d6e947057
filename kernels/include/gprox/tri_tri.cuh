// Filtered triangle-pair test (device side), shared by the triangle-pair kernel (tri_pair.cu)
// and the early-out traversal (balance.cu).
//
// World corners through transform.cuh (f64, bit-identical to the CPU), a conservative f32 plane-side filter that may only reject provably separated
// pairs, then the orientation-sign algorithm of gprox_geometry::tri_tri mirrored function by
// function (plane_sides, strictly_one_side, apex, rotate, crossing_case) in f64, each orient3d
// behind a static error-bound filter. A sign the filter cannot certify is UNKNOWN, and any answer
// that depends on one is UNDECIDED: the host finishes those pairs with the exact
// gprox_geometry::tri_tri::triangles_intersect (which also owns the degenerate and coplanar
// cases, whose zero signs a filter never certifies).
#pragma once
#include "gprox/common.cuh"
#include "gprox/orient.cuh"
#include "gprox/params.cuh"
#include "gprox/transform.cuh"

namespace gprox {

/// Certified sign of orient3d(a, b, c, d) = det[a - d; b - d; c - d] from f32 arithmetic, or
/// UNKNOWN. The differences are taken in f64 and rounded to f32 (relative error <= 2^-24 each,
/// so <= ~3 * 2^-24 * permanent on the determinant), then the determinant in f32 (Shewchuk's
/// 7 * 2^-24 * permanent): 16 * 2^-24 * permanent bounds both. Entries outside [1e-12, 1e12]
/// (other than exact zeros) could under- or overflow in f32: UNKNOWN.
__device__ __forceinline__ int orient3d_f32(const DVec3& a, const DVec3& b, const DVec3& c,
                                            const DVec3& d) {
  const double e[9] = {a.x - d.x, a.y - d.y, a.z - d.z, b.x - d.x, b.y - d.y,
                       b.z - d.z, c.x - d.x, c.y - d.y, c.z - d.z};
  float f[9];
  for (int i = 0; i < 9; ++i) {
    const double m = fabs(e[i]);
    if (m != 0.0 && !(m >= 1e-12 && m <= 1e12)) return GPROX_SIGN_UNKNOWN;
    f[i] = static_cast<float>(e[i]);
  }
  const float adx = f[0], ady = f[1], adz = f[2], bdx = f[3], bdy = f[4], bdz = f[5];
  const float cdx = f[6], cdy = f[7], cdz = f[8];
  const float bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
  const float cdxady = cdx * ady, adxcdy = adx * cdy;
  const float adxbdy = adx * bdy, bdxady = bdx * ady;
  const float det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
  const float perm = (fabsf(bdxcdy) + fabsf(cdxbdy)) * fabsf(adz) +
                     (fabsf(cdxady) + fabsf(adxcdy)) * fabsf(bdz) +
                     (fabsf(adxbdy) + fabsf(bdxady)) * fabsf(cdz);
  const float bound = perm * 9.5367431640625e-07f;  // 16 * 2^-24
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return GPROX_SIGN_UNKNOWN;
}

/// Certified sign of orient3d(a, b, c, d) in f64 (the filter of orient.cuh), or UNKNOWN.
/// Never certifies zero.
__device__ __forceinline__ int orient3d_f64(const DVec3& a, const DVec3& b, const DVec3& c,
                                            const DVec3& d) {
  int sign;
  orient3d_filtered(a, b, c, d, &sign);
  return sign;
}

/// tri_tri::plane_sides with certified (or UNKNOWN) signs; `f32` picks the f32 filter.
__device__ __forceinline__ void plane_sides(const DVec3 t[3], const DVec3 pts[3], bool f32,
                                            int out[3]) {
  for (int i = 0; i < 3; ++i) {
    out[i] = f32 ? orient3d_f32(t[0], t[1], t[2], pts[i]) : orient3d_f64(t[0], t[1], t[2], pts[i]);
  }
}

/// tri_tri::strictly_one_side, true only when all three signs are certified and equal.
__device__ __forceinline__ bool strictly_one_side(const int s[3]) {
  return s[0] != 0 && s[0] != GPROX_SIGN_UNKNOWN && s[0] == s[1] && s[1] == s[2];
}

/// tri_tri::apex (signs all certified): the corner alone on its side and whether the other
/// triangle is flipped.
__device__ __forceinline__ void apex(const int s[3], int* index, bool* flip) {
  int neg = 0, pos = 0, first_neg = 0, first_pos = 0, first_zero = 0;
  bool seen_neg = false, seen_pos = false, seen_zero = false;
  for (int i = 0; i < 3; ++i) {
    if (s[i] < 0) {
      ++neg;
      if (!seen_neg) first_neg = i;
      seen_neg = true;
    } else if (s[i] > 0) {
      ++pos;
      if (!seen_pos) first_pos = i;
      seen_pos = true;
    } else {
      if (!seen_zero) first_zero = i;
      seen_zero = true;
    }
  }
  if (neg == 1) {
    *index = first_neg;
    *flip = false;
  } else if (pos == 1) {
    *index = first_pos;
    *flip = true;
  } else {
    *index = first_zero;
    *flip = s[(first_zero + 1) % 3] < 0;
  }
}

/// tri_tri::rotate: corners from `first`, last two swapped when `flip`.
__device__ __forceinline__ void rotate(const DVec3 t[3], int first, bool flip, DVec3 out[3]) {
  out[0] = t[first];
  out[1] = t[(first + (flip ? 2 : 1)) % 3];
  out[2] = t[(first + (flip ? 1 : 2)) % 3];
}

/// tri_tri::crossing_case: `orient3d(a, b, d, e) >= 0 && orient3d(a, c, d, f) <= 0`, decided
/// when both signs are certified or one certified sign already makes it false.
__device__ __forceinline__ uint32_t crossing_case(const DVec3 p[3], const DVec3 q[3],
                                                  const int sp[3], const int sq[3]) {
  int ia, id;
  bool flip_q, flip_p;
  apex(sp, &ia, &flip_q);
  apex(sq, &id, &flip_p);
  DVec3 r[3], s[3];
  rotate(p, ia, flip_p, r);
  rotate(q, id, flip_q, s);
  const int s1 = orient3d_f64(r[0], r[1], s[0], s[1]);
  const int s2 = orient3d_f64(r[0], r[2], s[0], s[2]);
  if ((s1 != GPROX_SIGN_UNKNOWN && s1 < 0) || (s2 != GPROX_SIGN_UNKNOWN && s2 > 0)) {
    return GPROX_TRI_SEPARATE;
  }
  if (s1 != GPROX_SIGN_UNKNOWN && s2 != GPROX_SIGN_UNKNOWN) return GPROX_TRI_INTERSECT;
  return GPROX_TRI_UNDECIDED;
}

/// tri_tri::triangles_intersect with filtered signs: SEPARATE, INTERSECT or UNDECIDED.
__device__ __forceinline__ uint32_t triangles_intersect(const DVec3 p[3], const DVec3 q[3]) {
  int sq[3], sp[3];
  // f32 filter: may only reject.
  plane_sides(p, q, true, sq);
  if (strictly_one_side(sq)) return GPROX_TRI_SEPARATE;
  plane_sides(q, p, true, sp);
  if (strictly_one_side(sp)) return GPROX_TRI_SEPARATE;
  // f64 with per-orientation filters.
  plane_sides(p, q, false, sq);
  if (strictly_one_side(sq)) return GPROX_TRI_SEPARATE;
  plane_sides(q, p, false, sp);
  if (strictly_one_side(sp)) return GPROX_TRI_SEPARATE;
  for (int i = 0; i < 3; ++i) {
    if (sq[i] == GPROX_SIGN_UNKNOWN || sp[i] == GPROX_SIGN_UNKNOWN) return GPROX_TRI_UNDECIDED;
  }
  // Certified signs are never zero, so neither triangle is flat here: the crossing case.
  return crossing_case(p, q, sp, sq);
}
}  // namespace gprox

