//! STL (binary and ASCII) through `stl_io`, with exact size checks for binary files and line
//! numbers for ASCII errors; vertices are welded by bit-identical position.

use std::io::{Cursor, Read, Write};
use std::path::Path;

use glam::Vec3;

use super::{build_mesh, bytes_source, parse_error, read_all, read_file, weld_vertices};
use crate::{GeometryError, TriMesh};

/// Size of the binary header (80 bytes of text + the u32 triangle count).
const HEADER: usize = 84;
/// Size of one binary triangle record (normal, 3 corners, attribute count).
const RECORD: usize = 50;

/// Loads an STL file (binary or ASCII, detected from the content), welding vertices with
/// bit-identical coordinates.
pub fn load_stl(path: impl AsRef<Path>) -> Result<TriMesh, GeometryError> {
    let path = path.as_ref();
    parse_stl(read_file(path)?, path)
}

/// Reads STL from `reader`; `source` names it in errors.
pub fn read_stl(reader: impl Read, source: &Path) -> Result<TriMesh, GeometryError> {
    parse_stl(read_all(reader, source)?, source)
}

/// Reads STL from memory (errors name the source `<bytes>`).
///
/// ```
/// let text = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n\
///             endloop\nendfacet\nendsolid t\n";
/// let mesh = gprox_geometry::io::stl_from_bytes(text.as_bytes())?;
/// assert_eq!((mesh.face_count(), mesh.vertex_count()), (1, 3));
/// # Ok::<(), gprox_geometry::GeometryError>(())
/// ```
pub fn stl_from_bytes(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    parse_stl(bytes.to_vec(), bytes_source())
}

/// Writes `mesh` as binary STL (normals from the corner order; zero for degenerate faces).
pub fn write_stl(mesh: &TriMesh, mut writer: impl Write) -> std::io::Result<()> {
    let tris: Vec<stl_io::Triangle> = (0..mesh.face_count())
        .map(|i| {
            let [a, b, c] = mesh.triangle(i);
            let n = (b - a).cross(c - a).normalize_or_zero();
            stl_io::Triangle {
                normal: stl_io::Vector::new(n.to_array()),
                vertices: [a, b, c].map(|p| stl_io::Vector::new(p.to_array())),
            }
        })
        .collect();
    stl_io::write_stl(&mut writer, tris.iter())
}

pub(super) fn parse_stl(mut bytes: Vec<u8>, path: &Path) -> Result<TriMesh, GeometryError> {
    let announced = (bytes.len() >= HEADER)
        .then(|| u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize);
    let exact_binary =
        announced.is_some_and(|n| (HEADER as u64 + RECORD as u64 * n as u64) == bytes.len() as u64);
    // ASCII: starts with "solid", is not an exactly sized binary file, and has no NUL byte in
    // its first KiB (binary float data nearly always does).
    let ascii = !exact_binary
        && bytes.trim_ascii_start().starts_with(b"solid")
        && !bytes[..bytes.len().min(1024)].contains(&0);
    let triangles = if ascii {
        read_ascii(&bytes, path)?
    } else {
        check_binary(&bytes, path)?;
        // Binary headers may start with "solid " too; stl_io would take them for ASCII.
        if bytes.starts_with(b"solid") {
            bytes[0] = b'S';
        }
        collect(&bytes, path, |_| None)?
    };
    let (positions, faces) = weld_vertices(triangles);
    build_mesh(positions, faces, path)
}

/// Size and finiteness checks of a binary STL, with byte offsets.
fn check_binary(bytes: &[u8], path: &Path) -> Result<(), GeometryError> {
    if bytes.len() < HEADER {
        return Err(parse_error(
            path,
            Some(bytes.len()),
            format!(
                "truncated binary STL: {} bytes, shorter than the {HEADER}-byte header",
                bytes.len()
            ),
        ));
    }
    let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
    let expected = HEADER as u64 + RECORD as u64 * n as u64;
    if (bytes.len() as u64) < expected {
        let complete = (bytes.len() - HEADER) / RECORD;
        return Err(parse_error(
            path,
            Some(HEADER + RECORD * complete),
            format!(
                "truncated binary STL: header announces {n} triangles = {expected} bytes, \
                 file has {} bytes (triangle {complete} is incomplete)",
                bytes.len()
            ),
        ));
    }
    for t in 0..n {
        for k in 0..9 {
            let at = HEADER + RECORD * t + 12 + 4 * k;
            let x = f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
            if !x.is_finite() {
                return Err(parse_error(
                    path,
                    Some(at),
                    format!("triangle {t}, corner {}: non-finite coordinate {x}", k / 3),
                ));
            }
        }
    }
    Ok(())
}

/// ASCII STL through stl_io; on error, the line is found by [`ascii_error_line`].
fn read_ascii(bytes: &[u8], path: &Path) -> Result<Vec<[Vec3; 3]>, GeometryError> {
    let text = String::from_utf8_lossy(bytes);
    collect(bytes, path, |_| ascii_error_line(&text))
}

/// Runs stl_io over `bytes`; `locate` gives the error location.
fn collect(
    bytes: &[u8],
    path: &Path,
    locate: impl Fn(&std::io::Error) -> Option<usize>,
) -> Result<Vec<[Vec3; 3]>, GeometryError> {
    let mut cursor = Cursor::new(bytes);
    let fail = |e: std::io::Error| parse_error(path, locate(&e), format!("STL: {e}"));
    let reader = stl_io::create_stl_reader(&mut cursor).map_err(fail)?;
    let mut out = Vec::new();
    for t in reader {
        let t = t.map_err(fail)?;
        out.push(t.vertices.map(|v| Vec3::from_array(v.0)));
    }
    Ok(out)
}

/// The 1-based line of the first ASCII STL grammar violation (the line after the last one at
/// an unexpected end of file), or `None` when the text is well formed.
fn ascii_error_line(text: &str) -> Option<usize> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, w)| !w.is_empty());
    let last = text.lines().count() + 1;
    let finite3 = |w: &[&str]| {
        w.len() == 3
            && w.iter()
                .all(|s| s.parse::<f32>().is_ok_and(|x| x.is_finite()))
    };
    match lines.next() {
        Some((_, w)) if w[0] == "solid" => {}
        Some((ln, _)) => return Some(ln),
        None => return Some(last),
    }
    loop {
        let Some((ln, w)) = lines.next() else {
            return Some(last);
        };
        if w[0] == "endsolid" {
            return None;
        }
        if w.len() != 5 || w[0] != "facet" || w[1] != "normal" || !finite3(&w[2..]) {
            return Some(ln);
        }
        let mut expect = |ok: &dyn Fn(&[&str]) -> bool| match lines.next() {
            Some((ln, w)) if !ok(&w) => Some(ln),
            Some(_) => None,
            None => Some(last),
        };
        if let Some(ln) = expect(&|w| w == ["outer", "loop"]) {
            return Some(ln);
        }
        for _ in 0..3 {
            if let Some(ln) = expect(&|w| w.len() == 4 && w[0] == "vertex" && finite3(&w[1..])) {
                return Some(ln);
            }
        }
        if let Some(ln) = expect(&|w| w == ["endloop"]) {
            return Some(ln);
        }
        if let Some(ln) = expect(&|w| w == ["endfacet"]) {
            return Some(ln);
        }
    }
}
