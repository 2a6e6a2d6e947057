//! `gprox penetration` and `gprox penetration-field`: depths and volumes against closed
//! forms, pictures, the emulated device against the CPU, bad input exits with status 2.

mod common;

use common::{dir, fails_with_2, gprox, json, red, text, write, OPEN_TETRA, TETRA};

/// `gprox penetration t t --pose-b 0.1,0.1,0.1 --json` plus `extra`.
fn penetration(t: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["penetration", t, t, "--pose-b", "0.1,0.1,0.1", "--json"];
    args.extend(extra);
    json(&args)
}

/// `subcommand` on a closed and an open mesh: status 2 naming the open file.
fn open_mesh_is_rejected(subcommand: &str, tag: &str) -> String {
    let d = dir(tag);
    let (good, open) = (write(&d, "t.obj", TETRA), write(&d, "open.obj", OPEN_TETRA));
    fails_with_2(&[subcommand, &good, &open], &["open.obj", "not closed"]);
    let out = gprox(&[subcommand, &good, "missing.obj"]);
    assert_eq!(out.status.code(), Some(2));
    good
}

#[test]
fn penetration_of_shifted_tetrahedra() {
    let d = dir("penetration");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
    // B's corner (0,0,0) lands at (0.1,0.1,0.1): inside A, 0.1 below three faces.
    let v = penetration(t, &[]);
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
    let v = json(&["penetration", t, t, "--pose-b", "5,0,0,0,90,0", "--json"]);
    assert_eq!(
        (v["inside_vertices"].as_u64(), v["max_depth"].as_f64()),
        (Some(0), Some(0.0))
    );
    // A device context answers on the CPU: the same vertices and depths.
    let e = penetration(t, &["--backend", "emulated"]);
    let c = penetration(t, &["--backend", "cpu"]);
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
    let t = write(&d, "torus.obj", &torus_obj());
    let t = t.as_str();
    let render = |path: &std::path::Path| {
        let pose = "0.5,0.2,0.1,20,30,0";
        let out = gprox(&[
            "penetration",
            t,
            t,
            "--pose-b",
            pose,
            "--render",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let png = d.join("pen.png");
    assert!(!render(&png).contains("penetrating vertices: 0"));
    let pixmap = tiny_skia::Pixmap::load_png(&png).unwrap();
    // The dot colour (30, 90, 220) and the highlighted closest faces.
    let blue = |p: &[u8]| p[2] > 150 && p[0] < 80 && p[1] < 130;
    assert!(pixmap.data().chunks_exact(4).any(blue));
    assert!(pixmap.data().chunks_exact(4).any(red));
    let svg = d.join("pen.svg");
    render(&svg);
    assert!(std::fs::read_to_string(svg).unwrap().contains("<circle"));
}

#[test]
fn penetration_bad_input_exits_with_2() {
    let good = open_mesh_is_rejected("penetration", "penetration-bad");
    let out = gprox(&["penetration", &good, &good, "--render", "x.gif"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn penetration_field_of_shifted_tetrahedra() {
    let d = dir("penetration-field");
    let t = write(&d, "t.obj", TETRA);
    let t = t.as_str();
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
        json(&args)
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
    let good = open_mesh_is_rejected("penetration-field", "penetration-field-bad");
    let good = good.as_str();
    for tol in ["0", "-1", "nan"] {
        fails_with_2(
            &["penetration-field", good, good, "--tolerance", tol],
            &["tolerance"],
        );
    }
    // A tolerance so fine the lattice would exceed max_cells.
    fails_with_2(
        &["penetration-field", good, good, "--tolerance", "1e-6"],
        &["max_cells"],
    );
}
