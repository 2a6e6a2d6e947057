// Elementary CCD tests on the device (gprox/ccd.cuh, the CPU's gprox_query::ccd mirrored):
//
// * gprox_ccd_elementary: one vertex–face or edge–edge query per element (what
//   gprox_query::ccd::{vertex_face_toi, edge_edge_toi} compute), grid-stride.
// * gprox_ccd_pairs: the narrow phase of a CCD traversal, run on the leaf pairs it left on the
//   device (count read there, grid-stride): each face pair expanded into its feature pairs as
//   gprox_query::ccd::ccd_candidates does (feature ownership, self/pair jobs, canonical point
//   order), the shared projection filter, the per-feature filters, the solver; contacts and
//   undecided feature pairs are compacted into host-mapped memory.
// * gprox_ccd_header: the counters in front of the records, then reset for the next query.
#include "gprox/ccd_filter.cuh"
#include "gprox/common.cuh"
#include "gprox/params.cuh"

using namespace gprox;

GPROX_KERNEL(gprox_ccd_elementary, CcdElementaryParams) {
  const CcdQuery* queries = dev_ptr<const CcdQuery>(p.queries);
  CcdResult* results = dev_ptr<CcdResult>(p.results);
  const ccd::Opts o{p.tolerance, p.min_separation, p.max_time_width, p.max_checks};
  for (uint32_t i = global_thread(); i < p.count; i += gridDim.x * blockDim.x) {
    const CcdQuery& q = queries[i];
    DVec3 start[4], end[4];
    for (int k = 0; k < 4; ++k) {
      start[k] = ccd::v3(q.start[k][0], q.start[k][1], q.start[k][2]);
      end[k] = ccd::v3(q.end[k][0], q.end[k][1], q.end[k][2]);
    }
    CcdResult r;
    r.t_lo = 0.0;
    r.t_hi = 0.0;
    r.pad = 0;
    r.status = ccd::elementary(q.kind == GPROX_CCD_EDGE_EDGE, start, end, o, &r.t_lo, &r.t_hi);
    results[i] = r;
  }
}
GPROX_KERNEL_EXPORT(gprox_ccd_elementary, CcdElementaryParams)

namespace {

/// Next corner of a triangle (edge k runs from corner k to corner NEXT[k]).
__device__ __forceinline__ uint8_t next_corner(uint8_t k) { return k == 2 ? 0 : k + 1; }

/// The jobs of one face pair: corner slots (k < 3: corner k of the first face, 3 + k: of the
/// second) and the split (1: vertex–face, 2: edge–edge).
struct Jobs {
  uint8_t slots[15][4];
  uint8_t split[15];
  uint32_t len;
};

__device__ __forceinline__ void push_if(Jobs& j, uint8_t s0, uint8_t s1, uint8_t s2, uint8_t s3,
                                        uint8_t split, bool keep) {
  j.slots[j.len][0] = s0;
  j.slots[j.len][1] = s1;
  j.slots[j.len][2] = s2;
  j.slots[j.len][3] = s3;
  j.split[j.len] = split;
  j.len += keep ? 1u : 0u;
}

__device__ __forceinline__ DVec3 point(const float* pos, uint32_t v) {
  const float* x = pos + 3 * static_cast<size_t>(v);
  return ccd::v3(x[0], x[1], x[2]);
}

/// The narrow phase of candidate pair (fa, fb) (candidates.rs: Narrow::pair, FacePair).
__device__ GPROX_NOINLINE void face_pair(const CcdPairsParams& p, uint32_t fa, uint32_t fb,
                                         uint32_t* tests, uint32_t* undecided) {
  const bool same = p.same != 0;
  if (same && fa == fb) return;
  const uint32_t* faces_a = dev_ptr<const uint32_t>(p.a_faces);
  const uint32_t* faces_b = dev_ptr<const uint32_t>(p.b_faces);
  const uint32_t f[2] = {fa, fb};
  uint32_t c[6];
  for (int k = 0; k < 3; ++k) {
    c[k] = faces_a[3 * static_cast<size_t>(fa) + k];
    c[3 + k] = faces_b[3 * static_cast<size_t>(fb) + k];
  }
  const uint8_t owned_a = dev_ptr<const uint8_t>(p.a_owned)[fa];
  const uint8_t owned_b = dev_ptr<const uint8_t>(p.b_owned)[fb];
  const uint8_t ov[2] = {static_cast<uint8_t>(owned_a & 7u), static_cast<uint8_t>(owned_b & 7u)};
  const uint8_t oe[2] = {static_cast<uint8_t>((owned_a >> 3) & 7u),
                         static_cast<uint8_t>((owned_b >> 3) & 7u)};
  // may_have_jobs
  if (!(((ov[0] | ov[1]) != 0) | ((oe[0] != 0) & (oe[1] != 0)))) return;
  Jobs jobs;
  jobs.len = 0;
  if (same) {
    // self_jobs
    for (int side = 0; side < 2; ++side) {
      const uint8_t o = static_cast<uint8_t>(3 * (1 - side));
      for (int k = 0; k < 3; ++k) {
        const uint8_t s = static_cast<uint8_t>(3 * side + k);
        const uint32_t v = c[s];
        const bool keep = ((ov[side] >> k) & 1) != 0 && v != c[o] && v != c[o + 1] && v != c[o + 2];
        push_if(jobs, s, o, o + 1, o + 2, 1, keep);
      }
    }
    if (oe[0] != 0 && oe[1] != 0) {
      for (uint8_t ka = 0; ka < 3; ++ka) {
        const uint8_t ea0 = ka, ea1 = next_corner(ka);
        const uint32_t va0 = c[ea0], va1 = c[ea1];
        for (uint8_t kb = 0; kb < 3; ++kb) {
          const uint8_t eb0 = 3 + kb, eb1 = 3 + next_corner(kb);
          const uint32_t vb0 = c[eb0], vb1 = c[eb1];
          const bool keep = (((oe[0] >> ka) & (oe[1] >> kb) & 1) != 0) && va0 != vb0 &&
                            va0 != vb1 && va1 != vb0 && va1 != vb1;
          push_if(jobs, ea0, ea1, eb0, eb1, 2, keep);
        }
      }
    }
  } else {
    // pair_jobs
    for (int side = 0; side < 2; ++side) {
      const uint8_t o = static_cast<uint8_t>(3 * (1 - side));
      for (int k = 0; k < 3; ++k) {
        if (((ov[side] >> k) & 1) == 0) continue;
        push_if(jobs, static_cast<uint8_t>(3 * side + k), o, o + 1, o + 2, 1, true);
      }
    }
    if (oe[0] != 0 && oe[1] != 0) {
      for (uint8_t ka = 0; ka < 3; ++ka) {
        if (((oe[0] >> ka) & 1) == 0) continue;
        for (uint8_t kb = 0; kb < 3; ++kb) {
          if (((oe[1] >> kb) & 1) == 0) continue;
          push_if(jobs, ka, next_corner(ka), 3 + kb, 3 + next_corner(kb), 2, true);
        }
      }
    }
  }
  if (jobs.len == 0) return;
  // run
  const double sep = ccd::max_d(p.min_separation, 0.0);
  const ccd::Opts o{p.tolerance, p.min_separation, p.max_time_width, p.max_checks};
  DVec3 c0[6], c1[6];
  for (int k = 0; k < 6; ++k) {
    const bool b = k >= 3;
    c0[k] = point(dev_ptr<const float>(b ? p.b_start : p.a_start), c[k]);
    c1[k] = point(dev_ptr<const float>(b ? p.b_end : p.a_end), c[k]);
  }
  ccd::Projected proj;
  const bool has_proj = ccd::projected_new(proj, c0, c1, sep, p.big);
  CcdRecord* out = reinterpret_cast<CcdRecord*>(dev_ptr<uint32_t>(p.out) + GPROX_CCD_HEADER_WORDS);
  uint32_t* counters = dev_ptr<uint32_t>(p.ccd_counters);
  for (uint32_t j = 0; j < jobs.len; ++j) {
    const int split = jobs.split[j];
    uint8_t s[4] = {jobs.slots[j][0], jobs.slots[j][1], jobs.slots[j][2], jobs.slots[j][3]};
    if (has_proj && ccd::projected_separated(proj, s, split)) continue;
    if (split == 2) {
      // canonical: each edge's endpoints ascending; in self CCD the smaller edge first.
      uint8_t ea[2] = {s[0], s[1]}, eb[2] = {s[2], s[3]};
      if (!(c[ea[0]] <= c[ea[1]])) {
        ea[0] = s[1];
        ea[1] = s[0];
      }
      if (!(c[eb[0]] <= c[eb[1]])) {
        eb[0] = s[3];
        eb[1] = s[2];
      }
      const bool swap = same && (c[eb[0]] < c[ea[0]] || (c[eb[0]] == c[ea[0]] && c[eb[1]] < c[ea[1]]));
      if (swap) {
        s[0] = eb[0];
        s[1] = eb[1];
        s[2] = ea[0];
        s[3] = ea[1];
      } else {
        s[0] = ea[0];
        s[1] = ea[1];
        s[2] = eb[0];
        s[3] = eb[1];
      }
    }
    DVec3 start[4], end[4];
    for (int k = 0; k < 4; ++k) {
      start[k] = c0[s[k]];
      end[k] = c1[s[k]];
    }
    if (ccd::excluded(start, end, split, sep)) continue;
    *tests += 1;
    double t_lo = 0.0, t_hi = 0.0;
    const uint32_t status = ccd::elementary(split == 2, start, end, o, &t_lo, &t_hi);
    if (status == GPROX_CCD_FREE) continue;
    // feature
    CcdRecord r;
    uint32_t kind;
    if (split == 1) {
      const uint32_t fx = f[s[0] / 3], fy = f[s[1] / 3];
      if (same || s[0] / 3 == 0) {
        kind = GPROX_CCD_VERTEX_FACE;
        r.faces[0] = fx;
        r.faces[1] = fy;
      } else {
        kind = GPROX_CCD_FACE_VERTEX;
        r.faces[0] = fy;
        r.faces[1] = fx;
      }
    } else {
      kind = GPROX_CCD_EDGE_EDGE;
      r.faces[0] = f[s[0] / 3];
      r.faces[1] = f[s[2] / 3];
    }
    if (status == GPROX_CCD_UNDECIDED) {
      kind |= GPROX_CCD_RECORD_UNDECIDED;
      *undecided += 1;
    }
    r.kind = kind;
    for (int k = 0; k < 4; ++k) r.v[k] = c[s[k]];
    r.pad = 0;
    r.t_lo = t_lo;
    r.t_hi = t_hi;
    const uint32_t at = atomicAdd(&counters[0], 1u);
    if (at < p.record_capacity) out[at] = r;
  }
}

}  // namespace

GPROX_KERNEL(gprox_ccd_pairs, CcdPairsParams) {
  const uint32_t* bc = dev_ptr<const uint32_t>(p.counters);
  // Only a finished, complete traversal: otherwise more rounds (or a rerun) follow.
  if (bc[GPROX_BC_DONE] == 0 || bc[GPROX_BC_OVERFLOW] != 0) return;
  const uint32_t found = bc[GPROX_BC_RESULTS];
  if (found > p.capacity) return;
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.pairs);
  uint32_t tests = 0, undecided = 0;
  for (uint32_t i = global_thread(); i < found; i += gridDim.x * blockDim.x) {
    face_pair(p, pairs[2 * static_cast<size_t>(i)], pairs[2 * static_cast<size_t>(i) + 1], &tests,
              &undecided);
  }
  uint32_t* counters = dev_ptr<uint32_t>(p.ccd_counters);
  if (tests != 0) atomicAdd(&counters[1], tests);
  if (undecided != 0) atomicAdd(&counters[2], undecided);
}
GPROX_KERNEL_EXPORT(gprox_ccd_pairs, CcdPairsParams)

GPROX_KERNEL(gprox_ccd_header, CcdPairsParams) {
  const uint32_t i = global_thread();
  if (i < GPROX_CCD_HEADER_WORDS) {
    uint32_t* counters = dev_ptr<uint32_t>(p.ccd_counters);
    dev_ptr<uint32_t>(p.out)[i] = i < 4 ? counters[i] : 0u;
    // The next narrow phase (more rounds, a rerun, the next query) counts from zero again.
    if (i < 4) counters[i] = 0;
  }
}
GPROX_KERNEL_EXPORT(gprox_ccd_header, CcdPairsParams)

#ifndef __CUDACC__
#include <cstddef>
#include <cstring>

#define GPROX_CCD_SIZE(T) \
  if (std::strcmp(name, "sizeof(" #T ")") == 0) return sizeof(T);
#define GPROX_CCD_OFFSET(T, field) \
  if (std::strcmp(name, "offsetof(" #T "," #field ")") == 0) return offsetof(T, field);

/// Emulator only: sizeof / offsetof of the CCD layouts by name ("sizeof(CcdRecord)"), SIZE_MAX
/// if unknown (gprox_cuda::ccd_narrow::emulator_layout, tests/ccd_device.rs).
extern "C" size_t gprox_emu_ccd_layout(const char* name) {
  GPROX_CCD_SIZE(CcdQuery) GPROX_CCD_OFFSET(CcdQuery, end) GPROX_CCD_OFFSET(CcdQuery, kind)
  GPROX_CCD_SIZE(CcdResult) GPROX_CCD_OFFSET(CcdResult, t_hi) GPROX_CCD_OFFSET(CcdResult, status)
  GPROX_CCD_SIZE(CcdRecord) GPROX_CCD_OFFSET(CcdRecord, v) GPROX_CCD_OFFSET(CcdRecord, faces)
  GPROX_CCD_OFFSET(CcdRecord, t_lo) GPROX_CCD_OFFSET(CcdRecord, t_hi)
  GPROX_CCD_SIZE(CcdElementaryParams) GPROX_CCD_OFFSET(CcdElementaryParams, results)
  GPROX_CCD_OFFSET(CcdElementaryParams, tolerance) GPROX_CCD_OFFSET(CcdElementaryParams, max_checks)
  GPROX_CCD_OFFSET(CcdElementaryParams, count)
  GPROX_CCD_SIZE(CcdPairsParams) GPROX_CCD_OFFSET(CcdPairsParams, counters)
  GPROX_CCD_OFFSET(CcdPairsParams, ccd_counters) GPROX_CCD_OFFSET(CcdPairsParams, out)
  GPROX_CCD_OFFSET(CcdPairsParams, a_start) GPROX_CCD_OFFSET(CcdPairsParams, a_owned)
  GPROX_CCD_OFFSET(CcdPairsParams, b_start) GPROX_CCD_OFFSET(CcdPairsParams, b_owned)
  GPROX_CCD_OFFSET(CcdPairsParams, big) GPROX_CCD_OFFSET(CcdPairsParams, max_checks)
  GPROX_CCD_OFFSET(CcdPairsParams, capacity) GPROX_CCD_OFFSET(CcdPairsParams, record_capacity)
  GPROX_CCD_OFFSET(CcdPairsParams, same)
  return SIZE_MAX;
}
#endif
