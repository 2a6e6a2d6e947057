//! gprox: geometric proximity queries between triangle meshes and freeform surfaces, on the CPU
//! and on NVIDIA GPUs, through one API.
//!
//! * [`Backend`] picks where queries run (`Cpu`, `Cuda(i)`, [`Backend::auto`]); a [`Context`]
//!   opens it once.
//! * [`Model`] is a mesh with its BVH (refit when the mesh deforms), or NURBS / Bézier
//!   surfaces with their Coons BVH ([`Model::freeform`]); it builds whatever else a query needs
//!   on first use.
//! * [`Context`] answers every query on its backend: [`Context::collide_all`] /
//!   [`Context::collide_any`] / [`Context::contacts`], [`Context::self_collide`],
//!   [`Context::ccd`] / [`Context::ccd_self`], [`Context::distance`],
//!   [`Context::penetration`], [`Context::collide_many`] / [`Context::collide_batch`],
//!   [`Context::freeform_collide`] / [`Context::freeform_distance`],
//!   [`Context::image_collide`] / [`Context::image_self_collide`] (geometry images of trimmed
//!   NURBS faces, [`Model::trimmed`]);
//!   [`Context::capabilities`] says which run on the device.
//! * [`collide_all`] / [`collide_any`] are one-shot shortcuts.
//! * [`render`] draws the results; the sub-crates are re-exported as [`geometry`], [`bvh`],
//!   [`query`] and [`cuda`].
//!
//! ```
//! use gprox::{geometry::scene::Scene, Backend, CollideOptions, Model};
//! let scene = Scene::builtin();
//! let a = Model::new(scene.mesh(0).clone());
//! let b = Model::new(scene.mesh(1).clone());
//! let pairs = gprox::collide_all(
//!     Backend::Cpu, &a, &scene.pose(0, 0), &b, &scene.pose(0, 1), &CollideOptions::default(),
//! )?;
//! println!("{} intersecting triangle pairs", pairs.len());
//! # Ok::<(), gprox::Error>(())
//! ```

pub use gprox_bvh as bvh;
pub use gprox_cuda as cuda;
pub use gprox_geometry as geometry;
pub use gprox_query as query;

mod backend;
mod capabilities;
mod error;
mod model;
mod options;
mod queries;
pub mod render;
mod witness;

pub use backend::{Backend, Context};
pub use capabilities::{Query, RunsOn};
pub use error::Error;
pub use glam::{Affine3A, DVec3, EulerRot, Quat, Vec3};
pub use gprox_bvh::coons::CoonsOptions;
pub use gprox_geometry::freeform::TrimmedFace;
pub use gprox_geometry::freeform::{NurbsSurface, ParamRect};
pub use gprox_geometry::TriMesh;
pub use gprox_query::broad_phase::{ManyContacts, ObjectPairContacts};
pub use gprox_query::ccd::{CcdOptions, CcdStatus, Feature, FeatureToi, MeshCcd, Toi, Undecided};
pub use gprox_query::collide::{CollideOptions, Side};
pub use gprox_query::distance::{DistanceOptions, DistanceResult};
pub use gprox_query::freeform::{
    CollisionPair as FreeformPair, DistanceOptions as FreeformDistanceOptions, FreeformContact,
    FreeformContacts, FreeformDistance,
};
pub use gprox_query::geometry_image::{Mode as ImageMode, TexelPair};
pub use gprox_query::image_space::{
    Contact as ImageSpaceContact, DistanceField, DistanceSample, ImageSpaceError,
    ImageSpaceOptions, Intersection, IntersectionSample, Lattice, Separation, SurfacePoint,
};
pub use gprox_query::penetration::{PenetratingVertex, Penetration};
pub use model::{Model, ModelKind};
pub use options::{CollisionTree, GeometryImageOptions, ModelOptions};
pub use queries::{Contact, ImageContacts, Motion, PairFront};

/// Every intersecting triangle pair between `a` (placed by `pose_a`) and `b` (by `pose_b`) on
/// `backend`: `(face of a, face of b)`, sorted, no duplicates. Opens the backend for this one
/// call; keep a [`Context`] to run many queries.
pub fn collide_all(
    backend: Backend,
    a: &Model,
    pose_a: &Affine3A,
    b: &Model,
    pose_b: &Affine3A,
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, Error> {
    Context::new(backend)?.collide_all(a, pose_a, b, pose_b, opts)
}

/// Whether `a` (placed by `pose_a`) and `b` (by `pose_b`) intersect, on `backend`.
pub fn collide_any(
    backend: Backend,
    a: &Model,
    pose_a: &Affine3A,
    b: &Model,
    pose_b: &Affine3A,
    opts: &CollideOptions,
) -> Result<bool, Error> {
    Context::new(backend)?.collide_any(a, pose_a, b, pose_b, opts)
}
