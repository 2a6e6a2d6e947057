//! Conversions to and from [parry3d](https://parry.rs) (the f32 build; feature `parry`).
//!
//! * [`TriMesh`] → `parry3d::shape::TriMesh`: [`From`], since a gprox mesh is always valid
//!   input for parry (finite positions, in-range indices, at least one face).
//! * `parry3d::shape::TriMesh` → [`TriMesh`]: [`TryFrom`], validated like [`TriMesh::new`]
//!   (non-finite positions, out-of-range indices give a typed [`GeometryError`]);
//!   [`mesh_from_parts`] does the same for raw vertex and index buffers, such as what parry's
//!   `to_trimesh()` of a ball, cuboid or capsule returns.
//! * Poses: [`affine_from_isometry`] and, for rigid poses only, [`isometry_from_affine`].
//!
//! Positions and indices are copied bit for bit: a round trip gives back the same mesh.
//!
//! ```
//! use gprox_geometry::{interop::parry::parry3d, scene::torus, TriMesh};
//! let ours = torus(1.0, 0.3, 16, 8).unwrap();
//! let theirs = parry3d::shape::TriMesh::from(&ours);
//! assert_eq!(theirs.indices().len(), ours.face_count());
//! let back = TriMesh::try_from(&theirs).unwrap();
//! assert_eq!(back, ours);
//! ```

use glam::{Affine3A, Mat3A, Quat, Vec3};
pub use parry3d;
use parry3d::math::{Isometry, Point};
use parry3d::na::{Quaternion, Translation3, UnitQuaternion};

use crate::{GeometryError, TriMesh};

impl From<&TriMesh> for parry3d::shape::TriMesh {
    /// The same vertices and faces as a parry mesh (parry builds its own BVH).
    fn from(mesh: &TriMesh) -> Self {
        let vertices = mesh
            .positions()
            .iter()
            .map(|p| Point::new(p.x, p.y, p.z))
            .collect();
        match parry3d::shape::TriMesh::new(vertices, mesh.faces().to_vec()) {
            Ok(m) => m,
            // parry refuses only an empty index buffer, which `TriMesh::new` never accepts.
            Err(e) => unreachable!("a gprox TriMesh has faces: {e}"),
        }
    }
}

impl From<TriMesh> for parry3d::shape::TriMesh {
    /// The same vertices and faces as a parry mesh (parry builds its own BVH).
    fn from(mesh: TriMesh) -> Self {
        Self::from(&mesh)
    }
}

impl TryFrom<&parry3d::shape::TriMesh> for TriMesh {
    type Error = GeometryError;

    /// The parry mesh's vertices and faces, validated as by [`TriMesh::new`].
    fn try_from(mesh: &parry3d::shape::TriMesh) -> Result<Self, GeometryError> {
        mesh_from_parts(mesh.vertices(), mesh.indices())
    }
}

/// A [`TriMesh`] of parry-style vertex and index buffers (as parry's `TriMesh::vertices` /
/// `indices`, or a shape's `to_trimesh()`), validated as by [`TriMesh::new`]: an empty buffer,
/// a non-finite point or an index out of range gives a typed [`GeometryError`].
///
/// ```
/// use gprox_geometry::{interop::parry::{mesh_from_parts, parry3d}, GeometryError};
/// let ball = parry3d::shape::Ball::new(0.5);
/// let (points, indices) = ball.to_trimesh(8, 8);
/// let mesh = mesh_from_parts(&points, &indices).unwrap();
/// assert_eq!(mesh.face_count(), indices.len());
/// assert!(matches!(
///     mesh_from_parts(&points, &[[0, 1, points.len() as u32]]),
///     Err(GeometryError::IndexOutOfRange { face: 0, .. })
/// ));
/// ```
pub fn mesh_from_parts(
    vertices: &[Point<f32>],
    indices: &[[u32; 3]],
) -> Result<TriMesh, GeometryError> {
    let positions = vertices.iter().map(|p| Vec3::new(p.x, p.y, p.z)).collect();
    TriMesh::new(positions, indices.to_vec())
}

/// The pose of a parry isometry (rotation, then translation) as a glam affine transform.
///
/// ```
/// use gprox_geometry::interop::parry::{affine_from_isometry, parry3d};
/// use glam::Vec3;
/// let iso = parry3d::math::Isometry::translation(1.0, 2.0, 3.0);
/// let pose = affine_from_isometry(&iso);
/// assert_eq!(pose.transform_point3(Vec3::ZERO), Vec3::new(1.0, 2.0, 3.0));
/// ```
pub fn affine_from_isometry(iso: &Isometry<f32>) -> Affine3A {
    let q = iso.rotation.coords; // [i, j, k, w]
    let t = iso.translation.vector;
    Affine3A::from_rotation_translation(
        Quat::from_xyzw(q.x, q.y, q.z, q.w),
        Vec3::new(t.x, t.y, t.z),
    )
}

/// Largest `|(MᵀM − I)ᵢⱼ|` accepted as a rotation by [`isometry_from_affine`]: f32 rounding of
/// rotations built from quaternions or angles stays far below it.
pub const RIGID_TOLERANCE: f32 = 1e-4;

/// The parry isometry of a rigid `pose` (rotation + translation). Errors with
/// [`GeometryError::NotRigid`] when an entry is not finite, or when the linear part is scaled,
/// sheared (beyond [`RIGID_TOLERANCE`]) or a reflection: parry poses cannot express those.
///
/// ```
/// use gprox_geometry::{interop::parry::{affine_from_isometry, isometry_from_affine}, GeometryError};
/// use glam::{Affine3A, Quat, Vec3};
/// let pose = Affine3A::from_rotation_translation(Quat::from_rotation_z(0.5), Vec3::X);
/// let iso = isometry_from_affine(&pose).unwrap();
/// assert!(affine_from_isometry(&iso).abs_diff_eq(pose, 1e-6));
/// let scaled = Affine3A::from_scale(Vec3::splat(2.0));
/// assert!(matches!(isometry_from_affine(&scaled), Err(GeometryError::NotRigid { .. })));
/// ```
pub fn isometry_from_affine(pose: &Affine3A) -> Result<Isometry<f32>, GeometryError> {
    if !pose.is_finite() {
        return Err(GeometryError::NotRigid {
            what: "non-finite entry",
            deviation: f32::NAN,
        });
    }
    let m: Mat3A = pose.matrix3;
    let gram = m.transpose() * m - Mat3A::IDENTITY;
    let deviation = [gram.x_axis, gram.y_axis, gram.z_axis]
        .iter()
        .map(|c| c.abs().max_element())
        .fold(0.0, f32::max);
    if deviation > RIGID_TOLERANCE {
        return Err(GeometryError::NotRigid {
            what: "scaled or sheared",
            deviation,
        });
    }
    let det = m.determinant();
    if det < 0.0 {
        return Err(GeometryError::NotRigid {
            what: "a reflection",
            deviation: det,
        });
    }
    let q = Quat::from_mat3a(&m).normalize();
    let t = pose.translation;
    Ok(Isometry::from_parts(
        Translation3::new(t.x, t.y, t.z),
        UnitQuaternion::new_normalize(Quaternion::new(q.w, q.x, q.y, q.z)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::torus;

    /// gprox → parry → gprox gives back the same positions (bit for bit) and faces.
    #[test]
    fn round_trip_is_exact() {
        let mut positions = torus(1.0, 0.3, 24, 12).unwrap().positions().to_vec();
        // Values that a lossy conversion would change.
        positions[0] = Vec3::new(f32::MIN_POSITIVE, -0.0, 1.0e30);
        positions[1] = Vec3::new(0.1, 1.0 / 3.0, -7.0e-39);
        let ours =
            TriMesh::new(positions, torus(1.0, 0.3, 24, 12).unwrap().faces().to_vec()).unwrap();
        let theirs = parry3d::shape::TriMesh::from(&ours);
        assert_eq!(theirs.vertices().len(), ours.vertex_count());
        assert_eq!(theirs.indices(), ours.faces());
        let back = TriMesh::try_from(&theirs).unwrap();
        let bits = |m: &TriMesh| -> Vec<[u32; 3]> {
            m.positions()
                .iter()
                .map(|p| p.to_array().map(f32::to_bits))
                .collect()
        };
        assert_eq!(bits(&back), bits(&ours));
        assert_eq!(back.faces(), ours.faces());
        assert_eq!(
            parry3d::shape::TriMesh::from(ours.clone()).indices(),
            ours.faces()
        );
    }

    /// A parry mesh with a non-finite point converts to a typed error naming the vertex.
    #[test]
    fn non_finite_point_is_a_typed_error() {
        let points = vec![
            Point::new(0.0, 0.0, 0.0),
            Point::new(1.0, 0.0, 0.0),
            Point::new(0.0, 1.0, 0.0),
            Point::new(f32::NAN, 0.0, 1.0),
        ];
        let theirs = parry3d::shape::TriMesh::new(points, vec![[0, 1, 2], [0, 1, 3]]).unwrap();
        match TriMesh::try_from(&theirs) {
            Err(GeometryError::NonFiniteVertex { index: 3, value }) => assert!(value[0].is_nan()),
            other => panic!("expected NonFiniteVertex, got {other:?}"),
        }
    }

    /// An index past the vertex buffer is a typed error naming the face and the index. (parry's
    /// own constructor panics on one, so the raw buffers are converted.)
    #[test]
    fn invalid_index_is_a_typed_error() {
        let points = [
            Point::new(0.0, 0.0, 0.0),
            Point::new(1.0, 0.0, 0.0),
            Point::new(0.0, 1.0, 0.0),
        ];
        let e = mesh_from_parts(&points, &[[0, 1, 2], [2, 1, 3]]).unwrap_err();
        assert!(
            matches!(
                e,
                GeometryError::IndexOutOfRange {
                    face: 1,
                    vertex: 3,
                    vertex_count: 3
                }
            ),
            "{e:?}"
        );
        assert!(matches!(
            mesh_from_parts(&points, &[]),
            Err(GeometryError::EmptyMesh { what: "no faces" })
        ));
    }

    /// Poses: an isometry and back, and the poses parry cannot express.
    #[test]
    fn poses_convert_and_non_rigid_ones_are_refused() {
        let rot = Quat::from_euler(glam::EulerRot::ZYX, 0.3, -1.2, 2.5);
        let pose = Affine3A::from_rotation_translation(rot, Vec3::new(1.0, -2.0, 0.5));
        let iso = isometry_from_affine(&pose).unwrap();
        let p = Vec3::new(0.7, 0.2, -0.4);
        let theirs = iso * Point::new(p.x, p.y, p.z);
        let ours = pose.transform_point3(p);
        assert!(
            (Vec3::new(theirs.x, theirs.y, theirs.z) - ours)
                .abs()
                .max_element()
                < 1e-5
        );
        assert!(affine_from_isometry(&iso).abs_diff_eq(pose, 1e-6));

        let refused = |a: Affine3A| match isometry_from_affine(&a) {
            Err(GeometryError::NotRigid { what, .. }) => what,
            other => panic!("expected NotRigid, got {other:?}"),
        };
        assert_eq!(
            refused(Affine3A::from_scale(Vec3::new(1.0, 1.0, 1.01))),
            "scaled or sheared"
        );
        assert_eq!(
            refused(Affine3A::from_scale(Vec3::new(1.0, 1.0, -1.0))),
            "a reflection"
        );
        assert_eq!(
            refused(Affine3A::from_translation(Vec3::new(
                f32::INFINITY,
                0.0,
                0.0
            ))),
            "non-finite entry"
        );
    }
}
