//! gprox-geometry: the shapes gprox reasons about.
//!
//! * [`TriMesh`]: an indexed triangle mesh with validation ([`mesh`]) and loaders ([`io`]).
//! * [`transform`]: the one place where f32 poses become f64 world coordinates, so every
//!   backend (CPU, CUDA, emulator) computes bit-identical positions.
//! * exact primitive tests ([`predicates`], [`tri_tri`]).
//! * with the `parry` feature, conversions to and from parry3d's meshes and poses
//!   (`interop::parry`).

pub mod error;
pub mod freeform;
pub mod hull;
#[cfg(feature = "parry")]
pub mod interop;
pub mod io;
pub mod mesh;
pub mod predicates;
pub mod scene;
pub mod transform;
pub mod tri_distance;
pub mod tri_tri;

pub use error::GeometryError;
pub use glam;
pub use mesh::TriMesh;
