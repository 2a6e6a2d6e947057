//! Separation distance between two posed meshes on the device (gProximity §4.2): a
//! level-synchronous traversal of two 8-wide RSS trees with a min-reduction of the upper bound
//! between levels (`kernels/cuda/distance.cu`). The CPU twin is `gprox_query::distance::distance`;
//! both take the same [`DistanceObject`]s and return the same [`DistanceResult`] — the same
//! distance, bit for bit (the triangle distance is mirrored function by function, and the few
//! pairs whose exact orientation signs the device filter cannot certify are finished on the host
//! by `gprox_geometry::tri_distance::triangle_distance` itself).
//!
//! One level: every surviving pair of wide-tree entities expands to ≤ 64 child pairs, each with a
//! world lower bound (B's RSS mapped into A's model frame by the nearest rotation of the
//! relative pose, inflated by its residual — the CPU's bound) and a cheap upper bound (the
//! distance of two representative vertices below the pair); a min-reduction of the upper bounds,
//! then a filter keeps the pairs that can still matter and sends two-leaf pairs to the exact
//! triangle kernel, whose distances are min-reduced (with argmin) into the best pair. Buffers grow
//! and the filter reruns when they overflow: nothing is ever dropped.
//!
//! Pruning: a pair is dropped when its lower bound exceeds the best representative bound
//! (strictly, so the pair behind that bound stays), or reaches `cut(U)` for the best triangle
//! distance `U` (`U − max(abs_tol, rel_tol·U)`, and at most the threshold). The result carries
//! `lower ≤ true distance ≤ upper = distance` with `upper − lower ≤ max(abs_tol, rel_tol·upper)`.

use glam::{DMat3, DVec3};
use gprox_bvh::bounding_volume::{nearest_rotation, pose_parts, stretch, BoundingVolume};
use gprox_bvh::rss::Rss;
use gprox_bvh::wide::{Wide8Node, WideTree, EMPTY, LEAF_BIT};
use gprox_geometry::transform::transform_triangle;
use gprox_geometry::tri_distance::triangle_distance;
use gprox_query::distance::{validate_tree, DistanceObject, DistanceResult};

use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::lbvh::DeviceMesh;

mod params;
pub use params::{
    DeviceRss, DistanceExpandParams, DistanceFilterParams, DistanceMinParams, DistanceTree,
    DistanceTrianglesParams,
};

/// Front entity "root of the tree" (`GPROX_DIST_ROOT`).
pub const ROOT: u32 = 0xffff_fffe;
/// Largest front the expand kernel takes (its `64 · count` thread indices fit in u32).
pub const MAX_FRONT: usize = (1 << 26) - 1;

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
    /// Initial capacity (pairs) of the next-front and leaf-pair buffers; they grow on demand, so
    /// this only trades memory against reruns (tests set 1 to force the grow-and-rerun path).
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
    /// Levels traversed (expand launches).
    pub levels: u32,
    /// Child pairs whose bounds were computed.
    pub child_pairs: u64,
    /// Leaf (triangle) pairs evaluated.
    pub leaf_pairs: u64,
    /// Triangle pairs the device left to the host (an uncertified exact sign).
    pub host_pairs: u64,
    /// Filter reruns after a buffer overflow.
    pub reruns: u32,
}

/// A wide tree on the device.
struct DeviceWide {
    children: DeviceBuffer<u32>,
    bvs: DeviceBuffer<Rss>,
    reps: DeviceBuffer<u32>,
    /// Host copy of the slots (for the seed pair).
    reps_host: Vec<u32>,
    mesh: DeviceMesh,
}

impl DeviceWide {
    fn tree(&self) -> DistanceTree {
        DistanceTree {
            children: self.children.device_ptr(),
            bvs: self.bvs.device_ptr(),
            reps: self.reps.device_ptr(),
            positions: self.mesh.positions.device_ptr(),
            faces: self.mesh.faces.device_ptr(),
        }
    }
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

/// A face below every slot of a wide tree (slot's own face for a leaf, the first slot's
/// representative of the child node otherwise); 0 for empty slots.
pub fn representatives(tree: &WideTree<Rss, Wide8Node>) -> Vec<u32> {
    let mut reps = vec![0u32; tree.nodes.len() * 8];
    // Children are created after their parents, so a reverse sweep sees them first.
    for k in (0..tree.nodes.len()).rev() {
        for s in 0..8 {
            let c = tree.nodes[k].children[s];
            reps[k * 8 + s] = if c == EMPTY {
                0
            } else if c & LEAF_BIT != 0 {
                c & !LEAF_BIT
            } else {
                reps[c as usize * 8]
            };
        }
    }
    reps
}

fn check_object(o: &DistanceObject<'_, Rss>, side: &'static str) -> Result<()> {
    if o.mesh.face_count() == 0 {
        return Err(CudaError::InvalidBvh(format!(
            "object {side}: the mesh has no faces"
        )));
    }
    validate_tree(o).map_err(|e| CudaError::InvalidBvh(format!("object {side}: {e}")))?;
    if o.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(CudaError::NonFinitePose { side });
    }
    Ok(())
}

impl Device {
    /// Minimum distance between two posed meshes, the closest points (world) and the two faces,
    /// with `lower ≤ distance ≤ upper` for the requested tolerance — the device twin of
    /// `gprox_query::distance::distance` (see the module docs).
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
        check_object(a, "a")?;
        check_object(b, "b")?;
        let wa = self.upload_wide(a)?;
        let wb = self.upload_wide(b)?;

        // The relative frame, exactly as the CPU traversal computes it.
        let (ma, ta) = pose_parts(&a.pose);
        let (mb, tb) = pose_parts(&b.pose);
        let inv = ma.inverse();
        let (q, eps) = nearest_rotation(&(inv * mb));
        let sigma = 1.0 / stretch(&inv);
        let t = inv * (tb - ta);
        let grow = if eps.is_finite() {
            eps * b.tree.nodes[0].bv.reach()
        } else {
            f64::INFINITY
        };
        let sigma = if sigma.is_finite() && eps.is_finite() {
            sigma
        } else {
            0.0
        };
        let threshold = opts.threshold.unwrap_or(f64::INFINITY);
        let cut = |u: f64| (u - opts.abs_tol.max(opts.rel_tol * u)).min(threshold);

        let mut stats = GpuDistanceStats::default();
        // Seed (like the CPU's greedy descent): the representative faces of the roots' first
        // slots, so a best pair always exists.
        let seed = [wa.reps_host[0], wb.reps_host[0]];
        let mut best = match self.leaf_pairs(a, b, &wa, &wb, &self.upload(&seed)?, 1, &mut stats)? {
            Some(found) => found,
            // A non-finite device distance (non-finite input): the host's answer for the seed.
            None => {
                let x = transform_triangle(&a.pose, a.mesh.triangle(seed[0] as usize));
                let y = transform_triangle(&b.pose, b.mesh.triangle(seed[1] as usize));
                let r = triangle_distance(&x, &y);
                Best {
                    d: r.distance,
                    pa: r.point_a,
                    pb: r.point_b,
                    ta: seed[0],
                    tb: seed[1],
                }
            }
        };
        let mut rep_bound = f64::INFINITY;
        let mut lower = f64::INFINITY;
        let mut capacity = opts.initial_capacity.max(1);
        let mut front = self.upload(&[ROOT, ROOT])?;
        let mut count = 1usize;
        let base = DistanceExpandParams {
            pose_a: a.pose,
            pose_b: b.pose,
            a: wa.tree(),
            b: wb.tree(),
            q: mat_cols(&q),
            t: t.to_array(),
            grow,
            sigma,
            front: 0,
            lower: 0,
            upper: 0,
            count: 0,
            pad: 0,
        };
        while count > 0 {
            if count > MAX_FRONT {
                return Err(CudaError::TooLarge {
                    what: "distance front",
                    count,
                    max: MAX_FRONT,
                });
            }
            stats.levels += 1;
            let children = 64 * count;
            stats.child_pairs += children as u64;
            let lo = self.alloc_zeros::<f64>(children)?;
            let up = self.alloc_zeros::<f64>(children)?;
            let p = DistanceExpandParams {
                front: front.device_ptr(),
                lower: lo.device_ptr(),
                upper: up.device_ptr(),
                count: count as u32,
                ..base
            };
            // SAFETY: front holds `count` pairs of valid entities, lo/up 64·count values, the
            // trees and meshes are the uploaded, validated ones.
            unsafe {
                self.launch(
                    Kernel::DistanceExpand,
                    self.blocks_for(children),
                    self.block_size(),
                    &p,
                )?
            };
            rep_bound = rep_bound.min(self.min_reduce(&up, children)?.0);

            // Filter, growing the buffers until everything fits.
            let pruned = self.alloc_zeros::<f64>(children)?;
            let (next, leaves, next_count, leaf_count) = loop {
                let next = self.alloc_zeros::<u32>(2 * capacity)?;
                let leaves = self.alloc_zeros::<u32>(2 * capacity)?;
                let counters = self.alloc_zeros::<u32>(2)?;
                let p = DistanceFilterParams {
                    children_a: wa.children.device_ptr(),
                    children_b: wb.children.device_ptr(),
                    front: front.device_ptr(),
                    lower: lo.device_ptr(),
                    pruned: pruned.device_ptr(),
                    next: next.device_ptr(),
                    leaves: leaves.device_ptr(),
                    counters: counters.device_ptr(),
                    rep_bound,
                    cut: cut(best.d),
                    count: count as u32,
                    next_capacity: capacity as u32,
                    leaf_capacity: capacity as u32,
                    pad: 0,
                };
                // SAFETY: as for the expand launch; next/leaves hold `capacity` pairs.
                unsafe {
                    self.launch(
                        Kernel::DistanceFilter,
                        self.blocks_for(children),
                        self.block_size(),
                        &p,
                    )?
                };
                let c = counters.download()?;
                let needed = c[0].max(c[1]) as usize;
                if needed > capacity {
                    stats.reruns += 1;
                    capacity = needed;
                    continue;
                }
                break (next, leaves, c[0] as usize, c[1] as usize);
            };
            lower = lower.min(self.min_reduce(&pruned, children)?.0);
            if let Some(found) = self.leaf_pairs(a, b, &wa, &wb, &leaves, leaf_count, &mut stats)? {
                if found.d < best.d {
                    best = found;
                }
            }
            if opts.threshold.is_some() && best.d < threshold && next_count > 0 {
                // Early stop: every pair left is covered by this level's bounds.
                lower = lower.min(self.min_reduce(&lo, children)?.0);
                break;
            }
            front = next;
            count = next_count;
        }
        let result = DistanceResult {
            distance: best.d,
            lower: lower.min(best.d).max(0.0),
            upper: best.d,
            point_a: best.pa,
            point_b: best.pb,
            tri_a: best.ta,
            tri_b: best.tb,
            below_threshold: opts.threshold.is_some() && best.d < threshold,
        };
        Ok((result, stats))
    }

    /// Collapses an object's binary RSS tree to 8 wide and uploads it with its mesh.
    fn upload_wide(&self, o: &DistanceObject<'_, Rss>) -> Result<DeviceWide> {
        let wide = WideTree::<Rss, Wide8Node>::from_binary(o.tree)
            .map_err(|e| CudaError::InvalidBvh(e.to_string()))?;
        let children: Vec<u32> = wide.nodes.iter().flat_map(|n| n.children).collect();
        let reps = representatives(&wide);
        Ok(DeviceWide {
            children: self.upload(&children)?,
            bvs: self.upload(&wide.bvs)?,
            reps: self.upload(&reps)?,
            reps_host: reps,
            mesh: self.upload_mesh(o.mesh)?,
        })
    }

    /// Exact distances of `count` leaf pairs: the triangle kernel, its min-reduction (argmin),
    /// and the host's exact function for the pairs the device left undecided. None for no pairs.
    #[allow(clippy::too_many_arguments)]
    fn leaf_pairs(
        &self,
        a: &DistanceObject<'_, Rss>,
        b: &DistanceObject<'_, Rss>,
        wa: &DeviceWide,
        wb: &DeviceWide,
        pairs: &DeviceBuffer<u32>,
        count: usize,
        stats: &mut GpuDistanceStats,
    ) -> Result<Option<Best>> {
        if count == 0 {
            return Ok(None);
        }
        stats.leaf_pairs += count as u64;
        let distances = self.alloc_zeros::<f64>(count)?;
        let points = self.alloc_zeros::<f64>(6 * count)?;
        let undecided = self.alloc_zeros::<u32>(count)?;
        let counters = self.alloc_zeros::<u32>(1)?;
        let p = DistanceTrianglesParams {
            pose_a: a.pose,
            pose_b: b.pose,
            positions_a: wa.mesh.positions.device_ptr(),
            faces_a: wa.mesh.faces.device_ptr(),
            positions_b: wb.mesh.positions.device_ptr(),
            faces_b: wb.mesh.faces.device_ptr(),
            pairs: pairs.device_ptr(),
            distances: distances.device_ptr(),
            points: points.device_ptr(),
            undecided: undecided.device_ptr(),
            counters: counters.device_ptr(),
            count: count as u32,
            pad: 0,
        };
        // SAFETY: pairs holds `count` face pairs of the two uploaded meshes; the outputs hold
        // count, 6·count, count and 1 entries.
        unsafe {
            self.launch(
                Kernel::DistanceTriangles,
                self.blocks_for(count),
                self.block_size(),
                &p,
            )?
        };
        let (d, i) = self.min_reduce(&distances, count)?;
        let mut best: Option<Best> = None;
        if d.is_finite() {
            let i = i as usize;
            let pts = points.download_prefix(6 * (i + 1))?;
            let face = pairs.download_prefix(2 * (i + 1))?;
            let x = &pts[6 * i..6 * i + 6];
            best = Some(Best {
                d,
                pa: DVec3::new(x[0], x[1], x[2]),
                pb: DVec3::new(x[3], x[4], x[5]),
                ta: face[2 * i],
                tb: face[2 * i + 1],
            });
        }
        let host = counters.download()?[0] as usize;
        if host > 0 {
            stats.host_pairs += host as u64;
            let mut idx = undecided.download_prefix(host)?;
            idx.sort_unstable();
            let faces = pairs.download_prefix(2 * count)?;
            for k in idx {
                let (fa, fb) = (faces[2 * k as usize], faces[2 * k as usize + 1]);
                let x = transform_triangle(&a.pose, a.mesh.triangle(fa as usize));
                let y = transform_triangle(&b.pose, b.mesh.triangle(fb as usize));
                let r = triangle_distance(&x, &y);
                if best.is_none_or(|bst| r.distance < bst.d) {
                    best = Some(Best {
                        d: r.distance,
                        pa: r.point_a,
                        pb: r.point_b,
                        ta: fa,
                        tb: fb,
                    });
                }
            }
        }
        Ok(best)
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
