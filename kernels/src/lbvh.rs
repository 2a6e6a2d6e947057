//! The LBVH build on the device, stage by stage as `gprox_bvh::lbvh` (the CPU twin): primitive
//! boxes, Morton codes, radix sort, hierarchy, refit. Every stage has a host-slice entry point
//! (for tests against the CPU stages) and a device-resident one used by [`Device::build_bvh`].

use gprox_bvh::{Aabb, Bvh, BvhNode, LEAF};
use gprox_geometry::TriMesh;

use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::{
    HierarchyParams, MortonParams, PrimBoxesParams, ReduceBoundsParams, RefitParams,
};

mod sort;
pub(crate) use sort::RadixJob;
pub use sort::RadixOptions;

/// Most primitives a tree may have (its `2n - 1` node indices must fit in u32, below `LEAF`).
pub const MAX_PRIMITIVES: usize = (u32::MAX / 2) as usize;

/// Blocks of the first centroid-bounds reduction pass.
const REDUCE_BLOCKS: usize = 64;

pub(crate) fn check_count(what: &'static str, count: usize) -> Result<u32> {
    if count > MAX_PRIMITIVES {
        return Err(CudaError::TooLarge {
            what,
            count,
            max: MAX_PRIMITIVES,
        });
    }
    Ok(count as u32)
}

/// Mesh data on the device: packed f32 positions and u32 faces.
pub(crate) struct DeviceMesh {
    pub positions: DeviceBuffer<f32>,
    pub faces: DeviceBuffer<u32>,
    pub face_count: u32,
}

impl Device {
    /// Uploads the positions and faces of `mesh`.
    pub(crate) fn upload_mesh(&self, mesh: &TriMesh) -> Result<DeviceMesh> {
        let face_count = check_count("mesh faces", mesh.faces().len())?;
        check_count("mesh vertices", mesh.positions().len())?;
        let positions: &[f32] = bytemuck::cast_slice(mesh.positions());
        let faces: &[u32] = bytemuck::cast_slice(mesh.faces());
        Ok(DeviceMesh {
            positions: self.upload(positions)?,
            faces: self.upload(faces)?,
            face_count,
        })
    }

    /// Spec step 1 on the device: the f32 box of every face (`gprox_bvh::refit::triangle_aabbs`).
    pub fn triangle_aabbs(&self, mesh: &TriMesh) -> Result<Vec<Aabb>> {
        let m = self.upload_mesh(mesh)?;
        self.prim_boxes_dev(&m)?.download()
    }

    pub(crate) fn prim_boxes_dev(&self, m: &DeviceMesh) -> Result<DeviceBuffer<Aabb>> {
        let boxes = self.alloc_zeros::<Aabb>(m.face_count as usize)?;
        self.prim_boxes_into(m, &boxes)?;
        Ok(boxes)
    }

    /// The box of every face of `m` into `boxes` (at least `m.face_count` entries).
    pub(crate) fn prim_boxes_into(&self, m: &DeviceMesh, boxes: &DeviceBuffer<Aabb>) -> Result<()> {
        self.prim_boxes_at(
            m.positions.device_ptr(),
            m.faces.device_ptr(),
            m.face_count,
            boxes,
        )
    }

    /// The box of each of `count` faces (`faces`: device address of `u32[3 count]`) over the
    /// packed f32 `positions` (a device address) into `boxes`.
    pub(crate) fn prim_boxes_at(
        &self,
        positions: u64,
        faces: u64,
        count: u32,
        boxes: &DeviceBuffer<Aabb>,
    ) -> Result<()> {
        let n = count as usize;
        if n > boxes.len() {
            return Err(CudaError::LengthMismatch {
                device: boxes.len(),
                host: n,
            });
        }
        if n > 0 {
            let p = PrimBoxesParams {
                positions,
                faces,
                boxes: boxes.device_ptr(),
                count,
                pad: 0,
            };
            // SAFETY: the caller's positions/faces hold a validated mesh of `count` faces,
            // boxes has at least `count` entries.
            unsafe { self.launch(Kernel::PrimBoxes, self.blocks_for(n), self.block_size(), &p)? };
        }
        Ok(())
    }

    /// Spec steps 2-3 on the device: 63-bit codes of `boxes`' centroids
    /// (`gprox_bvh::lbvh::morton_codes`).
    pub fn morton_codes(&self, boxes: &[Aabb]) -> Result<Vec<u64>> {
        let n = check_count("boxes", boxes.len())?;
        let b = self.upload(boxes)?;
        let (codes, _) = self.codes_dev(&b, n)?;
        codes.download()
    }

    /// Codes and the identity index payload of `n` boxes on the device.
    pub(crate) fn codes_dev(
        &self,
        boxes: &DeviceBuffer<Aabb>,
        n: u32,
    ) -> Result<(DeviceBuffer<u64>, DeviceBuffer<u32>)> {
        let codes = self.alloc_zeros::<u64>(n as usize)?;
        let indices = self.alloc_zeros::<u32>(n as usize)?;
        if n == 0 {
            return Ok((codes, indices));
        }
        let grid = self.blocks_for(n as usize).min(REDUCE_BLOCKS as u32);
        let partial = self.alloc_zeros::<Aabb>(grid as usize)?;
        let scene = self.alloc_zeros::<Aabb>(1)?;
        let block = self.block_size();
        let first = ReduceBoundsParams {
            input: boxes.device_ptr(),
            output: partial.device_ptr(),
            count: n,
            centroids: 1,
        };
        let second = ReduceBoundsParams {
            input: partial.device_ptr(),
            output: scene.device_ptr(),
            count: grid,
            centroids: 0,
        };
        let morton = MortonParams {
            boxes: boxes.device_ptr(),
            scene: scene.device_ptr(),
            codes: codes.device_ptr(),
            indices: indices.device_ptr(),
            count: n,
            pad: 0,
        };
        // SAFETY: every buffer is sized for the counts in its params.
        unsafe {
            self.launch(Kernel::ReduceBounds, grid, block, &first)?;
            self.launch(Kernel::ReduceBounds, 1, block, &second)?;
            self.launch(
                Kernel::MortonCodes,
                self.blocks_for(n as usize),
                block,
                &morton,
            )?;
        }
        Ok((codes, indices))
    }

    /// Spec step 5 on the device: the Karras topology over sorted `codes` with `order[k]` the
    /// primitive of slot `k` (`gprox_bvh::lbvh::hierarchy`); boxes are left [`Aabb::EMPTY`].
    pub fn hierarchy(&self, codes: &[u64], order: &[u32]) -> Result<Bvh> {
        if codes.len() != order.len() {
            return Err(CudaError::LengthMismatch {
                device: codes.len(),
                host: order.len(),
            });
        }
        let n = check_count("codes", codes.len())?;
        let c = self.upload(codes)?;
        let o = self.upload(order)?;
        let (nodes, parents) = self.hierarchy_dev(&c, &o, n)?;
        Ok(Bvh {
            nodes: nodes.download()?,
            parents: parents.download()?,
        })
    }

    pub(crate) fn hierarchy_dev(
        &self,
        codes: &DeviceBuffer<u64>,
        order: &DeviceBuffer<u32>,
        n: u32,
    ) -> Result<(DeviceBuffer<BvhNode>, DeviceBuffer<u32>)> {
        let total = (2 * n as usize).saturating_sub(1);
        let nodes = self.alloc_zeros::<BvhNode>(total)?;
        let parents = self.alloc_zeros::<u32>(total)?;
        if n > 0 {
            let p = HierarchyParams {
                codes: codes.device_ptr(),
                order: order.device_ptr(),
                nodes: nodes.device_ptr(),
                parents: parents.device_ptr(),
                count: n,
                pad: 0,
            };
            // SAFETY: codes/order hold n entries, nodes/parents 2n - 1.
            unsafe {
                self.launch(
                    Kernel::Hierarchy,
                    self.blocks_for(n as usize),
                    self.block_size(),
                    &p,
                )?
            };
        }
        Ok((nodes, parents))
    }

    /// Spec step 6 on the device: recomputes every box of `bvh` from the primitive boxes
    /// `leaf_aabbs` (`gprox_bvh::refit::refit`). The tree's shape is checked first.
    pub fn refit(&self, bvh: &mut Bvh, leaf_aabbs: &[Aabb]) -> Result<()> {
        let n = validate_bvh(bvh, leaf_aabbs.len())?;
        if n == 0 {
            return Ok(());
        }
        let nodes = self.upload(&bvh.nodes)?;
        let parents = self.upload(&bvh.parents)?;
        let boxes = self.upload(leaf_aabbs)?;
        self.refit_dev(&nodes, &parents, &boxes, n)?;
        bvh.nodes = nodes.download()?;
        Ok(())
    }

    pub(crate) fn refit_dev(
        &self,
        nodes: &DeviceBuffer<BvhNode>,
        parents: &DeviceBuffer<u32>,
        boxes: &DeviceBuffer<Aabb>,
        n: u32,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let flags = self.alloc_zeros::<u32>((n as usize - 1).max(1))?;
        self.refit_with_flags(nodes, parents, boxes, &flags, n)
    }

    /// [`Device::refit_dev`] with visit flags that persist across refits (zeroed once: the
    /// kernel counts arrivals by parity, see `refit.cu`).
    pub(crate) fn refit_with_flags(
        &self,
        nodes: &DeviceBuffer<BvhNode>,
        parents: &DeviceBuffer<u32>,
        boxes: &DeviceBuffer<Aabb>,
        flags: &DeviceBuffer<u32>,
        n: u32,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if flags.len() < n as usize - 1 {
            return Err(CudaError::LengthMismatch {
                device: flags.len(),
                host: n as usize - 1,
            });
        }
        let p = RefitParams {
            nodes: nodes.device_ptr(),
            parents: parents.device_ptr(),
            boxes: boxes.device_ptr(),
            flags: flags.device_ptr(),
            count: n,
            pad: 0,
        };
        // SAFETY: nodes/parents hold 2n - 1 entries, flags n - 1 zeros, boxes every primitive
        // named by a leaf (validated or built by us).
        unsafe {
            self.launch(
                Kernel::Refit,
                self.blocks_for(n as usize),
                self.block_size(),
                &p,
            )
        }
    }

    /// Builds the LBVH of `mesh` on the device and downloads it: the mesh is the only upload,
    /// every stage stays on the device (launches only, no host synchronisation), and the
    /// finished tree comes back in one download of the nodes and one of the parents.
    /// Bit-identical to `gprox_bvh::lbvh::build`.
    ///
    /// ```
    /// use gprox_cuda::Device;
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mesh = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
    ///     vec![[0, 1, 2], [0, 1, 3], [0, 2, 3]],
    /// )
    /// .unwrap();
    /// let d = Device::emulated();
    /// let before = d.ops();
    /// let bvh = d.build_bvh(&mesh).unwrap();
    /// let used = d.ops() - before;
    /// assert_eq!(bvh, gprox_bvh::lbvh::build(&mesh));
    /// assert_eq!((used.syncs, used.h2d_bytes, used.d2h_bytes), (2, 4 * 12 + 3 * 12, 5 * 36));
    /// ```
    pub fn build_bvh(&self, mesh: &TriMesh) -> Result<Bvh> {
        self.build_dev(mesh)?.download()
    }

    /// Uploads `mesh` and builds its LBVH on the device, keeping every buffer there (see
    /// [`Device::build_bvh`]).
    pub(crate) fn build_dev(&self, mesh: &TriMesh) -> Result<DeviceTree> {
        let m = self.upload_mesh(mesh)?;
        let n = m.face_count;
        let boxes = self.prim_boxes_dev(&m)?;
        let (mut codes, mut order) = self.codes_dev(&boxes, n)?;
        self.sort_dev(&mut codes, &mut order, n)?;
        let (nodes, parents) = self.hierarchy_dev(&codes, &order, n)?;
        let refit_flags = self.alloc_zeros::<u32>((n as usize).max(2) - 1)?;
        self.refit_with_flags(&nodes, &parents, &boxes, &refit_flags, n)?;
        Ok(DeviceTree {
            mesh: m,
            boxes,
            nodes,
            parents,
            refit_flags,
        })
    }
}

/// A mesh and the LBVH built from it on the device ([`Device::build_dev`]), with the buffers a
/// resident mesh keeps for later refits.
pub(crate) struct DeviceTree {
    /// The uploaded mesh.
    pub mesh: DeviceMesh,
    /// The box of every face (the leaf boxes).
    pub boxes: DeviceBuffer<Aabb>,
    /// `2n - 1` nodes, refit.
    pub nodes: DeviceBuffer<BvhNode>,
    /// The parent of every node (`LEAF` for the root).
    pub parents: DeviceBuffer<u32>,
    /// The refit's visit flags after one refit (even counts: ready for the next).
    pub refit_flags: DeviceBuffer<u32>,
}

impl DeviceTree {
    /// The tree for the host: one download of the nodes, one of the parents.
    pub fn download(&self) -> Result<Bvh> {
        if self.mesh.face_count == 0 {
            return Ok(Bvh {
                nodes: Vec::new(),
                parents: Vec::new(),
            });
        }
        Ok(Bvh {
            nodes: self.nodes.download()?,
            parents: self.parents.download()?,
        })
    }
}

/// Checks that `bvh` has the LBVH shape the kernels rely on (`2n - 1` nodes and parents, leaves
/// in `n-1..`, children and primitives in range, a parent for every non-root node); returns `n`.
pub(crate) fn validate_bvh(bvh: &Bvh, primitives: usize) -> Result<u32> {
    let total = bvh.nodes.len();
    if total == 0 {
        return if bvh.parents.is_empty() {
            Ok(0)
        } else {
            Err(CudaError::InvalidBvh(format!(
                "no nodes but {} parents",
                bvh.parents.len()
            )))
        };
    }
    if total.is_multiple_of(2) || bvh.parents.len() != total {
        return Err(CudaError::InvalidBvh(format!(
            "{total} nodes and {} parents; expected 2n-1 of each",
            bvh.parents.len()
        )));
    }
    let n = check_count("bvh leaves", total.div_ceil(2))?;
    let first_leaf = n as usize - 1;
    for (i, node) in bvh.nodes.iter().enumerate() {
        let leaf = i >= first_leaf;
        if leaf != (node.right == LEAF) {
            return Err(CudaError::InvalidBvh(format!(
                "node {i}: leaves must be exactly the nodes {first_leaf}.. (right = LEAF)"
            )));
        }
        if leaf {
            if node.left as usize >= primitives {
                return Err(CudaError::InvalidBvh(format!(
                    "leaf node {i} refers to primitive {}, but there are only {primitives}",
                    node.left
                )));
            }
        } else {
            for c in [node.left, node.right] {
                if c as usize >= total || c == 0 || bvh.parents[c as usize] != i as u32 {
                    return Err(CudaError::InvalidBvh(format!(
                        "internal node {i}: child {c} out of range or its parent is not {i}"
                    )));
                }
            }
        }
    }
    if bvh.parents[0] != LEAF {
        return Err(CudaError::InvalidBvh(
            "the root's parent must be LEAF".into(),
        ));
    }
    // Every node reachable from the root exactly once (no cycles, nothing detached): children
    // have a unique parent (checked above), so counting the nodes reached suffices.
    let mut reached = 0usize;
    let mut stack = vec![0u32];
    while let Some(i) = stack.pop() {
        reached += 1;
        if reached > total {
            break;
        }
        let node = &bvh.nodes[i as usize];
        if node.right != LEAF {
            stack.push(node.left);
            stack.push(node.right);
        }
    }
    if reached != total {
        return Err(CudaError::InvalidBvh(format!(
            "the tree below the root does not hold each of the {total} nodes exactly once"
        )));
    }
    Ok(n)
}
