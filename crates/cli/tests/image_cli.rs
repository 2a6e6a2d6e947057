//! `gprox image-collide`: trimmed faces from the command line agree with the library call,
//! pictures are written, bad files exit with status 2.

mod common;

use std::path::Path;

use common::{dir, fails_with_2, gprox, json, text};
use gprox::geometry::freeform::trimmed::load_trimmed_face;
use gprox::{Affine3A, Backend, Context, GeometryImageOptions, ModelOptions, Quat, Vec3};

/// A line trim curve from `a` to `b` in (u, v).
fn line(a: [f64; 2], b: [f64; 2]) -> serde_json::Value {
    serde_json::json!({"degree": 1, "knots": [0, 0, 1, 1], "control_points": [a, b],
                       "rational": false, "weights": null, "param_range": [0, 1],
                       "reversed": false})
}

/// The unit square z = 0 as a bilinear face, trimmed to `[0, 1] x [0, 1]` minus a square
/// hole `[0.4, 0.6]²` (clockwise).
fn write_face(path: &Path) {
    let outer = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let hole = [[0.4, 0.4], [0.4, 0.6], [0.6, 0.6], [0.6, 0.4]];
    let lp = |c: &[[f64; 2]; 4], role: &str| {
        let curves: Vec<_> = (0..4).map(|k| line(c[k], c[(k + 1) % 4])).collect();
        serde_json::json!({"role": role, "curves": curves})
    };
    let doc = serde_json::json!({
        "degree_u": 1, "degree_v": 1, "num_ctrl_u": 2, "num_ctrl_v": 2,
        "knots_u": [0, 0, 1, 1], "knots_v": [0, 0, 1, 1],
        "control_points": [[[0, 0, 0], [0, 1, 0]], [[1, 0, 0], [1, 1, 0]]],
        "trim": [lp(&outer, "outer"), lp(&hole, "hole")],
    });
    std::fs::write(path, doc.to_string()).unwrap();
}

/// B: the square stood upright (plane x = 0.25) through A; the pairs, counts and faces the
/// tool prints are those of `Context::image_collide`, in both modes; B lifted more than 2ε
/// above A reports nothing; the picture is written.
#[test]
fn image_collide_agrees_with_the_library() {
    let d = dir("agree");
    let f = d.join("face.json");
    write_face(&f);
    let fs = f.to_str().unwrap();
    let ctx = Context::new(Backend::Cpu).unwrap();
    let m = ctx
        .trimmed_model(
            vec![load_trimmed_face(&f).unwrap()],
            &ModelOptions::default(),
        )
        .unwrap();
    for (pose, arg, expect_hits) in [
        (
            Affine3A::from_rotation_translation(
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
                Vec3::new(0.25, 0.0, 0.5),
            ),
            "0.25,0,0.5,0,90,0",
            true,
        ),
        // B upright at x = 0.5, lifted 0.05 (> 2ε) above A: nothing.
        (
            Affine3A::from_rotation_translation(
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
                Vec3::new(0.5, 0.0, 1.05),
            ),
            "0.5,0,1.05,0,90,0",
            false,
        ),
    ] {
        for exact in [false, true] {
            let opts = GeometryImageOptions {
                epsilon: 1e-2,
                mode: if exact {
                    gprox::ImageMode::Exact
                } else {
                    gprox::ImageMode::Approximate
                },
                normal_test: true,
            };
            let lib = ctx
                .image_collide(&m, &Affine3A::IDENTITY, &m, &pose, &opts)
                .unwrap();
            assert_eq!(!lib.is_empty(), expect_hits, "{arg}");
            let mut args = vec![
                "image-collide",
                fs,
                fs,
                "--pose-b",
                arg,
                "--epsilon",
                "1e-2",
            ];
            args.push("--json");
            if exact {
                args.push("--exact");
            }
            let v = json(&args);
            assert_eq!(v["count"].as_u64().unwrap() as usize, lib.pairs.len());
            let pairs = v["pairs"].as_array().unwrap();
            for (p, q) in pairs.iter().zip(&lib.pairs) {
                assert_eq!(p["quad_a"], serde_json::json!(q.quad_a));
                assert_eq!(p["quad_b"], serde_json::json!(q.quad_b));
            }
        }
    }
    let png = d.join("contacts.png");
    let out = gprox(&[
        "image-collide",
        fs,
        fs,
        "--pose-b",
        "0.25,0,0.5,0,90,0",
        "--epsilon",
        "1e-2",
        "--render",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("quad pairs"));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // Self-collision of the flat face: nothing.
    let v = json(&["image-collide", fs, "--epsilon", "1e-2", "--json"]);
    assert_eq!(
        (v["self"].as_bool(), v["count"].as_u64()),
        (Some(true), Some(0))
    );
}

/// Missing files, malformed faces, open loops and bad values exit with status 2 and a message
/// naming the file or the value.
#[test]
fn bad_input_exits_with_2() {
    let d = dir("bad");
    let good = d.join("face.json");
    write_face(&good);
    let g = good.to_str().unwrap();
    let missing = d.join("missing.json");
    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, "{ not json").unwrap();
    let open = d.join("open.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    doc["trim"][0]["curves"][1]["control_points"][1] = serde_json::json!([0.9, 0.9]);
    std::fs::write(&open, doc.to_string()).unwrap();
    for (args, needle) in [
        (vec![missing.to_str().unwrap(), g], "missing.json"),
        (vec![garbage.to_str().unwrap()], "garbage.json"),
        (vec![open.to_str().unwrap(), g], "open"),
        (vec![g, g, "--epsilon", "0"], "--epsilon"),
        (vec![g, g, "--render", "x.bmp"], "--render"),
    ] {
        let mut a = vec!["image-collide"];
        a.extend(args);
        fails_with_2(&a, &[needle]);
    }
}
