//! Oriented bounding boxes: PCA fit, merge, rigid transform, the 15-axis separating-axis test.

use glam::{DMat3, DVec3};

use crate::bounding_volume::{map_frame, BoundingVolume, CoordSlices, Moments};

/// A closed oriented box `{c + Σ x_i a_i : |x_i| ≤ h_i}`, 120 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Obb {
    /// Centre.
    pub center: DVec3,
    /// Orthonormal axes as columns.
    pub axes: DMat3,
    /// Half extents along the axes (≥ 0).
    pub half_extents: DVec3,
}

/// Relative slack added to fitted sizes to absorb rounding.
const SLACK: f64 = 8.0 * f64::EPSILON;

impl Obb {
    /// The 8 corners (bit k of the index = `+` side of axis k).
    pub fn corners(&self) -> [DVec3; 8] {
        std::array::from_fn(|i| {
            let s = |k: usize| if i & (1 << k) != 0 { 1.0 } else { -1.0 };
            self.center
                + self.axes.x_axis * (s(0) * self.half_extents.x)
                + self.axes.y_axis * (s(1) * self.half_extents.y)
                + self.axes.z_axis * (s(2) * self.half_extents.z)
        })
    }

    /// The 15 separating-axis gaps: `|T·L| − (r_a + r_b)` over unit candidate axes `L`
    /// (face normals of both boxes and the 9 edge cross products; degenerate ones skipped).
    /// The largest is a lower bound of the distance; a positive one proves separation.
    fn max_gap(&self, o: &Self) -> f64 {
        let t = o.center - self.center;
        let a = [self.axes.x_axis, self.axes.y_axis, self.axes.z_axis];
        let b = [o.axes.x_axis, o.axes.y_axis, o.axes.z_axis];
        let ha = self.half_extents.to_array();
        let hb = o.half_extents.to_array();
        let gap = |l: DVec3| -> f64 {
            let ra =
                ha[0] * a[0].dot(l).abs() + ha[1] * a[1].dot(l).abs() + ha[2] * a[2].dot(l).abs();
            let rb =
                hb[0] * b[0].dot(l).abs() + hb[1] * b[1].dot(l).abs() + hb[2] * b[2].dot(l).abs();
            t.dot(l).abs() - (ra + rb)
        };
        let mut best = f64::NEG_INFINITY;
        for l in a.iter().chain(b.iter()) {
            best = best.max(gap(*l));
        }
        for x in &a {
            for y in &b {
                let l = x.cross(*y);
                let n = l.length();
                if n > 1e-9 {
                    best = best.max(gap(l / n));
                }
            }
        }
        // Rounding of the projections: scale-relative margin.
        let scale = t.length() + self.half_extents.element_sum() + o.half_extents.element_sum();
        best - SLACK * 4.0 * scale
    }
}

impl Obb {
    /// The fitted box from the local extents `[lo, hi]` in `frame`.
    fn from_local_box(frame: &DMat3, lo: DVec3, hi: DVec3) -> Self {
        let mid = (lo + hi) * 0.5;
        let scale = lo.abs().max(hi.abs()).max_element();
        Self {
            center: *frame * mid,
            axes: *frame,
            half_extents: (hi - lo) * (0.5 * (1.0 + SLACK)) + DVec3::splat(SLACK * 2.0 * scale),
        }
    }
}

impl BoundingVolume for Obb {
    fn fit_in_frame(points: &[DVec3], frame: &DMat3) -> Self {
        if points.is_empty() {
            return Self {
                center: DVec3::ZERO,
                axes: *frame,
                half_extents: DVec3::ZERO,
            };
        }
        let ft = frame.transpose();
        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| {
                let q = ft * p;
                (lo.min(q), hi.max(q))
            },
        );
        Self::from_local_box(frame, lo, hi)
    }

    fn fit_in_frame_soa(parts: &[CoordSlices<'_>], frame: &DMat3) -> Self {
        let ft = frame.transpose();
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        let mut any = false;
        for [xs, ys, zs] in parts {
            for ((&x, &y), &z) in xs.iter().zip(ys.iter()).zip(zs.iter()) {
                let q = ft * DVec3::new(x, y, z);
                lo = lo.min(q);
                hi = hi.max(q);
                any = true;
            }
        }
        if !any {
            return Self::fit_in_frame(&[], frame);
        }
        Self::from_local_box(frame, lo, hi)
    }

    fn merge(&self, o: &Self) -> Self {
        let pts: Vec<DVec3> = self.corners().into_iter().chain(o.corners()).collect();
        Self::fit_in_frame(&pts, &Moments::from_points(&pts).frame())
    }

    fn merge_all_in_frame(parts: &[Self], frame: &DMat3) -> Self {
        let pts: Vec<DVec3> = parts.iter().flat_map(|p| p.corners()).collect();
        Self::fit_in_frame(&pts, frame)
    }

    fn transform_affine(&self, m: &DMat3, t: DVec3) -> Self {
        let (axes, eps) = map_frame(m, &self.axes);
        let h = self.half_extents;
        let center = *m * self.center + t;
        let grow = eps * h.element_sum() + SLACK * (center.abs().max_element() + h.element_sum());
        Self {
            center,
            axes,
            half_extents: h + DVec3::splat(grow),
        }
    }

    fn inflate(&self, r: f64) -> Self {
        Self {
            half_extents: self.half_extents + DVec3::splat(r),
            ..*self
        }
    }

    fn reach(&self) -> f64 {
        self.center.length() + self.half_extents.length()
    }

    fn overlaps(&self, o: &Self) -> bool {
        self.max_gap(o) <= 0.0
    }

    fn distance(&self, o: &Self) -> f64 {
        self.max_gap(o).max(0.0)
    }

    fn contains_point(&self, p: DVec3, tol: f64) -> bool {
        let d = self.axes.transpose() * (p - self.center);
        (0..3).all(|i| d[i].abs() <= self.half_extents[i] + tol)
    }

    #[inline]
    fn ball(&self) -> (DVec3, f64) {
        (self.center, self.size())
    }

    fn size(&self) -> f64 {
        self.half_extents.length()
    }
}
