//! Bounding spheres.

use glam::{DMat3, DVec3};

use crate::bounding_volume::{soa_points, stretch, BoundingVolume, CoordSlices};

/// A closed ball, 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Sphere {
    /// Centre.
    pub center: DVec3,
    /// Radius (≥ 0).
    pub radius: f64,
}

impl Sphere {
    /// The ball around `points` centred at their bounding-box centre.
    ///
    /// ```
    /// use gprox_bvh::sphere::Sphere;
    /// use gprox_bvh::bounding_volume::BoundingVolume;
    /// use glam::DVec3;
    /// let s = Sphere::from_points(&[DVec3::ZERO, DVec3::new(2.0, 0.0, 0.0)]);
    /// assert_eq!(s.center, DVec3::X);
    /// assert!((s.radius - 1.0).abs() < 1e-12); // rounded up a hair to stay conservative
    /// let d = s.distance(&Sphere { center: DVec3::new(5.0, 0.0, 0.0), radius: 1.0 });
    /// assert!(d <= 2.0 && d > 2.0 - 1e-12);
    /// ```
    pub fn from_points(points: &[DVec3]) -> Self {
        if points.is_empty() {
            return Self {
                center: DVec3::ZERO,
                radius: 0.0,
            };
        }
        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let center = (lo + hi) * 0.5;
        let r2 = points
            .iter()
            .map(|p| p.distance_squared(center))
            .fold(0.0, f64::max);
        Self {
            center,
            radius: r2.sqrt() * (1.0 + 4.0 * f64::EPSILON),
        }
    }
}

impl BoundingVolume for Sphere {
    fn fit_in_frame(points: &[DVec3], _frame: &DMat3) -> Self {
        Self::from_points(points)
    }

    fn fit_points(points: &[DVec3]) -> Self {
        Self::from_points(points)
    }

    fn fit_in_frame_soa(parts: &[CoordSlices<'_>], _frame: &DMat3) -> Self {
        Self::from_points(&soa_points(parts))
    }

    fn merge(&self, o: &Self) -> Self {
        let d = self.center.distance(o.center);
        if d + o.radius <= self.radius {
            return *self;
        }
        if d + self.radius <= o.radius {
            return *o;
        }
        let radius = (d + self.radius + o.radius) * 0.5;
        let center = if d > 0.0 {
            self.center + (o.center - self.center) * ((radius - self.radius) / d)
        } else {
            self.center
        };
        Self {
            center,
            radius: radius * (1.0 + 4.0 * f64::EPSILON)
                + 4.0 * f64::EPSILON * center.abs().max_element(),
        }
    }

    fn transform_affine(&self, m: &DMat3, t: DVec3) -> Self {
        Self {
            center: *m * self.center + t,
            radius: self.radius * stretch(m) * (1.0 + 4.0 * f64::EPSILON)
                + 8.0 * f64::EPSILON * (self.center.abs().max_element() + t.abs().max_element()),
        }
    }

    fn inflate(&self, r: f64) -> Self {
        Self {
            center: self.center,
            radius: self.radius + r,
        }
    }

    fn reach(&self) -> f64 {
        self.center.length() + self.radius
    }

    fn overlaps(&self, o: &Self) -> bool {
        let r = self.radius + o.radius;
        self.center.distance_squared(o.center) <= r * r * (1.0 + 8.0 * f64::EPSILON)
    }

    fn distance(&self, o: &Self) -> f64 {
        let d = self.center.distance(o.center) - self.radius - o.radius;
        (d * (1.0 - 4.0 * f64::EPSILON)).max(0.0)
    }

    fn contains_point(&self, p: DVec3, tol: f64) -> bool {
        p.distance(self.center) <= self.radius + tol
    }

    #[inline]
    fn ball(&self) -> (DVec3, f64) {
        (self.center, self.size())
    }

    fn size(&self) -> f64 {
        self.radius
    }
}
