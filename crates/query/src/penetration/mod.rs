//! Vertex penetration between two closed triangle meshes: every vertex of A strictly inside B
//! (and of B inside A), its depth (distance to the other surface), the closest surface point,
//! its face and the unit direction out.
//!
//! * **Closedness** (`closed.rs`): each mesh must be closed and consistently oriented — every
//!   edge shared by exactly two faces that traverse it in opposite directions — or the query
//!   fails with [`PenetrationError::NotClosed`] / [`PenetrationError::NotOriented`] naming the
//!   object, the edge (its two vertex ids) and a face on it. Only then is "inside" well defined
//!   (the winding number of a closed oriented surface).
//! * **World coordinates** (`world.rs`): vertices go through
//!   [`gprox_geometry::transform::transform_point`] (the f64 world coordinates every exact test
//!   uses) and each mesh's LBVH is refitted to them with exact f64 min/max boxes — no padding
//!   needed, one O(n) pass per query.
//! * **Inside, exactly** (`inside.rs`): the winding number along an axis-parallel ray from the
//!   vertex, with exact `orient2d`/`orient3d` signs ([`gprox_geometry::predicates`]) and a
//!   symbolic perturbation of the ray (Simulation of Simplicity) instead of re-shooting: a ray
//!   through an edge or a vertex is resolved by a fixed, consistent tie-break, so the count is
//!   exact for the f64 world coordinates with no retry loop and no tolerance. The ray is traced
//!   through the world tree (slab test per node); the axis and direction are those of the
//!   shortest way out of the mesh's box. Inside means a non-zero winding number. Chosen over
//!   ray re-shooting because an axis-parallel ray needs only 2-D signs per face and its node
//!   test is four comparisons; and over a solid-angle winding number because that one is not
//!   exact.
//! * **Strictly inside**: a vertex on the other surface (on a closed face, exactly) is *not*
//!   inside; it is not reported (its depth would be 0).
//! * **Depth**: the smallest [`gprox_geometry::tri_distance::point_triangle_distance`] over the
//!   other mesh's faces, found by a depth-first nearest search in the world tree (`world.rs`):
//!   the faces the inside ray crossed give the first bound, then nearer child first, pruning
//!   with a rounding slack so the minimum is exactly the brute-force minimum (the smallest face
//!   id wins ties). The direction is the unit vector from the vertex to that closest point.
//!
//! Vertices outside the other mesh's box are rejected at once; the rest run in parallel (rayon)
//! when there are enough of them. Results are in vertex order, so sums are deterministic.
//!
//! ```
//! use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
//! use gprox_query::collide::CollisionObject;
//! use gprox_query::penetration::penetration;
//! // A unit tetrahedron, and a copy moved so that its corner (0,0,0) lands at (0.1,0.1,0.1).
//! let tet = TriMesh::new(
//!     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
//!     vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
//! )
//! .unwrap();
//! let bvh = gprox_bvh::lbvh::build(&tet);
//! let a = CollisionObject::new(&tet, &bvh, Pose64::IDENTITY).unwrap();
//! let mut pose = Pose64::IDENTITY;
//! (pose.rows[0][3], pose.rows[1][3], pose.rows[2][3]) = (0.1, 0.1, 0.1);
//! let b = CollisionObject::new(&tet, &bvh, pose).unwrap();
//! let r = penetration(&a, &b).unwrap();
//! assert_eq!(r.inside_vertices(), 1); // B's vertex 0 is inside A, 0.1 below three faces
//! assert_eq!(r.b_in_a()[0].vertex, 0);
//! assert!((r.max_depth() - 0.1).abs() < 1e-12);
//! ```

pub(crate) mod closed;
pub(crate) mod inside;
pub(crate) mod world;

use glam::DVec3;
use rayon::prelude::*;

use crate::collide::{CollisionObject, Side};
use inside::{classify, Place, SEEDS};
use world::World;

/// One vertex strictly inside the other mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenetratingVertex {
    /// Vertex id in its own mesh.
    pub vertex: u32,
    /// Its world position (f64, from `transform_point`).
    pub position: DVec3,
    /// Distance to the other mesh's surface (> 0).
    pub depth: f64,
    /// Closest point on the other surface (world).
    pub closest: DVec3,
    /// Face of the other mesh holding `closest`.
    pub face: u32,
    /// Unit vector from `position` towards `closest`: the direction to push the vertex out.
    /// When the depth is too small for a direction to be computed, the unit normal of `face`
    /// oriented outwards instead (zero for a degenerate face).
    pub direction: DVec3,
    /// Winding number of the other mesh around the vertex (±1 for a simple closed surface: +1
    /// when it is oriented outwards).
    pub winding: i32,
}

/// Result of [`penetration`]: the vertices of A inside B and those of B inside A, each list in
/// vertex order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Penetration {
    a_in_b: Vec<PenetratingVertex>,
    b_in_a: Vec<PenetratingVertex>,
}

impl Penetration {
    /// Vertices of A strictly inside B (ascending vertex id; `face` is a face of B).
    pub fn a_in_b(&self) -> &[PenetratingVertex] {
        &self.a_in_b
    }

    /// Vertices of B strictly inside A (ascending vertex id; `face` is a face of A).
    pub fn b_in_a(&self) -> &[PenetratingVertex] {
        &self.b_in_a
    }

    /// Both lists, A's first, with the side each vertex belongs to.
    pub fn iter(&self) -> impl Iterator<Item = (Side, &PenetratingVertex)> {
        let a = self.a_in_b.iter().map(|v| (Side::A, v));
        a.chain(self.b_in_a.iter().map(|v| (Side::B, v)))
    }

    /// Number of penetrating vertices (both directions).
    pub fn inside_vertices(&self) -> usize {
        self.a_in_b.len() + self.b_in_a.len()
    }

    /// Largest depth (0 when nothing penetrates).
    pub fn max_depth(&self) -> f64 {
        self.iter().map(|(_, v)| v.depth).fold(0.0, f64::max)
    }

    /// Sum of all depths, A's vertices first then B's, in vertex order.
    pub fn sum_depth(&self) -> f64 {
        self.iter().map(|(_, v)| v.depth).sum()
    }
}

/// Errors of [`penetration`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PenetrationError {
    /// An edge is not shared by exactly two faces (a hole or a non-manifold edge).
    #[error(
        "object {object:?}: mesh is not closed: edge {edge:?} (vertex ids) has {faces} face(s) \
         (e.g. face {face}), expected 2"
    )]
    NotClosed {
        /// Which mesh.
        object: Side,
        /// The edge's two vertex ids, smaller first.
        edge: [u32; 2],
        /// How many faces use it.
        faces: usize,
        /// One of them.
        face: u32,
    },
    /// Two faces traverse an edge in the same direction (inconsistent orientation).
    #[error(
        "object {object:?}: mesh is not consistently oriented: edge {edge:?} (vertex ids) is \
         traversed in the same direction by both of its faces (e.g. face {face})"
    )]
    NotOriented {
        /// Which mesh.
        object: Side,
        /// The edge's two vertex ids, smaller first.
        edge: [u32; 2],
        /// One of its faces.
        face: u32,
    },
    /// The BVH does not have `2 · faces − 1` nodes.
    #[error(
        "object {object:?}: bvh has {nodes} nodes, mesh has {faces} faces (expected 2*faces-1)"
    )]
    BvhMismatch {
        /// Which object.
        object: Side,
        /// Nodes in the tree.
        nodes: usize,
        /// Faces in the mesh.
        faces: usize,
    },
    /// A pose entry is NaN or infinite.
    #[error("object {object:?}: pose has a non-finite entry")]
    NonFinitePose {
        /// Which object.
        object: Side,
    },
    /// A node links to a child out of range, or a node is reached twice.
    #[error("object {object:?}: bvh is malformed at node {node}")]
    InvalidTree {
        /// Which object.
        object: Side,
        /// The offending node index.
        node: u32,
    },
    /// A leaf names a face the mesh does not have.
    #[error("object {object:?}: bvh leaf refers to face {face}, which the mesh does not have")]
    FaceOutOfRange {
        /// Which object.
        object: Side,
        /// The face index.
        face: u32,
    },
    /// Two leaves name the same face (so another face is under none).
    #[error("object {object:?}: two bvh leaves refer to face {face}")]
    DuplicateFace {
        /// Which object.
        object: Side,
        /// The face index.
        face: u32,
    },
}

impl From<crate::world::WorldTreeError> for PenetrationError {
    fn from(e: crate::world::WorldTreeError) -> Self {
        use crate::world::WorldTreeError as W;
        match e {
            W::InvalidTree { object, node } => Self::InvalidTree { object, node },
            W::FaceOutOfRange { object, face } => Self::FaceOutOfRange { object, face },
            W::DuplicateFace { object, face } => Self::DuplicateFace { object, face },
        }
    }
}

/// Below this many candidate vertices (inside the other mesh's box) one thread does the work.
const PAR_MIN_VERTICES: usize = 512;
/// Vertices per rayon task.
const PAR_CHUNK: usize = 128;

/// Checks the tree size and the pose of `o` (the cheap checks before the world tree).
pub(crate) fn check(o: &CollisionObject<'_>, object: Side) -> Result<(), PenetrationError> {
    let faces = o.mesh.face_count();
    if o.bvh.nodes.len() != 2 * faces - 1 {
        return Err(PenetrationError::BvhMismatch {
            object,
            nodes: o.bvh.nodes.len(),
            faces,
        });
    }
    if o.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(PenetrationError::NonFinitePose { object });
    }
    Ok(())
}

/// Per-thread work space of the vertex loop.
#[derive(Default)]
struct Scratch {
    ray: Vec<u32>,
    near: Vec<(u32, f64)>,
    crossed: ([u32; SEEDS], usize),
}

/// The vertices of `from` strictly inside `into`, with depths.
fn vertices_inside(from: &World<'_>, into: &World<'_>) -> Vec<PenetratingVertex> {
    let root = &into.nodes[into.root() as usize];
    let candidates: Vec<u32> = (0..from.vertices.len() as u32)
        .filter(|&i| root.contains(from.vertices[i as usize]))
        .collect();
    let one = |s: &mut Scratch, i: u32| -> Option<PenetratingVertex> {
        let p = from.vertices[i as usize];
        let Place::Inside(winding) = classify(into, p, &mut s.ray, &mut s.crossed) else {
            return None;
        };
        let n = into.nearest(p, &s.crossed.0[..s.crossed.1], &mut s.near);
        let d = n.point - p;
        let direction = if n.distance > 0.0 && d.length_squared() > 0.0 {
            d.normalize()
        } else {
            let t = into.triangle(n.face);
            let normal = (t[1] - t[0]).cross(t[2] - t[0]).normalize_or_zero();
            // Outwards: along the normal for a positively wound (outward-oriented) surface.
            normal * f64::from(winding.signum())
        };
        Some(PenetratingVertex {
            vertex: i,
            position: p,
            depth: n.distance,
            closest: n.point,
            face: n.face,
            direction,
            winding,
        })
    };
    if candidates.len() < PAR_MIN_VERTICES || rayon::current_num_threads() < 2 {
        let mut s = Scratch::default();
        return candidates.iter().filter_map(|&i| one(&mut s, i)).collect();
    }
    let parts: Vec<Vec<PenetratingVertex>> = candidates
        .par_chunks(PAR_CHUNK)
        .map(|chunk| {
            let mut s = Scratch::default();
            chunk.iter().filter_map(|&i| one(&mut s, i)).collect()
        })
        .collect();
    parts.concat()
}

/// Every vertex of `a` strictly inside the closed mesh `b` and every vertex of `b` strictly
/// inside `a`, with depth, closest point, face and direction (see the module docs).
///
/// Errors when a mesh is not closed and consistently oriented, or a BVH or pose is invalid.
pub fn penetration(
    a: &CollisionObject<'_>,
    b: &CollisionObject<'_>,
) -> Result<Penetration, PenetrationError> {
    check(a, Side::A)?;
    check(b, Side::B)?;
    closed::check_closed(a.mesh, Side::A)?;
    if !std::ptr::eq(a.mesh, b.mesh) {
        closed::check_closed(b.mesh, Side::B)?;
    }
    let wa = World::new(a, Side::A)?;
    let wb = World::new(b, Side::B)?;
    Ok(Penetration {
        a_in_b: vertices_inside(&wa, &wb),
        b_in_a: vertices_inside(&wb, &wa),
    })
}
