//! Vertex penetration between two closed mesh models.

use glam::Affine3A;
use gprox_query::penetration::{penetration, Penetration};

use super::{aabb_object, meshes};
use crate::{Context, Error, Model};

impl Context {
    /// Every vertex of `a` strictly inside the closed mesh `b` and every vertex of `b` inside
    /// `a`: its depth (distance to the other surface), the closest point there, that point's
    /// face and the unit direction out — exact inside tests, exact nearest faces. Errors
    /// ([`Error::Penetration`]) when a mesh is not closed and consistently oriented, naming the
    /// edge. Runs on the CPU on every backend ([`Context::capabilities`]).
    ///
    /// ```
    /// use gprox::{geometry::TriMesh, Backend, Context};
    /// use glam::{Affine3A, Vec3};
    /// let tet = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
    ///     vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    /// ).unwrap();
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(tet).unwrap();
    /// let shifted = Affine3A::from_translation(Vec3::splat(0.1));
    /// let r = ctx.penetration(&m, &Affine3A::IDENTITY, &m, &shifted).unwrap();
    /// assert_eq!(r.inside_vertices(), 1); // B's corner, 0.1 below three faces of A
    /// assert!((r.max_depth() - 0.1).abs() < 1e-6);
    /// ```
    pub fn penetration(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
    ) -> Result<Penetration, Error> {
        meshes("penetration", a, b)?;
        let (oa, ob) = (aabb_object(a, pose_a), aabb_object(b, pose_b));
        Ok(penetration(&oa, &ob)?)
    }
}
