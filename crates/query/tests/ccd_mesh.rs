//! Mesh CCD: contacts constructed exactly (dyadic coordinates) are always found with
//! `t_lo ≤ t*`; results are a subset of the brute force over all feature pairs of non-adjacent
//! triangle pairs run through the same elementary tests (so traversal and deduplication only
//! drop certified-free pairs), each feature pair is reported once; bad input → typed errors.

use std::collections::BTreeMap;

use glam::{DVec3, Vec3};
use gprox_geometry::TriMesh;
use gprox_query::ccd::{
    ccd_pair, ccd_self, edge_edge_toi, vertex_face_toi, CcdError, CcdOptions, Feature,
};
use gprox_query::self_collide::{share_vertex, Topology};
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

/// Brute force: every feature pair of every non-adjacent face pair, elementary tests only.
fn brute_self(mesh: &TriMesh, end: &[Vec3], opts: &CcdOptions) -> BTreeMap<Feature, f64> {
    // Keyed by feature; the value (t_lo of one point order) is informative.
    let f = mesh.faces();
    let s: Vec<DVec3> = mesh.positions().iter().map(|p| p.as_dvec3()).collect();
    let e: Vec<DVec3> = end.iter().map(|p| p.as_dvec3()).collect();
    let mut out = BTreeMap::new();
    for a in 0..f.len() {
        for b in 0..f.len() {
            if a == b || share_vertex(&f[a], &f[b]) {
                continue;
            }
            for &v in &f[a] {
                let idx = [v, f[b][0], f[b][1], f[b][2]].map(|i| i as usize);
                let r = vertex_face_toi(idx.map(|i| s[i]), idx.map(|i| e[i]), opts).unwrap();
                if let Some(t) = r {
                    out.insert(
                        Feature::VertexFace {
                            vertex: v,
                            face: b as u32,
                        },
                        t.t_lo,
                    );
                }
            }
            if a < b {
                for i in 0..3 {
                    for j in 0..3 {
                        let ea = [f[a][i], f[a][(i + 1) % 3]];
                        let eb = [f[b][j], f[b][(j + 1) % 3]];
                        let idx = [ea[0], ea[1], eb[0], eb[1]].map(|i| i as usize);
                        let r = edge_edge_toi(idx.map(|i| s[i]), idx.map(|i| e[i]), opts).unwrap();
                        if let Some(t) = r {
                            let sa = [ea[0].min(ea[1]), ea[0].max(ea[1])];
                            let sb = [eb[0].min(eb[1]), eb[0].max(eb[1])];
                            let (x, y) = if sb < sa { (sb, sa) } else { (sa, sb) };
                            out.insert(Feature::EdgeEdge { a: x, b: y }, t.t_lo);
                        }
                    }
                }
            }
        }
    }
    out
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
        // Faces around v (moving v changes them) and faces containing v are excluded.
        let around: Vec<usize> = (0..faces.len()).filter(|&g| faces[g].contains(&v)).collect();
        let ok: Vec<usize> = (0..faces.len())
            .filter(|&f| !faces[f].contains(&v) && around.iter().any(|&g| !share_vertex(&faces[g], &faces[f])))
            .collect();
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
        let brute = brute_self(&mesh, &end, &opts);
        let mut seen = std::collections::BTreeSet::new();
        for c in &r.contacts {
            prop_assert!(seen.insert(c.feature), "duplicate {:?}", c.feature);
            // Same elementary tests (up to point order, which may move `t_lo` within tolerance).
            prop_assert!(brute.contains_key(&c.feature), "{:?} not a brute-force positive", c.feature);
        }
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
    let other = Topology::new(&a.faces()[..2], 9);
    assert!(matches!(
        ccd_self(&a, a.positions(), &other, &opts),
        Err(CcdError::Mismatch { .. })
    ));
}
