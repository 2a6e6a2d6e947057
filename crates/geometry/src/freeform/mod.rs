//! Freeform surfaces: B-spline/NURBS curves and surfaces, Bézier patches, readers and
//! tessellation (The NURBS Book algorithms, written here in f64).
//!
//! * [`NurbsCurve`], [`NurbsSurface`]: clamped, any degree, rational or not; evaluation with
//!   derivatives to second order, knot insertion, splitting, restriction, Bézier extraction,
//!   control-net bounds.
//! * [`BezierPatch`]: de Casteljau evaluation and subdivision.
//! * [`io`]: the NURBS JSON schema and `.bpt` readers; [`io::teapot`] is the embedded teapot.
//! * [`FreeformModel`]: surfaces + a rigid pose.
//! * [`trimmed`]: trimmed faces (surface + trim loops), their reader and point-in-face test.

pub mod basis_cache;
pub mod bezier;
pub mod bezier_max;
pub mod bounds;
pub mod curve;
pub mod derivative_bounds;
pub mod error;
pub mod grid;
pub mod io;
pub mod knots;
pub mod merge;
pub mod model;
pub mod rect;
pub mod reference;
pub mod surface;
pub mod tessellate;
pub mod trimmed;

pub use bezier::BezierPatch;
pub use curve::NurbsCurve;
pub use derivative_bounds::DerivativeBounds;
pub use error::FreeformError;
pub use grid::{grid_basis, AxisBasis, GridEvaluator};
pub use io::{load_bpt, load_nurbs_json, parse_bpt, parse_nurbs_json, teapot};
pub use model::{apply_pose, FreeformModel};
pub use surface::{NurbsSurface, ParamRect, SurfaceDerivatives};
pub use trimmed::{TrimError, TrimmedFace};
