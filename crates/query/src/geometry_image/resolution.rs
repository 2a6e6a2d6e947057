//! Geometry image resolution from the requested accuracy ε (paper §7.3), certified through the
//! control-net derivative bounds of every Bézier piece
//! ([`NurbsSurface::derivative_bounds`]).
//!
//! The grid is uniform over a parameter rectangle with spacings `h_u`, `h_v` such that
//! * neighbouring texels are at most `δ = ε / (2√6)` apart along u and along v:
//!   `h_u sup|S_u| ≤ δ` (the paper's trimming resolution `t_u`);
//! * the two triangles (and the bilinear patch) of every quad are within `σ = ε / (2√3)` of the
//!   surface: `h_u² (M_u + M_uv) / 8 ≤ σ / 2` and the same in v (the paper's `s_u`, with the
//!   two directions sharing σ; the linear-interpolation remainder on a triangle is at most
//!   `h_u² (M_u + M_uv) / 8 + h_v² (M_v + M_uv) / 8`).
//!
//! Leaf boxes padded by σ then hold the true surface of their quad, and any point of a padded box
//! is within `√6 δ + √3 σ = ε` of the quad's first texel, so two overlapping leaf boxes have
//! texels at most `2ε` apart. Trim loops are flattened within half the smaller spacing.

use gprox_bvh::aabb::Aabb;
use gprox_geometry::freeform::model::pose_stretch;
use gprox_geometry::freeform::{apply_pose, NurbsSurface, ParamRect};
use gprox_geometry::transform::Pose64;

use super::GeometryImageError;

/// Largest number of texels per side.
pub const MAX_SIDE: usize = 1 << 13;

/// The sampling of one face: the parameter rectangle, the texel counts and the box padding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageSpec {
    /// The sampled parameter rectangle (the domain, or the pieces meeting the clip box).
    pub rect: ParamRect,
    /// Texels along u (≥ 2).
    pub width: usize,
    /// Texels along v (≥ 2).
    pub height: usize,
    /// The accuracy ε asked for.
    pub eps: f64,
    /// Surface-to-triangle bound σ that leaf boxes are padded by.
    pub sigma: f64,
    /// Trim flattening tolerance in (u, v).
    pub trim_tolerance: f64,
}

impl ImageSpec {
    /// The resolution for `surface` under `pose` at accuracy `eps`; with `clip`, only the Bézier
    /// pieces whose world control box meets it count and the rectangle is theirs. `None` when
    /// no piece meets the clip box.
    pub fn new(
        face: u32,
        surface: &NurbsSurface,
        pose: &Pose64,
        eps: f64,
        clip: Option<&Aabb>,
    ) -> Result<Option<Self>, GeometryImageError> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(GeometryImageError::BadAccuracy { face, eps });
        }
        if pose.rows.iter().flatten().any(|x| !x.is_finite()) {
            return Err(GeometryImageError::NonFinitePose { face });
        }
        let stretch = pose_stretch(pose);
        let delta = eps / (2.0 * 6f64.sqrt());
        let sigma = eps / (2.0 * 3f64.sqrt());
        let pieces: Vec<_> = surface
            .derivative_bounds()
            .into_iter()
            .zip(surface.bezier_pieces())
            .filter(|(_, (_, piece))| clip.is_none_or(|c| world_box(piece, pose).overlaps(c)))
            .map(|(b, _)| b)
            .collect();
        let Some(first) = pieces.first() else {
            return Ok(None);
        };
        let mut rect = first.rect;
        let (mut du, mut dv, mut au, mut av) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for b in &pieces {
            rect = ParamRect::new(
                rect.u0.min(b.rect.u0),
                rect.u1.max(b.rect.u1),
                rect.v0.min(b.rect.v0),
                rect.v1.max(b.rect.v1),
            );
            du = du.max(b.du);
            dv = dv.max(b.dv);
            au = au.max(b.duu + b.duv);
            av = av.max(b.dvv + b.duv);
        }
        let cells = |len: f64, d: f64, a: f64| {
            let spacing = (len * d * stretch / delta).ceil();
            let curve = (len * (a * stretch / (4.0 * sigma)).sqrt()).ceil();
            spacing.max(curve).max(1.0)
        };
        let (nu, nv) = (
            cells(rect.u1 - rect.u0, du, au),
            cells(rect.v1 - rect.v0, dv, av),
        );
        if !(nu < MAX_SIDE as f64 && nv < MAX_SIDE as f64) {
            return Err(GeometryImageError::TooLarge {
                face,
                eps,
                width: nu + 1.0,
                height: nv + 1.0,
                max: MAX_SIDE,
            });
        }
        let (hu, hv) = ((rect.u1 - rect.u0) / nu, (rect.v1 - rect.v0) / nv);
        Ok(Some(Self {
            rect,
            width: nu as usize + 1,
            height: nv as usize + 1,
            eps,
            sigma,
            trim_tolerance: 0.5 * hu.min(hv),
        }))
    }

    /// The u parameters of the texel columns.
    pub fn us(&self) -> Vec<f64> {
        spread(self.rect.u0, self.rect.u1, self.width)
    }

    /// The v parameters of the texel rows.
    pub fn vs(&self) -> Vec<f64> {
        spread(self.rect.v0, self.rect.v1, self.height)
    }
}

fn spread(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| {
            if k + 1 == n {
                b
            } else {
                a + (b - a) * k as f64 / (n - 1) as f64
            }
        })
        .collect()
}

/// World box of a piece's control points (it holds the piece), widened by 1e-6 relative
/// before rounding to f32.
pub fn world_box(piece: &NurbsSurface, pose: &Pose64) -> Aabb {
    let [n, m] = piece.count();
    let mut b = Aabb::EMPTY;
    for i in 0..n {
        for j in 0..m {
            let p = apply_pose(pose, piece.control_point(i, j));
            for k in 0..3 {
                let slack = 1e-6 * p[k].abs() + 1e-30;
                let (lo, hi) = ((p[k] - slack) as f32, (p[k] + slack) as f32);
                b.min[k] = b.min[k].min(lo);
                b.max[k] = b.max[k].max(hi);
            }
        }
    }
    b
}
