//! Mesh CCD on the device: candidates from the balanced traversal, elementary tests on the
//! device.
//!
//! Node boxes at both ends of the step (face boxes at the start and end positions by the
//! `gprox_prim_boxes` kernel, then `gprox_refit` on the caller's tree: bit-identical to the
//! CPU's dual boxes) → balanced BVTT traversal whose node test is "not separated on one axis,
//! in the same order, at both ends" → candidate triangle pairs, in the same set and orientation
//! as the CPU traversal of `gprox_query::ccd` over the same tree. Self CCD keeps adjacent leaf
//! pairs (no `BALANCE_SKIP_ADJACENT`): a vertex can hit a face of its own neighbourhood. The
//! narrow phase runs on the device right after the traversal ([`crate::ccd_narrow`]): the
//! candidate pairs never leave it; each is expanded into its feature pairs exactly as
//! [`gprox_query::ccd::ccd_candidates`] does (feature ownership, canonical point order), the
//! CPU's certified filters and inclusion solver are mirrored bit for bit, and only the contacts
//! (plus the rare tests the device's bounded heap could not finish, which the host reruns with
//! the CPU's solver) come back in host-mapped memory after the one synchronisation. The result
//! equals the CPU's mesh CCD over the same tree exactly.

use gprox_bvh::{Aabb, Bvh, BvhNode};
use gprox_geometry::glam::Vec3;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::ccd::{ccd_candidates, CcdMesh, CcdOptions, MeshCcd};
use gprox_query::self_collide::Topology;

use crate::balance::{BalanceOptions, BalanceStats, Traversal, NODE_BOX_STRIDE};
use crate::ccd_narrow::NarrowMesh;
use crate::collide::ResidentObject;
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::lbvh::DeviceMesh;
use crate::params::{BALANCE_DUAL, BALANCE_SELF};
use crate::resident::ResidentMesh;
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

/// Node boxes of one moving mesh on the device (two refitted copies of its nodes), with the
/// mesh's faces and positions at both ends (for the narrow phase).
struct DualNodes {
    start: DeviceBuffer<BvhNode>,
    end: DeviceBuffer<BvhNode>,
    leaves: u32,
    start_mesh: DeviceMesh,
    end_positions: DeviceBuffer<f32>,
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
            start_mesh,
            end_positions: end_mesh.positions,
        })
    }

    /// Candidate face pairs of self CCD: every unordered pair of distinct faces of `m`
    /// (adjacent ones included) whose boxes are not separated by more than `min_separation` on
    /// one axis in the same order at both ends of the step, oriented as the CPU's self traversal
    /// of the same tree reports them (the first face's leaf lies in the left subtree of the two
    /// leaves' common ancestor); sorted.
    pub fn ccd_self_candidates(
        &self,
        m: &MovingMesh<'_>,
        min_separation: f64,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let n = check_moving(m, "mesh")?;
        if n < 2 {
            return Ok((Vec::new(), BalanceStats::default()));
        }
        let d = self.dual_nodes(m, n)?;
        self.dual_traverse(&d, &d, BALANCE_SELF, min_separation, opts)
    }

    /// Candidate face pairs `[face of a, face of b]` of two-mesh CCD (boxes not separated by
    /// more than `min_separation` on one axis in the same order at both ends of the step);
    /// sorted.
    pub fn ccd_pair_candidates(
        &self,
        a: &MovingMesh<'_>,
        b: &MovingMesh<'_>,
        min_separation: f64,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let na = check_moving(a, "mesh a")?;
        let nb = check_moving(b, "mesh b")?;
        if na == 0 || nb == 0 {
            return Ok((Vec::new(), BalanceStats::default()));
        }
        let da = self.dual_nodes(a, na)?;
        let db = self.dual_nodes(b, nb)?;
        self.dual_traverse(&da, &db, 0, min_separation, opts)
    }

    fn dual_traverse(
        &self,
        a: &DualNodes,
        b: &DualNodes,
        flags: u32,
        min_separation: f64,
        opts: &BalanceOptions,
    ) -> Result<(Vec<[u32; 2]>, BalanceStats)> {
        let t = dual_traversal(a, b, flags, min_separation);
        let out = self.run_traversal(&t, opts)?;
        let mut pairs = out.pairs;
        pairs.sort_unstable();
        Ok((pairs, out.stats))
    }

    /// Self CCD of one mesh moving linearly from its positions to `m.end`: candidates from the
    /// balanced traversal, elementary tests on the device (see the module docs). `topo` must be
    /// `Topology::new(mesh.faces(), mesh.vertex_count())`. The result equals
    /// `gprox_query::ccd::ccd_self_with_bvh` over the same tree.
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
        let n = check_moving(m, "mesh")?;
        if n < 2 {
            let cm = CcdMesh {
                mesh: m.mesh,
                end: m.end,
                topo,
            };
            return Ok((
                ccd_candidates(&cm, None, &[], ccd)?,
                BalanceStats::default(),
            ));
        }
        let d = self.dual_nodes(m, n)?;
        let t = dual_traversal(&d, &d, BALANCE_SELF, ccd.min_separation);
        self.ccd_narrow(&t, &narrow_mesh(m, topo, &d), None, ccd, opts)
    }

    /// Two-mesh CCD (`a` → `a.end`, `b` → `b.end`): candidates from the balanced traversal,
    /// elementary tests on the device; equals `gprox_query::ccd::ccd_pair` over the same trees.
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
        let na = check_moving(a, "mesh a")?;
        let nb = check_moving(b, "mesh b")?;
        if na == 0 || nb == 0 {
            let ca = CcdMesh {
                mesh: a.mesh,
                end: a.end,
                topo: a_topo,
            };
            let cb = CcdMesh {
                mesh: b.mesh,
                end: b.end,
                topo: b_topo,
            };
            return Ok((
                ccd_candidates(&ca, Some(&cb), &[], ccd)?,
                BalanceStats::default(),
            ));
        }
        let da = self.dual_nodes(a, na)?;
        let db = self.dual_nodes(b, nb)?;
        let t = dual_traversal(&da, &db, 0, ccd.min_separation);
        self.ccd_narrow(
            &t,
            &narrow_mesh(a, a_topo, &da),
            Some(&narrow_mesh(b, b_topo, &db)),
            ccd,
            opts,
        )
    }
}

impl Device {
    /// Self CCD of a [`ResidentMesh`] moving linearly from its current positions (`mesh` is its
    /// host copy) to `end`: the end positions are the only upload (the topology's ownership
    /// bits stay on the device while they do not change); the end-of-step tree is the resident
    /// tree's copy refit on the device, the elementary tests run on the device as in
    /// [`Device::ccd_self`] and the contacts come back after one synchronisation. Equals
    /// `gprox_query::ccd::ccd_self_with_bvh` over the resident tree.
    pub fn ccd_self_resident(
        &self,
        resident: &ResidentMesh,
        mesh: &TriMesh,
        end: &[Vec3],
        topo: &Topology,
        ccd: &CcdOptions,
        opts: &BalanceOptions,
    ) -> Result<(MeshCcd, BalanceStats)> {
        ResidentObject::new(resident, mesh, Pose64::IDENTITY).check("mesh")?;
        if end.len() != mesh.vertex_count() || end.len() != resident.vertex_count() {
            return Err(CudaError::VertexCountMismatch {
                what: "mesh",
                got: end.len(),
                expected: mesh.vertex_count(),
            });
        }
        if let Some(index) = end.iter().position(|p| !p.is_finite()) {
            return Err(CudaError::NonFinitePosition {
                what: "mesh",
                frame: 1,
                index,
            });
        }
        if topo.face_count() != mesh.face_count() {
            return Err(CudaError::InvalidBvh(format!(
                "topology describes {} faces, the mesh has {}",
                topo.face_count(),
                mesh.face_count()
            )));
        }
        let n = resident.leaf_count();
        if n >= 2 {
            let flat: &[f32] = bytemuck::cast_slice(end);
            let mut positions = self.lease::<DeviceBuffer<f32>>("ccd.end.positions", flat.len())?;
            positions.write_prefix(flat)?;
            let mut nodes =
                self.lease::<DeviceBuffer<BvhNode>>("ccd.end.nodes", resident.nodes.len())?;
            let boxes = self.lease::<DeviceBuffer<Aabb>>("ccd.end.boxes", n as usize)?;
            resident.refit_copy(&positions, &mut nodes, &boxes)?;
            let start = resident.nodes.device_ptr();
            let t = Traversal {
                nodes_a: start,
                nodes_b: start,
                boxes_a: [start, nodes.device_ptr()],
                boxes_b: [start, nodes.device_ptr()],
                box_stride: NODE_BOX_STRIDE,
                leaves_a: n,
                leaves_b: n,
                faces: 0,
                flags: BALANCE_SELF | BALANCE_DUAL,
                // As the CPU: a negative (or NaN) separation counts as 0.
                min_separation: ccd.min_separation.max(0.0),
                triangles: None,
                world: None,
            };
            let nm = NarrowMesh {
                mesh,
                end,
                topo,
                start_ptr: resident.mesh.positions.device_ptr(),
                end_ptr: positions.device_ptr(),
                faces_ptr: resident.mesh.faces.device_ptr(),
            };
            return self.ccd_narrow(&t, &nm, None, ccd, opts);
        }
        let cm = CcdMesh { mesh, end, topo };
        Ok((
            ccd_candidates(&cm, None, &[], ccd)?,
            BalanceStats::default(),
        ))
    }
}

/// The CCD traversal of `a` against `b` (node boxes at both ends of the step).
fn dual_traversal(a: &DualNodes, b: &DualNodes, flags: u32, min_separation: f64) -> Traversal {
    Traversal {
        nodes_a: a.start.device_ptr(),
        nodes_b: b.start.device_ptr(),
        boxes_a: [a.start.device_ptr(), a.end.device_ptr()],
        boxes_b: [b.start.device_ptr(), b.end.device_ptr()],
        box_stride: NODE_BOX_STRIDE,
        leaves_a: a.leaves,
        leaves_b: b.leaves,
        faces: 0,
        flags: flags | BALANCE_DUAL,
        // As the CPU: a negative (or NaN) separation counts as 0.
        min_separation: min_separation.max(0.0),
        triangles: None,
        world: None,
    }
}

/// A moving mesh on the device, as the narrow phase reads it.
fn narrow_mesh<'a>(m: &MovingMesh<'a>, topo: &'a Topology, d: &DualNodes) -> NarrowMesh<'a> {
    NarrowMesh {
        mesh: m.mesh,
        end: m.end,
        topo,
        start_ptr: d.start_mesh.positions.device_ptr(),
        end_ptr: d.end_positions.device_ptr(),
        faces_ptr: d.start_mesh.faces.device_ptr(),
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
