//! Image-space per-sample depths on the device (`kernels/cuda/image_depth.cu`): the §5.4 step
//! of `gprox_query::image_space::intersect` (Hoff, Zaferakis, Lin, Manocha 2002) — the nearest
//! face, distance and closest point of both surfaces for every sample inside both meshes —
//! for the samples of a [`SweepSamples`].
//!
//! One thread per sample and mesh walks the resident tree depth first (the device twin of the
//! CPU's `World::nearest`), with conservative world boxes and a pruning slack above every
//! rounding, and the triangle distance mirrored from `gprox_geometry::tri_distance` (glam's
//! operation order, no FMA): every decided sample is the exact minimum over all faces (smallest
//! face id among ties), bit for bit the CPU's. A walk deeper than its stack leaves the sample
//! [`UNDECIDED_FACE`] and [`SweepSamples::finish`] computes it on the host.
//!
//! Costs: one launch per tree for its world boxes (`gprox_world_boxes`), then the samples in
//! batches of [`DEPTH_BATCH`], each one upload of its cells (12 B per sample), one launch,
//! **one** host synchronisation and a read of its results (2 × 40 B per sample); no allocation
//! once the pool has the buffers.
//!
//! [`SweepSamples`]: gprox_query::image_space::SweepSamples
//! [`SweepSamples::finish`]: gprox_query::image_space::SweepSamples::finish

use glam::DVec3;
use gprox_bvh::Aabb;
use gprox_geometry::transform::Pose64;
use gprox_query::image_space::{Lattice, SurfacePoint, UNDECIDED_FACE};

use crate::collide::ResidentObject;
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::params::params;

/// Samples per batch (one launch and one synchronisation each; 10 MiB of results).
pub const DEPTH_BATCH: usize = 1 << 17;

/// `ImageDepth::status`: certified (`GPROX_DEPTH_DECIDED`).
pub const DEPTH_DECIDED: u32 = 0;
/// `ImageDepth::status`: the walk's stack overflowed, the host computes the sample.
pub const DEPTH_UNDECIDED: u32 = 1;

/// The nearest point of one surface to one sample as the kernel writes it (`ImageDepth` in
/// `image_space.cuh`), 40 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ImageDepth {
    /// Distance from the sample.
    pub distance: f64,
    /// Closest point (world).
    pub point: [f64; 3],
    /// Its face.
    pub face: u32,
    /// [`DEPTH_DECIDED`] or [`DEPTH_UNDECIDED`].
    pub status: u32,
}

impl ImageDepth {
    /// As a [`SurfacePoint`] ([`UNDECIDED_FACE`] when not certified).
    pub fn surface_point(&self) -> SurfacePoint {
        if self.status != DEPTH_DECIDED {
            return SurfacePoint {
                distance: f64::NAN,
                point: DVec3::NAN,
                face: UNDECIDED_FACE,
            };
        }
        SurfacePoint {
            distance: self.distance,
            point: DVec3::from_array(self.point),
            face: self.face,
        }
    }
}

params!(
    /// `gprox_image_depths`: the nearest faces of two resident meshes to a batch of samples.
    ImageDepthParams {
        /// Pose of mesh A.
        pose_a: Pose64,
        /// Pose of mesh B.
        pose_b: Pose64,
        /// `const BvhNode[]` of A.
        nodes_a: u64,
        /// `const f32[3 * vertices]` of A.
        positions_a: u64,
        /// `const u32[3 * faces]` of A.
        faces_a: u64,
        /// `const BvhNode[]` of B.
        nodes_b: u64,
        /// `const f32[3 * vertices]` of B.
        positions_b: u64,
        /// `const u32[3 * faces]` of B.
        faces_b: u64,
        /// `const Aabb[]`: the world boxes of A's nodes (`gprox_world_boxes`, no margin).
        boxes_a: u64,
        /// `const Aabb[]`: the world boxes of B's nodes.
        boxes_b: u64,
        /// `const u32[3 * count]`: the samples' cells.
        cells: u64,
        /// Mapped `ImageDepth[2 * count]`: A's surface for every sample, then B's.
        out: u64,
        /// Lattice origin.
        origin: [f64; 3],
        /// Lattice spacing.
        spacing: f64,
        /// Samples.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

/// What [`Device::image_space_depths`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageDepthStats {
    /// Batches (one launch and one synchronisation each).
    pub batches: u32,
    /// Surface points (per sample and mesh) the device left undecided.
    pub undecided: u64,
}

impl Device {
    /// The nearest point of A's and of B's surface to the sample (cell centre of `lattice`) of
    /// every cell of `cells`, in the order and form
    /// [`SweepSamples::finish`](gprox_query::image_space::SweepSamples::finish) takes (an
    /// undecided sample has face [`UNDECIDED_FACE`]). `a` and `b` must be the meshes,
    /// positions and poses the sweep was made from.
    pub fn image_space_depths(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        lattice: &Lattice,
        cells: &[[u32; 3]],
    ) -> Result<([Vec<SurfacePoint>; 2], ImageDepthStats)> {
        a.check("a")?;
        b.check("b")?;
        let mut near = [
            Vec::with_capacity(cells.len()),
            Vec::with_capacity(cells.len()),
        ];
        let mut stats = ImageDepthStats::default();
        if cells.is_empty() {
            return Ok((near, stats));
        }
        // The world boxes of both trees, once (no synchronisation: the launches are ordered).
        let boxes_a = self.lease::<DeviceBuffer<Aabb>>("image.boxes_a", a.resident.nodes.len())?;
        let boxes_b = self.lease::<DeviceBuffer<Aabb>>("image.boxes_b", b.resident.nodes.len())?;
        self.world_boxes_into(&a.resident.nodes, &a.pose, 0.0, &boxes_a)?;
        self.world_boxes_into(&b.resident.nodes, &b.pose, 0.0, &boxes_b)?;
        for batch in cells.chunks(DEPTH_BATCH) {
            let n = batch.len();
            let mut input = self.lease::<DeviceBuffer<[u32; 3]>>("image.depth_cells", n)?;
            input.write_prefix(batch)?;
            let out = self.lease::<MappedBuffer<ImageDepth>>("image.depths", 2 * n)?;
            let p = ImageDepthParams {
                pose_a: a.pose,
                pose_b: b.pose,
                nodes_a: a.resident.nodes.device_ptr(),
                positions_a: a.resident.mesh.positions.device_ptr(),
                faces_a: a.resident.mesh.faces.device_ptr(),
                nodes_b: b.resident.nodes.device_ptr(),
                positions_b: b.resident.mesh.positions.device_ptr(),
                faces_b: b.resident.mesh.faces.device_ptr(),
                boxes_a: boxes_a.device_ptr(),
                boxes_b: boxes_b.device_ptr(),
                cells: input.device_ptr(),
                out: out.device_ptr(),
                origin: lattice.origin.to_array(),
                spacing: lattice.spacing,
                count: n as u32,
                pad: 0,
            };
            // SAFETY: `cells` holds `count` cells, `out` 2 * count records, the boxes one per
            // node of their trees; the resident meshes live for this call.
            unsafe {
                self.launch(
                    Kernel::ImageDepths,
                    self.blocks_for(2 * n),
                    self.block_size(),
                    &p,
                )?
            };
            self.synchronize()?;
            let got = out.read(0, 2 * n);
            for (side, half) in got.chunks_exact(n).enumerate() {
                for d in half {
                    if d.status != DEPTH_DECIDED {
                        stats.undecided += 1;
                    }
                    near[side].push(d.surface_point());
                }
            }
            stats.batches += 1;
        }
        Ok((near, stats))
    }
}
