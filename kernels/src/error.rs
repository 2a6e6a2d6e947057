//! Errors of the CUDA backend and of the emulator.

use cudarc::driver::{sys::cudaError_enum, DriverError};

/// What went wrong on the device side.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The CUDA driver library (libcuda) could not be loaded.
    #[error("no CUDA driver: libcuda could not be loaded")]
    NoDriver,
    /// The driver is present but there is no (such) CUDA device.
    #[error("no CUDA device with index {index}")]
    NoDevice {
        /// The requested device ordinal.
        index: usize,
    },
    /// gprox-cuda was compiled without nvcc, so there is no device code to load.
    #[error("built without device code (nvcc was not found at build time; see scripts/install-cuda-toolkit.sh)")]
    NoDeviceCode,
    /// cudarc panicked while opening the device (an incompatible driver library).
    #[error("the CUDA driver library could not be used: {0}")]
    DriverPanic(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver error in {context}: {source}")]
    Driver {
        /// What was being done.
        context: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A launch configuration the kernels do not support (no blocks, or a block of 0 or more
    /// than [`crate::device::MAX_BLOCK`] threads).
    #[error("launch of {kernel} rejected: grid {grid}, block {block}")]
    InvalidLaunch {
        /// Kernel name.
        kernel: &'static str,
        /// Blocks.
        grid: u32,
        /// Threads per block.
        block: u32,
    },
    /// A params struct of the wrong size was passed for a kernel.
    #[error("kernel {kernel} takes a {expected}-byte params struct, got {got} bytes")]
    ParamsMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// Size the kernel expects.
        expected: usize,
        /// Size passed.
        got: usize,
    },
    /// A host slice does not fit the device buffer it is copied to or from.
    #[error("buffer length mismatch: device buffer holds {device} elements, host slice {host}")]
    LengthMismatch {
        /// Device buffer length.
        device: usize,
        /// Host slice length.
        host: usize,
    },
    /// A problem too large for the kernels' 32-bit indices.
    #[error("{what} has {count} elements; the kernels index with u32 (at most {max})")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The collision margin is negative, infinite or NaN.
    #[error("collision margin {0} must be finite and >= 0")]
    InvalidMargin(f64),
    /// A pose holds a NaN or an infinity.
    #[error("the pose of object {side} is not finite")]
    NonFinitePose {
        /// Which object (`"a"` or `"b"`).
        side: &'static str,
    },
    /// A face pair names a face that does not exist.
    #[error("pair {index} ({pair:?}) names a face out of range")]
    InvalidPair {
        /// Position of the pair in the input.
        index: usize,
        /// The pair.
        pair: [u32; 2],
    },
    /// An option outside its valid range.
    #[error("option {what} = {value} is out of range")]
    InvalidOption {
        /// The option's name.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// The end positions of a CCD query do not match the mesh.
    #[error("{what}: {got} end positions for {expected} vertices")]
    VertexCountMismatch {
        /// Which mesh.
        what: &'static str,
        /// End positions given.
        got: usize,
        /// Vertices of the mesh.
        expected: usize,
    },
    /// A position (or end position) that is NaN or infinite.
    #[error("{what}: vertex {index} at t={frame} is not finite")]
    NonFinitePosition {
        /// Which mesh.
        what: &'static str,
        /// Frame: 0 (start) or 1 (end).
        frame: u8,
        /// Vertex index.
        index: usize,
    },
    /// The CPU CCD that finishes the device's candidates rejected the input.
    #[error("ccd: {0}")]
    Ccd(#[from] gprox_query::ccd::CcdError),
    /// A BVH handed to a pipeline does not fit its mesh or is not laid out as an LBVH.
    #[error("invalid bvh: {0}")]
    InvalidBvh(String),
}

impl CudaError {
    /// Wraps a driver error, turning "no device" codes into [`CudaError::NoDevice`].
    pub(crate) fn driver(context: &'static str, index: usize, e: DriverError) -> Self {
        match e.0 {
            cudaError_enum::CUDA_ERROR_NO_DEVICE | cudaError_enum::CUDA_ERROR_INVALID_DEVICE => {
                CudaError::NoDevice { index }
            }
            _ => CudaError::Driver { context, source: e },
        }
    }
}

/// Result of the device operations.
pub type Result<T, E = CudaError> = std::result::Result<T, E>;
