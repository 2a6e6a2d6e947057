//! Vertex penetration between closed meshes against an independent brute-force oracle:
//! inside/outside by exact integer ray casting over all faces (random generic rays in 3-D,
//! Cramer's rule in `BigInt`, a new ray whenever one meets an edge or a vertex — no shared code
//! or formulation with the library's perturbed axis ray), depth = minimum over all faces of
//! `point_triangle_distance`. Random closed meshes at random and at exact grid poses (where
//! vertices land exactly on faces, edges and vertices and rays hit edges), degenerate cases, the
//! closedness errors, and the two-tori benchmark scene (skipped when ../shared is absent).

use glam::{DVec3, Vec3};
use gprox_bvh::lbvh::build;
use gprox_geometry::scene::torus;
use gprox_geometry::transform::{transform_point, transform_triangle, Pose64};
use gprox_geometry::tri_distance::point_triangle_distance;
use gprox_geometry::TriMesh;
use gprox_query::collide::{CollisionObject, Side};
use gprox_query::penetration::{penetration, Penetration, PenetrationError};
use proptest::prelude::*;

#[path = "penetration/oracle.rs"]
mod oracle;
#[path = "penetration/shapes.rs"]
mod shapes;

use oracle::{oracle, Truth};
use shapes::*;

fn world(m: &TriMesh, pose: &Pose64) -> (Vec<DVec3>, Vec<[DVec3; 3]>) {
    let pts = m
        .positions()
        .iter()
        .map(|&p| transform_point(pose, p))
        .collect();
    let tris = (0..m.face_count())
        .map(|i| transform_triangle(pose, m.triangle(i)))
        .collect();
    (pts, tris)
}

/// Checks one direction (`from`'s vertices inside `into`) of a result against the oracle.
fn check_side(
    got: &[gprox_query::penetration::PenetratingVertex],
    from: (&TriMesh, &Pose64),
    into: (&TriMesh, &Pose64),
) -> Result<[usize; 2], TestCaseError> {
    let (pts, _) = world(from.0, from.1);
    let (_, tris) = world(into.0, into.1);
    let truth = oracle(&pts, &tris);
    let expected: Vec<u32> = (0..pts.len() as u32)
        .filter(|&i| matches!(truth[i as usize], Truth::Winding(w) if w != 0))
        .collect();
    let ids: Vec<u32> = got.iter().map(|v| v.vertex).collect();
    prop_assert_eq!(&ids, &expected);
    for v in got {
        let p = pts[v.vertex as usize];
        prop_assert_eq!(v.position, p);
        prop_assert_eq!(Truth::Winding(v.winding), truth[v.vertex as usize].clone());
        // Depth: exactly the minimum over all faces, smallest face id on ties.
        let mut best = (f64::INFINITY, DVec3::ZERO, u32::MAX);
        for (f, t) in tris.iter().enumerate() {
            let (d, q) = point_triangle_distance(p, t);
            if d < best.0 {
                best = (d, q, f as u32);
            }
        }
        prop_assert_eq!((v.depth, v.closest, v.face), best);
        prop_assert!(v.depth > 0.0);
        prop_assert!((v.direction.length() - 1.0).abs() < 1e-9);
        let along = (v.closest - p).normalize();
        prop_assert!(v.direction.dot(along) > 1.0 - 1e-9);
    }
    let surface = truth.iter().filter(|t| **t == Truth::Surface).count();
    Ok([expected.len(), surface])
}

fn run(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> Penetration {
    let (ba, bb) = (build(a), build(b));
    let oa = CollisionObject::new(a, &ba, *pa).unwrap();
    let ob = CollisionObject::new(b, &bb, *pb).unwrap();
    penetration(&oa, &ob).unwrap()
}

/// Runs the query and checks both directions; returns the result and, over both directions,
/// how many vertices are inside and how many lie exactly on the other surface.
fn check_counts(
    a: &TriMesh,
    pa: &Pose64,
    b: &TriMesh,
    pb: &Pose64,
) -> Result<(Penetration, [usize; 2]), TestCaseError> {
    let r = run(a, pa, b, pb);
    let x = check_side(r.a_in_b(), (a, pa), (b, pb))?;
    let y = check_side(r.b_in_a(), (b, pb), (a, pa))?;
    let n = r.a_in_b().len() + r.b_in_a().len();
    prop_assert_eq!(r.inside_vertices(), n);
    let depths = r.a_in_b().iter().chain(r.b_in_a()).map(|v| v.depth);
    prop_assert_eq!(r.max_depth(), depths.clone().fold(0.0, f64::max));
    prop_assert_eq!(r.sum_depth(), depths.sum::<f64>());
    Ok((r, [x[0] + y[0], x[1] + y[1]]))
}

fn check(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> Result<Penetration, TestCaseError> {
    Ok(check_counts(a, pa, b, pb)?.0)
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Perturbed shapes at random poses, overlapping: inside sets, windings and depths equal
    /// the oracle's.
    #[test]
    fn random_shapes_match_oracle(
        ka in 0u8..4, kb in 0u8..4,
        sa in 0.5f32..1.5, sb in 0.5f32..1.5,
        na in prop::collection::vec(prop::array::uniform3(-0.05f32..0.05), 1..8),
        nb in prop::collection::vec(prop::array::uniform3(-0.05f32..0.05), 1..8),
        axa in prop::array::uniform3(-1f32..1.0), anga in 0f32..6.3,
        axb in prop::array::uniform3(-1f32..1.0), angb in 0f32..6.3,
        ta in prop::array::uniform3(-0.6f32..0.6), tb in prop::array::uniform3(-0.6f32..0.6),
        flip in any::<bool>(),
    ) {
        let a = perturbed(&shape(ka, sa), &na);
        let mut b = perturbed(&shape(kb, sb), &nb);
        if flip {
            b = flipped(&b);
        }
        check(&a, &pose(axa, anga, ta), &b, &pose(axb, angb, tb))?;
    }

    /// Grid shapes at exact grid poses: vertices exactly on faces, edges and vertices of the
    /// other mesh, rays through edges and vertices.
    #[test]
    fn grid_shapes_match_oracle(
        ka in 0u8..3, kb in 0u8..3,
        loa in prop::array::uniform3(-4i8..2), lob in prop::array::uniform3(-4i8..2),
        sza in prop::array::uniform3(1u8..8), szb in prop::array::uniform3(1u8..8),
        pa in 0u8..6, pb in 0u8..6, sga in 0u8..8, sgb in 0u8..8,
        ta in prop::array::uniform3(-3i8..4), tb in prop::array::uniform3(-3i8..4),
    ) {
        let a = grid_shape(ka, loa, sza);
        let b = grid_shape(kb, lob, szb);
        check(&a, &grid_pose(pa, sga, ta), &b, &grid_pose(pb, sgb, tb))?;
    }
}

/// The grid generator really produces the degenerate cases the property above is about:
/// over a fixed set of configurations, vertices exactly on the other surface and inside.
#[test]
fn grid_configurations_hit_the_surface() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n) as i8
    };
    let [mut inside, mut surface] = [0, 0];
    for _ in 0..64 {
        let a = grid_shape(
            next(3) as u8,
            [next(6) - 4, next(6) - 4, next(6) - 4],
            [4, 5, 6],
        );
        let b = grid_shape(
            next(3) as u8,
            [next(6) - 4, next(6) - 4, next(6) - 4],
            [6, 4, 5],
        );
        let pa = grid_pose(next(6) as u8, next(8) as u8, [next(7) - 3, next(7) - 3, 0]);
        let pb = grid_pose(next(6) as u8, next(8) as u8, [0, next(7) - 3, next(7) - 3]);
        let (_, [i, s]) = check_counts(&a, &pa, &b, &pb).unwrap();
        inside += i;
        surface += s;
    }
    eprintln!("grid configurations: {inside} vertices inside, {surface} on the other surface");
    assert!(
        inside > 10 && surface > 10,
        "inside {inside}, on the surface {surface}"
    );
}

// ---------------------------------------------------------------- degenerate cases

/// A tetrahedron with vertex 0 at `apex`, the others along +x, +y, +z at distance `l`.
fn tetra(apex: Vec3, l: f32) -> TriMesh {
    let p = vec![
        apex,
        apex + Vec3::X * l,
        apex + Vec3::Y * l,
        apex + Vec3::Z * l,
    ];
    TriMesh::new(p, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap()
}

#[test]
fn cube_centre_ray_meets_face_diagonals() {
    // From the centre every axis ray leaves through a face diagonal (an edge of two faces).
    let b = cube(Vec3::ZERO, Vec3::ONE);
    let a = tetra(Vec3::splat(0.5), 3.0);
    let r = check(&a, &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
    assert_eq!(r.a_in_b().len(), 1);
    let v = r.a_in_b()[0];
    assert_eq!((v.vertex, v.depth, v.winding), (0, 0.5, 1));
    // A corner of the cube is inside the big tetrahedron.
    assert!(r.b_in_a().iter().any(|v| v.vertex == 7));
}

#[test]
fn vertices_on_the_surface_are_not_inside() {
    let b = cube(Vec3::ZERO, Vec3::ONE);
    // On a face interior, on an edge, on a vertex, on a face diagonal; the tetrahedra point
    // outwards so their other vertices are outside.
    for apex in [
        Vec3::new(0.5, 0.25, 1.0),
        Vec3::new(0.5, 1.0, 1.0),
        Vec3::ONE,
        Vec3::new(0.5, 0.5, 1.0),
    ] {
        let a = tetra(apex, 2.0);
        let r = check(&a, &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
        assert!(r.a_in_b().is_empty(), "apex {apex}: {:?}", r.a_in_b());
    }
    // Moved one f32 step inwards, the apex is inside.
    let apex = Vec3::new(0.5, 0.25, 1.0f32.next_down());
    let r = check(&tetra(apex, 2.0), &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
    assert_eq!(r.a_in_b().len(), 1);
    assert_eq!(r.a_in_b()[0].depth, 1.0 - f64::from(apex.z));
}

#[test]
fn vertex_on_a_concave_edge_is_not_inside() {
    // The perturbed ray from the concave edge starts inside the L and runs parallel to both
    // faces through the edge: only the direct on-surface test sees the vertex on the surface.
    let b = l_prism(1.0, Vec3::ZERO);
    let apex = Vec3::new(1.0, 1.0, 0.5);
    let p = vec![
        apex,
        apex - 2.0 * Vec3::X,
        apex - 2.0 * Vec3::Y,
        apex + Vec3::new(-0.2, -0.2, 2.0),
    ];
    let a = TriMesh::new(p, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap();
    let r = check(&a, &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
    assert!(r.a_in_b().is_empty(), "{:?}", r.a_in_b());
    // Half a unit into the solid along the wall it is inside.
    let inner = TriMesh::new(
        a.positions()
            .iter()
            .map(|&q| q + Vec3::new(0.5, 0.5, 0.0))
            .collect(),
        a.faces().to_vec(),
    )
    .unwrap();
    let r = check(&inner, &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
    assert_eq!(
        r.a_in_b().iter().map(|v| v.vertex).collect::<Vec<_>>(),
        vec![0]
    );
}

#[test]
fn coincident_meshes_do_not_penetrate() {
    for m in [
        cube(Vec3::ZERO, Vec3::ONE),
        icosahedron(1.0),
        torus(1.0, 0.3, 24, 12).unwrap(),
    ] {
        for p in [
            Pose64::IDENTITY,
            pose([1.0, 2.0, 3.0], 0.7, [0.1, -0.2, 0.3]),
        ] {
            let r = check(&m, &p, &m, &p).unwrap();
            assert_eq!(r.inside_vertices(), 0);
            assert_eq!((r.max_depth(), r.sum_depth()), (0.0, 0.0));
        }
    }
    // A separate but identical copy (no shared pointer) behaves the same.
    let m = torus(1.0, 0.3, 12, 8).unwrap();
    let copy = m.clone();
    assert_eq!(
        run(&m, &Pose64::IDENTITY, &copy, &Pose64::IDENTITY).inside_vertices(),
        0
    );
}

#[test]
fn shrunk_copy_is_all_inside_either_orientation() {
    let outer = icosahedron(1.0);
    let inner = icosahedron(0.5);
    for b in [outer.clone(), flipped(&outer)] {
        let r = check(&inner, &Pose64::IDENTITY, &b, &Pose64::IDENTITY).unwrap();
        assert_eq!(r.a_in_b().len(), 12);
        assert!(r.b_in_a().is_empty());
        let w = r.a_in_b()[0].winding;
        assert!(r.a_in_b().iter().all(|v| v.winding == w && w.abs() == 1));
    }
}

// ---------------------------------------------------------------- errors

fn err(a: &TriMesh, b: &TriMesh) -> PenetrationError {
    let (ba, bb) = (build(a), build(b));
    let oa = CollisionObject::new(a, &ba, Pose64::IDENTITY).unwrap();
    let ob = CollisionObject::new(b, &bb, Pose64::IDENTITY).unwrap();
    penetration(&oa, &ob).unwrap_err()
}

/// Closedness is remembered per topology (`TriMesh::topology_id`): a closed mesh checked again
/// after its positions moved, or after more closed topologies than are remembered, is still
/// accepted, and an open mesh is rejected every time — also one made from a closed mesh's
/// positions right after that mesh was accepted.
#[test]
fn remembered_closedness_never_hides_an_open_mesh() {
    let closed = cube(Vec3::ZERO, Vec3::ONE);
    let mut faces = closed.faces().to_vec();
    faces.pop();
    for round in 0..3 {
        let mut moved = closed.clone();
        let shift = Vec3::splat(0.1 * (round + 1) as f32);
        let p: Vec<Vec3> = closed.positions().iter().map(|&q| q + shift).collect();
        moved.set_positions(p).unwrap();
        assert_eq!(moved.topology_id(), closed.topology_id());
        assert!(run(&closed, &Pose64::IDENTITY, &moved, &Pose64::IDENTITY).inside_vertices() > 0);
        let open = TriMesh::new(moved.positions().to_vec(), faces.clone()).unwrap();
        assert!(matches!(
            err(&moved, &open),
            PenetrationError::NotClosed {
                object: Side::B,
                faces: 1,
                ..
            }
        ));
        // More closed topologies than the memory holds push this one out (`run` unwraps:
        // each is accepted).
        for k in 0..40 {
            run(
                &icosahedron(1.0 + k as f32 * 0.01),
                &Pose64::IDENTITY,
                &moved,
                &Pose64::IDENTITY,
            );
        }
    }
}

#[test]
fn open_and_misoriented_meshes_are_rejected() {
    let closed = cube(Vec3::ZERO, Vec3::ONE);
    // Drop the last face: its three edges now have one face each.
    let mut faces = closed.faces().to_vec();
    let gone = faces.pop().unwrap();
    let open = TriMesh::new(closed.positions().to_vec(), faces.clone()).unwrap();
    match err(&closed, &open) {
        PenetrationError::NotClosed {
            object: Side::B,
            edge,
            faces: 1,
            ..
        } => {
            let on_gone = |v: u32| gone.contains(&v);
            assert!(
                on_gone(edge[0]) && on_gone(edge[1]),
                "{edge:?} not on {gone:?}"
            );
        }
        e => panic!("unexpected {e:?}"),
    }
    let msg = err(&open, &closed).to_string();
    assert!(
        msg.contains("object A") && msg.contains("not closed"),
        "{msg}"
    );
    // One face reversed.
    let mut faces = closed.faces().to_vec();
    faces[0] = [faces[0][0], faces[0][2], faces[0][1]];
    let bad = TriMesh::new(closed.positions().to_vec(), faces).unwrap();
    assert!(matches!(
        err(&closed, &bad),
        PenetrationError::NotOriented {
            object: Side::B,
            ..
        }
    ));
    // A third face on an edge (non-manifold).
    let mut faces = closed.faces().to_vec();
    // Edge 0-2 already has two faces; three more make five.
    faces.push([0, 2, 7]);
    faces.push([0, 7, 2]);
    faces.push([0, 2, 5]);
    let nm = TriMesh::new(closed.positions().to_vec(), faces).unwrap();
    let e = err(&nm, &closed);
    assert!(
        matches!(
            e,
            PenetrationError::NotClosed {
                object: Side::A,
                faces: 5,
                edge: [0, 2],
                ..
            }
        ),
        "{e:?}"
    );
    // A tree that does not belong to the mesh.
    let bvh = build(&cube(Vec3::ZERO, Vec3::ONE));
    let small = tetra(Vec3::ZERO, 1.0);
    let tb = build(&small);
    let oa = CollisionObject {
        mesh: &small,
        bvh: &bvh,
        pose: Pose64::IDENTITY,
    };
    let ob = CollisionObject::new(&small, &tb, Pose64::IDENTITY).unwrap();
    assert!(matches!(
        penetration(&oa, &ob),
        Err(PenetrationError::BvhMismatch {
            object: Side::A,
            ..
        })
    ));
    // Malformed trees (a node that is its own child, a child out of range, a node reached
    // twice, a leaf naming a missing face): typed errors, no panic, no endless loop — also
    // right after the well-formed tree they were made from was used (its shape is remembered,
    // and must not be taken for theirs).
    let m = cube(Vec3::ZERO, Vec3::ONE);
    let good = build(&m);
    let mut cyclic = good.clone();
    cyclic.nodes[0].left = 0;
    let mut out_of_range = good.clone();
    out_of_range.nodes[0].right = 1000;
    let mut twice = good.clone();
    twice.nodes[0].right = twice.nodes[0].left;
    let mut bad_face = good.clone();
    let leaf = bad_face.nodes.iter().position(|n| n.is_leaf()).unwrap();
    bad_face.nodes[leaf].left = 99;
    for (bvh, what) in [
        (&cyclic, "cycle"),
        (&out_of_range, "range"),
        (&twice, "twice"),
        (&bad_face, "face"),
    ] {
        let og = CollisionObject::new(&m, &good, Pose64::IDENTITY).unwrap();
        penetration(&og, &ob).unwrap();
        let oa = CollisionObject {
            mesh: &m,
            bvh,
            pose: Pose64::IDENTITY,
        };
        let e = penetration(&oa, &ob).unwrap_err();
        let ok = match what {
            "face" => matches!(
                e,
                PenetrationError::FaceOutOfRange {
                    object: Side::A,
                    face: 99
                }
            ),
            _ => matches!(
                e,
                PenetrationError::InvalidTree {
                    object: Side::A,
                    ..
                }
            ),
        };
        assert!(ok, "{what}: {e:?}");
    }
}

// ---------------------------------------------------------------- benchmark scene

const TORI: &str = "../../../shared/peers/scenes/two-tori-interlock";
const TORI_RESULTS: &str = "../../../shared/peers/results/two-tori-interlock.json";

fn scene_dir(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn two_tori_frames_match_oracle() {
    let dir = scene_dir(TORI);
    if !dir.exists() {
        eprintln!("note: {} absent, skipped", dir.display());
        return;
    }
    let s = gprox_geometry::scene::Scene::load(&dir).unwrap();
    let (ma, mb) = (s.mesh(0), s.mesh(1));
    let (ba, bb) = (build(ma), build(mb));
    // Frames with many penetrating vertices, one with none; the oracle sees every vertex
    // inside the other torus's box (the others are outside for the library too).
    for f in [12, 30, 47] {
        let (pa, pb) = (s.pose64(f, 0), s.pose64(f, 1));
        let oa = CollisionObject::new(ma, &ba, pa).unwrap();
        let ob = CollisionObject::new(mb, &bb, pb).unwrap();
        let r = penetration(&oa, &ob).unwrap();
        for (got, from, into) in [
            (r.a_in_b(), (ma, &pa), (mb, &pb)),
            (r.b_in_a(), (mb, &pb), (ma, &pa)),
        ] {
            check_tori_side(got, from, into, f);
        }
    }
}

/// The oracle on the vertices inside `into`'s bounding box (every 3rd one to keep the test
/// short, plus every vertex the library reports).
fn check_tori_side(
    got: &[gprox_query::penetration::PenetratingVertex],
    from: (&TriMesh, &Pose64),
    into: (&TriMesh, &Pose64),
    frame: usize,
) {
    let (pts, _) = world(from.0, from.1);
    let (ipts, tris) = world(into.0, into.1);
    let lo = ipts.iter().fold(DVec3::INFINITY, |a, &b| a.min(b));
    let hi = ipts.iter().fold(DVec3::NEG_INFINITY, |a, &b| a.max(b));
    let reported: std::collections::HashMap<u32, _> = got.iter().map(|v| (v.vertex, v)).collect();
    let sample: Vec<u32> = (0..pts.len() as u32)
        .filter(|&i| {
            let p = pts[i as usize];
            (i % 3 == 0 && lo.cmple(p).all() && p.cmple(hi).all()) || reported.contains_key(&i)
        })
        .collect();
    let sp: Vec<DVec3> = sample.iter().map(|&i| pts[i as usize]).collect();
    let truth = oracle(&sp, &tris);
    for (k, &i) in sample.iter().enumerate() {
        let inside = matches!(truth[k], Truth::Winding(w) if w != 0);
        assert_eq!(
            reported.contains_key(&i),
            inside,
            "frame {frame} vertex {i}: {:?}",
            truth[k]
        );
        if let Some(v) = reported.get(&i) {
            let best = tris
                .iter()
                .map(|t| point_triangle_distance(pts[i as usize], t).0)
                .fold(f64::INFINITY, f64::min);
            assert_eq!(v.depth, best, "frame {frame} vertex {i}");
        }
    }
}

/// Totals over all 60 frames against the mesh-based peers' (parry3d, open3d, warp).
#[test]
fn two_tori_totals_match_peers() {
    let (dir, res) = (scene_dir(TORI), scene_dir(TORI_RESULTS));
    if !dir.exists() || !res.exists() {
        eprintln!("note: two-tori scene or results absent, skipped");
        return;
    }
    let s = gprox_geometry::scene::Scene::load(&dir).unwrap();
    let (ma, mb) = (s.mesh(0), s.mesh(1));
    let (ba, bb) = (build(ma), build(mb));
    let (mut total, mut max_count, mut max_depth) = (0usize, 0usize, 0f64);
    for f in 0..s.frame_count() {
        let oa = CollisionObject::new(ma, &ba, s.pose64(f, 0)).unwrap();
        let ob = CollisionObject::new(mb, &bb, s.pose64(f, 1)).unwrap();
        let r = penetration(&oa, &ob).unwrap();
        total += r.inside_vertices();
        max_count = max_count.max(r.inside_vertices());
        max_depth = max_depth.max(r.max_depth());
    }
    // The peers' summaries, read without a JSON parser: every mesh-based run ("ref" is the
    // analytic torus and differs by construction).
    let text = std::fs::read_to_string(&res).unwrap();
    let field = |chunk: &str, name: &str| -> Option<f64> {
        let at = chunk.find(&format!("\"{name}\":"))? + name.len() + 3;
        let rest = chunk[at..].trim_start();
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest[..end].trim().parse().ok()
    };
    let mut compared = 0;
    for chunk in text.split("\"peer\":").skip(1) {
        let peer = chunk.trim_start().trim_start_matches('"');
        let peer = &peer[..peer.find('"').unwrap_or(0)];
        let summary = &chunk[chunk.find("\"summary\":").unwrap_or(0)..];
        let Some(want_total) = field(summary, "inside_vertices_total") else {
            continue;
        };
        if peer == "ref" {
            continue;
        }
        assert_eq!(total as f64, want_total, "total vs {peer}");
        assert_eq!(
            Some(max_count as f64),
            field(summary, "inside_vertices_max"),
            "{peer}"
        );
        let want_depth = field(summary, "max_depth").unwrap();
        assert!(
            (max_depth - want_depth).abs() < 1e-6,
            "{max_depth} vs {peer} {want_depth}"
        );
        compared += 1;
    }
    assert!(compared >= 1, "no mesh-based peer summary found");
}
