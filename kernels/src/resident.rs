//! Device-resident meshes: a mesh and its LBVH uploaded once and kept on the device until
//! dropped. A deforming mesh uploads only its new positions each frame and is refit on the
//! device; queries on resident meshes upload nothing but their parameters.

use glam::Vec3;
use gprox_bvh::{Aabb, Bvh, BvhNode};
use gprox_geometry::TriMesh;

use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::lbvh::{check_count, validate_bvh, DeviceMesh};

/// A triangle mesh and its LBVH living on a [`Device`].
///
/// ```
/// use gprox_cuda::{Device, ResidentMesh};
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// let d = Device::emulated();
/// let mesh = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let mut r = ResidentMesh::new(&d, &mesh, &gprox_bvh::lbvh::build(&mesh)).unwrap();
/// let before = d.ops();
/// r.update(&[Vec3::Z, Vec3::X, Vec3::Y]).unwrap(); // one upload, refit on the device
/// let used = d.ops() - before;
/// assert_eq!((used.h2d_bytes, used.allocations, used.syncs), (36, 0, 0));
/// assert_eq!(r.nodes().unwrap()[0].aabb.max[2], 1.0);
/// ```
pub struct ResidentMesh {
    device: Device,
    pub(crate) mesh: DeviceMesh,
    pub(crate) nodes: DeviceBuffer<BvhNode>,
    parents: DeviceBuffer<u32>,
    prim_boxes: DeviceBuffer<Aabb>,
    refit_flags: DeviceBuffer<u32>,
    leaves: u32,
    vertices: usize,
}

impl std::fmt::Debug for ResidentMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentMesh")
            .field("device", &self.device)
            .field("leaves", &self.leaves)
            .field("vertices", &self.vertices)
            .finish()
    }
}

impl ResidentMesh {
    /// Uploads `mesh` and its LBVH `bvh` (checked: one leaf per face, LBVH layout).
    pub fn new(device: &Device, mesh: &TriMesh, bvh: &Bvh) -> Result<Self> {
        let faces = mesh.faces().len();
        let leaves = validate_bvh(bvh, faces)?;
        if leaves as usize != faces {
            return Err(CudaError::InvalidBvh(format!(
                "the bvh has {leaves} leaves but the mesh has {faces} faces"
            )));
        }
        let dm = device.upload_mesh(mesh)?;
        Ok(Self {
            device: device.clone(),
            mesh: dm,
            nodes: device.upload(&bvh.nodes)?,
            parents: device.upload(&bvh.parents)?,
            prim_boxes: device.alloc_zeros(faces)?,
            refit_flags: device.alloc_zeros((faces.max(2)) - 1)?,
            leaves,
            vertices: mesh.positions().len(),
        })
    }

    /// Builds the LBVH of `mesh` on `device` (bit-identical to `gprox_bvh::lbvh::build`) and
    /// keeps mesh and tree there: the buffers the build made stay resident, so the mesh is the
    /// only upload and the host copy of the tree, returned too, the only download.
    ///
    /// ```
    /// use gprox_cuda::{Device, ResidentMesh};
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let d = Device::emulated();
    /// let mesh = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let before = d.ops();
    /// let (r, bvh) = ResidentMesh::build(&d, &mesh).unwrap();
    /// let used = d.ops() - before;
    /// assert_eq!(bvh, gprox_bvh::lbvh::build(&mesh));
    /// // Up: 3 positions and 1 face; back: 1 node (32 bytes) and 1 parent, one sync each.
    /// assert_eq!((used.h2d_bytes, used.d2h_bytes, used.syncs), (36 + 12, 32 + 4, 2));
    /// assert_eq!(r.nodes().unwrap(), bvh.nodes);
    /// ```
    pub fn build(device: &Device, mesh: &TriMesh) -> Result<(Self, Bvh)> {
        let tree = device.build_dev(mesh)?;
        let bvh = tree.download()?;
        let r = Self {
            device: device.clone(),
            leaves: tree.mesh.face_count,
            vertices: mesh.positions().len(),
            mesh: tree.mesh,
            nodes: tree.nodes,
            parents: tree.parents,
            prim_boxes: tree.boxes,
            refit_flags: tree.refit_flags,
        };
        Ok((r, bvh))
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Leaves (faces) of the tree.
    pub fn leaf_count(&self) -> u32 {
        self.leaves
    }

    /// Moves the vertices to `positions` (same count): one upload, then face boxes and the
    /// bottom-up refit on the device. No allocation, no synchronisation.
    pub fn update(&mut self, positions: &[Vec3]) -> Result<()> {
        if positions.len() != self.vertices {
            return Err(CudaError::LengthMismatch {
                device: self.vertices,
                host: positions.len(),
            });
        }
        check_count("mesh vertices", positions.len())?;
        self.mesh
            .positions
            .write(bytemuck::cast_slice::<Vec3, f32>(positions))?;
        self.refit()
    }

    /// Recomputes the face boxes and every node box from the device positions.
    fn refit(&self) -> Result<()> {
        self.device.prim_boxes_into(&self.mesh, &self.prim_boxes)?;
        self.device.refit_with_flags(
            &self.nodes,
            &self.parents,
            &self.prim_boxes,
            &self.refit_flags,
            self.leaves,
        )
    }

    /// The tree's nodes with their boxes refit to `positions` (a device buffer of this mesh's
    /// vertex count, packed f32) into `nodes` (at least as many as the tree's), using `boxes`
    /// (at least one per face) for the face boxes: the end-of-step tree of CCD. The resident
    /// tree is left as it is.
    pub(crate) fn refit_copy(
        &self,
        positions: &DeviceBuffer<f32>,
        nodes: &mut DeviceBuffer<BvhNode>,
        boxes: &DeviceBuffer<Aabb>,
    ) -> Result<()> {
        if positions.len() < 3 * self.vertices {
            return Err(CudaError::LengthMismatch {
                device: positions.len(),
                host: 3 * self.vertices,
            });
        }
        self.device.copy_into(&self.nodes, nodes)?;
        self.device.prim_boxes_at(
            positions.device_ptr(),
            self.mesh.faces.device_ptr(),
            self.mesh.face_count,
            boxes,
        )?;
        self.device
            .refit_with_flags(nodes, &self.parents, boxes, &self.refit_flags, self.leaves)
    }

    /// Vertices of the mesh.
    pub fn vertex_count(&self) -> usize {
        self.vertices
    }

    /// The tree's nodes as they are on the device (a download; for tests and inspection).
    pub fn nodes(&self) -> Result<Vec<BvhNode>> {
        self.nodes.download()
    }
}
