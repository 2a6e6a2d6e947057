//! Typed errors for malformed scenes: each names the file and what is wrong.

use std::path::PathBuf;

use crate::freeform::TrimError;
use crate::GeometryError;

/// Everything that can be wrong with a scene folder.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A file is missing or unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `scene.json` is not valid JSON.
    #[error("{path}:{line}:{column}: bad JSON: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// `scene.json` is valid JSON but not a valid scene (missing or mistyped field, bad format).
    #[error("{path}: {message}")]
    Invalid {
        /// The file (or scene name for in-memory scenes).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A query names an object the scene does not have.
    #[error("{path}: query {query} (`{kind}`) names unknown object `{name}`")]
    UnknownObject {
        /// The `scene.json` file.
        path: PathBuf,
        /// Index of the query in `queries`.
        query: usize,
        /// Its kind.
        kind: String,
        /// The unknown name.
        name: String,
    },
    /// A binary array has the wrong size for the frame, object and vertex counts.
    #[error("{path}: expected {expected} bytes ({shape}), found {actual}")]
    ArraySize {
        /// The array file.
        path: PathBuf,
        /// Its shape as the format defines it.
        shape: &'static str,
        /// Expected size in bytes.
        expected: u64,
        /// Actual size in bytes.
        actual: u64,
    },
    /// A transform or vertex holds NaN or infinity.
    #[error("{path}: non-finite value at frame {frame}, index {index}")]
    NonFinite {
        /// The array file.
        path: PathBuf,
        /// Frame of the bad value.
        frame: usize,
        /// Object (transforms) or vertex (vertex arrays) index.
        index: usize,
    },
    /// A mesh file could not be loaded.
    #[error("mesh {path}: {source}")]
    Mesh {
        /// The mesh file.
        path: PathBuf,
        /// The loader's error.
        source: GeometryError,
    },
    /// A trimmed face file (or `model.json`) of a surface object could not be read.
    #[error("faces {path}: {source}")]
    Trim {
        /// The face or model file.
        path: PathBuf,
        /// The reader's error.
        source: TrimError,
    },
}
