//! Helpers shared by the `gprox` command-line tests: scratch folders, running the binary,
//! reading its output, the test meshes.

// Each test binary uses its own subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A closed, outward-wound unit tetrahedron (corners at the origin and on the three axes).
pub const TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// [`TETRA`] without its last face: three edges with one face each.
pub const OPEN_TETRA: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n";

/// A fresh, empty scratch folder for one test (named by the test binary, process and `tag`).
pub fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "gprox-{}-{}-{tag}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `contents` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, contents: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p.to_str().unwrap().to_owned()
}

/// Runs the `gprox` binary with `args`.
pub fn gprox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gprox"))
        .args(args)
        .output()
        .unwrap()
}

/// Bytes of a stream as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `gprox args`, asserts it succeeds and returns its standard output as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = gprox(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `gprox args`, asserts it exits with status 2 and a message containing every one of
/// `needles`; returns the message.
pub fn fails_with_2(args: &[&str], needles: &[&str]) -> String {
    let out = gprox(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
    }
    err
}

/// Whether an RGBA pixel is the red of highlighted contact faces.
pub fn red(p: &[u8]) -> bool {
    p[0] > 60 && p[0] as u32 > 3 * p[1] as u32 && p[0] as u32 > 3 * p[2] as u32
}
