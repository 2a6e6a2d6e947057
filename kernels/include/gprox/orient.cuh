// Filtered f64 orientation predicate shared by the triangle-pair and distance kernels.
#pragma once

#include "gprox/common.cuh"
#include "gprox/transform.cuh"

/// An orientation sign the filter could not certify.
#define GPROX_SIGN_UNKNOWN 2

namespace gprox {

/// orient3d(a, b, c, d) when its sign is certified (Shewchuk's fast expression, the bound
/// 8 * 2^-53 * permanent >= robust's errboundA, plus 1e-280 for underflow): then robust::orient3d
/// returns exactly this value. `*sign` is 1, -1 or UNKNOWN (never a certified 0).
__host__ __device__ __forceinline__ double orient3d_filtered(DVec3 a, DVec3 b, DVec3 c, DVec3 d,
                                                            int* sign) {
  const double adx = a.x - d.x, bdx = b.x - d.x, cdx = c.x - d.x;
  const double ady = a.y - d.y, bdy = b.y - d.y, cdy = c.y - d.y;
  const double adz = a.z - d.z, bdz = b.z - d.z, cdz = c.z - d.z;
  const double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
  const double cdxady = cdx * ady, adxcdy = adx * cdy;
  const double adxbdy = adx * bdy, bdxady = bdx * ady;
  const double det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
  const double perm = (fabs(bdxcdy) + fabs(cdxbdy)) * fabs(adz) +
                      (fabs(cdxady) + fabs(adxcdy)) * fabs(bdz) +
                      (fabs(adxbdy) + fabs(bdxady)) * fabs(cdz);
  const double bound = perm * 8.8817841970012523e-16 + 1e-280;  // 8 * 2^-53
  *sign = det > bound ? 1 : (det < -bound ? -1 : GPROX_SIGN_UNKNOWN);
  return det;
}

}  // namespace gprox
