//! The finishing kernels of a balanced traversal, enqueued behind its rounds before the one
//! synchronisation: the triangle-pair test of the leaf pairs, their compaction into host-mapped
//! memory with the counters in front (`pairs_out.cu`), the world's contact records
//! (`world.cu`), or the CCD narrow phase (`ccd.cu`).

use super::Traversal;
use crate::ccd_narrow::CcdFinish;
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::params::{
    PairsOutParams, TriPairParams, WorldContactsParams, BALANCE_COUNTERS, BC_RESULTS,
};

impl Device {
    /// Enqueues the finishing kernels of a traversal: the triangle-pair test of its leaf pairs
    /// (when it has triangles and no early out), their compaction into `mapped` (or, with
    /// `ccd`, the CCD narrow phase) and the header.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_traversal(
        &self,
        t: &Traversal,
        counters: &DeviceBuffer<u32>,
        results: &DeviceBuffer<u32>,
        status: Option<&DeviceBuffer<u32>>,
        mapped: &MappedBuffer<u32>,
        capacity: usize,
        ccd: Option<&CcdFinish>,
    ) -> Result<()> {
        let grid = self.blocks_for(capacity).min(self.finish_blocks());
        if let Some(f) = ccd {
            self.ccd_finish(f, counters.device_ptr(), results.device_ptr(), capacity)?;
            let header = PairsOutParams {
                counters: counters.device_ptr(),
                pairs: results.device_ptr(),
                status: 0,
                out: mapped.device_ptr(),
                capacity: capacity as u32,
                pad: 0,
            };
            // SAFETY: `mapped` holds the header.
            unsafe { self.launch(Kernel::PairsHeader, 1, BALANCE_COUNTERS as u32, &header)? };
            return Ok(());
        }
        if let Some(w) = t.world {
            let wc = WorldContactsParams {
                bodies: w.bodies,
                counters: counters.device_ptr(),
                pairs: results.device_ptr(),
                out: mapped.device_ptr(),
                count: w.count,
                capacity: capacity as u32,
                test: u32::from(w.test),
                pad: 0,
            };
            let header = PairsOutParams {
                counters: counters.device_ptr(),
                pairs: results.device_ptr(),
                status: 0,
                out: mapped.device_ptr(),
                capacity: capacity as u32,
                pad: 0,
            };
            // SAFETY: `mapped` holds the header and `capacity` records of 4 words; results
            // hold `capacity` pairs of world indices of the bodies in the table.
            unsafe {
                self.launch(Kernel::WorldContacts, grid, self.block_size(), &wc)?;
                self.launch(Kernel::PairsHeader, 1, BALANCE_COUNTERS as u32, &header)?;
            }
            return Ok(());
        }
        if let (Some(status), Some([a, b])) = (status, t.triangles) {
            let tp = TriPairParams {
                pose_a: a.pose,
                pose_b: b.pose,
                positions_a: a.positions,
                faces_a: a.faces,
                positions_b: b.positions,
                faces_b: b.faces,
                pairs: results.device_ptr(),
                status: status.device_ptr(),
                count_at: counters.device_ptr() + (BC_RESULTS * 4) as u64,
                count: capacity as u32,
                pad: 0,
            };
            // SAFETY: results and status hold `capacity` pairs; the kernel tests at most
            // min(counter, capacity) of them; the meshes are the caller's live buffers.
            unsafe { self.launch(Kernel::TriPair, grid, self.block_size(), &tp)? };
        }
        let po = PairsOutParams {
            counters: counters.device_ptr(),
            pairs: results.device_ptr(),
            status: status.map_or(0, |s| s.device_ptr()),
            out: mapped.device_ptr(),
            capacity: capacity as u32,
            pad: 0,
        };
        // SAFETY: `mapped` holds the header and `capacity` pairs; results (and status) hold
        // `capacity` entries.
        unsafe {
            self.launch(Kernel::PairsOut, grid, self.block_size(), &po)?;
            self.launch(Kernel::PairsHeader, 1, BALANCE_COUNTERS as u32, &po)?;
        }
        Ok(())
    }

    /// Blocks of grid-stride kernels over a traversal's results.
    pub(crate) fn finish_blocks(&self) -> u32 {
        if self.is_emulated() {
            4
        } else {
            self.multiprocessors() * 8
        }
    }
}
