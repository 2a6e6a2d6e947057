//! Typed errors for freeform input: each names what is wrong and where.

use std::path::PathBuf;

/// Everything that can be wrong with a spline, a patch file or a NURBS JSON file.
#[derive(Debug, thiserror::Error)]
pub enum FreeformError {
    /// Degree 0 or a degree the control net cannot support.
    #[error("{direction}: degree {degree} is invalid for {count} control points (need 1 <= degree < count)")]
    BadDegree {
        /// Parameter direction ("u", "v" or "curve").
        direction: &'static str,
        /// The degree given.
        degree: usize,
        /// Number of control points in that direction.
        count: usize,
    },
    /// The knot vector has the wrong length.
    #[error("{direction}: knot vector has {got} knots, expected {expected} (control points + degree + 1)")]
    KnotCount {
        /// Parameter direction.
        direction: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A knot is smaller than its predecessor, or NaN/infinite.
    #[error("{direction}: knot {index} = {value} breaks monotonicity or is not finite")]
    KnotOrder {
        /// Parameter direction.
        direction: &'static str,
        /// Index of the offending knot.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// The knot vector is not clamped (first/last knot repeated degree+1 times) or an interior
    /// knot is repeated more than `degree` times.
    #[error("{direction}: knot vector is not clamped or has multiplicity above the degree at knot {index}")]
    KnotMultiplicity {
        /// Parameter direction.
        direction: &'static str,
        /// Index of the offending knot.
        index: usize,
    },
    /// The parameter domain has zero length.
    #[error("{direction}: empty parameter domain")]
    EmptyDomain {
        /// Parameter direction.
        direction: &'static str,
    },
    /// A weight that is zero, negative or not finite.
    #[error("weight {index} = {value} is not positive and finite")]
    BadWeight {
        /// Flat index (row-major, u major) of the control point.
        index: usize,
        /// The weight.
        value: f64,
    },
    /// A control point with a NaN or infinite coordinate.
    #[error("control point {index} has a non-finite coordinate {value:?}")]
    NonFinitePoint {
        /// Flat index (row-major, u major).
        index: usize,
        /// Its coordinates.
        value: [f64; 3],
    },
    /// The number of control points or weights does not match the declared net size.
    #[error("expected {expected} {what}, got {got}")]
    CountMismatch {
        /// What was counted ("control points", "weights", ...).
        what: &'static str,
        /// Expected count.
        expected: usize,
        /// Actual count.
        got: usize,
    },
    /// A parameter outside the domain or NaN.
    #[error("parameter {value} is outside the domain [{min}, {max}]")]
    ParameterOutOfDomain {
        /// The parameter given.
        value: f64,
        /// Domain start.
        min: f64,
        /// Domain end.
        max: f64,
    },
    /// A malformed text file (.bpt).
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file (or "<memory>").
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What went wrong.
        message: String,
    },
    /// A malformed or inconsistent NURBS JSON document.
    #[error("{}: field `{field}`: {message}", path.display())]
    Json {
        /// The file (or "<memory>").
        path: PathBuf,
        /// The JSON field (with index, e.g. `control_points[3][2]`).
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
    /// A surface at `index` in a model failed validation.
    #[error("surface {index}: {source}")]
    InSurface {
        /// Index of the surface in the model or file.
        index: usize,
        /// The underlying error.
        source: Box<FreeformError>,
    },
    /// A tessellation tolerance that is not positive and finite, or so small that a Bézier piece
    /// would need more than `cells` cells per side.
    #[error("tessellation tolerance {tolerance} is invalid or needs more than {cells} cells per piece side")]
    Tolerance {
        /// The tolerance given.
        tolerance: f64,
        /// The per-side cell limit.
        cells: usize,
    },
    /// A model without surfaces.
    #[error("a freeform model needs at least one surface")]
    EmptyModel,
}
