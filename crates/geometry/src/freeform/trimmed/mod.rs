//! Trimmed NURBS faces (CAD B-rep faces): a surface plus closed loops of 2D NURBS curves in its
//! (u, v) domain, the outer loop first, then holes; the material lies on the left of each loop
//! (outer loops counter-clockwise, holes clockwise), as in `shared/data/trimmed/README.md`.
//!
//! * [`TrimCurve`], [`TrimLoop`], [`TrimmedFace`]: the data, validated on construction
//!   ([`validate`]: closed loops, curves inside the domain, no crossings).
//! * [`flatten`]: certified flattening of the loops into polygons within a (u, v) tolerance.
//! * [`winding`]: point-in-face by winding number, for single points and whole grids.
//! * [`io`]: the JSON reader for face files and `model.json`.

pub mod error;
pub mod flatten;
pub mod io;
pub mod validate;
pub mod winding;

use glam::{DVec2, DVec3};

pub use error::TrimError;
pub use flatten::TrimPolygon;
pub use io::{load_trimmed_face, load_trimmed_model, parse_trimmed_face, TrimmedModel};

use super::{NurbsCurve, NurbsSurface, ParamRect};

/// Flattening tolerance used to validate the loops, relative to the largest domain side.
pub const VALIDATION_TOLERANCE_REL: f64 = 1e-7;

/// Largest allowed gap between consecutive curves of a loop, relative to the largest domain side.
pub const LOOP_GAP_REL: f64 = 1e-7;

/// How far loop points may lie outside the domain, relative to the largest domain side.
pub const DOMAIN_SLACK_REL: f64 = 1e-6;

/// One trim curve: a 2D NURBS curve in (u, v) (stored with z = 0), the part of it that is used
/// and the direction in which the loop traverses it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrimCurve {
    /// The curve; its points are `(u, v, 0)`.
    pub curve: NurbsCurve,
    /// The used parameter range `[t0, t1]`, `t0 < t1`.
    pub range: [f64; 2],
    /// `false`: traversed from `t0` to `t1`; `true`: from `t1` to `t0`.
    pub reversed: bool,
}

impl TrimCurve {
    /// Builds a trim curve from 2D control points, optional weights and a used range.
    pub fn new(
        degree: usize,
        knots: Vec<f64>,
        points: &[DVec2],
        weights: Option<Vec<f64>>,
        range: [f64; 2],
        reversed: bool,
    ) -> Result<Self, super::FreeformError> {
        let pts = points.iter().map(|p| p.extend(0.0)).collect();
        Ok(Self {
            curve: NurbsCurve::new(degree, knots, pts, weights)?,
            range,
            reversed,
        })
    }

    /// The point at curve parameter `t`, in (u, v).
    pub fn point(&self, t: f64) -> DVec2 {
        self.curve.point(t).truncate()
    }

    /// Where the traversal starts.
    pub fn start(&self) -> DVec2 {
        self.point(self.range[usize::from(self.reversed)])
    }

    /// Where the traversal ends.
    pub fn end(&self) -> DVec2 {
        self.point(self.range[usize::from(!self.reversed)])
    }
}

/// Whether a loop bounds the face from outside or cuts a hole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopRole {
    /// The outer boundary (counter-clockwise).
    Outer,
    /// A hole (clockwise).
    Hole,
}

/// A closed loop: curves traversed head to tail.
#[derive(Clone, Debug, PartialEq)]
pub struct TrimLoop {
    /// Outer boundary or hole.
    pub role: LoopRole,
    /// The curves in traversal order.
    pub curves: Vec<TrimCurve>,
}

impl TrimLoop {
    /// A closed polygon of line segments through `corners` (in traversal order: counter-
    /// clockwise for [`LoopRole::Outer`], clockwise for a hole). Not validated here (that is
    /// [`TrimmedFace::new`]'s job); an error only when a segment is not a valid curve.
    ///
    /// ```
    /// use gprox_geometry::freeform::trimmed::{LoopRole, TrimLoop};
    /// use gprox_geometry::glam::DVec2;
    /// let hole = [DVec2::new(0.4, 0.4), DVec2::new(0.4, 0.6), DVec2::new(0.6, 0.6)];
    /// let l = TrimLoop::polygon(LoopRole::Hole, &hole).unwrap();
    /// assert_eq!((l.curves.len(), l.curves[2].end()), (3, hole[0]));
    /// ```
    pub fn polygon(role: LoopRole, corners: &[DVec2]) -> Result<Self, TrimError> {
        let n = corners.len();
        let curves = (0..n)
            .map(|k| {
                let ends = [corners[k], corners[(k + 1) % n]];
                TrimCurve::new(1, vec![0.0, 0.0, 1.0, 1.0], &ends, None, [0.0, 1.0], false).map_err(
                    |source| TrimError::Spline {
                        what: format!("polygon side {k}"),
                        source,
                    },
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { role, curves })
    }
}

/// A trimmed face: the surface and its validated loops. A point `(u, v)` belongs to the face
/// when its winding number about all loops is non-zero ([`Self::contains`]).
#[derive(Clone, Debug)]
pub struct TrimmedFace {
    surface: NurbsSurface,
    loops: Vec<TrimLoop>,
    polygon: TrimPolygon,
}

impl TrimmedFace {
    /// Validates the loops against the surface (see [`validate`]) and keeps a polygon flattened
    /// within [`VALIDATION_TOLERANCE_REL`] times the largest domain side.
    pub fn new(surface: NurbsSurface, loops: Vec<TrimLoop>) -> Result<Self, TrimError> {
        let polygon = validate::validate(&surface.domain(), &loops)?;
        Ok(Self {
            surface,
            loops,
            polygon,
        })
    }

    /// An untrimmed face: one outer loop of four lines along the domain sides.
    pub fn untrimmed(surface: NurbsSurface) -> Result<Self, TrimError> {
        let d = surface.domain();
        let c = [
            DVec2::new(d.u0, d.v0),
            DVec2::new(d.u1, d.v0),
            DVec2::new(d.u1, d.v1),
            DVec2::new(d.u0, d.v1),
        ];
        Self::new(surface, vec![TrimLoop::polygon(LoopRole::Outer, &c)?])
    }

    /// The same face on a moved surface (a deforming face's next frame): the loops and their
    /// polygon are kept, so the surface must have the same parameter domain (else
    /// [`TrimError::Domain`]).
    pub fn with_surface(&self, surface: NurbsSurface) -> Result<Self, TrimError> {
        let (d, e) = (self.domain(), surface.domain());
        if [d.u0, d.u1, d.v0, d.v1] != [e.u0, e.u1, e.v0, e.v1] {
            return Err(TrimError::Domain {
                expected: [d.u0, d.u1, d.v0, d.v1],
                got: [e.u0, e.u1, e.v0, e.v1],
            });
        }
        Ok(Self {
            surface,
            loops: self.loops.clone(),
            polygon: self.polygon.clone(),
        })
    }

    /// The surface.
    pub fn surface(&self) -> &NurbsSurface {
        &self.surface
    }

    /// The loops, outer first.
    pub fn loops(&self) -> &[TrimLoop] {
        &self.loops
    }

    /// The loops flattened within [`VALIDATION_TOLERANCE_REL`] of the domain size.
    pub fn polygon(&self) -> &TrimPolygon {
        &self.polygon
    }

    /// The parameter domain of the surface.
    pub fn domain(&self) -> ParamRect {
        self.surface.domain()
    }

    /// The largest side of the domain (the length the relative tolerances refer to).
    pub fn domain_size(&self) -> f64 {
        let d = self.domain();
        (d.u1 - d.u0).max(d.v1 - d.v0)
    }

    /// The loops flattened within `tolerance` in (u, v).
    pub fn flatten(&self, tolerance: f64) -> Result<TrimPolygon, TrimError> {
        TrimPolygon::new(&self.loops, tolerance)
    }

    /// Whether `(u, v)` lies in the face (winding number of the validation polygon non-zero):
    /// exact for points farther than [`Self::polygon`]'s tolerance from every trim curve.
    pub fn contains(&self, u: f64, v: f64) -> bool {
        self.polygon.winding_number(DVec2::new(u, v)) != 0
    }

    /// The surface point at `(u, v)`.
    pub fn point(&self, u: f64, v: f64) -> DVec3 {
        self.surface.point(u, v)
    }
}

#[cfg(test)]
mod tests;
