// A world of many rigid bodies in one traversal (gProximity §6 names many small objects as the
// limit of per-pair launches): every body's resident tree is addressed through one world
// numbering (body b's node i is bodies[b].base + i), so a node pair names its two bodies and the
// balanced traversal (balance.cu, GPROX_BALANCE_WORLD) serves every body pair at once.
//
// * gprox_world_body_boxes: the world box of every node of every body (one thread per node).
// * gprox_world_pairs: the broad phase: every pair of bodies (i < j), or every pair of a given
//   list (the batch call), whose root boxes overlap is dealt round-robin into the task queues as
//   a work item (root of i, root of j); the scan and spread that follow balance them like any
//   round.
// * gprox_world_contacts: the traversal's leaf pairs (world node indices) become (body, face,
//   body, face) records in host-mapped memory after the filtered triangle test.
#include "gprox/common.cuh"
#include "gprox/params.cuh"
#include "gprox/tri_tri.cuh"
#include "gprox/world.cuh"

using namespace gprox;

GPROX_KERNEL(gprox_world_body_boxes, WorldBodyBoxesParams) {
  const WorldBody* bodies = dev_ptr<const WorldBody>(p.bodies);
  Aabb* boxes = dev_ptr<Aabb>(p.boxes);
  for (uint32_t x = global_thread(); x < p.total; x += gridDim.x * blockDim.x) {
    const WorldBody& b = bodies[body_of(bodies, p.count, x)];
    const BvhNode* nodes = dev_ptr<const BvhNode>(b.nodes);
    boxes[x] = world_box(nodes[x - b.base].aabb, b.pose, p.margin);
  }
}
GPROX_KERNEL_EXPORT(gprox_world_body_boxes, WorldBodyBoxesParams)

GPROX_KERNEL(gprox_world_pairs, WorldPairsParams) {
  const WorldBody* bodies = dev_ptr<const WorldBody>(p.bodies);
  const Aabb* boxes = dev_ptr<const Aabb>(p.boxes);
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  uint32_t* counts = dev_ptr<uint32_t>(p.counts);
  uint32_t* work = dev_ptr<uint32_t>(p.work);
  const uint64_t n = p.count;
  const uint32_t* list = p.list != 0 ? dev_ptr<const uint32_t>(p.list) : nullptr;
  const uint64_t pairs = list != nullptr ? p.list_count : n * (n - 1) / 2;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t k = global_thread(); k < pairs; k += step) {
    uint64_t i, j;
    if (list != nullptr) {
      i = list[2 * k];
      j = list[2 * k + 1];
    } else {
      // Pair k of the upper triangle, row by row: i = the largest with i (2n - i - 1) / 2 <= k.
      i = static_cast<uint64_t>((2.0 * n - 1.0 - sqrt((2.0 * n - 1.0) * (2.0 * n - 1.0) -
                                                      8.0 * static_cast<double>(k))) /
                                2.0);
      while (i > 0 && i * (2 * n - i - 1) / 2 > k) --i;
      while ((i + 1) * (2 * n - i - 2) / 2 <= k) ++i;
      j = k - i * (2 * n - i - 1) / 2 + i + 1;
    }
    const uint32_t ri = bodies[i].base, rj = bodies[j].base;
    if (!overlaps(boxes[ri], boxes[rj])) continue;
    const uint32_t at = atomicAdd(&counters[GPROX_BC_ROOTS], 1u);
    const uint32_t task = at % p.tasks, slot = at / p.tasks;
    if (slot >= p.stride) {
      // No room: the host grows the queues to the counted total and reruns.
      atomicExch(&counters[GPROX_BC_OVERFLOW], 1u);
      atomicExch(&counters[GPROX_BC_DONE], 1u);
      continue;
    }
    const size_t w = 2 * (static_cast<size_t>(task) * p.stride + slot);
    work[w] = ri;
    work[w + 1] = rj;
    atomicAdd(&counts[task], 1u);
  }
}
GPROX_KERNEL_EXPORT(gprox_world_pairs, WorldPairsParams)

GPROX_KERNEL(gprox_world_contacts, WorldContactsParams) {
  const WorldBody* bodies = dev_ptr<const WorldBody>(p.bodies);
  uint32_t* counters = dev_ptr<uint32_t>(p.counters);
  const uint32_t found = counters[GPROX_BC_RESULTS];
  const uint32_t count = found < p.capacity ? found : p.capacity;
  const uint32_t* pairs = dev_ptr<const uint32_t>(p.pairs);
  uint32_t* out = dev_ptr<uint32_t>(p.out) + GPROX_BALANCE_COUNTERS;
  for (uint32_t k = global_thread(); k < count; k += gridDim.x * blockDim.x) {
    const uint32_t x = pairs[2 * static_cast<size_t>(k)];
    const uint32_t y = pairs[2 * static_cast<size_t>(k) + 1];
    const uint32_t bi = body_of(bodies, p.count, x), bj = body_of(bodies, p.count, y);
    const WorldBody& a = bodies[bi];
    const WorldBody& b = bodies[bj];
    const uint32_t fa = dev_ptr<const BvhNode>(a.nodes)[x - a.base].left;
    const uint32_t fb = dev_ptr<const BvhNode>(b.nodes)[y - b.base].left;
    uint32_t status = GPROX_TRI_UNDECIDED;
    if (p.test != 0) {
      DVec3 ta[3], tb[3];
      transform_triangle(a.pose, dev_ptr<const float>(a.positions),
                         dev_ptr<const uint32_t>(a.faces), fa, ta);
      transform_triangle(b.pose, dev_ptr<const float>(b.positions),
                         dev_ptr<const uint32_t>(b.faces), fb, tb);
      status = triangles_intersect(ta, tb);
    }
    if (status == GPROX_TRI_SEPARATE) continue;
    const uint32_t flag = status == GPROX_TRI_UNDECIDED ? GPROX_PAIR_UNDECIDED : 0u;
    const size_t at = 4 * static_cast<size_t>(atomicAdd(&counters[GPROX_BC_OUT], 1u));
    out[at] = bi;
    out[at + 1] = fa | flag;
    out[at + 2] = bj;
    out[at + 3] = fb;
  }
}
GPROX_KERNEL_EXPORT(gprox_world_contacts, WorldContactsParams)
