//! CCD candidates on the device and their host finish.
//!
//! Node boxes at both ends of the step (face boxes at the start and end positions by the
//! `gprox_prim_boxes` kernel, then `gprox_refit` on the caller's tree: bit-identical to the
//! CPU's `dual_boxes`) → balanced BVTT traversal whose node test is "not separated on one axis,
//! in the same order, at both ends" → candidate triangle pairs, in the same set and orientation
//! as the CPU traversal of `gprox_query::ccd` over the same tree. The elementary tests are then
//! run on the host by the CPU's conservative solvers (`vertex_face_toi`, `edge_edge_toi`), each
//! feature pair from the same face pair as in `gprox_query::ccd::mesh` (feature ownership, and
//! in self CCD the canonical non-adjacent face pair), so every contact the CPU reports is found
//! with the same certified lower bound `t_lo` (a feature on a non-manifold edge is tested from
//! several face pairs; of equal `t_lo` the tightest interval is kept here, the first visited on
//! the CPU).

use gprox_bvh::{Bvh, BvhNode};
use gprox_geometry::glam::{DVec3, Vec3};
use gprox_geometry::TriMesh;
use gprox_query::ccd::{edge_edge_toi, vertex_face_toi, CcdOptions, Feature, FeatureToi, MeshCcd};
use gprox_query::self_collide::topology::{BAD_EDGE, NO_FACE};
use gprox_query::self_collide::{share_vertex, Topology};

use crate::balance::{BalanceOptions, BalanceStats, Traversal, NODE_BOX_STRIDE};
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::lbvh::DeviceMesh;
use crate::params::{BALANCE_DUAL, BALANCE_SELF};
use crate::self_collide::check_mesh_bvh;

/// One moving mesh of a CCD query: positions at the start (the mesh's), at the end, its tree.
#[derive(Clone, Copy, Debug)]
pub struct MovingMesh<'a> {
    /// Faces and start positions.
    pub mesh: &'a TriMesh,
    /// Positions at the end of the step, one per vertex.
    pub end: &'a [Vec3],
    /// An LBVH over the mesh's faces (only its topology is used: node boxes at both ends are
    /// recomputed), e.g. built from `gprox_bvh::swept::swept_triangle_aabbs`.
    pub bvh: &'a Bvh,
}

/// Node boxes of one moving mesh on the device (two refitted copies of its nodes).
struct DualNodes {
    start: DeviceBuffer<BvhNode>,
    end: DeviceBuffer<BvhNode>,
    leaves: u32,
}

fn check_moving(m: &MovingMesh<'_>, what: &'static str) -> Result<u32> {
    let n = check_mesh_bvh(m.mesh, m.bvh, what)?;
    if m.end.len() != m.mesh.vertex_count() {
        return Err(CudaError::VertexCountMismatch {
            what,
            got: m.end.len(),
            expected: m.mesh.vertex_count(),
        });
    }
    for (frame, pos) in [(0u8, m.mesh.positions()), (1, m.end)] {
        if let Some(index) = pos.iter().position(|p| !p.is_finite()) {
            return Err(CudaError::NonFinitePosition { what, frame, index });
        }
    }
    Ok(n)
}

impl Device {
    fn dual_nodes(&self, m: &MovingMesh<'_>, n: u32) -> Result<DualNodes> {
        let start_mesh = self.upload_mesh(m.mesh)?;
        let end_mesh = DeviceMesh {
            positions: self.upload(bytemuck::cast_slice::<Vec3, f32>(m.end))?,
            faces: self.upload(bytemuck::cast_slice::<[u32; 3], u32>(m.mesh.faces()))?,
            face_count: start_mesh.face_count,
        };
        let parents = self.upload(&m.bvh.parents)?;
        let start = self.upload(&m.bvh.nodes)?;
        let end = self.upload(&m.bvh.nodes)?;
        let boxes0 = self.prim_boxes_dev(&start_mesh)?;
        let boxes1 = self.prim_boxes_dev(&end_mesh)?;
        self.refit_dev(&start, &parents, &boxes0, n)?;
        self.refit_dev(&end, &parents, &boxes1, n)?;
        Ok(DualNodes {
            start,
            end,
            leaves: n,
        })
    }

    /// Candidate face pairs of self CCD: every unordered pair of distinct faces of `m` whose
    /// boxes are not separated on one axis in the same order at both ends of the step,
    /// oriented as the CPU's self traversal of the same tree reports them (the first face's
    /// leaf lies in the left subtree of the two leaves' common ancestor); sorted.
    pub fn ccd_self_candidates(
        &self,
        m: &MovingMesh<'_>,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let n = check_moving(m, "mesh")?;
        if n < 2 {
            return Ok((Vec::new(), BalanceStats::default()));
        }
        let d = self.dual_nodes(m, n)?;
        self.dual_traverse(&d, &d, BALANCE_SELF, opts)
    }

    /// Candidate face pairs `[face of a, face of b]` of two-mesh CCD (boxes not separated on
    /// one axis in the same order at both ends of the step); sorted.
    pub fn ccd_pair_candidates(
        &self,
        a: &MovingMesh<'_>,
        b: &MovingMesh<'_>,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let na = check_moving(a, "mesh a")?;
        let nb = check_moving(b, "mesh b")?;
        if na == 0 || nb == 0 {
            return Ok((Vec::new(), BalanceStats::default()));
        }
        let da = self.dual_nodes(a, na)?;
        let db = self.dual_nodes(b, nb)?;
        self.dual_traverse(&da, &db, 0, opts)
    }

    fn dual_traverse(
        &self,
        a: &DualNodes,
        b: &DualNodes,
        flags: u32,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let t = Traversal {
            nodes_a: a.start.device_ptr(),
            nodes_b: b.start.device_ptr(),
            boxes_a: [a.start.device_ptr(), a.end.device_ptr()],
            boxes_b: [b.start.device_ptr(), b.end.device_ptr()],
            box_stride: NODE_BOX_STRIDE,
            leaves_a: a.leaves,
            leaves_b: b.leaves,
            faces: 0,
            flags: flags | BALANCE_DUAL,
        };
        let (buf, count, stats) = self.balanced_traverse(&t, opts)?;
        let mut pairs = self.download_pairs(&buf, count)?;
        pairs.sort_unstable();
        Ok((pairs, stats))
    }

    /// Self CCD of one mesh moving linearly from its positions to `m.end`: candidates from the
    /// balanced traversal, elementary tests on the host (see the module docs). `topo` must be
    /// `Topology::new(mesh.faces(), mesh.vertex_count())`. Every contact of
    /// `gprox_query::ccd::ccd_self_with_bvh` over the same tree is reported with the same `t_lo`;
    /// `elementary_tests` counts the solver runs here.
    ///
    /// ```
    /// use gprox_cuda::{BalanceOptions, Device, MovingMesh};
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// use gprox_query::{ccd::CcdOptions, self_collide::Topology};
    /// // Two separate triangles; the second drops through the first.
    /// let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y,
    ///              Vec3::new(0.2, 0.2, 1.0), Vec3::new(1.2, 0.2, 1.0), Vec3::new(0.2, 1.2, 1.0)];
    /// let mesh = TriMesh::new(p.clone(), vec![[0, 1, 2], [3, 4, 5]]).unwrap();
    /// let end: Vec<Vec3> = p.iter().enumerate()
    ///     .map(|(i, &v)| if i >= 3 { v - 2.0 * Vec3::Z } else { v }).collect();
    /// let swept = gprox_bvh::swept::swept_triangle_aabbs(&mesh, &end).unwrap();
    /// let bvh = gprox_bvh::lbvh::build_from_aabbs(&swept);
    /// let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    /// let m = MovingMesh { mesh: &mesh, end: &end, bvh: &bvh };
    /// let (r, stats) = Device::emulated()
    ///     .ccd_self(&m, &topo, &CcdOptions::default(), &BalanceOptions::default())
    ///     .unwrap();
    /// let toi = r.earliest.unwrap();
    /// assert!(toi.t_lo <= 0.5 && toi.t_lo > 0.49);
    /// assert!(stats.rounds >= 1);
    /// ```
    pub fn ccd_self(
        &self,
        m: &MovingMesh<'_>,
        topo: &Topology,
        ccd: &CcdOptions,
        opts: &BalanceOptions,
    ) -> Result<(MeshCcd, BalanceStats)> {
        check_topology(m, topo)?;
        let (pairs, stats) = self.ccd_self_candidates(m, opts)?;
        let mv = Moving::new(m, topo);
        let mut out = Vec::new();
        let mut tests = 0;
        for &[fa, fb] in &pairs {
            test_faces(&mv, fa, &mv, fb, true, ccd, &mut out, &mut tests)?;
        }
        Ok((finish(out, pairs.len(), tests), stats))
    }

    /// Two-mesh CCD (`a` → `a.end`, `b` → `b.end`): candidates from the balanced traversal,
    /// elementary tests on the host; the contacts of `gprox_query::ccd::ccd_pair` over the same
    /// trees.
    pub fn ccd_pair(
        &self,
        a: &MovingMesh<'_>,
        a_topo: &Topology,
        b: &MovingMesh<'_>,
        b_topo: &Topology,
        ccd: &CcdOptions,
        opts: &BalanceOptions,
    ) -> Result<(MeshCcd, BalanceStats)> {
        check_topology(a, a_topo)?;
        check_topology(b, b_topo)?;
        let (pairs, stats) = self.ccd_pair_candidates(a, b, opts)?;
        let ma = Moving::new(a, a_topo);
        let mb = Moving::new(b, b_topo);
        let mut out = Vec::new();
        let mut tests = 0;
        for &[fa, fb] in &pairs {
            test_faces(&ma, fa, &mb, fb, false, ccd, &mut out, &mut tests)?;
        }
        Ok((finish(out, pairs.len(), tests), stats))
    }
}

fn check_topology(m: &MovingMesh<'_>, topo: &Topology) -> Result<()> {
    if topo.face_count() != m.mesh.face_count() {
        return Err(CudaError::InvalidBvh(format!(
            "topology describes {} faces, the mesh has {}",
            topo.face_count(),
            m.mesh.face_count()
        )));
    }
    Ok(())
}

/// A moving mesh in f64 for the elementary tests.
struct Moving<'a> {
    faces: &'a [[u32; 3]],
    start: Vec<DVec3>,
    end: Vec<DVec3>,
    topo: &'a Topology,
}

impl<'a> Moving<'a> {
    fn new(m: &MovingMesh<'a>, topo: &'a Topology) -> Self {
        Self {
            faces: m.mesh.faces(),
            start: m.mesh.positions().iter().map(|p| p.as_dvec3()).collect(),
            end: m.end.iter().map(|p| p.as_dvec3()).collect(),
            topo,
        }
    }
}

/// Self CCD: `fa` is the lowest face around vertex `v` sharing no vertex with `fb`.
fn canonical_vertex(topo: &Topology, faces: &[[u32; 3]], v: u32, fa: u32, fb: u32) -> bool {
    let tb = &faces[fb as usize];
    topo.faces_of(v)
        .iter()
        .find(|&&g| !share_vertex(&faces[g as usize], tb))
        .is_none_or(|&g| g == fa)
}

/// Self CCD: `{fa, fb}` is the smallest non-adjacent face pair holding edge `k` of `fa` and edge
/// `l` of `fb` (always, for non-manifold edges).
fn canonical_edges(
    topo: &Topology,
    faces: &[[u32; 3]],
    fa: u32,
    k: usize,
    fb: u32,
    l: usize,
) -> bool {
    let oa = topo.adjacent[fa as usize][k];
    let ob = topo.adjacent[fb as usize][l];
    if oa == BAD_EDGE || ob == BAD_EDGE {
        return true;
    }
    let key = |g: u32, h: u32| (g.min(h), g.max(h));
    let here = key(fa, fb);
    let mut best = here;
    for g in [fa, oa] {
        for h in [fb, ob] {
            if g == NO_FACE || h == NO_FACE || (g == fa && h == fb) {
                continue;
            }
            let kk = key(g, h);
            if kk < best && !share_vertex(&faces[g as usize], &faces[h as usize]) {
                best = kk;
            }
        }
    }
    best == here
}

/// The elementary tests of face `fa` of `a` against face `fb` of `b`, each feature pair from
/// its canonical face pair (self) or owning faces (two meshes).
#[allow(clippy::too_many_arguments)]
fn test_faces(
    a: &Moving,
    fa: u32,
    b: &Moving,
    fb: u32,
    same: bool,
    opts: &CcdOptions,
    out: &mut Vec<FeatureToi>,
    tests: &mut usize,
) -> Result<()> {
    let ta = a.faces[fa as usize];
    let tb = b.faces[fb as usize];
    if same && share_vertex(&ta, &tb) {
        return Ok(());
    }
    let sides = [(a, fa, ta, b, fb, tb, false), (b, fb, tb, a, fa, ta, true)];
    for (x, fx, tx, y, fy, ty, flip) in sides {
        let bits = x.topo.owned_vertices[fx as usize];
        for k in 0..3 {
            let v = tx[k];
            let run = if same {
                !tx[..k].contains(&v) && canonical_vertex(x.topo, x.faces, v, fx, fy)
            } else {
                bits & (1 << k) != 0
            };
            if !run {
                continue;
            }
            let at = |pos: &[DVec3], q: &[DVec3]| {
                [
                    pos[v as usize],
                    q[ty[0] as usize],
                    q[ty[1] as usize],
                    q[ty[2] as usize],
                ]
            };
            *tests += 1;
            let toi = vertex_face_toi(at(&x.start, &y.start), at(&x.end, &y.end), opts)?;
            if let Some(toi) = toi {
                let feature = if flip && !same {
                    Feature::FaceVertex {
                        face: fy,
                        vertex: v,
                    }
                } else {
                    Feature::VertexFace {
                        vertex: v,
                        face: fy,
                    }
                };
                let faces = if flip { [fy, fx] } else { [fx, fy] };
                out.push(FeatureToi {
                    feature,
                    toi,
                    faces,
                });
            }
        }
    }
    let ea = a.topo.owned_edges[fa as usize];
    let eb = b.topo.owned_edges[fb as usize];
    for i in 0..3 {
        if !same && ea & (1 << i) == 0 {
            continue;
        }
        let e0 = [ta[i], ta[(i + 1) % 3]];
        for j in 0..3 {
            let e1 = [tb[j], tb[(j + 1) % 3]];
            let run = if same {
                canonical_edges(a.topo, a.faces, fa, i, fb, j)
            } else {
                eb & (1 << j) != 0
            };
            if !run {
                continue;
            }
            let at = |p: &[DVec3], q: &[DVec3]| {
                [
                    p[e0[0] as usize],
                    p[e0[1] as usize],
                    q[e1[0] as usize],
                    q[e1[1] as usize],
                ]
            };
            *tests += 1;
            let toi = edge_edge_toi(at(&a.start, &b.start), at(&a.end, &b.end), opts)?;
            if let Some(toi) = toi {
                let sa = [e0[0].min(e0[1]), e0[0].max(e0[1])];
                let sb = [e1[0].min(e1[1]), e1[0].max(e1[1])];
                let (feature, faces) = if same && sb < sa {
                    (Feature::EdgeEdge { a: sb, b: sa }, [fb, fa])
                } else {
                    (Feature::EdgeEdge { a: sa, b: sb }, [fa, fb])
                };
                out.push(FeatureToi {
                    feature,
                    toi,
                    faces,
                });
            }
        }
    }
    Ok(())
}

/// Sorted by feature, one contact per feature (the earliest `t_lo`, then the tightest `t_hi`:
/// independent of visit order), and the earliest overall.
fn finish(mut contacts: Vec<FeatureToi>, candidate_pairs: usize, tests: usize) -> MeshCcd {
    contacts.sort_by(|x, y| {
        x.feature
            .cmp(&y.feature)
            .then(x.toi.t_lo.total_cmp(&y.toi.t_lo))
            .then(x.toi.t_hi.total_cmp(&y.toi.t_hi))
    });
    contacts.dedup_by(|x, y| x.feature == y.feature);
    let earliest = contacts
        .iter()
        .map(|c| c.toi)
        .min_by(|x, y| x.t_lo.total_cmp(&y.t_lo).then(x.t_hi.total_cmp(&y.t_hi)));
    MeshCcd {
        contacts,
        earliest,
        candidate_pairs,
        elementary_tests: tests,
    }
}
