//! A refit plan that also holds its mesh's faces, in leaf order.
//!
//! [`RefitPlan::refit_from_mesh`] reads each leaf's face at random (leaves are in Morton order,
//! faces in the mesh's order): on a million triangles that is a cache miss per leaf for 12
//! bytes. A [`MeshRefitPlan`] copies the faces once, in leaf order, so a refit reads them as
//! one sequential stream and only the vertex positions at random. The copy stays valid
//! because a [`TriMesh`]'s faces never change; its topology id tells the plan's mesh apart.

use glam::Vec3;
use gprox_geometry::TriMesh;

use super::RefitPlan;
use crate::refit::{
    face_aabb, leaf_count, merge_finite, prefetch, prefetch_streams, LeafPass, RefitError, NEAR,
};
use crate::{Aabb, Bvh, BvhNode, LEAF};

/// A [`RefitPlan`] bound to one mesh: refits the tree to the mesh's current positions, the
/// per-frame update of a deforming mesh.
///
/// The boxes are bit-identical to [`crate::refit::refit_from_mesh`]'s. Besides the plan's own
/// checks, every leaf must still hold the primitive it held when the plan was made
/// ([`RefitError::PlanMismatch`] otherwise), and the mesh must be the plan's, or a clone of it,
/// moved or not ([`RefitError::OtherMesh`]). It holds about 28 bytes per triangle (16 for the
/// face, 12 for its merge).
///
/// ```
/// use gprox_bvh::{lbvh, refit_plan::MeshRefitPlan};
/// use gprox_geometry::scene::torus;
/// let mesh = torus(1.0, 0.3, 16, 8).unwrap();
/// let mut bvh = lbvh::build(&mesh);
/// let plan = MeshRefitPlan::new(&bvh, &mesh).unwrap();
/// let mut moved = mesh.clone();
/// moved.set_positions(mesh.positions().iter().map(|p| *p * 2.0).collect()).unwrap();
/// plan.refit(&mut bvh, &moved).unwrap();
/// assert!(bvh.root_aabb().max[0] > 2.5);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshRefitPlan {
    plan: RefitPlan,
    /// `[a, b, c, primitive]`: the corners and index of the face in each leaf slot.
    faces: Vec<[u32; 4]>,
    /// [`TriMesh::topology_id`] of the mesh.
    topology: u64,
}

impl MeshRefitPlan {
    /// The plan of `bvh` (see [`RefitPlan::new`]) over the faces of `mesh`.
    pub fn new(bvh: &Bvh, mesh: &TriMesh) -> Result<Self, RefitError> {
        let plan = RefitPlan::new(bvh)?;
        let n1 = leaf_count(bvh)?.map_or(0, |n| n - 1);
        let count = mesh.face_count();
        let mut faces = crate::alloc::with_capacity(bvh.nodes.len() - n1);
        for (slot, leaf) in bvh.nodes[n1..].iter().enumerate() {
            let Some(&[a, b, c]) = mesh.faces().get(leaf.left as usize) else {
                return Err(RefitError::PrimitiveOutOfRange {
                    node: n1 + slot,
                    primitive: leaf.left,
                    count,
                });
            };
            faces.push([a, b, c, leaf.left]);
        }
        Ok(Self {
            plan,
            faces,
            topology: mesh.topology_id(),
        })
    }

    /// Refits `bvh` to the current positions of `mesh`, the plan's mesh or a clone of it.
    pub fn refit(&self, bvh: &mut Bvh, mesh: &TriMesh) -> Result<(), RefitError> {
        if mesh.topology_id() != self.topology {
            return Err(RefitError::OtherMesh {
                expected: self.topology,
                found: mesh.topology_id(),
            });
        }
        let Some(n) = leaf_count(bvh)? else {
            return Ok(());
        };
        if n != self.faces.len() {
            return Err(RefitError::PlanMismatch { node: 0 });
        }
        let pass = FacePass {
            n1: n - 1,
            faces: &self.faces,
            pos: mesh.positions(),
        };
        self.plan.replay(bvh, &pass)
    }
}

/// Leaf boxes from the faces in leaf order and the current positions.
struct FacePass<'a> {
    n1: usize,
    faces: &'a [[u32; 4]],
    pos: &'a [Vec3],
}

impl LeafPass for FacePass<'_> {
    fn n1(&self) -> usize {
        self.n1
    }

    fn leaves(
        &self,
        leaves: &mut [BvhNode],
        range: std::ops::Range<usize>,
        first: usize,
        internal: *const BvhNode,
    ) -> Result<(), Box<RefitError>> {
        let faces = &self.faces[first..first + leaves.len()];
        for k in range {
            prefetch_streams(leaves, internal, k);
            if let Some(ahead) = faces.get(k + NEAR) {
                for &v in &ahead[..3] {
                    prefetch(self.pos.as_ptr().wrapping_add(v as usize));
                }
            }
            let [a, b, c, primitive] = faces[k];
            let leaf = &mut leaves[k];
            if leaf.right != LEAF || leaf.left != primitive {
                return Err(Box::new(RefitError::PlanMismatch {
                    node: self.n1 + first + k,
                }));
            }
            leaf.aabb = face_aabb(self.pos, &[a, b, c]);
        }
        Ok(())
    }

    #[inline(always)]
    fn merge(&self, a: &Aabb, b: &Aabb) -> Aabb {
        merge_finite(a, b)
    }
}
