//! Many bodies: the broad phase over the bodies' world boxes, then the triangle pairs of every
//! overlapping body pair.

use glam::Affine3A;
use gprox_cuda::ResidentObject;
use gprox_geometry::transform::Pose64;
use gprox_query::broad_phase::{try_collide_many_shaped, ManyContacts, ShapedObject};
use gprox_query::collide::CollideOptions;

use super::{aabb_object, gpu_options};
use crate::{Context, Error, Model, ModelKind};

impl Context {
    /// Every intersecting triangle pair between every two of `bodies` (each a mesh model and
    /// its pose), grouped by body pair `(a < b)`, with the broad phase over the bodies' world
    /// boxes. On a device the broad phase, the traversal of every overlapping body pair and the
    /// triangle tests are one batch of launches with one host synchronisation.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 16, 8).unwrap()).unwrap();
    /// let at = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    /// let many = ctx
    ///     .collide_many(&[(&m, at(0.0)), (&m, at(9.0)), (&m, at(0.4))], &CollideOptions::default())
    ///     .unwrap();
    /// assert_eq!(many.object_pairs.len(), 1);
    /// assert_eq!((many.object_pairs[0].a, many.object_pairs[0].b), (0, 2));
    /// ```
    pub fn collide_many(
        &self,
        bodies: &[(&Model, Affine3A)],
        opts: &CollideOptions,
    ) -> Result<ManyContacts, Error> {
        for (m, _) in bodies {
            m.require(ModelKind::Mesh, "collide_many", "a body")?;
        }
        match &self.device {
            None => {
                // Each model's tree shape is validated once and kept (`Model::tree_shape`).
                let objects = bodies
                    .iter()
                    .map(|(m, p)| {
                        Ok(ShapedObject {
                            object: aabb_object(m, p),
                            shape: m.tree_shape()?,
                        })
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                Ok(try_collide_many_shaped(&objects, opts)?)
            }
            Some(d) => {
                let resident = bodies
                    .iter()
                    .map(|(m, _)| m.resident(d))
                    .collect::<Result<Vec<_>, Error>>()?;
                let objects: Vec<_> = bodies
                    .iter()
                    .zip(&resident)
                    .map(|((m, p), r)| ResidentObject::new(r, m.mesh(), Pose64::from_affine(p)))
                    .collect();
                Ok(d.collide_world(&objects, &gpu_options(opts))?)
            }
        }
    }
}
