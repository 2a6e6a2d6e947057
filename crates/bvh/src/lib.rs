//! gprox-bvh: bounding volumes and bounding-volume hierarchies.
//!
//! The flat `#[repr(C)]` layouts here ([`Aabb`], [`BvhNode`]) are the contract between the CPU
//! code and the CUDA kernels: `kernels/include/gprox/layout.cuh` mirrors them and a test compares
//! sizes and field offsets on both sides.

pub mod aabb;
mod alloc;
pub mod bounding_volume;
pub mod bv_tree;
pub mod coons;
pub mod lane_tree;
pub mod lbvh;
pub mod morton;
pub mod node;
pub mod normal_cone;
pub mod obb;
pub mod rebuild_policy;
pub mod refit;
pub mod refit_plan;
pub mod rss;
pub mod rss_pair;
pub mod sort;
pub mod sphere;
pub mod swept;
mod topdown;
pub mod wide;
pub mod wide_obb;
pub mod wide_rss;

pub use aabb::Aabb;
pub use node::{Bvh, BvhNode, LEAF};
