//! The device-op counter: what a query costs in launches, host synchronisations, bytes copied
//! each way and allocations. [`crate::Device`] counts every operation it performs, on a GPU and
//! in the emulator alike, so op budgets can be checked on machines without a GPU.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of device operations (cumulative on a [`crate::Device`]; subtract two snapshots for
/// one query).
///
/// What counts: every kernel launch; every point where the host waits for the device (an
/// explicit synchronisation, or a copy to the host, which waits for the work before it); bytes
/// copied host → device by uploads and writes; bytes the host reads back, through copies or from
/// host-mapped result memory the kernels wrote; device (and pinned host) allocations. Kernel
/// parameters travel with their launch and are not counted as copies.
///
/// ```
/// use gprox_cuda::Device;
/// let d = Device::emulated();
/// let before = d.ops();
/// let b = d.upload(&[1u32, 2, 3]).unwrap();
/// let _ = b.download().unwrap();
/// let used = d.ops() - before;
/// assert_eq!((used.allocations, used.h2d_bytes, used.d2h_bytes, used.syncs), (1, 12, 12, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceOps {
    /// Kernel launches.
    pub launches: u64,
    /// Host synchronisations (waits for the device).
    pub syncs: u64,
    /// Bytes copied host → device.
    pub h2d_bytes: u64,
    /// Bytes read back device → host.
    pub d2h_bytes: u64,
    /// Device and pinned-host allocations.
    pub allocations: u64,
}

impl std::ops::Sub for DeviceOps {
    type Output = DeviceOps;
    fn sub(self, o: DeviceOps) -> DeviceOps {
        DeviceOps {
            launches: self.launches - o.launches,
            syncs: self.syncs - o.syncs,
            h2d_bytes: self.h2d_bytes - o.h2d_bytes,
            d2h_bytes: self.d2h_bytes - o.d2h_bytes,
            allocations: self.allocations - o.allocations,
        }
    }
}

/// The live counters of a device (shared by its clones).
#[derive(Debug, Default)]
pub(crate) struct OpCounter {
    launches: AtomicU64,
    syncs: AtomicU64,
    h2d_bytes: AtomicU64,
    d2h_bytes: AtomicU64,
    allocations: AtomicU64,
}

impl OpCounter {
    pub(crate) fn launch(&self) {
        self.launches.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn sync(&self) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn h2d(&self, bytes: usize) {
        self.h2d_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }
    pub(crate) fn d2h(&self, bytes: usize) {
        self.d2h_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }
    pub(crate) fn alloc(&self) {
        self.allocations.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn snapshot(&self) -> DeviceOps {
        DeviceOps {
            launches: self.launches.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
            h2d_bytes: self.h2d_bytes.load(Ordering::Relaxed),
            d2h_bytes: self.d2h_bytes.load(Ordering::Relaxed),
            allocations: self.allocations.load(Ordering::Relaxed),
        }
    }
}
