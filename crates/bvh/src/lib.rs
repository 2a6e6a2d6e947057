//! gprox-bvh: bounding volumes and bounding-volume hierarchies.
//!
//! The flat `#[repr(C)]` layouts here ([`Aabb`], [`BvhNode`]) are the contract between the CPU
//! code and the CUDA kernels: `kernels/include/gprox/layout.cuh` mirrors them and a test compares
//! sizes and field offsets on both sides.

pub mod aabb;
pub mod node;

pub use aabb::Aabb;
pub use node::{Bvh, BvhNode, LEAF};
