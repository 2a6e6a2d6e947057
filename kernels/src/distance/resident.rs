//! [`ResidentDistanceMesh`]: a mesh and its RSS tree collapsed to 8 wide once and kept on the
//! device for distance queries.

use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::rss::Rss;
use gprox_bvh::wide::{Wide8Node, WideTree, EMPTY, LEAF_BIT};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::distance::{validate_tree, DistanceObject};

use super::params::DistanceTree;
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::lbvh::DeviceMesh;

/// A mesh and its RSS tree on a [`Device`], ready for [`Device::distance_resident`]: the binary
/// tree collapsed once to an 8-wide tree (`gprox_bvh::wide`) with one representative face per
/// slot, uploaded with the mesh. A host copy of the mesh stays for the few triangle pairs whose
/// exact orientation signs the device cannot certify.
///
/// ```
/// use gprox_bvh::{bv_tree::BvTree, rss::Rss};
/// use gprox_cuda::{distance::{GpuDistanceOptions, ResidentDistanceMesh}, Device};
/// use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
/// let d = Device::emulated();
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let r = ResidentDistanceMesh::new(&d, &tri, &BvTree::<Rss>::build(&tri)).unwrap();
/// let mut lift = Pose64::IDENTITY;
/// lift.rows[2][3] = 2.0;
/// let opts = GpuDistanceOptions::default();
/// let first = d.distance_resident(&r, &Pose64::IDENTITY, &r, &lift, &opts).unwrap();
/// let before = d.ops();
/// let again = d.distance_resident(&r, &Pose64::IDENTITY, &r, &lift, &opts).unwrap();
/// let used = d.ops() - before;
/// assert_eq!((again.distance, first), (2.0, again));
/// assert_eq!((used.syncs, used.allocations, used.h2d_bytes), (1, 0, 0));
/// ```
pub struct ResidentDistanceMesh {
    device: Device,
    children: DeviceBuffer<u32>,
    bvs: DeviceBuffer<Rss>,
    reps: DeviceBuffer<u32>,
    mesh: DeviceMesh,
    host: TriMesh,
    /// The representative face of the root's first slot (the seed pair's face).
    seed: u32,
    /// Wide levels (the root is level 1).
    depth: u32,
    /// `reach()` of the binary root's volume (growth of mapped volumes).
    reach: f64,
}

impl std::fmt::Debug for ResidentDistanceMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentDistanceMesh")
            .field("device", &self.device)
            .field("faces", &self.host.face_count())
            .field("wide_nodes", &(self.children.len() / 8))
            .field("depth", &self.depth)
            .finish()
    }
}

impl ResidentDistanceMesh {
    /// Checks `tree` against `mesh` (`gprox_query::distance::validate_tree`), collapses it to 8
    /// wide and uploads tree, representatives and mesh to `device`.
    pub fn new(device: &Device, mesh: &TriMesh, tree: &BvTree<Rss>) -> Result<Self> {
        if mesh.face_count() == 0 {
            return Err(CudaError::InvalidBvh("the mesh has no faces".into()));
        }
        let object = DistanceObject {
            mesh,
            tree,
            pose: Pose64::IDENTITY,
        };
        validate_tree(&object).map_err(|e| CudaError::InvalidBvh(e.to_string()))?;
        Self::upload(device, mesh, tree)
    }

    /// [`ResidentDistanceMesh::new`] for a mesh and tree already checked.
    pub(crate) fn upload(device: &Device, mesh: &TriMesh, tree: &BvTree<Rss>) -> Result<Self> {
        let wide = WideTree::<Rss, Wide8Node>::from_binary(tree)
            .map_err(|e| CudaError::InvalidBvh(e.to_string()))?;
        let children: Vec<u32> = wide.nodes.iter().flat_map(|n| n.children).collect();
        let reps = representatives(&wide);
        Ok(Self {
            device: device.clone(),
            children: device.upload(&children)?,
            bvs: device.upload(&wide.bvs)?,
            seed: reps[0],
            reps: device.upload(&reps)?,
            mesh: device.upload_mesh(mesh)?,
            host: mesh.clone(),
            depth: depth(&wide),
            reach: tree.nodes[0].bv.reach(),
        })
    }

    /// [`ResidentDistanceMesh::new`] for the mesh and tree of a `DistanceObject` (its pose is
    /// given per query).
    pub fn from_object(device: &Device, object: &DistanceObject<'_, Rss>) -> Result<Self> {
        Self::new(device, object.mesh, object.tree)
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The host copy of the mesh.
    pub fn mesh(&self) -> &TriMesh {
        &self.host
    }

    /// Levels of the wide tree (the root is level 1): a query runs at most as many traversal
    /// levels as the deeper of its two trees has.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Face of the seed pair (the representative of the root's first slot).
    pub(crate) fn seed(&self) -> u32 {
        self.seed
    }

    /// `reach()` of the root volume.
    pub(crate) fn reach(&self) -> f64 {
        self.reach
    }

    /// Device addresses for the kernels.
    pub(crate) fn tree(&self) -> DistanceTree {
        DistanceTree {
            children: self.children.device_ptr(),
            bvs: self.bvs.device_ptr(),
            reps: self.reps.device_ptr(),
            positions: self.mesh.positions.device_ptr(),
            faces: self.mesh.faces.device_ptr(),
        }
    }
}

/// A face below every slot of a wide tree (slot's own face for a leaf, the first slot's
/// representative of the child node otherwise); 0 for empty slots.
pub fn representatives(tree: &WideTree<Rss, Wide8Node>) -> Vec<u32> {
    let mut reps = vec![0u32; tree.nodes.len() * 8];
    // Children are created after their parents, so a reverse sweep sees them first.
    for k in (0..tree.nodes.len()).rev() {
        for s in 0..8 {
            let c = tree.nodes[k].children[s];
            reps[k * 8 + s] = if c == EMPTY {
                0
            } else if c & LEAF_BIT != 0 {
                c & !LEAF_BIT
            } else {
                reps[c as usize * 8]
            };
        }
    }
    reps
}

/// Levels of a wide tree (a single node: 1).
fn depth(tree: &WideTree<Rss, Wide8Node>) -> u32 {
    let mut depth = vec![1u32; tree.nodes.len()];
    // Children come after their parents: a reverse sweep sees them first.
    for k in (0..tree.nodes.len()).rev() {
        for &c in &tree.nodes[k].children {
            if c != EMPTY && c & LEAF_BIT == 0 {
                depth[k] = depth[k].max(depth[c as usize] + 1);
            }
        }
    }
    depth[0]
}
