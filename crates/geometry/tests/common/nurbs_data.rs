//! Where the reference NURBS of `../shared/data/nurbs` are, for the tests of several crates
//! (included with `#[path]` from other crates' tests).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `shared/data/nurbs` beside the checkout, or `None` (with a note) when it is absent.
pub fn nurbs_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/nurbs");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("note: {} is absent; skipping", d.display());
        None
    }
}

/// The surface files of `dir` (every `*.json` but `pairs.json` and `index.json`), sorted.
pub fn surface_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !matches!(
                    p.file_name().and_then(|n| n.to_str()),
                    Some("pairs.json" | "index.json")
                )
        })
        .collect();
    v.sort();
    v
}
