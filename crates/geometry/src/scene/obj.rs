//! The scene format's OBJ subset, read in file vertex order.
//!
//! `<object>.verts.f32` arrays index vertices in the order of the OBJ's `v` lines, so scene
//! meshes must keep that order exactly (a general loader may reorder vertices by first use).
//! Only `v x y z` and `f a b c ...` lines matter (1-based or negative indices, `a/b/c` forms,
//! polygons fanned); everything else is ignored, as `SCENES.md` specifies.

use std::path::Path;

use glam::Vec3;

use crate::{GeometryError, TriMesh};

/// Parses OBJ text read from `path` (named in errors, with the line number).
pub(super) fn parse(text: &str, path: &Path) -> Result<TriMesh, GeometryError> {
    let mut positions = Vec::new();
    let mut faces = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let err = |message: String| GeometryError::Parse {
            path: path.to_path_buf(),
            location: Some(i + 1),
            message,
        };
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let mut c = [0f32; 3];
                for (k, slot) in c.iter_mut().enumerate() {
                    let w = words
                        .next()
                        .ok_or_else(|| err(format!("vertex needs 3 coordinates, found {k}")))?;
                    *slot = w
                        .parse()
                        .map_err(|_| err(format!("malformed vertex coordinate {w:?}")))?;
                }
                positions.push(Vec3::from_array(c));
            }
            Some("f") => {
                let mut idx = Vec::with_capacity(4);
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let k: i64 = first
                        .parse()
                        .map_err(|_| err(format!("malformed face index {w:?}")))?;
                    let n = positions.len() as i64;
                    let v = match k {
                        k if k > 0 => k - 1,
                        k if k < 0 => n + k,
                        _ => return Err(err("face index 0 (OBJ indices start at 1)".into())),
                    };
                    let v = u32::try_from(v)
                        .map_err(|_| err(format!("face index {k} out of range")))?;
                    idx.push(v);
                }
                if idx.len() < 3 {
                    return Err(err(format!("face needs 3 vertices, found {}", idx.len())));
                }
                for k in 1..idx.len() - 1 {
                    faces.push([idx[0], idx[k], idx[k + 1]]);
                }
            }
            _ => {}
        }
    }
    // Forward references are allowed by OBJ; TriMesh::new checks every index at the end.
    TriMesh::new(positions, faces).map_err(|e| GeometryError::Parse {
        path: path.to_path_buf(),
        location: None,
        message: e.to_string(),
    })
}
