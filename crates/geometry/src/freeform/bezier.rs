//! Bézier patches (polynomial or rational, homogeneous control points) with de Casteljau
//! evaluation and subdivision.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::{DVec3, DVec4};

use super::curve::project;
use super::surface::NurbsSurface;
use super::FreeformError;

/// A tensor-product Bézier patch over `[0,1]^2`, control point `(i, j)` at `i * (q+1) + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct BezierPatch {
    degree: [usize; 2],
    points: Vec<DVec4>,
}

/// de Casteljau on one homogeneous control polygon; returns the point and, if asked, the two
/// halves' control polygons.
fn casteljau(poly: &[DVec4], t: f64, halves: bool) -> (DVec4, Vec<DVec4>, Vec<DVec4>) {
    let n = poly.len();
    let mut tmp = poly.to_vec();
    let (mut left, mut right) = (Vec::new(), Vec::new());
    if halves {
        left.push(tmp[0]);
        right.push(tmp[n - 1]);
    }
    for r in 1..n {
        for i in 0..n - r {
            tmp[i] = tmp[i] * (1.0 - t) + tmp[i + 1] * t;
        }
        if halves {
            left.push(tmp[0]);
            right.push(tmp[n - 1 - r]);
        }
    }
    right.reverse();
    (tmp[0], left, right)
}

impl BezierPatch {
    /// Validates and builds a patch from Euclidean points (row-major) and optional weights.
    pub fn new(
        degree: [usize; 2],
        points: Vec<DVec3>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self, FreeformError> {
        let n = (degree[0] + 1) * (degree[1] + 1);
        if degree[0] == 0 || degree[1] == 0 {
            return Err(FreeformError::BadDegree {
                direction: if degree[0] == 0 { "u" } else { "v" },
                degree: 0,
                count: n,
            });
        }
        if points.len() != n {
            return Err(FreeformError::CountMismatch {
                what: "control points",
                expected: n,
                got: points.len(),
            });
        }
        let weights = weights.unwrap_or_else(|| vec![1.0; n]);
        super::curve::validate_points(&points, &weights)?;
        Ok(Self {
            degree,
            points: points
                .iter()
                .zip(&weights)
                .map(|(&p, &w)| super::curve::lift(p, w))
                .collect(),
        })
    }

    /// Degrees `(p, q)`.
    pub fn degree(&self) -> [usize; 2] {
        self.degree
    }

    /// Homogeneous control points.
    pub fn homogeneous_points(&self) -> &[DVec4] {
        &self.points
    }

    /// Euclidean control points.
    pub fn control_points(&self) -> Vec<DVec3> {
        self.points.iter().map(|&h| project(h)).collect()
    }

    /// Point at `(u, v)` by de Casteljau (first along v per row, then along u).
    pub fn point(&self, u: f64, v: f64) -> DVec3 {
        let q1 = self.degree[1] + 1;
        let col: Vec<DVec4> = self
            .points
            .chunks(q1)
            .map(|row| casteljau(row, v, false).0)
            .collect();
        project(casteljau(&col, u, false).0)
    }

    /// Splits at `t` along u (`along_u`) or v into two patches over the halves.
    pub fn subdivide(&self, along_u: bool, t: f64) -> (Self, Self) {
        let [p, q] = self.degree;
        let (mut a, mut b) = (self.points.clone(), self.points.clone());
        if along_u {
            for j in 0..=q {
                let col: Vec<DVec4> = (0..=p).map(|i| self.points[i * (q + 1) + j]).collect();
                let (_, l, r) = casteljau(&col, t, true);
                for i in 0..=p {
                    a[i * (q + 1) + j] = l[i];
                    b[i * (q + 1) + j] = r[i];
                }
            }
        } else {
            for i in 0..=p {
                let (_, l, r) = casteljau(&self.points[i * (q + 1)..(i + 1) * (q + 1)], t, true);
                a[i * (q + 1)..(i + 1) * (q + 1)].copy_from_slice(&l);
                b[i * (q + 1)..(i + 1) * (q + 1)].copy_from_slice(&r);
            }
        }
        (
            Self {
                degree: self.degree,
                points: a,
            },
            Self {
                degree: self.degree,
                points: b,
            },
        )
    }

    /// The same patch as a clamped NURBS surface over `[0,1]^2`.
    pub fn to_surface(&self) -> NurbsSurface {
        let pts: Vec<DVec3> = self.control_points();
        let w: Vec<f64> = self.points.iter().map(|h| h.w).collect();
        // Points were validated at construction, so this cannot fail.
        NurbsSurface::bezier(self.degree, pts, Some(w))
            .unwrap_or_else(|_| unreachable!("validated patch"))
    }
}
