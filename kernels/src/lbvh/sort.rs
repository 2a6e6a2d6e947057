//! The device radix sort of the LBVH build (spec step 4, `cuda/radix_sort.cu`): stable LSD over
//! u64 keys carrying u32 values, 8-bit digits, one launch counting every pass's digits and one
//! launch a pass (tile by ticket, decoupled look-back for the tile's starts, ranked scatter);
//! the CPU twin is `gprox_bvh::sort`.

use super::check_count;
use crate::device::{Device, DeviceBuffer, MAX_BLOCK};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::RadixParams;

/// Buckets of one radix pass (8-bit digits; `GPROX_RADIX_BUCKETS`).
const RADIX_BUCKETS: usize = 256;
/// 8-bit passes over a 64-bit key.
const RADIX_PASSES: u32 = 8;
/// Pass tickets in front of the look-back status words (`GPROX_RADIX_TICKETS`).
const RADIX_TICKETS: usize = 8;
/// Elements a sort takes at most: the look-back status words hold counts in 30 bits.
const MAX_ELEMENTS: usize = (1 << 30) - 1;
/// Most tiles of a sort whose count lies on the device, in the emulator.
const EMULATOR_COUNTED_TILES: u32 = 4;

/// Launch shape of the device radix sort ([`Device::sort_codes_with`], `cuda/radix_sort.cu`).
/// Results never depend on it: every valid shape gives the stable order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixOptions {
    /// Elements per block (at least 1).
    pub tile: u32,
    /// Threads per block: a multiple of 32 (warp operations), at most [`MAX_BLOCK`].
    pub block: u32,
}

impl RadixOptions {
    /// What [`Device::sort_codes`] and the LBVH build use on `device`:
    /// [`Device::radix_tile`] elements a tile, [`Device::block_size`] threads.
    pub fn default_for(device: &Device) -> Self {
        Self {
            tile: device.radix_tile(),
            block: device.block_size(),
        }
    }

    /// Checks the shape for `n` elements and returns the tiles (blocks of every kernel).
    fn check(&self, n: u32) -> Result<u32> {
        if self.tile == 0
            || self.block == 0
            || !self.block.is_multiple_of(32)
            || self.block > MAX_BLOCK
        {
            return Err(CudaError::InvalidLaunch {
                kernel: "gprox_radix_pass",
                grid: n.div_ceil(self.tile.max(1)),
                block: self.block,
            });
        }
        if n as usize > MAX_ELEMENTS {
            return Err(CudaError::TooLarge {
                what: "radix sort elements",
                count: n as usize,
                max: MAX_ELEMENTS,
            });
        }
        let tiles = n.div_ceil(self.tile).max(1);
        let status = status_words(tiles);
        if status > u32::MAX as usize {
            return Err(CudaError::TooLarge {
                what: "radix look-back status",
                count: status,
                max: u32::MAX as usize,
            });
        }
        Ok(tiles)
    }
}

/// Status words (u32) of a sort over `tiles` tiles: the tickets, then 256 per tile and pass,
/// for the most passes.
fn status_words(tiles: u32) -> usize {
    RADIX_TICKETS + RADIX_PASSES as usize * RADIX_BUCKETS * tiles as usize
}

/// One sort on buffers the caller owns (e.g. leased from the pool, so it allocates nothing):
/// the LBVH's ([`Device::sort_dev`], count on the host) or one whose count lies on the device
/// ([`Device::sort_counted`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RadixJob {
    /// Device addresses of two `u64[capacity]` key buffers: the input in `keys[0]`, the other
    /// scratch; the sorted keys end in `keys[passes % 2]`.
    pub keys: [u64; 2],
    /// The same for two `u32[capacity]` value buffers.
    pub values: [u64; 2],
    /// 0 (the count is `capacity`) or a `u32` on the device: the element count, at most
    /// `capacity` (written by an earlier kernel of the same stream).
    pub count_at: u64,
    /// Most elements.
    pub capacity: u32,
    /// 8-bit passes, 1 to 8: the keys' significant low bits rounded up to whole bytes (the
    /// higher bytes must be zero).
    pub passes: u32,
    /// `u32[8 + 8 * 256 * tiles]` status scratch (tickets and look-back; cleared by the sort).
    pub status: u64,
    /// `u32[8 * 256]`, zero before the sort (e.g. cleared by the kernel that counted).
    pub totals: u64,
    /// 0, or a `u64[capacity]` on the device (or host-mapped) where the last pass writes the
    /// sorted keys instead of `keys[passes % 2]` (e.g. a query's mapped output, so no copy
    /// kernel follows).
    pub final_keys: u64,
}

impl Device {
    /// Elements per tile of a [`RadixJob`] of `capacity`: [`Device::radix_tile`] on a GPU
    /// (tiles past the count exit at once); in the emulator at most
    /// [`EMULATOR_COUNTED_TILES`] tiles, since each emulated block costs a round of thread
    /// hand-offs even when it has nothing to do.
    fn counted_tile(&self, capacity: u32) -> u32 {
        let tile = self.radix_tile();
        if self.is_emulated() {
            tile.max(capacity.div_ceil(EMULATOR_COUNTED_TILES))
        } else {
            tile
        }
    }

    /// Status words (u32) a [`RadixJob`] of `capacity` elements needs.
    pub(crate) fn counted_sort_status(&self, capacity: u32) -> usize {
        status_words(capacity.div_ceil(self.counted_tile(capacity)).max(1))
    }

    /// The stable radix sort of keys whose count is on the device: `passes` passes over the
    /// low bytes, launched over the whole capacity (tiles past the count do nothing). Launches
    /// only: no synchronisation, no copy, no allocation.
    pub(crate) fn sort_counted(&self, s: &RadixJob) -> Result<()> {
        let opts = RadixOptions {
            tile: self.counted_tile(s.capacity),
            ..RadixOptions::default_for(self)
        };
        let tiles = opts.check(s.capacity.max(1))?;
        if !(1..=RADIX_PASSES).contains(&s.passes) {
            return Err(CudaError::InvalidLaunch {
                kernel: "gprox_radix_pass",
                grid: tiles,
                block: opts.block,
            });
        }
        self.run_passes(s, opts, tiles)
    }

    /// The sort `s` in launch shape `opts` over `tiles` tiles: the digit counts of every pass,
    /// then one launch a pass.
    fn run_passes(&self, s: &RadixJob, opts: RadixOptions, tiles: u32) -> Result<()> {
        let mut p = RadixParams {
            keys_in: s.keys[0],
            values_in: s.values[0],
            keys_out: s.keys[1],
            values_out: s.values[1],
            status: s.status,
            totals: s.totals,
            count_at: s.count_at,
            count: s.capacity,
            shift: 0,
            tile: opts.tile,
            tiles,
            passes: s.passes,
            pad: 0,
        };
        // SAFETY (all launches): the buffers hold `capacity` keys and values each, the status
        // `status_words(tiles)` words and the totals 8 * 256 (the callers' contract); a count
        // read from `count_at` is clamped to `capacity`; the block is a multiple of 32 (checked
        // by `RadixOptions::check`), as the kernels' warp operations need.
        unsafe { self.launch(Kernel::RadixDigits, tiles, opts.block, &p)? };
        for pass in 0..s.passes {
            let (src, dst) = ((pass % 2) as usize, ((pass + 1) % 2) as usize);
            (p.keys_in, p.values_in) = (s.keys[src], s.values[src]);
            (p.keys_out, p.values_out) = (s.keys[dst], s.values[dst]);
            p.shift = pass * 8;
            if pass + 1 == s.passes && s.final_keys != 0 {
                p.keys_out = s.final_keys;
            }
            unsafe { self.launch(Kernel::RadixPass, tiles, opts.block, &p)? };
        }
        Ok(())
    }

    /// Spec step 4 on the device: the stable radix sort of `codes` carrying their indices
    /// (`gprox_bvh::lbvh::sort_codes`): sorted codes and the primitive of each sorted slot.
    pub fn sort_codes(&self, codes: &[u64]) -> Result<(Vec<u64>, Vec<u32>)> {
        self.sort_codes_with(codes, RadixOptions::default_for(self))
    }

    /// [`Device::sort_codes`] with an explicit launch shape (tile, block, scan grid): the result
    /// is the same for every valid shape (for tests and tuning).
    ///
    /// ```
    /// use gprox_cuda::{lbvh::RadixOptions, Device};
    /// let d = Device::emulated();
    /// let opts = RadixOptions { tile: 3, block: 64 };
    /// let (codes, order) = d.sort_codes_with(&[5, 1, 5, 0], opts).unwrap();
    /// assert_eq!((codes, order), (vec![0, 1, 5, 5], vec![3, 1, 0, 2]));
    /// ```
    pub fn sort_codes_with(
        &self,
        codes: &[u64],
        opts: RadixOptions,
    ) -> Result<(Vec<u64>, Vec<u32>)> {
        let n = check_count("codes", codes.len())?;
        let mut keys = self.upload(codes)?;
        let idx: Vec<u32> = (0..n).collect();
        let mut values = self.upload(&idx)?;
        self.sort_dev_with(&mut keys, &mut values, n, opts)?;
        Ok((keys.download()?, values.download()?))
    }

    /// Sorts `(keys, values)` in place: 8 stable 8-bit passes, ping-ponging through scratch
    /// buffers (an even number of passes ends in the originals). Launches only: no host
    /// synchronisation, no copy.
    pub(crate) fn sort_dev(
        &self,
        keys: &mut DeviceBuffer<u64>,
        values: &mut DeviceBuffer<u32>,
        n: u32,
    ) -> Result<()> {
        self.sort_dev_with(keys, values, n, RadixOptions::default_for(self))
    }

    /// [`Device::sort_dev`] with an explicit launch shape (see `cuda/radix_sort.cu`).
    fn sort_dev_with(
        &self,
        keys: &mut DeviceBuffer<u64>,
        values: &mut DeviceBuffer<u32>,
        n: u32,
        opts: RadixOptions,
    ) -> Result<()> {
        let tiles = opts.check(n)?;
        for len in [keys.len(), values.len()] {
            if len < n as usize {
                return Err(CudaError::LengthMismatch {
                    device: len,
                    host: n as usize,
                });
            }
        }
        if n < 2 {
            return Ok(());
        }
        let tmp_keys = self.alloc_zeros::<u64>(n as usize)?;
        let tmp_values = self.alloc_zeros::<u32>(n as usize)?;
        let status = self.alloc_zeros::<u32>(status_words(tiles))?;
        // Digit counts by pass, added up by `gprox_radix_digits`: zero to start with.
        let totals = self.alloc_zeros::<u32>(RADIX_PASSES as usize * RADIX_BUCKETS)?;
        let sort = RadixJob {
            keys: [keys.device_ptr(), tmp_keys.device_ptr()],
            values: [values.device_ptr(), tmp_values.device_ptr()],
            count_at: 0,
            capacity: n,
            passes: RADIX_PASSES,
            status: status.device_ptr(),
            totals: totals.device_ptr(),
            final_keys: 0,
        };
        // An even number of passes ends in the caller's buffers.
        self.run_passes(&sort, opts, tiles)
    }
}
