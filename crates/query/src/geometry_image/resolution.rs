//! Geometry image resolution from the requested accuracy ε (paper §7.3), certified through the
//! control-net derivative bounds of every Bézier piece
//! ([`NurbsSurface::derivative_bounds`]).
//!
//! The grid is uniform over a parameter rectangle with spacings `h_u`, `h_v`. The accuracy is
//! split as `ε = √6 δ + √3 σ` such that
//! * neighbouring texels are at most `δ` apart along u and along v: `h_u sup|S_u| ≤ δ` (the
//!   paper's trimming resolution `t_u`);
//! * the two triangles (and the bilinear patch) of every quad are within `σ` of the surface:
//!   `h_u² (M_u + M_uv) / 8 ≤ σ / 2` and the same in v (the paper's `s_u`, with the two
//!   directions sharing σ; the linear-interpolation remainder on a triangle is at most
//!   `h_u² (M_u + M_uv) / 8 + h_v² (M_v + M_uv) / 8`).
//!
//! The split is chosen per face for the fewest texels: a flat face puts almost all of ε into δ
//! (half the texels per side of the even split `δ = ε / (2√6)`), a curved one more into σ. Leaf
//! boxes are padded by the *certified* deviation on the chosen grid (the remainder above with
//! the actual spacings, piece by piece), not by the σ budget: for the flag of the paper's
//! Fig. 6a it is ~1e-4 of σ, so a leaf box is the quad's own extent and not four quads wide.
//! They then hold the true surface of their quad, and any point of a padded box is within
//! `√6 δ + √3 σ = ε` of the quad's first texel, so two overlapping leaf boxes have texels at
//! most `2ε` apart. Trim loops are flattened within half the smaller spacing.

use glam::DVec4;
use gprox_bvh::aabb::Aabb;
use gprox_geometry::freeform::model::pose_stretch;
use gprox_geometry::freeform::{apply_pose, DerivativeBounds, NurbsSurface, ParamRect};
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
    /// Certified bound on the distance between the surface and the triangles (or bilinear
    /// patch) of every quad on this grid (at most the σ share of ε); leaf boxes are padded by
    /// it.
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
        // One Bézier extraction gives both the bounds and the control boxes of the pieces.
        let degree = surface.degree();
        let mut patches = surface.bezier_patches();
        if let Some(c) = clip {
            let mut kept = Vec::new();
            for (rect, net) in patches {
                clip_patch(rect, net, degree, pose, c, CLIP_DEPTH, &mut kept);
            }
            patches = kept;
        }
        let pieces: Vec<_> = patches
            .iter()
            .map(|(rect, net)| DerivativeBounds::of_patch(*rect, net, degree))
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
        let (lu, lv) = (rect.u1 - rect.u0, rect.v1 - rect.v0);
        let (nu, nv) = split_budget(eps, stretch, [lu * du, lv * dv], [lu, lv], [au, av]);
        if !(nu < MAX_SIDE as f64 && nv < MAX_SIDE as f64) {
            return Err(GeometryImageError::TooLarge {
                face,
                eps,
                width: nu + 1.0,
                height: nv + 1.0,
                max: MAX_SIDE,
            });
        }
        let (hu, hv) = (lu / nu, lv / nv);
        // At most the σ share of ε that the grid was sized for.
        let sigma = deviation(&pieces, hu, hv, stretch);
        Ok(Some(Self {
            rect,
            width: nu as usize + 1,
            height: nv as usize + 1,
            eps,
            sigma,
            trim_tolerance: 0.5 * hu.min(hv),
        }))
    }

    /// Texel spacings `(h_u, h_v)` in parameter space.
    pub fn spacing(&self) -> (f64, f64) {
        let r = &self.rect;
        (
            (r.u1 - r.u0) / (self.width - 1) as f64,
            (r.v1 - r.v0) / (self.height - 1) as f64,
        )
    }

    /// The certified deviation bound of `surface` under `pose` on this grid: the triangle
    /// remainder with this spacing over every Bézier piece that overlaps the rectangle (so also
    /// for control points moved since the spec was made).
    pub fn deviation(&self, surface: &NurbsSurface, pose: &Pose64) -> f64 {
        let (hu, hv) = self.spacing();
        deviation(&self.pieces(surface), hu, hv, pose_stretch(pose))
    }

    /// The derivative bounds of the Bézier pieces of `surface` overlapping the rectangle.
    fn pieces(&self, surface: &NurbsSurface) -> Vec<DerivativeBounds> {
        let r = &self.rect;
        surface
            .derivative_bounds()
            .into_iter()
            .filter(|b| {
                b.rect.u0 < r.u1 && r.u0 < b.rect.u1 && b.rect.v0 < r.v1 && r.v0 < b.rect.v1
            })
            .collect()
    }

    /// Whether this grid still certifies the accuracy ε for `surface` under `pose` (moved
    /// control points or a new pose): `√6 max(h_u sup|S_u|, h_v sup|S_v|) + √3 σ ≤ ε` over the
    /// pieces overlapping the rectangle, σ the deviation bound on this grid. A deforming face can
    /// then keep its grid and stencil and only update the positions. Whole pieces count, so for
    /// a spec clipped below the piece level it can say no where the clipped parts would pass.
    pub fn admits(&self, surface: &NurbsSurface, pose: &Pose64) -> bool {
        let pieces = self.pieces(surface);
        let (hu, hv) = self.spacing();
        let stretch = pose_stretch(pose);
        let spread = pieces
            .iter()
            .map(|b| (hu * b.du).max(hv * b.dv) * stretch)
            .fold(0.0, f64::max);
        let sigma = deviation(&pieces, hu, hv, stretch);
        // The relative slack covers the rounding of the split (a fresh spec admits its surface).
        6f64.sqrt() * spread + 3f64.sqrt() * sigma <= self.eps * (1.0 + 1e-9)
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

/// Halvings of a Bézier patch when clipping it to a box.
const CLIP_DEPTH: u32 = 12;

/// The parts of a Bézier patch (homogeneous net, row-major `(p+1) x (q+1)`) whose control box
/// meets `clip` (§3 below the piece level): a patch wider than the clip box is halved in
/// parameter space (de Casteljau, along the direction of the longer control polygon) and each
/// half kept only if its own control box meets the clip box, up to `depth` times. Every point
/// of the patch inside the clip box lies in a kept part.
fn clip_patch(
    rect: ParamRect,
    net: Vec<DVec4>,
    degree: [usize; 2],
    pose: &Pose64,
    clip: &Aabb,
    depth: u32,
    out: &mut Vec<(ParamRect, Vec<DVec4>)>,
) {
    let b = net_world_box(&net, pose);
    if !b.overlaps(clip) {
        return;
    }
    let extent = |x: &Aabb| (0..3).map(|k| x.max[k] - x.min[k]).fold(0.0f32, f32::max);
    if depth == 0 || extent(&b) <= extent(clip) {
        out.push((rect, net));
        return;
    }
    let [p, q] = degree;
    let at = |i: usize, j: usize| net[i * (q + 1) + j].truncate() / net[i * (q + 1) + j].w;
    let length = |along_u: bool| {
        let mut l = 0.0;
        for a in 0..=(if along_u { q } else { p }) {
            for k in 0..(if along_u { p } else { q }) {
                l += if along_u {
                    at(k + 1, a).distance(at(k, a))
                } else {
                    at(a, k + 1).distance(at(a, k))
                };
            }
        }
        l
    };
    let along_u = length(true) >= length(false);
    let (lo, hi) = split_net(&net, degree, along_u);
    let (r0, r1) = if along_u {
        let m = 0.5 * (rect.u0 + rect.u1);
        (
            ParamRect::new(rect.u0, m, rect.v0, rect.v1),
            ParamRect::new(m, rect.u1, rect.v0, rect.v1),
        )
    } else {
        let m = 0.5 * (rect.v0 + rect.v1);
        (
            ParamRect::new(rect.u0, rect.u1, rect.v0, m),
            ParamRect::new(rect.u0, rect.u1, m, rect.v1),
        )
    };
    clip_patch(r0, lo, degree, pose, clip, depth - 1, out);
    clip_patch(r1, hi, degree, pose, clip, depth - 1, out);
}

/// The two halves of a Bézier net split at the middle of u (or v) by de Casteljau.
fn split_net(net: &[DVec4], [p, q]: [usize; 2], along_u: bool) -> (Vec<DVec4>, Vec<DVec4>) {
    let (mut lo, mut hi) = (net.to_vec(), net.to_vec());
    let (lines, n) = if along_u { (q + 1, p) } else { (p + 1, q) };
    let idx = |line: usize, k: usize| {
        if along_u {
            k * (q + 1) + line
        } else {
            line * (q + 1) + k
        }
    };
    for line in 0..lines {
        let mut c: Vec<DVec4> = (0..=n).map(|k| net[idx(line, k)]).collect();
        for r in 0..=n {
            lo[idx(line, r)] = c[0];
            hi[idx(line, n - r)] = c[n - r];
            for k in 0..n - r {
                c[k] = 0.5 * (c[k] + c[k + 1]);
            }
        }
    }
    (lo, hi)
}

/// The largest triangle remainder `(h_u² (M_u + M_uv) + h_v² (M_v + M_uv)) / 8` over `pieces`
/// (world units under a pose of the given stretch).
fn deviation(pieces: &[DerivativeBounds], hu: f64, hv: f64, stretch: f64) -> f64 {
    pieces
        .iter()
        .map(|b| (hu * hu * (b.duu + b.duv) + hv * hv * (b.dvv + b.duv)) * stretch / 8.0)
        .fold(0.0, f64::max)
}

/// Shares of ε tried for the spacing term (the rest bounds the deviation σ).
const SHARES: usize = 64;

/// Quad counts `(n_u, n_v)` for accuracy `eps`: over the splits `ε = √6 δ + √3 σ` (spacing
/// share `α = √6 δ / ε` in `(0, 1)`), the one with the fewest texels where
/// `n ≥ L sup|S'| / δ` (spacing) and `n ≥ L √((M + M_uv) / 4σ)` (flatness) along u and v.
/// Flat surfaces put nearly all of ε into the spacing, which halves the texels per side
/// against an even split; their boxes are then padded by the actual, much smaller, deviation.
fn split_budget(
    eps: f64,
    stretch: f64,
    arc: [f64; 2],
    len: [f64; 2],
    curv: [f64; 2],
) -> (f64, f64) {
    let cells = |k: usize, delta: f64, sigma: f64| {
        let spacing = (arc[k] * stretch / delta).ceil();
        let curve = (len[k] * (curv[k] * stretch / (4.0 * sigma)).sqrt()).ceil();
        spacing.max(curve).max(1.0)
    };
    (1..SHARES)
        .map(|s| {
            let alpha = s as f64 / SHARES as f64;
            let (delta, sigma) = (alpha * eps / 6f64.sqrt(), (1.0 - alpha) * eps / 3f64.sqrt());
            (cells(0, delta, sigma), cells(1, delta, sigma))
        })
        .min_by(|a, b| ((a.0 + 1.0) * (a.1 + 1.0)).total_cmp(&((b.0 + 1.0) * (b.1 + 1.0))))
        .unwrap_or((f64::INFINITY, f64::INFINITY))
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
    net_world_box(piece.homogeneous_points(), pose)
}

/// [`world_box`] of a homogeneous control net.
fn net_world_box(net: &[DVec4], pose: &Pose64) -> Aabb {
    let mut b = Aabb::EMPTY;
    for h in net {
        let p = apply_pose(pose, h.truncate() / h.w);
        for k in 0..3 {
            let slack = 1e-6 * p[k].abs() + 1e-30;
            let (lo, hi) = ((p[k] - slack) as f32, (p[k] + slack) as f32);
            b.min[k] = b.min[k].min(lo);
            b.max[k] = b.max[k].max(hi);
        }
    }
    b
}
