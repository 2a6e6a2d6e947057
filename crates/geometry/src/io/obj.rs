//! Wavefront OBJ through `tobj`, with a line-by-line pre-scan so malformed `v` / `f` records
//! are reported with their line number (tobj alone is lax and does not say where).

use std::io::{Read, Write};
use std::path::Path;

use glam::Vec3;

use super::{as_text, build_mesh, bytes_source, parse_error, read_all, read_file};
use crate::{GeometryError, TriMesh};

/// Loads an OBJ file: every object and group merged into one mesh, polygons triangulated by
/// fan, vertices indexed by position (texture/normal indices ignored), points and lines skipped.
/// Vertices are shared within an object; separate `o`/`g` blocks get their own copies.
pub fn load_obj(path: impl AsRef<Path>) -> Result<TriMesh, GeometryError> {
    let path = path.as_ref();
    parse_obj(&read_file(path)?, path)
}

/// Reads OBJ text from `reader`; `source` names it in errors.
pub fn read_obj(reader: impl Read, source: &Path) -> Result<TriMesh, GeometryError> {
    parse_obj(&read_all(reader, source)?, source)
}

/// Reads OBJ text from memory (errors name the source `<bytes>`).
///
/// ```
/// let mesh = gprox_geometry::io::obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 4 3\n")?;
/// assert_eq!(mesh.face_count(), 2);
/// # Ok::<(), gprox_geometry::GeometryError>(())
/// ```
pub fn obj_from_bytes(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    parse_obj(bytes, bytes_source())
}

/// Writes `mesh` as OBJ text (`v` lines with round-trip exact f32 values, then 1-based `f`).
pub fn write_obj(mesh: &TriMesh, mut writer: impl Write) -> std::io::Result<()> {
    let mut out = String::new();
    for p in mesh.positions() {
        out.push_str(&format!("v {} {} {}\n", p.x, p.y, p.z));
    }
    for f in mesh.faces() {
        out.push_str(&format!("f {} {} {}\n", f[0] + 1, f[1] + 1, f[2] + 1));
    }
    writer.write_all(out.as_bytes())
}

pub(super) fn parse_obj(bytes: &[u8], path: &Path) -> Result<TriMesh, GeometryError> {
    prescan(as_text(bytes, path)?, path)?;
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut cursor = std::io::Cursor::new(bytes);
    let (models, _materials) =
        tobj::load_obj_buf(&mut cursor, &options, |_| Ok(Default::default()))
            .map_err(|e| parse_error(path, None, format!("OBJ: {e}")))?;
    let mut positions = Vec::new();
    let mut faces = Vec::new();
    for model in &models {
        let mesh = &model.mesh;
        let offset = positions.len() as u32;
        positions.extend(
            mesh.positions
                .chunks_exact(3)
                .map(|c| Vec3::new(c[0], c[1], c[2])),
        );
        faces.extend(
            mesh.indices
                .chunks_exact(3)
                .map(|c| [c[0] + offset, c[1] + offset, c[2] + offset]),
        );
    }
    build_mesh(positions, faces, path)
}

/// Counts of `v`, `vt`, `vn` records seen so far.
#[derive(Default)]
struct Counts {
    v: usize,
    vt: usize,
    vn: usize,
}

/// Checks every `v`, `vt`, `vn` and `f` record; the first malformed one is an error at its line.
fn prescan(text: &str, path: &Path) -> Result<(), GeometryError> {
    let mut counts = Counts::default();
    // Forward references (positive indices) are checked once all vertices are known:
    // (line, kind 0/1/2 = v/vt/vn, zero-based index).
    let mut forward: Vec<(usize, usize, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        let err = |msg: String| parse_error(path, Some(ln), msg);
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let vals: Vec<&str> = words.collect();
                if vals.len() < 3 {
                    return Err(err(format!(
                        "vertex needs 3 coordinates, found {}",
                        vals.len()
                    )));
                }
                for (k, s) in vals.iter().enumerate() {
                    let x: f32 = s
                        .parse()
                        .map_err(|_| err(format!("malformed vertex value {s:?}")))?;
                    if !x.is_finite() {
                        return Err(err(format!("non-finite vertex coordinate {s:?}")));
                    }
                    if k == 3 && vals.len() == 4 && x == 0.0 {
                        return Err(err("vertex weight w = 0".into()));
                    }
                }
                if vals.len() == 5 || vals.len() > 6 {
                    return Err(err(format!(
                        "vertex has {} values (expected 3, 4 or 6)",
                        vals.len()
                    )));
                }
                counts.v += 1;
            }
            Some("vt") => counts.vt += 1,
            Some("vn") => counts.vn += 1,
            Some("f") => {
                let corners: Vec<&str> = words.collect();
                if corners.len() < 3 {
                    return Err(err(format!(
                        "face needs at least 3 vertices, found {}",
                        corners.len()
                    )));
                }
                for c in corners {
                    let parts: Vec<&str> = c.split('/').collect();
                    if parts.len() > 3 || parts[0].is_empty() {
                        return Err(err(format!("malformed face vertex {c:?}")));
                    }
                    for (kind, part) in parts.iter().enumerate() {
                        if part.is_empty() {
                            continue;
                        }
                        let x: i64 = part
                            .parse()
                            .map_err(|_| err(format!("malformed face vertex {c:?}")))?;
                        let have = [counts.v, counts.vt, counts.vn][kind];
                        let what = ["vertex", "texture coordinate", "normal"][kind];
                        if x == 0 {
                            return Err(err(format!("{what} index 0 (OBJ indices start at 1)")));
                        }
                        if x < 0 {
                            if (have as i64) + x < 0 {
                                return Err(err(format!(
                                    "relative {what} index {x}, but only {have} defined before"
                                )));
                            }
                        } else {
                            forward.push((ln, kind, (x - 1) as usize));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let have = [counts.v, counts.vt, counts.vn];
    for (ln, kind, idx) in forward {
        // Texture/normal indices only matter to tobj when such records exist at all.
        if idx >= have[kind] && (kind == 0 || have[kind] > 0) {
            let what = ["vertex", "texture coordinate", "normal"][kind];
            return Err(parse_error(
                path,
                Some(ln),
                format!(
                    "face refers to {what} {}, but the file has {} of them",
                    idx + 1,
                    have[kind]
                ),
            ));
        }
    }
    Ok(())
}
