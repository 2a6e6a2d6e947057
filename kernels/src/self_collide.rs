//! Self-collision of one mesh on the device: the balanced BVTT traversal of the tree against
//! itself (a node against itself expands to each child against itself and the two children
//! against each other), leaf pairs of faces sharing no vertex, the filtered triangle-pair kernel,
//! and the exact host test for what the filters leave undecided. The CPU twin is
//! `gprox_query::self_collide::self_collide` (without normal-cone masks); the pair sets and the
//! candidate counts are the same.

use gprox_bvh::Bvh;
use gprox_geometry::transform::Pose64;
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;

use crate::balance::{BalanceOptions, BalanceStats, Traversal, TriSide, NODE_BOX_STRIDE};
use crate::collide::ResidentObject;
use crate::device::Device;
use crate::error::{CudaError, Result};
use crate::lbvh::validate_bvh;
use crate::params::{BALANCE_SELF, BALANCE_SKIP_ADJACENT, PAIR_UNDECIDED};
use crate::resident::ResidentMesh;

/// Result of [`Device::self_collide`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSelfCollisions {
    /// Intersecting face pairs `[a, b]` sharing no vertex, `a < b`, sorted, no duplicates.
    pub pairs: Vec<[u32; 2]>,
    /// Leaf pairs of faces sharing no vertex whose boxes overlap (exact tests run).
    pub candidates: usize,
    /// What the balanced traversal did.
    pub stats: BalanceStats,
}

/// Checks that `bvh` is an LBVH with one leaf per face of `mesh`; returns the leaf count.
pub(crate) fn check_mesh_bvh(mesh: &TriMesh, bvh: &Bvh, what: &str) -> Result<u32> {
    let faces = mesh.faces().len();
    let n = validate_bvh(bvh, faces)?;
    if n as usize != faces {
        return Err(CudaError::InvalidBvh(format!(
            "{what}: the bvh has {n} leaves but the mesh has {faces} faces"
        )));
    }
    Ok(n)
}

impl Device {
    /// Every intersecting pair of faces of `mesh` that share no vertex (closed triangles,
    /// touching counts), using `bvh` (an LBVH over the mesh's current face boxes, e.g.
    /// `gprox_bvh::lbvh::build` or [`Device::build_bvh`]) through the balanced traversal.
    ///
    /// ```
    /// use gprox_cuda::{BalanceOptions, Device};
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// // Two triangles crossing each other, sharing no vertex.
    /// let p = vec![Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0),
    ///              Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 1.0), Vec3::new(3.0, 3.0, 0.0)];
    /// let mesh = TriMesh::new(p, vec![[0, 1, 2], [3, 4, 5]]).unwrap();
    /// let bvh = gprox_bvh::lbvh::build(&mesh);
    /// let r = Device::emulated().self_collide(&mesh, &bvh, &BalanceOptions::default()).unwrap();
    /// assert_eq!(r.pairs, vec![[0, 1]]);
    /// ```
    pub fn self_collide(
        &self,
        mesh: &TriMesh,
        bvh: &Bvh,
        opts: &BalanceOptions,
    ) -> Result<GpuSelfCollisions> {
        let n = check_mesh_bvh(mesh, bvh, "self-collision")?;
        if n < 2 {
            return Ok(GpuSelfCollisions::default());
        }
        let resident = ResidentMesh::new(self, mesh, bvh)?;
        self.self_collide_resident(&resident, mesh, opts)
    }

    /// [`Device::self_collide`] of a [`ResidentMesh`] (`mesh` is its host copy, at the same
    /// positions): nothing is uploaded, one host synchronisation in the common case.
    pub fn self_collide_resident(
        &self,
        resident: &ResidentMesh,
        mesh: &TriMesh,
        opts: &BalanceOptions,
    ) -> Result<GpuSelfCollisions> {
        ResidentObject::new(resident, mesh, Pose64::IDENTITY).check("mesh")?;
        let n = resident.leaf_count();
        if n < 2 {
            return Ok(GpuSelfCollisions::default());
        }
        let nodes = &resident.nodes;
        let dm = &resident.mesh;
        let side = TriSide {
            positions: dm.positions.device_ptr(),
            faces: dm.faces.device_ptr(),
            pose: Pose64::IDENTITY,
        };
        let t = Traversal {
            nodes_a: nodes.device_ptr(),
            nodes_b: nodes.device_ptr(),
            boxes_a: [nodes.device_ptr(); 2],
            boxes_b: [nodes.device_ptr(); 2],
            box_stride: NODE_BOX_STRIDE,
            leaves_a: n,
            leaves_b: n,
            faces: dm.faces.device_ptr(),
            flags: BALANCE_SELF | BALANCE_SKIP_ADJACENT,
            min_separation: 0.0,
            triangles: Some([side, side]),
            world: None,
        };
        let run = self.run_traversal(&t, opts)?;
        let mut out = GpuSelfCollisions {
            pairs: Vec::new(),
            candidates: run.stats.leaf_pairs as usize,
            stats: run.stats,
        };
        let pos = mesh.positions();
        let faces = mesh.faces();
        for [fa, fb] in run.pairs {
            let keep = if fa & PAIR_UNDECIDED != 0 {
                let fa = fa & !PAIR_UNDECIDED;
                let ta = faces[fa as usize].map(|v| pos[v as usize].as_dvec3());
                let tb = faces[fb as usize].map(|v| pos[v as usize].as_dvec3());
                triangles_intersect(&ta, &tb)
            } else {
                true
            };
            let fa = fa & !PAIR_UNDECIDED;
            if keep {
                out.pairs.push([fa.min(fb), fa.max(fb)]);
            }
        }
        out.pairs.sort_unstable();
        out.pairs.dedup();
        Ok(out)
    }
}
