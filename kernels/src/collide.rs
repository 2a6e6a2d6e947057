//! Mesh–mesh collision on the device: world boxes of both trees, a BVTT traversal producing
//! candidate face pairs, the filtered triangle-pair kernel, and the exact host test for the pairs
//! the filters cannot decide. The CPU twin is `gprox_query::collide::collide_all`; the results
//! are the same sets.
//!
//! Capacity is never a silent limit: the traversal kernel counts every pair it wanted to write;
//! when a front or the candidate buffer overflows, the host grows the buffer to the needed size
//! and reruns (a front launch is simply repeated; a candidate overflow reruns the traversal).

use gprox_bvh::{Aabb, Bvh, BvhNode};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;

use crate::balance::{
    BalanceOptions, BalanceStats, Traversal, TraversalOutput, TriSide, AABB_STRIDE,
};
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::lbvh::{validate_bvh, DeviceMesh};
use crate::params::{TriPairParams, WorldBoxesParams, BALANCE_ANY, PAIR_UNDECIDED};
use crate::resident::ResidentMesh;

/// One side of a collision query: a mesh, its BVH (from `gprox_bvh::lbvh::build` or
/// [`Device::build_bvh`]) and its rigid pose. Mirrors `gprox_query::collide::CollisionObject`.
#[derive(Clone, Copy, Debug)]
pub struct CollisionObject<'a> {
    /// The triangles (local coordinates).
    pub mesh: &'a TriMesh,
    /// The mesh's BVH.
    pub bvh: &'a Bvh,
    /// Local-to-world pose (world coordinates are `transform_point` in f64).
    pub pose: Pose64,
}

/// Options of [`Device::collide_all`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuCollideOptions {
    /// Pairs closer than this (world units, `>= 0`) count as colliding; 0 = touching or
    /// intersecting only.
    pub margin: f64,
    /// Initial capacity (in pairs) of the candidate buffer (and, in
    /// [`Device::collide_all_simple`], of the traversal fronts); the buffers grow on demand, so
    /// this only trades memory against reruns (tests set it to 1 to force the grow-and-rerun
    /// path).
    pub initial_capacity: usize,
}

impl Default for GpuCollideOptions {
    fn default() -> Self {
        Self {
            margin: 0.0,
            initial_capacity: 1 << 14,
        }
    }
}

/// Checks one side of a query: a valid LBVH with one leaf per face, a finite pose; returns the
/// number of leaves.
fn check_object(o: &CollisionObject<'_>, side: &'static str) -> Result<u32> {
    let faces = o.mesh.faces().len();
    let n = validate_bvh(o.bvh, faces)?;
    if n as usize != faces {
        return Err(CudaError::InvalidBvh(format!(
            "object {side}: the bvh has {n} leaves but the mesh has {faces} faces"
        )));
    }
    if o.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(CudaError::NonFinitePose { side });
    }
    Ok(n)
}

/// One side of a query on a [`ResidentMesh`]: the device copy, the same mesh on the host (its
/// current positions: the exact tests of pairs the device filters leave undecided run there),
/// and the pose.
#[derive(Clone, Copy, Debug)]
pub struct ResidentObject<'a> {
    /// The mesh and tree on the device.
    pub resident: &'a ResidentMesh,
    /// The same mesh on the host, at the positions last given to the resident copy.
    pub mesh: &'a TriMesh,
    /// Local-to-world pose.
    pub pose: Pose64,
}

impl<'a> ResidentObject<'a> {
    /// Bundles a resident mesh, its host copy and a pose.
    pub fn new(resident: &'a ResidentMesh, mesh: &'a TriMesh, pose: Pose64) -> Self {
        Self {
            resident,
            mesh,
            pose,
        }
    }

    /// Same face count on both copies, a finite pose.
    pub(crate) fn check(&self, side: &'static str) -> Result<()> {
        let faces = self.mesh.faces().len();
        if faces != self.resident.leaf_count() as usize {
            return Err(CudaError::InvalidBvh(format!(
                "object {side}: the resident mesh has {} faces but the host mesh {faces}",
                self.resident.leaf_count()
            )));
        }
        if self.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
            return Err(CudaError::NonFinitePose { side });
        }
        Ok(())
    }
}

/// A finite, non-negative margin.
pub(crate) fn check_margin(margin: f64) -> Result<()> {
    if margin >= 0.0 && margin.is_finite() {
        Ok(())
    } else {
        Err(CudaError::InvalidMargin(margin))
    }
}

/// World triangles of a face pair.
pub(crate) fn world_pair(
    a: &ResidentObject<'_>,
    b: &ResidentObject<'_>,
    [fa, fb]: [u32; 2],
) -> ([glam::DVec3; 3], [glam::DVec3; 3]) {
    (
        transform_triangle(&a.pose, a.mesh.triangle(fa as usize)),
        transform_triangle(&b.pose, b.mesh.triangle(fb as usize)),
    )
}

mod simple;

impl Device {
    /// Every pair `[face of a, face of b]` whose world triangles intersect (closed triangles;
    /// touching counts), or lie within `opts.margin` of each other; sorted, no duplicates.
    /// The BVTT runs through the balanced traversal ([`crate::balance`], default tuning).
    ///
    /// ```
    /// use gprox_cuda::{CollisionObject, Device, GpuCollideOptions};
    /// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
    /// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let bvh = gprox_bvh::lbvh::build(&tri);
    /// let a = CollisionObject { mesh: &tri, bvh: &bvh, pose: Pose64::IDENTITY };
    /// // The same triangle turned upright through the first one's interior.
    /// let turn = Affine3A::from_rotation_x(1.0) * Affine3A::from_translation(Vec3::new(0.1, 0.1, -0.5));
    /// let b = CollisionObject { pose: Pose64::from_affine(&turn), ..a };
    /// let pairs = Device::emulated().collide_all(&a, &b, &GpuCollideOptions::default()).unwrap();
    /// assert_eq!(pairs, vec![[0, 0]]);
    /// ```
    pub fn collide_all(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
    ) -> Result<Vec<[u32; 2]>> {
        let balance = BalanceOptions {
            initial_result_capacity: opts.initial_capacity.max(1),
            ..BalanceOptions::default()
        };
        Ok(self.collide_all_balanced(a, b, opts, &balance)?.0)
    }

    /// [`Device::collide_all`] with explicit tuning of the balanced traversal (gProximity
    /// §3.3, [`crate::balance`]); also returns what the traversal did.
    /// `opts.initial_capacity` is ignored (`balance.initial_result_capacity` sizes the results).
    /// Uploads both meshes for this one query: keep [`ResidentMesh`]es to query many times.
    pub fn collide_all_balanced(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
        balance: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let none = (Vec::new(), BalanceStats::default());
        self.uploaded(a, b, opts, none, |ra, rb| {
            self.collide_all_resident_balanced(ra, rb, opts, balance)
        })
    }

    /// Whether any triangle of `a` intersects (or, with a margin, comes within `opts.margin`
    /// of) any triangle of `b`. Uploads both meshes for this one query.
    pub fn collide_any(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
    ) -> Result<bool> {
        self.uploaded(a, b, opts, false, |ra, rb| {
            self.collide_any_resident(ra, rb, opts)
        })
    }

    /// Checks a one-off query's objects, uploads both as resident meshes and runs `query` on
    /// them; `none` is the answer when either has no faces.
    fn uploaded<R>(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
        none: R,
        query: impl FnOnce(&ResidentObject<'_>, &ResidentObject<'_>) -> Result<R>,
    ) -> Result<R> {
        check_margin(opts.margin)?;
        let na = check_object(a, "a")?;
        let nb = check_object(b, "b")?;
        if na == 0 || nb == 0 {
            return Ok(none);
        }
        let ra = ResidentMesh::new(self, a.mesh, a.bvh)?;
        let rb = ResidentMesh::new(self, b.mesh, b.bvh)?;
        query(
            &ResidentObject::new(&ra, a.mesh, a.pose),
            &ResidentObject::new(&rb, b.mesh, b.pose),
        )
    }

    /// [`Device::collide_all`] on resident meshes: nothing is uploaded but kernel parameters,
    /// the traversal's rounds run on the device, and the host synchronises once (in the common
    /// case) to read the compacted pairs. Work buffers come from the device's pool.
    ///
    /// ```
    /// use gprox_cuda::{Device, GpuCollideOptions, ResidentMesh, ResidentObject};
    /// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
    /// let d = Device::emulated();
    /// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let r = ResidentMesh::new(&d, &tri, &gprox_bvh::lbvh::build(&tri)).unwrap();
    /// let turn = Affine3A::from_rotation_x(1.0) * Affine3A::from_translation(Vec3::new(0.1, 0.1, -0.5));
    /// let a = ResidentObject::new(&r, &tri, Pose64::IDENTITY);
    /// let b = ResidentObject::new(&r, &tri, Pose64::from_affine(&turn));
    /// let opts = GpuCollideOptions::default();
    /// d.collide_all_resident(&a, &b, &opts).unwrap(); // warm-up: the pool's buffers
    /// let before = d.ops();
    /// assert_eq!(d.collide_all_resident(&a, &b, &opts).unwrap(), vec![[0, 0]]);
    /// let used = d.ops() - before;
    /// assert_eq!((used.syncs, used.h2d_bytes, used.allocations), (1, 0, 0));
    /// ```
    pub fn collide_all_resident(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        opts: &GpuCollideOptions,
    ) -> Result<Vec<[u32; 2]>> {
        let balance = BalanceOptions {
            initial_result_capacity: opts.initial_capacity.max(1),
            ..BalanceOptions::default()
        };
        Ok(self.collide_all_resident_balanced(a, b, opts, &balance)?.0)
    }

    /// [`Device::collide_all_resident`] with explicit tuning of the balanced traversal.
    pub fn collide_all_resident_balanced(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        opts: &GpuCollideOptions,
        balance: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        check_margin(opts.margin)?;
        a.check("a")?;
        b.check("b")?;
        if a.resident.leaf_count() == 0 || b.resident.leaf_count() == 0 {
            return Ok((Vec::new(), BalanceStats::default()));
        }
        // Margin 0: the triangle-pair kernel decides on the device, undecided pairs get the
        // exact host test. Margin > 0: every candidate gets the CPU's distance test (no GPU
        // distance kernel for pairs yet).
        let triangles = opts.margin == 0.0;
        let run = self.resident_traversal(a, b, opts.margin, triangles, 0, balance)?;
        let mut out: Vec<[u32; 2]> = Vec::with_capacity(run.pairs.len());
        for [fa, fb] in run.pairs {
            let undecided = fa & PAIR_UNDECIDED != 0;
            let pair = [fa & !PAIR_UNDECIDED, fb];
            let keep = if opts.margin > 0.0 {
                let (ta, tb) = world_pair(a, b, pair);
                triangle_distance(&ta, &tb).distance <= opts.margin
            } else if undecided {
                let (ta, tb) = world_pair(a, b, pair);
                triangles_intersect(&ta, &tb)
            } else {
                true
            };
            if keep {
                out.push(pair);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok((out, run.stats))
    }

    /// Whether the resident meshes intersect (or come within `opts.margin`): the traversal
    /// tests leaf pairs as it finds them and every task stops at the first certified
    /// intersecting pair (a flag on the device); pairs the filters leave undecided get the exact
    /// host test only when no certified one was found.
    pub fn collide_any_resident(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        opts: &GpuCollideOptions,
    ) -> Result<bool> {
        check_margin(opts.margin)?;
        a.check("a")?;
        b.check("b")?;
        if a.resident.leaf_count() == 0 || b.resident.leaf_count() == 0 {
            return Ok(false);
        }
        if opts.margin > 0.0 {
            let balance = BalanceOptions::default();
            let run = self.resident_traversal(a, b, opts.margin, false, 0, &balance)?;
            return Ok(run.pairs.into_iter().any(|pair| {
                let (ta, tb) = world_pair(a, b, pair);
                triangle_distance(&ta, &tb).distance <= opts.margin
            }));
        }
        let run =
            self.resident_traversal(a, b, 0.0, true, BALANCE_ANY, &BalanceOptions::default())?;
        if run.found {
            return Ok(true);
        }
        // Without a certified pair, every pair that came back is undecided.
        Ok(run.pairs.into_iter().any(|pair| {
            let (ta, tb) = world_pair(a, b, pair);
            triangles_intersect(&ta, &tb)
        }))
    }

    /// World boxes of both trees (pooled buffers) and the balanced traversal over them.
    fn resident_traversal(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        margin: f64,
        triangles: bool,
        flags: u32,
        balance: &BalanceOptions,
    ) -> Result<TraversalOutput> {
        let (ra, rb) = (a.resident, b.resident);
        let boxes_a = self.lease::<DeviceBuffer<Aabb>>("collide.boxes.a", ra.nodes.len())?;
        let boxes_b = self.lease::<DeviceBuffer<Aabb>>("collide.boxes.b", rb.nodes.len())?;
        self.world_boxes_into(&ra.nodes, &a.pose, margin * 0.5, &boxes_a)?;
        self.world_boxes_into(&rb.nodes, &b.pose, margin * 0.5, &boxes_b)?;
        let side = |o: &ResidentObject<'_>| TriSide {
            positions: o.resident.mesh.positions.device_ptr(),
            faces: o.resident.mesh.faces.device_ptr(),
            pose: o.pose,
        };
        let t = Traversal {
            nodes_a: ra.nodes.device_ptr(),
            nodes_b: rb.nodes.device_ptr(),
            boxes_a: [boxes_a.device_ptr(); 2],
            boxes_b: [boxes_b.device_ptr(); 2],
            box_stride: AABB_STRIDE,
            leaves_a: ra.leaf_count(),
            leaves_b: rb.leaf_count(),
            faces: 0,
            flags,
            min_separation: 0.0,
            triangles: triangles.then(|| [side(a), side(b)]),
            world: None,
        };
        self.run_traversal(&t, balance)
    }

    /// Runs the triangle-pair kernel on explicit `pairs` (face of `a`, face of `b`) and returns
    /// one status per pair: [`crate::params::TRI_SEPARATE`], [`crate::params::TRI_INTERSECT`]
    /// (both certified) or [`crate::params::TRI_UNDECIDED`]. For tests and diagnostics.
    pub fn tri_pair_status(
        &self,
        a: &TriMesh,
        pose_a: &Pose64,
        b: &TriMesh,
        pose_b: &Pose64,
        pairs: &[[u32; 2]],
    ) -> Result<Vec<u32>> {
        for (i, p) in pairs.iter().enumerate() {
            if p[0] as usize >= a.faces().len() || p[1] as usize >= b.faces().len() {
                return Err(CudaError::InvalidPair { index: i, pair: *p });
            }
        }
        let count = crate::lbvh::check_count("pairs", pairs.len())?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let flat: &[u32] = bytemuck::cast_slice(pairs);
        let buf = self.upload(flat)?;
        let (ma, mb) = (self.upload_mesh(a)?, self.upload_mesh(b)?);
        self.tri_pairs(&ma, pose_a, &mb, pose_b, &buf, count)?
            .download()
    }

    /// [`Device::world_boxes`] into `boxes` (at least as many as nodes).
    pub(crate) fn world_boxes_into(
        &self,
        nodes: &DeviceBuffer<BvhNode>,
        pose: &Pose64,
        margin: f64,
        boxes: &DeviceBuffer<Aabb>,
    ) -> Result<()> {
        let n = nodes.len();
        if boxes.len() < n {
            return Err(CudaError::LengthMismatch {
                device: boxes.len(),
                host: n,
            });
        }
        let p = WorldBoxesParams {
            pose: *pose,
            nodes: nodes.device_ptr(),
            boxes: boxes.device_ptr(),
            margin,
            count: n as u32,
            pad: 0,
        };
        // SAFETY: nodes and boxes both hold n entries.
        unsafe {
            self.launch(
                Kernel::WorldBoxes,
                self.blocks_for(n),
                self.block_size(),
                &p,
            )?
        };
        Ok(())
    }

    /// Runs the triangle-pair kernel over `count` candidate pairs; one status per pair.
    pub(crate) fn tri_pairs(
        &self,
        a: &DeviceMesh,
        pose_a: &Pose64,
        b: &DeviceMesh,
        pose_b: &Pose64,
        pairs: &DeviceBuffer<u32>,
        count: u32,
    ) -> Result<DeviceBuffer<u32>> {
        let status = self.alloc_zeros::<u32>(count as usize)?;
        let p = TriPairParams {
            pose_a: *pose_a,
            pose_b: *pose_b,
            positions_a: a.positions.device_ptr(),
            faces_a: a.faces.device_ptr(),
            positions_b: b.positions.device_ptr(),
            faces_b: b.faces.device_ptr(),
            pairs: pairs.device_ptr(),
            status: status.device_ptr(),
            count_at: 0,
            count,
            pad: 0,
        };
        // SAFETY: pairs holds `count` face pairs of the two uploaded meshes, status `count`.
        unsafe {
            self.launch(
                Kernel::TriPair,
                self.blocks_for(count as usize),
                self.block_size(),
                &p,
            )?
        };
        Ok(status)
    }
}
