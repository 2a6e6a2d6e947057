//! The scene loader: the shared benchmark scenes (skipped when absent), the built-in scene, and
//! one malformed-input case per error.

use std::path::{Path, PathBuf};

use gprox::geometry::glam::{DVec3, Vec3};
use gprox::geometry::scene::{torus, Motion, QueryKind, QueryTargets, Scene, SceneError};
use gprox::geometry::transform::transform_point;

fn shared_scenes() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/scenes");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("note: {} absent, skipping", dir.display());
        None
    }
}

/// Reads a little-endian f32 file independently of the loader.
fn f32s(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn two_tori_scene_matches_its_files() {
    let Some(dir) = shared_scenes() else { return };
    let dir = dir.join("two-tori-interlock");
    let scene = Scene::load(&dir).unwrap();
    assert_eq!(scene.name(), "two-tori-interlock");
    assert_eq!(scene.frame_count(), 60);
    assert_eq!(scene.object_count(), 2);
    assert_eq!(scene.meshes().len(), 1, "both tori share torus.obj");
    assert_eq!(scene.mesh(0).face_count(), 5120);
    let kinds: Vec<_> = scene.queries().iter().map(|q| q.kind.clone()).collect();
    assert!(kinds.contains(&QueryKind::CollideAll) && kinds.contains(&QueryKind::CollideAny));
    assert_eq!(
        scene.queries()[0].targets,
        QueryTargets::Pairs(vec![[0, 1]])
    );
    // Poses equal the raw file, row-major [R | t], frame-major.
    let raw = f32s(&dir.join("transforms.f32"));
    for f in [0, 17, 59] {
        for o in 0..2 {
            let m = &raw[(f * 2 + o) * 12..(f * 2 + o + 1) * 12];
            let p = scene.pose64(f, o);
            for r in 0..3 {
                for c in 0..4 {
                    assert_eq!(p.rows[r][c], m[r * 4 + c] as f64);
                }
            }
            // The glam pose maps points the same way.
            let x = Vec3::new(0.3, -0.7, 0.2);
            let a = scene.pose(f, o).transform_point3(x).as_dvec3();
            assert!((a - transform_point(&p, x)).length() < 1e-5);
        }
    }
}

#[test]
fn cloth_scene_has_deforming_vertices() {
    let Some(dir) = shared_scenes() else { return };
    let dir = dir.join("cloth-on-sphere");
    let scene = Scene::load(&dir).unwrap();
    let cloth = scene.object_index("cloth").unwrap();
    let sphere = scene.object_index("sphere").unwrap();
    assert_eq!(scene.objects()[cloth].motion, Motion::Deforming);
    assert!(scene.is_deforming(cloth) && !scene.is_deforming(sphere));
    assert_eq!(scene.mesh(cloth).face_count(), 45_000);
    let v = scene.mesh(cloth).vertex_count();
    assert_eq!(v, 22_801);
    let raw = f32s(&dir.join("cloth.verts.f32"));
    assert_eq!(raw.len(), scene.frame_count() * v * 3);
    let last = scene.frame_count() - 1;
    let p = scene.positions(last, cloth);
    assert_eq!(p.len(), v);
    for k in [0, 777, v - 1] {
        let base = (last * v + k) * 3;
        assert_eq!(p[k], Vec3::new(raw[base], raw[base + 1], raw[base + 2]));
    }
    assert_eq!(scene.positions(0, cloth), scene.mesh(cloth).positions());
    assert_ne!(scene.positions(last, cloth), scene.positions(0, cloth));
    assert_eq!(
        scene.positions(last, sphere),
        scene.mesh(sphere).positions()
    );
    assert!(scene.queries().iter().any(
        |q| q.kind == QueryKind::SelfCollide && q.targets == QueryTargets::Objects(vec![cloth])
    ));
}

#[test]
fn every_shared_scene_loads_and_all_pairs_expand() {
    let Some(dir) = shared_scenes() else { return };
    let mut loaded = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        if !entry.path().join("scene.json").is_file() {
            continue;
        }
        let scene = Scene::load(entry.path()).unwrap();
        loaded += 1;
        for q in scene.queries() {
            let pairs = scene.query_pairs(q);
            if q.targets == QueryTargets::AllPairs {
                let n = scene.object_count();
                assert_eq!(pairs.len(), n * (n - 1) / 2);
                assert!(pairs.iter().all(|[a, b]| a < b && *b < n));
            }
        }
    }
    assert!(loaded >= 2);
}

#[test]
fn builtin_scene_is_two_closed_tori() {
    let scene = Scene::builtin();
    assert_eq!(scene.object_count(), 2);
    assert!(scene.frame_count() >= 4);
    let mesh = scene.mesh(0);
    assert!((2000..=5000).contains(&mesh.face_count()));
    // Closed 2-manifold: every directed edge appears once and its reverse once.
    let mut edges = std::collections::HashMap::new();
    for f in mesh.faces() {
        for k in 0..3 {
            *edges.entry((f[k], f[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    assert!(edges
        .iter()
        .all(|(&(a, b), &n)| n == 1 && edges.get(&(b, a)) == Some(&1)));
    // Outward winding: positive signed volume close to the torus volume 2 pi^2 R r^2.
    let vol: f64 = (0..mesh.face_count())
        .map(|i| {
            let [a, b, c] = mesh.triangle(i).map(|p| p.as_dvec3());
            a.dot(b.cross(c)) / 6.0
        })
        .sum();
    let exact = 2.0 * std::f64::consts::PI.powi(2) * 1.0 * 0.09;
    assert!(vol > 0.97 * exact && vol < exact, "volume {vol} vs {exact}");
    // Poses are rigid: rotation rows orthonormal.
    for f in 0..scene.frame_count() {
        let p = scene.pose64(f, 1);
        let r: Vec<DVec3> = (0..3)
            .map(|i| DVec3::new(p.rows[i][0], p.rows[i][1], p.rows[i][2]))
            .collect();
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((r[i].dot(r[j]) - want).abs() < 1e-6);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Malformed scenes.

const TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// A fresh folder holding a valid 2-frame scene: a rigid and a deforming tetrahedron.
fn valid_scene(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gprox-scene-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tet.obj"), TETRA).unwrap();
    std::fs::write(dir.join("scene.json"), header("\"a\"")).unwrap();
    let ident = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    write_f32s(&dir.join("transforms.f32"), &ident.repeat(4));
    let verts: Vec<f32> = [0f32, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.]
        .iter()
        .chain([0f32, 0., 0.5, 1., 0., 0.5, 0., 1., 0.5, 0., 0., 1.5].iter())
        .copied()
        .collect();
    write_f32s(&dir.join("b.verts.f32"), &verts);
    dir
}

fn header(query_object: &str) -> String {
    format!(
        r#"{{
  "format": "proxbench-scene/1",
  "name": "tiny",
  "frames": 2,
  "objects": [
    {{"name": "a", "mesh": "tet.obj", "motion": "rigid"}},
    {{"name": "b", "mesh": "tet.obj", "motion": "deforming", "verts": "b.verts.f32"}}
  ],
  "transforms": "transforms.f32",
  "queries": [
    {{"kind": "collide-all", "pairs": [[{query_object}, "b"]]}},
    {{"kind": "collide-any", "pairs": "all"}},
    {{"kind": "self", "objects": ["b"]}}
  ]
}}"#
    )
}

fn write_f32s(path: &Path, v: &[f32]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn tiny_scene_loads() {
    let dir = valid_scene("ok");
    let s = Scene::load(&dir).unwrap();
    assert_eq!(
        (s.frame_count(), s.object_count(), s.meshes().len()),
        (2, 2, 1)
    );
    assert!(s.is_deforming(1));
    assert_eq!(s.positions(1, 1)[3], Vec3::new(0.0, 0.0, 1.5));
    assert_eq!(s.positions(1, 0)[3], Vec3::new(0.0, 0.0, 1.0));
    assert_eq!(s.queries()[1].targets, QueryTargets::AllPairs);
    assert_eq!(s.query_pairs(&s.queries()[1]), vec![[0, 1]]);
    assert_eq!(s.queries()[2].kind, QueryKind::SelfCollide);
}

#[test]
fn missing_scene_json_names_the_file() {
    let dir = valid_scene("nojson");
    std::fs::remove_file(dir.join("scene.json")).unwrap();
    match Scene::load(&dir) {
        Err(SceneError::Io { path, .. }) => assert!(path.ends_with("scene.json")),
        other => panic!("expected Io error, got {other:?}"),
    }
}

#[test]
fn bad_json_reports_the_line() {
    let dir = valid_scene("badjson");
    std::fs::write(
        dir.join("scene.json"),
        "{\n  \"format\": \"proxbench-scene/1\",\n  \"name\" \"x\"\n}",
    )
    .unwrap();
    match Scene::load(&dir) {
        Err(SceneError::Json { path, line, .. }) => {
            assert!(path.ends_with("scene.json"));
            assert_eq!(line, 3);
        }
        other => panic!("expected Json error, got {other:?}"),
    }
}

#[test]
fn wrong_format_and_missing_fields_are_invalid() {
    let dir = valid_scene("format");
    let text = header("\"a\"").replace("proxbench-scene/1", "proxbench-scene/9");
    std::fs::write(dir.join("scene.json"), text).unwrap();
    let err = Scene::load(&dir).unwrap_err();
    assert!(matches!(err, SceneError::Invalid { .. }), "{err:?}");
    assert!(err.to_string().contains("proxbench-scene/9"));
    // A missing required field is a JSON (data) error with its line.
    let text = header("\"a\"").replace("\"frames\": 2,", "");
    std::fs::write(dir.join("scene.json"), text).unwrap();
    let err = Scene::load(&dir).unwrap_err();
    assert!(
        matches!(err, SceneError::Json { .. }) && err.to_string().contains("frames"),
        "{err}"
    );
}

#[test]
fn unknown_object_in_query_is_named() {
    let dir = valid_scene("unknown");
    std::fs::write(dir.join("scene.json"), header("\"zebra\"")).unwrap();
    match Scene::load(&dir) {
        Err(SceneError::UnknownObject { name, query, .. }) => {
            assert_eq!(name, "zebra");
            assert_eq!(query, 0);
        }
        other => panic!("expected UnknownObject, got {other:?}"),
    }
}

#[test]
fn missing_mesh_names_the_mesh_file() {
    let dir = valid_scene("nomesh");
    std::fs::remove_file(dir.join("tet.obj")).unwrap();
    match Scene::load(&dir) {
        Err(SceneError::Io { path, .. }) => assert!(path.ends_with("tet.obj")),
        other => panic!("expected Io error, got {other:?}"),
    }
}

#[test]
fn garbage_mesh_is_a_mesh_error() {
    let dir = valid_scene("garbage");
    std::fs::write(dir.join("tet.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n").unwrap();
    let err = Scene::load(&dir).unwrap_err();
    assert!(matches!(err, SceneError::Mesh { .. }), "{err:?}");
    assert!(err.to_string().contains("tet.obj"));
}

#[test]
fn short_transforms_report_expected_and_actual_bytes() {
    let dir = valid_scene("short");
    write_f32s(&dir.join("transforms.f32"), &[0.0; 40]);
    assert_array_size(&dir, "transforms.f32", 2 * 2 * 12 * 4, 160);
}

/// Loading `dir` fails with an `ArraySize` error for `file` with these byte counts.
fn assert_array_size(dir: &std::path::Path, file: &str, expected_bytes: u64, actual_bytes: u64) {
    match Scene::load(dir) {
        Err(SceneError::ArraySize {
            path,
            expected,
            actual,
            ..
        }) => {
            assert!(path.ends_with(file), "{path:?}");
            assert_eq!((expected, actual), (expected_bytes, actual_bytes));
        }
        other => panic!("expected ArraySize, got {other:?}"),
    }
}

#[test]
fn wrong_vertex_array_size_is_reported() {
    let dir = valid_scene("verts");
    write_f32s(&dir.join("b.verts.f32"), &[0.0; 30]);
    assert_array_size(&dir, "b.verts.f32", 2 * 4 * 3 * 4, 120);
}

#[test]
fn nan_transform_is_located() {
    let dir = valid_scene("nan");
    let mut t = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.].repeat(4);
    t[3 * 12 + 5] = f32::NAN; // frame 1, object 1
    write_f32s(&dir.join("transforms.f32"), &t);
    match Scene::load(&dir) {
        Err(SceneError::NonFinite { frame, index, .. }) => assert_eq!((frame, index), (1, 1)),
        other => panic!("expected NonFinite, got {other:?}"),
    }
}

#[test]
fn deforming_object_without_verts_is_invalid() {
    let dir = valid_scene("noverts");
    let text = header("\"a\"").replace(", \"verts\": \"b.verts.f32\"", "");
    std::fs::write(dir.join("scene.json"), text).unwrap();
    let err = Scene::load(&dir).unwrap_err();
    assert!(
        matches!(err, SceneError::Invalid { .. }) && err.to_string().contains("`b`"),
        "{err}"
    );
}

#[test]
fn frame_zero_must_match_the_mesh() {
    let dir = valid_scene("frame0");
    let mut v = f32s(&dir.join("b.verts.f32"));
    v[0] = 0.25;
    write_f32s(&dir.join("b.verts.f32"), &v);
    let err = Scene::load(&dir).unwrap_err();
    assert!(matches!(err, SceneError::Invalid { .. }), "{err:?}");
}

#[test]
fn malformed_obj_line_is_located() {
    let dir = valid_scene("objline");
    std::fs::write(dir.join("tet.obj"), "v 0 0 0\nv 1 x 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    match Scene::load(&dir) {
        Err(SceneError::Mesh {
            path,
            source: gprox::geometry::GeometryError::Parse { location, .. },
        }) => {
            assert!(path.ends_with("tet.obj"));
            assert_eq!(location, Some(2));
        }
        other => panic!("expected a located mesh parse error, got {other:?}"),
    }
}

#[test]
fn torus_rejects_bad_parameters() {
    assert!(torus(1.0, 0.3, 2, 8).is_none());
    assert!(torus(1.0, 0.3, 8, 2).is_none());
    assert!(torus(1.0, 1.5, 8, 8).is_none());
    assert!(torus(1.0, f32::NAN, 8, 8).is_none());
    let t = torus(2.0, 0.5, 10, 6).unwrap();
    assert_eq!((t.vertex_count(), t.face_count()), (60, 120));
    // Every vertex lies on the torus surface: (sqrt(x^2+y^2) - R)^2 + z^2 = r^2.
    for p in t.positions() {
        let d = (p.x.hypot(p.y) - 2.0).powi(2) + p.z * p.z;
        assert!((d - 0.25).abs() < 1e-5);
    }
}
