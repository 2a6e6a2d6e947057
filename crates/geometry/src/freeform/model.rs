//! A freeform model: a set of surfaces sharing one rigid pose.

use glam::DVec3;

use super::{FreeformError, NurbsSurface};
use crate::transform::Pose64;

/// Applies a pose to an f64 point with the fixed operation order of
/// [`crate::transform::transform_point`]: `((r0*x + r1*y) + r2*z) + t`.
#[inline]
pub fn apply_pose(pose: &Pose64, p: DVec3) -> DVec3 {
    let row = |r: &[f64; 4]| ((r[0] * p.x + r[1] * p.y) + r[2] * p.z) + r[3];
    DVec3::new(row(&pose.rows[0]), row(&pose.rows[1]), row(&pose.rows[2]))
}

/// An upper bound on the stretch `|R x| / |x|` of the pose's linear part (`sqrt(|R|_1 |R|_inf)`);
/// 1 up to rounding for a rotation. Offsets are scaled by it so bounds stay certified.
pub fn pose_stretch(pose: &Pose64) -> f64 {
    let r = &pose.rows;
    let row_sum = (0..3)
        .map(|i| (0..3).map(|j| r[i][j].abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let col_sum = (0..3)
        .map(|j| (0..3).map(|i| r[i][j].abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let frob = (0..3)
        .flat_map(|i| (0..3).map(move |j| r[i][j] * r[i][j]))
        .sum::<f64>()
        .sqrt();
    (row_sum * col_sum).sqrt().min(frob) * (1.0 + 1e-12)
}

/// A set of NURBS surfaces in model coordinates plus a rigid pose into the world.
#[derive(Clone, Debug)]
pub struct FreeformModel {
    /// The surfaces, in model coordinates.
    pub surfaces: Vec<NurbsSurface>,
    /// Model-to-world pose.
    pub pose: Pose64,
}

impl FreeformModel {
    /// A model at the identity pose; fails on an empty surface list.
    pub fn new(surfaces: Vec<NurbsSurface>) -> Result<Self, FreeformError> {
        if surfaces.is_empty() {
            return Err(FreeformError::EmptyModel);
        }
        Ok(Self {
            surfaces,
            pose: Pose64::IDENTITY,
        })
    }

    /// The same model at another pose.
    pub fn with_pose(mut self, pose: Pose64) -> Self {
        self.pose = pose;
        self
    }

    /// Box of all control points in model coordinates (contains every surface).
    pub fn control_bounds(&self) -> (DVec3, DVec3) {
        self.surfaces
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), s| {
                let (a, b) = s.control_bounds();
                (lo.min(a), hi.max(b))
            })
    }

    /// The model's unit length: the largest side of its control-net bounding box (paper §3),
    /// at least `f64::MIN_POSITIVE`.
    pub fn unit(&self) -> f64 {
        let (lo, hi) = self.control_bounds();
        (hi - lo).max_element().max(f64::MIN_POSITIVE)
    }

    /// World position of surface `index` at `(u, v)`.
    pub fn world_point(&self, index: usize, u: f64, v: f64) -> DVec3 {
        apply_pose(&self.pose, self.surfaces[index].point(u, v))
    }
}
