//! Image-space inside classification on the device (`kernels/cuda/image_space.cu`): the §5.1
//! step of `gprox_query::image_space::intersect` (Hoff, Zaferakis, Lin, Manocha 2002) for the
//! tiles of an [`IntersectionSweep`].
//!
//! One block per (tile, mesh), one thread per ray column: the column's faces are gathered
//! through the resident tree, their crossings with the perturbed line computed by
//! `inside.cuh`'s `crossing` (the mirror of `penetration/inside.rs`), sorted by their lowest
//! coordinate along the column and swept with the active list of `column.rs`; one code per
//! sample and mesh goes to host-mapped memory. Signs are certified by filters (orient2d: the
//! branches of Shewchuk's filter, plus exactness of the computation; orient3d: `orient.cuh`);
//! a sign they cannot certify, a column with more faces than its scratch slots, or a tree
//! deeper than the walk's stack leave the column [`SAMPLE_UNDECIDED`] and the host classifies
//! it exactly ([`IntersectionSweep::finish`]), as the CCD kernels leave undecided pairs to the
//! host. Samples lying exactly on a face are always among those.
//!
//! Costs: the tiles are classified in batches (bounded scratch), each batch one upload of its
//! tile table (40 B per tile), one launch, **one** host synchronisation and a read of its
//! codes (2 B per cell); no allocation once the pool has the buffers.

use gprox_query::image_space::{IntersectionSweep, SAMPLE_UNDECIDED};

use crate::collide::ResidentObject;
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::params::params;
use gprox_geometry::transform::Pose64;

/// Extra code bit the kernel sets with [`SAMPLE_UNDECIDED`] when a column had more faces than
/// its scratch slots (the next query gets more).
pub const SAMPLE_OVERFLOW: u8 = 0x40;
/// Scratch slots (faces) per column and mesh of the first query; doubled after an overflow.
pub const IMAGE_CAPACITY: u32 = 64;
/// Scratch bytes per slot: an `ImageItem` (24 B) and an active-list entry (4 B).
const SLOT_BYTES: u64 = 28;
/// Scratch budget of one batch (bytes).
const BATCH_SCRATCH: u64 = 128 << 20;

/// One tile of a batch as the kernel reads it (`ImageTile` in `image_space.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ImageTile {
    /// First cell on every axis.
    pub lo: [u32; 3],
    /// One past the last cell on every axis.
    pub hi: [u32; 3],
    /// Column axis.
    pub axis: u32,
    /// Index of the tile's first column among the batch's columns.
    pub column_base: u32,
    /// Byte offset of the tile's codes (A's, then B's) in the batch's output.
    pub code_offset: u64,
}

params!(
    /// `gprox_image_columns`: classification of a batch of tiles against two resident meshes.
    ImageColumnsParams {
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
        /// `const ImageTile[count]`.
        tiles: u64,
        /// `ImageItem[2 * columns * capacity]` scratch.
        items: u64,
        /// `u32[2 * columns * capacity]` scratch.
        active: u64,
        /// Mapped `u8[]`: the codes.
        codes: u64,
        /// Lattice origin.
        origin: [f64; 3],
        /// Lattice spacing.
        spacing: f64,
        /// Tiles.
        count: u32,
        /// Scratch slots per column and mesh.
        capacity: u32,
    }
);

/// What [`Device::image_space_codes`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageSpaceStats {
    /// Batches (one launch and one synchronisation each).
    pub batches: u32,
    /// Columns (per mesh) the device left undecided.
    pub undecided_columns: u64,
    /// Of those, columns whose faces overflowed the scratch.
    pub overflow_columns: u64,
}

impl Device {
    /// The sample codes of every tile of `sweep` against the resident meshes `a` and `b`, in
    /// the layout [`IntersectionSweep::finish`] takes (which classifies the undecided columns
    /// on the CPU). `a` and `b` must be the meshes, positions and poses the sweep was made
    /// from.
    ///
    /// ```
    /// use gprox_cuda::{Device, ResidentMesh, ResidentObject};
    /// use gprox_geometry::{scene::torus, transform::Pose64};
    /// use gprox_query::collide::CollisionObject;
    /// use gprox_query::image_space::{intersect, ImageSpaceOptions, IntersectionSweep};
    /// let d = Device::emulated();
    /// let mesh = torus(1.0, 0.4, 16, 8).unwrap();
    /// let bvh = gprox_bvh::lbvh::build(&mesh);
    /// let r = ResidentMesh::new(&d, &mesh, &bvh).unwrap();
    /// let mut pose = Pose64::IDENTITY;
    /// pose.rows[0][3] = 0.5;
    /// let (a, b) = (CollisionObject::new(&mesh, &bvh, Pose64::IDENTITY).unwrap(),
    ///               CollisionObject::new(&mesh, &bvh, pose).unwrap());
    /// let opts = ImageSpaceOptions::new(0.15);
    /// let sweep = IntersectionSweep::new(&a, &b, &opts).unwrap();
    /// let (codes, _) = d.image_space_codes(
    ///     &ResidentObject::new(&r, &mesh, Pose64::IDENTITY),
    ///     &ResidentObject::new(&r, &mesh, pose),
    ///     &sweep,
    /// ).unwrap();
    /// let done = sweep.finish(&codes).unwrap();
    /// assert_eq!(done.intersection, intersect(&a, &b, &opts).unwrap());
    /// ```
    pub fn image_space_codes(
        &self,
        a: &ResidentObject<'_>,
        b: &ResidentObject<'_>,
        sweep: &IntersectionSweep<'_>,
    ) -> Result<(Vec<u8>, ImageSpaceStats)> {
        a.check("a")?;
        b.check("b")?;
        let tiles = sweep.tiles();
        let offsets = sweep.code_offsets();
        let total = *offsets.last().unwrap_or(&0) as usize;
        let mut codes = Vec::with_capacity(total);
        let mut stats = ImageSpaceStats::default();
        if tiles.is_empty() {
            return Ok((codes, stats));
        }
        let capacity = self.hint("image.capacity", IMAGE_CAPACITY).max(1);
        let max_columns = (BATCH_SCRATCH / (2 * u64::from(capacity) * SLOT_BYTES)).max(1);
        let lattice = sweep.lattice();
        let mut grow = false;
        let mut first = 0usize;
        while first < tiles.len() {
            // The batch: tiles while their columns fit the scratch (at least one tile).
            let mut end = first;
            let mut columns = 0u64;
            let mut table = Vec::new();
            while end < tiles.len() {
                let c = u64::from(tiles[end].columns());
                if end > first && columns + c > max_columns {
                    break;
                }
                let t = &tiles[end];
                table.push(ImageTile {
                    lo: t.cells.lo,
                    hi: t.cells.hi,
                    axis: t.axis,
                    column_base: columns as u32,
                    code_offset: offsets[end] - offsets[first],
                });
                columns += c;
                end += 1;
            }
            let bytes = (offsets[end] - offsets[first]) as usize;
            let mut table_buf =
                self.lease::<DeviceBuffer<ImageTile>>("image.tiles", table.len())?;
            table_buf.write_prefix(&table)?;
            let slots = (2 * columns * u64::from(capacity)) as usize;
            let items = self.lease::<DeviceBuffer<[u64; 3]>>("image.items", slots)?;
            let active = self.lease::<DeviceBuffer<u32>>("image.active", slots)?;
            let out = self.lease::<MappedBuffer<u8>>("image.codes", bytes)?;
            let p = ImageColumnsParams {
                pose_a: a.pose,
                pose_b: b.pose,
                nodes_a: a.resident.nodes.device_ptr(),
                positions_a: a.resident.mesh.positions.device_ptr(),
                faces_a: a.resident.mesh.faces.device_ptr(),
                nodes_b: b.resident.nodes.device_ptr(),
                positions_b: b.resident.mesh.positions.device_ptr(),
                faces_b: b.resident.mesh.faces.device_ptr(),
                tiles: table_buf.device_ptr(),
                items: items.device_ptr(),
                active: active.device_ptr(),
                codes: out.device_ptr(),
                origin: lattice.origin.to_array(),
                spacing: lattice.spacing,
                count: table.len() as u32,
                capacity,
            };
            // SAFETY: the table holds `count` tiles whose columns (`columns` in all) index
            // `2 * columns * capacity` scratch slots of both leases, whose codes fill the
            // `bytes` mapped bytes; the resident meshes live for this call.
            unsafe {
                self.launch(
                    Kernel::ImageColumns,
                    2 * table.len() as u32,
                    self.block_size(),
                    &p,
                )?
            };
            self.synchronize()?;
            let batch = out.read(0, bytes);
            for (t, tile) in tiles.iter().enumerate().take(end).skip(first) {
                let len = tile.column_len() as usize;
                let at = (offsets[t] - offsets[first]) as usize;
                for c in 0..2 * tile.columns() as usize {
                    let code = batch[at + c * len];
                    if code & SAMPLE_UNDECIDED != 0 {
                        stats.undecided_columns += 1;
                        if code & SAMPLE_OVERFLOW != 0 {
                            stats.overflow_columns += 1;
                            grow = true;
                        }
                    }
                }
            }
            codes.extend_from_slice(&batch);
            stats.batches += 1;
            first = end;
        }
        if grow {
            self.set_hint("image.capacity", capacity.saturating_mul(2));
        }
        Ok((codes, stats))
    }
}

unsafe extern "C" {
    /// `sizeof` / `offsetof` of the image-space layouts as the emulator's C++ compiler sees them.
    fn gprox_emu_image_layout(name: *const std::ffi::c_char) -> usize;
    /// The same for the depth layouts (`image_depth.cu`).
    fn gprox_emu_image_depth_layout(name: *const std::ffi::c_char) -> usize;
}

/// `sizeof(T)` or `offsetof(T, field)` of an image-space layout (`ImageTile`,
/// `ImageColumnsParams`, `ImageItem` of `image_space.cu`; `ImageDepthParams`, `ImageDepth` of
/// `image_depth.cu`) from the C++ side of the emulator, by name (exactly as written in the
/// `.cu` file, e.g. `"offsetof(ImageTile, axis)"`); `usize::MAX` if unknown.
pub fn emulator_layout(name: &str) -> usize {
    let Ok(c) = std::ffi::CString::new(name) else {
        return usize::MAX;
    };
    // SAFETY: both read a NUL-terminated string and return a number.
    unsafe {
        match gprox_emu_image_layout(c.as_ptr()) {
            usize::MAX => gprox_emu_image_depth_layout(c.as_ptr()),
            v => v,
        }
    }
}
