//! Scene objects made of trimmed NURBS faces (the geometry-image queries), rigid or with new
//! control points every frame.

use std::path::Path;

use glam::DVec3;

use super::SceneError;
use crate::freeform::trimmed::{load_trimmed_face, load_trimmed_model};
use crate::freeform::{FreeformModel, TrimmedFace};
use crate::TriMesh;

/// Tolerance of an object's display mesh, relative to its size.
pub const DISPLAY_TOLERANCE_REL: f64 = 1e-2;

/// The trimmed faces of one scene object (object coordinates, frame 0) and, for a deforming
/// object, the control points of every frame: all faces' nets in face order, each row-major
/// with i along u, as the face files list them.
#[derive(Clone, Debug)]
pub struct SceneSurfaces {
    faces: Vec<TrimmedFace>,
    /// `frames * control_count` points; empty for rigid objects.
    control: Vec<DVec3>,
}

/// The control points of `faces`, face after face.
fn rest_points(faces: &[TrimmedFace]) -> Vec<DVec3> {
    faces
        .iter()
        .flat_map(|f| {
            let s = f.surface();
            let [n, m] = s.count();
            (0..n).flat_map(move |i| (0..m).map(move |j| s.control_point(i, j)))
        })
        .collect()
}

impl SceneSurfaces {
    /// Rigid faces (the object's transform moves them).
    pub fn rigid(faces: Vec<TrimmedFace>) -> Self {
        Self {
            faces,
            control: Vec::new(),
        }
    }

    /// Deforming faces: `control` holds `frames` sets of [`Self::control_count`] points (frame
    /// 0 first). Errors (named `what`) on a wrong count or a non-finite point; frame 0 replaces
    /// the faces' own control points.
    pub fn deforming(
        what: &Path,
        faces: Vec<TrimmedFace>,
        frames: usize,
        control: Vec<DVec3>,
    ) -> Result<Self, SceneError> {
        let n: usize = faces
            .iter()
            .map(|f| f.surface().count().iter().product::<usize>())
            .sum();
        if control.len() != frames * n {
            return Err(SceneError::Invalid {
                path: what.to_path_buf(),
                message: format!(
                    "{} control points for {frames} frames x {n} per frame",
                    control.len()
                ),
            });
        }
        if let Some(k) = control.iter().position(|p| !p.is_finite()) {
            return Err(SceneError::NonFinite {
                path: what.to_path_buf(),
                frame: k / n.max(1),
                index: k % n.max(1),
            });
        }
        let mut s = Self { faces, control };
        s.faces = s.faces_at(0).map_err(|e| SceneError::Invalid {
            path: what.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(s)
    }

    /// The faces at frame 0.
    pub fn faces(&self) -> &[TrimmedFace] {
        &self.faces
    }

    /// Control points per frame (all faces).
    pub fn control_count(&self) -> usize {
        self.faces
            .iter()
            .map(|f| f.surface().count().iter().product::<usize>())
            .sum()
    }

    /// Whether the faces get new control points every frame.
    pub fn is_deforming(&self) -> bool {
        !self.control.is_empty()
    }

    /// The control points of `frame` (all faces; the rest points of a rigid object).
    pub fn control_points(&self, frame: usize) -> Vec<DVec3> {
        if self.control.is_empty() {
            return rest_points(&self.faces);
        }
        let n = self.control_count();
        self.control[frame * n..(frame + 1) * n].to_vec()
    }

    /// The faces at `frame` (object coordinates): the rest faces for a rigid object, their
    /// surfaces with that frame's control points for a deforming one (loops kept).
    ///
    /// # Panics
    /// If a deforming object's `frame` is out of range.
    pub fn faces_at(&self, frame: usize) -> Result<Vec<TrimmedFace>, crate::freeform::TrimError> {
        if self.control.is_empty() {
            return Ok(self.faces.clone());
        }
        let n = self.control_count();
        let pts = &self.control[frame * n..(frame + 1) * n];
        let mut at = 0;
        self.faces
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let c = f.surface().count()[0] * f.surface().count()[1];
                let s = f
                    .surface()
                    .with_control_points(&pts[at..at + c])
                    .map_err(|source| crate::freeform::TrimError::Spline {
                        what: format!("face {k} surface"),
                        source,
                    })?;
                at += c;
                f.with_surface(s)
            })
            .collect()
    }

    /// A display mesh of the untrimmed surfaces at frame 0 (within
    /// [`DISPLAY_TOLERANCE_REL`] of the object's size).
    pub fn display_mesh(&self, what: &Path) -> Result<TriMesh, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            path: what.to_path_buf(),
            message,
        };
        let model = FreeformModel::new(self.faces.iter().map(|f| f.surface().clone()).collect())
            .map_err(|e| invalid(e.to_string()))?;
        model
            .tessellate(DISPLAY_TOLERANCE_REL * model.unit())
            .map_err(|e| invalid(format!("display mesh: {e}")))
    }
}

/// Reads the faces of `path`: one trimmed face file (the schema of `shared/data/trimmed`) or a
/// `model.json` listing face files (a document with a `faces` list).
pub(super) fn load_faces(path: &Path) -> Result<Vec<TrimmedFace>, SceneError> {
    let trim = |source| SceneError::Trim {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| SceneError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    if doc.get("faces").is_some_and(serde_json::Value::is_array) {
        Ok(load_trimmed_model(path).map_err(trim)?.faces)
    } else {
        Ok(vec![load_trimmed_face(path).map_err(trim)?])
    }
}

/// Checks that frame 0 of a control-point file equals the faces' own points (to the f32
/// rounding of the file).
pub(super) fn check_frame0(
    path: &Path,
    faces: &[TrimmedFace],
    first: &[DVec3],
) -> Result<(), SceneError> {
    for (k, (p, q)) in rest_points(faces).iter().zip(first).enumerate() {
        let tol = 1e-6 * p.abs().max_element().max(1.0);
        if (*p - *q).abs().max_element() > tol {
            return Err(SceneError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "frame 0 control point {k} is {q}, the face files give {p} \
                     (order: faces in turn, each row-major with i along u)"
                ),
            });
        }
    }
    Ok(())
}
