//! Axis-aligned bounding boxes (f32, shared with the kernels).

use glam::Vec3;

/// An axis-aligned box `[min, max]` in f32. Boxes of f32 points are exact: min/max never round.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Aabb {
    /// Lower corner.
    pub min: [f32; 3],
    /// Upper corner.
    pub max: [f32; 3],
}

impl Aabb {
    /// The empty box (min = +inf, max = -inf): the identity of [`Aabb::merge`].
    pub const EMPTY: Self = Self {
        min: [f32::INFINITY; 3],
        max: [f32::NEG_INFINITY; 3],
    };

    /// The smallest box holding `points`.
    pub fn from_points(points: &[Vec3]) -> Self {
        points.iter().fold(Self::EMPTY, |b, &p| {
            b.merge(&Self {
                min: p.into(),
                max: p.into(),
            })
        })
    }

    /// The smallest box holding both.
    #[inline]
    pub fn merge(&self, o: &Self) -> Self {
        // Written out per component: this sits in the refit and traversal hot loops.
        Self {
            min: [
                self.min[0].min(o.min[0]),
                self.min[1].min(o.min[1]),
                self.min[2].min(o.min[2]),
            ],
            max: [
                self.max[0].max(o.max[0]),
                self.max[1].max(o.max[1]),
                self.max[2].max(o.max[2]),
            ],
        }
    }

    /// Whether the closed boxes share a point.
    #[inline]
    pub fn overlaps(&self, o: &Self) -> bool {
        (0..3).all(|i| self.min[i] <= o.max[i] && o.min[i] <= self.max[i])
    }

    /// Whether `p` lies in the closed box.
    pub fn contains_point(&self, p: Vec3) -> bool {
        let p = p.to_array();
        (0..3).all(|i| self.min[i] <= p[i] && p[i] <= self.max[i])
    }

    /// Centre of the box.
    pub fn center(&self) -> Vec3 {
        (Vec3::from(self.min) + Vec3::from(self.max)) * 0.5
    }

    /// Whether `o` lies inside `self`.
    pub fn contains(&self, o: &Self) -> bool {
        (0..3).all(|i| self.min[i] <= o.min[i] && o.max[i] <= self.max[i])
    }
}
