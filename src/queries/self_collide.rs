//! Self-collision of one mesh model: intersecting faces that share no vertex.

use crate::{Context, Error, Model, ModelKind};

impl Context {
    /// Every intersecting pair of faces of `model` that share no vertex (`[a, b]`, `a < b`,
    /// sorted): the model's self-collision, exact, none missed (the model keeps its face
    /// adjacency). On the CPU with normal-cone culling, whose per-node data the model keeps
    /// from frame to frame while [`Context::update`] only refits its tree; on a device the
    /// resident tree is traversed against itself with one host synchronisation.
    ///
    /// Errors with [`Error::Unwelded`] when two vertices of the mesh sit at one position: the
    /// faces around them touch without sharing a vertex id, so every one of them would be
    /// reported.
    ///
    /// ```
    /// use gprox::{geometry::TriMesh, Backend, Context};
    /// use glam::Vec3;
    /// // Two triangles crossing each other, sharing no vertex.
    /// let p = vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0),
    ///              Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 1.0), Vec3::new(3.0, 3.0, 0.0)];
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(TriMesh::new(p, vec![[0, 1, 2], [3, 4, 5]]).unwrap()).unwrap();
    /// assert_eq!(ctx.self_collide(&m).unwrap(), vec![[0, 1]]);
    /// ```
    pub fn self_collide(&self, model: &Model) -> Result<Vec<[u32; 2]>, Error> {
        welded("self_collide", model)?;
        match &self.device {
            None => {
                let cull = model.self_cull();
                Ok(cull
                    .self_collide(model.mesh(), model.bvh(), model.topology())?
                    .pairs)
            }
            Some(d) => {
                let r = model.resident(d)?;
                let balance = gprox_cuda::BalanceOptions::default();
                Ok(d.self_collide_resident(&r, model.mesh(), &balance)?.pairs)
            }
        }
    }
}

/// A self query needs a mesh model whose touching faces share vertex ids.
pub(super) fn welded(query: &'static str, model: &Model) -> Result<(), Error> {
    model.require(ModelKind::Mesh, query, "the model")?;
    match model.duplicate_vertices() {
        Some(vertices) => Err(Error::Unwelded { query, vertices }),
        None => Ok(()),
    }
}
