//! The narrow phase of mesh CCD: the elementary tests of candidate face pairs, whichever
//! traversal produced them (the CPU BVTT of [`super::mesh`], or the balanced GPU traversal of
//! `gprox_cuda`), so both backends run exactly the same code and give identical results.
//!
//! * **Ownership.** A vertex or an edge is tested only from the lowest face that contains it
//!   ([`Topology::owned_vertices`], [`Topology::owned_edges`]), so a feature pair `(x, y)` is
//!   run from exactly one face pair, `(owner(x), owner(y))`. That pair is a candidate whenever
//!   the two features can touch: the owners' boxes contain the features' boxes.
//! * **Self CCD** runs every vertex–face pair with the vertex not on the face and every
//!   edge–edge pair without a common endpoint, from adjacent face pairs (sharing a vertex)
//!   too: a vertex passing through a face of its own 2-ring is a contact.
//! * **Canonical point order.** Vertex–face: `[v, f0, f1, f2]` (face corners in face order);
//!   edge–edge: each edge with sorted endpoints, in self CCD the smaller edge first. The result
//!   does not depend on the candidates' order or orientation.
//! * **Filters** (certified, see the private `filter` module) before each solver run: one
//!   projection onto the centroid direction shared by all feature pairs of a face pair (cheap
//!   for the many adjacent pairs), then axis and closest-feature separation and the coplanarity
//!   test per feature pair.

use glam::{DVec3, Vec3};
use gprox_geometry::TriMesh;

use super::filter::{excluded, Projected};
use super::mesh::{Feature, FeatureToi, MeshCcd};
use super::{
    check_point, edge_edge_unchecked, vertex_face_unchecked, CcdError, CcdOptions, Undecided,
};
use crate::self_collide::Topology;

/// One mesh of a CCD query: faces and start positions (`mesh`), end positions (`end`, one per
/// vertex) and its topology (`Topology::new(mesh.faces(), mesh.vertex_count())`).
#[derive(Clone, Copy, Debug)]
pub struct CcdMesh<'a> {
    /// Faces and positions at `t = 0`.
    pub mesh: &'a TriMesh,
    /// Positions at `t = 1`.
    pub end: &'a [Vec3],
    /// Adjacency and feature ownership of `mesh`.
    pub topo: &'a Topology,
}

/// One moving mesh (validated: every coordinate finite; f32 values convert exactly to f64).
pub(crate) struct Moving<'a> {
    faces: &'a [[u32; 3]],
    start: &'a [Vec3],
    end: &'a [Vec3],
    topo: &'a Topology,
    /// Largest coordinate magnitude over both frames (rounding bounds of the filters).
    big: f64,
}

impl<'a> Moving<'a> {
    /// Checks `m` (topology size, vertex counts, finite coordinates) and converts it to f64.
    pub(crate) fn new(what: &'static str, m: &CcdMesh<'a>) -> Result<Self, CcdError> {
        let (mesh, end, topo) = (m.mesh, m.end, m.topo);
        if topo.face_count() != mesh.face_count() {
            return Err(CcdError::Mismatch {
                what: "topology",
                got: topo.face_count(),
                faces: mesh.face_count(),
            });
        }
        if end.len() != mesh.vertex_count() {
            return Err(CcdError::VertexCountMismatch {
                what,
                start: mesh.vertex_count(),
                end: end.len(),
            });
        }
        let start = mesh.positions();
        let mut big = 0.0f32;
        for (frame, pos) in [(0u8, start), (1, end)] {
            for (i, p) in pos.iter().enumerate() {
                if !p.is_finite() {
                    check_point(what, frame, i, p.as_dvec3())?;
                }
                big = big.max(p.abs().max_element());
            }
        }
        Ok(Self {
            faces: mesh.faces(),
            start,
            end,
            topo,
            big: big as f64,
        })
    }

    fn check_face(&self, what: &'static str, pair: usize, face: u32) -> Result<(), CcdError> {
        if (face as usize) < self.faces.len() {
            Ok(())
        } else {
            Err(CcdError::FaceIndex {
                what,
                pair,
                face,
                faces: self.faces.len(),
            })
        }
    }
}

/// Mesh CCD over given candidate face pairs: for each pair the vertex–face, face–vertex and
/// edge–edge tests of its owned features (see the module docs), behind certified filters, and
/// the contacts sorted by feature (one per feature, the earliest). `b = None`: self CCD of `a`
/// (`pairs` are unordered pairs of distinct faces of `a`; `[f, f]` is ignored); otherwise
/// `pairs` are `[face of a, face of b]`. For a complete result `pairs` must hold every pair of
/// faces (distinct, in self CCD) whose boxes are not separated on one axis, in the same order,
/// at both ends of the step — [`super::ccd_self_with_bvh`] and [`super::ccd_pair`] call this
/// after their traversal. Errors: a mesh fails [`super::ccd_self`]'s checks, or a face index
/// is out of range.
///
/// ```
/// use gprox_query::ccd::{ccd_candidates, CcdMesh, CcdOptions};
/// use gprox_query::self_collide::Topology;
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// // Two triangles sharing vertex 0; vertex 2 swings through the other triangle.
/// let p = vec![Vec3::ZERO, Vec3::X, Vec3::new(0.3, 0.3, 1.0), Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
/// let mesh = TriMesh::new(p.clone(), vec![[0, 1, 2], [0, 3, 4]]).unwrap();
/// let mut end = p.clone();
/// end[2] = Vec3::new(0.3, 0.5, -1.0);
/// let topo = Topology::new(mesh.faces(), mesh.vertex_count());
/// let m = CcdMesh { mesh: &mesh, end: &end, topo: &topo };
/// let r = ccd_candidates(&m, None, &[[0, 1]], &CcdOptions::default()).unwrap();
/// assert!(r.earliest.unwrap().t_lo <= 0.5);
/// ```
pub fn ccd_candidates(
    a: &CcdMesh<'_>,
    b: Option<&CcdMesh<'_>>,
    pairs: &[[u32; 2]],
    opts: &CcdOptions,
) -> Result<MeshCcd, CcdError> {
    match b {
        None => {
            let m = Moving::new("mesh", a)?;
            for (i, p) in pairs.iter().enumerate() {
                m.check_face("pair", i, p[0])?;
                m.check_face("pair", i, p[1])?;
            }
            Ok(run_pairs(&m, None, pairs, opts))
        }
        Some(b) => {
            let ma = Moving::new("mesh a", a)?;
            let mb = Moving::new("mesh b", b)?;
            for (i, p) in pairs.iter().enumerate() {
                ma.check_face("pair (face of a)", i, p[0])?;
                mb.check_face("pair (face of b)", i, p[1])?;
            }
            Ok(run_pairs(&ma, Some(&mb), pairs, opts))
        }
    }
}

/// [`ccd_candidates`] on validated meshes and in-range pairs.
pub(crate) fn run_pairs(
    a: &Moving,
    b: Option<&Moving>,
    pairs: &[[u32; 2]],
    opts: &CcdOptions,
) -> MeshCcd {
    let mut narrow = Narrow::new(a, b, opts);
    for &[fa, fb] in pairs {
        narrow.pair(fa, fb);
    }
    narrow.finish(pairs.len())
}

/// The narrow phase, one candidate face pair at a time (faces already checked in range).
pub(crate) struct Narrow<'m, 'a> {
    a: &'m Moving<'a>,
    b: &'m Moving<'a>,
    same: bool,
    opts: CcdOptions,
    out: Vec<FeatureToi>,
    tests: usize,
}

impl<'m, 'a> Narrow<'m, 'a> {
    /// Narrow phase of self CCD of `a` (`b = None`) or of `a` against `b`.
    pub(crate) fn new(a: &'m Moving<'a>, b: Option<&'m Moving<'a>>, opts: &CcdOptions) -> Self {
        Self {
            a,
            b: b.unwrap_or(a),
            same: b.is_none(),
            opts: *opts,
            out: Vec::new(),
            tests: 0,
        }
    }

    /// Runs the elementary tests of candidate pair `(fa, fb)` (`fa == fb` in self CCD: none).
    #[inline]
    pub(crate) fn pair(&mut self, fa: u32, fb: u32) {
        if self.same && fa == fb {
            return;
        }
        let pair = FacePair::new(self.a, fa, self.b, fb);
        if !pair.may_have_jobs() {
            return;
        }
        let mut jobs = Jobs::default();
        if self.same {
            pair.self_jobs(&mut jobs);
        } else {
            pair.pair_jobs(&mut jobs);
        }
        if jobs.len == 0 {
            return;
        }
        pair.run(
            &jobs.list[..jobs.len],
            self.same,
            &self.opts,
            &mut self.out,
            &mut self.tests,
        );
    }

    /// The result, with `candidate_pairs` candidates seen.
    pub(crate) fn finish(self, candidate_pairs: usize) -> MeshCcd {
        finish(self.out, candidate_pairs, self.tests, self.opts.undecided)
    }
}

/// At most 15 jobs per face pair (6 vertex–face, 9 edge–edge).
struct Jobs {
    list: [Job; 15],
    len: usize,
}

impl Default for Jobs {
    fn default() -> Self {
        Self {
            list: [Job {
                slots: [0; 4],
                split: 0,
            }; 15],
            len: 0,
        }
    }
}

impl Jobs {
    #[inline]
    fn push(&mut self, job: Job) {
        // At most 6 + 9 pushes per face pair.
        self.list[self.len] = job;
        self.len += 1;
    }

    /// Writes `job` and keeps it only if `keep` (at most 6 + 9 calls per face pair, so the
    /// write stays in the list).
    #[inline]
    fn push_if(&mut self, job: Job, keep: bool) {
        self.list[self.len] = job;
        self.len += keep as usize;
    }
}

/// Next corner of a triangle (edge `k` runs from corner `k` to corner `NEXT[k]`).
const NEXT: [u8; 3] = [1, 2, 0];

/// One elementary test of a face pair as corner slots: slot `k < 3` is corner `k` of the first
/// face, `3 + k` corner `k` of the second. `split == 1`: vertex `slots[0]` against the face
/// `slots[1..]`; `split == 2`: edge `slots[..2]` (of the first face) against edge `slots[2..]`,
/// endpoints in face order until [`FacePair::canonical`] orders them for the solver.
#[derive(Clone, Copy)]
struct Job {
    slots: [u8; 4],
    split: u8,
}

/// A candidate face pair: its meshes, faces, corners and owned features.
struct FacePair<'m, 'a> {
    m: [&'m Moving<'a>; 2],
    f: [u32; 2],
    /// Vertex index of each corner slot (`3 * side + k`).
    c: [u32; 6],
    /// Owned vertex and edge bits of each side.
    ov: [u8; 2],
    oe: [u8; 2],
}

impl<'m, 'a> FacePair<'m, 'a> {
    #[inline]
    fn new(a: &'m Moving<'a>, fa: u32, b: &'m Moving<'a>, fb: u32) -> Self {
        let (ta, tb) = (a.faces[fa as usize], b.faces[fb as usize]);
        Self {
            m: [a, b],
            f: [fa, fb],
            c: [ta[0], ta[1], ta[2], tb[0], tb[1], tb[2]],
            ov: [
                a.topo.owned_vertices[fa as usize],
                b.topo.owned_vertices[fb as usize],
            ],
            oe: [
                a.topo.owned_edges[fa as usize],
                b.topo.owned_edges[fb as usize],
            ],
        }
    }

    /// Whether the pair may have jobs at all (owned vertices, or owned edges on both sides).
    #[inline]
    fn may_have_jobs(&self) -> bool {
        // One branch for the caller, none here: the outcome is hard to predict.
        ((self.ov[0] | self.ov[1]) != 0) | ((self.oe[0] != 0) & (self.oe[1] != 0))
    }

    /// Vertex index at corner slot `s`.
    #[inline]
    fn vertex(&self, s: u8) -> u32 {
        self.c[s as usize]
    }

    /// Self CCD jobs (both faces of one mesh, distinct): owned vertices against the other face
    /// when not on it, owned edges against owned edges without a common endpoint. Every
    /// possible job is written and kept only when it applies: no branch on the topology.
    fn self_jobs(&self, jobs: &mut Jobs) {
        let c = &self.c;
        for side in 0..2 {
            let o = 3 * (1 - side);
            for k in 0..3 {
                let s = 3 * side + k;
                let v = c[s];
                let keep = (self.ov[side] >> k) & 1 != 0;
                let keep = keep & (v != c[o]) & (v != c[o + 1]) & (v != c[o + 2]);
                let o = o as u8;
                jobs.push_if(
                    Job {
                        slots: [s as u8, o, o + 1, o + 2],
                        split: 1,
                    },
                    keep,
                );
            }
        }
        if self.oe[0] == 0 || self.oe[1] == 0 {
            return;
        }
        for ka in 0..3u8 {
            let ea = [ka, NEXT[ka as usize]];
            let va = ea.map(|s| c[s as usize]);
            for kb in 0..3u8 {
                let eb = [3 + kb, 3 + NEXT[kb as usize]];
                let vb = eb.map(|s| c[s as usize]);
                let keep = ((self.oe[0] >> ka) & (self.oe[1] >> kb) & 1) != 0;
                let keep = keep
                    & (va[0] != vb[0])
                    & (va[0] != vb[1])
                    & (va[1] != vb[0])
                    & (va[1] != vb[1]);
                jobs.push_if(
                    Job {
                        slots: [ea[0], ea[1], eb[0], eb[1]],
                        split: 2,
                    },
                    keep,
                );
            }
        }
    }

    /// Owned edges of side `side` as slot pairs (in face order), and how many.
    #[inline]
    fn edge_list(&self, side: usize) -> ([[u8; 2]; 3], usize) {
        let mut out = [[0u8; 2]; 3];
        let mut n = 0;
        let mut bits = self.oe[side];
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let o = 3 * side as u8;
            out[n] = [o + k as u8, o + NEXT[k]];
            n += 1;
        }
        (out, n)
    }

    /// `job` with its points in the solver's canonical order: each edge's endpoints in
    /// ascending vertex order and, in self CCD, the smaller edge first (vertex–face jobs are
    /// already canonical).
    #[inline]
    fn canonical(&self, job: &Job, same: bool) -> Job {
        if job.split == 1 {
            return *job;
        }
        let s = job.slots;
        let sorted = |x: u8, y: u8| {
            if self.c[x as usize] <= self.c[y as usize] {
                [x, y]
            } else {
                [y, x]
            }
        };
        let (ea, eb) = (sorted(s[0], s[1]), sorted(s[2], s[3]));
        let vertices = |e: [u8; 2]| e.map(|x| self.c[x as usize]);
        let slots = if same && vertices(eb) < vertices(ea) {
            [eb[0], eb[1], ea[0], ea[1]]
        } else {
            [ea[0], ea[1], eb[0], eb[1]]
        };
        Job { slots, split: 2 }
    }

    /// Two-mesh jobs: owned vertices of each face against the other face, owned edges against
    /// owned edges.
    fn pair_jobs(&self, jobs: &mut Jobs) {
        for side in 0..2 {
            let o = 3 * (1 - side) as u8;
            let mut bits = self.ov[side];
            while bits != 0 {
                let s = (3 * side) as u8 + bits.trailing_zeros() as u8;
                bits &= bits - 1;
                jobs.push(Job {
                    slots: [s, o, o + 1, o + 2],
                    split: 1,
                });
            }
        }
        if self.oe[0] == 0 || self.oe[1] == 0 {
            return;
        }
        let (ea, na) = self.edge_list(0);
        let (eb, nb) = self.edge_list(1);
        for ea in &ea[..na] {
            for eb in &eb[..nb] {
                jobs.push(Job {
                    slots: [ea[0], ea[1], eb[0], eb[1]],
                    split: 2,
                });
            }
        }
    }

    /// What a job reports: its feature pair and the faces it was run from.
    fn feature(&self, job: &Job, same: bool) -> (Feature, [u32; 2]) {
        let s = job.slots;
        let side = |x: u8| (x / 3) as usize;
        if job.split == 1 {
            let (v, fx, fy) = (self.vertex(s[0]), self.f[side(s[0])], self.f[side(s[1])]);
            if same || side(s[0]) == 0 {
                (
                    Feature::VertexFace {
                        vertex: v,
                        face: fy,
                    },
                    [fx, fy],
                )
            } else {
                (
                    Feature::FaceVertex {
                        face: fy,
                        vertex: v,
                    },
                    [fy, fx],
                )
            }
        } else {
            let a = [self.vertex(s[0]), self.vertex(s[1])];
            let b = [self.vertex(s[2]), self.vertex(s[3])];
            (
                Feature::EdgeEdge { a, b },
                [self.f[side(s[0])], self.f[side(s[2])]],
            )
        }
    }

    /// Runs the jobs: shared projection filter, per-feature filters, elementary solver.
    fn run(
        &self,
        jobs: &[Job],
        same: bool,
        opts: &CcdOptions,
        out: &mut Vec<FeatureToi>,
        tests: &mut usize,
    ) {
        let sep = opts.min_separation.max(0.0);
        let c0: [DVec3; 6] =
            std::array::from_fn(|k| self.m[k / 3].start[self.c[k] as usize].as_dvec3());
        let c1: [DVec3; 6] =
            std::array::from_fn(|k| self.m[k / 3].end[self.c[k] as usize].as_dvec3());
        let proj = Projected::new(&c0, &c1, sep, self.m[0].big.max(self.m[1].big));
        for job in jobs {
            let split = job.split as usize;
            if proj
                .as_ref()
                .is_some_and(|p| p.separated(&job.slots, split))
            {
                continue;
            }
            let job = &self.canonical(job, same);
            let start = job.slots.map(|s| c0[s as usize]);
            let end = job.slots.map(|s| c1[s as usize]);
            if excluded(&start, &end, split, sep) {
                continue;
            }
            *tests += 1;
            let toi = if split == 1 {
                vertex_face_unchecked(start, end, opts)
            } else {
                edge_edge_unchecked(start, end, opts)
            };
            if let Some(toi) = toi {
                let (feature, faces) = self.feature(job, same);
                out.push(FeatureToi {
                    feature,
                    toi,
                    faces,
                });
            }
        }
    }
}

/// A mesh CCD result from its contacts in any order (e.g. from a device): sorted by feature,
/// one contact per feature (the earliest `t_lo`, then the tightest `t_hi`), the undecided ones
/// listed apart (and, with [`Undecided::Apart`], only there), and the earliest overall, with
/// the counts of candidate face pairs and elementary tests that produced them.
pub fn finish(
    mut contacts: Vec<FeatureToi>,
    candidate_pairs: usize,
    tests: usize,
    policy: Undecided,
) -> MeshCcd {
    contacts.sort_by(|x, y| {
        x.feature
            .cmp(&y.feature)
            .then(x.toi.t_lo.total_cmp(&y.toi.t_lo))
            .then(x.toi.t_hi.total_cmp(&y.toi.t_hi))
            .then(x.faces.cmp(&y.faces))
    });
    contacts.dedup_by(|x, y| x.feature == y.feature);
    let undecided: Vec<FeatureToi> = contacts
        .iter()
        .filter(|c| !c.is_certified())
        .copied()
        .collect();
    if policy == Undecided::Apart {
        contacts.retain(|c| c.is_certified());
    }
    let earliest = contacts
        .iter()
        .map(|c| c.toi)
        .min_by(|x, y| x.t_lo.total_cmp(&y.t_lo).then(x.t_hi.total_cmp(&y.t_hi)));
    MeshCcd {
        contacts,
        undecided,
        earliest,
        candidate_pairs,
        elementary_tests: tests,
    }
}
