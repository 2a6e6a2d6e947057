//! The real-GPU backend on cudarc: context, stream, the module loaded from the embedded fatbin.
//!
//! cudarc (with `dynamic-loading`) panics when libcuda is missing, so every entry goes through
//! [`CudaBackend::new`], which checks `is_culib_present()` first.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{
    result,
    sys::{self, CUdevice_attribute, CUevent_flags},
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};

use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::KernelParams;
use crate::FATBIN;

/// A CUDA device with the gprox module loaded.
pub(crate) struct CudaBackend {
    index: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: HashMap<Kernel, CudaFunction>,
    multiprocessors: u32,
    /// Resident blocks of the balanced traversal per multiprocessor at 256 threads.
    traversal_blocks: Option<u32>,
}

impl CudaBackend {
    /// Opens device `index` and loads every kernel of the fatbin. A panic inside cudarc (e.g. a
    /// driver too old to have a symbol it resolves) becomes [`CudaError::DriverPanic`].
    pub(crate) fn new(index: usize) -> Result<Self> {
        match std::panic::catch_unwind(|| Self::open(index)) {
            Ok(r) => r,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                Err(CudaError::DriverPanic(msg))
            }
        }
    }

    fn open(index: usize) -> Result<Self> {
        // SAFETY: only tries to dlopen libcuda; no other cudarc call happens without it.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CudaError::NoDriver);
        }
        let ctx =
            CudaContext::new(index).map_err(|e| CudaError::driver("cuInit/context", index, e))?;
        if FATBIN.is_empty() {
            return Err(CudaError::NoDeviceCode);
        }
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(FATBIN.to_vec()))
            .map_err(|e| CudaError::driver("cuModuleLoadData(fatbin)", index, e))?;
        let mut functions = HashMap::new();
        for &k in Kernel::ALL {
            let f = module
                .load_function(k.name())
                .map_err(|e| CudaError::driver("cuModuleGetFunction", index, e))?;
            functions.insert(k, f);
        }
        // One stream, work in launch order: cudarc's per-allocation event tracking (made for
        // several streams) only costs events here. Turned off before any buffer exists.
        // SAFETY: no CudaSlice of this context exists yet; everything runs on one stream.
        unsafe { ctx.disable_event_tracking() };
        // A stream of our own rather than the legacy default stream, which synchronises with
        // every other stream of the process.
        let stream = ctx
            .new_stream()
            .map_err(|e| CudaError::driver("cuStreamCreate", index, e))?;
        let multiprocessors = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| CudaError::driver("cuDeviceGetAttribute", index, e))?
            .max(1) as u32;
        let mut backend = Self {
            index,
            ctx,
            stream,
            functions,
            multiprocessors,
            traversal_blocks: None,
        };
        backend.traversal_blocks = backend
            .blocks_per_multiprocessor(Kernel::BalanceTraverse, crate::device::MAX_BLOCK)
            .ok();
        Ok(backend)
    }

    /// Resident blocks of the balanced traversal kernel per multiprocessor (occupancy).
    pub(crate) fn traversal_blocks_per_sm(&self) -> Option<u32> {
        self.traversal_blocks
    }

    /// Streaming multiprocessors of the device.
    pub(crate) fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// Blocks of `kernel` that fit on one multiprocessor at `block` threads (at least 1).
    pub(crate) fn blocks_per_multiprocessor(&self, kernel: Kernel, block: u32) -> Result<u32> {
        let Some(f) = self.functions.get(&kernel) else {
            return Err(CudaError::NoDeviceCode);
        };
        f.occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .map(|b| b.max(1))
            .map_err(self.err("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    }

    /// `bytes` of zeroed page-locked host memory mapped into the device's address space.
    pub(crate) fn alloc_mapped(&self, bytes: usize) -> Result<MappedHost> {
        self.ctx
            .bind_to_thread()
            .map_err(self.err("cuCtxSetCurrent"))?;
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: plain allocation; the pointer is owned by the returned MappedHost.
        let host =
            unsafe { result::malloc_host(bytes, flags) }.map_err(self.err("cuMemHostAlloc"))?;
        // SAFETY: `host` points to `bytes` writable bytes just allocated.
        unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, bytes) };
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: `host` was allocated with DEVICEMAP in this context.
        let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0) }.result();
        let m = MappedHost {
            host,
            dev,
            ctx: self.ctx.clone(),
        };
        mapped.map_err(self.err("cuMemHostGetDevicePointer"))?;
        Ok(m)
    }

    /// The device ordinal.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    fn err(&self, context: &'static str) -> impl Fn(cudarc::driver::DriverError) -> CudaError + '_ {
        move |e| CudaError::driver(context, self.index, e)
    }

    pub(crate) fn alloc_zeros(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream
            .alloc_zeros::<u8>(bytes)
            .map_err(self.err("alloc"))
    }

    pub(crate) fn device_ptr(&self, s: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = s.device_ptr(&self.stream);
        ptr
    }

    /// The first `bytes` bytes of `s` (all of it when `bytes` is larger).
    pub(crate) fn download(&self, s: &CudaSlice<u8>, bytes: usize) -> Result<Vec<u8>> {
        let view = s.slice(0..bytes.min(s.len()));
        let v = self
            .stream
            .clone_dtoh(&view)
            .map_err(self.err("memcpy dtoh"))?;
        self.synchronize()?;
        Ok(v)
    }

    pub(crate) fn write(&self, s: &mut CudaSlice<u8>, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut view = s.slice_mut(0..bytes.len());
        self.stream
            .memcpy_htod(bytes, &mut view)
            .map_err(self.err("memcpy htod"))
    }

    /// Copies the first `bytes` bytes of `src` into `dst` on the stream.
    pub(crate) fn copy_dtod(
        &self,
        src: &CudaSlice<u8>,
        dst: &mut CudaSlice<u8>,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let from = src.slice(0..bytes);
        let mut to = dst.slice_mut(0..bytes);
        self.stream
            .memcpy_dtod(&from, &mut to)
            .map_err(self.err("memcpy dtod"))
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(self.err("synchronize"))
    }

    /// A timing event recorded on the stream now.
    pub(crate) fn record_event(&self) -> Result<CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(self.err("cuEventRecord"))
    }

    /// Milliseconds between two events of [`CudaBackend::record_event`] (waits for `end`).
    pub(crate) fn elapsed_ms(&self, start: &CudaEvent, end: &CudaEvent) -> Result<f64> {
        start
            .elapsed_ms(end)
            .map(f64::from)
            .map_err(self.err("cuEventElapsedTime"))
    }

    /// # Safety
    /// See [`crate::Device::launch`].
    pub(crate) unsafe fn launch<P: KernelParams>(
        &self,
        kernel: Kernel,
        grid: u32,
        block: u32,
        params: &P,
    ) -> Result<()> {
        let Some(f) = self.functions.get(&kernel) else {
            return Err(CudaError::NoDeviceCode);
        };
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = self.stream.launch_builder(f);
        args.arg(params);
        // SAFETY: the params struct mirrors the kernel's (layout test); the caller vouches for
        // the device addresses inside it.
        unsafe { args.launch(cfg) }
            .map(|_| ())
            .map_err(self.err("cuLaunchKernel"))
    }
}

/// Page-locked host memory mapped into the device's address space (`cuMemHostAlloc` with
/// `DEVICEMAP`): kernels write it through `dev`, the host reads it through `host` after a
/// synchronisation.
pub(crate) struct MappedHost {
    host: *mut std::ffi::c_void,
    dev: u64,
    ctx: Arc<CudaContext>,
}

impl MappedHost {
    pub(crate) fn device_ptr(&self) -> u64 {
        self.dev
    }
    pub(crate) fn host_ptr(&self) -> *const u8 {
        self.host.cast::<u8>()
    }
}

impl Drop for MappedHost {
    fn drop(&mut self) {
        // Nothing to report from a destructor: a failure here leaks the pages at worst.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemHostAlloc in this context, freed once.
        let _ = unsafe { result::free_host(self.host) };
    }
}

// SAFETY: the pointer owns its allocation like a Box; access goes through &self reads after a
// synchronisation, writes only by kernels.
unsafe impl Send for MappedHost {}
// SAFETY: as above.
unsafe impl Sync for MappedHost {}
