//! Swept boxes for continuous collision detection: the box of a triangle's six corner positions
//! at the start and the end of a time step. Under linear vertex motion every point of the moving
//! triangle stays inside it for the whole step (the box is convex and holds all corners at all
//! times), so swept boxes that do not overlap certify that two triangles never touch.

use glam::Vec3;
use gprox_geometry::TriMesh;

use crate::Aabb;

/// Errors of [`swept_triangle_aabbs`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweptError {
    /// The end frame does not have one position per vertex.
    #[error("end frame has {end} positions, the mesh has {start} vertices")]
    VertexCountMismatch {
        /// Vertex count of the mesh (start frame).
        start: usize,
        /// Number of end positions given.
        end: usize,
    },
}

/// The f32 box of one triangle's corners at both ends of the step (min/max never round).
#[inline]
pub fn swept_triangle_aabb(start: &[Vec3; 3], end: &[Vec3; 3]) -> Aabb {
    let mut lo = start[0].min(end[0]);
    let mut hi = start[0].max(end[0]);
    for k in 1..3 {
        lo = lo.min(start[k]).min(end[k]);
        hi = hi.max(start[k]).max(end[k]);
    }
    Aabb {
        min: lo.to_array(),
        max: hi.to_array(),
    }
}

/// Swept boxes of every face of `mesh` moving from its current positions to `end`.
///
/// ```
/// use gprox_bvh::swept::swept_triangle_aabbs;
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// let mesh = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let end = [Vec3::Z, Vec3::X + Vec3::Z, Vec3::Y + Vec3::Z];
/// let boxes = swept_triangle_aabbs(&mesh, &end).unwrap();
/// assert_eq!(boxes[0].max, [1.0, 1.0, 1.0]);
/// ```
pub fn swept_triangle_aabbs(mesh: &TriMesh, end: &[Vec3]) -> Result<Vec<Aabb>, SweptError> {
    if end.len() != mesh.vertex_count() {
        return Err(SweptError::VertexCountMismatch {
            start: mesh.vertex_count(),
            end: end.len(),
        });
    }
    let start = mesh.positions();
    Ok(mesh
        .faces()
        .iter()
        .map(|f| {
            let s = f.map(|v| start[v as usize]);
            let e = f.map(|v| end[v as usize]);
            swept_triangle_aabb(&s, &e)
        })
        .collect())
}
