//! `gprox-peer` (the parry-bench convention of `shared/peers`): the JSON it prints has the
//! fields `run_peers.py` reads, and its results equal brute force / the library.

use std::path::{Path, PathBuf};
use std::process::Command;

use gprox::geometry::scene::Scene;
use gprox::geometry::transform::transform_triangle;
use gprox::geometry::tri_distance::triangle_distance;
use gprox::geometry::tri_tri::triangles_intersect;
use gprox::query::collide::{collide_all, CollideOptions, CollisionObject};
use gprox::query::penetration::penetration;
use serde_json::Value;

const TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// Two unit tetrahedra a (fixed) and b; b per frame: far away, coincident, shifted by 0.1 so
/// one corner is inside a, rotated 90° about z and shifted (crossing faces), just apart.
fn tiny_scene(root: &Path) -> PathBuf {
    let dir = root.join("tiny");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tet.obj"), TETRA).unwrap();
    std::fs::write(
        dir.join("scene.json"),
        r#"{"format": "proxbench-scene/1", "name": "tiny", "frames": 5,
            "objects": [{"name": "a", "mesh": "tet.obj", "motion": "rigid"},
                        {"name": "b", "mesh": "tet.obj", "motion": "rigid"}],
            "transforms": "transforms.f32",
            "queries": [{"kind": "collide-all", "pairs": [["a", "b"]]},
                        {"kind": "collide-any", "pairs": "all"},
                        {"kind": "distance", "pairs": [["a", "b"]]},
                        {"kind": "penetration", "pairs": [["a", "b"]]}]}"#,
    )
    .unwrap();
    let id = [1f32, 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    let shifted = |x: f32, y: f32, z: f32| [1f32, 0., 0., x, 0., 1., 0., y, 0., 0., 1., z];
    let rotated = [0f32, -1., 0., 0.6, 1., 0., 0., 0.2, 0., 0., 1., 0.2];
    let b = [
        shifted(10.0, 0.0, 0.0),
        id,
        shifted(0.1, 0.1, 0.1),
        rotated,
        shifted(0.0, 0.0, 1.25),
    ];
    let t: Vec<u8> = b
        .iter()
        .flat_map(|tb| [id, *tb])
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(dir.join("transforms.f32"), t).unwrap();
    dir
}

fn run_peer(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gprox-peer"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn records<'a>(doc: &'a Value, query: &str) -> Vec<&'a Value> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["query"] == query)
        .collect()
}

#[test]
fn tiny_scene_results_equal_brute_force_and_library() {
    let root = std::env::temp_dir().join(format!("gprox-peer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = tiny_scene(&root);
    let (code, out, err) = run_peer(&[dir.to_str().unwrap(), "--frames", "0,1,2,3,4"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["peer"], "gprox");
    assert!(doc["version"].is_string());
    assert_eq!(doc["scene"], "tiny");
    assert!(doc["build_ms"]["collide-all:a|b"].as_f64().unwrap() >= 0.0);
    assert_eq!(doc["unsupported"], serde_json::json!([]));
    for r in doc["records"].as_array().unwrap() {
        assert!(r["frame"].is_u64() && r["target"].is_string());
        assert!(r["update_ms"].as_f64().unwrap() >= 0.0);
        assert!(r["query_ms"].as_f64().unwrap() >= 0.0);
    }

    let scene = Scene::load(&dir).unwrap();
    let mesh = scene.mesh(0);
    let bvh = gprox::bvh::lbvh::build(mesh);
    let tris = |o: usize, f: usize| -> Vec<_> {
        (0..mesh.face_count())
            .map(|i| transform_triangle(&scene.pose64(f, o), mesh.triangle(i)))
            .collect()
    };
    let all = records(&doc, "collide-all");
    let any = records(&doc, "collide-any");
    let dist = records(&doc, "distance");
    let pen = records(&doc, "penetration");
    assert_eq!((all.len(), any.len(), dist.len(), pen.len()), (5, 5, 5, 5));
    for f in 0..5 {
        let (ta, tb) = (tris(0, f), tris(1, f));
        // Oracle: every triangle pair through the exact test, and the closest pair by brute force.
        let mut count = 0u64;
        let mut best = f64::INFINITY;
        for p in &ta {
            for q in &tb {
                count += u64::from(triangles_intersect(p, q));
                best = best.min(triangle_distance(p, q).distance);
            }
        }
        assert_eq!(all[f]["frame"], f);
        assert_eq!(all[f]["target"], "a|b");
        assert_eq!(all[f]["count"], count, "frame {f}");
        assert_eq!(any[f]["target"], "all");
        assert_eq!(any[f]["collide"], count > 0);
        let pairs = if count > 0 { vec![[0, 1]] } else { vec![] };
        assert_eq!(any[f]["object_pairs"], serde_json::json!(pairs));
        let d = dist[f]["distance"].as_f64().unwrap();
        assert!(
            (d - best).abs() <= 1e-12 * best.max(1.0),
            "frame {f}: {d} vs {best}"
        );
        let p1: Vec<f64> = serde_json::from_value(dist[f]["p1"].clone()).unwrap();
        let p2: Vec<f64> = serde_json::from_value(dist[f]["p2"].clone()).unwrap();
        let gap =
            ((p1[0] - p2[0]).powi(2) + (p1[1] - p2[1]).powi(2) + (p1[2] - p2[2]).powi(2)).sqrt();
        assert!(
            (gap - d).abs() <= 1e-12,
            "frame {f}: |p1 - p2| = {gap}, distance {d}"
        );
        // Penetration and the collide-all count through the library calls themselves.
        let oa = CollisionObject::new(mesh, &bvh, scene.pose64(f, 0)).unwrap();
        let ob = CollisionObject::new(mesh, &bvh, scene.pose64(f, 1)).unwrap();
        assert_eq!(
            collide_all(&oa, &ob, &CollideOptions::default()).len() as u64,
            count
        );
        let p = penetration(&oa, &ob).unwrap();
        assert_eq!(pen[f]["inside_vertices"], p.inside_vertices() as u64);
        assert_eq!(pen[f]["max_depth"].as_f64().unwrap(), p.max_depth());
        assert_eq!(pen[f]["sum_depth"].as_f64().unwrap(), p.sum_depth());
    }
    // The scene exercises both outcomes.
    assert_eq!(all[0]["count"], 0);
    assert!(all[3]["count"].as_u64().unwrap() > 0);
    assert!(pen[2]["inside_vertices"].as_u64().unwrap() > 0);
    assert!(dist[4]["distance"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn builtin_scene_query_selection_and_errors() {
    let (code, out, err) =
        run_peer(&["builtin", "--frames", "0,3", "--queries", "collide-all,ccd"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let recs = doc["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|r| r["query"] == "collide-all"));
    assert_eq!(doc["unsupported"][0]["query"], "ccd");
    let scene = Scene::builtin();
    let (ma, mb) = (scene.mesh(0), scene.mesh(1));
    let (ba, bb) = (gprox::bvh::lbvh::build(ma), gprox::bvh::lbvh::build(mb));
    for (r, f) in recs.iter().zip([0, 3]) {
        let oa = CollisionObject::new(ma, &ba, scene.pose64(f, 0)).unwrap();
        let ob = CollisionObject::new(mb, &bb, scene.pose64(f, 1)).unwrap();
        assert_eq!(r["frame"], f);
        assert_eq!(
            r["count"],
            collide_all(&oa, &ob, &CollideOptions::default()).len() as u64
        );
    }
    // A frame outside the scene and a missing folder: exit status 2 with a message.
    let (code, _, err) = run_peer(&["builtin", "--frames", "100000"]);
    assert_eq!(code, 2);
    assert!(err.contains("frame 100000 out of range"), "{err}");
    let (code, _, err) = run_peer(&["/nonexistent/scene"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/scene"), "{err}");
}
