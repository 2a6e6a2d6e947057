//! Readers of the scalable-CCD sample scenes in `../shared/data/ccd` (binary PLY frames, JSON
//! query lists and ground truth), shared by the CPU's and the device's CCD data tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use glam::DVec3;

/// Minimal binary PLY reader (vertex x/y/z float or double, faces as `list uchar int`).
pub fn read_ply(path: &Path) -> (Vec<DVec3>, Vec<[u32; 3]>) {
    let bytes = std::fs::read(path).expect("read ply");
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .expect("ply header")
        + 11;
    let header = std::str::from_utf8(&bytes[..end]).expect("ascii header");
    let big = header.contains("binary_big_endian");
    let (mut nv, mut nf, mut double) = (0usize, 0usize, false);
    for l in header.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["element", "vertex", n] => nv = n.parse().expect("vertex count"),
            ["element", "face", n] => nf = n.parse().expect("face count"),
            ["property", t, "x"] => double = *t == "double",
            _ => {}
        }
    }
    let mut at = end;
    let mut take = |k: usize| {
        let s = &bytes[at..at + k];
        at += k;
        let mut a = [0u8; 8];
        a[..k].copy_from_slice(s);
        if big {
            a[..k].reverse();
        }
        a
    };
    let mut verts = Vec::with_capacity(nv);
    for _ in 0..nv {
        let mut c = [0.0; 3];
        for x in &mut c {
            *x = if double {
                f64::from_le_bytes(take(8))
            } else {
                let a = take(4);
                f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64
            };
        }
        verts.push(DVec3::from(c));
    }
    let mut faces = Vec::with_capacity(nf);
    for _ in 0..nf {
        let k = take(1)[0];
        assert_eq!(k, 3, "triangles only");
        let mut f = [0u32; 3];
        for x in &mut f {
            let a = take(4);
            *x = i32::from_le_bytes([a[0], a[1], a[2], a[3]]) as u32;
        }
        faces.push(f);
    }
    (verts, faces)
}

/// libigl `edges(F)`: unique undirected edges `(i < j)` sorted by `(j, i)`.
pub fn igl_edges(faces: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut e: Vec<[u32; 2]> = faces
        .iter()
        .flat_map(|f| {
            (0..3).map(move |k| {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                [a.max(b), a.min(b)]
            })
        })
        .collect();
    e.sort_unstable();
    e.dedup();
    e.into_iter().map(|[j, i]| [i, j]).collect()
}

pub fn json_ints(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).expect("read json");
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("int"))
        .collect()
}

pub fn json_bools(path: &Path) -> Vec<bool> {
    let text = std::fs::read_to_string(path).expect("read json");
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|s| !s.is_empty())
        .map(|s| s == "true")
        .collect()
}

/// Every `.csv` file below `dir`, in sorted order (the sample queries).
pub fn csv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            csv_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "csv") {
            out.push(p);
        }
    }
}

/// The entries of `dir`, sorted.
pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    v
}

/// The scenes of the scalable-CCD sample (folders with a `boxes` folder), sorted.
pub fn scenes(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir)
        .into_iter()
        .filter(|p| p.join("boxes").is_dir())
        .collect()
}

/// A scene's two frames, in the order of the numbers in their names.
pub fn frame_pair(scene: &Path) -> [PathBuf; 2] {
    let mut frames = sorted_entries(&scene.join("frames"));
    frames.sort_by_key(|p| {
        let s = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let digits: String = s.chars().filter(|c| c.is_ascii_digit()).collect();
        digits.parse::<u64>().unwrap_or(0)
    });
    assert_eq!(frames.len(), 2, "{}", scene.display());
    [frames[0].clone(), frames[1].clone()]
}
