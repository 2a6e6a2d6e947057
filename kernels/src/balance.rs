//! Balanced BVTT traversal on the device: gProximity's lightweight work balancing
//! (Lauterbach, Mo & Manocha 2010, §3.3), `kernels/cuda/balance.cu`.
//!
//! Persistent tasks (one per block, as many as fit on the device at once) each own a work queue
//! of node pairs: a shared-memory part of [`BalanceOptions::queue_capacity`] pairs that
//! overflows ("spills") into the task's own region of global memory. A task pops up to a block's
//! worth of pairs per step, tests their child pairs and pushes the overlapping ones; leaf pairs go
//! to a result buffer through an atomic counter. A task that had work and whose queue runs empty
//! or full bumps the one global idle counter; every task compares that counter with the
//! threshold ([`BalanceOptions::idle_threshold`], default 50 % of the tasks that had work) after
//! each step. Then the balancing kernels (prefix sum over the queue sizes, even redistribution)
//! spread the remaining work over all tasks.
//!
//! Rounds continue on the device: the scan kernel decides when the traversal is over (nothing
//! left, an early out, or queues that must grow) and every later launch returns at once, so the
//! host enqueues a batch of rounds (as many as the previous query needed), the finishing kernels
//! (triangle tests, compaction into host-mapped memory) and synchronises **once**. Work is never
//! dropped: a step is only taken when its worst case fits the queue; queues or a result buffer
//! that were too small are grown to the counted size and the traversal rerun. Every buffer comes
//! from the device's pool, so warm queries allocate nothing.

use gprox_bvh::BvhNode;
use gprox_geometry::transform::Pose64;

mod finish;

use crate::ccd_narrow::CcdFinish;
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::{
    BalanceInitParams, BalanceScanParams, BalanceSpreadParams, BalanceTraverseParams,
    WorldPairsParams, BALANCE_ANY, BALANCE_COUNTERS, BALANCE_DUAL, BALANCE_MAX_LOCAL, BC_DONE,
    BC_EMPTY, BC_FOUND, BC_FULL, BC_MAX_REMAINING, BC_OUT, BC_OVERFLOW, BC_PROCESSED, BC_REMAINING,
    BC_RESULTS, BC_ROUNDS, BC_SPILLED, BC_SPREAD, BC_THRESHOLD,
};

/// Tuning of the balanced traversal. Every setting gives the same results; they only trade
/// memory, launches and balance against each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BalanceOptions {
    /// Persistent tasks (blocks) per launch; 0 picks the device's default
    /// ([`Device::default_tasks`]: as many blocks as are resident at once on a GPU, 4 in the
    /// emulator).
    pub tasks: u32,
    /// Node pairs of a task's shared-memory queue (`1..=1024`); more spill into global memory.
    pub queue_capacity: u32,
    /// Node pairs a task's queue may hold beyond its shared part and its share of the work
    /// (global memory). A task whose queue cannot take a full step is "full" and exits.
    pub spill_capacity: u32,
    /// A task leaves when more than this fraction of the tasks that had work this round is
    /// idle (`0..=1`, default 0.5).
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

/// What the balanced traversal did (summed over reruns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BalanceStats {
    /// Rounds of the traversal kernel that found work (rebalancing rounds + 1 per run).
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
    /// Task exits to hand work to tasks that got none (more than half the tasks idle).
    pub spread_exits: u64,
    /// Most work items left after a round.
    pub max_remaining: u32,
    /// Leaf pairs found (in the last run).
    pub leaf_pairs: u32,
    /// Runs repeated because the result buffer was too small.
    pub result_reruns: u32,
    /// Runs repeated because the work outgrew the queue regions.
    pub queue_reruns: u32,
    /// Host synchronisations (one per batch of rounds).
    pub syncs: u32,
}

/// One side of a triangle test on the device: a mesh's positions and faces, and its pose.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TriSide {
    pub positions: u64,
    pub faces: u64,
    pub pose: Pose64,
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
    /// The triangles of both sides: with [`BALANCE_ANY`] tested in the traversal, else (when
    /// set) by the triangle-pair kernel before the pairs come back.
    pub triangles: Option<[TriSide; 2]>,
    /// [`BALANCE_WORLD`]: the world of many bodies the traversal runs over.
    pub world: Option<WorldSetup>,
}

/// A world of many bodies on the device (see `world.cu`): the body table, and whether its
/// contacts get the triangle test on the device (no margin) or come back undecided.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldSetup {
    /// `const WorldBody[count]`.
    pub bodies: u64,
    /// Bodies.
    pub count: u32,
    /// Whether the contacts get the filtered triangle test on the device.
    pub test: bool,
    /// The body pairs to test (`u32[2 n]` device address and `n`), instead of every pair.
    pub list: Option<(u64, u32)>,
}

/// What came back from a traversal.
#[derive(Clone, Debug, Default)]
pub(crate) struct TraversalOutput {
    /// Leaf pairs (face of A, face of B). With triangle tests, the certified intersecting ones
    /// and the undecided ones flagged with [`crate::params::PAIR_UNDECIDED`] in the first face;
    /// without, every leaf pair.
    pub pairs: Vec<[u32; 2]>,
    /// [`BALANCE_WORLD`]: `[body a, face a, body b, face b]` records (the first face flagged
    /// [`crate::params::PAIR_UNDECIDED`] when the filters could not decide), in place of `pairs`.
    pub contacts: Vec<[u32; 4]>,
    /// [`BALANCE_ANY`]: a certified intersecting pair was found (no pairs then).
    pub found: bool,
    /// What the traversal did.
    pub stats: BalanceStats,
}

impl Device {
    /// Persistent tasks used when [`BalanceOptions::tasks`] is 0: on a GPU the traversal
    /// kernel's resident blocks per multiprocessor times the multiprocessors (occupancy, so all
    /// tasks run at once); 4 in the emulator.
    pub fn default_tasks(&self) -> u32 {
        match self.traversal_blocks_per_sm() {
            Some(per_sm) => per_sm * self.multiprocessors(),
            None => 4,
        }
    }

    /// Runs the balanced traversal of `t` to the end and delivers its leaf pairs (finished by
    /// the triangle test when `t.triangles` is set) with one host synchronisation in the
    /// common case.
    pub(crate) fn run_traversal(
        &self,
        t: &Traversal,
        opts: &BalanceOptions,
    ) -> Result<TraversalOutput> {
        self.run_traversal_with(t, opts, None)
    }

    /// [`Device::run_traversal`] whose leaf pairs, with `ccd`, go to the device's CCD narrow
    /// phase (`crate::ccd_narrow`) in place of the pair compaction: no pairs come back, the
    /// narrow phase's own mapped output holds its contacts.
    pub(crate) fn run_traversal_with(
        &self,
        t: &Traversal,
        opts: &BalanceOptions,
        ccd: Option<&CcdFinish>,
    ) -> Result<TraversalOutput> {
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
        let mut out = TraversalOutput::default();
        let self_mode = t.flags & crate::params::BALANCE_SELF != 0;
        let world = t.world.is_some();
        if !world && (t.leaves_a == 0 || t.leaves_b == 0 || (self_mode && t.leaves_a < 2)) {
            return Ok(out);
        }
        let headroom = (opts.queue_capacity as u64 + opts.spill_capacity as u64).max(3);
        let headroom = u32::try_from(headroom).map_err(|_| CudaError::TooLarge {
            what: "balanced traversal work queues",
            count: headroom as usize,
            max: u32::MAX as usize,
        })?;
        // Regions with room for a share of a few blocks' worth of items beyond the headroom (a
        // first round hands out up to one task's queue), or as large as the last query's.
        let first_share = (headroom / tasks).max(8 * self.block_size());
        let mut stride =
            region_stride(tasks, first_share, headroom)?.max(self.hint(HINT_QUEUES, 0) / tasks);
        let rounds_hint = match (t.flags & BALANCE_ANY != 0, t.flags & BALANCE_DUAL != 0) {
            _ if world => "balance.hint.rounds.world",
            (true, _) => "balance.hint.rounds.any",
            (false, true) => "balance.hint.rounds.dual",
            (false, false) => "balance.hint.rounds",
        };
        let mut result_capacity = opts
            .initial_result_capacity
            .max(1)
            .max(self.hint(HINT_RESULTS, 0) as usize);
        let old_batch = self.hint(rounds_hint, 4).clamp(1, 256);
        let mut batch = old_batch;
        loop {
            if result_capacity > u32::MAX as usize / 2 {
                return Err(CudaError::TooLarge {
                    what: "balanced traversal results",
                    count: result_capacity,
                    max: u32::MAX as usize / 2,
                });
            }
            let run = self.traversal_run(
                t,
                opts,
                tasks,
                stride,
                headroom,
                result_capacity,
                batch,
                ccd,
            )?;
            let h = &run.header;
            out.stats.rounds += h[BC_ROUNDS];
            out.stats.spilled += h[BC_SPILLED] as u64;
            out.stats.processed += h[BC_PROCESSED] as u64;
            out.stats.empty_exits += h[BC_EMPTY] as u64;
            out.stats.full_exits += h[BC_FULL] as u64;
            out.stats.threshold_exits += h[BC_THRESHOLD] as u64;
            out.stats.spread_exits += h[BC_SPREAD] as u64;
            out.stats.max_remaining = out.stats.max_remaining.max(h[BC_MAX_REMAINING]);
            out.stats.syncs += run.syncs;
            batch = batch.max(run.rounds_enqueued);
            if h[BC_OVERFLOW] != 0 {
                // The even shares no longer fit the regions: grow them (with slack) and rerun.
                out.stats.queue_reruns += 1;
                let share = h[BC_REMAINING].div_ceil(tasks);
                let grown = region_stride(tasks, share + share / 2, headroom)?;
                stride = grown.max(stride.saturating_add(stride / 2));
                continue;
            }
            let found = h[BC_RESULTS];
            out.stats.leaf_pairs = found;
            if found as usize > result_capacity && (world || h[BC_FOUND] == 0) {
                // The result buffer overflowed (the counter kept counting): rerun with its size
                // and a quarter more, so the next frames of a scene fit.
                out.stats.result_reruns += 1;
                result_capacity = found as usize + found as usize / 4;
                continue;
            }
            out.found = !world && h[BC_FOUND] != 0;
            if world {
                out.contacts = run
                    .words
                    .chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect();
            } else {
                out.pairs = run.words.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
            }
            self.set_hint(HINT_QUEUES, stride.saturating_mul(tasks));
            self.set_hint(HINT_RESULTS, result_capacity as u32);
            // Enough rounds for this query with slack, forgetting larger past needs slowly
            // (empty rounds cost a launch each, a missing round a second synchronisation).
            let rounds = h[BC_ROUNDS];
            let want = (2 * rounds + 2).max(old_batch - old_batch / 8);
            self.set_hint(rounds_hint, want);
            return Ok(out);
        }
    }

    /// One run of the traversal from the root pair on pooled buffers: batches of rounds until
    /// the device says it is done, then the finishing kernels and the mapped result.
    #[allow(clippy::too_many_arguments)]
    fn traversal_run(
        &self,
        t: &Traversal,
        opts: &BalanceOptions,
        tasks: u32,
        stride: u32,
        headroom: u32,
        result_capacity: usize,
        batch: u32,
        ccd: Option<&CcdFinish>,
    ) -> Result<Run> {
        let region_items = 2 * tasks as usize * stride as usize;
        let work = [
            self.lease::<DeviceBuffer<u32>>("balance.work.0", region_items)?,
            self.lease::<DeviceBuffer<u32>>("balance.work.1", region_items)?,
        ];
        let counts = [
            self.lease::<DeviceBuffer<u32>>("balance.counts.0", tasks as usize)?,
            self.lease::<DeviceBuffer<u32>>("balance.counts.1", tasks as usize)?,
        ];
        let offsets = self.lease::<DeviceBuffer<u32>>("balance.offsets", tasks as usize + 1)?;
        let counters = self.lease::<DeviceBuffer<u32>>("balance.counters", BALANCE_COUNTERS)?;
        let results = self.lease::<DeviceBuffer<u32>>("balance.results", 2 * result_capacity)?;
        let status = match (t.triangles, t.flags & BALANCE_ANY) {
            (Some(_), 0) => {
                Some(self.lease::<DeviceBuffer<u32>>("balance.status", result_capacity)?)
            }
            _ => None,
        };
        // Two words per pair, four per world contact record, none when the CCD narrow phase
        // takes the pairs.
        let width = match (t.world.is_some(), ccd.is_some()) {
            (true, _) => 4,
            (false, true) => 0,
            (false, false) => 2,
        };
        let mapped = self.lease::<MappedBuffer<u32>>(
            "balance.out",
            BALANCE_COUNTERS + width * result_capacity,
        )?;
        let init = BalanceInitParams {
            work: work[0].device_ptr(),
            counts: counts[0].device_ptr(),
            counters: counters.device_ptr(),
            tasks,
            root: u32::from(t.world.is_none()),
        };
        // SAFETY: work[0] holds >= 2 entries, counts `tasks`, counters BALANCE_COUNTERS.
        unsafe {
            self.launch(
                Kernel::BalanceInit,
                self.blocks_for((tasks as usize).max(BALANCE_COUNTERS)),
                self.block_size(),
                &init,
            )?
        };
        let [side_a, side_b] = t.triangles.unwrap_or(
            [TriSide {
                positions: 0,
                faces: 0,
                pose: Pose64::IDENTITY,
            }; 2],
        );
        let mut p = BalanceTraverseParams {
            nodes_a: t.nodes_a,
            nodes_b: t.nodes_b,
            boxes_a0: t.boxes_a[0],
            boxes_a1: t.boxes_a[1],
            boxes_b0: t.boxes_b[0],
            boxes_b1: t.boxes_b[1],
            faces: if t.faces != 0 { t.faces } else { side_a.faces },
            faces_b: side_b.faces,
            positions_a: side_a.positions,
            positions_b: side_b.positions,
            work: 0,
            counts: 0,
            results: results.device_ptr(),
            counters: counters.device_ptr(),
            bodies: t.world.map_or(0, |w| w.bodies),
            pose_a: side_a.pose,
            pose_b: side_b.pose,
            min_separation: t.min_separation,
            task_capacity: stride,
            headroom,
            body_count: t.world.map_or(0, |w| w.count),
            local_capacity: opts.queue_capacity,
            result_capacity: result_capacity as u32,
            idle_permille: (opts.idle_threshold * 1000.0).round() as u32,
            box_stride: t.box_stride,
            first_leaf_a: t.leaves_a.saturating_sub(1),
            first_leaf_b: t.leaves_b.saturating_sub(1),
            flags: t.flags,
        };
        let spread_blocks = self.blocks_for(tasks as usize * 4).min(1024);
        let traverse = if t.world.is_some() {
            Kernel::BalanceTraverseWorld
        } else if t.flags & BALANCE_ANY != 0 {
            Kernel::BalanceTraverseAny
        } else {
            Kernel::BalanceTraverse
        };
        let mut cur = 0usize;
        let mut run = Run {
            header: [0; BALANCE_COUNTERS],
            words: Vec::new(),
            syncs: 0,
            rounds_enqueued: 0,
        };
        let scan = |cur: usize| BalanceScanParams {
            counts_in: counts[cur].device_ptr(),
            offsets: offsets.device_ptr(),
            counts_out: counts[1 - cur].device_ptr(),
            counters: counters.device_ptr(),
            tasks,
            stride,
            headroom,
            pad: 0,
        };
        let spread = |cur: usize| BalanceSpreadParams {
            work_in: work[cur].device_ptr(),
            offsets: offsets.device_ptr(),
            work_out: work[1 - cur].device_ptr(),
            counters: counters.device_ptr(),
            tasks,
            stride,
        };
        if let Some(w) = t.world {
            // The broad phase deals the overlapping body pairs into the queues; a balancing
            // step spreads them evenly before the first round.
            let wp = WorldPairsParams {
                bodies: w.bodies,
                boxes: t.boxes_a[0],
                work: work[0].device_ptr(),
                counts: counts[0].device_ptr(),
                counters: counters.device_ptr(),
                list: w.list.map_or(0, |l| l.0),
                count: w.count,
                tasks,
                stride,
                list_count: w.list.map_or(0, |l| l.1),
            };
            let body_pairs = match w.list {
                Some((_, n)) => n as usize,
                None => w.count as usize * (w.count as usize).saturating_sub(1) / 2,
            };
            // SAFETY: the body table holds `count` bodies whose boxes are in `boxes_a`; work[0]
            // holds `tasks` regions of `stride` pairs (the kernel checks each slot), counts
            // `tasks` sizes zeroed by the init.
            unsafe {
                self.launch(
                    Kernel::WorldPairs,
                    self.blocks_for(body_pairs).min(self.finish_blocks()),
                    self.block_size(),
                    &wp,
                )?;
                self.launch(Kernel::BalanceScan, 1, self.block_size(), &scan(0))?;
                self.launch(
                    Kernel::BalanceSpread,
                    spread_blocks,
                    self.block_size(),
                    &spread(0),
                )?;
            }
            cur = 1;
        }
        let mut batch = batch;
        loop {
            for _ in 0..batch {
                let next = 1 - cur;
                p.work = work[cur].device_ptr();
                p.counts = counts[cur].device_ptr();
                // SAFETY: the trees, boxes and meshes in `t` are the caller's live buffers;
                // every region holds `stride` pairs, counts `tasks` sizes, results
                // `result_capacity` pairs.
                unsafe { self.launch(traverse, tasks, self.block_size(), &p)? };
                // SAFETY: counts hold `tasks` entries, offsets `tasks + 1`; the spread moves the
                // items the scan described, and the scan checked that every share fits a region
                // of `stride` pairs.
                unsafe {
                    self.launch(Kernel::BalanceScan, 1, self.block_size(), &scan(cur))?;
                    self.launch(
                        Kernel::BalanceSpread,
                        spread_blocks,
                        self.block_size(),
                        &spread(cur),
                    )?;
                }
                cur = next;
            }
            run.rounds_enqueued += batch;
            self.finish_traversal(
                t,
                &counters,
                &results,
                status.as_deref(),
                &mapped,
                result_capacity,
                ccd,
            )?;
            self.synchronize()?;
            run.syncs += 1;
            let header = mapped.read(0, BALANCE_COUNTERS);
            run.header.copy_from_slice(&header);
            if run.header[BC_DONE] != 0 {
                break;
            }
            // Not over yet (a deeper traversal than the last one): more rounds, doubled.
            batch = (batch * 2).min(1024);
        }
        let h = &run.header;
        let found = t.world.is_none() && h[BC_FOUND] != 0;
        let complete = h[BC_OVERFLOW] == 0 && !found && h[BC_RESULTS] as usize <= result_capacity;
        if complete {
            run.words = mapped.read(BALANCE_COUNTERS, width * h[BC_OUT] as usize);
        }
        Ok(run)
    }
}

/// Names of the pool's remembered sizes.
const HINT_QUEUES: &str = "balance.hint.queues";
const HINT_RESULTS: &str = "balance.hint.results";

/// One run's outcome.
struct Run {
    header: [u32; BALANCE_COUNTERS],
    /// The mapped result's words after the header.
    words: Vec<u32>,
    syncs: u32,
    rounds_enqueued: u32,
}

/// Capacity of every task's region: its share plus the headroom; all regions must be indexable
/// with u32 totals.
fn region_stride(tasks: u32, share: u32, headroom: u32) -> Result<u32> {
    let stride = share as u64 + headroom as u64;
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
