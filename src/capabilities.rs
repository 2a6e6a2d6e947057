//! Which query runs where: every [`Context`] method, on the CPU or on the context's device.

use std::fmt;

use crate::Context;

/// A query of [`Context`], by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Query {
    /// [`Context::model`]: the collision tree's build.
    Build,
    /// [`Context::update`]: refit after a deformation.
    Update,
    /// [`Context::collide_all`].
    CollideAll,
    /// [`Context::collide_all_tracked`] (on a device: the device traversal, no front).
    CollideAllTracked,
    /// [`Context::collide_any`].
    CollideAny,
    /// [`Context::collide_batch`].
    CollideBatch,
    /// [`Context::collide_many`].
    CollideMany,
    /// [`Context::contacts`] (the pair search; each found pair's geometry is computed on the
    /// host).
    Contacts,
    /// [`Context::self_collide`].
    SelfCollide,
    /// [`Context::ccd`].
    Ccd,
    /// [`Context::ccd_self`].
    CcdSelf,
    /// [`Context::distance`].
    Distance,
    /// [`Context::penetration`].
    Penetration,
    /// [`Context::intersection_volume`] (the inside classification on the device; the
    /// per-sample depths and the columns the device leaves undecided on the CPU).
    IntersectionVolume,
    /// [`Context::distance_field`].
    DistanceField,
    /// [`Context::sampled_separation`].
    SampledSeparation,
    /// [`Context::freeform_collide`] and [`Context::freeform_collide_any`].
    FreeformCollide,
    /// [`Context::freeform_distance`].
    FreeformDistance,
    /// [`Context::image_collide`].
    ImageCollide,
    /// [`Context::image_self_collide`].
    ImageSelfCollide,
}

impl Query {
    /// Every query, in the order above.
    pub const ALL: [Query; 20] = [
        Query::Build,
        Query::Update,
        Query::CollideAll,
        Query::CollideAllTracked,
        Query::CollideAny,
        Query::CollideBatch,
        Query::CollideMany,
        Query::Contacts,
        Query::SelfCollide,
        Query::Ccd,
        Query::CcdSelf,
        Query::Distance,
        Query::Penetration,
        Query::IntersectionVolume,
        Query::DistanceField,
        Query::SampledSeparation,
        Query::FreeformCollide,
        Query::FreeformDistance,
        Query::ImageCollide,
        Query::ImageSelfCollide,
    ];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Query::Build => "model",
            Query::Update => "update",
            Query::CollideAll => "collide_all",
            Query::CollideAllTracked => "collide_all_tracked",
            Query::CollideAny => "collide_any",
            Query::CollideBatch => "collide_batch",
            Query::CollideMany => "collide_many",
            Query::Contacts => "contacts",
            Query::SelfCollide => "self_collide",
            Query::Ccd => "ccd",
            Query::CcdSelf => "ccd_self",
            Query::Distance => "distance",
            Query::Penetration => "penetration",
            Query::IntersectionVolume => "intersection_volume",
            Query::DistanceField => "distance_field",
            Query::SampledSeparation => "sampled_separation",
            Query::FreeformCollide => "freeform_collide",
            Query::FreeformDistance => "freeform_distance",
            Query::ImageCollide => "image_collide",
            Query::ImageSelfCollide => "image_self_collide",
        }
    }

    /// Whether the device has kernels for this query (otherwise a device context answers it
    /// on the CPU).
    fn has_kernels(self) -> bool {
        !matches!(
            self,
            Query::Ccd
                | Query::Penetration
                | Query::DistanceField
                | Query::SampledSeparation
                | Query::FreeformCollide
                | Query::FreeformDistance
        )
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a query runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunsOn {
    /// On the CPU (rayon), by the CPU algorithms.
    Cpu,
    /// On the context's device (CUDA, or its host emulator), by the kernels.
    Device,
}

impl fmt::Display for RunsOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunsOn::Cpu => "cpu",
            RunsOn::Device => "device",
        })
    }
}

impl Context {
    /// Where `query` runs on this context: on a device context, the queries without kernels
    /// yet run on the CPU (same answers), and this says so.
    ///
    /// ```
    /// use gprox::{Backend, Context, Query, RunsOn};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// assert_eq!(ctx.runs_on(Query::Distance), RunsOn::Cpu);
    /// ```
    pub fn runs_on(&self, query: Query) -> RunsOn {
        if self.device.is_some() && query.has_kernels() {
            RunsOn::Device
        } else {
            RunsOn::Cpu
        }
    }

    /// Every query with where it runs on this context.
    ///
    /// ```
    /// use gprox::{Backend, Context, RunsOn};
    /// let caps = Context::new(Backend::Cpu).unwrap().capabilities();
    /// assert!(caps.iter().all(|&(_, on)| on == RunsOn::Cpu));
    /// ```
    pub fn capabilities(&self) -> Vec<(Query, RunsOn)> {
        Query::ALL.iter().map(|&q| (q, self.runs_on(q))).collect()
    }
}
