//! Support maps of the convex shapes GJK and EPA work on.

use super::SupportMap;
use glam::{DMat3, DVec3};

/// The convex hull of a point set; the feature id of a support point is its index.
///
/// A point, a segment, a triangle and a tetrahedron are `ConvexPoints` of 1, 2, 3 and 4 points
/// (flat and repeated points are fine). An empty set behaves like the origin with id
/// `u32::MAX`.
#[derive(Clone, Copy, Debug)]
pub struct ConvexPoints<'a>(pub &'a [DVec3]);

impl SupportMap for ConvexPoints<'_> {
    #[inline]
    fn support(&self, dir: DVec3) -> (DVec3, u32) {
        let mut best = (DVec3::ZERO, u32::MAX);
        let mut best_dot = f64::NEG_INFINITY;
        for (i, &p) in self.0.iter().enumerate() {
            let d = p.dot(dir);
            if d > best_dot {
                best_dot = d;
                best = (p, i as u32);
            }
        }
        best
    }
}

/// A solid ball; its only feature id is 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre.
    pub center: DVec3,
    /// Radius (≥ 0).
    pub radius: f64,
}

impl SupportMap for Sphere {
    #[inline]
    fn support(&self, dir: DVec3) -> (DVec3, u32) {
        let n = dir.length();
        let u = if n > 0.0 && n.is_finite() {
            dir / n
        } else {
            DVec3::X
        };
        (self.center + u * self.radius, 0)
    }
}

/// A solid oriented box; the feature id of a corner is `bit k = 1` when it lies on the `+` side
/// of axis `k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    /// Centre.
    pub center: DVec3,
    /// Orthonormal axes as columns.
    pub axes: DMat3,
    /// Half extents along the axes (≥ 0).
    pub half_extents: DVec3,
}

impl Cuboid {
    /// An axis-aligned box `[min, max]`.
    pub fn from_min_max(min: DVec3, max: DVec3) -> Self {
        Self {
            center: (min + max) * 0.5,
            axes: DMat3::IDENTITY,
            half_extents: (max - min) * 0.5,
        }
    }

    /// The 8 corners, indexed by their feature id.
    pub fn corners(&self) -> [DVec3; 8] {
        std::array::from_fn(|id| self.corner(id as u32))
    }

    /// The corner with feature id `id` (bits 0..3).
    pub fn corner(&self, id: u32) -> DVec3 {
        let s = |k: u32| if id & (1 << k) != 0 { 1.0 } else { -1.0 };
        self.center
            + self.axes.x_axis * (s(0) * self.half_extents.x)
            + self.axes.y_axis * (s(1) * self.half_extents.y)
            + self.axes.z_axis * (s(2) * self.half_extents.z)
    }
}

impl SupportMap for Cuboid {
    #[inline]
    fn support(&self, dir: DVec3) -> (DVec3, u32) {
        let mut id = 0;
        if self.axes.x_axis.dot(dir) >= 0.0 {
            id |= 1;
        }
        if self.axes.y_axis.dot(dir) >= 0.0 {
            id |= 2;
        }
        if self.axes.z_axis.dot(dir) >= 0.0 {
            id |= 4;
        }
        (self.corner(id), id)
    }
}

impl<S: SupportMap + ?Sized> SupportMap for &S {
    #[inline]
    fn support(&self, dir: DVec3) -> (DVec3, u32) {
        (**self).support(dir)
    }
}
