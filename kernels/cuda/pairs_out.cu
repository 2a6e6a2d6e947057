// A traversal's results delivered to the host in one piece: gprox_pairs_out compacts the leaf
// pairs a traversal left on the device (dropping those the triangle-pair kernel certified
// separate, flagging the undecided ones) into host-mapped memory, and gprox_pairs_header writes
// the traversal's counters in front of them. The host synchronises once and reads the header and
// exactly the pairs written; order is left to the host, which sorts.
#include "gprox/common.cuh"
#include "gprox/params.cuh"

using namespace gprox;

GPROX_KERNEL(gprox_pairs_out, PairsOutParams) {
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  // An early out needs no pairs: the answer is in the header.
  if (counters[GPROX_BC_FOUND] != 0) return;
  const uint32_t found = counters[GPROX_BC_RESULTS];
  const uint32_t count = found < p.capacity ? found : p.capacity;
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.pairs);
  const uint32_t* status = p.status != 0 ? dev_ptr<const uint32_t>(p.status) : nullptr;
  uint32_t* out = dev_ptr<uint32_t>(p.out) + GPROX_BALANCE_COUNTERS;
  for (uint32_t i = global_thread(); i < count; i += gridDim.x * blockDim.x) {
    const uint32_t s = status != nullptr ? status[i] : GPROX_TRI_INTERSECT;
    if (s == GPROX_TRI_SEPARATE) continue;
    const uint32_t flag = s == GPROX_TRI_UNDECIDED ? GPROX_PAIR_UNDECIDED : 0u;
    const uint32_t at = atomicAdd(&counters[GPROX_BC_OUT], 1u);
    out[2 * static_cast<size_t>(at)] = pairs[2 * static_cast<size_t>(i)] | flag;
    out[2 * static_cast<size_t>(at) + 1] = pairs[2 * static_cast<size_t>(i) + 1];
  }
}
GPROX_KERNEL_EXPORT(gprox_pairs_out, PairsOutParams)

GPROX_KERNEL(gprox_pairs_header, PairsOutParams) {
  const uint32_t i = global_thread();
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  if (i < GPROX_BALANCE_COUNTERS) {
    dev_ptr<uint32_t>(p.out)[i] = counters[i];
    // The next compaction (more rounds after an unfinished batch) counts from zero again.
    if (i == GPROX_BC_OUT) counters[i] = 0;
  }
}
GPROX_KERNEL_EXPORT(gprox_pairs_header, PairsOutParams)
