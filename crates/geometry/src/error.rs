//! Typed errors for bad geometric input: each names what is wrong and where.

use std::path::PathBuf;

/// Everything that can be wrong with geometric input.
#[derive(Debug, thiserror::Error)]
pub enum GeometryError {
    /// A mesh without vertices or without faces.
    #[error("empty mesh: {what}")]
    EmptyMesh {
        /// What is missing ("no vertices", "no faces").
        what: &'static str,
    },
    /// A vertex coordinate that is NaN or infinite.
    #[error("vertex {index} has a non-finite coordinate {value:?}")]
    NonFiniteVertex {
        /// Index of the offending vertex.
        index: usize,
        /// Its coordinates.
        value: [f32; 3],
    },
    /// A face refers to a vertex that does not exist.
    #[error("face {face} refers to vertex {vertex}, but the mesh has {vertex_count} vertices")]
    IndexOutOfRange {
        /// Index of the offending face.
        face: usize,
        /// The out-of-range vertex index.
        vertex: u32,
        /// Number of vertices in the mesh.
        vertex_count: usize,
    },
    /// A new frame's vertex count differs from the mesh's.
    #[error("expected {expected} vertex positions, got {got}")]
    VertexCountMismatch {
        /// Vertex count of the mesh.
        expected: usize,
        /// Vertex count supplied.
        got: usize,
    },
    /// A file could not be read or parsed.
    #[error("{path}{}: {message}", location.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line (text formats) or byte offset / element index (binary formats), when known.
        location: Option<usize>,
        /// What went wrong.
        message: String,
    },
    /// An I/O failure while reading a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file was read, but the mesh it describes is invalid (empty, non-finite vertex, bad
    /// index): `source` says what and where.
    #[error("{path}: {source}")]
    InvalidMesh {
        /// The file.
        path: PathBuf,
        /// The validation error from [`TriMesh::new`](crate::TriMesh::new).
        source: Box<GeometryError>,
    },
    /// A pose that must be a rigid motion (a rotation and a translation) is not one, e.g. when
    /// it is handed to a library whose poses are isometries.
    #[error("pose is not a rigid motion: {what} (deviation {deviation:e})")]
    NotRigid {
        /// What is wrong ("non-finite entry", "scaled or sheared", "a reflection").
        what: &'static str,
        /// How far from a rotation its linear part is (largest entry of `MᵀM − I`, or the
        /// determinant for a reflection; NaN for a non-finite entry).
        deviation: f32,
    },
    /// The file's extension names no supported mesh format.
    #[error("{path}: unsupported mesh format (expected .obj, .stl or .ply)")]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
    },
}
