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

    /// [`BoundingVolume::distance_lower_bound`] of two pairs `(a, b)`, each `b` first mapped by
    /// [`BoundingVolume::transform_rigid`]`(q, t, grow)`: the distance query's two children of
    /// an expanded node pair. Volumes may evaluate both pairs at once; the result must equal
    /// the one-pair evaluation.
    #[inline]
    fn distance_lower_bounds_mapped(
        pairs: [(&Self, &Self); 2],
        q: &DMat3,
        t: DVec3,
        grow: f64,
    ) -> [f64; 2] {
        pairs.map(|(a, b)| a.distance_lower_bound(&b.transform_rigid(q, t, grow)))
    }

    /// Whether `p` lies in the volume enlarged by `tol`.
    fn contains_point(&self, p: DVec3, tol: f64) -> bool;

    /// A ball holding the volume: its centre and a radius (up to the rounding of one square
    /// root); the distance query's first descent takes the pair with nearer centres where
    /// lower bounds tie. Defaults to an infinite ball at the origin (no information).
    #[inline]
    fn ball(&self) -> (DVec3, f64) {
        (DVec3::ZERO, f64::INFINITY)
    }

    /// A size measure (the radius of a ball around the volume), used to pick which node of a
    /// pair to split.
    fn size(&self) -> f64;
}

/// Points as three coordinate slices `[xs, ys, zs]` (see
/// [`BoundingVolume::fit_in_frame_soa`]).
pub type CoordSlices<'a> = [&'a [f64]; 3];

/// Calls `f` on the points of `parts` in groups of `L` (per-coordinate arrays, so the body can
/// work lane by lane and the compiler can vectorise it). A part's last group is padded by
/// repeating its last point, which min/max folds do not notice. Returns the number of points.
#[inline(always)]
pub(crate) fn for_each_group<const L: usize>(
    parts: &[CoordSlices<'_>],
    mut f: impl FnMut(&[f64; L], &[f64; L], &[f64; L]),
) -> usize {
    let mut count = 0;
    for [xs, ys, zs] in parts {
        let n = xs.len().min(ys.len()).min(zs.len());
        count += n;
        let (xs, ys, zs) = (&xs[..n], &ys[..n], &zs[..n]);
        let groups = xs
            .chunks_exact(L)
            .zip(ys.chunks_exact(L))
            .zip(zs.chunks_exact(L));
        for ((x, y), z) in groups {
            let arr = |s: &[f64]| -> [f64; L] { s.try_into().expect("chunk of L") };
            f(&arr(x), &arr(y), &arr(z));
        }
        let full = n / L * L;
        if full < n {
            let pad = |s: &[f64]| -> [f64; L] { std::array::from_fn(|j| s[(full + j).min(n - 1)]) };
            f(&pad(xs), &pad(ys), &pad(zs));
        }
    }
    count
}

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
    // The longest edge (the last of equally long ones, like `max_by`).
    let mut x = e[0];
    let mut x2 = x.length_squared();
    for v in [e[1], e[2]] {
        let v2 = v.length_squared();
        if v2 >= x2 {
            (x, x2) = (v, v2);
        }
    }
    let n2 = n.length_squared();
    let has_area = n2 > 1e-24 * x2 * x2 && n2.is_finite();
    if !has_area {
        return Moments::from_points(t).frame();
    }
    // One division each (the frame only needs to be orthonormal to rounding).
    let x = x * (1.0 / x2.sqrt());
    let z = n * (1.0 / n2.sqrt());
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
/// a bound `ε ≥ ‖m − q‖₂`. A singular `m`, or one too ill-conditioned for the iteration to
/// reach a rotation, gives the identity and an infinite bound.
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
    // Callers map volumes rigidly by q: an iteration that has not converged to a rotation
    // (an ill-conditioned m, e.g. scaling by 1e30 along one axis) must not be used as one.
    let defect = (q.transpose() * q - DMat3::IDENTITY)
        .to_cols_array()
        .iter()
        .map(|x| x.abs())
        .fold(0.0, f64::max);
    if defect.is_nan() || defect >= 1e-12 {
        return (DMat3::IDENTITY, f64::INFINITY);
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
        let inv = 1.0 / self.count;
        let m = self.sum * inv;
        let cxx = self.diag.x * inv - m.x * m.x;
        let cyy = self.diag.y * inv - m.y * m.y;
        let czz = self.diag.z * inv - m.z * m.z;
        let cxy = self.off.x * inv - m.x * m.y;
        let cxz = self.off.y * inv - m.x * m.z;
        let cyz = self.off.z * inv - m.y * m.z;
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

/// [`eigen_frame`] of four matrices at once, lane by lane in SIMD (the tree builder's batch
/// path: a single frame is a long chain of dependent roots, divisions and trigonometry). Same
/// method; the SIMD `acos`/`cos` differ from libm's in the last bits, so the frames may differ
/// from [`eigen_frame`]'s by rounding. Lanes the fast path cannot take (a repeated or near-zero
/// eigenvalue spread, non-finite input) fall back to [`eigen_frame`].
pub fn eigen_frames4(c: &[DMat3; 4]) -> [DMat3; 4] {
    use wide::{f64x4, CmpGe, CmpGt};
    let v = |f: fn(&DMat3) -> f64| f64x4::from(c.each_ref().map(f));
    let (a00, a11, a22) = (v(|m| m.x_axis.x), v(|m| m.y_axis.y), v(|m| m.z_axis.z));
    let (a01, a02, a12) = (v(|m| m.y_axis.x), v(|m| m.z_axis.x), v(|m| m.z_axis.y));
    let s = f64x4::splat;
    let p1 = a01 * a01 + a02 * a02 + a12 * a12;
    let q = (a00 + a11 + a22) / s(3.0);
    let (b00, b11, b22) = (a00 - q, a11 - q, a22 - q);
    let p2 = b00 * b00 + b11 * b11 + b22 * b22 + s(2.0) * p1;
    let p = (p2 / s(6.0)).sqrt();
    let det = b00 * (b11 * b22 - a12 * a12) - a01 * (a01 * b22 - a12 * a02)
        + a02 * (a01 * a12 - b11 * a02);
    let r = (det / (s(2.0) * p * p * p))
        .fast_max(s(-1.0))
        .fast_min(s(1.0));
    let l1 = q + s(2.0) * p * (r.acos() / s(3.0)).cos();
    // Null vector of C − λ1 I: the longest of the cross products of its rows.
    let (m00, m11, m22) = (a00 - l1, a11 - l1, a22 - l1);
    let cands = [
        [
            a01 * a12 - a02 * m11,
            a02 * a01 - m00 * a12,
            m00 * m11 - a01 * a01,
        ],
        [
            a01 * m22 - a02 * a12,
            a02 * a02 - m00 * m22,
            m00 * a12 - a01 * a02,
        ],
        [
            m11 * m22 - a12 * a12,
            a12 * a02 - a01 * m22,
            a01 * a12 - m11 * a02,
        ],
    ];
    let len2 = |u: &[f64x4; 3]| u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    let mut best = cands[0];
    let mut best2 = len2(&best);
    for u in &cands[1..] {
        let u2 = len2(u);
        let take = u2.cmp_gt(best2);
        best = std::array::from_fn(|k| take.blend(u[k], best[k]));
        best2 = take.blend(u2, best2);
    }
    let rows = [
        m00 * m00 + a01 * a01 + a02 * a02,
        a01 * a01 + m11 * m11 + a12 * a12,
        a02 * a02 + a12 * a12 + m22 * m22,
    ];
    let scale = rows[0].fast_max(rows[1]).fast_max(rows[2]);
    let inv = s(1.0) / best2.sqrt();
    let x = best.map(|b| b * inv);
    // Orthonormal basis of the plane normal to x (Duff et al. 2017, as `any_orthonormal_pair`).
    let sign = s(1.0).copysign(x[2]);
    let a = s(-1.0) / (sign + x[2]);
    let b = x[0] * x[1] * a;
    let e1 = [s(1.0) + sign * x[0] * x[0] * a, sign * b, -sign * x[0]];
    let e2 = [b, sign + x[1] * x[1] * a, -x[1]];
    let mul = |u: &[f64x4; 3]| {
        [
            a00 * u[0] + a01 * u[1] + a02 * u[2],
            a01 * u[0] + a11 * u[1] + a12 * u[2],
            a02 * u[0] + a12 * u[1] + a22 * u[2],
        ]
    };
    let dot = |u: &[f64x4; 3], w: &[f64x4; 3]| u[0] * w[0] + u[1] * w[1] + u[2] * w[2];
    let (ce1, ce2) = (mul(&e1), mul(&e2));
    let (a, b, d) = (dot(&e1, &ce1), dot(&e1, &ce2), dot(&e2, &ce2));
    let h = (a - d) * s(0.5);
    let g = (h * h + b * b).sqrt();
    let pos = h.cmp_ge(s(0.0));
    let (cs, ct) = (pos.blend(h + g, b), pos.blend(b, g - h));
    let n2 = cs * cs + ct * ct;
    let inv = s(1.0) / n2.sqrt();
    let y: [f64x4; 3] = std::array::from_fn(|k| (e1[k] * cs + e2[k] * ct) * inv);
    let z = [
        x[1] * y[2] - x[2] * y[1],
        x[2] * y[0] - x[0] * y[2],
        x[0] * y[1] - x[1] * y[0],
    ];
    // The scalar path's conditions for its fallbacks, plus anything non-finite.
    let ok = p2.cmp_gt(s(1e-30) * q.abs().fast_max(s(f64::MIN_POSITIVE)))
        & best2.cmp_gt(s(1e-20) * scale * scale)
        & n2.cmp_gt(s(0.0))
        & x.iter()
            .chain(&y)
            .chain(&z)
            .fold(p2.is_finite() & q.is_finite(), |m, c| m & c.is_finite());
    let ok = ok.move_mask();
    let (x, y, z) = (
        x.map(f64x4::to_array),
        y.map(f64x4::to_array),
        z.map(f64x4::to_array),
    );
    std::array::from_fn(|j| {
        if ok & (1 << j) == 0 {
            return eigen_frame(&c[j]);
        }
        DMat3::from_cols(
            DVec3::new(x[0][j], x[1][j], x[2][j]),
            DVec3::new(y[0][j], y[1][j], y[2][j]),
            DVec3::new(z[0][j], z[1][j], z[2][j]),
        )
    })
}

/// Eigenvectors of a symmetric matrix, sorted by decreasing eigenvalue, as a right-handed
/// orthonormal frame: the largest eigenvalue in closed form, its eigenvector from the largest
/// cross product of two rows of `C − λI`, then the exact 2×2 eigenproblem in the plane normal
/// to it (one square root, and no second eigenvalue solve or re-orthogonalisation). Repeated
/// eigenvalues get an arbitrary orthonormal completion; a zero or non-finite matrix gives the
/// identity. Any orthonormal frame keeps the fits conservative — accuracy only affects
/// tightness.
pub fn eigen_frame(c: &DMat3) -> DMat3 {
    let (a00, a11, a22) = (c.x_axis.x, c.y_axis.y, c.z_axis.z);
    let (a01, a02, a12) = (c.y_axis.x, c.z_axis.x, c.z_axis.y);
    let p1 = a01 * a01 + a02 * a02 + a12 * a12;
    let q = (a00 + a11 + a22) / 3.0;
    let (b00, b11, b22) = (a00 - q, a11 - q, a22 - q);
    let p2 = b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * p1;
    if !(p2.is_finite() && q.is_finite()) || p2 <= 1e-30 * q.abs().max(f64::MIN_POSITIVE) {
        return DMat3::IDENTITY;
    }
    let p = (p2 / 6.0).sqrt();
    // det(C − qI) / (2p³) = cos 3φ; the largest eigenvalue is q + 2p cos φ.
    let det = b00 * (b11 * b22 - a12 * a12) - a01 * (a01 * b22 - a12 * a02)
        + a02 * (a01 * a12 - b11 * a02);
    let r = (det / (2.0 * p * p * p)).clamp(-1.0, 1.0);
    let l1 = q + 2.0 * p * (r.acos() / 3.0).cos();
    // Rows of C − λ1 I; the largest cross product of two of them spans the null space unless
    // λ1 is repeated (rank < 2), where any unit vector of its eigenplane will do.
    let r0 = DVec3::new(a00 - l1, a01, a02);
    let r1 = DVec3::new(a01, a11 - l1, a12);
    let r2 = DVec3::new(a02, a12, a22 - l1);
    let mut best = r0.cross(r1);
    let mut best2 = best.length_squared();
    for u in [r0.cross(r2), r1.cross(r2)] {
        let u2 = u.length_squared();
        if u2 > best2 {
            (best, best2) = (u, u2);
        }
    }
    let mut row = r0;
    for r in [r1, r2] {
        if r.length_squared() > row.length_squared() {
            row = r;
        }
    }
    let scale = row.length_squared();
    let x = if best2 > 1e-20 * scale * scale && scale > 0.0 {
        best / best2.sqrt()
    } else if scale > 0.0 {
        // Rank 1: the rows span the smallest eigenvalue's eigenvector; x is normal to it.
        (row / scale.sqrt()).any_orthonormal_vector()
    } else {
        DVec3::X
    };
    // The plane normal to x: the eigenvector of the larger eigenvalue μ of the 2×2 matrix
    // [[a, b], [b, d]] of C in the basis (e1, e2), taking the form without cancellation.
    let e1 = x.any_orthonormal_vector();
    let e2 = x.cross(e1);
    let (ce1, ce2) = (*c * e1, *c * e2);
    let (a, b, d) = (e1.dot(ce1), e1.dot(ce2), e2.dot(ce2));
    let h = (a - d) * 0.5;
    let g = (h * h + b * b).sqrt();
    let (s, t) = if h >= 0.0 {
        (h + g, b) // (μ − d, b)
    } else {
        (b, g - h) // (b, μ − a)
    };
    let n2 = s * s + t * t;
    let y = if n2 > 0.0 {
        (e1 * s + e2 * t) / n2.sqrt()
    } else {
        e1
    };
    let z = x.cross(y);
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return DMat3::IDENTITY;
    }
    DMat3::from_cols(x, y, z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rotation is its own nearest rotation; an ill-conditioned or singular matrix is never
    /// returned as a "rotation" that is not one (callers map volumes rigidly by it).
    #[test]
    fn nearest_rotation_is_a_rotation_or_refuses() {
        let r = DMat3::from_rotation_x(0.3) * DMat3::from_rotation_z(-1.1);
        let (q, eps) = nearest_rotation(&r);
        assert!((q - r).to_cols_array().iter().all(|x| x.abs() < 1e-15) && eps < 1e-14);
        let near = r * 1.001;
        let (q, eps) = nearest_rotation(&near);
        let defect = (q.transpose() * q - DMat3::IDENTITY).to_cols_array();
        assert!(defect.iter().all(|x| x.abs() < 1e-12));
        assert!((0.001 * 0.999..0.01).contains(&eps));
        // Singular values 1e30, 1.85, 1e-30: Newton's iteration does not reach a rotation.
        let ill = DMat3::from_cols(
            DVec3::new(0.0, 1e-30, 0.0),
            DVec3::new(0.0, 0.0, 1e30),
            DVec3::new(1.8507465, 0.0, 0.0),
        );
        assert_eq!(nearest_rotation(&ill), (DMat3::IDENTITY, f64::INFINITY));
        assert_eq!(nearest_rotation(&DMat3::ZERO).1, f64::INFINITY);
    }
}
