//! Rectangle swept spheres (RSS): the points within `radius` of an oriented rectangle.
//!
//! Fit (PQP style): in a principal-component frame the radius is half the thickness along the
//! third axis; the rectangle is shrunk where the rounded rim still covers the points, then grown
//! at the corners until every point is inside. Distance between two RSS is the exact
//! rectangle–rectangle distance ([`rect_distance`]) minus both radii.

use glam::{DMat3, DVec2, DVec3};
use gprox_geometry::tri_distance::segment_segment_closest;

use crate::bounding_volume::{
    for_each_group, map_frame, stretch, triangle_frame, BoundingVolume, CoordSlices, Moments,
};

/// A rectangle swept sphere, 120 bytes: the rectangle
/// `{center + x a0 + y a1 : |x| ≤ half_lengths.x, |y| ≤ half_lengths.y}` (a0, a1 = first two
/// columns of `axes`, the third is its normal) dilated by a ball of `radius`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Rss {
    /// Rectangle centre.
    pub center: DVec3,
    /// Orthonormal frame: rectangle axes, then the normal.
    pub axes: DMat3,
    /// Half side lengths of the rectangle (≥ 0).
    pub half_lengths: DVec2,
    /// Sweep radius (≥ 0).
    pub radius: f64,
}

/// Relative slack added to fitted sizes to absorb rounding.
const SLACK: f64 = 8.0 * f64::EPSILON;

/// Points per step of the vectorised fitting loops (two SSE2 registers, one AVX register).
const LANES: usize = 4;

/// One coordinate of LANES points.
type Lanes = wide::f64x4;

/// `min` as one compare-and-select (`minpd`); the fitted points are finite.
#[inline(always)]
fn min_f(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// `max` as one compare-and-select (`maxpd`); the fitted points are finite.
#[inline(always)]
fn max_f(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

impl Rss {
    /// The fitted volume from the local extents `[u_lo, u_hi, v_lo, v_hi]` of the rim-shrunk
    /// rectangle, the mid-plane height `wc` and the half thickness `r` (frame coordinates).
    fn from_local_extents(frame: &DMat3, uv: [f64; 4], wc: f64, r: f64) -> Self {
        let [mut ulo, mut uhi, mut vlo, mut vhi] = uv;
        // A rectangle shrunk past itself degenerates to its mid line; points are then within
        // `rim/√2` of it along that axis as well.
        if ulo > uhi {
            let m = (ulo + uhi) * 0.5;
            (ulo, uhi) = (m, m);
        }
        if vlo > vhi {
            let m = (vlo + vhi) * 0.5;
            (vlo, vhi) = (m, m);
        }
        let mid = DVec3::new((ulo + uhi) * 0.5, (vlo + vhi) * 0.5, wc);
        let scale = mid.abs().max_element() + (uhi - ulo) + (vhi - vlo) + r;
        Self {
            center: *frame * mid,
            axes: *frame,
            half_lengths: DVec2::new((uhi - ulo) * 0.5, (vhi - vlo) * 0.5),
            radius: r * (1.0 + SLACK) + SLACK * 4.0 * scale,
        }
    }

    /// The 4 rectangle corners (bit 0: `+a0`, bit 1: `+a1`).
    pub fn corners(&self) -> [DVec3; 4] {
        std::array::from_fn(|i| {
            let sx = if i & 1 != 0 { 1.0 } else { -1.0 };
            let sy = if i & 2 != 0 { 1.0 } else { -1.0 };
            self.center
                + self.axes.x_axis * (sx * self.half_lengths.x)
                + self.axes.y_axis * (sy * self.half_lengths.y)
        })
    }

    /// A cheap lower bound of the distance: the largest gap over separating axes (both normals,
    /// the four rectangle axes and the centre line), minus both radii.
    #[inline]
    pub fn distance_lower_bound(&self, o: &Self) -> f64 {
        let t = o.center - self.center;
        let (a0, a1, na) = (self.axes.x_axis, self.axes.y_axis, self.axes.z_axis);
        let (b0, b1, nb) = (o.axes.x_axis, o.axes.y_axis, o.axes.z_axis);
        let (ha, hb) = (self.half_lengths, o.half_lengths);
        // Dot products of the frames, shared by all axes.
        let (a0b0, a0b1, a1b0, a1b1) = (a0.dot(b0), a0.dot(b1), a1.dot(b0), a1.dot(b1));
        let (nab0, nab1, nba0, nba1) = (na.dot(b0), na.dot(b1), nb.dot(a0), nb.dot(a1));
        let (ta0, ta1, tna) = (t.dot(a0), t.dot(a1), t.dot(na));
        let (tb0, tb1, tnb) = (t.dot(b0), t.dot(b1), t.dot(nb));
        let mut gap = tna.abs() - (hb.x * nab0.abs() + hb.y * nab1.abs());
        gap = gap.max(tnb.abs() - (ha.x * nba0.abs() + ha.y * nba1.abs()));
        gap = gap.max(ta0.abs() - ha.x - (hb.x * a0b0.abs() + hb.y * a0b1.abs()));
        gap = gap.max(ta1.abs() - ha.y - (hb.x * a1b0.abs() + hb.y * a1b1.abs()));
        gap = gap.max(tb0.abs() - hb.x - (ha.x * a0b0.abs() + ha.y * a1b0.abs()));
        gap = gap.max(tb1.abs() - hb.y - (ha.x * a0b1.abs() + ha.y * a1b1.abs()));
        let tl = t.length();
        if tl > 0.0 {
            // Centre line: extents along d = t/|t| from the projections computed above.
            let ea = ha.x * ta0.abs() + ha.y * ta1.abs();
            let eb = hb.x * tb0.abs() + hb.y * tb1.abs();
            gap = gap.max(tl - (ea + eb) / tl);
        }
        let gap = gap - self.radius - o.radius;
        let scale = tl + ha.x + ha.y + hb.x + hb.y;
        (gap - SLACK * 4.0 * scale).max(0.0)
    }
}

/// Exact distance between two closed rectangles, given by centre, frame (first two columns
/// span the rectangle) and half side lengths; 0 when they intersect.
///
/// ```
/// use gprox_bvh::rss::rect_distance;
/// use glam::{DMat3, DVec2, DVec3};
/// let d = rect_distance(DVec3::ZERO, &DMat3::IDENTITY, DVec2::ONE,
///                       DVec3::new(0.0, 0.0, 2.0), &DMat3::IDENTITY, DVec2::ONE);
/// assert_eq!(d, 2.0);
/// ```
pub fn rect_distance(ca: DVec3, fa: &DMat3, ha: DVec2, cb: DVec3, fb: &DMat3, hb: DVec2) -> f64 {
    let corners = |c: DVec3, f: &DMat3, h: DVec2| -> [DVec3; 4] {
        let (x, y) = (f.x_axis * h.x, f.y_axis * h.y);
        [c - x - y, c + x - y, c + x + y, c - x + y]
    };
    let pa = corners(ca, fa, ha);
    let pb = corners(cb, fb, hb);
    // Corners of one rectangle in the other's frame: crossings and vertex–face candidates.
    let mut best2 = f64::INFINITY;
    for (c, f, h, other) in [(ca, fa, ha, &pb), (cb, fb, hb, &pa)] {
        let local: [DVec3; 4] = other.map(|p| {
            let d = p - c;
            DVec3::new(d.dot(f.x_axis), d.dot(f.y_axis), d.dot(f.z_axis))
        });
        for k in 0..4 {
            let p = local[k];
            if p.x.abs() <= h.x && p.y.abs() <= h.y {
                best2 = best2.min(p.z * p.z);
            }
            let q = local[(k + 1) % 4];
            if (p.z <= 0.0 && q.z >= 0.0) || (p.z >= 0.0 && q.z <= 0.0) {
                let dz = p.z - q.z;
                let s = if dz != 0.0 { p.z / dz } else { 0.0 };
                let x = p + (q - p) * s;
                if x.x.abs() <= h.x && x.y.abs() <= h.y {
                    return 0.0;
                }
            }
        }
    }
    for i in 0..4 {
        for j in 0..4 {
            let (_, _, p, q) =
                segment_segment_closest(pa[i], pa[(i + 1) % 4], pb[j], pb[(j + 1) % 4]);
            best2 = best2.min(p.distance_squared(q));
        }
    }
    best2.sqrt()
}

impl BoundingVolume for Rss {
    fn fit_triangle(t: &[DVec3; 3]) -> Self {
        let frame = triangle_frame(t);
        let ft = frame.transpose();
        let [a, b, c] = t.map(|p| ft * p);
        // The corners lie in the mid-plane up to rounding, so the rim would shrink the rectangle
        // by a rounding-level amount at most: its bounding rectangle (larger, hence still
        // conservative) spares the square roots.
        let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
        let wc = (hi.z + lo.z) * 0.5;
        Self::from_local_extents(&frame, [lo.x, hi.x, lo.y, hi.y], wc, (hi.z - lo.z) * 0.5)
    }

    fn fit_in_frame(points: &[DVec3], frame: &DMat3) -> Self {
        if points.is_empty() {
            return Self {
                center: DVec3::ZERO,
                axes: *frame,
                half_lengths: DVec2::ZERO,
                radius: 0.0,
            };
        }
        let ft = frame.transpose();
        // Projections are recomputed in each pass (no allocation per node).
        let local = || points.iter().map(move |&p| ft * p);
        let (wlo, whi) = local().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), q| {
            (l.min(q.z), h.max(q.z))
        });
        let r = (whi - wlo) * 0.5;
        let wc = (whi + wlo) * 0.5;
        let r2 = r * r;
        // Shrink the rectangle where the rounded rim still covers the points: a point at
        // height dw off the mid-plane may stick out by `rim/√2` along both rectangle axes at
        // once (du² + dv² + dw² ≤ rim² + dw² = r²), so no corner pass is needed.
        let (mut ulo, mut uhi, mut vlo, mut vhi) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for q in local() {
            let dw = q.z - wc;
            let rim = ((r2 - dw * dw).max(0.0) * 0.5).sqrt();
            ulo = ulo.min(q.x + rim);
            uhi = uhi.max(q.x - rim);
            vlo = vlo.min(q.y + rim);
            vhi = vhi.max(q.y - rim);
        }
        Self::from_local_extents(frame, [ulo, uhi, vlo, vhi], wc, r)
    }

    fn fit_in_frame_soa(parts: &[CoordSlices<'_>], frame: &DMat3) -> Self {
        // Local coordinates exactly as `ft * p` computes them (column sums in the same order),
        // LANES points at a time.
        let ft = frame.transpose();
        let (c0, c1, c2) = (ft.x_axis, ft.y_axis, ft.z_axis);
        let s = Lanes::splat;
        let w_of = |x: Lanes, y: Lanes, z: Lanes| s(c0.z) * x + s(c1.z) * y + s(c2.z) * z;
        // Pass 1: the extent along the normal.
        let (mut lo, mut hi) = (s(f64::INFINITY), s(f64::NEG_INFINITY));
        let count = for_each_group::<LANES>(parts, |x, y, z| {
            let w = w_of(Lanes::from(*x), Lanes::from(*y), Lanes::from(*z));
            lo = lo.fast_min(w);
            hi = hi.fast_max(w);
        });
        if count == 0 {
            return Self::fit_in_frame(&[], frame);
        }
        let wlo = lo.to_array().into_iter().fold(f64::INFINITY, min_f);
        let whi = hi.to_array().into_iter().fold(f64::NEG_INFINITY, max_f);
        let r = (whi - wlo) * 0.5;
        let wc = (whi + wlo) * 0.5;
        // Pass 2: the rectangle, shrunk by the rim (see `fit_in_frame`).
        let (r2, wc_l, zero, half) = (s(r * r), s(wc), s(0.0), s(0.5));
        let (mut ulo, mut uhi) = (s(f64::INFINITY), s(f64::NEG_INFINITY));
        let (mut vlo, mut vhi) = (ulo, uhi);
        for_each_group::<LANES>(parts, |x, y, z| {
            let (x, y, z) = (Lanes::from(*x), Lanes::from(*y), Lanes::from(*z));
            let u = s(c0.x) * x + s(c1.x) * y + s(c2.x) * z;
            let v = s(c0.y) * x + s(c1.y) * y + s(c2.y) * z;
            let dw = w_of(x, y, z) - wc_l;
            let rim = ((r2 - dw * dw).fast_max(zero) * half).sqrt();
            ulo = ulo.fast_min(u + rim);
            uhi = uhi.fast_max(u - rim);
            vlo = vlo.fast_min(v + rim);
            vhi = vhi.fast_max(v - rim);
        });
        let uv = [
            ulo.to_array().into_iter().fold(f64::INFINITY, min_f),
            uhi.to_array().into_iter().fold(f64::NEG_INFINITY, max_f),
            vlo.to_array().into_iter().fold(f64::INFINITY, min_f),
            vhi.to_array().into_iter().fold(f64::NEG_INFINITY, max_f),
        ];
        Self::from_local_extents(frame, uv, wc, r)
    }

    fn merge(&self, o: &Self) -> Self {
        let corners: Vec<DVec3> = self.corners().into_iter().chain(o.corners()).collect();
        self.merge_in_frame(o, &Moments::from_points(&corners).frame())
    }

    fn merge_all_in_frame(parts: &[Self], frame: &DMat3) -> Self {
        let frame = *frame;
        let ft = frame.transpose();
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        let (mut wlo, mut whi) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in parts {
            for c in p.corners() {
                let q = ft * c;
                lo = lo.min(q);
                hi = hi.max(q);
                wlo = wlo.min(q.z - p.radius);
                whi = whi.max(q.z + p.radius);
            }
        }
        // Every part's rectangle projects inside the new one; its points are within
        // |w − wc| (at a corner) plus its radius of the new rectangle.
        let wc = (wlo + whi) * 0.5;
        let radius = parts
            .iter()
            .flat_map(|p| p.corners().map(|c| ((ft * c).z - wc).abs() + p.radius))
            .fold(0.0, f64::max);
        let mid = DVec3::new((lo.x + hi.x) * 0.5, (lo.y + hi.y) * 0.5, wc);
        let scale = mid.abs().max_element() + (hi.x - lo.x) + (hi.y - lo.y) + radius;
        Self {
            center: frame * mid,
            axes: frame,
            half_lengths: DVec2::new((hi.x - lo.x) * 0.5, (hi.y - lo.y) * 0.5),
            radius: radius * (1.0 + SLACK) + SLACK * 4.0 * scale,
        }
    }

    fn transform_affine(&self, m: &DMat3, t: DVec3) -> Self {
        let (axes, eps) = map_frame(m, &self.axes);
        let h = self.half_lengths;
        let center = *m * self.center + t;
        let scale = center.abs().max_element() + h.x + h.y + self.radius;
        Self {
            center,
            axes,
            half_lengths: h,
            radius: self.radius * stretch(m) + eps * (h.x + h.y) + SLACK * 4.0 * scale,
        }
    }

    #[inline]
    fn transform_rigid(&self, q: &DMat3, t: DVec3, grow: f64) -> Self {
        let center = *q * self.center + t;
        let h = self.half_lengths;
        let scale = center.abs().max_element() + h.x + h.y + self.radius;
        Self {
            center,
            axes: *q * self.axes,
            half_lengths: h,
            radius: self.radius + grow + SLACK * 4.0 * scale,
        }
    }

    fn inflate(&self, r: f64) -> Self {
        Self {
            radius: self.radius + r,
            ..*self
        }
    }

    fn reach(&self) -> f64 {
        self.center.length() + self.half_lengths.length() + self.radius
    }

    #[inline]
    fn distance_lower_bound(&self, o: &Self) -> f64 {
        Rss::distance_lower_bound(self, o)
    }

    #[inline]
    fn distance_lower_bounds_mapped(
        pairs: [(&Self, &Self); 2],
        q: &DMat3,
        t: DVec3,
        grow: f64,
    ) -> [f64; 2] {
        crate::rss_pair::lower_bounds_mapped(pairs, q, t, grow)
    }

    fn overlaps(&self, o: &Self) -> bool {
        self.distance(o) <= 0.0
    }

    fn distance(&self, o: &Self) -> f64 {
        let d = rect_distance(
            self.center,
            &self.axes,
            self.half_lengths,
            o.center,
            &o.axes,
            o.half_lengths,
        );
        let scale = self.center.distance(o.center)
            + self.half_lengths.element_sum()
            + o.half_lengths.element_sum();
        (d - self.radius - o.radius - SLACK * 4.0 * scale).max(0.0)
    }

    fn contains_point(&self, p: DVec3, tol: f64) -> bool {
        let d = self.axes.transpose() * (p - self.center);
        let du = (d.x.abs() - self.half_lengths.x).max(0.0);
        let dv = (d.y.abs() - self.half_lengths.y).max(0.0);
        (du * du + dv * dv + d.z * d.z).sqrt() <= self.radius + tol
    }

    #[inline]
    fn ball(&self) -> (DVec3, f64) {
        (self.center, self.size())
    }

    fn size(&self) -> f64 {
        self.half_lengths.length() + self.radius
    }
}
