//! Geometry-image positions evaluated on the device (`cuda/geometry_image_eval.cu`): the twin of
//! `GeometryImage::update_positions`, bit for bit. The grid's basis tables
//! (`gprox_geometry::freeform::grid_basis`, the same tables the CPU's `GridEvaluator` sums
//! with) are uploaded once per surface shape and grid; a frame uploads only the homogeneous
//! control points (32 B each, nothing when they did not change: a rigid face's new pose goes in
//! the launch parameters) and enqueues one launch, one block per tile of 32 × 8 texels (the
//! tile's column points made once in shared memory).

use glam::DVec4;
use gprox_geometry::freeform::{grid_basis, NurbsSurface};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::image::moved_pad;
use gprox_query::geometry_image::ImageSpec;

use super::DeviceImage;
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::params;

params!(
    /// `gprox_gi_eval`: the positions of one image from its surface's control points.
    ImageEvalParams {
        /// `f32[3 * width * height]` (out).
        positions: u64,
        /// `const f64[4 * n * m]`: homogeneous control points, `i * m + k`.
        points: u64,
        /// `const u32[width]`: first control index of each column's u basis.
        u_first: u64,
        /// `const f64[(degree_u + 1) * width]`: the u basis values.
        u_basis: u64,
        /// `const u32[height]`: first control index of each row's v basis.
        v_first: u64,
        /// `const f64[(degree_v + 1) * height]`: the v basis values.
        v_basis: u64,
        /// The pose.
        pose: Pose64,
        /// Texels along u.
        width: u32,
        /// Texels along v.
        height: u32,
        /// Control points along v.
        m: u32,
        /// Degree in u.
        degree_u: u32,
        /// Degree in v.
        degree_v: u32,
        /// Padding.
        pad: u32,
    }
);

/// Texels along u and v of a `gprox_gi_eval` block (`GPROX_GI_EVAL_TILE_U`, `_V`).
const EVAL_TILE: [usize; 2] = [32, 8];

/// The resident evaluation of one surface shape (degrees, counts, knots) on an image's grid.
pub(super) struct Evaluator {
    degree: [usize; 2],
    count: [usize; 2],
    knots: [Vec<f64>; 2],
    /// The control points last uploaded (skipped when a frame brings the same).
    uploaded: Vec<DVec4>,
    points: DeviceBuffer<[f64; 4]>,
    u_first: DeviceBuffer<u32>,
    u_basis: DeviceBuffer<f64>,
    v_first: DeviceBuffer<u32>,
    v_basis: DeviceBuffer<f64>,
}

impl Evaluator {
    /// Uploads the basis tables of `surface` on the grid of `spec` and its control points.
    fn new(device: &Device, spec: &ImageSpec, surface: &NurbsSurface) -> Result<Self> {
        let [bu, bv] = grid_basis(surface, &spec.us(), &spec.vs());
        let [ku, kv] = surface.knots();
        let h = surface.homogeneous_points();
        Ok(Self {
            degree: surface.degree(),
            count: surface.count(),
            knots: [ku.to_vec(), kv.to_vec()],
            uploaded: h.to_vec(),
            points: device.upload(&as_rows(h))?,
            u_first: device.upload(&bu.first)?,
            u_basis: device.upload(&bu.values)?,
            v_first: device.upload(&bv.first)?,
            v_basis: device.upload(&bv.values)?,
        })
    }

    /// Whether `surface` has the shape the tables were made for.
    fn fits(&self, surface: &NurbsSurface) -> bool {
        let [ku, kv] = surface.knots();
        surface.degree() == self.degree
            && surface.count() == self.count
            && ku == self.knots[0].as_slice()
            && kv == self.knots[1].as_slice()
    }
}

/// Homogeneous points as the kernel reads them.
fn as_rows(h: &[DVec4]) -> Vec<[f64; 4]> {
    h.iter().map(|p| p.to_array()).collect()
}

/// One image of [`DeviceImage::evaluate_all`]: the image, its face's surface (the control
/// points of this frame) and its pose.
pub struct Evaluation<'a> {
    /// The device image (made for this surface's face and grid).
    pub image: &'a mut DeviceImage,
    /// The face's surface.
    pub surface: &'a NurbsSurface,
    /// Its pose.
    pub pose: &'a Pose64,
}

impl DeviceImage {
    /// The positions of `surface` under `pose` on this image's grid, evaluated on the device
    /// (`GeometryImage::update_positions` there, the same positions bit for bit), and the
    /// hierarchy rebuilt: uploads only the control points (32 B each, none when unchanged since
    /// the last frame), one launch for the texels and [`DeviceImage::build_launches`] for the
    /// hierarchy; no synchronisation. Several images of one frame go faster through
    /// [`DeviceImage::evaluate_all`].
    /// The first call for a surface shape (degrees, counts, knots) uploads the grid's basis
    /// tables and allocates; later frames allocate nothing. `surface` must be the face's surface
    /// (the stencil, made from its trim loops, stays): the image is then the host's
    /// `GeometryImage::update_positions(surface, pose)`, without the host copy of the positions.
    pub fn evaluate(
        &mut self,
        device: &Device,
        surface: &NurbsSurface,
        pose: &Pose64,
    ) -> Result<()> {
        Self::evaluate_all(
            device,
            &mut [Evaluation {
                image: self,
                surface,
                pose,
            }],
        )
    }

    /// [`DeviceImage::evaluate`] for every image of `jobs`, in an order that keeps host and
    /// device busy together: every control-point upload first (an upload from pageable memory
    /// may wait for the work already queued), then every evaluation launch, then the leaf
    /// paddings on the host (certified derivative bounds, the longest host step) while the
    /// device evaluates, then every hierarchy build. The same launches, uploads and results as
    /// one [`DeviceImage::evaluate`] per image; checked before anything is enqueued.
    pub fn evaluate_all(device: &Device, jobs: &mut [Evaluation<'_>]) -> Result<()> {
        if jobs
            .iter()
            .any(|j| j.pose.rows.iter().flatten().any(|x| !x.is_finite()))
        {
            return Err(CudaError::NonFinitePose {
                side: "geometry image",
            });
        }
        for j in jobs.iter_mut() {
            j.image.upload_points(device, j.surface)?;
        }
        for j in jobs.iter() {
            j.image.launch_evaluation(device, j.pose)?;
        }
        for j in jobs.iter_mut() {
            // The leaf padding is needed only by the hierarchy build.
            j.image.pad = moved_pad(&j.image.spec, j.surface, j.pose);
        }
        for j in jobs.iter() {
            j.image.build_levels(device)?;
        }
        Ok(())
    }

    /// The control points of `surface` on the device (none when unchanged since the last
    /// frame); the basis tables too on the first call for a surface shape.
    fn upload_points(&mut self, device: &Device, surface: &NurbsSurface) -> Result<()> {
        let h = surface.homogeneous_points();
        match &mut self.evaluator {
            Some(e) if e.fits(surface) => {
                if e.uploaded.as_slice() != h {
                    e.points.write(&as_rows(h))?;
                    e.uploaded.clear();
                    e.uploaded.extend_from_slice(h);
                }
            }
            _ => self.evaluator = Some(Evaluator::new(device, &self.spec, surface)?),
        }
        Ok(())
    }

    /// Enqueues the evaluation of the uploaded control points under `pose`.
    fn launch_evaluation(&self, device: &Device, pose: &Pose64) -> Result<()> {
        let Some(e) = &self.evaluator else {
            unreachable!("upload_points ran first")
        };
        let p = ImageEvalParams {
            positions: self.positions.device_ptr(),
            points: e.points.device_ptr(),
            u_first: e.u_first.device_ptr(),
            u_basis: e.u_basis.device_ptr(),
            v_first: e.v_first.device_ptr(),
            v_basis: e.v_basis.device_ptr(),
            pose: *pose,
            width: self.width as u32,
            height: self.height as u32,
            m: e.count[1] as u32,
            degree_u: e.degree[0] as u32,
            degree_v: e.degree[1] as u32,
            pad: 0,
        };
        let tiles = self.width.div_ceil(EVAL_TILE[0]) * self.height.div_ceil(EVAL_TILE[1]);
        // SAFETY: positions hold width * height texels; the tables hold width (height) entries
        // of first indices and degree + 1 basis values each, made for this surface shape (whose
        // control points, n * m, are uploaded), so every index the kernel forms is in range;
        // one block per tile of texels.
        unsafe { device.launch(Kernel::ImageEval, tiles as u32, device.block_size(), &p) }
    }

    /// The positions the device holds, read back (12 B per texel; waits for the device).
    pub fn download_positions(&self) -> Result<Vec<glam::Vec3>> {
        Ok(self
            .positions
            .download()?
            .into_iter()
            .map(glam::Vec3::from)
            .collect())
    }
}
