//! Indexed triangle meshes.

use glam::Vec3;

use crate::GeometryError;

/// An indexed triangle mesh: f32 positions and `[u32; 3]` faces.
///
/// Built through [`TriMesh::new`], which validates the input; degenerate (zero-area or
/// repeated-index) faces are *reported* by [`TriMesh::degenerate_faces`], not rejected: the exact
/// tests handle them.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    positions: Vec<Vec3>,
    faces: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Validates and builds a mesh: at least one vertex and one face, finite coordinates, every
    /// index in range.
    ///
    /// ```
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mesh = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// assert_eq!(mesh.face_count(), 1);
    /// ```
    pub fn new(positions: Vec<Vec3>, faces: Vec<[u32; 3]>) -> Result<Self, GeometryError> {
        if positions.is_empty() {
            return Err(GeometryError::EmptyMesh {
                what: "no vertices",
            });
        }
        if faces.is_empty() {
            return Err(GeometryError::EmptyMesh { what: "no faces" });
        }
        if let Some((index, p)) = positions.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(GeometryError::NonFiniteVertex {
                index,
                value: p.to_array(),
            });
        }
        let n = positions.len();
        for (face, f) in faces.iter().enumerate() {
            if let Some(&vertex) = f.iter().find(|&&v| v as usize >= n) {
                return Err(GeometryError::IndexOutOfRange {
                    face,
                    vertex,
                    vertex_count: n,
                });
            }
        }
        Ok(Self { positions, faces })
    }

    /// Vertex positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Faces as vertex-index triples.
    pub fn faces(&self) -> &[[u32; 3]] {
        &self.faces
    }

    /// Number of faces.
    pub fn face_count(&self) -> usize {
        self.faces.len()
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The three corners of face `i`.
    pub fn triangle(&self, i: usize) -> [Vec3; 3] {
        self.faces[i].map(|v| self.positions[v as usize])
    }

    /// Replaces the vertex positions (a deforming mesh's next frame), keeping the topology.
    /// Errors when the count differs or a coordinate is not finite.
    pub fn set_positions(&mut self, positions: Vec<Vec3>) -> Result<(), GeometryError> {
        self.check_positions(&positions)?;
        self.positions = positions;
        Ok(())
    }

    /// [`TriMesh::set_positions`] copying into the mesh's own storage (no allocation per frame).
    pub fn copy_positions_from(&mut self, positions: &[Vec3]) -> Result<(), GeometryError> {
        self.check_positions(positions)?;
        self.positions.copy_from_slice(positions);
        Ok(())
    }

    /// Same vertex count, every coordinate finite.
    fn check_positions(&self, positions: &[Vec3]) -> Result<(), GeometryError> {
        if positions.len() != self.positions.len() {
            return Err(GeometryError::VertexCountMismatch {
                expected: self.positions.len(),
                got: positions.len(),
            });
        }
        if let Some((index, p)) = positions.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(GeometryError::NonFiniteVertex {
                index,
                value: p.to_array(),
            });
        }
        Ok(())
    }

    /// Indices of degenerate faces: a repeated vertex index or collinear corners (exactly).
    pub fn degenerate_faces(&self) -> Vec<usize> {
        (0..self.faces.len())
            .filter(|&i| {
                let [a, b, c] = self.faces[i];
                if a == b || b == c || a == c {
                    return true;
                }
                let [p, q, r] = self.triangle(i).map(|v| v.as_dvec3());
                // Products of f32 differences are exact in f64, so a zero cross product is exact.
                (q - p).cross(r - p) == glam::DVec3::ZERO
            })
            .collect()
    }
}
