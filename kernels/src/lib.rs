//! gprox-cuda: the CUDA kernels of gprox, their launchers on cudarc, and the host emulator.
//!
//! Every kernel is written once in CUDA C++ (`kernels/cuda/*.cu`, shared layouts in
//! `kernels/include/gprox/*.cuh`) and runs three ways (DESIGN.md §3):
//!
//! 1. compiled by nvcc at build time into one fatbin ([`FATBIN`]; SASS sm_80/sm_90 + PTX
//!    compute_75) when nvcc is found — then `cfg(gprox_device_code)` is set;
//! 2. launched on a GPU through cudarc ([`Device::cuda`]), which reports a typed
//!    [`CudaError`] (no driver, no device, no device code) instead of panicking;
//! 3. compiled as C++20 for the host and run by the emulator ([`Device::emulated`]): one OS
//!    thread per CUDA thread, blocks one after another — how the tests run every kernel.
//!
//! Pipelines: [`Device::build_bvh`] (with the stages [`Device::triangle_aabbs`],
//! [`Device::morton_codes`], [`Device::sort_codes`], [`Device::hierarchy`], [`Device::refit`])
//! bit-identical to `gprox_bvh::lbvh`, and [`Device::collide_all`] giving the same pair sets as
//! `gprox_query::collide::collide_all`. Every BVTT traversal — collision, self-collision
//! ([`Device::self_collide`]) and CCD candidates ([`Device::ccd_self`], [`Device::ccd_pair`]) —
//! runs through gProximity's balanced traversal ([`balance`]: persistent tasks with local work
//! queues, one idle counter, rebalancing between launches).
//!
//! ```
//! use gprox_cuda::Device;
//! use gprox_geometry::{glam::Vec3, TriMesh};
//! let mesh = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
//! let bvh = Device::emulated().build_bvh(&mesh).unwrap();
//! assert_eq!(bvh.leaf_count(), 1);
//! ```

pub mod balance;
pub mod ccd;
pub mod ccd_narrow;
pub mod collide;
mod cuda;
pub mod device;
pub mod distance;
pub mod error;
pub mod geometry_image;
pub mod image_depth;
pub mod image_space;
pub mod kernel;
pub mod lbvh;
pub mod ops;
pub mod params;
mod pool;
pub mod profile;
pub mod resident;
pub mod self_collide;
pub mod world;

pub use balance::{BalanceOptions, BalanceStats};
pub use ccd::MovingMesh;
pub use collide::{CollisionObject, GpuCollideOptions, ResidentObject};
pub use device::{Device, DeviceBuffer, MappedBuffer};
pub use error::{CudaError, Result};
pub use geometry_image::DeviceImage;
pub use kernel::Kernel;
pub use ops::DeviceOps;
pub use profile::KernelTime;
pub use resident::ResidentMesh;
pub use self_collide::GpuSelfCollisions;

mod fatbin {
    include!(concat!(env!("OUT_DIR"), "/fatbin.rs"));
}
/// The embedded fatbin with every kernel (empty when built without nvcc).
pub use fatbin::FATBIN;

/// Whether this build carries device code (nvcc was found at build time).
pub const HAS_DEVICE_CODE: bool = cfg!(gprox_device_code);
