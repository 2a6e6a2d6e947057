//! Rigid poses and the f64 world coordinates every exact test works on.
//!
//! Poses come in as glam [`Affine3A`] (f32). Positions are mapped to world space in f64 by
//! [`transform_point`], with a fixed operation order and no fused multiply-add, so the CPU, the
//! CUDA kernels (compiled with `--fmad=false`) and the host emulator (`-ffp-contract=off`) produce
//! bit-identical world coordinates. `kernels/include/gprox/transform.cuh` mirrors this file.

use glam::{Affine3A, DVec3, Vec3};

/// A rigid pose promoted to f64: row-major `[R | t]`, 12 numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Pose64 {
    /// Rows of the 3x4 matrix `[R | t]`.
    pub rows: [[f64; 4]; 3],
}

impl Pose64 {
    /// The identity pose.
    pub const IDENTITY: Self = Self {
        rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    /// Promotes an f32 pose (exactly: every f32 is an f64).
    pub fn from_affine(a: &Affine3A) -> Self {
        let m = a.matrix3;
        let t = a.translation;
        Self {
            rows: [
                [
                    m.x_axis.x as f64,
                    m.y_axis.x as f64,
                    m.z_axis.x as f64,
                    t.x as f64,
                ],
                [
                    m.x_axis.y as f64,
                    m.y_axis.y as f64,
                    m.z_axis.y as f64,
                    t.y as f64,
                ],
                [
                    m.x_axis.z as f64,
                    m.y_axis.z as f64,
                    m.z_axis.z as f64,
                    t.z as f64,
                ],
            ],
        }
    }
}

/// World position of `p` under `pose`: `((r0*x + r1*y) + r2*z) + t` per row, in f64.
#[inline]
pub fn transform_point(pose: &Pose64, p: Vec3) -> DVec3 {
    let (x, y, z) = (p.x as f64, p.y as f64, p.z as f64);
    let row = |r: &[f64; 4]| ((r[0] * x + r[1] * y) + r[2] * z) + r[3];
    DVec3::new(row(&pose.rows[0]), row(&pose.rows[1]), row(&pose.rows[2]))
}

/// The three world-space corners of a triangle.
#[inline]
pub fn transform_triangle(pose: &Pose64, t: [Vec3; 3]) -> [DVec3; 3] {
    t.map(|p| transform_point(pose, p))
}
