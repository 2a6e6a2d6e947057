//! Stanford PLY (ASCII and binary) through `ply-rs-bw`: `vertex` elements with `x, y, z`,
//! `face` elements with a `vertex_indices` (or `vertex_index`) list, polygons triangulated by fan.

use std::io::{Cursor, Read};
use std::path::Path;

use glam::Vec3;
use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{DefaultElement, Property};

use super::{build_mesh, bytes_source, parse_error, read_all, read_file};
use crate::{GeometryError, TriMesh};

/// Loads a PLY file. Double-precision coordinates are rounded to f32.
pub fn load_ply(path: impl AsRef<Path>) -> Result<TriMesh, GeometryError> {
    let path = path.as_ref();
    parse_ply(&read_file(path)?, path)
}

/// Reads PLY from `reader`; `source` names it in errors.
pub fn read_ply(reader: impl Read, source: &Path) -> Result<TriMesh, GeometryError> {
    parse_ply(&read_all(reader, source)?, source)
}

/// Reads PLY from memory (errors name the source `<bytes>`).
///
/// ```
/// let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
///             property float z\nelement face 1\nproperty list uchar int vertex_indices\n\
///             end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
/// let mesh = gprox_geometry::io::ply_from_bytes(text.as_bytes())?;
/// assert_eq!(mesh.face_count(), 1);
/// # Ok::<(), gprox_geometry::GeometryError>(())
/// ```
pub fn ply_from_bytes(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    parse_ply(bytes, bytes_source())
}

pub(super) fn parse_ply(bytes: &[u8], path: &Path) -> Result<TriMesh, GeometryError> {
    let parser = Parser::<DefaultElement>::new();
    let ply = parser
        .read_ply(&mut Cursor::new(bytes))
        .map_err(|e| parse_error(path, e.line(), format!("PLY: {e}")))?;
    let vertices = ply
        .payload
        .get("vertex")
        .ok_or_else(|| parse_error(path, None, "PLY: no `vertex` element"))?;
    let mut positions = Vec::with_capacity(vertices.len());
    for (i, v) in vertices.iter().enumerate() {
        let coord = |name: &str| -> Result<f32, GeometryError> {
            v.get(name).and_then(scalar).ok_or_else(|| {
                parse_error(
                    path,
                    Some(i),
                    format!("PLY: vertex {i} has no numeric property `{name}`"),
                )
            })
        };
        positions.push(Vec3::new(coord("x")?, coord("y")?, coord("z")?));
    }
    let mut faces = Vec::new();
    if let Some(elements) = ply.payload.get("face") {
        for (i, f) in elements.iter().enumerate() {
            let list = f
                .get("vertex_indices")
                .or_else(|| f.get("vertex_index"))
                .and_then(index_list)
                .ok_or_else(|| {
                    parse_error(
                        path,
                        Some(i),
                        format!("PLY: face {i} has no integer list `vertex_indices`"),
                    )
                })?;
            if list.len() < 3 {
                return Err(parse_error(
                    path,
                    Some(i),
                    format!(
                        "PLY: face {i} has {} vertices (at least 3 needed)",
                        list.len()
                    ),
                ));
            }
            let mut idx = Vec::with_capacity(list.len());
            for &x in &list {
                if x < 0 || x as usize >= positions.len() {
                    return Err(parse_error(
                        path,
                        Some(i),
                        format!(
                            "PLY: face {i} refers to vertex {x}, but the file has {} vertices",
                            positions.len()
                        ),
                    ));
                }
                idx.push(x as u32);
            }
            for k in 1..idx.len() - 1 {
                faces.push([idx[0], idx[k], idx[k + 1]]);
            }
        }
    }
    build_mesh(positions, faces, path)
}

/// A numeric scalar property as f32 (doubles rounded to nearest).
fn scalar(p: &Property) -> Option<f32> {
    Some(match *p {
        Property::Float(x) => x,
        Property::Double(x) => x as f32,
        Property::Char(x) => x as f32,
        Property::UChar(x) => x as f32,
        Property::Short(x) => x as f32,
        Property::UShort(x) => x as f32,
        Property::Int(x) => x as f32,
        Property::UInt(x) => x as f32,
        _ => return None,
    })
}

/// An integer list property as i64 values.
fn index_list(p: &Property) -> Option<Vec<i64>> {
    Some(match p {
        Property::ListChar(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUChar(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListShort(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUShort(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListInt(v) => v.iter().map(|&x| x as i64).collect(),
        Property::ListUInt(v) => v.iter().map(|&x| x as i64).collect(),
        _ => return None,
    })
}
