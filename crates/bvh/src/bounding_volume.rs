//! The interface shared by the tight bounding volumes ([`crate::obb`], [`crate::rss`],
//! [`crate::sphere`]) and the geometry they share: principal-component frames and rigid maps
//! whose rotation is only nearly orthonormal (f32 poses promoted to f64).
//!
//! Every volume is closed and conservative: after `fit`, `merge` and `transform` it contains
//! everything its inputs contained (the transforms inflate by the rotation's orthonormality
//! defect), and `distance` is a lower bound of the distance between any contents.

use glam::{DMat3, DVec3};
use gprox_geometry::transform::Pose64;

/// A convex bounding volume in f64.
pub trait BoundingVolume: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// Fits the volume around `points` in the given orthonormal frame (columns = axes; volumes
    /// without orientation ignore it). An empty slice gives a degenerate volume at the origin.
    fn fit_in_frame(points: &[DVec3], frame: &DMat3) -> Self;

    /// [`BoundingVolume::fit_in_frame`] over the union of point sets given as coordinate slices
    /// (`[xs, ys, zs]` of equal length per part), the layout the tree builder keeps its points
    /// in. Same result as fitting all the points; volumes override it with loops the compiler
    /// can vectorise.
    fn fit_in_frame_soa(parts: &[CoordSlices<'_>], frame: &DMat3) -> Self {
        Self::fit_in_frame(&soa_points(parts), frame)
    }

    /// Fits the volume around `points` in their principal-component frame.
    fn fit_points(points: &[DVec3]) -> Self {
        Self::fit_in_frame(points, &Moments::from_points(points).frame())
    }

    /// Fits the volume around one triangle (default: in the triangle's own frame, see
    /// [`triangle_frame`]).
    fn fit_triangle(t: &[DVec3; 3]) -> Self {
        Self::fit_in_frame(t, &triangle_frame(t))
    }

    /// A volume containing both.
    fn merge(&self, other: &Self) -> Self;

    /// A volume containing both, oriented by `frame` when the volume has an orientation.
    fn merge_in_frame(&self, other: &Self, frame: &DMat3) -> Self {
        Self::merge_all_in_frame(&[*self, *other], frame)
    }

    /// A volume containing all `parts` (at least one), oriented by `frame` when the volume has
    /// an orientation. Default: pairwise merges.
    fn merge_all_in_frame(parts: &[Self], _frame: &DMat3) -> Self {
        let mut it = parts.iter();
        let first = *it.next().expect("merge_all_in_frame: no parts");
        it.fold(first, |acc, p| acc.merge(p))
    }

    /// The image under `x ↦ m x + t`, where `m` is a rotation up to a small orthonormality defect
    /// (the result is inflated to stay conservative).
    fn transform_affine(&self, m: &DMat3, t: DVec3) -> Self;

    /// The image under a rigid pose.
    fn transform(&self, pose: &Pose64) -> Self {
        let (m, t) = pose_parts(pose);
        self.transform_affine(&m, t)
    }

    /// Whether the closed volumes share a point (may be conservative: true when unsure).
    fn overlaps(&self, other: &Self) -> bool;

    /// A lower bound of the distance between the volumes (0 when they overlap).
    fn distance(&self, other: &Self) -> f64;

    /// The image under `x ↦ q x + t` where `q` is orthonormal to rounding, grown by `grow`
    /// (callers pass `ε·R` to also hold `m x + t` for a near-rotation `m` with `‖m − q‖ ≤ ε`
    /// and contents within `|x| ≤ R`). Volumes may override this with a faster path.
    fn transform_rigid(&self, q: &DMat3, t: DVec3, grow: f64) -> Self {
        self.transform_affine(q, t).inflate(grow)
    }

    /// The volume grown by `r` in every direction.
    fn inflate(&self, r: f64) -> Self;

    /// An upper bound of `|x|` over the contents.
    fn reach(&self) -> f64;

    /// A cheap lower bound of [`BoundingVolume::distance`] (defaults to it).
    #[inline]
    fn distance_lower_bound(&self, other: &Self) -> f64 {
        self.distance(other)
    }

    /// Whether `p` lies in the volume enlarged by `tol`.
    fn contains_point(&self, p: DVec3, tol: f64) -> bool;

    /// A size measure (the radius of a ball around the volume), used to pick which node of a
    /// pair to split.
    fn size(&self) -> f64;
}

/// Points as three coordinate slices `[xs, ys, zs]` (see
/// [`BoundingVolume::fit_in_frame_soa`]).
pub type CoordSlices<'a> = [&'a [f64]; 3];

/// The points of coordinate-slice parts, in order (a part's slices are cut to the shortest).
pub fn soa_points(parts: &[CoordSlices<'_>]) -> Vec<DVec3> {
    parts
        .iter()
        .flat_map(|[xs, ys, zs]| {
            xs.iter()
                .zip(ys.iter())
                .zip(zs.iter())
                .map(|((&x, &y), &z)| DVec3::new(x, y, z))
        })
        .collect()
}

/// A triangle's own frame: longest edge, in-plane perpendicular, normal; the principal frame of
/// its corners when it has no area.
pub fn triangle_frame(t: &[DVec3; 3]) -> DMat3 {
    let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
    let n = e[0].cross(e[2]);
    let x = e
        .iter()
        .copied()
        .max_by(|a, b| a.length_squared().total_cmp(&b.length_squared()))
        .unwrap_or(DVec3::X);
    let (n2, x2) = (n.length_squared(), x.length_squared());
    let has_area = n2 > 1e-24 * x2 * x2 && n2.is_finite();
    if !has_area {
        return Moments::from_points(t).frame();
    }
    let x = x / x2.sqrt();
    let z = n / n2.sqrt();
    DMat3::from_cols(x, z.cross(x), z)
}

/// Linear part and translation of a pose.
pub fn pose_parts(pose: &Pose64) -> (DMat3, DVec3) {
    let r = &pose.rows;
    let m = DMat3::from_cols(
        DVec3::new(r[0][0], r[1][0], r[2][0]),
        DVec3::new(r[0][1], r[1][1], r[2][1]),
        DVec3::new(r[0][2], r[1][2], r[2][2]),
    );
    (m, DVec3::new(r[0][3], r[1][3], r[2][3]))
}

/// Images of an orthonormal frame's axes under `m`, re-orthonormalised (Gram–Schmidt), and a
/// bound `ε` with `|m a_i − a_i'| ≤ ε` for every axis.
pub fn map_frame(m: &DMat3, frame: &DMat3) -> (DMat3, f64) {
    let x = *m * frame.x_axis;
    let y = *m * frame.y_axis;
    let z = *m * frame.z_axis;
    let xn = x.normalize_or(DVec3::X);
    let yo = y - xn * xn.dot(y);
    let yn = yo.normalize_or(xn.any_orthonormal_vector());
    let zn = xn.cross(yn);
    // The handedness follows m (a reflection keeps its orientation flip out of the frame).
    let zn = if zn.dot(z) < 0.0 { -zn } else { zn };
    let eps = (x - xn)
        .length()
        .max((y - yn).length())
        .max((z - zn).length());
    (DMat3::from_cols(xn, yn, zn), eps * (1.0 + 1e-12) + 1e-15)
}

/// The rotation nearest to a near-rotation `m` (polar decomposition by Newton iteration) and
/// a bound `ε ≥ ‖m − q‖₂`. A singular `m` gives the identity and an infinite bound.
pub fn nearest_rotation(m: &DMat3) -> (DMat3, f64) {
    let mut q = *m;
    for _ in 0..8 {
        let det = q.determinant();
        if !det.is_finite() || det.abs() < 1e-12 {
            return (DMat3::IDENTITY, f64::INFINITY);
        }
        let next = (q + q.inverse().transpose()) * 0.5;
        let change = (next - q)
            .to_cols_array()
            .iter()
            .map(|x| x.abs())
            .fold(0.0, f64::max);
        q = next;
        if change < 1e-17 {
            break;
        }
    }
    let e = *m - q;
    let frob = e.to_cols_array().iter().map(|x| x * x).sum::<f64>().sqrt();
    (q, frob * (1.0 + 1e-9) + 4.0 * f64::EPSILON)
}

/// Largest stretch `‖m‖₂` of a near-rotation, bounded by the Frobenius norm of `mᵀm` rows.
pub fn stretch(m: &DMat3) -> f64 {
    let g = m.transpose() * *m;
    let rows = [g.row(0), g.row(1), g.row(2)];
    let max_row = rows
        .iter()
        .map(|r| r.x.abs() + r.y.abs() + r.z.abs())
        .fold(0.0, f64::max);
    max_row.sqrt() * (1.0 + 1e-14)
}

/// First and second moments of a point set (additive, so sub-ranges come from prefix sums).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    /// Number of points.
    pub count: f64,
    /// Sum of the points.
    pub sum: DVec3,
    /// Sums of `x², y², z²`.
    pub diag: DVec3,
    /// Sums of `xy, xz, yz`.
    pub off: DVec3,
}

impl Moments {
    /// Moments of one point.
    #[inline]
    pub fn of_point(p: DVec3) -> Self {
        Self {
            count: 1.0,
            sum: p,
            diag: p * p,
            off: DVec3::new(p.x * p.y, p.x * p.z, p.y * p.z),
        }
    }

    /// Moments of a point set.
    pub fn from_points(points: &[DVec3]) -> Self {
        points
            .iter()
            .fold(Self::default(), |m, &p| m.add(&Self::of_point(p)))
    }

    /// Sum of moments.
    #[inline]
    pub fn add(&self, o: &Self) -> Self {
        Self {
            count: self.count + o.count,
            sum: self.sum + o.sum,
            diag: self.diag + o.diag,
            off: self.off + o.off,
        }
    }

    /// Difference of moments (for prefix sums).
    #[inline]
    pub fn sub(&self, o: &Self) -> Self {
        Self {
            count: self.count - o.count,
            sum: self.sum - o.sum,
            diag: self.diag - o.diag,
            off: self.off - o.off,
        }
    }

    /// Covariance matrix.
    pub fn covariance(&self) -> DMat3 {
        if self.count <= 0.0 {
            return DMat3::ZERO;
        }
        let n = self.count;
        let m = self.sum / n;
        let cxx = self.diag.x / n - m.x * m.x;
        let cyy = self.diag.y / n - m.y * m.y;
        let czz = self.diag.z / n - m.z * m.z;
        let cxy = self.off.x / n - m.x * m.y;
        let cxz = self.off.y / n - m.x * m.z;
        let cyz = self.off.z / n - m.y * m.z;
        DMat3::from_cols(
            DVec3::new(cxx, cxy, cxz),
            DVec3::new(cxy, cyy, cyz),
            DVec3::new(cxz, cyz, czz),
        )
    }

    /// Principal axes, largest variance first, as a right-handed orthonormal frame.
    pub fn frame(&self) -> DMat3 {
        eigen_frame(&self.covariance())
    }
}

/// Eigenvectors of a symmetric matrix (closed-form eigenvalues, eigenvectors from cross products
/// of the rows of `C − λI`), sorted by decreasing eigenvalue, as a right-handed orthonormal
/// frame. Repeated eigenvalues get an arbitrary orthonormal completion; a zero or non-finite
/// matrix gives the identity. Any orthonormal frame keeps the fits conservative — accuracy only
/// affects tightness.
pub fn eigen_frame(c: &DMat3) -> DMat3 {
    let (a00, a11, a22) = (c.x_axis.x, c.y_axis.y, c.z_axis.z);
    let (a01, a02, a12) = (c.y_axis.x, c.z_axis.x, c.z_axis.y);
    let p1 = a01 * a01 + a02 * a02 + a12 * a12;
    let q = (a00 + a11 + a22) / 3.0;
    let p2 = (a00 - q).powi(2) + (a11 - q).powi(2) + (a22 - q).powi(2) + 2.0 * p1;
    if !(p2.is_finite() && q.is_finite()) || p2 <= 1e-30 * q.abs().max(f64::MIN_POSITIVE) {
        return DMat3::IDENTITY;
    }
    let p = (p2 / 6.0).sqrt();
    let b = (*c - DMat3::from_diagonal(DVec3::splat(q))) * (1.0 / p);
    let r = (b.determinant() * 0.5).clamp(-1.0, 1.0);
    let phi = r.acos() / 3.0;
    // cos(φ + 2π/3) = −cos φ / 2 − sin φ · √3/2: one sin_cos instead of two cosines.
    let (sin, cos) = phi.sin_cos();
    let l1 = q + 2.0 * p * cos;
    let l3 = q - p * (cos + sin * 3f64.sqrt());
    let x = null_vector(c, l1).unwrap_or(DVec3::X);
    let z0 = null_vector(c, l3).unwrap_or_else(|| x.any_orthonormal_vector());
    let z = (z0 - x * x.dot(z0)).normalize_or(x.any_orthonormal_vector());
    let y = z.cross(x);
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return DMat3::IDENTITY;
    }
    DMat3::from_cols(x, y, x.cross(y))
}

/// A unit vector in the null space of `c − λI` (the largest cross product of two of its rows),
/// or None when the rank is below 2 (a repeated eigenvalue).
fn null_vector(c: &DMat3, l: f64) -> Option<DVec3> {
    let m = *c - DMat3::from_diagonal(DVec3::splat(l));
    let (r0, r1, r2) = (m.row(0), m.row(1), m.row(2));
    let cands = [r0.cross(r1), r0.cross(r2), r1.cross(r2)];
    let best = cands
        .into_iter()
        .max_by(|u, v| u.length_squared().total_cmp(&v.length_squared()))?;
    let scale = r0
        .length_squared()
        .max(r1.length_squared())
        .max(r2.length_squared());
    if best.length_squared() <= 1e-20 * scale * scale || scale == 0.0 {
        return None;
    }
    Some(best.normalize())
}
