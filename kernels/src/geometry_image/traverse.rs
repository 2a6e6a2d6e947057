//! The traversal on the device: [`Device::image_collide`], [`Device::image_self_collide`]
//! (`cuda/geometry_image.cu`), the leaf pairs sorted on the device into canonical order.

use std::borrow::Cow;

use gprox_query::geometry_image::traverse::quads_intersect;
use gprox_query::geometry_image::{GeometryImage, Mode, TexelPair};

use super::{DeviceImage, ImageFace, ImageTraverseParams, COUNTERS, FRONTIER_CAPACITY, HEADER};
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::lbvh::RadixJob;

/// Radix digit totals of a sort (8 passes of 256 digits).
const RADIX_TOTALS: usize = 8 * 256;

/// Bits that hold every index below `n` (0 for `n <= 1`).
fn bits(n: usize) -> u32 {
    usize::BITS - n.saturating_sub(1).leading_zeros()
}

/// A leaf pair `(quad (i_a, j_a) of A, quad (i_b, j_b) of B)` as one sort key: the four
/// indices in that order from the high bits down, each field just wide enough for its image's
/// quads, so integer order is `TexelPair` order for fixed faces, in as few bytes (radix
/// passes) as the images allow: 5 for two 512 × 512 images (9 bits a field).
#[derive(Clone, Copy, Debug)]
struct KeyLayout {
    shift_ia: u32,
    shift_ja: u32,
    shift_ib: u32,
    total: u32,
}

impl KeyLayout {
    fn new(a: &DeviceImage, b: &DeviceImage) -> Self {
        let ((wa, ha), (wb, hb)) = (a.sizes[0], b.sizes[0]);
        let shift_ib = bits(hb);
        let shift_ja = shift_ib + bits(wb);
        let shift_ia = shift_ja + bits(ha);
        Self {
            shift_ia,
            shift_ja,
            shift_ib,
            total: shift_ia + bits(wa),
        }
    }

    /// 8-bit radix passes over the keys.
    fn passes(&self) -> u32 {
        self.total.div_ceil(8).max(1)
    }

    /// The quads `([i_a, j_a], [i_b, j_b])` of key `k`.
    fn quads(&self, k: u64) -> ([u32; 2], [u32; 2]) {
        let field = |lo: u32, hi: u32| ((k >> lo) & ((1u64 << (hi - lo)) - 1)) as u32;
        (
            [
                field(self.shift_ia, self.total),
                field(self.shift_ja, self.shift_ia),
            ],
            [field(self.shift_ib, self.shift_ja), field(0, self.shift_ib)],
        )
    }
}

/// The host image whose positions the device holds: `img` itself when they were uploaded from
/// it, else `img` with the device's positions read back (exact mode after
/// [`DeviceImage::evaluate`]).
fn host_image<'a>(img: &'a GeometryImage, dev: &DeviceImage) -> Result<Cow<'a, GeometryImage>> {
    if dev.host_positions {
        return Ok(Cow::Borrowed(img));
    }
    Ok(Cow::Owned(GeometryImage {
        face: img.face,
        spec: img.spec,
        positions: dev.download_positions()?,
        stencil: Vec::new(),
        quad_stencil: Vec::new(),
        pad: dev.pad,
    }))
}

/// Sorted leaf pair keys as [`TexelPair`]s (already in order), exact mode's triangle test on
/// the host.
fn texel_pairs(
    keys: Vec<u64>,
    layout: KeyLayout,
    a: (&GeometryImage, &DeviceImage),
    b: (&GeometryImage, &DeviceImage),
    mode: Mode,
) -> Result<Vec<TexelPair>> {
    let pairs = keys.into_iter().map(|k| {
        let (quad_a, quad_b) = layout.quads(k);
        TexelPair {
            face_a: a.0.face,
            quad_a,
            face_b: b.0.face,
            quad_b,
        }
    });
    if mode == Mode::Approximate {
        return Ok(pairs.collect());
    }
    let ha = host_image(a.0, a.1)?;
    let hb = if std::ptr::eq(a.1, b.1) {
        Cow::Borrowed(ha.as_ref())
    } else {
        host_image(b.0, b.1)?
    };
    Ok(pairs
        .filter(|t| quads_intersect(&ha, t.quad_a, &hb, t.quad_b))
        .collect())
}

/// One traversal step on the host's side: parents' levels and which trees descend.
#[derive(Clone, Copy)]
struct Step {
    level_a: usize,
    level_b: usize,
    descend_a: bool,
    descend_b: bool,
}

impl Device {
    /// Every pair of quads of `a` and `b` whose padded boxes overlap (approximate) or whose
    /// triangles intersect (exact), sorted: `gprox_query::geometry_image::collide_images` on the
    /// device. Each side is the image and its resident copy (updated to the same positions, or
    /// evaluated on the device from the image's surface). One host synchronisation (more only
    /// when a frontier outgrew its buffers); the pairs come back sorted.
    pub fn image_collide(
        &self,
        a: (&GeometryImage, &DeviceImage),
        b: (&GeometryImage, &DeviceImage),
        mode: Mode,
    ) -> Result<Vec<TexelPair>> {
        let keys = self.image_collide_keys(a.1, b.1)?;
        texel_pairs(keys, KeyLayout::new(a.1, b.1), a, b, mode)
    }

    /// The leaf pairs of [`Device::image_collide`] in approximate mode as sorted keys (quad
    /// indices packed as `KeyLayout` says): the device's whole part of the query.
    pub fn image_collide_keys(&self, a: &DeviceImage, b: &DeviceImage) -> Result<Vec<u64>> {
        let (mut la, mut lb) = (a.levels() - 1, b.levels() - 1);
        let mut steps = Vec::new();
        while la > 0 || lb > 0 {
            let (da, db) = (la > 0 && la >= lb, lb > 0 && lb >= la);
            steps.push(Step {
                level_a: la,
                level_b: lb,
                descend_a: da,
                descend_b: db,
            });
            la -= usize::from(da);
            lb -= usize::from(db);
        }
        self.image_traverse(a.face(), b.face(), &steps, None, KeyLayout::new(a, b))
    }

    /// Every pair of non-adjacent quads of one image whose padded boxes overlap (approximate)
    /// or whose triangles intersect (exact), sorted:
    /// `gprox_query::geometry_image::self_collide_image` on the device. `normal_test` reads
    /// the sign bytes of an image made with signs (without them it prunes nothing).
    pub fn image_self_collide(
        &self,
        img: (&GeometryImage, &DeviceImage),
        mode: Mode,
        normal_test: bool,
    ) -> Result<Vec<TexelPair>> {
        let top = img.1.levels() - 1;
        if top == 0 {
            return Ok(Vec::new());
        }
        let steps: Vec<Step> = (1..=top)
            .rev()
            .map(|l| Step {
                level_a: l,
                level_b: l,
                descend_a: true,
                descend_b: true,
            })
            .collect();
        let face = img.1.face();
        let layout = KeyLayout::new(img.1, img.1);
        let keys = self.image_traverse(face, face, &steps, Some(normal_test), layout)?;
        texel_pairs(keys, layout, img, img, mode)
    }

    /// Enqueues a whole traversal (`self_normal`: self mode and its normal test) and the sort
    /// of its leaf pairs, and returns their sorted keys, growing the frontier and rerunning
    /// after an overflow.
    fn image_traverse(
        &self,
        a: ImageFace,
        b: ImageFace,
        steps: &[Step],
        self_normal: Option<bool>,
        layout: KeyLayout,
    ) -> Result<Vec<u64>> {
        loop {
            let capacity = self.hint("gi.capacity", FRONTIER_CAPACITY).max(1);
            let cap = capacity as usize;
            let front = [
                self.lease::<DeviceBuffer<u32>>("gi.front0", 2 * cap)?,
                self.lease::<DeviceBuffer<u32>>("gi.front1", 2 * cap)?,
            ];
            let counters = self.lease::<DeviceBuffer<u32>>("gi.counters", COUNTERS)?;
            let out = self.lease::<MappedBuffer<u32>>("gi.out", HEADER + 2 * cap)?;
            let keys = [
                self.lease::<DeviceBuffer<u64>>("gi.keys0", cap)?,
                self.lease::<DeviceBuffer<u64>>("gi.keys1", cap)?,
            ];
            let values = [
                self.lease::<DeviceBuffer<u32>>("gi.values0", cap)?,
                self.lease::<DeviceBuffer<u32>>("gi.values1", cap)?,
            ];
            let histogram = self.lease::<DeviceBuffer<u32>>(
                "gi.histogram",
                self.counted_sort_histogram(capacity),
            )?;
            let totals = self.lease::<DeviceBuffer<u32>>("gi.totals", RADIX_TOTALS)?;
            let mut p = ImageTraverseParams {
                a,
                b,
                frontier_in: front[1].device_ptr(),
                frontier_out: front[0].device_ptr(),
                counters: counters.device_ptr(),
                out: out.device_ptr(),
                keys: keys[0].device_ptr(),
                totals: totals.device_ptr(),
                capacity,
                step: 0,
                level_a: 0,
                level_b: 0,
                descend_a: 0,
                descend_b: 0,
                self_mode: u32::from(self_normal.is_some()),
                normal_test: u32::from(self_normal == Some(true)),
                last: 0,
                shift_ia: layout.shift_ia,
                shift_ja: layout.shift_ja,
                shift_ib: layout.shift_ib,
            };
            let block = self.block_size();
            // SAFETY (all launches): the faces' buffers are live resident images; the frontiers
            // hold `2 * capacity` words, the keys `capacity`, the counters COUNTERS, the totals
            // RADIX_TOTALS, the mapped output HEADER + 2 * capacity; the kernels write no
            // further than these.
            unsafe { self.launch(Kernel::ImageInit, 1, block, &p)? };
            let grid = self.multiprocessors() * if self.is_emulated() { 4 } else { 8 };
            for (s, st) in steps.iter().enumerate() {
                p.step = s as u32 + 1;
                p.frontier_in = front[s % 2].device_ptr();
                p.frontier_out = front[(s + 1) % 2].device_ptr();
                (p.level_a, p.level_b) = (st.level_a as u32, st.level_b as u32);
                (p.descend_a, p.descend_b) = (u32::from(st.descend_a), u32::from(st.descend_b));
                p.last = u32::from(s + 1 == steps.len());
                unsafe { self.launch(Kernel::ImageStep, grid, block, &p)? };
            }
            p.step = steps.len() as u32;
            p.frontier_in = front[steps.len() % 2].device_ptr();
            unsafe { self.launch(Kernel::ImageKeys, grid, block, &p)? };
            let sort = RadixJob {
                keys: [keys[0].device_ptr(), keys[1].device_ptr()],
                values: [values[0].device_ptr(), values[1].device_ptr()],
                count_at: counters.device_ptr() + 4 * (COUNTERS as u64 - 1),
                capacity,
                passes: layout.passes(),
                histogram: histogram.device_ptr(),
                totals: totals.device_ptr(),
            };
            self.sort_counted(&sort)?;
            p.keys = sort.keys[(sort.passes % 2) as usize];
            unsafe { self.launch(Kernel::ImageOut, grid, block, &p)? };
            self.synchronize()?;
            let header = out.read(0, HEADER);
            if header[1] != 0 {
                let needed = header[2].max(header[0]);
                self.set_hint("gi.capacity", needed.max(capacity.saturating_mul(2)));
                continue;
            }
            let n = header[0] as usize;
            let words = out.read(HEADER, 2 * n);
            return Ok(words
                .chunks_exact(2)
                .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
                .collect());
        }
    }
}
