//! The elementary CCD tests on the device (`kernels/cuda/ccd.cu`, `include/gprox/ccd.cuh`).
//!
//! The device runs the CPU's `gprox_query::ccd` certified pre-filters — mirrored function by
//! function in f64 (glam's operation order, no FMA, Rust's `min`/`max`) — and the per-axis
//! range test of the whole `(t, u, v)` domain, so every pair it rules out the CPU rules out
//! too. It decides only certified no-contact: every other pair comes back **undecided** and
//! the host runs the CPU test for it ([`gprox_query::ccd::vertex_face_toi`] /
//! [`gprox_query::ccd::edge_edge_toi`]), so the final answers — times of impact, their
//! [`gprox_query::ccd::CcdStatus`], separation bounds and witnesses — are the CPU's exactly.
//! (The CPU's search projects boxes onto directions from their geometry since issue #15; it is
//! not mirrored on the device.)
//!
//! * [`Device::ccd_elementary`] / [`Device::ccd_elementary_device`]: a batch of vertex–face /
//!   edge–edge queries (`gprox_ccd_elementary`).
//! * Mesh CCD (`Device::ccd_self`, `ccd_pair`, `ccd_self_resident`): after the balanced
//!   traversal, `gprox_ccd_pairs` expands every candidate face pair into its feature pairs as
//!   `gprox_query::ccd::ccd_candidates` does and runs the filters on the device; the feature
//!   pairs left are compacted into host-mapped memory behind a header, read after the
//!   traversal's one synchronisation, and finished by the CPU test.

use bytemuck::{Pod, Zeroable};
use gprox_geometry::glam::{DVec3, Vec3};
use gprox_geometry::TriMesh;
use gprox_query::ccd::candidates::finish;
use gprox_query::ccd::{
    edge_edge_toi, vertex_face_toi, CcdError, CcdOptions, Feature, FeatureToi, MeshCcd, Toi,
    MAX_COORDINATE,
};
use gprox_query::self_collide::Topology;

use crate::balance::{BalanceOptions, BalanceStats, Traversal};
use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::params::params;
use crate::pool::Poolable;

/// [`CcdResult::status`]: certified contact-free.
pub const CCD_FREE: u32 = 0;
/// [`CcdResult::status`]: contact at `[t_lo, t_hi]` (not produced since issue #15).
pub const CCD_CONTACT: u32 = 1;
/// [`CcdResult::status`]: not decided on the device: only the CPU test can answer.
pub const CCD_UNDECIDED: u32 = 2;
/// [`CcdQuery::kind`] / [`CcdRecord::kind`]: vertex–face.
pub const CCD_VERTEX_FACE: u32 = 1;
/// [`CcdRecord::kind`]: face of the first mesh against a vertex of the second.
pub const CCD_FACE_VERTEX: u32 = 2;
/// [`CcdQuery::kind`] / [`CcdRecord::kind`]: edge–edge.
pub const CCD_EDGE_EDGE: u32 = 3;
/// [`CcdRecord::kind`] flag: undecided on the device.
pub const CCD_RECORD_UNDECIDED: u32 = 16;
/// u32 words of the mapped header in front of the records.
pub const CCD_HEADER_WORDS: usize = 8;

/// One elementary query on the device (`CcdQuery`): points `[p, a, b, c]` (vertex–face) or
/// `[a0, a1, b0, b1]` (edge–edge) at `t = 0` and `t = 1`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CcdQuery {
    /// Points at `t = 0`.
    pub start: [[f64; 3]; 4],
    /// Points at `t = 1`.
    pub end: [[f64; 3]; 4],
    /// [`CCD_VERTEX_FACE`] or [`CCD_EDGE_EDGE`].
    pub kind: u32,
    /// Padding.
    pub pad: u32,
}

/// Outcome of one elementary query on the device (`CcdResult`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CcdResult {
    /// Lower bound of the time of impact ([`CCD_CONTACT`]).
    pub t_lo: f64,
    /// Upper end of the earliest box ([`CCD_CONTACT`]).
    pub t_hi: f64,
    /// [`CCD_FREE`], [`CCD_CONTACT`] or [`CCD_UNDECIDED`].
    pub status: u32,
    /// Padding.
    pub pad: u32,
}

/// One contact (or undecided feature pair) of mesh CCD as the device writes it (`CcdRecord`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CcdRecord {
    /// [`CCD_VERTEX_FACE`], [`CCD_FACE_VERTEX`] or [`CCD_EDGE_EDGE`], maybe
    /// `| CCD_RECORD_UNDECIDED`.
    pub kind: u32,
    /// The feature's vertices in the solver's order: `[vertex, face corners]` or
    /// `[a0, a1, b0, b1]`.
    pub v: [u32; 4],
    /// The face pair the test ran for (`FeatureToi::faces`).
    pub faces: [u32; 2],
    /// Padding.
    pub pad: u32,
    /// Lower bound of the time of impact.
    pub t_lo: f64,
    /// Upper end of the earliest box.
    pub t_hi: f64,
}

params!(
    /// `gprox_ccd_elementary`: `queries[i]` → `results[i]`.
    CcdElementaryParams {
        /// `const CcdQuery[count]`.
        queries: u64,
        /// `CcdResult[count]` (out).
        results: u64,
        /// [`CcdOptions::tolerance`].
        tolerance: f64,
        /// [`CcdOptions::min_separation`].
        min_separation: f64,
        /// [`CcdOptions::max_time_width`].
        max_time_width: f64,
        /// [`CcdOptions::max_checks`].
        max_checks: u64,
        /// Queries.
        count: u32,
        /// Padding.
        pad: u32,
    }
);

params!(
    /// `gprox_ccd_pairs` / `gprox_ccd_header`: the narrow phase of a CCD traversal.
    CcdPairsParams {
        /// `const u32[2 * capacity]`: the traversal's leaf pairs.
        pairs: u64,
        /// The traversal's counters.
        counters: u64,
        /// `u32[4]`: records, tests, undecided (zero between queries).
        ccd_counters: u64,
        /// Mapped: `u32[CCD_HEADER_WORDS]` header, then `CcdRecord[record_capacity]`.
        out: u64,
        /// `const f32[3 * vertices]`: mesh a at `t = 0`.
        a_start: u64,
        /// `const f32[3 * vertices]`: mesh a at `t = 1`.
        a_end: u64,
        /// `const u32[3 * faces]`.
        a_faces: u64,
        /// `const u8[faces]`: owned vertex bits | owned edge bits << 3.
        a_owned: u64,
        /// Mesh b at `t = 0` (mesh a in self CCD).
        b_start: u64,
        /// Mesh b at `t = 1`.
        b_end: u64,
        /// Faces of mesh b.
        b_faces: u64,
        /// Ownership of mesh b.
        b_owned: u64,
        /// Largest coordinate magnitude of both meshes at both ends.
        big: f64,
        /// [`CcdOptions::tolerance`].
        tolerance: f64,
        /// [`CcdOptions::min_separation`].
        min_separation: f64,
        /// [`CcdOptions::max_time_width`].
        max_time_width: f64,
        /// [`CcdOptions::max_checks`].
        max_checks: u64,
        /// Pairs the results buffer holds.
        capacity: u32,
        /// Records `out` holds.
        record_capacity: u32,
        /// Self CCD.
        same: u32,
        /// Padding.
        pad: u32,
    }
);

/// Which elementary test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementaryKind {
    /// [`gprox_query::ccd::vertex_face_toi`]: points `[p, a, b, c]`.
    VertexFace,
    /// [`gprox_query::ccd::edge_edge_toi`]: points `[a0, a1, b0, b1]`.
    EdgeEdge,
}

/// One elementary CCD query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementaryQuery {
    /// Which test.
    pub kind: ElementaryKind,
    /// Points at `t = 0`.
    pub start: [DVec3; 4],
    /// Points at `t = 1`.
    pub end: [DVec3; 4],
}

/// What the device decided for one elementary query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceToi {
    /// Certified contact-free (the CPU says `None`).
    Free,
    /// Not decided on the device: only the CPU test can answer (it may say `None` too).
    Undecided,
}

impl ElementaryQuery {
    /// The CPU's answer.
    pub fn cpu(&self, opts: &CcdOptions) -> std::result::Result<Option<Toi>, CcdError> {
        match self.kind {
            ElementaryKind::VertexFace => vertex_face_toi(self.start, self.end, opts),
            ElementaryKind::EdgeEdge => edge_edge_toi(self.start, self.end, opts),
        }
    }

    /// The CPU's input check (finite, within `±MAX_COORDINATE`).
    fn check(&self) -> std::result::Result<(), CcdError> {
        let what = match self.kind {
            ElementaryKind::VertexFace => "vertex-face",
            ElementaryKind::EdgeEdge => "edge-edge",
        };
        for i in 0..4 {
            for (frame, p) in [(0u8, self.start[i]), (1, self.end[i])] {
                if !(p.is_finite() && p.abs().max_element() <= MAX_COORDINATE) {
                    return Err(CcdError::NonFinite {
                        what,
                        frame,
                        index: i,
                        value: p.to_array(),
                    });
                }
            }
        }
        Ok(())
    }
}

impl Device {
    /// Runs elementary CCD queries on the device (`gprox_ccd_elementary`) and returns what it
    /// decided: [`DeviceToi::Free`] where the CPU says `None` too, [`DeviceToi::Undecided`]
    /// where only the CPU test can answer.
    /// Errors: a point is not finite or beyond `±MAX_COORDINATE` (as the CPU).
    pub fn ccd_elementary_device(
        &self,
        queries: &[ElementaryQuery],
        opts: &CcdOptions,
    ) -> Result<Vec<DeviceToi>> {
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let count =
            u32::try_from(queries.len()).map_err(|_| crate::error::CudaError::TooLarge {
                what: "ccd queries",
                count: queries.len(),
                max: u32::MAX as usize,
            })?;
        let mut packed = Vec::with_capacity(queries.len());
        for q in queries {
            q.check()?;
            packed.push(CcdQuery {
                start: q.start.map(|p| p.to_array()),
                end: q.end.map(|p| p.to_array()),
                kind: match q.kind {
                    ElementaryKind::VertexFace => CCD_VERTEX_FACE,
                    ElementaryKind::EdgeEdge => CCD_EDGE_EDGE,
                },
                pad: 0,
            });
        }
        let input = self.upload(&packed)?;
        let output = self.alloc_zeros::<CcdResult>(queries.len())?;
        let p = CcdElementaryParams {
            queries: input.device_ptr(),
            results: output.device_ptr(),
            tolerance: opts.tolerance,
            min_separation: opts.min_separation,
            max_time_width: opts.max_time_width,
            max_checks: opts.max_checks as u64,
            count,
            pad: 0,
        };
        let grid = self.blocks_for(queries.len()).min(self.finish_blocks());
        // SAFETY: `input` holds `count` queries, `output` `count` results.
        unsafe { self.launch(Kernel::CcdElementary, grid, self.block_size(), &p)? };
        let out = output.download()?;
        Ok(out
            .iter()
            .map(|r| match r.status {
                CCD_FREE => DeviceToi::Free,
                _ => DeviceToi::Undecided,
            })
            .collect())
    }

    /// Elementary CCD queries on the device, the undecided ones finished by the CPU test: the
    /// answers of [`gprox_query::ccd::vertex_face_toi`] / [`gprox_query::ccd::edge_edge_toi`].
    pub fn ccd_elementary(
        &self,
        queries: &[ElementaryQuery],
        opts: &CcdOptions,
    ) -> Result<Vec<Option<Toi>>> {
        let raw = self.ccd_elementary_device(queries, opts)?;
        raw.iter()
            .zip(queries)
            .map(|(r, q)| match r {
                DeviceToi::Free => Ok(None),
                DeviceToi::Undecided => Ok(q.cpu(opts)?),
            })
            .collect()
    }
}

/// A mesh's ownership bits on the device, with the host copy they were uploaded from (pooled:
/// a query whose topology is unchanged uploads nothing).
pub(crate) struct OwnedBits {
    host: Vec<u8>,
    dev: DeviceBuffer<u8>,
}

impl Poolable for OwnedBits {
    fn capacity(&self) -> usize {
        self.dev.len()
    }
    fn allocate(device: &Device, len: usize) -> Result<Self> {
        Ok(Self {
            host: Vec::new(),
            dev: device.alloc_zeros(len)?,
        })
    }
}

/// One mesh of a device CCD query: its host copy (undecided tests, bounds) and the device
/// addresses of its positions at both ends and its faces.
#[derive(Clone, Copy)]
pub(crate) struct NarrowMesh<'a> {
    pub mesh: &'a TriMesh,
    pub end: &'a [Vec3],
    pub topo: &'a Topology,
    pub start_ptr: u64,
    pub end_ptr: u64,
    pub faces_ptr: u64,
}

impl NarrowMesh<'_> {
    /// `Moving::big` of `gprox_query::ccd::candidates`: the largest coordinate magnitude.
    fn big(&self) -> f64 {
        let mut big = 0.0f32;
        for pos in [self.mesh.positions(), self.end] {
            for p in pos {
                big = big.max(p.abs().max_element());
            }
        }
        big as f64
    }

    /// Vertex `v` at both ends.
    fn point(&self, v: u32) -> (DVec3, DVec3) {
        let v = v as usize;
        (self.mesh.positions()[v].as_dvec3(), self.end[v].as_dvec3())
    }
}

/// The narrow phase the traversal's finish enqueues in place of the pair compaction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CcdFinish {
    /// Everything but `pairs`, `counters` and `capacity` (the traversal's).
    pub params: CcdPairsParams,
}

impl Device {
    /// Enqueues the narrow phase of a finished traversal (leaf pairs in `results`, counters in
    /// `counters`) and its header.
    pub(crate) fn ccd_finish(
        &self,
        f: &CcdFinish,
        counters: u64,
        results: u64,
        capacity: usize,
    ) -> Result<()> {
        let p = CcdPairsParams {
            pairs: results,
            counters,
            capacity: capacity as u32,
            ..f.params
        };
        let grid = self.blocks_for(capacity).min(self.finish_blocks());
        // SAFETY: results hold `capacity` pairs of faces of the meshes in `f` (the kernel reads
        // at most min(counter, capacity)); `out` holds the header and `record_capacity`
        // records, `ccd_counters` 4 words.
        unsafe {
            self.launch(Kernel::CcdPairs, grid, self.block_size(), &p)?;
            self.launch(Kernel::CcdHeader, 1, CCD_HEADER_WORDS as u32, &p)?;
        }
        Ok(())
    }

    /// Mesh CCD on the device: the traversal `t` over the CCD node boxes of `a` (and `b`), the
    /// narrow phase of its candidates on the device, contacts back in mapped memory after one
    /// synchronisation (a second only when the record buffer must grow). `b = None`: self CCD.
    pub(crate) fn ccd_narrow(
        &self,
        t: &Traversal,
        a: &NarrowMesh<'_>,
        b: Option<&NarrowMesh<'_>>,
        ccd: &CcdOptions,
        opts: &BalanceOptions,
    ) -> Result<(MeshCcd, BalanceStats)> {
        let same = b.is_none();
        let bm = b.copied().unwrap_or(*a);
        let owned_a = self.owned_bits("ccd.owned.a", a.topo)?;
        let owned_b = match b {
            Some(b) => Some(self.owned_bits("ccd.owned.b", b.topo)?),
            None => None,
        };
        let big = if same { a.big() } else { a.big().max(bm.big()) };
        let counters = self.lease::<DeviceBuffer<u32>>("ccd.counters", 4)?;
        let mut capacity = self.hint(HINT_RECORDS, 1024).max(1) as usize;
        let mut stats = BalanceStats::default();
        loop {
            let mapped = self.lease::<MappedBuffer<u64>>(
                "ccd.out",
                CCD_HEADER_WORDS / 2 + RECORD_WORDS * capacity,
            )?;
            let params = CcdPairsParams {
                pairs: 0,
                counters: 0,
                ccd_counters: counters.device_ptr(),
                out: mapped.device_ptr(),
                a_start: a.start_ptr,
                a_end: a.end_ptr,
                a_faces: a.faces_ptr,
                a_owned: owned_a.dev.device_ptr(),
                b_start: bm.start_ptr,
                b_end: bm.end_ptr,
                b_faces: bm.faces_ptr,
                b_owned: owned_b
                    .as_ref()
                    .map_or(owned_a.dev.device_ptr(), |o| o.dev.device_ptr()),
                big,
                tolerance: ccd.tolerance,
                min_separation: ccd.min_separation,
                max_time_width: ccd.max_time_width,
                max_checks: ccd.max_checks as u64,
                capacity: 0,
                record_capacity: u32::try_from(capacity).unwrap_or(u32::MAX),
                same: u32::from(same),
                pad: 0,
            };
            let out = self.run_traversal_with(t, opts, Some(&CcdFinish { params }))?;
            add_stats(&mut stats, &out.stats);
            if out.stats.syncs == 0 {
                // Nothing to traverse: no candidates.
                return Ok((finish(Vec::new(), 0, 0, ccd.undecided), stats));
            }
            let header: Vec<u32> =
                bytemuck::cast_slice::<u64, u32>(&mapped.read(0, CCD_HEADER_WORDS / 2)).to_vec();
            let (records, tests) = (header[0] as usize, header[1] as usize);
            if records > capacity {
                // The records overflowed (the counter kept counting): grow and rerun.
                capacity = records + records / 4;
                self.set_hint(HINT_RECORDS, capacity as u32);
                continue;
            }
            let words = mapped.read(CCD_HEADER_WORDS / 2, RECORD_WORDS * records);
            let recs: &[CcdRecord] = bytemuck::cast_slice(&words);
            let mut contacts = Vec::with_capacity(recs.len());
            for r in recs {
                if let Some(c) = contact(r, a, &bm, same, ccd)? {
                    contacts.push(c);
                }
            }
            return Ok((
                finish(
                    contacts,
                    out.stats.leaf_pairs as usize,
                    tests,
                    ccd.undecided,
                ),
                stats,
            ));
        }
    }

    /// The pooled device copy of `topo`'s ownership bits (uploaded only when they changed).
    fn owned_bits(
        &self,
        name: &'static str,
        topo: &Topology,
    ) -> Result<crate::pool::Lease<OwnedBits>> {
        let packed: Vec<u8> = topo
            .owned_vertices
            .iter()
            .zip(&topo.owned_edges)
            .map(|(&v, &e)| (v & 7) | ((e & 7) << 3))
            .collect();
        let mut bits = self.lease::<OwnedBits>(name, packed.len())?;
        if bits.host != packed {
            bits.dev.write_prefix(&packed)?;
            bits.host = packed;
        }
        Ok(bits)
    }
}

/// Name of the pool's remembered record capacity.
const HINT_RECORDS: &str = "ccd.hint.records";
/// u64 words of one record.
const RECORD_WORDS: usize = std::mem::size_of::<CcdRecord>() / 8;

fn add_stats(total: &mut BalanceStats, s: &BalanceStats) {
    total.rounds += s.rounds;
    total.spilled += s.spilled;
    total.processed += s.processed;
    total.empty_exits += s.empty_exits;
    total.full_exits += s.full_exits;
    total.threshold_exits += s.threshold_exits;
    total.spread_exits += s.spread_exits;
    total.max_remaining = total.max_remaining.max(s.max_remaining);
    total.leaf_pairs = s.leaf_pairs;
    total.result_reruns += s.result_reruns;
    total.queue_reruns += s.queue_reruns;
    total.syncs += s.syncs;
}

/// The contact of one record: the CPU test's answer for its feature pair (the device decides
/// only certified no-contact, which it does not record).
fn contact(
    r: &CcdRecord,
    a: &NarrowMesh<'_>,
    b: &NarrowMesh<'_>,
    same: bool,
    ccd: &CcdOptions,
) -> Result<Option<FeatureToi>> {
    let kind = r.kind & !CCD_RECORD_UNDECIDED;
    let feature = match kind {
        CCD_VERTEX_FACE => Feature::VertexFace {
            vertex: r.v[0],
            face: r.faces[1],
        },
        CCD_FACE_VERTEX => Feature::FaceVertex {
            face: r.faces[0],
            vertex: r.v[0],
        },
        _ => Feature::EdgeEdge {
            a: [r.v[0], r.v[1]],
            b: [r.v[2], r.v[3]],
        },
    };
    // Which mesh each point comes from: vertex–face: the vertex's, then the face's.
    let (first, second, split) = match kind {
        CCD_VERTEX_FACE if same => (a, a, 1),
        CCD_VERTEX_FACE => (a, b, 1),
        CCD_FACE_VERTEX => (b, a, 1),
        _ if same => (a, a, 2),
        _ => (a, b, 2),
    };
    let mut start = [DVec3::ZERO; 4];
    let mut end = [DVec3::ZERO; 4];
    for k in 0..4 {
        let m = if k < split { first } else { second };
        (start[k], end[k]) = m.point(r.v[k]);
    }
    let cpu = if split == 1 {
        vertex_face_toi(start, end, ccd)?
    } else {
        edge_edge_toi(start, end, ccd)?
    };
    Ok(cpu.map(|toi| FeatureToi {
        feature,
        toi,
        faces: r.faces,
    }))
}

unsafe extern "C" {
    /// `sizeof` / `offsetof` of the CCD layouts as the emulator's C++ compiler sees them.
    fn gprox_emu_ccd_layout(name: *const std::ffi::c_char) -> usize;
}

/// `sizeof(T)` or `offsetof(T,field)` of a CCD layout (`CcdQuery`, `CcdResult`, `CcdRecord`,
/// `CcdElementaryParams`, `CcdPairsParams`) from the C++ side of the emulator, by name;
/// `usize::MAX` for an unknown name.
pub fn emulator_layout(name: &str) -> usize {
    let Ok(c) = std::ffi::CString::new(name) else {
        return usize::MAX;
    };
    // SAFETY: reads a NUL-terminated string and returns a number.
    unsafe { gprox_emu_ccd_layout(c.as_ptr()) }
}
