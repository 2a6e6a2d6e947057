//! A mesh together with its bounding-volume hierarchy, and its copy on a device.

use std::sync::{Arc, Mutex, OnceLock};

use glam::Vec3;
use gprox_bvh::{bv_tree::BvTree, lbvh, refit, refit_plan::MeshRefitPlan, rss::Rss, Bvh};
use gprox_cuda::distance::ResidentDistanceMesh;
use gprox_cuda::{Device, ResidentMesh};
use gprox_geometry::TriMesh;
use gprox_query::self_collide::Topology;

use crate::Error;

/// A triangle mesh and its LBVH, ready for queries on any backend.
///
/// The tree is built on the CPU by [`Model::new`] (or on a device through
/// [`Context::model`](crate::Context::model)); both give the same tree bit for bit. A deforming
/// mesh moves to its next frame with [`Model::set_positions`] (CPU refit) or
/// [`Context::update`](crate::Context::update) (refit where the context runs).
///
/// On a GPU context the model keeps a device copy of its mesh and tree from first use until it
/// is dropped: queries upload nothing, and an update uploads only the new positions and refits
/// on the device. The host tree is then brought up to date only if it is asked for
/// ([`Model::bvh`]). Cloning a model copies the host side only.
///
/// ```
/// use gprox::{geometry::scene::torus, Model};
/// let mut model = Model::new(torus(1.0, 0.3, 16, 8).unwrap());
/// let moved: Vec<_> = model.mesh().positions().iter().map(|p| *p * 2.0).collect();
/// model.set_positions(moved).unwrap();
/// assert!(model.bvh().root_aabb().max[0] > 2.5);
/// ```
#[derive(Debug)]
pub struct Model {
    mesh: TriMesh,
    /// The tree; its boxes are those of `mesh` unless `stale` (a device refit moved on).
    bvh: Bvh,
    /// Set by updates that refit only on a device: `bvh` has the right shape but old boxes.
    stale: bool,
    /// `bvh` refit to the current positions on demand while `stale`.
    fresh: OnceLock<Bvh>,
    /// The refit order of `bvh` over the faces of `mesh`, made by the first refit (only
    /// deforming meshes need one).
    plan: Option<MeshRefitPlan>,
    /// Counts position changes, so a device copy knows whether it is current.
    version: u64,
    /// The device copy (one device at a time).
    resident: Mutex<Option<Resident>>,
    /// The RSS tree of distance queries, built on first use, with the version it was built at.
    distance_tree: Mutex<Option<(u64, Arc<BvTree<Rss>>)>>,
    /// The distance query's device copy (wide RSS tree and mesh): device, version, copy.
    resident_distance: Mutex<Option<(u64, u64, Arc<ResidentDistanceMesh>)>>,
    /// Adjacency of the faces (self-collision and CCD), made on first use.
    topology: OnceLock<Topology>,
}

/// A model's copy on one device, at one version of its positions.
#[derive(Debug)]
struct Resident {
    device: u64,
    version: u64,
    mesh: Arc<ResidentMesh>,
}

impl Clone for Model {
    fn clone(&self) -> Self {
        Self {
            mesh: self.mesh.clone(),
            bvh: self.bvh.clone(),
            stale: self.stale,
            fresh: self.fresh.clone(),
            plan: self.plan.clone(),
            version: self.version,
            resident: Mutex::new(None),
            distance_tree: Mutex::new(None),
            resident_distance: Mutex::new(None),
            topology: self.topology.clone(),
        }
    }
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

    /// The hierarchy over the mesh's faces, with the boxes of the current positions (after an
    /// update that refit only on a device, the host copy is refit on first call).
    pub fn bvh(&self) -> &Bvh {
        if !self.stale {
            return &self.bvh;
        }
        self.fresh.get_or_init(|| {
            let mut t = self.bvh.clone();
            // Cannot fail: the tree was built for this mesh's faces, only positions changed.
            match refit::refit_from_mesh(&mut t, &self.mesh) {
                Ok(()) => t,
                Err(_) => lbvh::build(&self.mesh),
            }
        })
    }

    /// Number of triangles.
    pub fn face_count(&self) -> usize {
        self.mesh.face_count()
    }

    /// Moves the vertices (same count, same topology) and refits the tree on the CPU.
    pub fn set_positions(&mut self, positions: Vec<Vec3>) -> Result<(), Error> {
        self.mesh.set_positions(positions)?;
        self.version += 1;
        self.refit()
    }

    /// Copies `positions` into the mesh and refits; avoids an allocation per frame.
    pub fn update_positions(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.mesh.copy_positions_from(positions)?;
        self.version += 1;
        self.refit()
    }

    /// Copies `positions` into the mesh without refitting the host tree (a device copy is
    /// refit instead); the host tree is refit when next asked for.
    pub(crate) fn move_positions_for_device(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.mesh.copy_positions_from(positions)?;
        self.version += 1;
        self.stale = true;
        self.fresh = OnceLock::new();
        Ok(())
    }

    /// Refits the tree to the mesh with the cached [`MeshRefitPlan`], made (again) when there
    /// is none yet or the tree no longer matches it (backends may replace the tree).
    fn refit(&mut self) -> Result<(), Error> {
        self.stale = false;
        self.fresh = OnceLock::new();
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

    /// The model's copy on `device`, current with its positions: made on first use (an
    /// upload of mesh and tree), brought up to date by uploading the positions and refitting
    /// on the device when the host positions moved since.
    pub(crate) fn resident(&self, device: &Device) -> Result<Arc<ResidentMesh>, Error> {
        let mut slot = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = slot.as_mut().filter(|r| r.device == device.id()) {
            if r.version != self.version {
                match Arc::get_mut(&mut r.mesh) {
                    Some(m) => m.update(self.mesh.positions())?,
                    // Still in use by a query on another thread: a fresh copy for this one.
                    None => r.mesh = Arc::new(ResidentMesh::new(device, &self.mesh, &self.bvh)?),
                }
                r.version = self.version;
            }
            return Ok(r.mesh.clone());
        }
        // The host tree's shape with the current positions: upload, then a device refit if
        // its boxes are stale.
        let mut mesh = ResidentMesh::new(device, &self.mesh, &self.bvh)?;
        if self.stale {
            mesh.update(self.mesh.positions())?;
        }
        let mesh = Arc::new(mesh);
        *slot = Some(Resident {
            device: device.id(),
            version: self.version,
            mesh: mesh.clone(),
        });
        Ok(mesh)
    }

    /// The adjacency of the mesh's faces (shared vertices and edges), made on first use: what
    /// self-collision and CCD need besides the tree.
    pub fn topology(&self) -> &Topology {
        self.topology
            .get_or_init(|| Topology::new(self.mesh.faces(), self.mesh.vertex_count()))
    }

    /// The RSS tree of distance queries over the current positions: built on first use and
    /// rebuilt after the positions moved (distance needs tight oriented volumes, which a refit
    /// of the LBVH's boxes does not give).
    pub(crate) fn distance_tree(&self) -> Arc<BvTree<Rss>> {
        let mut slot = self.distance_tree.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some((v, t)) if *v == self.version => t.clone(),
            _ => {
                let t = Arc::new(BvTree::<Rss>::build(&self.mesh));
                *slot = Some((self.version, t.clone()));
                t
            }
        }
    }

    /// The distance query's copy on `device` (8-wide RSS tree and mesh), current with the
    /// positions: made on first use and after the positions moved.
    pub(crate) fn resident_distance(
        &self,
        device: &Device,
    ) -> Result<Arc<ResidentDistanceMesh>, Error> {
        let mut slot = self
            .resident_distance
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((d, v, r)) = slot.as_ref() {
            if *d == device.id() && *v == self.version {
                return Ok(r.clone());
            }
        }
        let tree = self.distance_tree();
        let r = Arc::new(ResidentDistanceMesh::new(device, &self.mesh, &tree)?);
        *slot = Some((device.id(), self.version, r.clone()));
        Ok(r)
    }

    /// Pairs a mesh with a tree the caller knows was built for it (a device build).
    pub(crate) fn from_trusted(mesh: TriMesh, bvh: Bvh) -> Self {
        Self {
            mesh,
            bvh,
            stale: false,
            fresh: OnceLock::new(),
            plan: None,
            version: 0,
            resident: Mutex::new(None),
            distance_tree: Mutex::new(None),
            resident_distance: Mutex::new(None),
            topology: OnceLock::new(),
        }
    }

    /// Mutable access for tests that replace the tree.
    #[cfg(test)]
    pub(crate) fn parts_mut(&mut self) -> (&mut TriMesh, &mut Bvh) {
        (&mut self.mesh, &mut self.bvh)
    }

    /// Splits into mesh and tree (the tree refit to the current positions).
    pub fn into_parts(mut self) -> (TriMesh, Bvh) {
        let bvh = if self.stale {
            self.fresh.take().unwrap_or_else(|| self.bvh().clone())
        } else {
            self.bvh
        };
        (self.mesh, bvh)
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

    /// Models and contexts cross threads (a physics engine queries from its worker threads).
    #[test]
    fn models_and_contexts_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Model>();
        check::<crate::Context>();
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
