//! A mesh together with its bounding-volume hierarchy.

use glam::Vec3;
use gprox_bvh::{lbvh, refit, Bvh};
use gprox_geometry::TriMesh;

use crate::Error;

/// A triangle mesh and its LBVH, ready for queries on any backend.
///
/// The tree is built on the CPU by [`Model::new`] (or on a device through
/// [`Context::model`](crate::Context::model)); both give the same tree bit for bit. A deforming
/// mesh moves to its next frame with [`Model::set_positions`], which refits the tree.
///
/// ```
/// use gprox::{geometry::scene::torus, Model};
/// let mut model = Model::new(torus(1.0, 0.3, 16, 8).unwrap());
/// let moved: Vec<_> = model.mesh().positions().iter().map(|p| *p * 2.0).collect();
/// model.set_positions(moved).unwrap();
/// assert!(model.bvh().root_aabb().max[0] > 2.5);
/// ```
#[derive(Clone, Debug)]
pub struct Model {
    mesh: TriMesh,
    bvh: Bvh,
}

impl Model {
    /// Builds the LBVH of `mesh` on the CPU (parallel with rayon).
    pub fn new(mesh: TriMesh) -> Self {
        let bvh = lbvh::build(&mesh);
        Self { mesh, bvh }
    }

    /// Pairs a mesh with a tree built elsewhere, checking that the tree fits the mesh (same
    /// primitive count, LBVH layout) by refitting it to the mesh.
    pub fn from_parts(mesh: TriMesh, mut bvh: Bvh) -> Result<Self, Error> {
        refit::refit_from_mesh(&mut bvh, &mesh)?;
        Ok(Self { mesh, bvh })
    }

    /// The mesh (current positions).
    pub fn mesh(&self) -> &TriMesh {
        &self.mesh
    }

    /// The hierarchy over the mesh's faces.
    pub fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    /// Number of triangles.
    pub fn face_count(&self) -> usize {
        self.mesh.face_count()
    }

    /// Moves the vertices (same count, same topology) and refits the tree on the CPU.
    pub fn set_positions(&mut self, positions: Vec<Vec3>) -> Result<(), Error> {
        self.mesh.set_positions(positions)?;
        refit::refit_from_mesh(&mut self.bvh, &self.mesh)?;
        Ok(())
    }

    /// Copies `positions` into the mesh and refits; avoids an allocation per frame.
    pub fn update_positions(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.mesh.copy_positions_from(positions)?;
        refit::refit_from_mesh(&mut self.bvh, &self.mesh)?;
        Ok(())
    }

    /// Pairs a mesh with a tree the caller knows was built for it (a device build).
    pub(crate) fn from_trusted(mesh: TriMesh, bvh: Bvh) -> Self {
        Self { mesh, bvh }
    }

    /// Mutable access for backends that refit on a device.
    pub(crate) fn parts_mut(&mut self) -> (&mut TriMesh, &mut Bvh) {
        (&mut self.mesh, &mut self.bvh)
    }

    /// Splits into mesh and tree.
    pub fn into_parts(self) -> (TriMesh, Bvh) {
        (self.mesh, self.bvh)
    }
}
