//! Mesh files: OBJ ([`tobj`]), STL binary and ASCII ([`stl_io`]), PLY ASCII and binary
//! (`ply-rs-bw`), read into a validated [`TriMesh`]; OBJ and binary STL writers.
//!
//! Every loader has three forms: `load_*(path)`, `read_*(reader, source)` and
//! `*_from_bytes(bytes)` (for tests: no file needed; errors name the source `<bytes>`).
//! [`load_mesh`] picks the format from the file extension.
//!
//! Errors name the file and the position: [`GeometryError::Parse`] carries the 1-based line for
//! text formats, the byte offset for binary STL and the element (face) index for PLY payload
//! problems; a mesh that parses but is invalid (no faces, non-finite coordinate, index out of
//! range) gives [`GeometryError::InvalidMesh`] wrapping [`TriMesh::new`]'s error.

mod obj;
mod ply;
mod stl;

pub use obj::{load_obj, obj_from_bytes, read_obj, write_obj};
pub use ply::{load_ply, ply_from_bytes, read_ply};
pub use stl::{load_stl, read_stl, stl_from_bytes, write_stl};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::{GeometryError, TriMesh};

/// The mesh file formats gprox reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Wavefront OBJ (polygons triangulated by fan).
    Obj,
    /// STL, binary or ASCII (vertices welded by bit-identical position).
    Stl,
    /// Stanford PLY, ASCII or binary (polygons triangulated by fan).
    Ply,
}

impl Format {
    /// The format named by a path's extension (case-insensitive), if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "obj" => Some(Self::Obj),
            "stl" => Some(Self::Stl),
            "ply" => Some(Self::Ply),
            _ => None,
        }
    }
}

/// Loads a mesh, choosing the format by extension (`.obj`, `.stl`, `.ply`).
///
/// ```no_run
/// let mesh = gprox_geometry::io::load_mesh("bunny.stl")?;
/// println!("{} triangles", mesh.face_count());
/// # Ok::<(), gprox_geometry::GeometryError>(())
/// ```
pub fn load_mesh(path: impl AsRef<Path>) -> Result<TriMesh, GeometryError> {
    let path = path.as_ref();
    match Format::from_path(path) {
        Some(Format::Obj) => load_obj(path),
        Some(Format::Stl) => load_stl(path),
        Some(Format::Ply) => load_ply(path),
        None => Err(GeometryError::UnsupportedFormat {
            path: path.to_path_buf(),
        }),
    }
}

/// Reads a mesh of the given format from bytes; `source` names it in errors.
pub fn mesh_from_bytes(
    bytes: &[u8],
    format: Format,
    source: &Path,
) -> Result<TriMesh, GeometryError> {
    match format {
        Format::Obj => obj::parse_obj(bytes, source),
        Format::Stl => stl::parse_stl(bytes.to_vec(), source),
        Format::Ply => ply::parse_ply(bytes, source),
    }
}

/// Merges vertices with bit-identical coordinates; returns the unique positions (in order of
/// first appearance) and the faces re-indexed into them.
pub fn weld_vertices(corners: impl IntoIterator<Item = [Vec3; 3]>) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut positions = Vec::new();
    let mut faces = Vec::new();
    for tri in corners {
        let face = tri.map(|p| {
            *index
                .entry(p.to_array().map(f32::to_bits))
                .or_insert_with(|| {
                    positions.push(p);
                    (positions.len() - 1) as u32
                })
        });
        faces.push(face);
    }
    (positions, faces)
}

/// The path used in errors for in-memory input.
pub(crate) fn bytes_source() -> &'static Path {
    Path::new("<bytes>")
}

/// Reads a whole file, mapping failures to [`GeometryError::Io`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, GeometryError> {
    std::fs::read(path).map_err(|source| GeometryError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a whole reader, mapping failures to [`GeometryError::Io`].
pub(crate) fn read_all(
    mut reader: impl std::io::Read,
    path: &Path,
) -> Result<Vec<u8>, GeometryError> {
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .map_err(|source| GeometryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(buf)
}

/// A [`GeometryError::Parse`].
pub(crate) fn parse_error(
    path: &Path,
    location: Option<usize>,
    message: impl Into<String>,
) -> GeometryError {
    GeometryError::Parse {
        path: PathBuf::from(path),
        location,
        message: message.into(),
    }
}

/// Validates through [`TriMesh::new`], wrapping its error with the file.
pub(crate) fn build_mesh(
    positions: Vec<Vec3>,
    faces: Vec<[u32; 3]>,
    path: &Path,
) -> Result<TriMesh, GeometryError> {
    TriMesh::new(positions, faces).map_err(|e| GeometryError::InvalidMesh {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Text of a file for the line-based pre-scans; invalid UTF-8 is an error at its line.
pub(crate) fn as_text<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, GeometryError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        parse_error(path, Some(line), "invalid UTF-8 in a text file")
    })
}
