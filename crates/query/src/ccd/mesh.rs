//! Mesh CCD between two frames (same topology, linear vertex motion).
//!
//! Swept triangle boxes ([`gprox_bvh::swept`]) → LBVH (`build_from_aabbs`) → BVTT whose node
//! test is the stronger "separated on an axis at both ends of the step" test on the node boxes
//! at `t = 0` and `t = 1` (it implies nothing is missed that swept boxes would find) → every
//! candidate face pair, adjacent ones included, goes to [`super::ccd_candidates`]: the
//! vertex–face and edge–edge tests of its owned features behind certified filters, each feature
//! pair run once (see [`super::candidates`]). Self CCD reports every vertex–face pair (vertex not
//! on the face) and edge–edge pair (no common endpoint) that may touch, also between
//! neighbouring faces.

use glam::Vec3;
use gprox_bvh::{
    lbvh::build_from_aabbs,
    refit::{refit, triangle_aabb},
    swept::swept_triangle_aabbs,
    Aabb, Bvh,
};
use gprox_geometry::TriMesh;

use super::candidates::{run_pairs, CcdMesh, Moving, Narrow};
use super::filter::boxes_separated_both_ends;
use super::traverse::DualTree;
use super::{CcdError, CcdOptions, Toi};
use crate::self_collide::traverse::pair_leaves_by;
use crate::self_collide::Topology;

/// Which pair of features touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// A vertex of the first mesh against a face of the second (or of the same mesh).
    VertexFace {
        /// Vertex index.
        vertex: u32,
        /// Face index.
        face: u32,
    },
    /// A face of the first mesh against a vertex of the second (two-mesh CCD only).
    FaceVertex {
        /// Face index (first mesh).
        face: u32,
        /// Vertex index (second mesh).
        vertex: u32,
    },
    /// An edge of the first mesh against an edge of the second (endpoints sorted; in self CCD
    /// `a < b`).
    EdgeEdge {
        /// Edge of the first mesh.
        a: [u32; 2],
        /// Edge of the second mesh.
        b: [u32; 2],
    },
}

/// One feature pair that may touch during the step, with its certified time of impact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureToi {
    /// The features.
    pub feature: Feature,
    /// Time of impact (no contact before `toi.t_lo`), its status (certified contact or
    /// undecided) and separation bound.
    pub toi: Toi,
    /// The triangle pair (first mesh, second mesh) the test was run for.
    pub faces: [u32; 2],
}

/// Result of a mesh CCD query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshCcd {
    /// Every feature pair that could not be excluded, sorted by feature: certified contacts
    /// and (unless [`super::Undecided::Apart`]) undecided ones, told apart by `toi.status`.
    pub contacts: Vec<FeatureToi>,
    /// The undecided feature pairs (`toi.status == CcdStatus::Undecided`), sorted by feature,
    /// listed apart whatever [`super::CcdOptions::undecided`] says.
    pub undecided: Vec<FeatureToi>,
    /// Earliest time of impact over all contacts (`None`: certified free for the whole step).
    pub earliest: Option<Toi>,
    /// Candidate triangle pairs whose swept boxes overlap.
    pub candidate_pairs: usize,
    /// Elementary tests run (after feature deduplication and the per-feature box filter).
    pub elementary_tests: usize,
}

impl FeatureToi {
    /// Whether this contact is certified ([`super::CcdStatus::Contact`]).
    pub fn is_certified(&self) -> bool {
        self.toi.is_certified()
    }
}

impl MeshCcd {
    /// Earliest time of impact per triangle pair, sorted by pair. Each feature pair counts for
    /// the one face pair its test was run for (its canonical / owning pair, see the module docs).
    pub fn face_pair_tois(&self) -> Vec<([u32; 2], Toi)> {
        let mut v: Vec<([u32; 2], Toi)> = self.contacts.iter().map(|c| (c.faces, c.toi)).collect();
        v.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.t_lo.total_cmp(&y.1.t_lo)));
        v.dedup_by(|x, y| x.0 == y.0);
        v
    }
}

fn swept_boxes(mesh: &TriMesh, end: &[Vec3]) -> Vec<Aabb> {
    // Lengths were validated: the error case cannot happen here.
    swept_triangle_aabbs(mesh, end).unwrap_or_default()
}

/// Node boxes of `bvh`'s topology at both ends of the step.
fn dual_boxes(bvh: &Bvh, mesh: &TriMesh, end: &[Vec3]) -> Result<(Vec<Aabb>, Vec<Aabb>), CcdError> {
    let at = |pos: &[Vec3]| -> Result<Vec<Aabb>, CcdError> {
        let leaf: Vec<Aabb> = mesh
            .faces()
            .iter()
            .map(|f| triangle_aabb(&f.map(|v| pos[v as usize])))
            .collect();
        let mut t = bvh.clone();
        refit(&mut t, &leaf).map_err(|_| CcdError::Mismatch {
            what: "bvh",
            got: bvh.leaf_count(),
            faces: mesh.face_count(),
        })?;
        Ok(t.nodes.iter().map(|n| n.aabb).collect())
    };
    Ok((at(mesh.positions())?, at(end)?))
}

/// Self CCD of one deforming mesh moving linearly from its current positions to `end`:
/// every vertex–face pair (vertex not on the face) and edge–edge pair (no common endpoint) that
/// may touch during the step, with certified times of impact. `topo` must be
/// `Topology::new(mesh.faces(), mesh.vertex_count())` (reuse it across frames).
///
/// ```
/// use gprox_query::{ccd::{ccd_self, CcdOptions}, self_collide::Topology};
/// use gprox_geometry::{glam::Vec3, TriMesh};
/// // Two separate triangles; the second drops through the first.
/// let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.2, 0.2, 1.0), Vec3::new(1.2, 0.2, 1.0), Vec3::new(0.2, 1.2, 1.0)];
/// let mesh = TriMesh::new(p.clone(), vec![[0, 1, 2], [3, 4, 5]]).unwrap();
/// let end: Vec<Vec3> = p.iter().enumerate().map(|(i, &v)| if i >= 3 { v - 2.0 * Vec3::Z } else { v }).collect();
/// let topo = Topology::new(mesh.faces(), mesh.vertex_count());
/// let r = ccd_self(&mesh, &end, &topo, &CcdOptions::default()).unwrap();
/// let toi = r.earliest.unwrap();
/// assert!(toi.t_lo <= 0.5 && toi.t_lo > 0.49);
/// ```
pub fn ccd_self(
    mesh: &TriMesh,
    end: &[Vec3],
    topo: &Topology,
    opts: &CcdOptions,
) -> Result<MeshCcd, CcdError> {
    let m = Moving::new("mesh", &CcdMesh { mesh, end, topo })?;
    let bvh = build_from_aabbs(&swept_boxes(mesh, end));
    self_with_bvh(mesh, end, &m, &bvh, opts)
}

/// [`ccd_self`] with a caller-maintained LBVH over the mesh's faces: only its topology is
/// used (node boxes at both ends of the step are recomputed), so a tree built once and kept
/// across steps stays correct; rebuild it when its quality degrades.
pub fn ccd_self_with_bvh(
    mesh: &TriMesh,
    end: &[Vec3],
    topo: &Topology,
    bvh: &Bvh,
    opts: &CcdOptions,
) -> Result<MeshCcd, CcdError> {
    let m = Moving::new("mesh", &CcdMesh { mesh, end, topo })?;
    self_with_bvh(mesh, end, &m, bvh, opts)
}

/// Self traversal (every unordered pair of distinct faces, adjacent ones included, whose boxes
/// are not separated at both ends), then the narrow phase.
fn self_with_bvh(
    mesh: &TriMesh,
    end: &[Vec3],
    m: &Moving,
    bvh: &Bvh,
    opts: &CcdOptions,
) -> Result<MeshCcd, CcdError> {
    let tree = DualTree::new(bvh, mesh.faces(), mesh.positions(), end)?;
    let sep = opts.min_separation.max(0.0);
    // Adjacent faces are candidates too: about a dozen per face on a manifold mesh. Each pair
    // goes to the narrow phase as soon as the traversal finds it.
    let mut narrow = Narrow::new(m, None, opts);
    let mut candidates = 0usize;
    tree.self_pairs(sep, |fa, fb| {
        candidates += 1;
        narrow.pair(fa, fb);
    });
    Ok(narrow.finish(candidates))
}

/// CCD between two deforming meshes `a` → `a_end` and `b` → `b_end`: every vertex–face,
/// face–vertex and edge–edge pair that may touch during the step.
pub fn ccd_pair(
    a: &TriMesh,
    a_end: &[Vec3],
    a_topo: &Topology,
    b: &TriMesh,
    b_end: &[Vec3],
    b_topo: &Topology,
    opts: &CcdOptions,
) -> Result<MeshCcd, CcdError> {
    let ma = Moving::new(
        "mesh a",
        &CcdMesh {
            mesh: a,
            end: a_end,
            topo: a_topo,
        },
    )?;
    let mb = Moving::new(
        "mesh b",
        &CcdMesh {
            mesh: b,
            end: b_end,
            topo: b_topo,
        },
    )?;
    let bvh_a = build_from_aabbs(&swept_boxes(a, a_end));
    let bvh_b = build_from_aabbs(&swept_boxes(b, b_end));
    let (a0, a1) = dual_boxes(&bvh_a, a, a_end)?;
    let (b0, b1) = dual_boxes(&bvh_b, b, b_end)?;
    let sep = opts.min_separation.max(0.0);
    let overlap = |i: u32, j: u32| {
        let (i, j) = (i as usize, j as usize);
        !boxes_separated_both_ends(&a0[i], &a1[i], &b0[j], &b1[j], sep)
    };
    let mut pairs = Vec::new();
    pair_leaves_by(&bvh_a, &bvh_b, overlap, |fa, fb| pairs.push([fa, fb]));
    Ok(run_pairs(&ma, Some(&mb), &pairs, opts))
}
