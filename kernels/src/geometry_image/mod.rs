//! Geometry images on the device (`kernels/cuda/geometry_image.cu`): the hierarchy images of
//! `gprox_query::geometry_image::hierarchy`, the simultaneous breadth-first traversal of
//! `traverse` and the self-collision of `self_collide` (Greß, Guthe, Klein 2006, §4–6), pair for
//! pair the CPU's results.
//!
//! A [`DeviceImage`] holds one image on the device: its positions, quad stencil (uploaded
//! once), the stored levels of its hierarchy (level 1 and up; the leaf boxes are made from the
//! texels when the traversal reaches them, as on the CPU) and, for self-collision, the normal
//! sign bytes. A frame either evaluates the positions on the device from the surface's control
//! points ([`DeviceImage::evaluate`], `eval.rs`: only the control points go up, the grid's basis
//! tables stay resident) or uploads positions sampled on the host ([`DeviceImage::update`]);
//! both then enqueue the hierarchy build without waiting: one launch per five levels, each
//! block building a 16 × 16-node tile through those levels (the nodes of a tile's upper levels
//! depend only on the tile), so a 512² image takes two launches.
//!
//! [`Device::image_collide`] and [`Device::image_self_collide`] enqueue the whole traversal —
//! the root pair, one launch per level (the frontier size is read on the device), the leaf pairs
//! sorted on the device by the radix sort (`radix_sort.cu`, the count read on the device) into
//! host-mapped memory — and synchronise **once**; the host sorts nothing. Null pairs are removed by stream
//! compaction: a block prefix sum of the survivor counts and one atomic per block for the
//! block's place in the next frontier (the paper's 2D counting mip-map, §5.3, flattened: the
//! block sums are its base level, the scan its top-down pass). A frontier larger than the
//! buffers sets an overflow flag; the host then grows them (remembered for the next query) and
//! runs the traversal again, so no pair is dropped. Exact mode tests the leaf pairs' triangles on
//! the device with the filtered predicate of `tri_tri.cuh` (the collide kernels' test): pairs
//! certainly apart are dropped there, certainly intersecting ones kept, and the undecided ones
//! come back flagged with their quads' corners ([`ImageUndecided`]), which the host decides with
//! the CPU's exact `quads_intersect` (`gprox_geometry::tri_tri`); no position is read back.

mod eval;
mod traverse;

pub use eval::{Evaluation, ImageEvalParams};
pub use traverse::ImageQueryStats;

use glam::Vec3;
use gprox_bvh::aabb::Aabb;
use gprox_geometry::freeform::NurbsSurface;
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::hierarchy::Level;
use gprox_query::geometry_image::{GeometryImage, ImageSpec};

use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::params;

/// Most levels of a hierarchy image (`GPROX_GI_MAX_LEVELS`).
pub const MAX_LEVELS: usize = 16;
/// Levels one `gprox_gi_build` launch makes: tiles of `2^4 = 16` nodes square at its first
/// level (256 nodes, a block's worth), one node at its last.
pub const LEVELS_PER_BUILD: usize = 5;
/// Counter word of the leaf pairs to sort (`GPROX_GI_SORT_COUNT`).
const SORT_COUNT: usize = 2 + 2 * (2 * MAX_LEVELS + 1);
/// Counter words of a traversal (`GPROX_GI_COUNTERS`: the sort count, then exact mode's
/// undecided pairs and record slots).
const COUNTERS: usize = SORT_COUNT + 3;
/// Header words in front of the mapped leaf pairs (`GPROX_GI_HEADER`).
const HEADER: usize = 4;
/// Frontier capacity (pairs) of the first query; grown after an overflow.
pub const FRONTIER_CAPACITY: u32 = 1 << 14;

/// One geometry image as the kernels read it (`ImageFace` in `geometry_image.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ImageFace {
    /// `const f32[3 * width * height]`.
    pub positions: u64,
    /// `const u8[(width - 1) * (height - 1)]`.
    pub quad_stencil: u64,
    /// `Aabb[]`: the stored levels.
    pub boxes: u64,
    /// `i8[4 * nodes]`, or 0 without signs.
    pub signs: u64,
    /// Texels along u.
    pub width: u32,
    /// Texels along v.
    pub height: u32,
    /// Leaf box padding.
    pub pad: f32,
    /// Levels.
    pub levels: u32,
    /// First node of each stored level in `boxes`.
    pub level_offset: [u32; MAX_LEVELS],
}

params!(
    /// `gprox_gi_build`: levels `level..=last` of a hierarchy image, one block per tile of
    /// `2^(last - level)` nodes square at `level`.
    ImageBuildParams {
        /// The image.
        face: ImageFace,
        /// The first level made.
        level: u32,
        /// The last level made.
        last: u32,
    }
);

params!(
    /// `gprox_gi_init` / `gprox_gi_step` / `gprox_gi_out`: one traversal.
    ImageTraverseParams {
        /// Image A.
        a: ImageFace,
        /// Image B (A again in self mode).
        b: ImageFace,
        /// `const u32[2 * capacity]` frontier read.
        frontier_in: u64,
        /// `u32[2 * capacity]` frontier written.
        frontier_out: u64,
        /// `u32[COUNTERS]`.
        counters: u64,
        /// Mapped `u32[HEADER + 2 * capacity]`: header and sorted keys.
        out: u64,
        /// `u64[capacity]`: leaf pair keys, sorted on the device.
        keys: u64,
        /// `u32[8 * 256]`: radix digit totals, cleared by `gprox_gi_keys`.
        totals: u64,
        /// Exact mode: mapped [`ImageUndecided`]`[corner_capacity]` (0 otherwise).
        corners: u64,
        /// Frontier capacity (pairs).
        capacity: u32,
        /// Step number.
        step: u32,
        /// Level of the step's parents in A.
        level_a: u32,
        /// Level of the step's parents in B.
        level_b: u32,
        /// Whether the step descends A.
        descend_a: u32,
        /// Whether the step descends B.
        descend_b: u32,
        /// 1: A against itself.
        self_mode: u32,
        /// Self mode: the normal test.
        normal_test: u32,
        /// 1 at the last step.
        last: u32,
        /// Bit offset of A's quad column in a leaf pair key.
        shift_ia: u32,
        /// Bit offset of A's quad row.
        shift_ja: u32,
        /// Bit offset of B's quad column (B's row is the lowest field).
        shift_ib: u32,
        /// 1: exact mode (`gprox_gi_exact`; keys shifted up a bit, bit 0 marks undecided).
        exact: u32,
        /// Records `corners` holds.
        corner_capacity: u32,
    }
);

/// Exact mode: a leaf pair the device's filtered triangle test left undecided, with the
/// corners the host's exact test needs (`ImageUndecided` in `geometry_image.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ImageUndecided {
    /// Its place among the sorted pairs.
    pub index: u32,
    /// Corners (00, 10, 01, 11) of its quad of A.
    pub a: [[f32; 3]; 4],
    /// Corners of its quad of B.
    pub b: [[f32; 3]; 4],
}

/// A geometry image and its hierarchy image resident on the device.
pub struct DeviceImage {
    face: u32,
    /// The grid (with the face, it fixes the stencil).
    spec: ImageSpec,
    width: usize,
    height: usize,
    /// (width, height) of every level.
    sizes: Vec<(usize, usize)>,
    level_offset: [u32; MAX_LEVELS],
    pad: f32,
    positions: DeviceBuffer<[f32; 3]>,
    quad_stencil: DeviceBuffer<u8>,
    boxes: DeviceBuffer<Aabb>,
    signs: Option<DeviceBuffer<[i8; 4]>>,
    /// The resident evaluation of the positions ([`DeviceImage::evaluate`]), once used.
    evaluator: Option<eval::Evaluator>,
}

impl std::fmt::Debug for DeviceImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceImage(face {}, {} x {}, {} levels)",
            self.face,
            self.width,
            self.height,
            self.sizes.len()
        )
    }
}

/// The level sizes of an image of `w × h` quads (as `HierarchyImage::rebuild`).
fn level_sizes(w: usize, h: usize) -> Vec<(usize, usize)> {
    let mut sizes = vec![(w, h)];
    while sizes.last().is_some_and(|&(w, h)| w > 1 || h > 1) {
        let (w, h) = sizes[sizes.len() - 1];
        sizes.push((w.div_ceil(2), h.div_ceil(2)));
    }
    sizes
}

impl DeviceImage {
    /// Uploads `img` (stencil and positions) and builds its hierarchy on the device, with the
    /// normal sign bytes when `with_signs` (self-collision's normal test). Allocates; later
    /// frames go through [`DeviceImage::update`].
    pub fn new(device: &Device, img: &GeometryImage, with_signs: bool) -> Result<Self> {
        let mut me = Self::alloc(device, img, with_signs)?;
        me.update(device, img)?;
        Ok(me)
    }

    /// The image of `img`'s face and grid (its stencil uploaded; its positions, which may be
    /// empty as in `GeometryImage::unsampled`, are not read) with the positions of `surface`
    /// under `pose` evaluated on the device ([`DeviceImage::evaluate`]) and the hierarchy built
    /// there: nothing is sampled on the host. Allocates; later frames go through
    /// [`DeviceImage::evaluate`].
    pub fn new_evaluated(
        device: &Device,
        img: &GeometryImage,
        surface: &NurbsSurface,
        pose: &Pose64,
        with_signs: bool,
    ) -> Result<Self> {
        let mut me = Self::alloc(device, img, with_signs)?;
        me.evaluate(device, surface, pose)?;
        Ok(me)
    }

    /// The buffers of `img`'s grid, its stencil uploaded, positions and levels unset.
    fn alloc(device: &Device, img: &GeometryImage, with_signs: bool) -> Result<Self> {
        let (width, height) = (img.width(), img.height());
        let sizes = level_sizes(width - 1, height - 1);
        if sizes.len() > MAX_LEVELS || width * height > u32::MAX as usize / 3 {
            return Err(CudaError::TooLarge {
                what: "geometry image texels",
                count: width * height,
                max: 1 << 26,
            });
        }
        let mut level_offset = [0u32; MAX_LEVELS];
        let mut nodes = 0usize;
        for (l, &(w, h)) in sizes.iter().enumerate() {
            if l > 0 || sizes.len() == 1 {
                level_offset[l] = nodes as u32;
                nodes += w * h;
            }
        }
        Ok(Self {
            face: img.face,
            spec: img.spec,
            width,
            height,
            sizes,
            level_offset,
            pad: img.pad,
            positions: device.alloc_zeros(width * height)?,
            quad_stencil: device.upload(&img.quad_stencil)?,
            boxes: device.alloc_zeros(nodes)?,
            signs: if with_signs {
                Some(device.alloc_zeros(nodes)?)
            } else {
                None
            },
            evaluator: None,
        })
    }

    /// New positions of the same face and grid sampled on the host (a deforming face or a new
    /// pose): uploads them (12 B per texel; [`DeviceImage::evaluate`] uploads only the control
    /// points) and enqueues the hierarchy build ([`DeviceImage::build_launches`] launches); no
    /// synchronisation, no allocation. [`CudaError::LengthMismatch`] when `img` does not
    /// [`DeviceImage::fits`].
    pub fn update(&mut self, device: &Device, img: &GeometryImage) -> Result<()> {
        if !self.fits(img) {
            return Err(CudaError::LengthMismatch {
                device: self.width * self.height,
                host: img.positions.len(),
            });
        }
        self.pad = img.pad;
        self.positions
            .write(bytemuck::cast_slice::<Vec3, [f32; 3]>(&img.positions))?;
        self.build_levels(device)
    }

    /// Enqueues the hierarchy build from the resident positions: one launch per
    /// [`LEVELS_PER_BUILD`] stored levels ([`DeviceImage::build_launches`]).
    fn build_levels(&self, device: &Device) -> Result<()> {
        for (level, last) in self.build_chunks() {
            let side = 1usize << (last - level);
            let (w, h) = self.sizes[level];
            let p = ImageBuildParams {
                face: self.face(),
                level: level as u32,
                last: last as u32,
            };
            let tiles = (w.div_ceil(side) * h.div_ceil(side)) as u32;
            // SAFETY: the face's buffers hold the image's texels, quads and stored levels (sizes
            // from `level_sizes`, offsets from `new`); block b writes the nodes of tile b of
            // levels `level..=last` (every node of those levels over all the tiles).
            unsafe { device.launch(Kernel::ImageBuild, tiles, device.block_size(), &p)? };
        }
        Ok(())
    }

    /// The levels of each build launch: the stored levels (from 1; the root alone when it is
    /// the leaf level) in runs of at most [`LEVELS_PER_BUILD`].
    fn build_chunks(&self) -> impl Iterator<Item = (usize, usize)> {
        let first = if self.sizes.len() == 1 { 0 } else { 1 };
        let top = self.sizes.len() - 1;
        (first..=top)
            .step_by(LEVELS_PER_BUILD)
            .map(move |l| (l, (l + LEVELS_PER_BUILD - 1).min(top)))
    }

    /// Kernel launches of one hierarchy build ([`DeviceImage::update`], and
    /// [`DeviceImage::evaluate`] after its one launch for the texels).
    pub fn build_launches(&self) -> usize {
        self.build_chunks().count()
    }

    /// The layout the kernels read.
    pub fn face(&self) -> ImageFace {
        ImageFace {
            positions: self.positions.device_ptr(),
            quad_stencil: self.quad_stencil.device_ptr(),
            boxes: self.boxes.device_ptr(),
            signs: self.signs.as_ref().map_or(0, |s| s.device_ptr()),
            width: self.width as u32,
            height: self.height as u32,
            pad: self.pad,
            levels: self.sizes.len() as u32,
            level_offset: self.level_offset,
        }
    }

    /// Whether the hierarchy keeps the normal sign bytes.
    pub fn has_signs(&self) -> bool {
        self.signs.is_some()
    }

    /// Whether [`DeviceImage::update`] takes `img`: the same face on the same grid (so the
    /// same stencil, which is uploaded once).
    pub fn fits(&self, img: &GeometryImage) -> bool {
        img.face == self.face
            && img.spec == self.spec
            && img.quad_stencil.len() == self.quad_stencil.len()
    }

    /// Levels of the hierarchy.
    pub fn levels(&self) -> usize {
        self.sizes.len()
    }

    /// The hierarchy's levels read back (one copy each of boxes and signs), in the form of
    /// `HierarchyImage::levels`: the leaf level without boxes unless it is the root. For tests
    /// and display.
    pub fn download_levels(&self) -> Result<Vec<Level>> {
        let boxes = self.boxes.download()?;
        let signs = match &self.signs {
            Some(s) => s.download()?,
            None => Vec::new(),
        };
        let stored = |l: usize| l > 0 || self.sizes.len() == 1;
        Ok(self
            .sizes
            .iter()
            .enumerate()
            .map(|(l, &(width, height))| {
                let range = if stored(l) {
                    let o = self.level_offset[l] as usize;
                    o..o + width * height
                } else {
                    0..0
                };
                Level {
                    width,
                    height,
                    boxes: boxes[range.clone()].to_vec(),
                    signs: if signs.is_empty() {
                        Vec::new()
                    } else {
                        signs[range].to_vec()
                    },
                }
            })
            .collect())
    }
}

unsafe extern "C" {
    /// `sizeof` / `offsetof` of the geometry-image layouts as the emulator's C++ compiler sees
    /// them.
    fn gprox_emu_geometry_image_layout(name: *const std::ffi::c_char) -> usize;
}

/// `sizeof(T)` or `offsetof(T, field)` of a geometry-image layout (`ImageFace`,
/// `ImageBuildParams`, `ImageTraverseParams`) from the C++ side of the emulator, by name
/// exactly as written in `geometry_image.cu`; `usize::MAX` if unknown.
pub fn emulator_layout(name: &str) -> usize {
    let Ok(c) = std::ffi::CString::new(name) else {
        return usize::MAX;
    };
    // SAFETY: reads a NUL-terminated string and returns a number.
    unsafe { gprox_emu_geometry_image_layout(c.as_ptr()) }
}
