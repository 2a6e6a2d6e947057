//! Image-space intersection volume between two closed mesh models (Hoff, Zaferakis, Lin,
//! Manocha 2002): the samples of a lattice inside both, with per-sample penetration depths and
//! directions.

use glam::Affine3A;
use gprox_query::image_space::{intersect, ImageSpaceOptions, Intersection, IntersectionSweep};

use super::{aabb_object, meshes, on_device};
use crate::{Context, Error, Model};

impl Context {
    /// The intersection volume of the closed meshes `a` and `b` sampled on a lattice whose
    /// cells are no wider than the tolerance allows (`options.tolerance`: no point is farther
    /// than it from a sample): the samples strictly inside both, the volume estimate with a
    /// rigorous error bound, and per sample the nearest point, face and distance on both
    /// surfaces — the penetration depth and direction of every sampled point of `A ∩ B` — with
    /// one contact per connected region. See `gprox::query::image_space` and
    /// `docs/image-space.md`.
    ///
    /// On a device context the inside classification of the samples (§5.1, one thread per ray
    /// column) runs on the device; the columns its certified filters cannot decide, and the
    /// per-sample depths, are computed on the CPU. The answer is the CPU's exactly, sample for
    /// sample ([`Context::runs_on`]`(`[`crate::Query::IntersectionVolume`]`)`).
    ///
    /// Errors ([`Error::ImageSpace`]) when a mesh is not closed and consistently oriented,
    /// the tolerance is not positive, or the sweep would need more than `options.max_cells`
    /// cells.
    ///
    /// ```
    /// use gprox::{Affine3A, Backend, Context, ImageSpaceOptions, Vec3};
    /// use gprox::geometry::scene::torus;
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let t = ctx.model(torus(1.0, 0.3, 24, 12).unwrap()).unwrap();
    /// // B stands upright through A's ring: the tubes cross twice.
    /// let b_pose = Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2);
    /// let r = ctx
    ///     .intersection_volume(&t, &Affine3A::IDENTITY, &t, &b_pose, &ImageSpaceOptions::new(0.04))
    ///     .unwrap();
    /// assert_eq!(r.contacts().len(), 2);
    /// let s = &r.samples()[0];
    /// // Every sample is inside both tubes (radius 0.3): depths below the radius.
    /// assert!(s.depth_in_a() <= 0.3 && s.depth_in_b() <= 0.3);
    /// assert!((r.volume() - 2.0 * (16.0 / 3.0) * 0.027).abs() <= r.volume_bound() + 0.05);
    /// ```
    pub fn intersection_volume(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        options: &ImageSpaceOptions,
    ) -> Result<Intersection, Error> {
        meshes("intersection_volume", a, b)?;
        let (oa, ob) = (aabb_object(a, pose_a), aabb_object(b, pose_b));
        let Some(d) = &self.device else {
            return Ok(intersect(&oa, &ob, options)?);
        };
        let sweep = IntersectionSweep::new(&oa, &ob, options)?;
        let (codes, _) = on_device(d, a, pose_a, b, pose_b, |ra, rb| {
            d.image_space_codes(ra, rb, &sweep)
        })?;
        Ok(sweep.finish(&codes)?.intersection)
    }
}
