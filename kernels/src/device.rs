//! [`Device`]: where kernels run (a CUDA GPU through cudarc, or the host emulator), device
//! buffers and launches.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;

use crate::cuda::{CudaBackend, MappedHost};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::ops::{DeviceOps, OpCounter};
use crate::params::KernelParams;
use crate::pool::Pool;
use crate::profile::{KernelTime, Profiler};

/// Most threads per block any kernel is written for (`GPROX_MAX_BLOCK` in `common.cuh`, the
/// kernels' `__launch_bounds__`).
pub const MAX_BLOCK: u32 = 256;

/// A device the kernels run on: a CUDA GPU, or the host emulator (the same CUDA C++ compiled
/// for the CPU, one OS thread per CUDA thread). Cheap to clone.
///
/// ```
/// use gprox_cuda::Device;
/// let device = Device::emulated();
/// assert!(device.is_emulated());
/// // Without a driver (or without device code) this is a typed error, never a panic.
/// if let Err(e) = Device::cuda(0) {
///     println!("no GPU: {e}");
/// }
/// ```
#[derive(Clone)]
pub struct Device {
    backend: Backend,
    /// Operation counts of this device and its clones.
    ops: Arc<OpCounter>,
    /// Work buffers reused across queries (grown, never shrunk).
    pub(crate) pool: Arc<Pool>,
    /// Identity shared by clones ([`Device::id`]).
    id: u64,
    /// Per-kernel timing, when on ([`Device::set_profiling`]).
    profiler: Arc<Profiler>,
}

/// Source of [`Device::id`]s.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[derive(Clone)]
enum Backend {
    Emulated,
    Cuda(Arc<CudaBackend>),
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::Emulated => f.write_str("Device::Emulated"),
            Backend::Cuda(c) => write!(f, "Device::Cuda({})", c.index()),
        }
    }
}

impl Device {
    /// The host emulator: always available.
    pub fn emulated() -> Self {
        Self::with_backend(Backend::Emulated)
    }

    fn with_backend(backend: Backend) -> Self {
        Self {
            backend,
            ops: Arc::default(),
            pool: Arc::default(),
            profiler: Arc::default(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// An identity shared by this device's clones and by no other device opened in this
    /// process (data kept for one device is not valid on another).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The device for kernel tests: CUDA device 0 when the environment variable
    /// `GPROX_TEST_DEVICE` is `cuda` (panics when there is none: a GPU test run must not fall
    /// back silently), else the host emulator.
    pub fn for_tests() -> Self {
        match std::env::var("GPROX_TEST_DEVICE").as_deref() {
            Ok("cuda") => match Self::cuda(0) {
                Ok(d) => d,
                Err(e) => panic!("GPROX_TEST_DEVICE=cuda but CUDA device 0 cannot be used: {e}"),
            },
            Ok("emulated") | Ok("") | Err(_) => Self::emulated(),
            Ok(other) => panic!("GPROX_TEST_DEVICE={other}: expected `cuda` or `emulated`"),
        }
    }

    /// Operations performed so far on this device and its clones (launches, host
    /// synchronisations, bytes copied, allocations): subtract two snapshots for one query.
    pub fn ops(&self) -> DeviceOps {
        self.ops.snapshot()
    }

    /// Resident blocks per multiprocessor of the balanced traversal kernel at
    /// [`Device::block_size`] (`None` in the emulator).
    pub(crate) fn traversal_blocks_per_sm(&self) -> Option<u32> {
        match &self.backend {
            Backend::Emulated => None,
            Backend::Cuda(c) => c.traversal_blocks_per_sm(),
        }
    }

    /// Streaming multiprocessors (1 in the emulator).
    pub fn multiprocessors(&self) -> u32 {
        match &self.backend {
            Backend::Emulated => 1,
            Backend::Cuda(c) => c.multiprocessors(),
        }
    }

    /// CUDA device `index`, with the embedded fatbin loaded.
    ///
    /// Errors: [`CudaError::NoDriver`] without libcuda, [`CudaError::NoDevice`] without such a
    /// device, [`CudaError::NoDeviceCode`] when built without nvcc, [`CudaError::Driver`] else.
    pub fn cuda(index: usize) -> Result<Self> {
        Ok(Self::with_backend(Backend::Cuda(Arc::new(
            CudaBackend::new(index)?,
        ))))
    }

    /// Whether this is the host emulator.
    pub fn is_emulated(&self) -> bool {
        matches!(self.backend, Backend::Emulated)
    }

    /// Threads per block the pipelines use: 256 on a GPU, 32 in the emulator (each CUDA thread
    /// is an OS thread there).
    pub fn block_size(&self) -> u32 {
        match self.backend {
            Backend::Emulated => 32,
            Backend::Cuda(_) => 256,
        }
    }

    /// Elements per block of the radix sort: 1024 on a GPU, 128 in the emulator (so that small
    /// test inputs still span several tiles).
    pub fn radix_tile(&self) -> u32 {
        match self.backend {
            Backend::Emulated => 128,
            Backend::Cuda(_) => 1024,
        }
    }

    /// A zero-filled buffer of `len` elements.
    pub fn alloc_zeros<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let inner = match &self.backend {
            Backend::Emulated => Inner::Host(HostBox::new(vec![T::zeroed(); len])),
            Backend::Cuda(c) => Inner::Cuda(c.alloc_zeros(byte_len::<T>(len))?, c.clone()),
        };
        self.ops.alloc();
        Ok(DeviceBuffer {
            len,
            inner,
            ops: self.ops.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        match &self.backend {
            Backend::Emulated => {
                self.ops.alloc();
                self.ops.h2d(std::mem::size_of_val(data));
                Ok(DeviceBuffer {
                    len: data.len(),
                    inner: Inner::Host(HostBox::new(data.to_vec())),
                    ops: self.ops.clone(),
                    _t: PhantomData,
                })
            }
            Backend::Cuda(_) => {
                let mut b = self.alloc_zeros::<T>(data.len())?;
                b.write(data)?;
                Ok(b)
            }
        }
    }

    /// Launches `kernel` on a 1-D grid of `grid` blocks of `block` threads with `params`.
    /// Kernels on one device run in launch order; the emulator runs them synchronously.
    ///
    /// # Safety
    /// The device addresses in `params` must point to live buffers of this device that are
    /// large enough for what the kernel reads and writes with these parameters.
    pub unsafe fn launch<P: KernelParams>(
        &self,
        kernel: Kernel,
        grid: u32,
        block: u32,
        params: &P,
    ) -> Result<()> {
        if std::mem::size_of::<P>() != kernel.params_size() {
            return Err(CudaError::ParamsMismatch {
                kernel: kernel.name(),
                expected: kernel.params_size(),
                got: std::mem::size_of::<P>(),
            });
        }
        if grid == 0 || block == 0 || block > MAX_BLOCK {
            return Err(CudaError::InvalidLaunch {
                kernel: kernel.name(),
                grid,
                block,
            });
        }
        self.ops.launch();
        match &self.backend {
            Backend::Emulated => {
                // SAFETY: the params struct matches the kernel (size checked, layout tested) and
                // the caller vouches for the addresses in it.
                let run = || unsafe {
                    (kernel.emulator())(
                        grid,
                        block,
                        (params as *const P).cast::<std::ffi::c_void>(),
                    )
                };
                let rc = if self.profiler.is_on() {
                    self.profiler.host(kernel.name(), run)
                } else {
                    run()
                };
                if rc != 0 {
                    return Err(CudaError::InvalidLaunch {
                        kernel: kernel.name(),
                        grid,
                        block,
                    });
                }
                Ok(())
            }
            Backend::Cuda(c) if self.profiler.is_on() => {
                let start = c.record_event()?;
                // SAFETY: as above, forwarded to the caller's guarantee.
                unsafe { c.launch(kernel, grid, block, params)? };
                self.profiler
                    .events(kernel.name(), start, c.record_event()?);
                Ok(())
            }
            // SAFETY: as above, forwarded to the caller's guarantee.
            Backend::Cuda(c) => unsafe { c.launch(kernel, grid, block, params) },
        }
    }

    /// Waits for all launched work (a no-op in the emulator).
    pub fn synchronize(&self) -> Result<()> {
        self.ops.sync();
        match &self.backend {
            Backend::Emulated => Ok(()),
            Backend::Cuda(c) => c.synchronize(),
        }
    }

    /// Runs `f` between two CUDA events on this device's stream and returns its result with the
    /// milliseconds between the events (the GPU's clock: everything `f` launched, and the host
    /// work in between); `None` in the emulator, which has no device clock.
    ///
    /// ```
    /// use gprox_cuda::Device;
    /// let (sum, ms) = Device::emulated().time(|| 1 + 1).unwrap();
    /// assert_eq!((sum, ms), (2, None));
    /// ```
    pub fn time<R>(&self, f: impl FnOnce() -> R) -> Result<(R, Option<f64>)> {
        match &self.backend {
            Backend::Emulated => Ok((f(), None)),
            Backend::Cuda(c) => {
                let start = c.record_event()?;
                let r = f();
                let end = c.record_event()?;
                let ms = c.elapsed_ms(&start, &end)?;
                Ok((r, Some(ms)))
            }
        }
    }

    /// Turns the kernel profiler on or off for this device and its clones: while on, every
    /// launch is timed (GPU events around it, the host's clock in the emulator) until
    /// [`Device::take_profile`]. Profiling adds two event records to each launch.
    ///
    /// ```
    /// use gprox_cuda::Device;
    /// let d = Device::emulated();
    /// d.set_profiling(true);
    /// let _ = d.sort_codes(&[3, 1, 2]).unwrap();
    /// let profile = d.take_profile().unwrap();
    /// assert!(profile.iter().map(|k| k.launches).sum::<u64>() > 0);
    /// ```
    pub fn set_profiling(&self, on: bool) {
        self.profiler.set(on);
    }

    /// Per-kernel launches and summed milliseconds since profiling was turned on or last taken,
    /// in order of first launch (waits for the device to finish them); clears them.
    pub fn take_profile(&self) -> Result<Vec<KernelTime>> {
        self.profiler.take()
    }

    /// Copies `src` into the start of `dst` on the device (no host transfer; counted as a launch,
    /// the stream operation it is).
    pub fn copy_into<T: Pod>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        if src.len() > dst.len() {
            return Err(CudaError::LengthMismatch {
                device: dst.len(),
                host: src.len(),
            });
        }
        self.ops.launch();
        match (&src.inner, &mut dst.inner) {
            (Inner::Host(s), Inner::Host(d)) => {
                // SAFETY: two distinct live allocations (one is borrowed mutably), `src.len()`
                // Pod elements fit both.
                unsafe { std::ptr::copy_nonoverlapping(s.ptr.as_ptr(), d.ptr.as_ptr(), src.len) };
                Ok(())
            }
            (Inner::Cuda(s, c), Inner::Cuda(d, _)) => {
                c.copy_dtod(s, d, src.len * std::mem::size_of::<T>())
            }
            _ => Err(CudaError::LengthMismatch {
                device: dst.len(),
                host: src.len(),
            }),
        }
    }

    /// Page-locked host memory of `len` elements that kernels write directly (mapped into the
    /// device's address space): results reach the host without a copy, and the host reads them
    /// after one synchronisation. Contents start zeroed.
    pub fn alloc_mapped<T: Pod>(&self, len: usize) -> Result<MappedBuffer<T>> {
        let inner = match &self.backend {
            Backend::Emulated => MappedInner::Host(HostBox::new(vec![T::zeroed(); len.max(1)])),
            Backend::Cuda(c) => MappedInner::Cuda(c.alloc_mapped(byte_len::<T>(len))?),
        };
        self.ops.alloc();
        Ok(MappedBuffer {
            len,
            inner,
            ops: self.ops.clone(),
            _t: PhantomData,
        })
    }

    /// Blocks needed to cover `n` threads with [`Device::block_size`] (at least 1).
    pub fn blocks_for(&self, n: usize) -> u32 {
        n.div_ceil(self.block_size() as usize).max(1) as u32
    }
}

fn byte_len<T>(len: usize) -> usize {
    len.max(1) * std::mem::size_of::<T>().max(1)
}

/// Host storage of the emulator: a leaked `Box<[T]>` owned through a raw pointer, so kernels
/// may write through the address while Rust only holds `&self`.
struct HostBox<T> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T> HostBox<T> {
    fn new(v: Vec<T>) -> Self {
        let len = v.len();
        let raw = Box::into_raw(v.into_boxed_slice());
        // SAFETY: Box::into_raw never returns null.
        let ptr = unsafe { NonNull::new_unchecked(raw.cast::<T>()) };
        Self { ptr, len }
    }
}

impl<T> Drop for HostBox<T> {
    fn drop(&mut self) {
        // SAFETY: ptr/len come from Box::into_raw of a boxed slice of exactly len elements.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            )))
        };
    }
}

// SAFETY: HostBox owns its elements like a Box<[T]>; concurrent access goes through kernel
// launches, which the emulator serialises.
unsafe impl<T: Send> Send for HostBox<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for HostBox<T> {}

enum Inner<T> {
    Host(HostBox<T>),
    Cuda(cudarc::driver::CudaSlice<u8>, Arc<CudaBackend>),
}

/// A typed buffer in device memory (host memory for the emulator).
pub struct DeviceBuffer<T: Pod> {
    len: usize,
    inner: Inner<T>,
    ops: Arc<OpCounter>,
    _t: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer(len {}, at {:#x})",
            self.len,
            self.device_ptr()
        )
    }
}

impl<T: Pod> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of element 0, for a params struct.
    pub fn device_ptr(&self) -> u64 {
        match &self.inner {
            Inner::Host(h) => h.ptr.as_ptr() as usize as u64,
            Inner::Cuda(s, c) => c.device_ptr(s),
        }
    }

    /// Copies the buffer to the host.
    pub fn download(&self) -> Result<Vec<T>> {
        self.download_prefix(self.len)
    }

    /// Copies the first `n` elements to the host (`n` clamped to the length).
    pub fn download_prefix(&self, n: usize) -> Result<Vec<T>> {
        let n = n.min(self.len);
        self.ops.sync();
        self.ops.d2h(n * std::mem::size_of::<T>());
        match &self.inner {
            // SAFETY: no kernel runs (emulator launches are synchronous), the first n <= len
            // elements are initialised Pod values.
            Inner::Host(h) => Ok(unsafe { std::slice::from_raw_parts(h.ptr.as_ptr(), n) }.to_vec()),
            Inner::Cuda(s, c) => {
                let bytes = c.download(s, n * std::mem::size_of::<T>())?;
                let mut v = vec![T::zeroed(); n];
                bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(&bytes);
                Ok(v)
            }
        }
    }

    /// Overwrites the buffer with `data` (same length).
    pub fn write(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(CudaError::LengthMismatch {
                device: self.len,
                host: data.len(),
            });
        }
        self.write_prefix(data)
    }

    /// Overwrites the first `data.len()` elements (at most the length) with `data`.
    pub fn write_prefix(&mut self, data: &[T]) -> Result<()> {
        if data.len() > self.len {
            return Err(CudaError::LengthMismatch {
                device: self.len,
                host: data.len(),
            });
        }
        self.ops.h2d(std::mem::size_of_val(data));
        match &mut self.inner {
            Inner::Host(h) => {
                // SAFETY: exclusive access (&mut self), same length, Pod.
                unsafe { std::slice::from_raw_parts_mut(h.ptr.as_ptr(), data.len()) }
                    .copy_from_slice(data);
                Ok(())
            }
            Inner::Cuda(s, c) => c.write(s, bytemuck::cast_slice(data)),
        }
    }
}

enum MappedInner<T> {
    Host(HostBox<T>),
    Cuda(MappedHost),
}

/// Page-locked host memory that kernels write through its device address
/// ([`Device::alloc_mapped`]): the device delivers results straight to the host.
pub struct MappedBuffer<T: Pod> {
    len: usize,
    inner: MappedInner<T>,
    ops: Arc<OpCounter>,
    _t: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for MappedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedBuffer(len {})", self.len)
    }
}

impl<T: Pod> MappedBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of element 0, for a params struct.
    pub fn device_ptr(&self) -> u64 {
        match &self.inner {
            MappedInner::Host(h) => h.ptr.as_ptr() as usize as u64,
            MappedInner::Cuda(m) => m.device_ptr(),
        }
    }

    /// Reads elements `start..start + n` (clamped to the length), counted as bytes read back
    /// from the device. Call only after a [`Device::synchronize`] that follows the kernels
    /// writing them.
    pub fn read(&self, start: usize, n: usize) -> Vec<T> {
        // SAFETY: the copy is made before this call returns; no launch happens meanwhile.
        unsafe { self.view(start, n) }.to_vec()
    }

    /// Elements `start..start + n` (clamped to the length) in place, counted as bytes read back
    /// from the device: [`MappedBuffer::read`] without the copy.
    ///
    /// # Safety
    /// Call only after a [`Device::synchronize`] that follows the kernels writing them, and
    /// launch nothing that writes this buffer while the slice lives.
    pub(crate) unsafe fn view(&self, start: usize, n: usize) -> &[T] {
        let start = start.min(self.len);
        let n = n.min(self.len - start);
        self.ops.d2h(n * std::mem::size_of::<T>());
        let base: *const T = match &self.inner {
            MappedInner::Host(h) => h.ptr.as_ptr(),
            MappedInner::Cuda(m) => m.host_ptr().cast::<T>(),
        };
        // SAFETY: the allocation holds `len` Pod elements (zero-initialised, then written by
        // kernels that have finished: the caller synchronised), start + n <= len.
        unsafe { std::slice::from_raw_parts(base.add(start), n) }
    }
}
