//! Mesh CCD: contacts constructed exactly (dyadic coordinates) are always found with
//! `t_lo ≤ t*`; results are a subset of the brute force over all feature pairs of non-adjacent
//! triangle pairs run through the same elementary tests (so traversal and deduplication only
//! drop certified-free pairs), each feature pair is reported once; bad input → typed errors.

use std::collections::{BTreeMap, BTreeSet};

use glam::{DVec3, Vec3};
use gprox_bvh::{lbvh::build, refit::triangle_aabb, Aabb, LEAF};
use gprox_geometry::TriMesh;
use gprox_query::ccd::{
    ccd_candidates, ccd_pair, ccd_self, ccd_self_with_bvh, edge_edge_toi, vertex_face_toi,
    CcdError, CcdMesh, CcdOptions, Feature, Toi,
};
use gprox_query::self_collide::Topology;
use proptest::prelude::*;

/// An `n × n` grid sheet, dyadic coordinates, heights from `z` (in 1/16 units).
fn sheet(n: usize, z: &[i32]) -> TriMesh {
    let mut pos = Vec::new();
    for i in 0..n {
        for j in 0..n {
            pos.push(Vec3::new(
                i as f32 / 4.0,
                j as f32 / 4.0,
                z[i * n + j] as f32 / 16.0,
            ));
        }
    }
    let id = |i: usize, j: usize| (i * n + j) as u32;
    let mut faces = Vec::new();
    for i in 0..n - 1 {
        for j in 0..n - 1 {
            faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh::new(pos, faces).expect("valid sheet")
}

/// Brute force over ALL primitive pairs of one mesh sharing no vertex (the `ccd` query's
/// definition): every vertex against every face not containing it, every pair of distinct edges
/// without a common endpoint, elementary tests only, in the canonical point order of
/// `gprox_query::ccd::candidates` (vertex then face corners in face order; edges with sorted
/// endpoints, the smaller edge first), so times of impact are comparable bit for bit.
fn brute_self(mesh: &TriMesh, end: &[Vec3], opts: &CcdOptions) -> BTreeMap<Feature, Toi> {
    let f = mesh.faces();
    let s: Vec<DVec3> = mesh.positions().iter().map(|p| p.as_dvec3()).collect();
    let e: Vec<DVec3> = end.iter().map(|p| p.as_dvec3()).collect();
    let mut out = BTreeMap::new();
    for v in 0..s.len() as u32 {
        for (fi, t) in f.iter().enumerate() {
            if t.contains(&v) {
                continue;
            }
            let idx = [v, t[0], t[1], t[2]].map(|i| i as usize);
            if let Some(toi) = vertex_face_toi(idx.map(|i| s[i]), idx.map(|i| e[i]), opts).unwrap()
            {
                out.insert(
                    Feature::VertexFace {
                        vertex: v,
                        face: fi as u32,
                    },
                    toi,
                );
            }
        }
    }
    let edges: BTreeSet<[u32; 2]> = f
        .iter()
        .flat_map(|t| (0..3).map(move |k| [t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3])]))
        .collect();
    let edges: Vec<[u32; 2]> = edges.into_iter().collect();
    for (i, a) in edges.iter().enumerate() {
        for b in &edges[i + 1..] {
            if a.iter().any(|v| b.contains(v)) {
                continue;
            }
            let idx = [a[0], a[1], b[0], b[1]].map(|i| i as usize);
            if let Some(toi) = edge_edge_toi(idx.map(|i| s[i]), idx.map(|i| e[i]), opts).unwrap() {
                out.insert(Feature::EdgeEdge { a: *a, b: *b }, toi);
            }
        }
    }
    out
}

/// A strip of `quads` squares (side 1/4) along x, folded over at column `fold`: columns past
/// it swing to the mirrored side, `shift`/16 along x and `lift`/16 above or below, so vertices
/// near the fold pass through faces of their own 1- and 2-rings. `z`: start heights (1/16).
fn folding_strip(
    quads: usize,
    fold: usize,
    shift: i32,
    lift: i32,
    z: &[i32],
) -> (TriMesh, Vec<Vec3>) {
    let mut pos = Vec::new();
    let mut end = Vec::new();
    for i in 0..=quads {
        for j in 0..2 {
            let p = Vec3::new(i as f32 / 4.0, j as f32 / 4.0, z[2 * i + j] as f32 / 16.0);
            pos.push(p);
            end.push(if i > fold {
                Vec3::new(
                    (2 * fold) as f32 / 4.0 - p.x + shift as f32 / 16.0,
                    p.y,
                    lift as f32 / 16.0,
                )
            } else {
                p
            });
        }
    }
    let id = |i: usize, j: usize| (2 * i + j) as u32;
    let mut faces = Vec::new();
    for i in 0..quads {
        faces.push([id(i, 0), id(i + 1, 0), id(i + 1, 1)]);
        faces.push([id(i, 0), id(i + 1, 1), id(i, 1)]);
    }
    (TriMesh::new(pos, faces).expect("valid strip"), end)
}

/// Small random moving meshes: sheets with large vertical moves (through their neighbours),
/// and folding strips.
fn moving_mesh() -> impl Strategy<Value = (TriMesh, Vec<Vec3>)> {
    let sheet_case = (
        3usize..5,
        prop::collection::vec(-2i32..=2, 16),
        prop::collection::vec((-2i32..=2, -2i32..=2, -8i32..=8), 16),
    )
        .prop_map(|(n, z, d)| {
            let mesh = sheet(n, &z);
            let end = mesh
                .positions()
                .iter()
                .zip(&d)
                .map(|(p, &(dx, dy, dz))| *p + Vec3::new(dx as f32, dy as f32, dz as f32) / 16.0)
                .collect();
            (mesh, end)
        });
    let strip_case = (
        2usize..7,
        0usize..6,
        -3i32..=3,
        -3i32..=3,
        prop::collection::vec(-1i32..=1, 14),
    )
        .prop_map(|(q, fold, shift, lift, z)| folding_strip(q, fold % q, shift, lift, &z));
    prop_oneof![sheet_case, strip_case]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A vertex driven exactly onto a non-adjacent face at `t* = 1/2`: found, `t_lo ≤ 1/2`;
    /// every reported feature is a brute-force positive, reported once.
    #[test]
    fn self_ccd_finds_constructed_vertex_face_contact(
        n in 3usize..6,
        z in prop::collection::vec(-2i32..=2, 36),
        dz in prop::collection::vec(-2i32..=2, 36),
        pick in any::<prop::sample::Index>(),
        face_pick in any::<prop::sample::Index>(),
        (i, j) in (0u32..=4, 0u32..=4).prop_filter("inside", |(i, j)| i + j <= 4),
    ) {
        let mesh = sheet(n, &z);
        let nv = mesh.vertex_count();
        let mut end: Vec<Vec3> = mesh.positions().iter().zip(&dz).map(|(p, &d)| *p + Vec3::new(0.0, 0.0, d as f32 / 16.0)).collect();
        let v = pick.index(nv) as u32;
        let faces = mesh.faces();
        // Any face not containing v (its neighbours' faces included).
        let ok: Vec<usize> = (0..faces.len()).filter(|&f| !faces[f].contains(&v)).collect();
        prop_assume!(!ok.is_empty());
        let f = ok[face_pick.index(ok.len())];
        let mid = |k: u32| (mesh.positions()[k as usize] + end[k as usize]) * 0.5;
        let [a, b, c] = faces[f].map(mid);
        let target = a + (b - a) * (i as f32 / 4.0) + (c - a) * (j as f32 / 4.0);
        let s = mesh.positions()[v as usize];
        end[v as usize] = s + (target - s) * 2.0;
        let topo = Topology::new(faces, nv);
        let opts = CcdOptions::default();
        let r = ccd_self(&mesh, &end, &topo, &opts).unwrap();
        let hit = r.contacts.iter().find(|c| c.feature == Feature::VertexFace { vertex: v, face: f as u32 });
        prop_assert!(hit.is_some_and(|c| c.toi.t_lo <= 0.5), "{:?}", hit);
        prop_assert!(r.earliest.is_some_and(|t| t.t_lo <= 0.5));
        let per_pair = r.face_pair_tois();
        let min_pair = per_pair.iter().map(|p| p.1.t_lo).fold(f64::INFINITY, f64::min);
        prop_assert_eq!(Some(min_pair), r.earliest.map(|t| t.t_lo));
        let brute = brute_self(&mesh, &end, &opts);
        let mut seen = std::collections::BTreeSet::new();
        for c in &r.contacts {
            prop_assert!(seen.insert(c.feature), "duplicate {:?}", c.feature);
            // Same elementary tests in the same point order: the same certified interval.
            prop_assert_eq!(brute.get(&c.feature), Some(&c.toi), "{:?}", c.feature);
        }
    }

    /// Self CCD against the brute force over all primitive pairs sharing no vertex (pairs
    /// between neighbouring faces included): every brute-force positive reported with the same
    /// certified interval, nothing else reported, the same earliest time; and the narrow phase
    /// over all pairs of distinct faces gives the same result as over the traversal's.
    #[test]
    fn self_ccd_equals_brute_force_over_primitive_pairs((mesh, end) in moving_mesh()) {
        let topo = Topology::new(mesh.faces(), mesh.vertex_count());
        let opts = CcdOptions::default();
        let r = ccd_self(&mesh, &end, &topo, &opts).unwrap();
        let brute = brute_self(&mesh, &end, &opts);
        let got: BTreeMap<Feature, Toi> = r.contacts.iter().map(|c| (c.feature, c.toi)).collect();
        prop_assert_eq!(got.len(), r.contacts.len(), "duplicate features");
        for (feature, toi) in &brute {
            prop_assert_eq!(got.get(feature), Some(toi), "missed {:?}", feature);
        }
        for feature in got.keys() {
            prop_assert!(brute.contains_key(feature), "{:?} not a primitive-pair positive", feature);
        }
        let brute_earliest = brute.values().map(|t| t.t_lo).min_by(f64::total_cmp);
        let earliest = r.earliest.map(|t| t.t_lo);
        prop_assert!(match (earliest, brute_earliest) {
            (Some(x), Some(y)) => x <= y,
            (None, None) => true,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        }, "{:?} vs brute {:?}", earliest, brute_earliest);
        let n = mesh.face_count() as u32;
        let all: Vec<[u32; 2]> = (0..n).flat_map(|i| (i + 1..n).map(move |j| [j, i])).collect();
        let m = CcdMesh { mesh: &mesh, end: &end, topo: &topo };
        let full = ccd_candidates(&m, None, &all, &opts).unwrap();
        prop_assert_eq!(&full.contacts, &r.contacts);
        prop_assert_eq!(full.earliest, r.earliest);
        // The candidates do not depend on the tree: another LBVH (over the start frame) gives
        // the same result, and the candidate count is the brute-force count of face pairs whose
        // boxes are not separated on one axis, in the same order, at both ends.
        let other = build(&mesh);
        let with_other = ccd_self_with_bvh(&mesh, &end, &topo, &other, &opts).unwrap();
        prop_assert_eq!(&with_other, &r);
        let boxes = |pos: &[Vec3]| -> Vec<Aabb> {
            mesh.faces().iter().map(|f| triangle_aabb(&f.map(|v| pos[v as usize]))).collect()
        };
        let (b0, b1) = (boxes(mesh.positions()), boxes(&end));
        let apart = |x: &Aabb, y: &Aabb, k: usize| x.min[k] > y.max[k];
        let mut count = 0;
        for i in 0..b0.len() {
            for j in i + 1..b0.len() {
                let sep = (0..3).any(|k| {
                    (apart(&b0[i], &b0[j], k) && apart(&b1[i], &b1[j], k))
                        || (apart(&b0[j], &b0[i], k) && apart(&b1[j], &b1[i], k))
                });
                count += usize::from(!sep);
            }
        }
        prop_assert_eq!(r.candidate_pairs, count);
        // With a minimum separation the traversal keeps every pair the narrow phase needs.
        let sep = CcdOptions { min_separation: 1.0 / 1024.0, ..opts };
        let r_sep = ccd_self(&mesh, &end, &topo, &sep).unwrap();
        let full_sep = ccd_candidates(&m, None, &all, &sep).unwrap();
        prop_assert_eq!(&full_sep.contacts, &r_sep.contacts);
    }

    /// Two meshes: an edge of `b` crossing an edge of `a` exactly at `t* = 1/2`.
    #[test]
    fn pair_ccd_finds_constructed_edge_edge_contact(
        z in prop::collection::vec(-2i32..=2, 16),
        lift in 1i32..8,
        s in 0u32..=4,
        l in 0u32..=4,
    ) {
        let a = sheet(4, &z);
        let zb: Vec<i32> = z.iter().map(|&h| h + 16 * lift).collect();
        let b = sheet(4, &zb);
        let a_end = a.positions().to_vec();
        // Edge 0-1 of face 0 of a, edge of face 0 of b: drive b's edge (its vertices 0, 1).
        let fa = a.faces()[0];
        let fb = b.faces()[0];
        let (p0, p1) = (a.positions()[fa[0] as usize], a.positions()[fa[1] as usize]);
        let q = p0 + (p1 - p0) * (s as f32 / 4.0);
        let w = Vec3::new(0.25, 0.5, 0.0);
        let lam = l as f32 / 4.0;
        let (b0, b1) = (q - w * lam, q + w * (1.0 - lam));
        let mut b_end = b.positions().to_vec();
        let (i0, i1) = (fb[0] as usize, fb[1] as usize);
        b_end[i0] = b.positions()[i0] + (b0 - b.positions()[i0]) * 2.0;
        b_end[i1] = b.positions()[i1] + (b1 - b.positions()[i1]) * 2.0;
        let ta = Topology::new(a.faces(), a.vertex_count());
        let tb = Topology::new(b.faces(), b.vertex_count());
        let r = ccd_pair(&a, &a_end, &ta, &b, &b_end, &tb, &CcdOptions::default()).unwrap();
        let ea = [fa[0].min(fa[1]), fa[0].max(fa[1])];
        let eb = [fb[0].min(fb[1]), fb[0].max(fb[1])];
        let hit = r.contacts.iter().find(|c| c.feature == Feature::EdgeEdge { a: ea, b: eb });
        prop_assert!(hit.is_some_and(|c| c.toi.t_lo <= 0.5), "{:?}", hit);
    }
}

#[test]
fn far_apart_meshes_are_free() {
    let a = sheet(4, &[0; 16]);
    let b = sheet(4, &[64; 16]);
    let ta = Topology::new(a.faces(), a.vertex_count());
    let tb = Topology::new(b.faces(), b.vertex_count());
    let r = ccd_pair(
        &a,
        a.positions(),
        &ta,
        &b,
        b.positions(),
        &tb,
        &CcdOptions::default(),
    )
    .unwrap();
    assert!(r.contacts.is_empty());
    assert_eq!(r.earliest, None);
    let r = ccd_self(&a, a.positions(), &ta, &CcdOptions::default()).unwrap();
    assert!(
        r.contacts.is_empty(),
        "a resting flat sheet has no self contact"
    );
}

#[test]
fn bad_frames_are_typed_errors() {
    let a = sheet(3, &[0; 9]);
    let topo = Topology::new(a.faces(), a.vertex_count());
    let opts = CcdOptions::default();
    let short = &a.positions()[..5];
    assert!(matches!(
        ccd_self(&a, short, &topo, &opts),
        Err(CcdError::VertexCountMismatch {
            start: 9,
            end: 5,
            ..
        })
    ));
    let mut nan = a.positions().to_vec();
    nan[4].y = f32::NAN;
    assert!(matches!(
        ccd_self(&a, &nan, &topo, &opts),
        Err(CcdError::NonFinite {
            frame: 1,
            index: 4,
            ..
        })
    ));
    let m = CcdMesh {
        mesh: &a,
        end: a.positions(),
        topo: &topo,
    };
    assert!(matches!(
        ccd_candidates(&m, None, &[[0, 1], [2, 8]], &opts),
        Err(CcdError::FaceIndex {
            pair: 1,
            face: 8,
            faces: 8,
            ..
        })
    ));
    assert!(matches!(
        ccd_candidates(&m, Some(&m), &[[9, 0]], &opts),
        Err(CcdError::FaceIndex {
            pair: 0,
            face: 9,
            ..
        })
    ));
    let other = Topology::new(&a.faces()[..2], 9);
    assert!(matches!(
        ccd_self(&a, a.positions(), &other, &opts),
        Err(CcdError::Mismatch { .. })
    ));
    // A tree that is not an LBVH over the mesh's faces: wrong size, a face in two leaves, a
    // leaf marker on an internal node, children off the Karras layout.
    let bvh = build(&a);
    let ends = a.positions();
    assert!(ccd_self_with_bvh(&a, ends, &topo, &bvh, &opts).is_ok());
    let small = build(&sheet(2, &[0; 4]));
    let mut twice = bvh.clone();
    let first = twice.first_leaf();
    twice.nodes[first].left = twice.nodes[first + 1].left;
    let mut marker = bvh.clone();
    marker.nodes[0].right = LEAF;
    let mut swapped = bvh.clone();
    let n0 = swapped.nodes[0];
    swapped.nodes[0].left = n0.right;
    swapped.nodes[0].right = n0.left;
    for bad in [&small, &twice, &marker, &swapped] {
        assert!(matches!(
            ccd_self_with_bvh(&a, ends, &topo, bad, &opts),
            Err(CcdError::Mismatch { what: "bvh", .. })
        ));
    }
}

/// With a minimum separation δ, two triangles gliding past each other at a gap below δ must be
/// reported even though their swept boxes never overlap; at a gap above δ they must not.
#[test]
fn min_separation_reaches_the_traversal() {
    let tri = |z: f32| {
        vec![
            Vec3::new(0.0, 0.0, z),
            Vec3::new(1.0, 0.0, z),
            Vec3::new(0.0, 1.0, z),
        ]
    };
    let a = TriMesh::new(tri(0.0), vec![[0, 1, 2]]).unwrap();
    let b = TriMesh::new(tri(0.25), vec![[0, 1, 2]]).unwrap();
    let a_end = a.positions().to_vec();
    let b_end: Vec<Vec3> = b
        .positions()
        .iter()
        .map(|&p| p + Vec3::new(0.5, 0.0, 0.0))
        .collect();
    let ta = Topology::new(a.faces(), a.vertex_count());
    let tb = Topology::new(b.faces(), b.vertex_count());
    let run = |delta: f64| {
        let opts = CcdOptions {
            min_separation: delta,
            ..CcdOptions::default()
        };
        ccd_pair(&a, &a_end, &ta, &b, &b_end, &tb, &opts).unwrap()
    };
    assert!(
        run(0.0).earliest.is_none(),
        "0.25 apart, no separation: free"
    );
    assert!(run(0.2).earliest.is_none(), "0.25 apart, δ = 0.2: free");
    let r = run(0.3);
    assert!(
        r.earliest.is_some_and(|t| t.t_lo == 0.0),
        "0.25 apart, δ = 0.3: in contact from t = 0"
    );
}
