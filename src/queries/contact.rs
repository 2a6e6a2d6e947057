//! Contact geometry of collision pairs: where two triangles meet and which way they face.

use glam::{Affine3A, DVec3};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_query::collide::CollideOptions;
use rayon::prelude::*;

use crate::{Context, Error, Model};

/// One contact between a triangle of A and a triangle of B, in world coordinates (f64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// `(face of a, face of b)`, as [`Context::collide_all`] reports it.
    pub faces: [u32; 2],
    /// The point of face a nearest to face b: on both faces when they intersect.
    pub point_a: DVec3,
    /// The point of face b nearest to face a (`= point_a` up to rounding when they intersect).
    pub point_b: DVec3,
    /// Unit normal of face a, by its winding (zero for a degenerate face).
    pub normal_a: DVec3,
    /// Unit normal of face b, by its winding (zero for a degenerate face).
    pub normal_b: DVec3,
    /// Distance between the two faces: 0 (up to rounding) when they intersect, at most the
    /// margin otherwise.
    pub separation: f64,
}

impl Context {
    /// [`Context::collide_all`] with the geometry of each pair: the nearest points of the two
    /// faces (a common point when they intersect), both unit face normals and their
    /// separation. The pairs are found on the context's backend, their geometry on the host
    /// (in parallel), in the pairs' order.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
    /// let near = Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.0));
    /// let contacts = ctx.contacts(&m, &Affine3A::IDENTITY, &m, &near, &CollideOptions::default()).unwrap();
    /// assert!(!contacts.is_empty());
    /// assert!(contacts.iter().all(|c| c.separation < 1e-9 && (c.normal_a.length() - 1.0).abs() < 1e-9));
    /// ```
    pub fn contacts(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<Vec<Contact>, Error> {
        let pairs = self.collide_all(a, pose_a, b, pose_b, opts)?;
        let (pa, pb) = (Pose64::from_affine(pose_a), Pose64::from_affine(pose_b));
        Ok(pairs
            .par_iter()
            .map(|&[fa, fb]| {
                let ta = transform_triangle(&pa, a.mesh().triangle(fa as usize));
                let tb = transform_triangle(&pb, b.mesh().triangle(fb as usize));
                let d = triangle_distance(&ta, &tb);
                Contact {
                    faces: [fa, fb],
                    point_a: d.point_a,
                    point_b: d.point_b,
                    normal_a: normal(&ta),
                    normal_b: normal(&tb),
                    separation: d.distance,
                }
            })
            .collect())
    }
}

/// Unit normal of a world triangle by its winding; zero when degenerate.
fn normal(t: &[DVec3; 3]) -> DVec3 {
    (t[1] - t[0]).cross(t[2] - t[0]).normalize_or_zero()
}
