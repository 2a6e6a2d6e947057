//! The real-GPU backend on cudarc: context, stream, the module loaded from the embedded fatbin.
//!
//! cudarc (with `dynamic-loading`) panics when libcuda is missing, so every entry goes through
//! [`CudaBackend::new`], which checks `is_culib_present()` first.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{
    sys::CUevent_flags, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr,
    LaunchConfig, PushKernelArg,
};

use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::KernelParams;
use crate::FATBIN;

/// A CUDA device with the gprox module loaded.
pub(crate) struct CudaBackend {
    index: usize,
    _ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: HashMap<Kernel, CudaFunction>,
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
        let stream = ctx.default_stream();
        Ok(Self {
            index,
            _ctx: ctx,
            stream,
            functions,
        })
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
