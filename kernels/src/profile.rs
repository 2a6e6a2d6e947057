//! The kernel profiler: per-kernel time of the launches a [`crate::Device`] makes while
//! profiling is on ([`crate::Device::set_profiling`], [`crate::Device::take_profile`]). On a GPU
//! each launch is bracketed by two CUDA events (the device's clock: the kernel's execution, not
//! the host's enqueue), in the emulator by the host's clock. Off by default; when off a launch
//! costs one relaxed load more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use cudarc::driver::CudaEvent;

use crate::error::Result;

/// Launches of one kernel while profiling was on and their summed time.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    /// The kernel's name (`Kernel::name`).
    pub kernel: &'static str,
    /// Launches of it.
    pub launches: u64,
    /// Milliseconds summed over those launches (GPU events, or host clock in the emulator).
    pub ms: f64,
}

/// One profiled launch: its events on a GPU, its measured time in the emulator.
enum Mark {
    Events(&'static str, CudaEvent, CudaEvent),
    Host(&'static str, f64),
}

/// The profiler of a device and its clones.
#[derive(Default)]
pub(crate) struct Profiler {
    on: AtomicBool,
    marks: Mutex<Vec<Mark>>,
}

impl Profiler {
    pub(crate) fn set(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Times `launch` on the host's clock (the emulator runs kernels synchronously).
    pub(crate) fn host<R>(&self, kernel: &'static str, launch: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = launch();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        self.push(Mark::Host(kernel, ms));
        r
    }

    /// Records a launch bracketed by the events `start` and `end`.
    pub(crate) fn events(&self, kernel: &'static str, start: CudaEvent, end: CudaEvent) {
        self.push(Mark::Events(kernel, start, end));
    }

    fn push(&self, m: Mark) {
        // A poisoned lock only means another thread panicked while pushing; the marks are
        // still a valid list.
        self.marks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(m);
    }

    /// Per-kernel totals of the marks so far (waits for their events), in order of first
    /// launch; the marks are cleared.
    pub(crate) fn take(&self) -> Result<Vec<KernelTime>> {
        let marks = std::mem::take(
            &mut *self
                .marks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut out: Vec<KernelTime> = Vec::new();
        for m in marks {
            let (kernel, ms) = match m {
                Mark::Host(k, ms) => (k, ms),
                Mark::Events(k, start, end) => (
                    k,
                    f64::from(start.elapsed_ms(&end).map_err(|e| {
                        crate::error::CudaError::driver("cuEventElapsedTime", 0, e)
                    })?),
                ),
            };
            match out.iter_mut().find(|t| t.kernel == kernel) {
                Some(t) => {
                    t.launches += 1;
                    t.ms += ms;
                }
                None => out.push(KernelTime {
                    kernel,
                    launches: 1,
                    ms,
                }),
            }
        }
        Ok(out)
    }
}
