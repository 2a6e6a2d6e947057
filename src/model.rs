//! A mesh together with its bounding-volume hierarchy.

use glam::Vec3;
use gprox_bvh::{lbvh, refit, refit_plan::MeshRefitPlan, Bvh};
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
    /// The refit order of `bvh` over the faces of `mesh`, made by the first refit (only
    /// deforming meshes need one).
    plan: Option<MeshRefitPlan>,
}

impl Model {
    /// Builds the LBVH of `mesh` on the CPU (parallel with rayon).
    pub fn new(mesh: TriMesh) -> Self {
        let bvh = lbvh::build(&mesh);
        Self::from_trusted(mesh, bvh)
    }

    /// Pairs a mesh with a tree built elsewhere, checking that the tree fits the mesh (same
    /// primitive count, LBVH layout) by refitting it to the mesh.
    pub fn from_parts(mesh: TriMesh, mut bvh: Bvh) -> Result<Self, Error> {
        refit::refit_from_mesh(&mut bvh, &mesh)?;
        Ok(Self::from_trusted(mesh, bvh))
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
        self.refit()
    }

    /// Copies `positions` into the mesh and refits; avoids an allocation per frame.
    pub fn update_positions(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.mesh.copy_positions_from(positions)?;
        self.refit()
    }

    /// Refits the tree to the mesh with the cached [`MeshRefitPlan`], made (again) when there
    /// is none yet or the tree no longer matches it (backends may replace the tree).
    fn refit(&mut self) -> Result<(), Error> {
        if let Some(plan) = &self.plan {
            if plan.refit(&mut self.bvh, &self.mesh).is_ok() {
                return Ok(());
            }
        }
        let plan = MeshRefitPlan::new(&self.bvh, &self.mesh)?;
        plan.refit(&mut self.bvh, &self.mesh)?;
        self.plan = Some(plan);
        Ok(())
    }

    /// Pairs a mesh with a tree the caller knows was built for it (a device build).
    pub(crate) fn from_trusted(mesh: TriMesh, bvh: Bvh) -> Self {
        Self {
            mesh,
            bvh,
            plan: None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use gprox_geometry::scene::torus;

    /// `m`'s vertices scaled by `s` and moved along y.
    fn frame(s: f32, m: &Model) -> Vec<Vec3> {
        let shift = Vec3::new(0.0, s, 0.0);
        m.mesh()
            .positions()
            .iter()
            .map(|p| *p * s + shift)
            .collect()
    }

    /// `m`'s tree refitted by the free refit.
    fn expect(m: &Model) -> Bvh {
        let mut bvh = m.bvh().clone();
        refit::refit_from_mesh(&mut bvh, m.mesh()).unwrap();
        bvh
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Refits through the cached plan equal the free refit, also after the tree was replaced
    /// under the plan (as a device backend may do).
    #[test]
    fn planned_refits_match_the_free_refit() {
        pool(1).install(|| {
            let mut model = Model::new(torus(1.0, 0.3, 100, 50).unwrap());
            for s in [1.5, 0.5] {
                model.update_positions(&frame(s, &model)).unwrap();
                assert_eq!(model.bvh(), &expect(&model));
            }
            // A tree of other positions has another topology: the plan no longer fits.
            let moved = TriMesh::new(frame(-2.0, &model), model.mesh().faces().to_vec());
            let other = lbvh::build(&moved.unwrap());
            let children = |b: &Bvh| {
                b.nodes
                    .iter()
                    .map(|n| (n.left, n.right))
                    .collect::<Vec<_>>()
            };
            assert_ne!(children(&other), children(model.bvh()));
            *model.parts_mut().1 = other;
            model.set_positions(frame(1.25, &model)).unwrap();
            assert_eq!(model.bvh(), &expect(&model));
            assert!(model.plan.is_some());
        });
    }

    /// With more threads, a big tree's plan replays its parts in parallel: same boxes.
    #[test]
    fn big_trees_refit_in_parallel_with_threads() {
        pool(2).install(|| {
            let mut model = Model::new(torus(1.0, 0.3, 100, 50).unwrap());
            for s in [1.5, 0.75, 2.0] {
                model.update_positions(&frame(s, &model)).unwrap();
                assert_eq!(model.bvh(), &expect(&model));
            }
            assert!(model.plan.is_some());
        });
    }
}
