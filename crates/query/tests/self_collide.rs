//! Self-collision: pairs with normal-cone culling == without == brute force over all
//! non-adjacent pairs (exact rational oracle), on random meshes, deformed grids, spiral strips
//! and folded sheets built to defeat unsound (node and node-pair) culling; the certified
//! direction masks against exact rational signs; the cache across frames; plus the per-frame
//! update with its rebuild policy.

#[path = "../../../tests/common/gen.rs"]
mod gen;
#[path = "../../../tests/common/oracle.rs"]
mod oracle;

use glam::Vec3;
use gprox_bvh::{lbvh, normal_cone::normal_cones, rebuild_policy::Update};
use gprox_geometry::TriMesh;
use gprox_query::self_collide::{
    face_normals, self_collide, self_collide_cached, SelfCollider, SelfCullCache, Topology,
};
use proptest::prelude::*;

/// Pairs with and without culling, asserting they agree.
fn both(mesh: &TriMesh) -> Vec<[u32; 2]> {
    let bvh = lbvh::build(mesh);
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let masks = normal_cones(&bvh, &face_normals(mesh));
    let plain = self_collide(mesh, &bvh, &topo, None).expect("matching inputs");
    let culled = self_collide(mesh, &bvh, &topo, Some(&masks)).expect("matching inputs");
    assert_eq!(plain.pairs, culled.pairs, "culling changed the result");
    plain.pairs
}

/// An `n × m` grid sheet over `[0, 1]²` with heights `z[i][j]`, two triangles per cell
/// (consistently oriented, normal +z when flat).
fn sheet(n: usize, m: usize, z: &[f32], xy: impl Fn(usize, usize) -> (f32, f32)) -> TriMesh {
    let mut pos = Vec::new();
    for i in 0..n {
        for j in 0..m {
            let (x, y) = xy(i, j);
            pos.push(Vec3::new(x, y, z[i * m + j]));
        }
    }
    let id = |i: usize, j: usize| (i * m + j) as u32;
    let mut faces = Vec::new();
    for i in 0..n - 1 {
        for j in 0..m - 1 {
            faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh::new(pos, faces).expect("valid sheet")
}

#[test]
fn flat_sheet_is_culled_and_empty() {
    let n = 20;
    let mesh = sheet(n, n, &vec![0.0; n * n], |i, j| {
        (i as f32 / 19.0, j as f32 / 19.0)
    });
    let bvh = lbvh::build(&mesh);
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let masks = normal_cones(&bvh, &face_normals(&mesh));
    let r = self_collide(&mesh, &bvh, &topo, Some(&masks)).unwrap();
    assert!(r.pairs.is_empty());
    assert_eq!(
        r.culled_nodes, 1,
        "the whole flat sheet is one certified disk"
    );
    assert_eq!(r.candidates, 0);
    let plain = self_collide(&mesh, &bvh, &topo, None).unwrap();
    assert!(plain.candidates > 0);
}

/// A strip wound `turns` times around the z axis with radius growing slowly and height
/// `h sin(kθ)`: its projection overlaps itself, normals can stay in one hemisphere, and the
/// turns may cross. Culling must not hide those crossings.
fn spiral(segments: usize, turns: f32, h: f32, k: f32, width: f32) -> TriMesh {
    let z: Vec<f32> = (0..segments * 2)
        .map(|idx| {
            let th = (idx / 2) as f32 / (segments - 1) as f32 * turns * std::f32::consts::TAU;
            h * (k * th).sin()
        })
        .collect();
    sheet(segments, 2, &z, |i, j| {
        let th = i as f32 / (segments - 1) as f32 * turns * std::f32::consts::TAU;
        let r = 1.0 + 0.02 * th + j as f32 * width;
        (r * th.cos(), r * th.sin())
    })
}

/// Loads the cloth of `cloth-on-sphere` (OBJ topology + per-frame f32 positions).
fn load_cloth(dir: &std::path::Path) -> (Vec<[u32; 3]>, Vec<Vec<Vec3>>) {
    let obj = std::fs::read_to_string(dir.join("cloth.obj")).expect("cloth.obj");
    let mut nv = 0;
    let mut faces = Vec::new();
    for l in obj.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.first() {
            Some(&"v") => nv += 1,
            Some(&"f") => faces.push([1, 2, 3].map(|i| {
                w[i].split('/')
                    .next()
                    .and_then(|x| x.parse::<u32>().ok())
                    .expect("face index")
                    - 1
            })),
            _ => {}
        }
    }
    let raw = std::fs::read(dir.join("cloth.verts.f32")).expect("verts");
    let fl: Vec<f32> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let frames = fl
        .chunks_exact(nv * 3)
        .map(|c| {
            c.chunks_exact(3)
                .map(|p| Vec3::new(p[0], p[1], p[2]))
                .collect()
        })
        .collect();
    (faces, frames)
}

/// Reference per-frame self counts: the first run ("ref", brute force) of the "self" query.
fn reference_counts(path: &std::path::Path) -> Vec<usize> {
    let text = std::fs::read_to_string(path).expect("results json");
    let at = text.find("\"kind\": \"self\"").expect("self query");
    let rest = &text[at..];
    let end = rest.find("\"summary\"").unwrap_or(rest.len());
    rest[..end]
        .split("\"count\":")
        .skip(1)
        .map(|s| {
            let digits: String = s
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits.parse().expect("count")
        })
        .collect()
}

#[test]
fn cloth_frames_match_reference_counts() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/peers/scenes/cloth-on-sphere"
    ));
    let res = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/peers/results/cloth-on-sphere.json"
    ));
    if !dir.exists() || !res.exists() {
        println!("note: cloth-on-sphere scene or results absent, skipping");
        return;
    }
    let (faces, frames) = load_cloth(dir);
    let counts = reference_counts(res);
    let mut mesh = TriMesh::new(frames[0].clone(), faces).unwrap();
    let mut culled = SelfCollider::new(&mesh, true);
    let mut plain = SelfCollider::new(&mesh, false);
    for f in [0usize, 8, 10, 15, 29] {
        mesh.set_positions(frames[f].clone()).unwrap();
        culled.update(&mesh).unwrap();
        plain.update(&mesh).unwrap();
        let a = culled.query(&mesh).unwrap().pairs;
        let b = plain.query(&mesh).unwrap().pairs;
        assert_eq!(a, b, "frame {f}: culling changed the result");
        assert_eq!(a.len(), counts[f], "frame {f}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random small meshes (shared vertices, degenerate faces): all three agree.
    #[test]
    fn random_meshes_match_brute_force(mesh in gen::grid_mesh(9, 12, 2)) {
        let pairs = both(&mesh);
        prop_assert_eq!(pairs, oracle::brute_force_self_pairs(&mesh));
    }

    /// Deformed grid sheets (folds, near-flat regions that culling skips).
    #[test]
    fn deformed_sheets_match_brute_force(
        n in 3usize..7,
        z in prop::collection::vec(-4i32..=4, 49),
        scale in prop_oneof![Just(0.0f32), Just(0.05), Just(0.3), Just(1.0)],
    ) {
        let zs: Vec<f32> = z.iter().take(n * n).map(|&v| v as f32 * scale / 4.0).collect();
        let mesh = sheet(n, n, &zs, |i, j| (i as f32 / (n - 1) as f32, j as f32 / (n - 1) as f32));
        let pairs = both(&mesh);
        prop_assert_eq!(pairs, oracle::brute_force_self_pairs(&mesh));
    }

    /// Spiral strips overlapping themselves in projection.
    #[test]
    fn spiral_strips_match_brute_force(
        segments in 12usize..40,
        turns in 0.8f32..2.2,
        h in 0.0f32..0.4,
        k in 0.2f32..2.0,
        width in 0.05f32..0.4,
    ) {
        let mesh = spiral(segments, turns, h, k, width);
        let pairs = both(&mesh);
        prop_assert_eq!(pairs, oracle::brute_force_self_pairs(&mesh));
    }
}

#[test]
fn collider_tracks_frames_and_reports_rebuilds() {
    let n = 12;
    let flat = vec![0.0f32; n * n];
    let mut mesh = sheet(n, n, &flat, |i, j| (i as f32 / 11.0, j as f32 / 11.0));
    let mut sc = SelfCollider::new(&mesh, true);
    assert_eq!(sc.policy.last_ratio, 1.0);
    // Fold the sheet over itself step by step: update == fresh build at every frame.
    for step in 1..=8 {
        let a = step as f32 / 8.0 * std::f32::consts::PI * 0.95;
        let pos: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|p| {
                let x = p.x - 0.5;
                if x > 0.0 {
                    Vec3::new(0.5 + x * a.cos(), p.y, 0.02 + x * a.sin())
                } else {
                    Vec3::new(p.x, p.y + 0.013 * x, p.z)
                }
            })
            .collect();
        mesh.set_positions(pos).unwrap();
        let u = sc.update(&mesh).unwrap();
        assert!(matches!(u, Update::Refit | Update::Rebuilt));
        assert!(sc.policy.last_ratio.is_finite() && sc.policy.last_ratio > 0.0);
        let got = sc.query(&mesh).unwrap().pairs;
        assert_eq!(got, oracle::brute_force_self_pairs(&mesh), "step {step}");
    }
}

#[test]
fn mismatched_inputs_are_typed_errors() {
    let mesh = sheet(3, 3, &[0.0; 9], |i, j| (i as f32, j as f32));
    let other = sheet(4, 4, &[0.0; 16], |i, j| (i as f32, j as f32));
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let bvh = lbvh::build(&other);
    assert!(self_collide(&mesh, &bvh, &topo, None).is_err());
    let bvh = lbvh::build(&mesh);
    let other_topo = Topology::new(other.faces(), other.vertex_count());
    assert!(self_collide(&mesh, &bvh, &other_topo, None).is_err());
    assert!(self_collide(&mesh, &bvh, &topo, Some(&[0u32; 3])).is_err());
}

#[test]
fn crossing_spiral_is_found_while_culling_works() {
    // Second turn dips through the first; most of the strip is culled, the crossing is not.
    let mesh = spiral(80, 1.7, 0.3, 1.2, 0.3);
    let bvh = lbvh::build(&mesh);
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let masks = normal_cones(&bvh, &face_normals(&mesh));
    let r = self_collide(&mesh, &bvh, &topo, Some(&masks)).unwrap();
    println!(
        "pairs {} culled {} candidates {}",
        r.pairs.len(),
        r.culled_nodes,
        r.candidates
    );
    assert!(!r.pairs.is_empty());
    assert!(r.culled_nodes > 0);
    assert_eq!(r.pairs, oracle::brute_force_self_pairs(&mesh));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The unrolled direction mask equals the one straight from the direction table.
    #[test]
    fn direction_mask_matches_reference(x in -4.0f32..4.0, y in -4.0f32..4.0, z in -4.0f32..4.0) {
        use gprox_bvh::normal_cone::{direction_mask, direction_mask_reference};
        let n = Vec3::new(x, y, z);
        prop_assert_eq!(direction_mask(n), direction_mask_reference(n));
        let r = Vec3::new(x.round(), y.round(), z.round());
        prop_assert_eq!(direction_mask(r), direction_mask_reference(r));
    }
}

/// A sheet over `[0, 1]²` folded along `x = c` by `angle` (π folds it flat back over itself),
/// the folded part lifted by `gap` per unit of distance from the fold (negative: it dips
/// through the base), plus small bumps `z`: its halves overlap in projection, so a union of
/// two subtrees across the fold must fail its certificate.
fn folded(n: usize, c: f32, angle: f32, gap: f32, z: &[f32]) -> TriMesh {
    let flat = sheet(n, n, z, |i, j| {
        (i as f32 / (n - 1) as f32, j as f32 / (n - 1) as f32)
    });
    let pos = flat
        .positions()
        .iter()
        .map(|p| {
            let x = p.x - c;
            if x > 0.0 {
                Vec3::new(
                    c + x * angle.cos() - p.z * angle.sin(),
                    p.y,
                    x * angle.sin() + p.z * angle.cos() + gap * x,
                )
            } else {
                *p
            }
        })
        .collect();
    TriMesh::new(pos, flat.faces().to_vec()).expect("valid folded sheet")
}

/// Meshes of at least 1024 faces take the large-mesh path of the culled traversal (small node
/// sets tested leaf by leaf instead of certified or descended): same pairs as the plain one.
#[test]
fn large_sheets_test_small_sets_leaf_by_leaf() {
    let mut found = 0;
    for (k, &(c, angle, gap)) in [(0.3, 2.8, -0.05), (0.5, 3.1, -0.02), (0.45, 3.12, 0.0)]
        .iter()
        .enumerate()
    {
        let n = 28;
        let zs: Vec<f32> = (0..n * n)
            .map(|i| ((i * 7 + k) % 5) as f32 * 0.01 - 0.02)
            .collect();
        let mesh = folded(n, c, angle, gap, &zs);
        assert!(mesh.faces().len() >= 1024);
        found += both(&mesh).len();
    }
    assert!(found > 0, "the folds should cross");
}

/// Exact sign of `d · ((b - a) × (c - a))` in rationals.
fn exact_sign(t: [Vec3; 3], d: [i8; 3]) -> i32 {
    use num_traits::{Signed, Zero};
    let r = |v: Vec3| [v.x, v.y, v.z].map(|x| oracle::rational(x as f64));
    let [a, b, c] = t.map(r);
    let e1: Vec<_> = (0..3).map(|i| &b[i] - &a[i]).collect();
    let e2: Vec<_> = (0..3).map(|i| &c[i] - &a[i]).collect();
    let n = [
        &e1[1] * &e2[2] - &e1[2] * &e2[1],
        &e1[2] * &e2[0] - &e1[0] * &e2[2],
        &e1[0] * &e2[1] - &e1[1] * &e2[0],
    ];
    let mut dot = num_rational::BigRational::zero();
    for i in 0..3 {
        dot += &n[i] * num_rational::BigRational::from_integer((d[i] as i64).into());
    }
    if dot.is_positive() {
        1
    } else if dot.is_negative() {
        -1
    } else {
        0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Folded sheets (folds near-touching, touching and crossing the base): culling on/off
    /// and brute force agree.
    #[test]
    fn folded_sheets_match_brute_force(
        n in 3usize..7,
        c in 0.2f32..0.8,
        angle in prop_oneof![Just(std::f32::consts::PI), 2.0f32..3.2],
        gap in prop_oneof![Just(0.0f32), -0.2f32..0.2],
        z in prop::collection::vec(-2i32..=2, 49),
        scale in prop_oneof![Just(0.0f32), Just(0.02), Just(0.1)],
    ) {
        let zs: Vec<f32> = z.iter().take(n * n).map(|&v| v as f32 * scale).collect();
        let mesh = folded(n, c, angle, gap, &zs);
        let pairs = both(&mesh);
        prop_assert_eq!(pairs, oracle::brute_force_self_pairs(&mesh));
    }

    /// Larger folded sheets (too big for the rational oracle): culling on/off agree.
    #[test]
    fn large_folded_sheets_agree(
        n in 8usize..16,
        c in 0.2f32..0.8,
        angle in 2.5f32..3.2,
        gap in -0.1f32..0.1,
        z in prop::collection::vec(-2i32..=2, 256),
        scale in prop_oneof![Just(0.0f32), Just(0.01), Just(0.05)],
    ) {
        let zs: Vec<f32> = z.iter().take(n * n).map(|&v| v as f32 * scale).collect();
        let mesh = folded(n, c, angle, gap, &zs);
        both(&mesh);
    }

    /// Every bit of the certified direction mask is an exact positive sign (the f32 error
    /// bound is rigorous), on small and large, near-degenerate and ordinary triangles.
    #[test]
    fn certified_mask_bits_are_exact(
        pts in prop::collection::vec(-1000i32..=1000, 9),
        exp in -30i32..30,
        squash in prop_oneof![Just(1.0f32), Just(1e-3), Just(1e-6), Just(0.0)],
    ) {
        use gprox_bvh::normal_cone::{certified_direction_mask, DIRECTIONS};
        let s = 2f32.powi(exp) / 997.0;
        let v = |k: usize| Vec3::new(pts[k] as f32 * s, pts[k + 1] as f32 * s, pts[k + 2] as f32 * s);
        let (a, b) = (v(0), v(3));
        // `squash` pulls c towards the line ab: near-degenerate triangles.
        let c = a + (b - a) * 0.37 + (v(6) - a) * squash;
        let t = [a, b, c];
        let m = certified_direction_mask(a, b, c);
        for (k, d) in DIRECTIONS.iter().enumerate() {
            if m & (1 << k) != 0 {
                prop_assert_eq!(exact_sign(t, *d), 1, "direction {:?} of {:?}", d, t);
            }
        }
    }
}

#[test]
fn curved_sheet_culls_node_pairs() {
    // Three quarters of a cylinder: normals span 270°, so the root is not certified; the seams
    // between certified pieces are culled as node pairs.
    let n = 24;
    let mesh = sheet(n, n, &vec![0.0; n * n], |i, j| {
        let th = i as f32 / (n - 1) as f32 * 1.5 * std::f32::consts::PI;
        (th.cos(), j as f32 / (n - 1) as f32)
    });
    let pos: Vec<Vec3> = mesh
        .positions()
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let th = (k / n) as f32 / (n - 1) as f32 * 1.5 * std::f32::consts::PI;
            Vec3::new(p.x, p.y, th.sin())
        })
        .collect();
    let mesh = TriMesh::new(pos, mesh.faces().to_vec()).unwrap();
    let bvh = lbvh::build(&mesh);
    let topo = Topology::new(mesh.faces(), mesh.vertex_count());
    let mut cache = SelfCullCache::default();
    let culled = self_collide_cached(&mesh, &bvh, &topo, &mut cache).unwrap();
    let plain = self_collide(&mesh, &bvh, &topo, None).unwrap();
    assert_eq!(culled.pairs, plain.pairs);
    assert!(culled.pairs.is_empty());
    assert!(culled.culled_nodes > 1);
    assert!(
        culled.candidates * 2 < plain.candidates.max(1),
        "culled {} plain {}",
        culled.candidates,
        plain.candidates
    );
}

#[test]
fn cache_follows_frames_and_tree_changes() {
    // Fold a sheet step by step, with a fresh tree every other frame: the cache rebuilds its
    // layout when the tree changes and stays equal to the plain query and to brute force.
    let n = 9;
    let z: Vec<f32> = (0..n * n).map(|k| ((k * 7) % 5) as f32 * 0.01).collect();
    let topo_mesh = folded(n, 0.5, 0.0, 0.0, &z);
    let topo = Topology::new(topo_mesh.faces(), topo_mesh.vertex_count());
    let mut bvh = lbvh::build(&topo_mesh);
    let mut cache = SelfCullCache::default();
    for step in 0..=8 {
        let angle = step as f32 / 8.0 * 3.2;
        let mesh = folded(n, 0.5, angle, -0.05, &z);
        if step % 2 == 0 {
            bvh = lbvh::build(&mesh);
        } else {
            gprox_bvh::refit::refit_from_mesh(&mut bvh, &mesh).unwrap();
        }
        let culled = self_collide_cached(&mesh, &bvh, &topo, &mut cache).unwrap();
        let plain = self_collide(&mesh, &bvh, &topo, None).unwrap();
        assert_eq!(culled.pairs, plain.pairs, "step {step}");
        assert_eq!(
            culled.pairs,
            oracle::brute_force_self_pairs(&mesh),
            "step {step}"
        );
    }
}
