//! A mesh together with its bounding-volume hierarchy, and its copy on a device.

mod resident;
mod trimmed;

use std::sync::{Arc, Mutex, OnceLock};

use glam::Vec3;
use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
use gprox_bvh::wide_obb::WideObbTree;
use gprox_bvh::wide_rss::WideRssTree;
use gprox_bvh::{lbvh, refit, refit_plan::MeshRefitPlan, Bvh};
use gprox_cuda::distance::ResidentDistanceMesh;
use gprox_geometry::freeform::{FreeformModel, NurbsSurface};
use gprox_geometry::TriMesh;
use gprox_query::broad_phase::TreeShape;
use gprox_query::collide::CollideError;
use gprox_query::distance::DistanceError;
use gprox_query::self_collide::{SharedCullCache, Topology};

use crate::options::{CollisionTree, ModelOptions};
use crate::Error;
use resident::Resident;
use trimmed::Trimmed;

/// What a [`Model`] is made of, which decides the queries it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// A triangle mesh: every mesh query (collision, self-collision, CCD, distance,
    /// penetration, many bodies).
    Mesh,
    /// NURBS / Bézier surfaces with their Coons BVH: the freeform queries
    /// ([`Context::freeform_collide`](crate::Context::freeform_collide),
    /// [`Context::freeform_distance`](crate::Context::freeform_distance)).
    Freeform,
    /// Trimmed NURBS faces: the geometry-image queries
    /// ([`Context::image_collide`](crate::Context::image_collide),
    /// [`Context::image_self_collide`](crate::Context::image_self_collide)).
    Trimmed,
}

impl std::fmt::Display for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Mesh => "mesh",
            Self::Freeform => "freeform",
            Self::Trimmed => "trimmed",
        })
    }
}

/// The surfaces of a freeform model and their Coons BVH (built on first use).
#[derive(Debug)]
struct Freeform {
    surfaces: Vec<NurbsSurface>,
    coons_options: CoonsOptions,
    coons: OnceLock<Arc<CoonsBvh>>,
}

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
    distance_tree: Mutex<Option<(u64, Arc<WideRssTree>)>>,
    /// The distance query's device copy (wide RSS tree and mesh): device, version, copy.
    resident_distance: Mutex<Option<(u64, u64, Arc<ResidentDistanceMesh>)>>,
    /// Adjacency of the faces (self-collision and CCD), made on first use.
    topology: OnceLock<Topology>,
    /// The normal-cone culling data of CPU self-collision (per-node boundaries, the loops of
    /// the certificates), kept across frames while the tree is only refitted.
    self_cull: SharedCullCache,
    /// The tree's validated shape (many-body collision), made on first use: it depends on the
    /// tree's links only, which refits keep.
    tree_shape: OnceLock<Result<TreeShape, CollideError>>,
    /// The first two vertices at one position, if any (looked for on first use).
    duplicate: OnceLock<Option<[u32; 2]>>,
    /// The OBB tree of collision queries when the options ask for one, with its version.
    obb_tree: Mutex<Option<(u64, Arc<WideObbTree>)>>,
    /// How the model was asked to be built.
    options: ModelOptions,
    /// The surfaces of a freeform model (`mesh` is then their tessellation, for display).
    freeform: Option<Arc<Freeform>>,
    /// The faces of a trimmed model (`mesh` is then their untrimmed surfaces' tessellation).
    trimmed: Option<Arc<Trimmed>>,
    /// Unique id (the context's witness memory is keyed by it).
    id: u64,
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
            self_cull: SharedCullCache::default(),
            tree_shape: self.tree_shape.clone(),
            duplicate: self.duplicate.clone(),
            obb_tree: Mutex::new(None),
            options: self.options,
            freeform: self.freeform.clone(),
            trimmed: self.trimmed.clone(),
            id: crate::witness::next_model_id(),
        }
    }
}

impl Model {
    /// Builds the LBVH of `mesh` on the CPU (parallel with rayon).
    pub fn new(mesh: TriMesh) -> Self {
        let bvh = lbvh::build(&mesh);
        Self::from_trusted(mesh, bvh)
    }

    /// [`Model::new`] with options (the collision tree a CPU query uses).
    pub fn with_options(mesh: TriMesh, options: &ModelOptions) -> Self {
        Self::new(mesh).with(options)
    }

    /// The same model with `options`.
    pub(crate) fn with(mut self, options: &ModelOptions) -> Self {
        self.options = *options;
        self
    }

    /// A freeform model: NURBS / Bézier `surfaces` (model coordinates) for the freeform
    /// queries. Their Coons BVH is built on first use with `options.coons`; [`Model::mesh`] is
    /// their tessellation within `options.tessellation` × the model's size (for display and
    /// for [`Model::tessellated`]). Errors on an empty list or a surface that cannot be
    /// tessellated.
    ///
    /// ```
    /// use gprox::{geometry::freeform::teapot, Model, ModelKind, ModelOptions};
    /// let m = Model::freeform(teapot(), &ModelOptions::default()).unwrap();
    /// assert_eq!(m.kind(), ModelKind::Freeform);
    /// assert_eq!(m.surfaces().unwrap().len(), 32);
    /// ```
    pub fn freeform(surfaces: Vec<NurbsSurface>, options: &ModelOptions) -> Result<Self, Error> {
        let model = FreeformModel::new(surfaces)?;
        let mesh = model.tessellate(options.tessellation * model.unit())?;
        let mut m = Self::with_options(mesh, options);
        m.freeform = Some(Arc::new(Freeform {
            surfaces: model.surfaces,
            coons_options: options.coons,
            coons: OnceLock::new(),
        }));
        Ok(m)
    }

    /// What the model is made of.
    pub fn kind(&self) -> ModelKind {
        match (&self.freeform, &self.trimmed) {
            (Some(_), _) => ModelKind::Freeform,
            (None, Some(_)) => ModelKind::Trimmed,
            (None, None) => ModelKind::Mesh,
        }
    }

    /// The options the model was made with.
    pub fn options(&self) -> &ModelOptions {
        &self.options
    }

    /// The surfaces of a freeform model (`None` for a mesh).
    pub fn surfaces(&self) -> Option<&[NurbsSurface]> {
        self.freeform.as_ref().map(|f| f.surfaces.as_slice())
    }

    /// A mesh model of this model's triangles: for a freeform model its tessellation, so that
    /// the mesh queries can run on it (with the tessellation's error); a clone for a mesh.
    pub fn tessellated(&self) -> Self {
        Self::from_trusted(self.mesh.clone(), self.bvh().clone()).with(&self.options)
    }

    /// The surfaces of a freeform model and their Coons BVH (built on first use);
    /// [`Error::Unsupported`] for a mesh model (`query` and `which` name the call and argument).
    pub(crate) fn freeform_parts(
        &self,
        query: &'static str,
        which: &'static str,
    ) -> Result<(&[NurbsSurface], Arc<CoonsBvh>), Error> {
        let Some(f) = self.freeform.as_ref() else {
            return Err(self.unsupported(ModelKind::Freeform, query, which));
        };
        if let Some(t) = f.coons.get() {
            return Ok((&f.surfaces, t.clone()));
        }
        let t = CoonsBvh::build(&f.surfaces, &f.coons_options)?;
        Ok((&f.surfaces, f.coons.get_or_init(|| Arc::new(t)).clone()))
    }

    /// Two vertices at exactly the same position (the first such pair by vertex id), if any:
    /// an unwelded mesh, whose faces look apart to self-collision and CCD where they touch.
    pub fn duplicate_vertices(&self) -> Option<[u32; 2]> {
        *self.duplicate.get_or_init(|| {
            let mut seen = std::collections::HashMap::with_capacity(self.mesh.vertex_count());
            for (i, p) in self.mesh.positions().iter().enumerate() {
                let key = p.to_array().map(|x| (x + 0.0).to_bits());
                if let Some(&j) = seen.get(&key) {
                    return Some([j, i as u32]);
                }
                seen.insert(key, i as u32);
            }
            None
        })
    }

    /// Whether an OBB tree was built (for the tests of [`CollisionTree::Auto`]).
    #[cfg(test)]
    pub(crate) fn has_obb_tree(&self) -> bool {
        self.obb_tree
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Whether the positions ever moved (the model deforms).
    pub(crate) fn moved(&self) -> bool {
        self.version != 0
    }

    /// The OBB tree of collision queries over the current positions when the options ask for
    /// one — [`CollisionTree::Obb`], or [`CollisionTree::Auto`] with `apart` (the caller's
    /// verdict: the context last found this pair apart and neither model ever moved) — built on
    /// first use and rebuilt after the positions moved, in eight-box lanes; `None` for the AABB
    /// LBVH (also when the tree cannot be collapsed: 2³¹ faces or more).
    pub(crate) fn obb_tree(&self, apart: bool) -> Option<Arc<WideObbTree>> {
        let wanted = match self.options.collision_tree {
            CollisionTree::Obb => true,
            CollisionTree::Auto => apart,
            CollisionTree::Aabb => false,
        };
        if !wanted {
            return None;
        }
        let mut slot = self.obb_tree.lock().unwrap_or_else(|e| e.into_inner());
        Some(match slot.as_ref() {
            Some((v, t)) if *v == self.version => t.clone(),
            _ => {
                let t = Arc::new(WideObbTree::build(&self.mesh).ok()?);
                *slot = Some((self.version, t.clone()));
                t
            }
        })
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

    /// Moves the vertices (same count, same topology) and refits the tree on the CPU. A
    /// freeform model cannot move its tessellation ([`Error::Unsupported`]).
    pub fn set_positions(&mut self, positions: Vec<Vec3>) -> Result<(), Error> {
        self.require(ModelKind::Mesh, "set_positions", "the model")?;
        self.mesh.set_positions(positions)?;
        self.version += 1;
        self.refit()
    }

    /// Copies `positions` into the mesh and refits; avoids an allocation per frame.
    pub fn update_positions(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.require(ModelKind::Mesh, "update", "the model")?;
        self.mesh.copy_positions_from(positions)?;
        self.version += 1;
        self.refit()
    }

    /// Copies `positions` into the mesh without refitting the host tree (a device copy is
    /// refit instead); the host tree is refit when next asked for.
    pub(crate) fn move_positions_for_device(&mut self, positions: &[Vec3]) -> Result<(), Error> {
        self.require(ModelKind::Mesh, "update", "the model")?;
        self.mesh.copy_positions_from(positions)?;
        self.version += 1;
        self.stale = true;
        self.fresh = OnceLock::new();
        Ok(())
    }

    /// [`Error::Unsupported`] unless the model is of `kind`; `query` and `which` name the call
    /// and the argument in the message.
    pub(crate) fn require(
        &self,
        kind: ModelKind,
        query: &'static str,
        which: &'static str,
    ) -> Result<(), Error> {
        if self.kind() == kind {
            return Ok(());
        }
        Err(self.unsupported(kind, query, which))
    }

    /// The error of asking this model for a query that needs a model of `kind`.
    fn unsupported(&self, kind: ModelKind, query: &'static str, which: &'static str) -> Error {
        Error::Unsupported {
            query,
            which,
            kind: self.kind(),
            hint: match kind {
                ModelKind::Mesh => {
                    "mesh queries need a mesh model (`Model::tessellated` gives one of a \
                     freeform model)"
                }
                ModelKind::Freeform => {
                    "freeform queries need freeform models (`Context::freeform_model`)"
                }
                ModelKind::Trimmed => {
                    "geometry-image queries need trimmed models (`Context::trimmed_model`)"
                }
            },
        }
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

    /// The adjacency of the mesh's faces (shared vertices and edges), made on first use: what
    /// self-collision and CCD need besides the tree.
    pub fn topology(&self) -> &Topology {
        self.topology
            .get_or_init(|| Topology::new(self.mesh.faces(), self.mesh.vertex_count()))
    }

    /// The normal-cone culling data of CPU self-collision, kept across frames.
    pub(crate) fn self_cull(&self) -> &SharedCullCache {
        &self.self_cull
    }

    /// The shape of the tree ([`TreeShape`]), made on first use: many-body collision refits it
    /// to each body's world corners instead of validating the tree on every call.
    pub(crate) fn tree_shape(&self) -> Result<&TreeShape, Error> {
        let shape = self
            .tree_shape
            .get_or_init(|| TreeShape::new(&self.bvh, &self.mesh));
        Ok(shape.as_ref().map_err(Clone::clone)?)
    }

    /// The RSS tree of distance queries over the current positions, in eight-wide lanes with
    /// its binary tree: built on first use and rebuilt after the positions moved (distance needs
    /// tight oriented volumes, which a refit of the LBVH's boxes does not give).
    pub(crate) fn distance_tree(&self) -> Result<Arc<WideRssTree>, Error> {
        let mut slot = self.distance_tree.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some((v, t)) if *v == self.version => Ok(t.clone()),
            _ => {
                let t = Arc::new(WideRssTree::build(&self.mesh).map_err(DistanceError::from)?);
                *slot = Some((self.version, t.clone()));
                Ok(t)
            }
        }
    }

    /// This model's process-wide unique id.
    pub(crate) fn id(&self) -> u64 {
        self.id
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
            self_cull: SharedCullCache::default(),
            tree_shape: OnceLock::new(),
            duplicate: OnceLock::new(),
            obb_tree: Mutex::new(None),
            options: ModelOptions::default(),
            freeform: None,
            trimmed: None,
            id: crate::witness::next_model_id(),
        }
    }

    /// Mutable access for tests that replace the tree.
    #[cfg(test)]
    pub(crate) fn parts_mut(&mut self) -> (&mut TriMesh, &mut Bvh) {
        self.tree_shape = OnceLock::new();
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
