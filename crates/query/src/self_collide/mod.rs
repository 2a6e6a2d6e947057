//! Self-collision of one deforming triangle mesh: every unordered pair of triangles that share
//! no vertex and intersect (closed triangles, touching counts; exact test
//! [`gprox_geometry::tri_tri::triangles_intersect`]). Pairs sharing a vertex or an edge are
//! excluded by topology, not by distance.
//!
//! The BVTT self traversal ([`traverse`]) pairs a node with itself only through its children;
//! normal-cone culling ([`gprox_bvh::normal_cone`] masks as a hint, the private `cull` module's certificate as
//! the proof) skips nodes that provably hold no such pair, so results are identical with and
//! without culling. [`SelfCollider`] keeps the BVH across frames (refit with a
//! [`RebuildPolicy`]).

mod cull;
pub mod topology;
pub mod traverse;

use glam::Vec3;
use gprox_bvh::{
    lbvh::build_from_aabbs,
    normal_cone::normal_cones,
    rebuild_policy::{RebuildPolicy, Update},
    refit::{triangle_aabbs, RefitError},
    Bvh,
};
use gprox_geometry::{tri_tri::triangles_intersect, TriMesh};

pub use topology::{share_vertex, Topology};

use cull::Certifier;

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
    /// Nodes skipped by normal-cone culling.
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
/// mesh's current face boxes) and, when `masks` is given (from
/// [`gprox_bvh::normal_cone::normal_cones`] over the same tree), normal-cone culling.
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
    let faces = mesh.faces();
    if bvh.leaf_count() != faces.len() || bvh.nodes.len() != 2 * faces.len() - 1 {
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
    if let Some(m) = masks {
        if m.len() != bvh.nodes.len() {
            return Err(SelfCollideError::MaskMismatch {
                masks: m.len(),
                nodes: bvh.nodes.len(),
            });
        }
    }
    let pos = mesh.positions();
    let max_abs = pos
        .iter()
        .fold(0.0f64, |m, p| m.max(p.abs().max_element() as f64));
    let n1 = bvh.first_leaf();
    let mut certifier = masks.map(|_| Certifier::new(faces.len(), pos.len()));
    let mut set: Vec<u32> = Vec::new();
    let mut out = SelfCollisions::default();
    let mut culled = 0usize;
    let mut candidates = 0usize;
    let mut pairs = Vec::new();
    traverse::self_leaves_culled(
        bvh,
        |node, first, last| {
            let (Some(m), Some(c)) = (masks, certifier.as_mut()) else {
                return false;
            };
            let mask = m[node as usize];
            if mask == 0 {
                return false;
            }
            set.clear();
            set.extend((first as usize..=last as usize).map(|k| bvh.nodes[n1 + k].left));
            let ok = c.certify(&set, mask, faces, pos, topo, max_abs);
            culled += ok as usize;
            ok
        },
        |a, b| {
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
        },
    );
    pairs.sort_unstable();
    pairs.dedup();
    out.pairs = pairs;
    out.candidates = candidates;
    out.culled_nodes = culled;
    Ok(out)
}

/// Per-frame self-collision of a deforming mesh: keeps topology, BVH and normal-cone masks;
/// [`SelfCollider::update`] refits (or rebuilds, by the [`RebuildPolicy`]) to new positions.
#[derive(Clone, Debug)]
pub struct SelfCollider {
    /// Adjacency of the mesh (constant).
    pub topology: Topology,
    /// LBVH over the current face boxes.
    pub bvh: Bvh,
    /// Normal-cone masks of `bvh` (empty when culling is off).
    pub masks: Vec<u32>,
    /// Refit/rebuild decision and its quality ratio.
    pub policy: RebuildPolicy,
    /// Whether normal-cone culling is used.
    pub culling: bool,
}

impl SelfCollider {
    /// Builds everything for `mesh` in its current positions.
    pub fn new(mesh: &TriMesh, culling: bool) -> Self {
        let bvh = build_from_aabbs(&triangle_aabbs(mesh));
        let mut policy = RebuildPolicy::default();
        policy.reset(&bvh);
        let masks = if culling {
            normal_cones(&bvh, &face_normals(mesh))
        } else {
            Vec::new()
        };
        Self {
            topology: Topology::new(mesh.faces(), mesh.vertex_count()),
            bvh,
            masks,
            policy,
            culling,
        }
    }

    /// Brings the BVH (and masks) to the mesh's current positions: refit, or rebuild when the
    /// policy's quality ratio exceeds its threshold.
    pub fn update(&mut self, mesh: &TriMesh) -> Result<Update, SelfCollideError> {
        let boxes = triangle_aabbs(mesh);
        let u = self.policy.update(&mut self.bvh, &boxes)?;
        if self.culling {
            self.masks = normal_cones(&self.bvh, &face_normals(mesh));
        }
        Ok(u)
    }

    /// Self-collision of `mesh` at the positions of the last [`SelfCollider::update`].
    pub fn query(&self, mesh: &TriMesh) -> Result<SelfCollisions, SelfCollideError> {
        let masks = self.culling.then_some(self.masks.as_slice());
        self_collide(mesh, &self.bvh, &self.topology, masks)
    }
}
