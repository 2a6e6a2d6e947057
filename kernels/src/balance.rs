//! Balanced BVTT traversal on the device: gProximity's lightweight work balancing
//! (Lauterbach, Mo & Manocha 2010, §3.3), `kernels/cuda/balance.cu`.
//!
//! Persistent tasks (one per block) each own a work queue of node pairs: a shared-memory part of
//! [`BalanceOptions::queue_capacity`] pairs that overflows ("spills") into the task's own region
//! of global memory. A task pops up to a block's worth of pairs per step, tests their child pairs
//! and pushes the overlapping ones; leaf pairs go to a result buffer through an atomic counter.
//! A task whose queue runs empty or full bumps the one global idle counter; every task compares
//! that counter with the threshold ([`BalanceOptions::idle_threshold`], default 50 % of the
//! tasks) after each step. Empty, full, or above the threshold, a task writes its queue back to
//! global memory and exits. Then the balancing kernels (prefix sum over the queue sizes, even
//! redistribution) spread the remaining work over all tasks, and the host relaunches the
//! traversal until no work remains. Work is never dropped: a step is only taken when its worst
//! case fits the queue, the global regions grow with the work between rounds, and a result
//! buffer that was too small is grown to the counted size and the traversal rerun.

use gprox_bvh::BvhNode;

use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::{
    BalanceScanParams, BalanceSpreadParams, BalanceTraverseParams, BALANCE_COUNTERS,
    BALANCE_MAX_LOCAL, BC_EMPTY, BC_FULL, BC_PROCESSED, BC_REMAINING, BC_RESULTS, BC_SPILLED,
    BC_THRESHOLD,
};

/// Tuning of the balanced traversal. Every setting gives the same results; they only trade
/// memory, launches and balance against each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BalanceOptions {
    /// Persistent tasks (blocks) per launch; 0 picks the device's default (4 in the emulator,
    /// 1024 on a GPU).
    pub tasks: u32,
    /// Node pairs of a task's shared-memory queue (`1..=1024`); more spill into global memory.
    pub queue_capacity: u32,
    /// Node pairs a task's queue may hold beyond its shared part and its share of the work
    /// (global memory). A task whose queue cannot take a full step is "full" and exits.
    pub spill_capacity: u32,
    /// A task leaves when more than this fraction of the tasks is idle (`0..=1`, default 0.5).
    pub idle_threshold: f64,
    /// Initial capacity of the result buffer in pairs (grows on demand: a rerun).
    pub initial_result_capacity: usize,
}

impl Default for BalanceOptions {
    fn default() -> Self {
        Self {
            tasks: 0,
            queue_capacity: 512,
            spill_capacity: 2048,
            idle_threshold: 0.5,
            initial_result_capacity: 1 << 14,
        }
    }
}

/// What the balanced traversal did (summed over result-buffer reruns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BalanceStats {
    /// Launches of the traversal kernel (rebalancing rounds + 1 per run).
    pub rounds: u32,
    /// Node pairs pushed past a shared-memory queue into global memory.
    pub spilled: u64,
    /// Node pairs expanded.
    pub processed: u64,
    /// Task exits with an empty queue.
    pub empty_exits: u64,
    /// Task exits with a full queue.
    pub full_exits: u64,
    /// Task exits because the idle count passed the threshold.
    pub threshold_exits: u64,
    /// Most work items left after a round.
    pub max_remaining: u32,
    /// Leaf pairs found (in the last run).
    pub leaf_pairs: u32,
    /// Runs repeated because the result buffer was too small.
    pub result_reruns: u32,
}

/// One traversal problem on device buffers (addresses; the caller keeps the buffers alive).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Traversal {
    pub nodes_a: u64,
    pub nodes_b: u64,
    pub boxes_a: [u64; 2],
    pub boxes_b: [u64; 2],
    pub box_stride: u32,
    pub leaves_a: u32,
    pub leaves_b: u32,
    pub faces: u64,
    pub flags: u32,
    /// [`crate::params::BALANCE_DUAL`]: gaps count only above this (the CCD minimum
    /// separation).
    pub min_separation: f64,
}

/// Work queues of all tasks: regions of `stride` pairs each, and their sizes.
struct Queues {
    work: DeviceBuffer<u32>,
    counts: DeviceBuffer<u32>,
    stride: u32,
}

impl Device {
    /// Persistent tasks used when [`BalanceOptions::tasks`] is 0.
    pub fn default_tasks(&self) -> u32 {
        if self.is_emulated() {
            4
        } else {
            1024
        }
    }

    /// Runs the balanced traversal of `t` to the end; returns the leaf pairs (2 u32 each), their
    /// number and the statistics.
    pub(crate) fn balanced_traverse(
        &self,
        t: &Traversal,
        opts: &BalanceOptions,
    ) -> Result<(DeviceBuffer<u32>, u32, BalanceStats)> {
        if !(0.0..=1.0).contains(&opts.idle_threshold) {
            return Err(CudaError::InvalidOption {
                what: "idle_threshold",
                value: opts.idle_threshold,
            });
        }
        if opts.queue_capacity == 0 || opts.queue_capacity > BALANCE_MAX_LOCAL {
            return Err(CudaError::InvalidOption {
                what: "queue_capacity",
                value: opts.queue_capacity as f64,
            });
        }
        let tasks = if opts.tasks == 0 {
            self.default_tasks()
        } else {
            opts.tasks
        };
        let mut stats = BalanceStats::default();
        if t.leaves_a == 0 || t.leaves_b == 0 {
            return Ok((self.alloc_zeros(2)?, 0, stats));
        }
        let self_mode = t.flags & crate::params::BALANCE_SELF != 0;
        if self_mode && t.leaves_a < 2 {
            return Ok((self.alloc_zeros(2)?, 0, stats));
        }
        let headroom = (opts.queue_capacity as u64 + opts.spill_capacity as u64).max(3);
        let idle_limit = (opts.idle_threshold * tasks as f64).floor() as u32;
        let mut result_capacity = opts.initial_result_capacity.max(1);
        loop {
            if result_capacity > u32::MAX as usize {
                return Err(CudaError::TooLarge {
                    what: "balanced traversal results",
                    count: result_capacity,
                    max: u32::MAX as usize,
                });
            }
            let results = self.alloc_zeros::<u32>(2 * result_capacity)?;
            let counters = self.alloc_zeros::<u32>(BALANCE_COUNTERS)?;
            let offsets = self.alloc_zeros::<u32>(tasks as usize + 1)?;
            // Round 0: the root pair in task 0's queue.
            let stride = region_stride(tasks, 1, headroom)?;
            let mut first = vec![0u32; 2 * tasks as usize * stride as usize];
            first[0] = 0;
            first[1] = 0;
            let mut counts0 = vec![0u32; tasks as usize];
            counts0[0] = 1;
            let mut cur = Queues {
                work: self.upload(&first)?,
                counts: self.upload(&counts0)?,
                stride,
            };
            let mut next = Queues {
                work: self.alloc_zeros::<u32>(2)?,
                counts: self.alloc_zeros::<u32>(tasks as usize)?,
                stride: 0,
            };
            let c = loop {
                let p = BalanceTraverseParams {
                    nodes_a: t.nodes_a,
                    nodes_b: t.nodes_b,
                    boxes_a0: t.boxes_a[0],
                    boxes_a1: t.boxes_a[1],
                    boxes_b0: t.boxes_b[0],
                    boxes_b1: t.boxes_b[1],
                    faces: t.faces,
                    work: cur.work.device_ptr(),
                    counts: cur.counts.device_ptr(),
                    results: results.device_ptr(),
                    counters: counters.device_ptr(),
                    min_separation: t.min_separation,
                    task_capacity: cur.stride,
                    local_capacity: opts.queue_capacity,
                    result_capacity: result_capacity as u32,
                    idle_limit,
                    box_stride: t.box_stride,
                    first_leaf_a: t.leaves_a - 1,
                    first_leaf_b: t.leaves_b - 1,
                    flags: t.flags,
                };
                // SAFETY: the caller's node/box/face addresses cover both trees; every region
                // holds `stride` pairs, counts `tasks` sizes, results `result_capacity` pairs.
                unsafe {
                    self.launch(Kernel::BalanceTraverse, tasks, self.block_size(), &p)?;
                }
                stats.rounds += 1;
                let s = BalanceScanParams {
                    counts_in: cur.counts.device_ptr(),
                    offsets: offsets.device_ptr(),
                    counts_out: next.counts.device_ptr(),
                    counters: counters.device_ptr(),
                    tasks,
                    pad: 0,
                };
                // SAFETY: counts hold `tasks` entries, offsets `tasks + 1`.
                unsafe { self.launch(Kernel::BalanceScan, 1, self.block_size(), &s)? };
                let c = counters.download()?;
                let remaining = c[BC_REMAINING];
                stats.max_remaining = stats.max_remaining.max(remaining);
                if remaining == 0 {
                    break c;
                }
                // Each task gets its even share plus the headroom to take steps.
                let share = remaining.div_ceil(tasks);
                let stride = region_stride(tasks, share, headroom)?;
                let need = 2 * tasks as usize * stride as usize;
                if next.work.len() < need {
                    next.work = self.alloc_zeros::<u32>(need)?;
                }
                next.stride = stride;
                let sp = BalanceSpreadParams {
                    work_in: cur.work.device_ptr(),
                    offsets: offsets.device_ptr(),
                    work_out: next.work.device_ptr(),
                    tasks,
                    total: remaining,
                    stride_in: cur.stride,
                    stride_out: next.stride,
                };
                // SAFETY: offsets describe the items in `cur` (from the scan); each output
                // region holds `stride >= share` pairs.
                unsafe {
                    self.launch(
                        Kernel::BalanceSpread,
                        self.blocks_for(remaining as usize),
                        self.block_size(),
                        &sp,
                    )?;
                }
                std::mem::swap(&mut cur, &mut next);
            };
            stats.spilled += c[BC_SPILLED] as u64;
            stats.processed += c[BC_PROCESSED] as u64;
            stats.empty_exits += c[BC_EMPTY] as u64;
            stats.full_exits += c[BC_FULL] as u64;
            stats.threshold_exits += c[BC_THRESHOLD] as u64;
            let found = c[BC_RESULTS];
            stats.leaf_pairs = found;
            if found as usize <= result_capacity {
                return Ok((results, found, stats));
            }
            // The result buffer overflowed (the counter kept counting): rerun with its size.
            stats.result_reruns += 1;
            result_capacity = found as usize;
        }
    }

    /// Downloads `count` leaf pairs of a traversal.
    pub(crate) fn download_pairs(
        &self,
        pairs: &DeviceBuffer<u32>,
        count: u32,
    ) -> Result<Vec<[u32; 2]>> {
        let flat = pairs.download_prefix(2 * count as usize)?;
        Ok(flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect())
    }
}

/// Capacity of every task's region: its share plus the headroom; all regions must be indexable
/// with u32 totals.
fn region_stride(tasks: u32, share: u32, headroom: u64) -> Result<u32> {
    let stride = share as u64 + headroom;
    let total = stride * tasks as u64;
    if total > u32::MAX as u64 {
        return Err(CudaError::TooLarge {
            what: "balanced traversal work queues",
            count: total as usize,
            max: u32::MAX as usize,
        });
    }
    Ok(stride as u32)
}

/// The stride in bytes of a node array used as a box array (the box is the node's first field).
pub(crate) const NODE_BOX_STRIDE: u32 = std::mem::size_of::<BvhNode>() as u32;
/// The stride in bytes of an `Aabb` array.
pub(crate) const AABB_STRIDE: u32 = std::mem::size_of::<gprox_bvh::Aabb>() as u32;
