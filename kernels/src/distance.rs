//! Separation distance between two posed meshes on the device (gProximity §4.2): a
//! level-synchronous traversal of two 8-wide RSS trees whose levels run on the device one after
//! another (`kernels/cuda/distance.cu`). The CPU twin is `gprox_query::distance::distance`; both
//! take the same [`DistanceObject`]s and return the same distance, bit for bit (the triangle
//! distance is mirrored function by function, and the few pairs whose exact orientation signs
//! the device filter cannot certify are finished on the host by
//! `gprox_geometry::tri_distance::triangle_distance` itself).
//!
//! Models are made resident once ([`ResidentDistanceMesh`]: the binary RSS tree collapsed to 8
//! wide, representatives and mesh on the device); [`Device::distance_resident`] then uploads
//! nothing but kernel parameters. The query's state lives on the device: minima are `atomicMin`s
//! on the ordered bits of non-negative doubles, counters count past their buffers' capacities,
//! and a status flag makes every launch after the end return at once. So the host enqueues the
//! init kernel, as many levels as the deeper wide tree has (4 kernels each, grid-stride loops
//! over counts read on the device) and the finish kernel, and synchronises **once**; the result
//! (distance, bounds, faces, closest points, counters) and the pairs left to the host come back
//! through host-mapped memory. A buffer that was too small makes the traversal stop with the
//! sizes it needed: the host grows the buffers and reruns (nothing is ever dropped). Work buffers
//! come from the device's pool, so warm queries allocate nothing.
//!
//! One level: every surviving pair of wide-tree entities expands to ≤ 64 child pairs, each with a
//! world lower bound (B's RSS mapped into A's model frame by the nearest rotation of the
//! relative pose, inflated by its residual — the CPU's bound) and a cheap upper bound (the
//! distance of two representative vertices below the pair) folded into a running minimum; a
//! filter keeps the pairs that can still matter and sends two-leaf pairs to the exact triangle
//! kernel, whose distances are min-reduced into the best one.
//!
//! Pruning: a pair is dropped when its lower bound exceeds the best representative bound
//! (strictly, so the pair behind that bound stays), or reaches `cut(U)` for the best triangle
//! distance `U` (`U − max(abs_tol, rel_tol·U)`, and at most the threshold). The result carries
//! `lower ≤ true distance ≤ upper = distance` with `upper − lower ≤ max(abs_tol, rel_tol·upper)`.
//!
//! Ties: of the evaluated triangle pairs at exactly the smallest distance, the smallest
//! (face a, face b) is reported, whatever order the device's threads ran in. (The CPU reports
//! the first such pair its best-first search visits, which may be another one of equal distance.)

use glam::{DMat3, DVec3};
use gprox_bvh::bounding_volume::{nearest_rotation, pose_parts, stretch};
use gprox_bvh::rss::Rss;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_query::distance::{validate_tree, DistanceObject, DistanceResult};

use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::pool::Lease;

mod params;
mod resident;
pub use params::{
    DeviceRss, DistanceMinParams, DistanceOut, DistanceQueryParams, DistanceState, DistanceTree,
    STATUS_DONE, STATUS_OVERFLOW, STATUS_RUNNING,
};
pub use resident::{representatives, ResidentDistanceMesh};

/// Front entity "root of the tree" (`GPROX_DIST_ROOT`).
pub const ROOT: u32 = 0xffff_fffe;
/// Largest front the kernels take (its `64 · count` child pairs, plus a grid's worth of
/// threads, stay below 2^32: grid-stride loops index with u32).
pub const MAX_FRONT: usize = (1 << 25) - 1;
/// Largest leaf-pair and host-pair buffers (u32 grid-stride indices).
const MAX_PAIRS: usize = 1 << 31;
/// Initial capacity (pairs) of the list of pairs left to the host.
const HOST_CAPACITY: usize = 64;

/// Options of [`Device::distance`] (the CPU's `DistanceOptions` without `parallel`, plus the
/// initial buffer capacity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuDistanceOptions {
    /// Absolute error allowed (`upper − lower ≤ max(abs_tol, rel_tol·upper)`).
    pub abs_tol: f64,
    /// Relative error allowed.
    pub rel_tol: f64,
    /// Threshold `δ`: prune pairs at least `δ` apart and stop after the first level that found
    /// a triangle pair closer than `δ`.
    pub threshold: Option<f64>,
    /// Initial capacity (pairs) of the front and leaf-pair buffers; they grow on demand (and
    /// stay grown in the device's pool), so this only trades memory against reruns (tests set 1
    /// to force the grow-and-rerun path).
    pub initial_capacity: usize,
}

impl Default for GpuDistanceOptions {
    /// Exact distance.
    fn default() -> Self {
        Self {
            abs_tol: 0.0,
            rel_tol: 0.0,
            threshold: None,
            initial_capacity: 1 << 12,
        }
    }
}

/// What the traversal did (for tests and tuning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuDistanceStats {
    /// Levels traversed (of the last run).
    pub levels: u32,
    /// Child pairs whose bounds were computed (last run).
    pub child_pairs: u64,
    /// Triangle pairs evaluated on the device, the seed included (last run).
    pub leaf_pairs: u64,
    /// Triangle pairs the device left to the host (an uncertified exact sign).
    pub host_pairs: u64,
    /// Runs repeated after a buffer overflow.
    pub reruns: u32,
    /// Host synchronisations (all runs).
    pub syncs: u32,
}

/// The best triangle pair so far.
#[derive(Clone, Copy, Debug)]
struct Best {
    d: f64,
    pa: DVec3,
    pb: DVec3,
    ta: u32,
    tb: u32,
}

impl Best {
    /// Smaller distance, or equal distance and smaller faces (NaN never wins).
    fn beats(&self, o: &Best) -> bool {
        self.d < o.d || (self.d == o.d && (self.ta, self.tb) < (o.ta, o.tb))
    }
}

/// What one run (a traversal to its end or to an overflow) handed back.
struct Run {
    out: DistanceOut,
    host_pairs: Vec<[u32; 2]>,
}

fn check_options(opts: &GpuDistanceOptions) -> Result<()> {
    for (what, value) in [("abs_tol", opts.abs_tol), ("rel_tol", opts.rel_tol)] {
        if value.is_nan() || value < 0.0 {
            return Err(CudaError::InvalidOption { what, value });
        }
    }
    if let Some(t) = opts.threshold {
        if t.is_nan() {
            return Err(CudaError::InvalidOption {
                what: "threshold",
                value: t,
            });
        }
    }
    Ok(())
}

fn check_pose(pose: &Pose64, side: &'static str) -> Result<()> {
    if pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(CudaError::NonFinitePose { side });
    }
    Ok(())
}

fn check_object(o: &DistanceObject<'_, Rss>, side: &'static str) -> Result<()> {
    if o.mesh.face_count() == 0 {
        return Err(CudaError::InvalidBvh(format!(
            "object {side}: the mesh has no faces"
        )));
    }
    validate_tree(o).map_err(|e| CudaError::InvalidBvh(format!("object {side}: {e}")))?;
    check_pose(&o.pose, side)
}

impl Device {
    /// Minimum distance between two posed meshes, the closest points (world) and the two faces,
    /// with `lower ≤ distance ≤ upper` for the requested tolerance — the device twin of
    /// `gprox_query::distance::distance` (see the module docs). Makes both meshes resident for
    /// this one query: keep [`ResidentDistanceMesh`]es and call [`Device::distance_resident`]
    /// to query them many times.
    ///
    /// ```
    /// use gprox_bvh::{bv_tree::BvTree, rss::Rss};
    /// use gprox_cuda::{Device, distance::GpuDistanceOptions};
    /// use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
    /// use gprox_query::distance::DistanceObject;
    /// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let tree = BvTree::<Rss>::build(&tri);
    /// let a = DistanceObject { mesh: &tri, tree: &tree, pose: Pose64::IDENTITY };
    /// let mut pose = Pose64::IDENTITY;
    /// pose.rows[2][3] = 2.0; // lift B by 2 along z
    /// let b = DistanceObject { pose, ..a };
    /// let r = Device::emulated().distance(&a, &b, &GpuDistanceOptions::default()).unwrap();
    /// assert_eq!(r.distance, 2.0);
    /// assert!(r.lower <= r.distance && r.distance <= r.upper);
    /// ```
    pub fn distance(
        &self,
        a: &DistanceObject<'_, Rss>,
        b: &DistanceObject<'_, Rss>,
        opts: &GpuDistanceOptions,
    ) -> Result<DistanceResult> {
        Ok(self.distance_with_stats(a, b, opts)?.0)
    }

    /// [`Device::distance`], also returning what the traversal did.
    pub fn distance_with_stats(
        &self,
        a: &DistanceObject<'_, Rss>,
        b: &DistanceObject<'_, Rss>,
        opts: &GpuDistanceOptions,
    ) -> Result<(DistanceResult, GpuDistanceStats)> {
        check_options(opts)?;
        check_object(a, "a")?;
        check_object(b, "b")?;
        let ra = ResidentDistanceMesh::upload(self, a.mesh, a.tree)?;
        let rb = ResidentDistanceMesh::upload(self, b.mesh, b.tree)?;
        self.distance_resident_with_stats(&ra, &a.pose, &rb, &b.pose, opts)
    }

    /// [`Device::distance`] between two resident meshes at the given poses: nothing is uploaded
    /// but kernel parameters, the levels run on the device and the host synchronises once in
    /// the common case (once more per rerun after a buffer overflow, which warm queries do not
    /// see: grown buffers stay in the device's pool).
    pub fn distance_resident(
        &self,
        a: &ResidentDistanceMesh,
        pose_a: &Pose64,
        b: &ResidentDistanceMesh,
        pose_b: &Pose64,
        opts: &GpuDistanceOptions,
    ) -> Result<DistanceResult> {
        Ok(self
            .distance_resident_with_stats(a, pose_a, b, pose_b, opts)?
            .0)
    }

    /// [`Device::distance_resident`], also returning what the traversal did.
    pub fn distance_resident_with_stats(
        &self,
        a: &ResidentDistanceMesh,
        pose_a: &Pose64,
        b: &ResidentDistanceMesh,
        pose_b: &Pose64,
        opts: &GpuDistanceOptions,
    ) -> Result<(DistanceResult, GpuDistanceStats)> {
        check_options(opts)?;
        for (r, side) in [(a, "a"), (b, "b")] {
            if r.device().id() != self.id() {
                return Err(CudaError::InvalidBvh(format!(
                    "object {side}: the resident mesh lives on another device"
                )));
            }
        }
        check_pose(pose_a, "a")?;
        check_pose(pose_b, "b")?;

        // The relative frame, exactly as the CPU traversal computes it.
        let (ma, ta) = pose_parts(pose_a);
        let (mb, tb) = pose_parts(pose_b);
        let inv = ma.inverse();
        let (q, eps) = nearest_rotation(&(inv * mb));
        let sigma = 1.0 / stretch(&inv);
        let t = inv * (tb - ta);
        let grow = if eps.is_finite() {
            eps * b.reach()
        } else {
            f64::INFINITY
        };
        let sigma = if sigma.is_finite() && eps.is_finite() {
            sigma
        } else {
            0.0
        };
        let threshold = opts.threshold.unwrap_or(f64::INFINITY);
        let base = DistanceQueryParams {
            pose_a: *pose_a,
            pose_b: *pose_b,
            a: a.tree(),
            b: b.tree(),
            q: mat_cols(&q),
            t: t.to_array(),
            grow,
            sigma,
            abs_tol: opts.abs_tol,
            rel_tol: opts.rel_tol,
            threshold,
            state: 0,
            front: 0,
            next: 0,
            lower: 0,
            leaves: 0,
            leaf_d: 0,
            host: 0,
            out: 0,
            front_capacity: 0,
            leaf_capacity: 0,
            host_capacity: 0,
            has_threshold: u32::from(opts.threshold.is_some()),
        };
        let levels = a.depth().max(b.depth());

        let mut stats = GpuDistanceStats::default();
        let mut front_cap = opts.initial_capacity.clamp(1, MAX_FRONT);
        let mut leaf_cap = opts.initial_capacity.clamp(1, MAX_PAIRS);
        let mut host_cap = HOST_CAPACITY;
        let run = loop {
            let run =
                self.distance_run(&base, levels, front_cap, leaf_cap, host_cap, &mut stats)?;
            if run.out.status == STATUS_DONE {
                break run;
            }
            // A buffer was too small (the counters counted past it): grow to what was needed.
            stats.reruns += 1;
            let o = &run.out;
            front_cap = front_cap.max(o.need_front as usize);
            leaf_cap = leaf_cap.max(o.need_leaves as usize);
            host_cap = host_cap.max(o.host_count as usize);
            for (what, count, max) in [
                ("distance front", front_cap, MAX_FRONT),
                ("distance leaf pairs", leaf_cap, MAX_PAIRS),
                ("distance host pairs", host_cap, MAX_PAIRS),
            ] {
                if count > max {
                    return Err(CudaError::TooLarge { what, count, max });
                }
            }
        };
        let o = &run.out;
        stats.levels = o.levels;
        stats.child_pairs = o.child_pairs;
        stats.leaf_pairs = o.leaf_pairs;
        stats.host_pairs = o.host_count as u64;

        let mut best = (o.tri_a != u32::MAX).then(|| Best {
            d: o.distance,
            pa: DVec3::from_array(o.point_a),
            pb: DVec3::from_array(o.point_b),
            ta: o.tri_a,
            tb: o.tri_b,
        });
        // The pairs the device could not decide: the host's exact function.
        let exact = |fa: u32, fb: u32| {
            let x = transform_triangle(pose_a, a.mesh().triangle(fa as usize));
            let y = transform_triangle(pose_b, b.mesh().triangle(fb as usize));
            let r = triangle_distance(&x, &y);
            Best {
                d: r.distance,
                pa: r.point_a,
                pb: r.point_b,
                ta: fa,
                tb: fb,
            }
        };
        for &[fa, fb] in &run.host_pairs {
            let c = exact(fa, fb);
            if best.is_none_or(|bst| c.beats(&bst)) {
                best = Some(c);
            }
        }
        // No finite distance anywhere (non-finite input): the host's answer for the seed.
        let best = best.unwrap_or_else(|| exact(a.seed(), b.seed()));
        let result = DistanceResult {
            distance: best.d,
            lower: o.lower.min(best.d).max(0.0),
            upper: best.d,
            point_a: best.pa,
            point_b: best.pb,
            tri_a: best.ta,
            tri_b: best.tb,
            below_threshold: opts.threshold.is_some() && best.d < threshold,
        };
        Ok((result, stats))
    }

    /// One traversal with buffers of the given capacities (pairs), leased from the pool: init,
    /// `levels` levels and finish enqueued, one synchronisation (more only if the traversal
    /// is deeper than `levels`). Ends done or overflowed.
    fn distance_run(
        &self,
        base: &DistanceQueryParams,
        levels: u32,
        front_cap: usize,
        leaf_cap: usize,
        host_cap: usize,
        stats: &mut GpuDistanceStats,
    ) -> Result<Run> {
        let fronts: [Lease<DeviceBuffer<u32>>; 2] = [
            self.lease("distance.front.0", 2 * front_cap)?,
            self.lease("distance.front.1", 2 * front_cap)?,
        ];
        let front_cap = (fronts[0].len().min(fronts[1].len()) / 2).min(MAX_FRONT);
        let lower: Lease<DeviceBuffer<f64>> = self.lease("distance.lower", 64 * front_cap)?;
        let leaves: Lease<DeviceBuffer<u32>> = self.lease("distance.leaves", 2 * leaf_cap)?;
        let leaf_d: Lease<DeviceBuffer<f64>> = self.lease("distance.leaf_d", leaf_cap)?;
        let leaf_cap = (leaves.len() / 2).min(leaf_d.len()).min(MAX_PAIRS);
        let state: Lease<DeviceBuffer<DistanceState>> = self.lease("distance.state", 1)?;
        let host: Lease<MappedBuffer<u32>> = self.lease("distance.host", 2 * host_cap)?;
        let host_cap = (host.len() / 2).min(MAX_PAIRS);
        let out: Lease<MappedBuffer<DistanceOut>> = self.lease("distance.out", 1)?;

        let mut p = DistanceQueryParams {
            state: state.device_ptr(),
            front: fronts[0].device_ptr(),
            next: fronts[1].device_ptr(),
            lower: lower.device_ptr(),
            leaves: leaves.device_ptr(),
            leaf_d: leaf_d.device_ptr(),
            host: host.device_ptr(),
            out: out.device_ptr(),
            front_capacity: front_cap as u32,
            leaf_capacity: leaf_cap as u32,
            host_capacity: host_cap as u32,
            ..*base
        };
        let grid = self.distance_grid();
        let block = self.block_size();
        // SAFETY (every launch below): the trees and meshes in `p` are live resident buffers;
        // the state, fronts (2·front_capacity entries each), lower (64·front_capacity), leaves
        // (2·leaf_capacity), leaf_d (leaf_capacity), host (2·host_capacity, mapped) and out
        // (mapped) are the leases above, alive until after the synchronisation; the kernels
        // write within those capacities and count what did not fit.
        unsafe { self.launch(Kernel::DistanceInit, 1, 1, &p)? };
        let mut level = 0u32;
        let mut batch = levels.max(1);
        loop {
            for _ in 0..batch {
                p.front = fronts[(level % 2) as usize].device_ptr();
                p.next = fronts[((level + 1) % 2) as usize].device_ptr();
                // SAFETY: as above.
                unsafe {
                    self.launch(Kernel::DistanceExpand, grid, block, &p)?;
                    self.launch(Kernel::DistanceFilter, grid, block, &p)?;
                    self.launch(Kernel::DistanceTriangles, grid, block, &p)?;
                    self.launch(Kernel::DistanceStep, 1, block, &p)?;
                }
                level += 1;
            }
            // SAFETY: as above.
            unsafe { self.launch(Kernel::DistanceFinish, 1, 1, &p)? };
            self.synchronize()?;
            stats.syncs += 1;
            let o = out.read(0, 1)[0];
            if o.status != STATUS_RUNNING {
                let host_pairs = if o.status == STATUS_DONE && o.host_count > 0 {
                    let mut flat = host.read(0, 2 * o.host_count as usize);
                    let pairs: &mut [[u32; 2]] = bytemuck::cast_slice_mut(&mut flat);
                    pairs.sort_unstable();
                    pairs.to_vec()
                } else {
                    Vec::new()
                };
                return Ok(Run { out: o, host_pairs });
            }
            // Deeper than expected (every level descends one wide level, so this is not reached
            // with the trees' depths): more levels.
            if level > 4 * levels + 8 {
                return Err(CudaError::InvalidBvh(format!(
                    "the distance traversal did not end after {level} levels"
                )));
            }
            batch = levels.max(1);
        }
    }

    /// Blocks of the grid-stride distance kernels.
    fn distance_grid(&self) -> u32 {
        if self.is_emulated() {
            4
        } else {
            self.multiprocessors() * 8
        }
    }

    /// Minimum of the first `count` values with the index of its first occurrence, by repeated
    /// block reductions on the device (`gprox_distance_min`); (∞, u32::MAX) for none.
    pub fn min_reduce(&self, values: &DeviceBuffer<f64>, count: usize) -> Result<(f64, u32)> {
        let count = count.min(values.len());
        if count == 0 {
            return Ok((f64::INFINITY, u32::MAX));
        }
        let mut n = count;
        let mut current: Option<(DeviceBuffer<f64>, DeviceBuffer<u32>)> = None;
        loop {
            let blocks = self.blocks_for(n);
            let out_v = self.alloc_zeros::<f64>(blocks as usize)?;
            let out_i = self.alloc_zeros::<u32>(blocks as usize)?;
            let (vin, iin) = match &current {
                None => (values.device_ptr(), 0),
                Some((v, i)) => (v.device_ptr(), i.device_ptr()),
            };
            let p = DistanceMinParams {
                values: vin,
                indices: iin,
                out_values: out_v.device_ptr(),
                out_indices: out_i.device_ptr(),
                count: n as u32,
                pad: 0,
            };
            // SAFETY: the inputs hold n values (and indices), the outputs one per block.
            unsafe { self.launch(Kernel::DistanceMin, blocks, self.block_size(), &p)? };
            n = blocks as usize;
            current = Some((out_v, out_i));
            if n == 1 {
                break;
            }
        }
        let (v, i) = current.expect("at least one pass");
        Ok((v.download()?[0], i.download()?[0]))
    }
}

/// Columns of a matrix as arrays (the layout of `double q[3][3]`).
fn mat_cols(m: &DMat3) -> [[f64; 3]; 3] {
    [
        m.x_axis.to_array(),
        m.y_axis.to_array(),
        m.z_axis.to_array(),
    ]
}
