//! Stenciled geometry images (paper §6.1, §7.2): world positions of a face on the uniform
//! `(u, v)` grid of an [`ImageSpec`], a stencil bit per texel (inside the trimmed face by winding
//! number) and a conservative stencil bit per quad: set when a corner is inside or a trim curve
//! passes within the flattening tolerance of the quad, so every point of the trimmed face lies
//! in a quad whose bit is set (the paper sets it only when all four corners are inside, which
//! can drop contacts next to a trim curve or on slivers narrower than a quad).
//!
//! The stencil depends only on the trim loops, so a deforming face keeps it and refreshes its
//! positions every frame ([`GeometryImage::update_positions`]).

use glam::{DVec2, Vec3, Vec3A};
use gprox_bvh::aabb::Aabb;
use gprox_geometry::freeform::{apply_pose, GridEvaluator, NurbsSurface, TrimmedFace};
use gprox_geometry::transform::Pose64;
use rayon::prelude::*;

use super::{GeometryImageError, ImageSpec};

/// Positions and stencils of one face on its grid. Texel `(i, j)` (i along u) is stored at
/// `j * width + i`; quad `(i, j)` has the texels `(i..=i+1, j..=j+1)` and is stored at
/// `j * (width - 1) + i`.
#[derive(Clone, Debug)]
pub struct GeometryImage {
    /// Face id reported in results.
    pub face: u32,
    /// The sampling.
    pub spec: ImageSpec,
    /// World positions (f32).
    pub positions: Vec<Vec3>,
    /// 1 where the texel lies inside the trimmed face.
    pub stencil: Vec<u8>,
    /// 1 where the quad may hold a point of the trimmed face.
    pub quad_stencil: Vec<u8>,
    /// Padding of the leaf boxes: σ plus the f32 rounding of the positions.
    pub pad: f32,
}

impl GeometryImage {
    /// Generates the image of `face` under `pose` at accuracy `eps` (restricted to the pieces
    /// meeting `clip` when given; `None` when none does).
    pub fn generate(
        id: u32,
        face: &TrimmedFace,
        pose: &Pose64,
        eps: f64,
        clip: Option<&Aabb>,
    ) -> Result<Option<Self>, GeometryImageError> {
        let Some(spec) = ImageSpec::new(id, face.surface(), pose, eps, clip)? else {
            return Ok(None);
        };
        // The spec's deviation bound is this surface's: no need to recompute it.
        Self::with_spec(id, face, pose, spec, false).map(Some)
    }

    /// The image of `face` under `pose` on the grid of `spec` (normally from [`ImageSpec::new`];
    /// a hand-made spec pads by at least its σ and the certified deviation, without the ε bound).
    pub fn from_spec(
        id: u32,
        face: &TrimmedFace,
        pose: &Pose64,
        spec: ImageSpec,
    ) -> Result<Self, GeometryImageError> {
        Self::with_spec(id, face, pose, spec, true)
    }

    fn with_spec(
        id: u32,
        face: &TrimmedFace,
        pose: &Pose64,
        spec: ImageSpec,
        bound: bool,
    ) -> Result<Self, GeometryImageError> {
        let mut img = Self::unsampled(id, face, spec)?;
        img.positions = vec![Vec3::ZERO; spec.width * spec.height];
        img.fill_positions(face.surface(), pose, bound)?;
        Ok(img)
    }

    /// The stencils of `face` on the grid of `spec` without positions (`positions` empty, `pad`
    /// 0): for an image whose positions are evaluated elsewhere (on a device, `gprox_cuda`).
    pub fn unsampled(
        id: u32,
        face: &TrimmedFace,
        spec: ImageSpec,
    ) -> Result<Self, GeometryImageError> {
        let poly = face
            .flatten(spec.trim_tolerance)
            .map_err(|source| GeometryImageError::Trim { face: id, source })?;
        let (us, vs) = (spec.us(), spec.vs());
        let stencil = poly.classify_grid(&us, &vs);
        let (w, h) = (spec.width, spec.height);
        let mut quad_stencil = vec![0u8; (w - 1) * (h - 1)];
        for j in 0..h - 1 {
            for i in 0..w - 1 {
                let s = |a: usize, b: usize| stencil[b * w + a];
                quad_stencil[j * (w - 1) + i] =
                    s(i, j) | s(i + 1, j) | s(i, j + 1) | s(i + 1, j + 1);
            }
        }
        mark_curve_quads(&spec, &poly, &mut quad_stencil);
        Ok(Self {
            face: id,
            spec,
            positions: Vec::new(),
            stencil,
            quad_stencil,
            pad: 0.0,
        })
    }

    /// Texels along u.
    pub fn width(&self) -> usize {
        self.spec.width
    }

    /// Texels along v.
    pub fn height(&self) -> usize {
        self.spec.height
    }

    /// Re-evaluates the positions for moved control points or a new pose (same grid and
    /// stencil, rows in parallel). The leaf padding is recomputed from the moved surface's
    /// derivative bounds, so the boxes always hold the surface (no missed contact); the `2ε`
    /// bound on reported pairs holds while the bounds do not grow ([`ImageSpec::new`] tells
    /// when a finer grid is needed).
    pub fn update_positions(
        &mut self,
        surface: &NurbsSurface,
        pose: &Pose64,
    ) -> Result<(), GeometryImageError> {
        self.fill_positions(surface, pose, true)
    }

    /// The positions; the padding from the spec's deviation bound, and from `surface`'s own
    /// when `bound` (it may differ from the surface the spec was made for).
    fn fill_positions(
        &mut self,
        surface: &NurbsSurface,
        pose: &Pose64,
        bound: bool,
    ) -> Result<(), GeometryImageError> {
        if pose.rows.iter().flatten().any(|x| !x.is_finite()) {
            return Err(GeometryImageError::NonFinitePose { face: self.face });
        }
        let w = self.spec.width;
        let mut eval = GridEvaluator::new(surface, &self.spec.us(), &self.spec.vs());
        eval.transform(&pose.rows);
        self.positions
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(j, row)| eval.row(j, |i, p| row[i] = p.as_vec3()));
        // The deviation bound (the spec's, or the moved surface's when larger) and the f32
        // rounding.
        self.pad = if bound {
            moved_pad(&self.spec, surface, pose)
        } else {
            leaf_pad(self.spec.sigma, surface, pose)
        };
        Ok(())
    }

    /// The four corner positions of quad `(i, j)` in the order 00, 10, 01, 11.
    #[inline]
    pub fn quad(&self, i: usize, j: usize) -> [Vec3; 4] {
        let w = self.spec.width;
        let k = j * w + i;
        [
            self.positions[k],
            self.positions[k + 1],
            self.positions[k + w],
            self.positions[k + w + 1],
        ]
    }

    /// The padded box of quad `(i, j)`, or [`Aabb::EMPTY`] when its stencil is 0.
    #[inline]
    pub fn quad_box(&self, i: usize, j: usize) -> Aabb {
        if self.quad_stencil[j * (self.spec.width - 1) + i] == 0 {
            return Aabb::EMPTY;
        }
        let q = self.quad(i, j);
        let (lo, hi) = (
            q[0].min(q[1]).min(q[2].min(q[3])),
            q[0].max(q[1]).max(q[2].max(q[3])),
        );
        let pad = Vec3::splat(self.pad);
        Aabb {
            min: (lo - pad).into(),
            max: (hi + pad).into(),
        }
    }

    /// The padded boxes of the four quads `(2x + (c & 1), 2y + (c >> 1))`, `c = 0..4`, from
    /// the 3 × 3 texels they share: [`GeometryImage::quad_box`] of each (the same boxes), with
    /// 9 texel reads instead of 16; [`Aabb::EMPTY`] for a quad outside the image.
    #[inline]
    pub fn block_boxes(&self, x: usize, y: usize) -> [Aabb; 4] {
        let (w, h) = (self.spec.width, self.spec.height);
        let (i0, j0) = (2 * x, 2 * y);
        // Texel columns and rows of the block, clamped: a missing quad is dropped below.
        let col = |k: usize| (i0 + k).min(w - 1);
        let row = |k: usize| (j0 + k).min(h - 1) * w;
        // In f32 lanes (the same min/max values, one instruction each).
        let at = |r: usize, c: usize| Vec3A::from(self.positions[row(r) + col(c)]);
        let pad = Vec3A::splat(self.pad);
        let mut out = [Aabb::EMPTY; 4];
        for (dj, pair) in out.chunks_exact_mut(2).enumerate() {
            // Column extents over the two texel rows of this quad row, then pairs of columns.
            let span = |c: usize| {
                let (p, q) = (at(dj, c), at(dj + 1, c));
                (p.min(q), p.max(q))
            };
            let cols = [span(0), span(1), span(2)];
            for (di, o) in pair.iter_mut().enumerate() {
                let (i, j) = (i0 + di, j0 + dj);
                if i + 1 >= w || j + 1 >= h || self.quad_stencil[j * (w - 1) + i] == 0 {
                    continue;
                }
                let (lo, hi) = (
                    cols[di].0.min(cols[di + 1].0),
                    cols[di].1.max(cols[di + 1].1),
                );
                *o = Aabb {
                    min: (lo - pad).into(),
                    max: (hi + pad).into(),
                };
            }
        }
        out
    }

    /// The (u, v) parameters of texel `(i, j)`.
    pub fn texel_param(&self, i: usize, j: usize) -> DVec2 {
        let r = &self.spec.rect;
        let (w, h) = (self.spec.width - 1, self.spec.height - 1);
        DVec2::new(
            r.u0 + (r.u1 - r.u0) * i as f64 / w as f64,
            r.v0 + (r.v1 - r.v0) * j as f64 / h as f64,
        )
    }
}

/// The corners of quad `(i, j)` of the image of `surface` under `pose` on the grid of `spec`
/// (order 00, 10, 01, 11; `us`, `vs` from [`ImageSpec::us`], [`ImageSpec::vs`]), evaluated alone: bit for bit what [`GeometryImage::quad`] reads
/// after [`GeometryImage::update_positions`] (the same basis values and sums per texel), for a
/// few quads of an image whose positions are not on the host.
pub fn quad_corners(
    surface: &NurbsSurface,
    pose: &Pose64,
    us: &[f64],
    vs: &[f64],
    [i, j]: [usize; 2],
) -> [Vec3; 4] {
    let mut eval = GridEvaluator::new(surface, &us[i..=i + 1], &vs[j..=j + 1]);
    eval.transform(&pose.rows);
    [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(a, b)| eval.point(a, b).as_vec3())
}

/// The padding of the leaf boxes of an image of `surface` under `pose` with surface-to-triangle
/// bound `sigma`: σ plus the f32 rounding of the positions (half an ulp each) and of the padded
/// bounds, with the largest coordinate bounded through the posed control points (positive
/// weights keep the surface in their convex hull and a pose is affine; the factor 4 over the two
/// half ulps covers the f64 evaluation's rounding). Known before any texel is evaluated, so the
/// device evaluation (`gprox_cuda`) pads exactly as the CPU.
pub fn leaf_pad(sigma: f64, surface: &NurbsSurface, pose: &Pose64) -> f32 {
    let [n, m] = surface.count();
    let max_abs = (0..n * m)
        .map(|k| {
            let p = apply_pose(pose, surface.control_point(k / m, k % m));
            p.abs().max_element()
        })
        .fold(0.0f64, f64::max);
    (sigma * (1.0 + 1e-6) + 4.0 * max_abs * f64::from(f32::EPSILON)) as f32
}

/// The padding of an image made with `spec` after its control points moved to `surface`
/// (under `pose`): [`leaf_pad`] with the larger of the spec's deviation bound and `surface`'s
/// own on the same grid ([`ImageSpec::deviation`]), so the boxes still hold a surface whose
/// curvature grew. [`GeometryImage::update_positions`] and the device's evaluation pad by it.
pub fn moved_pad(spec: &ImageSpec, surface: &NurbsSurface, pose: &Pose64) -> f32 {
    leaf_pad(spec.sigma.max(spec.deviation(surface, pose)), surface, pose)
}

/// Sets the stencil of every quad within the flattening tolerance of a trim polygon edge: each
/// edge is walked in steps of at most half a quad, and every quad meeting the square of radius
/// `tolerance + step / 2` about a step point is marked.
fn mark_curve_quads(
    spec: &ImageSpec,
    poly: &gprox_geometry::freeform::trimmed::TrimPolygon,
    quad_stencil: &mut [u8],
) {
    let r = &spec.rect;
    let (qw, qh) = (spec.width - 1, spec.height - 1);
    let (hu, hv) = ((r.u1 - r.u0) / qw as f64, (r.v1 - r.v0) / qh as f64);
    let step = 0.5 * hu.min(hv);
    for (a, b, _, _) in poly.edges() {
        let n = ((b - a).length() / step).ceil().max(1.0) as usize;
        let rad = spec.trim_tolerance + 0.5 * (b - a).length() / n as f64;
        for k in 0..=n {
            let p = a + (b - a) * (k as f64 / n as f64);
            let cell = |x: f64, x0: f64, h: f64, max: usize| {
                (((x - x0) / h).floor().max(0.0) as usize).min(max - 1)
            };
            if p.x + rad < r.u0 || p.x - rad > r.u1 || p.y + rad < r.v0 || p.y - rad > r.v1 {
                continue;
            }
            let (i0, i1) = (cell(p.x - rad, r.u0, hu, qw), cell(p.x + rad, r.u0, hu, qw));
            let (j0, j1) = (cell(p.y - rad, r.v0, hv, qh), cell(p.y + rad, r.v0, hv, qh));
            for j in j0..=j1 {
                for i in i0..=i1 {
                    quad_stencil[j * qw + i] = 1;
                }
            }
        }
    }
}
