// Kernel parameter structs: one `#[repr(C)]` struct per kernel, passed by value, pointers as u64
// device addresses. Mirrored field for field by kernels/src/params.rs (layout test in
// kernels/tests/layout.rs).
#pragma once
#include "gprox/layout.cuh"

namespace gprox {
/// Buckets of one radix pass (8-bit digits).
#define GPROX_RADIX_BUCKETS 256

/// gprox_prim_boxes: f32 box of every face.
struct PrimBoxesParams {
  uint64_t positions;  ///< const float[3 * vertices]
  uint64_t faces;      ///< const uint32_t[3 * count]
  uint64_t boxes;      ///< Aabb[count] (out)
  uint32_t count;      ///< faces
  uint32_t pad;
};

/// gprox_reduce_bounds: per-block box of `count` boxes (or of their centroids).
struct ReduceBoundsParams {
  uint64_t input;      ///< const Aabb[count]
  uint64_t output;     ///< Aabb[gridDim.x] (out)
  uint32_t count;      ///< input boxes
  uint32_t centroids;  ///< 1: reduce the centroids of the boxes, 0: the boxes
};

/// gprox_morton_codes: 63-bit codes of the box centroids in the scene box.
struct MortonParams {
  uint64_t boxes;    ///< const Aabb[count]
  uint64_t scene;    ///< const Aabb[1]: box of the centroids
  uint64_t codes;    ///< uint64_t[count] (out)
  uint64_t indices;  ///< uint32_t[count] (out): 0..count
  uint32_t count;
  uint32_t pad;
};

/// gprox_radix_digits (every pass's digit counts) and gprox_radix_pass (one 8-bit LSD pass).
struct RadixParams {
  uint64_t keys_in;     ///< const uint64_t[count]
  uint64_t values_in;   ///< const uint32_t[count]
  uint64_t keys_out;    ///< uint64_t[count] (out)
  uint64_t values_out;  ///< uint32_t[count] (out)
  uint64_t status;      ///< uint32_t[8 + passes * tiles * 256]: pass tickets, then look-back status
  uint64_t totals;      ///< uint32_t[8 * 256]: digit counts by pass (zero before the sort)
  uint64_t count_at;    ///< 0, or const uint32_t*: the element count on the device (<= count)
  uint32_t count;       ///< elements (with count_at: the most there may be)
  uint32_t shift;       ///< bit offset of the digit (gprox_radix_pass)
  uint32_t tile;        ///< elements per block (>= 1)
  uint32_t tiles;       ///< blocks = ceil(count / tile)
  uint32_t passes;      ///< passes of the sort, 1 to 8
  uint32_t pad;
};

/// gprox_hierarchy: Karras 2012 topology over sorted codes.
struct HierarchyParams {
  uint64_t codes;    ///< const uint64_t[count], sorted
  uint64_t order;    ///< const uint32_t[count]: primitive of each sorted slot
  uint64_t nodes;    ///< BvhNode[2 * count - 1] (out)
  uint64_t parents;  ///< uint32_t[2 * count - 1] (out)
  uint32_t count;
  uint32_t pad;
};

/// gprox_refit: bottom-up boxes, one thread per leaf, atomic visit flags.
struct RefitParams {
  uint64_t nodes;    ///< BvhNode[2 * count - 1] (in/out)
  uint64_t parents;  ///< const uint32_t[2 * count - 1]
  uint64_t boxes;    ///< const Aabb[primitives]: leaf boxes by primitive
  uint64_t flags;    ///< uint32_t[count - 1], zeroed before the launch
  uint32_t count;    ///< leaves
  uint32_t pad;
};

/// gprox_world_boxes: conservative world-space f32 box of every node under a pose.
struct WorldBoxesParams {
  Pose64 pose;
  uint64_t nodes;  ///< const BvhNode[count]
  uint64_t boxes;  ///< Aabb[count] (out)
  double margin;   ///< half the query margin, added on every side (>= 0)
  uint32_t count;  ///< nodes
  uint32_t pad;
};

/// gprox_collide: BVTT traversal of two trees' world boxes from a front of node pairs.
struct CollideParams {
  uint64_t nodes_a;     ///< const BvhNode[]
  uint64_t nodes_b;     ///< const BvhNode[]
  uint64_t boxes_a;     ///< const Aabb[]: world boxes of A's nodes
  uint64_t boxes_b;     ///< const Aabb[]: world boxes of B's nodes
  uint64_t front_in;    ///< const uint32_t[2 * front_count]: node pairs to start from
  uint64_t front_out;   ///< uint32_t[2 * front_capacity] (out): pairs left for the next launch
  uint64_t pairs;       ///< uint32_t[2 * pair_capacity] (out): candidate (face a, face b)
  uint64_t counters;    ///< uint32_t[2]: [0] pairs needed (cumulative), [1] front needed
  uint32_t front_count;
  uint32_t front_capacity;
  uint32_t pair_capacity;
  uint32_t depth_first;  ///< 0: expand one level into front_out; 1: descend with a local stack
};

/// gprox_tri_pair: filtered exact-sign triangle test of every candidate pair.
struct TriPairParams {
  Pose64 pose_a;
  Pose64 pose_b;
  uint64_t positions_a;  ///< const float[3 * vertices]
  uint64_t faces_a;      ///< const uint32_t[3 * faces]
  uint64_t positions_b;
  uint64_t faces_b;
  uint64_t pairs;   ///< const uint32_t[2 * count]: (face a, face b)
  uint64_t status;    ///< uint32_t[count] (out): GPROX_TRI_*
  uint64_t count_at;  ///< 0, or const uint32_t*: test min(*count_at, count) pairs
  uint32_t count;     ///< pairs (the capacity of `pairs` when count_at is set)
  uint32_t pad;
};
/// Balanced traversal (balance.cu): capacity of the shared-memory queue of one task, in node pairs.
#define GPROX_BALANCE_MAX_LOCAL 1024
/// Balanced traversal: entries of the counters array (also the header of a mapped result).
#define GPROX_BALANCE_COUNTERS 16
/// counters[]: leaf pairs found (cumulative, counts past the capacity).
#define GPROX_BC_RESULTS 0
/// counters[]: tasks that had work this round and ran empty or full (the one global idle counter).
#define GPROX_BC_IDLE 1
/// counters[]: work items left after the round (written by gprox_balance_scan).
#define GPROX_BC_REMAINING 2
/// counters[]: items pushed past the shared-memory queue into global memory (cumulative).
#define GPROX_BC_SPILLED 3
/// counters[]: task exits because the queue was full (cumulative).
#define GPROX_BC_FULL 4
/// counters[]: task exits because the idle count passed the threshold (cumulative).
#define GPROX_BC_THRESHOLD 5
/// counters[]: node pairs expanded (cumulative).
#define GPROX_BC_PROCESSED 6
/// counters[]: task exits because the queue ran empty (cumulative; tasks that had work only).
#define GPROX_BC_EMPTY 7
/// counters[]: 1 once the traversal is over (no work left, a queue overflow, or an early out);
/// every later balancing launch returns at once.
#define GPROX_BC_DONE 8
/// counters[]: tasks given work for this round (the base of the idle threshold).
#define GPROX_BC_ACTIVE 9
/// counters[]: 1 when the work no longer fits the queue regions (the host grows them, reruns).
#define GPROX_BC_OVERFLOW 10
/// counters[]: traversal rounds run on the device.
#define GPROX_BC_ROUNDS 11
/// counters[]: ANY mode: 1 once a certified intersecting pair was found.
#define GPROX_BC_FOUND 12
/// counters[]: task exits to hand work to tasks that got none (cumulative).
#define GPROX_BC_SPREAD 13
/// counters[]: pairs written by gprox_pairs_out (reset by gprox_pairs_header once copied).
#define GPROX_BC_OUT 14
/// counters[]: most work items left after a round.
#define GPROX_BC_MAX_REMAINING 15
/// counters[] (WORLD): body pairs the broad phase dealt into the queues, in the slot of REMAINING
/// (the scan that follows the broad phase sets REMAINING to the same total, or leaves the count
/// there when the queues overflowed).
#define GPROX_BC_ROOTS GPROX_BC_REMAINING
/// BalanceTraverseParams::flags: one tree against itself (node pair (i, i) = node i vs itself).
#define GPROX_BALANCE_SELF 1u
/// BalanceTraverseParams::flags: two boxes per node (t = 0 and t = 1); pairs are pruned only when
/// separated on one axis, in the same order, at both ends (CCD).
#define GPROX_BALANCE_DUAL 2u
/// BalanceTraverseParams::flags: drop leaf pairs whose faces share a vertex (`faces` is set).
#define GPROX_BALANCE_SKIP_ADJACENT 4u
/// BalanceTraverseParams::flags: a world of many bodies (`bodies`): node indices are world
/// indices (a body's node i is base + i, its boxes the world's concatenated boxes), the work
/// starts from the broad phase's body pairs, and leaf pairs are written as world node indices.
#define GPROX_BALANCE_WORLD 16u
/// BalanceTraverseParams::flags: early out. Leaf pairs get the filtered triangle test in the
/// traversal: a certified intersection sets BC_FOUND and every task stops; certified separations
/// are dropped; only undecided pairs reach the results.
#define GPROX_BALANCE_ANY 8u

/// gprox_balance_traverse: persistent tasks (one per block) traversing the BVTT from their own
/// work queues (gProximity §3.3).
struct BalanceTraverseParams {
  uint64_t nodes_a;      ///< const BvhNode[]
  uint64_t nodes_b;      ///< const BvhNode[] (== nodes_a in self mode)
  uint64_t boxes_a0;     ///< box of A's node i at byte offset i * box_stride
  uint64_t boxes_a1;     ///< second box of A's nodes (DUAL), else unused
  uint64_t boxes_b0;     ///< boxes of B's nodes
  uint64_t boxes_b1;     ///< second boxes of B's nodes (DUAL)
  uint64_t faces;        ///< const uint32_t[3 * faces] of A (SKIP_ADJACENT, ANY), else 0
  uint64_t faces_b;      ///< faces of B (ANY), else 0
  uint64_t positions_a;  ///< const float[3 * vertices] of A (ANY), else 0
  uint64_t positions_b;  ///< positions of B (ANY), else 0
  uint64_t work;         ///< uint32_t[2 * tasks * task_capacity]: each task's queue region (in/out)
  uint64_t counts;       ///< uint32_t[tasks]: items in each region (in/out)
  uint64_t results;      ///< uint32_t[2 * result_capacity] (out): (face a, face b)
  uint64_t counters;     ///< uint32_t[GPROX_BALANCE_COUNTERS]
  uint64_t bodies;       ///< WORLD: const WorldBody[body_count], else 0
  Pose64 pose_a;         ///< ANY: world pose of A
  Pose64 pose_b;         ///< ANY: world pose of B
  double min_separation;     ///< DUAL: a gap counts only when it exceeds this (>= 0)
  uint32_t task_capacity;    ///< items one task's region holds (the allocation's stride)
  uint32_t headroom;         ///< a task's queue holds its share plus this (capped by the stride)
  uint32_t body_count;       ///< WORLD: bodies, else 0
  uint32_t local_capacity;   ///< shared-memory queue size (1..=GPROX_BALANCE_MAX_LOCAL)
  uint32_t result_capacity;  ///< pairs `results` holds
  uint32_t idle_permille;    ///< a task leaves when idle > active * idle_permille / 1000
  uint32_t box_stride;       ///< bytes between consecutive boxes (24: Aabb[], 32: BvhNode[])
  uint32_t first_leaf_a;     ///< node index of A's first leaf (n - 1)
  uint32_t first_leaf_b;     ///< node index of B's first leaf
  uint32_t flags;            ///< GPROX_BALANCE_*
};

/// One body of a world query: its resident tree and mesh, its pose, and where its nodes start in
/// the world's node numbering (bodies sorted by `base`).
struct WorldBody {
  Pose64 pose;
  uint64_t nodes;      ///< const BvhNode[2 * leaves - 1]
  uint64_t positions;  ///< const float[3 * vertices]
  uint64_t faces;      ///< const uint32_t[3 * leaves]
  uint32_t base;       ///< world index of the body's node 0
  uint32_t leaves;     ///< faces (>= 1)
};

/// gprox_world_body_boxes: the world box of every node of every body (one thread per node).
struct WorldBodyBoxesParams {
  uint64_t bodies;  ///< const WorldBody[count]
  uint64_t boxes;   ///< Aabb[total] (out), by world index
  double margin;    ///< half the query margin, on every side
  uint32_t count;   ///< bodies
  uint32_t total;   ///< nodes of all bodies
};

/// gprox_world_pairs: the broad phase on the device: every body pair (i < j) — or every pair of
/// `list` — whose root boxes overlap becomes a work item (root of i, root of j), dealt
/// round-robin into the task queues.
struct WorldPairsParams {
  uint64_t bodies;    ///< const WorldBody[count]
  uint64_t boxes;     ///< const Aabb[]: world boxes by world index
  uint64_t work;      ///< uint32_t[2 * tasks * stride] (out)
  uint64_t counts;    ///< uint32_t[tasks] (in/out, zeroed by gprox_balance_init)
  uint64_t counters;  ///< uint32_t[GPROX_BALANCE_COUNTERS]: ROOTS counted, OVERFLOW on no room
  uint64_t list;      ///< 0 (every pair of bodies) or const uint32_t[2 * list_count]: pairs to test
  uint32_t count;     ///< bodies
  uint32_t tasks;
  uint32_t stride;      ///< capacity of a task's region
  uint32_t list_count;  ///< pairs of `list`
};

/// gprox_world_contacts: a world traversal's leaf pairs (world node indices) turned into
/// (body, face, body, face) records in host-mapped memory: the filtered triangle test drops
/// certified separations and flags undecided pairs (GPROX_PAIR_UNDECIDED on the first face).
struct WorldContactsParams {
  uint64_t bodies;    ///< const WorldBody[count]
  uint64_t counters;  ///< uint32_t[GPROX_BALANCE_COUNTERS]: RESULTS read, OUT counted
  uint64_t pairs;     ///< const uint32_t[2 * capacity]: leaf pairs, world node indices
  uint64_t out;       ///< uint32_t[GPROX_BALANCE_COUNTERS + 4 * capacity] (out, host-mapped)
  uint32_t count;     ///< bodies
  uint32_t capacity;  ///< pairs `pairs` holds
  uint32_t test;      ///< 1: triangle test; 0: every pair undecided (a margin: the host decides)
  uint32_t pad;
};

/// gprox_balance_init: the first round's queues (the root pair in task 0) and zeroed counters,
/// written on the device.
struct BalanceInitParams {
  uint64_t work;      ///< uint32_t[2 * tasks * stride] (out): root pair at 0
  uint64_t counts;    ///< uint32_t[tasks] (out)
  uint64_t counters;  ///< uint32_t[GPROX_BALANCE_COUNTERS] (out)
  uint32_t tasks;
  uint32_t root;  ///< 1: the root pair in task 0; 0: empty queues (a broad phase fills them)
};

/// gprox_balance_scan (one block): prefix sum of the queue sizes, the even shares, and the
/// device-side end test (nothing left, queues too small, early out).
struct BalanceScanParams {
  uint64_t counts_in;   ///< const uint32_t[tasks]
  uint64_t offsets;     ///< uint32_t[tasks + 1] (out): exclusive prefix sum
  uint64_t counts_out;  ///< uint32_t[tasks] (out): share of each task
  uint64_t counters;    ///< uint32_t[GPROX_BALANCE_COUNTERS]
  uint32_t tasks;
  uint32_t stride;    ///< capacity of a task's region
  uint32_t headroom;  ///< room a task needs beyond its share to take steps
  uint32_t pad;
};

/// gprox_balance_spread: moves every remaining item to its task's even share.
struct BalanceSpreadParams {
  uint64_t work_in;   ///< const uint32_t[2 * tasks * stride]
  uint64_t offsets;   ///< const uint32_t[tasks + 1]
  uint64_t work_out;  ///< uint32_t[2 * tasks * stride] (out)
  uint64_t counters;  ///< const uint32_t[GPROX_BALANCE_COUNTERS]: DONE, REMAINING
  uint32_t tasks;
  uint32_t stride;  ///< capacity of a region
};

/// Flag bit of a pair written by gprox_pairs_out: the filters left it undecided (host test).
#define GPROX_PAIR_UNDECIDED 0x80000000u

/// gprox_pairs_out / gprox_pairs_header: a traversal's leaf pairs compacted into host-mapped
/// memory: `out[0..GPROX_BALANCE_COUNTERS]` the counters, then the pairs.
struct PairsOutParams {
  uint64_t counters;  ///< uint32_t[GPROX_BALANCE_COUNTERS]: RESULTS read, OUT counted
  uint64_t pairs;     ///< const uint32_t[2 * capacity]: the traversal's leaf pairs
  uint64_t status;    ///< 0 (keep all), or const uint32_t[capacity]: GPROX_TRI_* per pair
  uint64_t out;       ///< uint32_t[GPROX_BALANCE_COUNTERS + 2 * capacity] (out, host-mapped)
  uint32_t capacity;  ///< pairs `pairs` holds
  uint32_t pad;
};

/// gprox_selftest_warp: checks of the portability layer.
struct SelftestParams {
  uint64_t out;    ///< uint32_t[5 * count] (out)
  uint32_t count;  ///< threads (grid * block, whole warps)
  uint32_t pad;
};

/// Results of gprox_tri_pair.
#define GPROX_TRI_SEPARATE 0u
#define GPROX_TRI_INTERSECT 1u
#define GPROX_TRI_UNDECIDED 2u
}  // namespace gprox
