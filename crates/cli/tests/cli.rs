//! The `gprox` command-line tool: collide, distance, ccd, self, info and bench, good and bad
//! input (penetration in `penetration_cli.rs`, image-collide in `image_cli.rs`).

mod common;

use std::path::PathBuf;

use common::{dir, fails_with_2, gprox, json, red, text, write, TETRA};

#[test]
fn collide_overlapping_tetrahedra() {
    let d = dir("collide");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    // Shifted by 0.25 along x the two tetrahedra overlap; 5 units away they do not.
    let v = json(&[
        "collide",
        t,
        t,
        "--pose-b",
        "0.25,0.1,0.1",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert_eq!(v["collide"], true);
    let n = v["count"].as_u64().unwrap();
    assert!(n > 0 && v["pairs"].as_array().unwrap().len() as u64 == n);
    let v = json(&["collide", t, t, "--pose-b", "5,0,0,0,90,0", "--json"]);
    assert_eq!(
        (v["collide"].as_bool(), v["count"].as_u64()),
        (Some(false), Some(0))
    );
    // --any and the human-readable form.
    let out = gprox(&["collide", t, t, "--pose-b", "0.25,0.1,0.1", "--any"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("intersect: true"));
}

#[test]
fn collide_renders_a_picture() {
    let d = dir("render");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    let png = d.join("out.png");
    let out = gprox(&[
        "collide",
        t,
        t,
        "--pose-b",
        "0.25,0.1,0.1",
        "--render",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pixmap = tiny_skia::Pixmap::load_png(&png).unwrap();
    assert!(pixmap.data().chunks_exact(4).any(red));
    let svg = d.join("out.svg");
    let out = gprox(&["collide", t, t, "--render", svg.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(svg).unwrap().contains("<polygon"));
}

#[test]
fn bad_files_and_arguments_exit_with_2() {
    let d = dir("bad");
    let good = write(&d, "t.obj", TETRA);
    let garbage = write(&d, "g.obj", "v 0 0 0\nv 1 x 0\n");
    let (good, garbage) = (good.as_str(), garbage.as_str());
    let missing = d.join("missing.stl");
    let missing = missing.to_str().unwrap();
    let scene_dir = d.to_str().unwrap();
    for (args, needles) in [
        (&["collide", good, missing][..], &["missing.stl"][..]),
        // The message names the file and the line.
        (&["collide", garbage, good], &["g.obj", "2"]),
        (&["collide", good, good, "--pose-b", "1,2"], &["pose"]),
        (&["collide", good, good, "--margin", "-1"], &[]),
        (&["collide", good, good, "--render", "x.bmp"], &[]),
        (&["info", missing], &[]),
        (&["bench", scene_dir], &["scene.json"]),
        (&["frobnicate"], &[]),
    ] {
        fails_with_2(args, needles);
    }
}

#[test]
fn info_on_mesh_and_scene() {
    let d = dir("info");
    let t = write(&d, "t.obj", TETRA);
    let v = json(&["info", &t, "--json"]);
    assert_eq!(
        (v["vertices"].as_u64(), v["triangles"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(v["bounds"]["max"], serde_json::json!([1.0, 1.0, 1.0]));
    let out = gprox(&["info", &t]);
    assert!(text(&out.stdout).contains("triangles: 4"));

    let scenes =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/scenes/two-tori-interlock");
    if !scenes.is_dir() {
        eprintln!("note: shared scenes absent, skipping the scene part");
        return;
    }
    let v = json(&["info", scenes.to_str().unwrap(), "--json"]);
    assert_eq!(
        (v["frames"].as_u64(), v["triangles"].as_u64()),
        (Some(60), Some(10240))
    );
}

#[test]
fn bench_builtin_scene() {
    let v = json(&["bench", "builtin", "--frames", "3", "--json"]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["frames"].as_array().unwrap().len(), 3);
    }
    // Frame 0 of the built-in scene is in contact: collide-all count > 0, collide-any true.
    assert!(runs[0]["frames"][0]["count"].as_u64().unwrap() > 0);
    assert_eq!(runs[1]["frames"][0]["collide"].as_bool(), Some(true));
    let out = gprox(&["bench", "builtin", "--frames", "2"]);
    assert!(text(&out.stdout).contains("frame"));
    // The device kernels (host emulator) give the same answers, with device-op counts.
    let e = json(&[
        "bench",
        "builtin",
        "--frames",
        "2",
        "--backend",
        "emulated",
        "--json",
    ]);
    for (c, g) in runs.iter().zip(e["runs"].as_array().unwrap()) {
        assert_eq!(g["backend"], "emulated");
        for f in 0..2 {
            assert_eq!(c["frames"][f]["count"], g["frames"][f]["count"]);
            assert_eq!(c["frames"][f]["collide"], g["frames"][f]["collide"]);
            assert!(g["frames"][f]["device_ops"]["launches"].as_f64().unwrap() > 0.0);
        }
    }
}

/// One flat unit-square patch (degree 1 × 1) in `.bpt` form.
const SQUARE_BPT: &str = "1\n1 1\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n";

#[test]
fn freeform_distance_and_collide() {
    let d = dir("freeform");
    let sq = write(&d, "square.bpt", SQUARE_BPT);
    let sq = sq.as_str();
    // Parallel squares 0.5 apart (overlapping in x, y): distance 0.5 exactly.
    let v = json(&["distance", sq, sq, "--pose-b", "0.2,0.3,0.5", "--json"]);
    assert_eq!(v["freeform"], true);
    let (lo, hi) = (v["lower"].as_f64().unwrap(), v["upper"].as_f64().unwrap());
    assert!(
        lo <= 0.5 && 0.5 <= hi && hi - lo <= 1e-6 * 1.5,
        "[{lo}, {hi}]"
    );
    // Tilted through each other: a witnessed contact; 2 units apart: none.
    let v = json(&["collide", sq, sq, "--pose-b", "0.2,0.3,0,0,30,0", "--json"]);
    assert_eq!(
        (
            v["collide"].as_bool(),
            v["witnessed"].as_u64().map(|w| w > 0)
        ),
        (Some(true), Some(true))
    );
    // Each listed contact: two points, their (u, v), at most the tolerance apart.
    let tol = v["tolerance"].as_f64().unwrap();
    let contacts = v["contacts"].as_array().unwrap();
    assert_eq!(contacts.len() as u64, v["count"].as_u64().unwrap());
    for c in contacts {
        let p = |k: &str| -> Vec<f64> {
            c[k].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (a, b) = (p("point_a"), p("point_b"));
        let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        assert!(d <= tol * (1.0 + 1e-12) && p("uv_a").len() == 2 && p("uv_b").len() == 2);
    }
    let v = json(&["collide", sq, sq, "--pose-b", "0,0,2", "--any", "--json"]);
    assert_eq!(v["collide"], false);
    // Mixed with a mesh: a typed input error that names the way out, or the tessellation.
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    fails_with_2(&["collide", t, sq], &["freeform", "--tessellate"]);
    let v = json(&[
        "collide",
        t,
        sq,
        "--tessellate",
        "--pose-a",
        "0.1,0.1,-0.5",
        "--json",
    ]);
    assert!(v["count"].as_u64().unwrap() > 0);
}

#[test]
fn ccd_of_a_falling_tetrahedron() {
    let d = dir("ccd");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    // B's vertex 0 falls from (0.1, 0.1, 2) to (0.1, 0.1, -1) onto A's face x + y + z = 1,
    // which it reaches at z = 0.8: t = 1.2 / 3 = 0.4.
    let args = [
        "ccd",
        t,
        t,
        "--pose-b",
        "0.1,0.1,2",
        "--end-pose-b",
        "0.1,0.1,-1",
        "--json",
    ];
    let mut answers = Vec::new();
    for backend in ["cpu", "emulated"] {
        let mut a = args.to_vec();
        a.extend(["--backend", backend]);
        let v = json(&a);
        let toi = v["toi"].as_f64().unwrap();
        assert!(toi <= 0.4 && toi > 0.4 - 1e-5, "{toi}");
        answers.push((v["toi"].clone(), v["contacts"].clone()));
    }
    assert_eq!(answers[0], answers[1]);
    let v = json(&[
        "ccd",
        t,
        t,
        "--pose-b",
        "5,0,0",
        "--end-pose-b",
        "5,0,-1",
        "--json",
    ]);
    assert!(v["toi"].is_null());
    fails_with_2(&["ccd", t, t, "--min-separation", "-1"], &[]);
}

#[test]
fn distance_between_separated_tetrahedra() {
    let d = dir("distance");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    let png = d.join("d.png");
    let v = json(&[
        "distance",
        t,
        t,
        "--pose-b",
        "3,0,0",
        "--json",
        "--render",
        png.to_str().unwrap(),
    ]);
    // Brute force: A's nearest point to the shifted copy is its vertex (1,0,0); B's is (3,0,0).
    let dist = v["distance"].as_f64().unwrap();
    assert!((dist - 2.0).abs() < 1e-12, "{v}");
    let p = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (pa, pb) = (p("point_a"), p("point_b"));
    let gap: f64 = pa
        .iter()
        .zip(&pb)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!((gap - dist).abs() < 1e-12);
    assert!(v["lower"].as_f64().unwrap() <= dist && dist <= v["upper"].as_f64().unwrap());
    assert!(std::fs::metadata(&png).unwrap().len() > 0);
    // Bad input: a missing file is named, exit status 2.
    let missing = d.join("missing.obj");
    fails_with_2(
        &["distance", missing.to_str().unwrap(), t],
        &["missing.obj"],
    );
    fails_with_2(&["distance", t, t, "--pose-b", "1,2"], &["pose"]);
}

#[test]
fn self_collision_and_export() {
    let d = dir("self");
    // Two disjoint triangles crossing each other: one self-intersecting pair.
    let m = write(
        &d,
        "x.obj",
        "v 0 0 0\nv 2 0 0\nv 0 2 0\nv 0.5 0.5 -1\nv 0.5 0.5 1\nv 3 3 0\nf 1 2 3\nf 4 5 6\n",
    );
    let m = m.as_str();
    let ply = d.join("x.ply");
    let v = json(&["self", m, "--json", "--export", ply.to_str().unwrap()]);
    assert_eq!(v["count"], 1, "{v}");
    let back = gprox::geometry::io::load_mesh(&ply).unwrap();
    assert_eq!(back.face_count(), 2);
    assert_eq!(
        std::fs::read_to_string(&ply)
            .unwrap()
            .matches(" 230 30 30")
            .count(),
        2
    );
    // Collide export to OBJ with its .mtl.
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    let obj = d.join("c.obj");
    let out = gprox(&[
        "collide",
        t,
        t,
        "--pose-b",
        "0.25,0.1,0.1",
        "--backend",
        "cpu",
        "--export",
        obj.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        gprox::geometry::io::load_mesh(&obj).unwrap().face_count(),
        8
    );
    assert!(std::fs::read_to_string(d.join("c.mtl"))
        .unwrap()
        .contains("newmtl contact"));
    // Bad input.
    fails_with_2(&["self", m, "--export", "x.txt"], &["x.txt"]);
    let garbage = write(&d, "g.obj", "f 1 2 3\n");
    fails_with_2(&["self", &garbage], &["g.obj"]);
}
