//! gprox: geometric proximity queries between triangle meshes and freeform surfaces, on the CPU
//! and on NVIDIA GPUs, through one API.

pub use gprox_bvh as bvh;
pub use gprox_geometry as geometry;
pub use gprox_query as query;
