//! Fuzzed inputs: random bytes and mutated valid files for every loader (OBJ, STL, PLY, NURBS
//! JSON, `.bpt`, trimmed faces, scene folders), and random meshes and poses with NaN,
//! infinities, huge and tiny coordinates for every query. Never a panic: a typed error, or an
//! answer that holds (pair sets equal the exact brute force).

#[path = "common/oracle.rs"]
mod oracle;

use std::path::Path;

use gprox::geometry::freeform::trimmed::parse_trimmed_face;
use gprox::geometry::freeform::{parse_bpt, parse_nurbs_json, FreeformModel};
use gprox::geometry::io::{obj_from_bytes, ply_from_bytes, stl_from_bytes, write_obj, write_stl};
use gprox::geometry::scene::{torus, Scene};
use gprox::geometry::transform::Pose64;
use gprox::geometry::tri_distance::triangle_distance;
use gprox::geometry::TriMesh;
use gprox::{
    Affine3A, Backend, CcdOptions, CollideOptions, Context, DistanceOptions, Model, Motion, Vec3,
};
use proptest::prelude::*;

/// Tokens that tend to break parsers: numbers at the edges of f32 / f64 / u32, signs, and
/// the separators of the formats.
const TOKENS: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "1e-320",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "-",
    ".",
    "/",
    "//",
    "\n",
    " ",
    "\t",
    "f 1 2 3",
    "v 1 2 3",
    "vertex",
    "facet",
    "endsolid",
    "element",
    "end_header",
    "property",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "[[0,0,0]]",
    "\u{0}",
    "\u{ff}",
];

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Edit {
    Flip(f64, u8),
    Delete(f64, usize),
    Insert(f64, usize),
    Truncate(f64),
    Duplicate(f64, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0, any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (0.0..1.0, 1usize..16).prop_map(|(p, n)| Edit::Delete(p, n)),
        (0.0..1.0, 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (0.0..1.0).prop_map(Edit::Truncate),
        (0.0..1.0, 1usize..64).prop_map(|(p, n)| Edit::Duplicate(p, n)),
    ]
}

fn apply(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = base.to_vec();
    let at = |v: &Vec<u8>, p: f64| ((v.len() as f64 * p) as usize).min(v.len());
    for e in edits {
        match *e {
            Edit::Flip(p, b) => {
                let i = at(&v, p);
                if i < v.len() {
                    v[i] = b;
                }
            }
            Edit::Delete(p, n) => {
                let i = at(&v, p);
                let j = (i + n).min(v.len());
                v.drain(i..j);
            }
            Edit::Insert(p, t) => {
                let i = at(&v, p);
                v.splice(i..i, TOKENS[t].bytes());
            }
            Edit::Truncate(p) => {
                let i = at(&v, p);
                v.truncate(i);
            }
            Edit::Duplicate(p, n) => {
                let i = at(&v, p);
                let j = (i + n).min(v.len());
                let chunk = v[i..j].to_vec();
                v.splice(j..j, chunk);
            }
        }
    }
    v
}

/// A byte string: random, or a valid `base` with a few edits.
fn bytes_near(base: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..512),
        4 => prop::collection::vec(edit(), 1..4).prop_map(move |e| apply(&base, &e)),
    ]
}

fn small_torus() -> TriMesh {
    torus(1.0, 0.3, 6, 4).unwrap()
}

fn obj_text() -> Vec<u8> {
    let mut v = Vec::new();
    write_obj(&small_torus(), &mut v).unwrap();
    v
}

fn stl_binary() -> Vec<u8> {
    let mut v = Vec::new();
    write_stl(&small_torus(), &mut v).unwrap();
    v
}

const STL_ASCII: &str = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n\
vertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\n\
vertex 0 1 0\nendloop\nendfacet\nendsolid t\n";

const PLY_ASCII: &str = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n\
property float y\nproperty float z\nelement face 4\nproperty list uchar int vertex_indices\n\
end_header\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n";

const NURBS_JSON: &str = r#"{"degree_u": 2, "degree_v": 1, "num_ctrl_u": 3, "num_ctrl_v": 2,
"knots_u": [0, 0, 0, 1, 1, 1], "knots_v": [0, 0, 1, 1],
"control_points": [[[0, 0, 0], [0, 1, 0]], [[1, 0, 1], [1, 1, 1]], [[2, 0, 0], [2, 1, 0]]],
"weights": [[1, 1], [0.7071, 0.7071], [1, 1]]}"#;

const BPT: &str = "2\n1 1\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2 1\n0 0 1\n0 1 1\n1 0 2\n1 1 2\n\
2 0 1\n2 1 1\n";

const TRIMMED: &str = r#"{"degree_u": 1, "degree_v": 1, "num_ctrl_u": 2, "num_ctrl_v": 2,
"knots_u": [0, 0, 1, 1], "knots_v": [0, 0, 1, 1],
"control_points": [[[0, 0, 0], [0, 1, 0]], [[1, 0, 0], [1, 1, 0]]],
"trim": [{"role": "outer", "curves": [
 {"degree": 1, "knots": [0, 0, 1, 1], "control_points": [[0.1, 0.1], [0.9, 0.1]]},
 {"degree": 1, "knots": [0, 0, 1, 1], "control_points": [[0.9, 0.1], [0.9, 0.9]]},
 {"degree": 1, "knots": [0, 0, 1, 1], "control_points": [[0.9, 0.9], [0.1, 0.9]]},
 {"degree": 1, "knots": [0, 0, 1, 1], "control_points": [[0.1, 0.9], [0.1, 0.1]]}]}]}"#;

/// What a loaded mesh must survive: a model, and collision, self-collision and distance
/// against itself — with pair sets equal to the exact brute force.
fn exercise(mesh: TriMesh) {
    if std::env::var("GPROX_FUZZ_TRACE").is_ok() {
        eprintln!("exercise {} faces", mesh.face_count());
    }
    if mesh.face_count() > 64 {
        return;
    }
    let ctx = Context::new(Backend::Cpu).unwrap();
    let m = ctx.model(mesh.clone()).unwrap();
    let shift = Affine3A::from_translation(Vec3::new(0.1, 0.05, 0.0));
    let opts = CollideOptions::default();
    let got = ctx
        .collide_all(&m, &Affine3A::IDENTITY, &m, &shift, &opts)
        .unwrap();
    let want = oracle::brute_force_pairs(
        &mesh,
        &Pose64::IDENTITY,
        &mesh,
        &Pose64::from_affine(&shift),
    );
    assert_eq!(got, want);
    let _ = ctx.self_collide(&m);
    let _ = ctx.distance(
        &m,
        &Affine3A::IDENTITY,
        &m,
        &shift,
        &DistanceOptions::default(),
    );
    let _ = ctx.penetration(&m, &Affine3A::IDENTITY, &m, &shift);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn obj_loader(b in bytes_near(obj_text())) {
        if let Ok(m) = obj_from_bytes(&b) { exercise(m) }
    }

    #[test]
    fn stl_loader(b in prop_oneof![bytes_near(stl_binary()), bytes_near(STL_ASCII.into())]) {
        if let Ok(m) = stl_from_bytes(&b) { exercise(m) }
    }

    #[test]
    fn ply_loader(b in bytes_near(PLY_ASCII.into())) {
        if let Ok(m) = ply_from_bytes(&b) { exercise(m) }
    }

    #[test]
    fn nurbs_json_loader(b in bytes_near(NURBS_JSON.into())) {
        let text = String::from_utf8_lossy(&b);
        if let Ok(s) = parse_nurbs_json(&text, Path::new("fuzz.json")) {
            freeform_survives(vec![s]);
        }
    }

    #[test]
    fn bpt_loader(b in bytes_near(BPT.into())) {
        let text = String::from_utf8_lossy(&b);
        if let Ok(s) = parse_bpt(&text, Path::new("fuzz.bpt")) {
            freeform_survives(s);
        }
    }

    #[test]
    fn trimmed_face_loader(b in bytes_near(TRIMMED.into())) {
        let text = String::from_utf8_lossy(&b);
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Ok(face) = parse_trimmed_face(&doc, Path::new("fuzz.json")) {
                let _ = face.contains(0.5, 0.5);
            }
        }
    }

    #[test]
    fn scene_loader(
        header in bytes_near(SCENE.into()),
        transforms in bytes_near(scene_transforms()),
        obj in bytes_near(obj_text()),
    ) {
        let dir = std::env::temp_dir().join(format!("gprox-fuzz-scene-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scene.json"), header).unwrap();
        std::fs::write(dir.join("transforms.f32"), transforms).unwrap();
        std::fs::write(dir.join("t.obj"), obj).unwrap();
        if let Ok(s) = Scene::load(&dir) {
            for f in 0..s.frame_count() {
                for o in 0..s.object_count() {
                    let p = s.pose64(f, o);
                    prop_assert!(p.rows.iter().flatten().all(|x| x.is_finite()));
                }
            }
        }
    }
}

const SCENE: &str = r#"{"format": "proxbench-scene/1", "name": "fuzz", "frames": 2,
"objects": [{"name": "a", "mesh": "t.obj"}, {"name": "b", "mesh": "t.obj"}],
"transforms": "transforms.f32",
"queries": [{"kind": "collide-all", "pairs": [["a", "b"]]}, {"kind": "self", "objects": ["a"]}],
"truth": {"collide-all": {"a|b": {"count": [0, 1]}}}}"#;

fn scene_transforms() -> Vec<u8> {
    let id = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    [id; 4]
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

/// A loaded freeform model must survive a coarse tessellation and a model build.
fn freeform_survives(surfaces: Vec<gprox::geometry::freeform::NurbsSurface>) {
    let Ok(model) = FreeformModel::new(surfaces) else {
        return;
    };
    let unit = model.unit();
    if !(unit.is_finite() && unit < 1e6 && unit > 1e-6) {
        return;
    }
    let _ = model.tessellate(0.05 * unit);
}

/// A coordinate from every corner of f32: ordinary, huge, tiny, subnormal, zero, non-finite.
fn coordinate() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -2.0f32..2.0,
        1 => prop::sample::select(vec![
            0.0, -0.0, 1e30, -1e30, 1e-30, -1e-30, 1e-40, f32::MAX, f32::MIN, f32::MIN_POSITIVE,
            f32::NAN, f32::INFINITY, f32::NEG_INFINITY,
        ]),
    ]
}

fn raw_mesh() -> impl Strategy<Value = (Vec<Vec3>, Vec<[u32; 3]>)> {
    (3usize..10).prop_flat_map(|n| {
        (
            prop::collection::vec(
                (coordinate(), coordinate(), coordinate()).prop_map(|(x, y, z)| Vec3::new(x, y, z)),
                n,
            ),
            // Mostly valid indices; now and then one past the end.
            prop::collection::vec(
                prop::array::uniform3(prop_oneof![20 => 0..n as u32, 1 => Just(n as u32)]),
                1..8,
            ),
        )
    })
}

fn raw_pose() -> impl Strategy<Value = Affine3A> {
    (prop::array::uniform12(coordinate()), any::<bool>()).prop_map(|(m, rigid)| {
        if rigid {
            Affine3A::from_translation(Vec3::new(m[0], m[1], m[2]))
        } else {
            Affine3A::from_cols_array(&m)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Every query on meshes and poses from every corner of f32: a typed error or an answer;
    /// collision pair sets equal the exact brute force whenever they are answered.
    #[test]
    fn queries_on_extreme_input((p, f) in raw_mesh(), pose in raw_pose(), end in raw_pose()) {
        let Ok(mesh) = TriMesh::new(p, f) else { return Ok(()) };
        if std::env::var("GPROX_FUZZ_TRACE").is_ok() {
            eprintln!("queries {:?}", mesh.positions().first());
        }
        let ctx = Context::new(Backend::Cpu).unwrap();
        let m = ctx.model(mesh.clone()).unwrap();
        let id = Affine3A::IDENTITY;
        let opts = CollideOptions::default();
        if let Ok(got) = ctx.collide_all(&m, &id, &m, &pose, &opts) {
            let want = oracle::brute_force_pairs(
                &mesh, &Pose64::IDENTITY, &mesh, &Pose64::from_affine(&pose),
            );
            prop_assert_eq!(got, want);
        }
        let _ = ctx.collide_any(&m, &id, &m, &pose, &opts);
        let _ = ctx.contacts(&m, &id, &m, &pose, &CollideOptions { margin: 0.1 });
        if let Ok(r) = ctx.distance(&m, &id, &m, &pose, &DistanceOptions::default()) {
            // The exact distance: the smallest triangle distance over every pair.
            let (ta, tb) = (
                oracle::world_triangles(&mesh, &Pose64::IDENTITY),
                oracle::world_triangles(&mesh, &Pose64::from_affine(&pose)),
            );
            let want = ta
                .iter()
                .flat_map(|x| tb.iter().map(move |y| triangle_distance(x, y).distance))
                .fold(f64::INFINITY, f64::min);
            prop_assert_eq!(r.distance, want);
            prop_assert!(r.lower <= want);
        }
        let _ = ctx.penetration(&m, &id, &m, &pose);
        let _ = ctx.self_collide(&m);
        let _ = ctx.collide_many(&[(&m, id), (&m, pose)], &opts);
        let quick = CcdOptions { max_checks: 200, ..Default::default() };
        let _ = ctx.ccd(&m, &Motion::rigid(id, id), &m, &Motion::rigid(pose, end), &quick);
        let moved: Vec<Vec3> = mesh.positions().iter().map(|v| end.transform_point3(*v)).collect();
        let _ = ctx.ccd_self(&m, &moved, &quick);
        let mut deformed = Model::new(mesh.clone());
        let _ = ctx.update(&mut deformed, &moved);
        // The device kernels (host emulator) on the same input: the CPU's answers or errors.
        #[cfg(feature = "emulated")]
        {
            let dev = Context::new(Backend::Emulated).unwrap();
            let d = dev.model(mesh.clone()).unwrap();
            let cpu = ctx.collide_all(&m, &id, &m, &pose, &opts).ok();
            prop_assert_eq!(dev.collide_all(&d, &id, &d, &pose, &opts).ok(), cpu);
            let cpu_any = ctx.collide_any(&m, &id, &m, &pose, &opts).ok();
            prop_assert_eq!(dev.collide_any(&d, &id, &d, &pose, &opts).ok(), cpu_any);
            prop_assert_eq!(dev.self_collide(&d).ok(), ctx.self_collide(&m).ok());
            let dist = |c: &Context, x: &Model| {
                c.distance(x, &id, x, &pose, &DistanceOptions::default()).ok()
            };
            match (dist(&dev, &d), dist(&ctx, &m)) {
                (Some(g), Some(c)) => {
                    prop_assert_eq!(g.distance, c.distance);
                    prop_assert_eq!((g.lower, g.upper), (c.lower, c.upper));
                }
                (g, c) => prop_assert_eq!(g.is_some(), c.is_some()),
            }
            let _ = dev.ccd_self(&d, &moved, &quick);
            let _ = dev.update(&mut deformed, &moved);
        }
    }
}
