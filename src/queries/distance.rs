//! Separation distance between two posed mesh models, with closest points and bounds.

use glam::Affine3A;
use gprox_geometry::transform::Pose64;
use gprox_query::collide::Witness;
use gprox_query::distance::{
    distance_wide_from, DistanceOptions, DistanceResult, WideDistanceObject,
};

use super::meshes;
use crate::witness::Kind;
use crate::{Context, Error, Model};

impl Context {
    /// The separation distance between `a` (placed by `pose_a`) and `b` (by `pose_b`), with
    /// the closest points, their faces and certified bounds `lower ≤ d ≤ upper` within the
    /// options' tolerance (or only "below the threshold?" with `opts.threshold`). Each model
    /// keeps an RSS tree for distance in eight-wide lanes (and on a device an 8-wide copy), built on first use and
    /// rebuilt after its positions moved, so a deformed model is never measured with a stale
    /// tree. Distances and bounds are the same on every backend; where several triangle pairs
    /// tie at the minimum, the reported pair may differ.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, query::distance::DistanceOptions, Backend, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.25, 24, 12).unwrap()).unwrap();
    /// let apart = Affine3A::from_translation(Vec3::new(3.0, 0.0, 0.0));
    /// let r = ctx.distance(&m, &Affine3A::IDENTITY, &m, &apart, &DistanceOptions::default()).unwrap();
    /// assert!((r.distance - 0.5).abs() < 0.02 && r.lower <= r.distance);
    /// ```
    pub fn distance(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &DistanceOptions,
    ) -> Result<DistanceResult, Error> {
        meshes("distance", a, b)?;
        let (pa, pb) = (Pose64::from_affine(pose_a), Pose64::from_affine(pose_b));
        match &self.device {
            None => {
                let (ta, tb) = (a.distance_tree()?, b.distance_tree()?);
                let oa = WideDistanceObject {
                    mesh: a.mesh(),
                    tree: &ta,
                    pose: pa,
                };
                let ob = WideDistanceObject {
                    mesh: b.mesh(),
                    tree: &tb,
                    pose: pb,
                };
                // The closest pair of this model pair's last query gives the first upper
                // bound (`crate::witness`).
                let hint = self.witnesses.get(Kind::Distance, a, b).map(|w| w.faces);
                let r = distance_wide_from(&oa, &ob, opts, hint)?;
                self.witnesses.set(
                    Kind::Distance,
                    a,
                    b,
                    Some(Witness::of_faces([r.tri_a, r.tri_b])),
                );
                Ok(r)
            }
            Some(d) => {
                let (ra, rb) = (a.resident_distance(d)?, b.resident_distance(d)?);
                let gopts = gprox_cuda::distance::GpuDistanceOptions {
                    abs_tol: opts.abs_tol,
                    rel_tol: opts.rel_tol,
                    threshold: opts.threshold,
                    ..Default::default()
                };
                Ok(d.distance_resident(&ra, &pa, &rb, &pb, &gopts)?)
            }
        }
    }
}
