//! The traversal on the device: [`Device::image_collide`], [`Device::image_self_collide`]
//! (`cuda/geometry_image.cu`), the leaf pairs sorted on the device into canonical order.

use gprox_query::geometry_image::traverse::quad_corners_intersect;
use gprox_query::geometry_image::{GeometryImage, Mode, TexelPair};

use super::{
    DeviceImage, ImageFace, ImageTraverseParams, ImageUndecided, COUNTERS, FRONTIER_CAPACITY,
    HEADER, SORT_COUNT,
};
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::lbvh::RadixJob;

/// Radix digit totals of a sort (8 passes of 256 digits).
const RADIX_TOTALS: usize = 8 * 256;

/// Undecided-pair records (exact mode) of the first query; grown when more come up.
const UNDECIDED_CAPACITY: u32 = 256;

/// Most node pairs the seed (`gprox_gi_init` with `step` > 0, one block) tests in place of the
/// first traversal steps: 4 096, the pairs of two 8 × 8-node levels — 16 per thread of a
/// 256-thread block. A collision traversal of two 512² images then takes six level steps
/// instead of nine.
const SEED_PAIRS: usize = 1 << 12;

/// Bits that hold every index below `n` (0 for `n <= 1`).
fn bits(n: usize) -> u32 {
    usize::BITS - n.saturating_sub(1).leading_zeros()
}

/// A leaf pair `(quad (i_a, j_a) of A, quad (i_b, j_b) of B)` as one sort key: the four
/// indices in that order from the high bits down, each field just wide enough for its image's
/// quads, so integer order is `TexelPair` order for fixed faces, in as few bytes (radix
/// passes) as the images allow: 5 for two 512 × 512 images (9 bits a field). Exact mode shifts
/// the fields up one bit: bit 0 marks a pair the device left undecided.
#[derive(Clone, Copy, Debug)]
struct KeyLayout {
    shift_ia: u32,
    shift_ja: u32,
    shift_ib: u32,
    total: u32,
    /// 1 in exact mode (the undecided bit below the fields), else 0.
    flag: u32,
}

impl KeyLayout {
    fn new(a: &DeviceImage, b: &DeviceImage, mode: Mode) -> Self {
        let ((wa, ha), (wb, hb)) = (a.sizes[0], b.sizes[0]);
        let shift_ib = bits(hb);
        let shift_ja = shift_ib + bits(wb);
        let shift_ia = shift_ja + bits(ha);
        Self {
            shift_ia,
            shift_ja,
            shift_ib,
            total: shift_ia + bits(wa),
            flag: u32::from(mode == Mode::Exact),
        }
    }

    /// 8-bit radix passes over the keys.
    fn passes(&self) -> u32 {
        (self.total + self.flag).div_ceil(8).max(1)
    }

    /// The quads `([i_a, j_a], [i_b, j_b])` of key `k`.
    fn quads(&self, k: u64) -> ([u32; 2], [u32; 2]) {
        let k = k >> self.flag;
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

/// What a traversal leaves on the host: the sorted keys as pairs of words (low, high) in the
/// mapped output, and in exact mode the corners of the pairs the device left undecided.
struct LeafPairs<'a> {
    words: &'a [u32],
    undecided: Vec<ImageUndecided>,
}

impl LeafPairs<'_> {
    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.words
            .chunks_exact(2)
            .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
    }

    fn stats(&self) -> ImageQueryStats {
        ImageQueryStats {
            returned: self.words.len() / 2,
            undecided: self.undecided.len(),
        }
    }
}

/// What a geometry-image query read back beyond its header (for tests and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageQueryStats {
    /// Leaf pairs read back (8 B each): every one in approximate mode, in exact mode those the
    /// device did not certify apart.
    pub returned: usize,
    /// Exact mode: pairs the device's filtered test left undecided, decided on the host from
    /// their corners (100 B each).
    pub undecided: usize,
}

/// Appends the sorted leaf pair keys to `out` as [`TexelPair`]s (already in order), straight
/// from the mapped output; in exact mode the pairs the device left undecided are kept only when
/// the CPU's exact test on their corners says they intersect.
fn append_texel_pairs(
    leaves: &LeafPairs,
    layout: KeyLayout,
    (face_a, face_b): (u32, u32),
    out: &mut Vec<TexelPair>,
) {
    let pair = |k: u64| {
        let (quad_a, quad_b) = layout.quads(k);
        TexelPair {
            face_a,
            quad_a,
            face_b,
            quad_b,
        }
    };
    // Room for all of them at once (a filtered extend would grow `out` step by step, and fresh
    // pages cost more than the conversion).
    if leaves.undecided.is_empty() {
        out.extend(leaves.keys().map(pair));
        return;
    }
    let mut keep = vec![true; leaves.words.len() / 2];
    for u in &leaves.undecided {
        let corners = |c: [[f32; 3]; 4]| c.map(glam::Vec3::from);
        keep[u.index as usize] = quad_corners_intersect(corners(u.a), corners(u.b));
    }
    out.reserve(keep.iter().filter(|&&k| k).count());
    out.extend(
        leaves
            .keys()
            .zip(&keep)
            .filter(|&(_, &k)| k)
            .map(|(k, _)| pair(k)),
    );
}

/// One traversal step on the host's side: parents' levels and which trees descend.
#[derive(Clone, Copy)]
struct Step {
    level_a: usize,
    level_b: usize,
    descend_a: bool,
    descend_b: bool,
}

impl Step {
    /// The levels of A and B this step's child pairs lie at.
    fn child_levels(&self) -> (usize, usize) {
        (
            self.level_a - usize::from(self.descend_a),
            self.level_b - usize::from(self.descend_b),
        )
    }
}

/// The steps of a traversal: every level step, and how many leading ones the seed replaces.
struct Steps {
    all: Vec<Step>,
    seeded: usize,
}

impl Device {
    /// Every pair of quads of `a` and `b` whose padded boxes overlap (approximate) or whose
    /// triangles intersect (exact), sorted: `gprox_query::geometry_image::collide_images` on the
    /// device. Each side is the image and its resident copy (updated to the same positions, or
    /// evaluated on the device from the image's surface; only the face id of the image is
    /// read). One host synchronisation (more only when a buffer outgrew its capacity); the pairs
    /// come back sorted. Exact mode tests the leaf pairs' triangles on the device with the
    /// filtered predicate and only the pairs it leaves undecided on the host, from the corners
    /// the device sends with them.
    pub fn image_collide(
        &self,
        a: (&GeometryImage, &DeviceImage),
        b: (&GeometryImage, &DeviceImage),
        mode: Mode,
    ) -> Result<Vec<TexelPair>> {
        Ok(self.image_collide_stats(a, b, mode)?.0)
    }

    /// [`Device::image_collide`] with what it read back.
    pub fn image_collide_stats(
        &self,
        a: (&GeometryImage, &DeviceImage),
        b: (&GeometryImage, &DeviceImage),
        mode: Mode,
    ) -> Result<(Vec<TexelPair>, ImageQueryStats)> {
        let mut pairs = Vec::new();
        let stats = self.image_collide_into(a, b, mode, &mut pairs)?;
        Ok((pairs, stats))
    }

    /// [`Device::image_collide`] appending to `out` (whose capacity a caller can keep from
    /// frame to frame: no allocation once it is large enough), with what it read back.
    pub fn image_collide_into(
        &self,
        a: (&GeometryImage, &DeviceImage),
        b: (&GeometryImage, &DeviceImage),
        mode: Mode,
        out: &mut Vec<TexelPair>,
    ) -> Result<ImageQueryStats> {
        let layout = KeyLayout::new(a.1, b.1, mode);
        let steps = collide_steps(a.1, b.1);
        self.image_traverse(a.1.face(), b.1.face(), &steps, None, layout, |leaves| {
            append_texel_pairs(&leaves, layout, (a.0.face, b.0.face), out);
            leaves.stats()
        })
    }

    /// The leaf pairs of [`Device::image_collide`] in approximate mode as sorted keys (quad
    /// indices packed as `KeyLayout` says): the device's whole part of the query.
    pub fn image_collide_keys(&self, a: &DeviceImage, b: &DeviceImage) -> Result<Vec<u64>> {
        let layout = KeyLayout::new(a, b, Mode::Approximate);
        let steps = collide_steps(a, b);
        self.image_traverse(a.face(), b.face(), &steps, None, layout, |leaves| {
            leaves.keys().collect()
        })
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
        Ok(self.image_self_collide_stats(img, mode, normal_test)?.0)
    }

    /// [`Device::image_self_collide`] with what it read back.
    pub fn image_self_collide_stats(
        &self,
        img: (&GeometryImage, &DeviceImage),
        mode: Mode,
        normal_test: bool,
    ) -> Result<(Vec<TexelPair>, ImageQueryStats)> {
        let top = img.1.levels() - 1;
        if top == 0 {
            return Ok((Vec::new(), ImageQueryStats::default()));
        }
        // No seed in self mode: its first levels need the pair order and normal test of the
        // step kernel.
        let steps = Steps {
            all: (1..=top)
                .rev()
                .map(|l| Step {
                    level_a: l,
                    level_b: l,
                    descend_a: true,
                    descend_b: true,
                })
                .collect(),
            seeded: 0,
        };
        let face = img.1.face();
        let layout = KeyLayout::new(img.1, img.1, mode);
        self.image_traverse(face, face, &steps, Some(normal_test), layout, |leaves| {
            let mut pairs = Vec::new();
            append_texel_pairs(&leaves, layout, (img.0.face, img.0.face), &mut pairs);
            (pairs, leaves.stats())
        })
    }

    /// Enqueues a whole traversal (`self_normal`: self mode and its normal test; exact mode
    /// when `layout` has the undecided bit) and the sort of its leaf pairs, growing the
    /// frontier or the records and rerunning after an overflow, and returns what `finish`
    /// makes of their sorted keys (read in place) and exact mode's undecided records.
    fn image_traverse<R>(
        &self,
        a: ImageFace,
        b: ImageFace,
        steps: &Steps,
        self_normal: Option<bool>,
        layout: KeyLayout,
        finish: impl FnOnce(LeafPairs<'_>) -> R,
    ) -> Result<R> {
        let exact = layout.flag != 0;
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
            let status = self
                .lease::<DeviceBuffer<u32>>("gi.sort_status", self.counted_sort_status(capacity))?;
            let totals = self.lease::<DeviceBuffer<u32>>("gi.totals", RADIX_TOTALS)?;
            let corner_capacity = if exact {
                self.hint("gi.undecided", UNDECIDED_CAPACITY).max(1)
            } else {
                0
            };
            let corners = if exact {
                Some(self.lease::<MappedBuffer<ImageUndecided>>(
                    "gi.corners",
                    corner_capacity as usize,
                )?)
            } else {
                None
            };
            let mut p = ImageTraverseParams {
                a,
                b,
                frontier_in: front[1].device_ptr(),
                frontier_out: front[0].device_ptr(),
                counters: counters.device_ptr(),
                out: out.device_ptr(),
                keys: keys[0].device_ptr(),
                totals: totals.device_ptr(),
                corners: corners.as_ref().map_or(0, |c| c.device_ptr()),
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
                exact: layout.flag,
                corner_capacity,
            };
            let block = self.block_size();
            let seeded = steps.seeded;
            if seeded > 0 {
                // The frontier before step `seeded`, tested, at the levels it reaches.
                let (la, lb) = steps.all[seeded - 1].child_levels();
                p.step = seeded as u32;
                p.frontier_out = front[seeded % 2].device_ptr();
                (p.level_a, p.level_b) = (la as u32, lb as u32);
            }
            // SAFETY (all launches): the faces' buffers are live resident images; the frontiers
            // hold `2 * capacity` words, the keys `capacity`, the counters COUNTERS, the totals
            // RADIX_TOTALS, the mapped output HEADER + 2 * capacity, the corner records
            // `corner_capacity`; the kernels write no further than these.
            unsafe { self.launch(Kernel::ImageInit, 1, block, &p)? };
            let grid = self.multiprocessors() * if self.is_emulated() { 4 } else { 8 };
            for (s, st) in steps.all.iter().enumerate().skip(seeded) {
                p.step = s as u32 + 1;
                p.frontier_in = front[s % 2].device_ptr();
                p.frontier_out = front[(s + 1) % 2].device_ptr();
                (p.level_a, p.level_b) = (st.level_a as u32, st.level_b as u32);
                (p.descend_a, p.descend_b) = (u32::from(st.descend_a), u32::from(st.descend_b));
                p.last = u32::from(s + 1 == steps.all.len());
                unsafe { self.launch(Kernel::ImageStep, grid, block, &p)? };
            }
            p.step = steps.all.len() as u32;
            p.frontier_in = front[steps.all.len() % 2].device_ptr();
            let leaf_kernel = if exact {
                Kernel::ImageExact
            } else {
                Kernel::ImageKeys
            };
            unsafe { self.launch(leaf_kernel, grid, block, &p)? };
            let sort = RadixJob {
                keys: [keys[0].device_ptr(), keys[1].device_ptr()],
                values: [values[0].device_ptr(), values[1].device_ptr()],
                count_at: counters.device_ptr() + 4 * SORT_COUNT as u64,
                capacity,
                passes: layout.passes(),
                status: status.device_ptr(),
                totals: totals.device_ptr(),
                // Approximate mode: the last pass writes the sorted keys straight into the
                // mapped output, after the header (gprox_gi_keys wrote it), so no output
                // kernel runs; exact mode's output kernel also reads the keys for the corners.
                final_keys: if exact {
                    0
                } else {
                    out.device_ptr() + 4 * HEADER as u64
                },
            };
            self.sort_counted(&sort)?;
            if exact {
                p.keys = sort.keys[(sort.passes % 2) as usize];
                unsafe { self.launch(Kernel::ImageOut, grid, block, &p)? };
            }
            self.synchronize()?;
            let header = out.read(0, HEADER);
            if header[1] != 0 {
                let needed = header[2].max(header[0]);
                self.set_hint("gi.capacity", needed.max(capacity.saturating_mul(2)));
                continue;
            }
            if header[3] > corner_capacity {
                self.set_hint(
                    "gi.undecided",
                    header[3].max(corner_capacity.saturating_mul(2)),
                );
                continue;
            }
            let n = header[0] as usize;
            let undecided = corners.map_or_else(Vec::new, |c| c.read(0, header[3] as usize));
            // SAFETY: synchronised after the kernel that wrote the words (the last radix pass,
            // or exact mode's output kernel); nothing is launched while `finish` reads them.
            let words = unsafe { out.view(HEADER, 2 * n) };
            return Ok(finish(LeafPairs { words, undecided }));
        }
    }
}

/// The steps of a traversal of `a` against `b`: the deeper tree descends alone until both have
/// as many levels left, then both together. The seed replaces the most leading steps after
/// which every node pair of the levels reached numbers at most [`SEED_PAIRS`], keeping the last
/// step (the leaf pairs) for the step kernel.
fn collide_steps(a: &DeviceImage, b: &DeviceImage) -> Steps {
    let (mut la, mut lb) = (a.levels() - 1, b.levels() - 1);
    let mut all = Vec::new();
    while la > 0 || lb > 0 {
        let (da, db) = (la > 0 && la >= lb, lb > 0 && lb >= la);
        all.push(Step {
            level_a: la,
            level_b: lb,
            descend_a: da,
            descend_b: db,
        });
        la -= usize::from(da);
        lb -= usize::from(db);
    }
    let nodes = |img: &DeviceImage, l: usize| img.sizes[l].0 * img.sizes[l].1;
    let seeded = all[..all.len().saturating_sub(1)]
        .iter()
        .take_while(|st| {
            let (la, lb) = st.child_levels();
            nodes(a, la) * nodes(b, lb) <= SEED_PAIRS
        })
        .count();
    Steps { all, seeded }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;
    use gprox_geometry::freeform::{NurbsSurface, ParamRect, TrimmedFace};
    use gprox_geometry::transform::Pose64;
    use gprox_query::geometry_image::{collide_images, GeometryImage, HierarchyImage, ImageSpec};

    use super::*;

    /// A flat unit square at height `z`, sampled on 65 × 65 texels.
    fn sheet(id: u32, z: f64) -> GeometryImage {
        let pts = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
            .map(|(x, y)| DVec3::new(x, y, z))
            .to_vec();
        let face = TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap());
        let spec = ImageSpec {
            rect: ParamRect::new(0.0, 1.0, 0.0, 1.0),
            width: 65,
            height: 65,
            eps: 1e-3,
            sigma: 1e-4,
            trim_tolerance: 0.5 / 64.0,
        };
        GeometryImage::from_spec(id, &face.unwrap(), &Pose64::IDENTITY, spec).unwrap()
    }

    /// A seeded traversal from a frontier capacity far below what it needs (the seed's own
    /// frontier already outgrows it: every node of the 8 × 8 level meets its neighbours on two
    /// coincident sheets): the overflow is flagged, the host grows the frontier and reruns, and
    /// no pair is lost.
    #[test]
    fn seed_overflow_grows_and_reruns() {
        let d = Device::emulated();
        let (a, b) = (sheet(0, 0.0), sheet(1, 1e-7));
        let (da, db) = (
            DeviceImage::new(&d, &a, false).unwrap(),
            DeviceImage::new(&d, &b, false).unwrap(),
        );
        let steps = collide_steps(&da, &db);
        assert!(
            steps.seeded > 0 && steps.seeded < steps.all.len(),
            "{} of {}",
            steps.seeded,
            steps.all.len()
        );
        d.set_hint("gi.capacity", 64);
        let before = d.ops();
        let dev = d
            .image_collide((&a, &da), (&b, &db), Mode::Approximate)
            .unwrap();
        let used = d.ops() - before;
        let (ha, hb) = (HierarchyImage::build(&a), HierarchyImage::build(&b));
        assert_eq!(dev, collide_images((&a, &ha), (&b, &hb), Mode::Approximate));
        assert!(used.syncs >= 2, "the seed overflowed first: {used:?}");
    }
}
