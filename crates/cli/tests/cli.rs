//! The `gprox` command-line tool: every subcommand, good and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

const TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gprox-cli-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn gprox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gprox"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn collide_overlapping_tetrahedra() {
    let d = dir("collide");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let t = t.to_str().unwrap();
    // Shifted by 0.25 along x the two tetrahedra overlap; 5 units away they do not.
    let out = gprox(&[
        "collide",
        t,
        t,
        "--pose-b",
        "0.25,0.1,0.1",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["collide"], true);
    let n = v["count"].as_u64().unwrap();
    assert!(n > 0 && v["pairs"].as_array().unwrap().len() as u64 == n);
    let out = gprox(&["collide", t, t, "--pose-b", "5,0,0,0,90,0", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let png = d.join("out.png");
    let t = t.to_str().unwrap();
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
    let red =
        |p: &[u8]| p[0] > 60 && p[0] as u32 > 3 * p[1] as u32 && p[0] as u32 > 3 * p[2] as u32;
    assert!(pixmap.data().chunks_exact(4).any(red));
    let svg = d.join("out.svg");
    let out = gprox(&["collide", t, t, "--render", svg.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(svg).unwrap().contains("<polygon"));
}

#[test]
fn bad_files_and_arguments_exit_with_2() {
    let d = dir("bad");
    let good = d.join("t.obj");
    std::fs::write(&good, TETRA).unwrap();
    let garbage = d.join("g.obj");
    std::fs::write(&garbage, "v 0 0 0\nv 1 x 0\n").unwrap();
    let (good, garbage) = (good.to_str().unwrap(), garbage.to_str().unwrap());
    let missing = d.join("missing.stl");
    let missing = missing.to_str().unwrap();

    let out = gprox(&["collide", good, missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("missing.stl"),
        "{}",
        text(&out.stderr)
    );

    let out = gprox(&["collide", garbage, good]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("g.obj") && err.contains('2'), "{err}");

    let out = gprox(&["collide", good, good, "--pose-b", "1,2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("pose"), "{}", text(&out.stderr));

    let out = gprox(&["collide", good, good, "--margin", "-1"]);
    assert_eq!(out.status.code(), Some(2));

    let out = gprox(&["collide", good, good, "--render", "x.bmp"]);
    assert_eq!(out.status.code(), Some(2));

    let out = gprox(&["info", missing]);
    assert_eq!(out.status.code(), Some(2));

    let out = gprox(&["bench", d.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("scene.json"));

    let out = gprox(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn info_on_mesh_and_scene() {
    let d = dir("info");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let out = gprox(&["info", t.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["vertices"].as_u64(), v["triangles"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(v["bounds"]["max"], serde_json::json!([1.0, 1.0, 1.0]));
    let out = gprox(&["info", t.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("triangles: 4"));

    let scenes =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/scenes/two-tori-interlock");
    if !scenes.is_dir() {
        eprintln!("note: shared scenes absent, skipping the scene part");
        return;
    }
    let out = gprox(&["info", scenes.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["frames"].as_u64(), v["triangles"].as_u64()),
        (Some(60), Some(10240))
    );
}

#[test]
fn bench_builtin_scene() {
    let out = gprox(&["bench", "builtin", "--frames", "3", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let out = gprox(&[
        "bench",
        "builtin",
        "--frames",
        "2",
        "--backend",
        "emulated",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let sq = d.join("square.bpt");
    std::fs::write(&sq, SQUARE_BPT).unwrap();
    let sq = sq.to_str().unwrap();
    // Parallel squares 0.5 apart (overlapping in x, y): distance 0.5 exactly.
    let out = gprox(&["distance", sq, sq, "--pose-b", "0.2,0.3,0.5", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["freeform"], true);
    let (lo, hi) = (v["lower"].as_f64().unwrap(), v["upper"].as_f64().unwrap());
    assert!(
        lo <= 0.5 && 0.5 <= hi && hi - lo <= 1e-6 * 1.5,
        "[{lo}, {hi}]"
    );
    // Tilted through each other: a witnessed contact; 2 units apart: none.
    let out = gprox(&["collide", sq, sq, "--pose-b", "0.2,0.3,0,0,30,0", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let out = gprox(&["collide", sq, sq, "--pose-b", "0,0,2", "--any", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["collide"], false);
    // Mixed with a mesh: a typed input error that names the way out, or the tessellation.
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let t = t.to_str().unwrap();
    let out = gprox(&["collide", t, sq]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("freeform") && text(&out.stderr).contains("--tessellate"));
    let out = gprox(&[
        "collide",
        t,
        sq,
        "--tessellate",
        "--pose-a",
        "0.1,0.1,-0.5",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["count"].as_u64().unwrap() > 0);
}

#[test]
fn ccd_of_a_falling_tetrahedron() {
    let d = dir("ccd");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let t = t.to_str().unwrap();
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
        let out = gprox(&a);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let toi = v["toi"].as_f64().unwrap();
        assert!(toi <= 0.4 && toi > 0.4 - 1e-5, "{toi}");
        answers.push((v["toi"].clone(), v["contacts"].clone()));
    }
    assert_eq!(answers[0], answers[1]);
    let out = gprox(&[
        "ccd",
        t,
        t,
        "--pose-b",
        "5,0,0",
        "--end-pose-b",
        "5,0,-1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["toi"].is_null());
    let out = gprox(&["ccd", t, t, "--min-separation", "-1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn distance_between_separated_tetrahedra() {
    let d = dir("distance");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let png = d.join("d.png");
    let t = t.to_str().unwrap();
    let out = gprox(&[
        "distance",
        t,
        t,
        "--pose-b",
        "3,0,0",
        "--json",
        "--render",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let out = gprox(&["distance", missing.to_str().unwrap(), t]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing.obj"));
    let out = gprox(&["distance", t, t, "--pose-b", "1,2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("pose"), "{}", text(&out.stderr));
}

#[test]
fn self_collision_and_export() {
    let d = dir("self");
    // Two disjoint triangles crossing each other: one self-intersecting pair.
    let m = d.join("x.obj");
    std::fs::write(
        &m,
        "v 0 0 0\nv 2 0 0\nv 0 2 0\nv 0.5 0.5 -1\nv 0.5 0.5 1\nv 3 3 0\nf 1 2 3\nf 4 5 6\n",
    )
    .unwrap();
    let ply = d.join("x.ply");
    let m = m.to_str().unwrap();
    let out = gprox(&["self", m, "--json", "--export", ply.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let obj = d.join("c.obj");
    let t = t.to_str().unwrap();
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
    let out = gprox(&["self", m, "--export", "x.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("x.txt"));
    let garbage = d.join("g.obj");
    std::fs::write(&garbage, "f 1 2 3\n").unwrap();
    let out = gprox(&["self", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("g.obj"), "{}", text(&out.stderr));
}

#[test]
fn penetration_of_shifted_tetrahedra() {
    let d = dir("penetration");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let t = t.to_str().unwrap();
    // B's corner (0,0,0) lands at (0.1,0.1,0.1): inside A, 0.1 below three faces.
    let out = gprox(&["penetration", t, t, "--pose-b", "0.1,0.1,0.1", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["inside_vertices"], 1);
    assert_eq!(v["a_in_b"].as_array().unwrap().len(), 0);
    let p = &v["b_in_a"][0];
    assert_eq!(p["vertex"], 0);
    let depth = p["depth"].as_f64().unwrap();
    assert!((depth - 0.1).abs() < 1e-6, "{depth}");
    assert_eq!(v["max_depth"].as_f64(), Some(depth));
    let dir_len: f64 = p["direction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap().powi(2))
        .sum();
    assert!((dir_len - 1.0).abs() < 1e-9);
    // Far apart: nothing; the human-readable form.
    let out = gprox(&["penetration", t, t, "--pose-b", "5,0,0,0,90,0", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["inside_vertices"].as_u64(), v["max_depth"].as_f64()),
        (Some(0), Some(0.0))
    );
    // A device context answers on the CPU: the same vertices and depths.
    let emu = gprox(&[
        "penetration",
        t,
        t,
        "--pose-b",
        "0.1,0.1,0.1",
        "--json",
        "--backend",
        "emulated",
    ]);
    assert!(emu.status.success(), "{}", text(&emu.stderr));
    let e: serde_json::Value = serde_json::from_slice(&emu.stdout).unwrap();
    let cpu = gprox(&[
        "penetration",
        t,
        t,
        "--pose-b",
        "0.1,0.1,0.1",
        "--json",
        "--backend",
        "cpu",
    ]);
    let c: serde_json::Value = serde_json::from_slice(&cpu.stdout).unwrap();
    assert_eq!((&e["b_in_a"], &e["a_in_b"]), (&c["b_in_a"], &c["a_in_b"]));
    let out = gprox(&["penetration", t, t, "--pose-b", "0.1,0.1,0.1"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("penetrating vertices: 1"),
        "{}",
        text(&out.stdout)
    );
}

/// A torus as OBJ text (closed, wound outwards).
fn torus_obj() -> String {
    let m = gprox::geometry::scene::torus(1.0, 0.3, 32, 16).unwrap();
    let mut s = String::new();
    for p in m.positions() {
        s.push_str(&format!("v {} {} {}\n", p.x, p.y, p.z));
    }
    for f in m.faces() {
        s.push_str(&format!("f {} {} {}\n", f[0] + 1, f[1] + 1, f[2] + 1));
    }
    s
}

#[test]
fn penetration_renders_dots() {
    let d = dir("penetration-render");
    let t = d.join("torus.obj");
    std::fs::write(&t, torus_obj()).unwrap();
    let t = t.to_str().unwrap();
    let png = d.join("pen.png");
    let pose = "0.5,0.2,0.1,20,30,0";
    let out = gprox(&[
        "penetration",
        t,
        t,
        "--pose-b",
        pose,
        "--render",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("penetrating vertices: 0"));
    let pixmap = tiny_skia::Pixmap::load_png(&png).unwrap();
    // The dot colour (30, 90, 220) and the highlighted closest faces.
    let blue = |p: &[u8]| p[2] > 150 && p[0] < 80 && p[1] < 130;
    let red =
        |p: &[u8]| p[0] > 60 && p[0] as u32 > 3 * p[1] as u32 && p[0] as u32 > 3 * p[2] as u32;
    assert!(pixmap.data().chunks_exact(4).any(blue));
    assert!(pixmap.data().chunks_exact(4).any(red));
    let svg = d.join("pen.svg");
    let out = gprox(&[
        "penetration",
        t,
        t,
        "--pose-b",
        pose,
        "--render",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(svg).unwrap().contains("<circle"));
}

#[test]
fn penetration_bad_input_exits_with_2() {
    let d = dir("penetration-bad");
    let good = d.join("t.obj");
    std::fs::write(&good, TETRA).unwrap();
    // The tetrahedron without its last face: three edges with one face each.
    let open = d.join("open.obj");
    std::fs::write(
        &open,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n",
    )
    .unwrap();
    let (good, open) = (good.to_str().unwrap(), open.to_str().unwrap());
    let out = gprox(&["penetration", good, open]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("open.obj") && err.contains("not closed"),
        "{err}"
    );
    let out = gprox(&["penetration", good, good, "--render", "x.gif"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gprox(&["penetration", good, "missing.obj"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn penetration_field_of_shifted_tetrahedra() {
    let d = dir("penetration-field");
    let t = d.join("t.obj");
    std::fs::write(&t, TETRA).unwrap();
    let t = t.to_str().unwrap();
    let csv = d.join("samples.csv");
    let run = |backend: &str, out: Option<&str>| {
        let mut args = vec![
            "penetration-field",
            t,
            t,
            "--pose-b",
            "0.1,0.1,0.1",
            "--tolerance",
            "0.01",
            "--json",
            "--backend",
            backend,
        ];
        if let Some(o) = out {
            args.extend(["--out", o]);
        }
        let out = gprox(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let c = run("cpu", Some(csv.to_str().unwrap()));
    // A ∩ B is the simplex x, y, z >= 0.1, x + y + z <= 1: edge 0.7, volume 0.7³/6.
    let exact = 0.7f64.powi(3) / 6.0;
    let (volume, bound) = (
        c["volume"].as_f64().unwrap(),
        c["volume_bound"].as_f64().unwrap(),
    );
    assert!(
        (volume - exact).abs() <= bound,
        "{volume} ± {bound} vs {exact}"
    );
    let samples = c["samples"].as_u64().unwrap();
    assert!(samples > 1000, "{samples}");
    // The deepest point is the simplex's incentre: inradius 0.7 / (3 + √3).
    let inradius = 0.7 / (3.0 + 3f64.sqrt());
    let depth = c["max_depth"].as_f64().unwrap();
    assert!(
        depth <= inradius && depth > inradius - 0.01,
        "{depth} vs {inradius}"
    );
    // One CSV row per sample, each depth the distance to a face of the other tetrahedron.
    let rows = std::fs::read_to_string(&csv).unwrap();
    let mut lines = rows.lines();
    assert!(lines.next().unwrap().starts_with("x,y,z,region,depth_in_b"));
    let body: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(body.len() as u64, samples);
    for r in &body {
        let (x, y, z) = (r[0], r[1], r[2]);
        // Inside B (the tetrahedron shifted by 0.1): distance to its nearest face plane.
        let planes = [x - 0.1, y - 0.1, z - 0.1, (1.3 - x - y - z) / 3f64.sqrt()];
        let expect = planes.into_iter().fold(f64::INFINITY, f64::min);
        assert!((r[4] - expect).abs() < 1e-6, "{r:?}");
    }
    // The emulated device gives the same samples and volume.
    let e = run("emulated", None);
    for k in ["samples", "volume", "volume_bound", "max_depth", "contacts"] {
        assert_eq!(e[k], c[k], "{k}");
    }
    let out = gprox(&["penetration-field", t, t, "--pose-b", "0.1,0.1,0.1"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("intersection volume"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn penetration_field_bad_input_exits_with_2() {
    let d = dir("penetration-field-bad");
    let good = d.join("t.obj");
    std::fs::write(&good, TETRA).unwrap();
    let open = d.join("open.obj");
    std::fs::write(
        &open,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n",
    )
    .unwrap();
    let (good, open) = (good.to_str().unwrap(), open.to_str().unwrap());
    let out = gprox(&["penetration-field", good, open]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("open.obj") && err.contains("not closed"),
        "{err}"
    );
    for tol in ["0", "-1", "nan"] {
        let out = gprox(&["penetration-field", good, good, "--tolerance", tol]);
        assert_eq!(out.status.code(), Some(2), "{tol}");
        assert!(
            text(&out.stderr).contains("tolerance"),
            "{}",
            text(&out.stderr)
        );
    }
    // A tolerance so fine the lattice would exceed max_cells.
    let out = gprox(&["penetration-field", good, good, "--tolerance", "1e-6"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("max_cells"),
        "{}",
        text(&out.stderr)
    );
    let out = gprox(&["penetration-field", good, "missing.obj"]);
    assert_eq!(out.status.code(), Some(2));
}
