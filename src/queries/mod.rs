//! The queries of [`Context`](crate::Context), one module per query kind (as parry3d's
//! `query` module): each adds its methods to `Context` and runs them on the CPU or on the
//! context's device. What runs where is listed by [`Context::capabilities`](crate::Context).

mod ccd;
mod collide;
mod contact;
mod distance;
mod freeform;
pub(crate) mod geometry_image;
mod image_space;
mod penetration;
mod self_collide;
mod world;

pub use ccd::Motion;
pub use collide::PairFront;
pub use contact::Contact;
pub use geometry_image::ImageContacts;

use glam::Affine3A;
use gprox_cuda::{Device, GpuCollideOptions, ResidentObject};
use gprox_geometry::transform::Pose64;
use gprox_query::collide::{self as cpu, CollideOptions, CollisionModel, ModelObject};

use crate::{Error, Model, ModelKind};

/// `model` in the form of the CPU collision queries, with the tree its options ask for.
fn object<'a>(model: &'a Model, pose: &Affine3A, obb: &'a Option<ObbSlot>) -> ModelObject<'a> {
    ModelObject {
        mesh: model.mesh(),
        model: match obb {
            Some(t) => CollisionModel::WideObb(t),
            None => CollisionModel::Aabb(model.bvh()),
        },
        pose: Pose64::from_affine(pose),
    }
}

/// A model's OBB tree, kept alive for the duration of one query.
type ObbSlot = std::sync::Arc<gprox_bvh::wide_obb::WideObbTree>;

/// `model` with the LBVH (the many-body and penetration queries take AABB trees).
fn aabb_object<'a>(model: &'a Model, pose: &Affine3A) -> cpu::CollisionObject<'a> {
    cpu::CollisionObject {
        mesh: model.mesh(),
        bvh: model.bvh(),
        pose: Pose64::from_affine(pose),
    }
}

/// Both models must be meshes for the mesh query `query`.
fn meshes(query: &'static str, a: &Model, b: &Model) -> Result<(), Error> {
    a.require(ModelKind::Mesh, query, "model a")?;
    b.require(ModelKind::Mesh, query, "model b")
}

/// Runs a pair query on `d` over the models' resident copies (made or brought up to date).
fn on_device<R>(
    d: &Device,
    a: &Model,
    pose_a: &Affine3A,
    b: &Model,
    pose_b: &Affine3A,
    query: impl FnOnce(&ResidentObject<'_>, &ResidentObject<'_>) -> gprox_cuda::Result<R>,
) -> Result<R, Error> {
    let (ra, rb) = (a.resident(d)?, b.resident(d)?);
    let oa = ResidentObject::new(&ra, a.mesh(), Pose64::from_affine(pose_a));
    let ob = ResidentObject::new(&rb, b.mesh(), Pose64::from_affine(pose_b));
    Ok(query(&oa, &ob)?)
}

/// The device form of the collision options.
fn gpu_options(opts: &CollideOptions) -> GpuCollideOptions {
    GpuCollideOptions {
        margin: opts.margin,
        ..Default::default()
    }
}
