//! Typed errors for trimmed faces: each names the file, loop, curve or field that is wrong.

use std::path::PathBuf;

use crate::freeform::FreeformError;

/// Everything that can be wrong with a trimmed face or a model of trimmed faces.
#[derive(Debug, thiserror::Error)]
pub enum TrimError {
    /// A malformed or inconsistent JSON document.
    #[error("{}: field `{field}`: {message}", path.display())]
    Json {
        /// The file (or "<memory>").
        path: PathBuf,
        /// The JSON field, with indices (e.g. `trim[1].curves[0].knots`).
        field: String,
        /// What went wrong.
        message: String,
    },
    /// A file that could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The face's surface or one of its trim curves failed validation.
    #[error("{what}: {source}")]
    Spline {
        /// Which spline (`surface`, `loop 1 curve 0`).
        what: String,
        /// The underlying error.
        source: FreeformError,
    },
    /// A face without any loop, or a loop without curves.
    #[error("loop {loop_index}: {message}")]
    EmptyLoop {
        /// Index of the loop (0 = outer); `usize::MAX` when the face has no loop at all.
        loop_index: usize,
        /// What is missing.
        message: &'static str,
    },
    /// A curve's parameter range is empty, reversed, non-finite or outside its knot domain.
    #[error("loop {loop_index} curve {curve}: parameter range [{t0}, {t1}] is not inside the curve domain [{d0}, {d1}]")]
    ParamRange {
        /// Loop index.
        loop_index: usize,
        /// Curve index inside the loop.
        curve: usize,
        /// Range start.
        t0: f64,
        /// Range end.
        t1: f64,
        /// Domain start.
        d0: f64,
        /// Domain end.
        d1: f64,
    },
    /// The end of `curve` does not meet the start of the next curve of the loop.
    #[error("loop {loop_index} is open: curve {curve} ends {gap:e} away from the start of the next curve (tolerance {tolerance:e})")]
    OpenLoop {
        /// Loop index.
        loop_index: usize,
        /// Curve whose end misses the next start.
        curve: usize,
        /// Distance in (u, v).
        gap: f64,
        /// Allowed gap.
        tolerance: f64,
    },
    /// A trim curve leaves the surface's parameter domain.
    #[error("loop {loop_index} curve {curve}: point ({u}, {v}) lies outside the domain [{u0}, {u1}] x [{v0}, {v1}]")]
    OutsideDomain {
        /// Loop index.
        loop_index: usize,
        /// Curve index.
        curve: usize,
        /// u of the offending point.
        u: f64,
        /// v of the offending point.
        v: f64,
        /// Domain start in u.
        u0: f64,
        /// Domain end in u.
        u1: f64,
        /// Domain start in v.
        v0: f64,
        /// Domain end in v.
        v1: f64,
    },
    /// Two trim curves (of one loop or of two loops) cross each other.
    #[error("loop {loop_a} curve {curve_a} crosses loop {loop_b} curve {curve_b} near ({u}, {v})")]
    SelfCrossing {
        /// Loop of the first curve.
        loop_a: usize,
        /// First curve.
        curve_a: usize,
        /// Loop of the second curve.
        loop_b: usize,
        /// Second curve.
        curve_b: usize,
        /// u near the crossing.
        u: f64,
        /// v near the crossing.
        v: f64,
    },
    /// A curve could not be flattened within the tolerance (tolerance not positive, or a curve
    /// needing more than the segment budget).
    #[error("loop {loop_index} curve {curve}: cannot flatten within tolerance {tolerance:e}")]
    Flatten {
        /// Loop index.
        loop_index: usize,
        /// Curve index.
        curve: usize,
        /// The tolerance asked for.
        tolerance: f64,
    },
    /// A new surface for a face whose parameter domain differs from the face's.
    #[error("surface domain {got:?} differs from the face's domain {expected:?}")]
    Domain {
        /// The face's domain `[u0, u1, v0, v1]`.
        expected: [f64; 4],
        /// The new surface's domain.
        got: [f64; 4],
    },
    /// An error inside the face file `path`.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The face file.
        path: PathBuf,
        /// The underlying error.
        source: Box<TrimError>,
    },
}

impl TrimError {
    /// Wraps the error with the file it came from.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        Self::InFile {
            path: path.into(),
            source: Box::new(self),
        }
    }
}
