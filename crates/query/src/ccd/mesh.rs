//! Mesh CCD between two frames (same topology, linear vertex motion).
//!
//! Swept triangle boxes ([`gprox_bvh::swept`]) → LBVH → BVTT (two meshes, or one mesh against
//! itself over all pairs of distinct faces) → per candidate triangle pair the 15 elementary tests
//! (3 + 3 vertex–face, 9 edge–edge), each feature pair run once: a vertex or edge is tested only
//! from the face that owns it ([`Topology`]). Self CCD skips feature pairs that share a vertex
//! (a vertex against a face containing it, edges with a common endpoint); adjacent faces are still
//! visited, so a vertex hitting a face of its own neighbourhood is found.

use glam::{DVec3, Vec3};
use gprox_bvh::{
    lbvh::build_from_aabbs,
    refit::{refit, triangle_aabb},
    swept::swept_triangle_aabbs,
    Aabb, Bvh,
};
use gprox_geometry::TriMesh;

use super::filter::{
    boxes_separated_both_ends, closest_on_triangle, closest_segments, never_coplanar, Groups,
};
use super::{check_point, edge_edge_unchecked, vertex_face_unchecked, CcdError, CcdOptions, Toi};
use crate::self_collide::topology::{BAD_EDGE, NO_FACE};
use crate::self_collide::traverse::{pair_leaves_by, self_leaves_by};
use crate::self_collide::{share_vertex, Topology};

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
    /// Time of impact (no contact before `toi.t_lo`).
    pub toi: Toi,
    /// The triangle pair (first mesh, second mesh) the test was run for.
    pub faces: [u32; 2],
}

/// Result of a mesh CCD query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshCcd {
    /// Every feature pair that could not be excluded, sorted by feature.
    pub contacts: Vec<FeatureToi>,
    /// Earliest time of impact over all contacts (`None`: certified free for the whole step).
    pub earliest: Option<Toi>,
    /// Candidate triangle pairs whose swept boxes overlap.
    pub candidate_pairs: usize,
    /// Elementary tests run (after feature deduplication and the per-feature box filter).
    pub elementary_tests: usize,
}

/// One moving mesh: positions at both ends (f64 world coordinates) and its topology.
struct Moving<'a> {
    faces: &'a [[u32; 3]],
    start: Vec<DVec3>,
    end: Vec<DVec3>,
    topo: &'a Topology,
}

fn validate(
    what: &'static str,
    mesh: &TriMesh,
    end: &[Vec3],
    topo: &Topology,
) -> Result<(), CcdError> {
    if topo.face_count() != mesh.face_count() {
        return Err(CcdError::Mismatch {
            what: "topology",
            got: topo.face_count(),
            faces: mesh.face_count(),
        });
    }
    if end.len() != mesh.vertex_count() {
        return Err(CcdError::VertexCountMismatch {
            what,
            start: mesh.vertex_count(),
            end: end.len(),
        });
    }
    for (i, p) in mesh.positions().iter().enumerate() {
        check_point(what, 0, i, p.as_dvec3())?;
    }
    for (i, p) in end.iter().enumerate() {
        check_point(what, 1, i, p.as_dvec3())?;
    }
    Ok(())
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

impl<'a> Moving<'a> {
    fn new(mesh: &'a TriMesh, end: &[Vec3], topo: &'a Topology) -> Self {
        Self {
            faces: mesh.faces(),
            start: mesh.positions().iter().map(|p| p.as_dvec3()).collect(),
            end: end.iter().map(|p| p.as_dvec3()).collect(),
            topo,
        }
    }
}

/// Cheap certified exclusion of an elementary query whose points `..split` form one
/// primitive and `split..` the other (see [`super::filter`]).
#[inline]
fn excluded(start: &[DVec3; 4], end: &[DVec3; 4], split: usize, sep: f64) -> bool {
    let g = Groups {
        start,
        end,
        split,
        sep,
    };
    if g.axis_separated() {
        return true;
    }
    for pts in [start, end] {
        let w = if split == 1 {
            pts[0] - closest_on_triangle(pts[0], pts[1], pts[2], pts[3])
        } else {
            let (a, b) = closest_segments(pts[0], pts[1], pts[2], pts[3]);
            b - a
        };
        if g.separated_along(w) {
            return true;
        }
    }
    sep == 0.0 && never_coplanar(start, end)
}

/// Self CCD: whether the visit of the non-adjacent face pair `{fa, fb}` is the canonical one
/// for vertex `v` (a corner of `fa`) against face `fb`: `fa` is the lowest face around `v` that
/// shares no vertex with `fb`.
#[inline]
fn canonical_vertex(topo: &Topology, faces: &[[u32; 3]], v: u32, fa: u32, fb: u32) -> bool {
    let tb = &faces[fb as usize];
    topo.faces_of(v)
        .iter()
        .find(|&&g| !share_vertex(&faces[g as usize], tb))
        .is_none_or(|&g| g == fa)
}

/// Self CCD: whether `{fa, fb}` is the canonical non-adjacent face pair for edge `k` of `fa`
/// against edge `l` of `fb`: the smallest `(min, max)` over the (up to 2 × 2) face pairs
/// holding the two edges that share no vertex. Non-manifold edges: always (deduplicated later).
#[inline]
fn canonical_edges(
    topo: &Topology,
    faces: &[[u32; 3]],
    fa: u32,
    k: usize,
    fb: u32,
    l: usize,
) -> bool {
    let oa = topo.adjacent[fa as usize][k];
    let ob = topo.adjacent[fb as usize][l];
    if oa == BAD_EDGE || ob == BAD_EDGE {
        return true;
    }
    let key = |g: u32, h: u32| (g.min(h), g.max(h));
    let here = key(fa, fb);
    let mut best = here;
    for g in [fa, oa] {
        if g == NO_FACE {
            continue;
        }
        for h in [fb, ob] {
            if h == NO_FACE || (g == fa && h == fb) {
                continue;
            }
            let kk = key(g, h);
            if kk < best && !share_vertex(&faces[g as usize], &faces[h as usize]) {
                best = kk;
            }
        }
    }
    best == here
}

/// Runs the deduplicated elementary tests of face `fa` of `a` against face `fb` of `b`.
/// `same`: one mesh (self CCD): only non-adjacent face pairs are tested, each feature pair
/// from its canonical face pair; otherwise each feature from the face that owns it.
#[allow(clippy::too_many_arguments)]
fn test_faces(
    a: &Moving,
    fa: u32,
    b: &Moving,
    fb: u32,
    same: bool,
    opts: &CcdOptions,
    out: &mut Vec<FeatureToi>,
    tests: &mut usize,
) {
    let ta = a.faces[fa as usize];
    let tb = b.faces[fb as usize];
    if same && share_vertex(&ta, &tb) {
        return;
    }
    let sep = opts.min_separation.max(0.0);
    // Vertices of `fa` against face `fb`, then vertices of `fb` against face `fa`.
    for (x, fx, tx, y, fy, ty, flip) in
        [(a, fa, ta, b, fb, tb, false), (b, fb, tb, a, fa, ta, true)]
    {
        let bits = x.topo.owned_vertices[fx as usize];
        for k in 0..3 {
            let v = tx[k];
            let run = if same {
                !tx[..k].contains(&v) && canonical_vertex(x.topo, x.faces, v, fx, fy)
            } else {
                bits & (1 << k) != 0
            };
            if !run {
                continue;
            }
            let start = [
                x.start[v as usize],
                y.start[ty[0] as usize],
                y.start[ty[1] as usize],
                y.start[ty[2] as usize],
            ];
            let end = [
                x.end[v as usize],
                y.end[ty[0] as usize],
                y.end[ty[1] as usize],
                y.end[ty[2] as usize],
            ];
            if excluded(&start, &end, 1, sep) {
                continue;
            }
            *tests += 1;
            if let Some(toi) = vertex_face_unchecked(start, end, opts) {
                let feature = if flip && !same {
                    Feature::FaceVertex {
                        face: fy,
                        vertex: v,
                    }
                } else {
                    Feature::VertexFace {
                        vertex: v,
                        face: fy,
                    }
                };
                let faces = if flip { [fy, fx] } else { [fx, fy] };
                out.push(FeatureToi {
                    feature,
                    toi,
                    faces,
                });
            }
        }
    }
    let ea = a.topo.owned_edges[fa as usize];
    let eb = b.topo.owned_edges[fb as usize];
    for i in 0..3 {
        if !same && ea & (1 << i) == 0 {
            continue;
        }
        let e0 = [ta[i], ta[(i + 1) % 3]];
        for j in 0..3 {
            let e1 = [tb[j], tb[(j + 1) % 3]];
            let run = if same {
                canonical_edges(a.topo, a.faces, fa, i, fb, j)
            } else {
                eb & (1 << j) != 0
            };
            if !run {
                continue;
            }
            let start = [
                a.start[e0[0] as usize],
                a.start[e0[1] as usize],
                b.start[e1[0] as usize],
                b.start[e1[1] as usize],
            ];
            let end = [
                a.end[e0[0] as usize],
                a.end[e0[1] as usize],
                b.end[e1[0] as usize],
                b.end[e1[1] as usize],
            ];
            if excluded(&start, &end, 2, sep) {
                continue;
            }
            *tests += 1;
            if let Some(toi) = edge_edge_unchecked(start, end, opts) {
                let sa = [e0[0].min(e0[1]), e0[0].max(e0[1])];
                let sb = [e1[0].min(e1[1]), e1[0].max(e1[1])];
                let (feature, faces) = if same && sb < sa {
                    (Feature::EdgeEdge { a: sb, b: sa }, [fb, fa])
                } else {
                    (Feature::EdgeEdge { a: sa, b: sb }, [fa, fb])
                };
                out.push(FeatureToi {
                    feature,
                    toi,
                    faces,
                });
            }
        }
    }
}

fn finish(
    mut contacts: Vec<FeatureToi>,
    candidate_pairs: usize,
    elementary_tests: usize,
) -> MeshCcd {
    contacts.sort_by(|x, y| {
        x.feature
            .cmp(&y.feature)
            .then(x.toi.t_lo.total_cmp(&y.toi.t_lo))
    });
    contacts.dedup_by(|x, y| x.feature == y.feature);
    let earliest = contacts
        .iter()
        .map(|c| c.toi)
        .min_by(|x, y| x.t_lo.total_cmp(&y.t_lo).then(x.t_hi.total_cmp(&y.t_hi)));
    MeshCcd {
        contacts,
        earliest,
        candidate_pairs,
        elementary_tests,
    }
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
    validate("mesh", mesh, end, topo)?;
    let bvh = build_from_aabbs(&swept_boxes(mesh, end));
    ccd_self_with_bvh(mesh, end, topo, &bvh, opts)
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
    validate("mesh", mesh, end, topo)?;
    if bvh.nodes.len() != 2 * mesh.face_count() - 1 {
        return Err(CcdError::Mismatch {
            what: "bvh",
            got: bvh.leaf_count(),
            faces: mesh.face_count(),
        });
    }
    let (b0, b1) = dual_boxes(bvh, mesh, end)?;
    let dual: Vec<[Aabb; 2]> = b0.iter().zip(&b1).map(|(x, y)| [*x, *y]).collect();
    let overlap = |i: u32, j: u32| {
        let (x, y) = (&dual[i as usize], &dual[j as usize]);
        !boxes_separated_both_ends(&x[0], &x[1], &y[0], &y[1])
    };
    let m = Moving::new(mesh, end, topo);
    let mut out = Vec::new();
    let mut tests = 0;
    let mut pairs = 0;
    self_leaves_by(
        bvh,
        overlap,
        |_, _, _| false,
        |fa, fb| {
            pairs += 1;
            test_faces(&m, fa, &m, fb, true, opts, &mut out, &mut tests);
        },
    );
    Ok(finish(out, pairs, tests))
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
    validate("mesh a", a, a_end, a_topo)?;
    validate("mesh b", b, b_end, b_topo)?;
    let bvh_a = build_from_aabbs(&swept_boxes(a, a_end));
    let bvh_b = build_from_aabbs(&swept_boxes(b, b_end));
    let (a0, a1) = dual_boxes(&bvh_a, a, a_end)?;
    let (b0, b1) = dual_boxes(&bvh_b, b, b_end)?;
    let overlap = |i: u32, j: u32| {
        let (i, j) = (i as usize, j as usize);
        !boxes_separated_both_ends(&a0[i], &a1[i], &b0[j], &b1[j])
    };
    let ma = Moving::new(a, a_end, a_topo);
    let mb = Moving::new(b, b_end, b_topo);
    let mut out = Vec::new();
    let mut tests = 0;
    let mut pairs = 0;
    pair_leaves_by(&bvh_a, &bvh_b, overlap, |fa, fb| {
        pairs += 1;
        test_faces(&ma, fa, &mb, fb, false, opts, &mut out, &mut tests);
    });
    Ok(finish(out, pairs, tests))
}
