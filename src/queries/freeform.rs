//! Freeform queries between two posed freeform models (NURBS / Bézier surfaces), on their
//! Coons BVHs.

use glam::Affine3A;
use gprox_geometry::transform::Pose64;
use gprox_query::freeform::{
    freeform_collide, freeform_collide_any, freeform_distance,
    DistanceOptions as FreeformDistanceOptions, FreeformContacts, FreeformDistance, FreeformObject,
};

use crate::{Context, Error, Model};

/// Runs `query` on the two freeform models' objects (their Coons BVHs built on first use).
fn with_objects<R>(
    query: &'static str,
    a: &Model,
    pose_a: &Affine3A,
    b: &Model,
    pose_b: &Affine3A,
    run: impl FnOnce(&FreeformObject<'_>, &FreeformObject<'_>) -> R,
) -> Result<R, Error> {
    let (sa, ta) = a.freeform_parts(query, "model a")?;
    let (sb, tb) = b.freeform_parts(query, "model b")?;
    let oa = FreeformObject {
        surfaces: sa,
        bvh: &ta,
        pose: Pose64::from_affine(pose_a),
    };
    let ob = FreeformObject {
        surfaces: sb,
        bvh: &tb,
        pose: Pose64::from_affine(pose_b),
    };
    Ok(run(&oa, &ob))
}

impl Context {
    /// The contacts of the freeform models `a` and `b` within `tolerance` (world units): every
    /// pair of sub-patches (BVH leaves or finer) that may come within the tolerance is either
    /// witnessed — a [`FreeformContact`](crate::FreeformContact) with two surface points, their
    /// surfaces and `(u, v)`, at most `tolerance` apart (refined by Levenberg–Marquardt) —
    /// certified apart (dropped), or listed in
    /// [`FreeformContacts::undecided`](crate::FreeformContacts) with its certified lower bound.
    /// None missed. Both models must be freeform ([`Model::freeform`]); runs on the CPU on
    /// every backend.
    ///
    /// ```
    /// use gprox::{geometry::freeform::teapot, Backend, Context, ModelOptions};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let mut opts = ModelOptions::default();
    /// opts.coons.epsilon = 1e-3;
    /// let pot = ctx.freeform_model(teapot(), &opts).unwrap();
    /// let beside = Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0));
    /// let hits = ctx.freeform_collide(&pot, &Affine3A::IDENTITY, &pot, &beside, 1e-3).unwrap();
    /// assert!(!hits.contacts.is_empty());
    /// assert!(hits.contacts.iter().all(|c| c.point_a.distance(c.point_b) <= 1e-3));
    /// assert!(hits.undecided.iter().all(|p| p.lower <= 1e-3));
    /// ```
    pub fn freeform_collide(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        tolerance: f64,
    ) -> Result<FreeformContacts, Error> {
        with_objects("freeform_collide", a, pose_a, b, pose_b, |oa, ob| {
            freeform_collide(oa, ob, tolerance)
        })
    }

    /// Whether the freeform models `a` and `b` may come within `tolerance` of each other: stops
    /// at the first witnessed pair of surface points; true also when undecided pairs remain
    /// (conservative), false only when every pair is certified apart.
    ///
    /// ```
    /// use gprox::{geometry::freeform::teapot, Backend, Context, ModelOptions};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let mut opts = ModelOptions::default();
    /// opts.coons.epsilon = 1e-3;
    /// let pot = ctx.freeform_model(teapot(), &opts).unwrap();
    /// let far = Affine3A::from_translation(Vec3::new(20.0, 0.0, 0.0));
    /// assert!(!ctx.freeform_collide_any(&pot, &Affine3A::IDENTITY, &pot, &far, 1e-3).unwrap());
    /// ```
    pub fn freeform_collide_any(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        tolerance: f64,
    ) -> Result<bool, Error> {
        with_objects("freeform_collide_any", a, pose_a, b, pose_b, |oa, ob| {
            freeform_collide_any(oa, ob, tolerance)
        })
    }

    /// The certified minimum distance between the freeform models `a` and `b`: closest points,
    /// their surfaces and `(u, v)`, and bounds `lower ≤ d ≤ upper` with `upper − lower` within
    /// `opts.tolerance` when `converged`. Runs on the CPU on every backend.
    ///
    /// ```
    /// use gprox::{geometry::freeform::teapot, query::freeform::DistanceOptions, Backend, Context, ModelOptions};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let mut opts = ModelOptions::default();
    /// opts.coons.epsilon = 1e-3;
    /// let pot = ctx.freeform_model(teapot(), &opts).unwrap();
    /// let apart = Affine3A::from_translation(Vec3::new(8.0, 0.0, 0.0));
    /// let d = ctx
    ///     .freeform_distance(&pot, &Affine3A::IDENTITY, &pot, &apart, &DistanceOptions { tolerance: 1e-4, ..Default::default() })
    ///     .unwrap();
    /// assert!(d.converged && d.lower <= d.distance && d.distance > 0.0);
    /// ```
    pub fn freeform_distance(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &FreeformDistanceOptions,
    ) -> Result<FreeformDistance, Error> {
        with_objects("freeform_distance", a, pose_a, b, pose_b, |oa, ob| {
            freeform_distance(oa, ob, opts)
        })
    }
}
