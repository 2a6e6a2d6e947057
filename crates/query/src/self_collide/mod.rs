//! Self-collision of one deforming triangle mesh: every unordered pair of triangles that share
//! no vertex and intersect (closed triangles, touching counts; exact test
//! [`gprox_geometry::tri_tri::triangles_intersect`]). Pairs sharing a vertex or an edge are
//! excluded by topology, not by distance.
//!
//! The BVTT self traversal ([`traverse`]) pairs a node with itself only through its children;
//! normal-cone culling skips nodes, and pairs of nodes below a node that was not skipped, whose
//! face set (or union of the two face sets) provably holds no such pair: certified direction
//! masks per face ([`gprox_bvh::normal_cone::certified_direction_mask`]) ANDed bottom-up, and
//! the contour test of the private `cull` module on boundary loops cached per node (private
//! `layout` module). Results are identical with and without culling. [`SelfCullCache`] keeps
//! the per-node data across frames ([`self_collide_cached`]); [`SelfCollider`] keeps the BVH
//! too (refit with a [`RebuildPolicy`]).

mod cull;
mod layout;
pub mod topology;
pub mod traverse;

use std::sync::{Mutex, TryLockError};

use glam::{Vec3, Vec3A};
use gprox_bvh::{
    lbvh::build_from_aabbs,
    rebuild_policy::{RebuildPolicy, Update},
    refit::{triangle_aabbs, RefitError},
    Bvh,
};
use gprox_geometry::{tri_tri::triangles_intersect, TriMesh};

pub use topology::{share_vertex, Topology};

use cull::Certifier;
use layout::Layout;
use traverse::Prune;

/// Errors of the self-collision query: the acceleration data does not belong to the mesh.
#[derive(Debug, thiserror::Error)]
pub enum SelfCollideError {
    /// The BVH has a different number of leaves than the mesh has faces.
    #[error("bvh has {leaves} leaves, the mesh has {faces} faces")]
    BvhMismatch {
        /// Leaves of the BVH.
        leaves: usize,
        /// Faces of the mesh.
        faces: usize,
    },
    /// The topology was computed for a different face count.
    #[error("topology describes {topology} faces, the mesh has {faces}")]
    TopologyMismatch {
        /// Faces in the topology.
        topology: usize,
        /// Faces of the mesh.
        faces: usize,
    },
    /// The normal-cone masks do not have one entry per BVH node.
    #[error("{masks} normal-cone masks for {nodes} bvh nodes")]
    MaskMismatch {
        /// Number of masks.
        masks: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// Refitting the BVH failed (it is not an LBVH of this mesh).
    #[error("refit failed: {0}")]
    Refit(#[from] RefitError),
}

/// Result of a self-collision query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelfCollisions {
    /// Intersecting non-adjacent face pairs `[a, b]`, `a < b`, sorted, no duplicates.
    pub pairs: Vec<[u32; 2]>,
    /// Non-adjacent leaf pairs with overlapping boxes (exact tests run).
    pub candidates: usize,
    /// Nodes (against themselves) and node pairs skipped by normal-cone culling.
    pub culled_nodes: usize,
}

/// Per-face normals (f32, unnormalised) of `mesh` in its current positions.
pub fn face_normals(mesh: &TriMesh) -> Vec<Vec3> {
    let p = mesh.positions();
    mesh.faces()
        .iter()
        .map(|f| {
            let [a, b, c] = f.map(|v| p[v as usize]);
            (b - a).cross(c - a)
        })
        .collect()
}

/// Every intersecting pair of non-adjacent faces of `mesh`, using `bvh` (an LBVH over the
/// mesh's current face boxes). `masks` switches normal-cone culling on: pass the node masks of
/// [`gprox_bvh::normal_cone::normal_cones`] over the same tree (checked for length; the query
/// recomputes certified masks itself and culls only what it proves, so the pairs are the same
/// with and without culling). Across frames, [`self_collide_cached`] reuses the culling data.
///
/// ```
/// use gprox_query::self_collide::{self_collide, Topology};
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// // Two triangles crossing each other, sharing no vertex.
/// let p = vec![Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0),
///              Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 1.0), Vec3::new(3.0, 3.0, 0.0)];
/// let mesh = TriMesh::new(p, vec![[0, 1, 2], [3, 4, 5]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&mesh);
/// let topo = Topology::new(mesh.faces(), mesh.vertex_count());
/// let r = self_collide(&mesh, &bvh, &topo, None).unwrap();
/// assert_eq!(r.pairs, vec![[0, 1]]);
/// ```
pub fn self_collide(
    mesh: &TriMesh,
    bvh: &Bvh,
    topo: &Topology,
    masks: Option<&[u32]>,
) -> Result<SelfCollisions, SelfCollideError> {
    check_inputs(mesh, bvh, topo)?;
    match masks {
        None => Ok(run(mesh, bvh, None)),
        Some(m) if m.len() != bvh.nodes.len() => Err(SelfCollideError::MaskMismatch {
            masks: m.len(),
            nodes: bvh.nodes.len(),
        }),
        Some(_) => self_collide_cached(mesh, bvh, topo, &mut SelfCullCache::default()),
    }
}

/// Reusable normal-cone culling state of one mesh topology and BVH layout: the per-node
/// boundary edges (kept while the tree is only refitted, rebuilt when the tree or the faces
/// change), the per-frame certified masks and the scratch of the certificates.
#[derive(Clone, Debug, Default)]
pub struct SelfCullCache {
    layout: Option<Layout>,
    masks: Vec<u32>,
    certifier: Certifier,
}

impl SelfCullCache {
    /// Builds the per-node data for `bvh` over `mesh` now (one-off setup; otherwise the first
    /// [`self_collide_cached`] builds it, and any call whose tree or faces differ rebuilds it).
    pub fn prepare(
        &mut self,
        mesh: &TriMesh,
        bvh: &Bvh,
        topo: &Topology,
    ) -> Result<(), SelfCollideError> {
        check_inputs(mesh, bvh, topo)?;
        self.fit(mesh, bvh, topo);
        Ok(())
    }

    /// Makes the layout fit `bvh` over `mesh`'s faces (rebuilt only when it does not).
    fn fit(&mut self, mesh: &TriMesh, bvh: &Bvh, topo: &Topology) {
        let faces = mesh.faces();
        if !self.layout.as_ref().is_some_and(|l| l.matches(bvh, faces)) {
            self.layout = Layout::new(bvh, faces, topo);
            self.certifier.forget_contours();
        }
        if self.certifier.vertex_count() != mesh.vertex_count() {
            self.certifier = Certifier::new(mesh.vertex_count());
        }
    }
}

/// [`self_collide`] with normal-cone culling, reusing `cache` across calls (frames): no
/// per-node data is rebuilt while `bvh` keeps its layout (refit only), nothing is allocated
/// per call but the result.
///
/// ```
/// use gprox_query::self_collide::{self_collide_cached, SelfCullCache, Topology};
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// let p = vec![Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0),
///              Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 1.0), Vec3::new(3.0, 3.0, 0.0)];
/// let mesh = TriMesh::new(p, vec![[0, 1, 2], [3, 4, 5]]).unwrap();
/// let bvh = gprox_bvh::lbvh::build(&mesh);
/// let topo = Topology::new(mesh.faces(), mesh.vertex_count());
/// let mut cache = SelfCullCache::default();
/// cache.prepare(&mesh, &bvh, &topo).unwrap(); // optional: setup outside the frame loop
/// for _frame in 0..2 {
///     let r = self_collide_cached(&mesh, &bvh, &topo, &mut cache).unwrap();
///     assert_eq!(r.pairs, vec![[0, 1]]);
/// }
/// ```
pub fn self_collide_cached(
    mesh: &TriMesh,
    bvh: &Bvh,
    topo: &Topology,
    cache: &mut SelfCullCache,
) -> Result<SelfCollisions, SelfCollideError> {
    check_inputs(mesh, bvh, topo)?;
    cache.fit(mesh, bvh, topo);
    let SelfCullCache {
        layout,
        masks,
        certifier,
    } = cache;
    let Some(layout) = layout.as_ref() else {
        return Ok(run(mesh, bvh, None));
    };
    layout.masks(mesh.positions(), masks);
    Ok(run(mesh, bvh, Some((layout, masks, certifier))))
}

/// A [`SelfCullCache`] behind a lock, for holders that answer self-collision through a shared
/// reference (a model, a [`SelfCollider`]): each query takes the cache for its duration; a
/// query that finds it taken by another thread runs on fresh scratch instead of waiting, and
/// one that finds it poisoned (a panic mid-query) starts it over. Cloning copies the cache.
#[derive(Debug, Default)]
pub struct SharedCullCache(Mutex<SelfCullCache>);

impl Clone for SharedCullCache {
    fn clone(&self) -> Self {
        match self.0.try_lock() {
            Ok(c) => Self(Mutex::new(c.clone())),
            Err(_) => Self::default(),
        }
    }
}

impl SharedCullCache {
    /// [`self_collide_cached`] on the held cache.
    pub fn self_collide(
        &self,
        mesh: &TriMesh,
        bvh: &Bvh,
        topo: &Topology,
    ) -> Result<SelfCollisions, SelfCollideError> {
        match self.0.try_lock() {
            Ok(mut cache) => self_collide_cached(mesh, bvh, topo, &mut cache),
            Err(TryLockError::Poisoned(e)) => {
                let mut cache = e.into_inner();
                *cache = SelfCullCache::default();
                self.0.clear_poison();
                self_collide_cached(mesh, bvh, topo, &mut cache)
            }
            Err(TryLockError::WouldBlock) => {
                self_collide_cached(mesh, bvh, topo, &mut SelfCullCache::default())
            }
        }
    }

    /// The held cache, for an exclusive holder (no locking).
    pub fn get_mut(&mut self) -> &mut SelfCullCache {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// Typed errors for a tree or topology that does not belong to `mesh`.
fn check_inputs(mesh: &TriMesh, bvh: &Bvh, topo: &Topology) -> Result<(), SelfCollideError> {
    let faces = mesh.faces();
    if bvh.leaf_count() != faces.len() || bvh.nodes.len() != (2 * faces.len()).saturating_sub(1) {
        return Err(SelfCollideError::BvhMismatch {
            leaves: bvh.leaf_count(),
            faces: faces.len(),
        });
    }
    if topo.face_count() != faces.len() {
        return Err(SelfCollideError::TopologyMismatch {
            topology: topo.face_count(),
            faces: faces.len(),
        });
    }
    Ok(())
}

/// In meshes of at least [`LARGE_MESH`] faces, node sets smaller than this are neither
/// certified nor descended: their leaf pairs are tested directly (reading the leaf boxes in
/// order is cheaper). A speed heuristic only: it never changes the pairs.
const MIN_CERTIFY_FACES: u32 = 16;
/// See [`MIN_CERTIFY_FACES`] (smaller meshes certify every node, which the tests exercise).
const LARGE_MESH: usize = 1024;

/// The traversal: plain, or culled with a prepared layout (masks of `mesh`'s positions).
fn run(
    mesh: &TriMesh,
    bvh: &Bvh,
    cull: Option<(&Layout, &[u32], &mut Certifier)>,
) -> SelfCollisions {
    let (faces, pos) = (mesh.faces(), mesh.positions());
    let mut candidates = 0usize;
    let mut pairs = Vec::new();
    let mut leaf = |a: u32, b: u32| {
        let (fa, fb) = (faces[a as usize], faces[b as usize]);
        if share_vertex(&fa, &fb) {
            return;
        }
        candidates += 1;
        let ta = fa.map(|v| pos[v as usize].as_dvec3());
        let tb = fb.map(|v| pos[v as usize].as_dvec3());
        if triangles_intersect(&ta, &tb) {
            pairs.push([a.min(b), a.max(b)]);
        }
    };
    let mut culled = 0usize;
    match cull {
        None => traverse::self_leaves(bvh, &mut leaf),
        Some((layout, masks, certifier)) => {
            let max_abs = pos
                .iter()
                .fold(0.0f64, |m, p| m.max(p.abs().max_element() as f64));
            // `Aabb::overlaps` as two 4-lane comparisons: no branch per axis (the outcome is
            // unpredictable in this traversal), same answer (false on NaN).
            let overlap = |i: u32, j: u32| {
                let (a, b) = (&bvh.nodes[i as usize].aabb, &bvh.nodes[j as usize].aabb);
                let v = |x: [f32; 3]| Vec3A::from_array(x);
                (v(a.min).cmple(v(b.max)) & v(b.min).cmple(v(a.max))).all()
            };
            let min_faces = if faces.len() >= LARGE_MESH {
                MIN_CERTIFY_FACES
            } else {
                0
            };
            let skip = |a: u32, b: u32| {
                let p = if a == b {
                    match certifier.certify_node(layout, masks, a, pos, max_abs) {
                        true => Prune::Skip,
                        false => Prune::Descend,
                    }
                } else {
                    certifier.certify_union(layout, masks, a, b, pos, max_abs)
                };
                culled += (p == Prune::Skip) as usize;
                p
            };
            let leaves = |a: u32, b: u32| {
                let (ra, rb) = (layout.range(a), layout.range(b));
                let size = |[f, l]: [u32; 2]| l - f + 1;
                let n = if a == b {
                    size(ra)
                } else {
                    size(ra) + size(rb)
                };
                (n < min_faces).then_some((ra, rb))
            };
            traverse::self_leaves_pruned(bvh, overlap, leaves, skip, &mut leaf);
        }
    }
    crate::pairs::sort_pairs(&mut pairs);
    pairs.dedup();
    SelfCollisions {
        pairs,
        candidates,
        culled_nodes: culled,
    }
}

/// Per-frame self-collision of a deforming mesh: keeps topology, BVH and the culling data;
/// [`SelfCollider::update`] refits (or rebuilds, by the [`RebuildPolicy`]) to new positions.
#[derive(Clone, Debug)]
pub struct SelfCollider {
    /// Adjacency of the mesh (constant).
    pub topology: Topology,
    /// LBVH over the current face boxes.
    pub bvh: Bvh,
    /// Certified normal-cone masks of `bvh` at the last update (empty when culling is off).
    pub masks: Vec<u32>,
    /// Refit/rebuild decision and its quality ratio.
    pub policy: RebuildPolicy,
    /// Whether normal-cone culling is used.
    pub culling: bool,
    /// Boundaries of the tree's nodes and the certificates' loops (culling only), kept across
    /// frames.
    cache: SharedCullCache,
}

impl SelfCollider {
    /// Builds everything for `mesh` in its current positions.
    pub fn new(mesh: &TriMesh, culling: bool) -> Self {
        let bvh = build_from_aabbs(&triangle_aabbs(mesh));
        let mut policy = RebuildPolicy::default();
        policy.reset(&bvh);
        let mut sc = Self {
            topology: Topology::new(mesh.faces(), mesh.vertex_count()),
            bvh,
            masks: Vec::new(),
            policy,
            culling,
            cache: SharedCullCache::default(),
        };
        sc.refresh(mesh);
        sc
    }

    /// Refits the culling data to the tree and the masks to the positions.
    fn refresh(&mut self, mesh: &TriMesh) {
        if !self.culling || self.bvh.nodes.len() < 3 {
            return;
        }
        let cache = self.cache.get_mut();
        cache.fit(mesh, &self.bvh, &self.topology);
        if let Some(l) = &cache.layout {
            l.masks(mesh.positions(), &mut self.masks);
        }
    }

    /// Brings the BVH (and masks) to the mesh's current positions: refit, or rebuild when the
    /// policy's quality ratio exceeds its threshold.
    pub fn update(&mut self, mesh: &TriMesh) -> Result<Update, SelfCollideError> {
        let boxes = triangle_aabbs(mesh);
        let u = self.policy.update(&mut self.bvh, &boxes)?;
        self.refresh(mesh);
        Ok(u)
    }

    /// Self-collision of `mesh` at the positions of the last [`SelfCollider::update`] (the
    /// culling is sound for any positions: the masks are recomputed for `mesh` when culling).
    pub fn query(&self, mesh: &TriMesh) -> Result<SelfCollisions, SelfCollideError> {
        if !self.culling {
            return self_collide(mesh, &self.bvh, &self.topology, None);
        }
        self.cache.self_collide(mesh, &self.bvh, &self.topology)
    }
}

#[cfg(test)]
mod tests {
    use gprox_bvh::lbvh;
    use gprox_geometry::scene::torus;
    use gprox_geometry::TriMesh;

    use super::{self_collide, self_collide_cached, SelfCullCache, SharedCullCache, Topology};

    /// The contours kept for one tree layout are dropped with it: node ids name other face
    /// sets in another tree over the same faces.
    #[test]
    fn a_new_layout_forgets_the_contours() {
        let mesh = torus(1.0, 0.3, 24, 12).unwrap();
        let topo = Topology::new(mesh.faces(), mesh.vertex_count());
        let mut cache = SelfCullCache::default();
        let bvh = lbvh::build(&mesh);
        self_collide_cached(&mesh, &bvh, &topo, &mut cache).unwrap();
        assert!(cache.certifier.contour_count() > 0);
        // The same tree again (refit): the contours stay.
        cache.prepare(&mesh, &bvh, &topo).unwrap();
        assert!(cache.certifier.contour_count() > 0);
        // A tree over the mirrored positions orders the faces differently.
        let mirrored: Vec<_> = mesh
            .positions()
            .iter()
            .map(|p| p * glam::Vec3::new(-1.0, 1.0, 0.5))
            .collect();
        let other = lbvh::build(&TriMesh::new(mirrored, mesh.faces().to_vec()).unwrap());
        assert_ne!(other.nodes, bvh.nodes);
        cache.prepare(&mesh, &other, &topo).unwrap();
        assert_eq!(cache.certifier.contour_count(), 0);
    }

    /// A shared cache answers as the plain traversal does whether it is free, taken by
    /// another holder (fresh scratch) or poisoned by a panic (started over, then kept again).
    #[test]
    fn shared_cache_answers_when_taken_or_poisoned() {
        let t = torus(1.0, 0.3, 24, 12).unwrap();
        // Fold the far half through the near one, so that there are pairs to find.
        let p = t
            .positions()
            .iter()
            .map(|v| {
                if v.x > 0.3 {
                    glam::Vec3::new(0.3 - 0.8 * (v.x - 0.3), v.y, v.z + 0.1)
                } else {
                    *v
                }
            })
            .collect();
        let mesh = TriMesh::new(p, t.faces().to_vec()).unwrap();
        let topo = Topology::new(mesh.faces(), mesh.vertex_count());
        let bvh = lbvh::build(&mesh);
        let want = self_collide(&mesh, &bvh, &topo, None).unwrap().pairs;
        assert!(!want.is_empty());
        let shared = SharedCullCache::default();
        let ask = || shared.self_collide(&mesh, &bvh, &topo).unwrap().pairs;
        assert_eq!(ask(), want);
        {
            let _held = shared.0.lock().unwrap();
            assert_eq!(ask(), want);
        }
        let poisoned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = shared.0.lock().unwrap();
            panic!("a query panics while holding the cache");
        }));
        assert!(poisoned.is_err() && shared.0.is_poisoned());
        assert_eq!(ask(), want);
        assert!(!shared.0.is_poisoned());
        assert!(shared.0.lock().unwrap().certifier.contour_count() > 0);
        assert_eq!(
            shared
                .clone()
                .self_collide(&mesh, &bvh, &topo)
                .unwrap()
                .pairs,
            want
        );
    }
}
