//! Indexed triangle meshes.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;

use crate::GeometryError;

/// The next [`TriMesh::topology_id`]: one per mesh made by [`TriMesh::new`].
static NEXT_TOPOLOGY: AtomicU64 = AtomicU64::new(1);

/// An indexed triangle mesh: f32 positions and `[u32; 3]` faces.
///
/// Built through [`TriMesh::new`], which validates the input; degenerate (zero-area or
/// repeated-index) faces are *reported* by [`TriMesh::degenerate_faces`], not rejected: the exact
/// tests handle them.
///
/// Equality compares positions and faces (not [`TriMesh::topology_id`]).
#[derive(Clone, Debug)]
pub struct TriMesh {
    positions: Vec<Vec3>,
    faces: Vec<[u32; 3]>,
    /// See [`TriMesh::topology_id`].
    topology: u64,
}

impl PartialEq for TriMesh {
    fn eq(&self, other: &Self) -> bool {
        self.positions == other.positions && self.faces == other.faces
    }
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
        Ok(Self {
            positions,
            faces,
            topology: NEXT_TOPOLOGY.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Vertex positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Faces as vertex-index triples.
    pub fn faces(&self) -> &[[u32; 3]] {
        &self.faces
    }

    /// An id of the faces: two meshes with the same id have the same faces. Every
    /// [`TriMesh::new`] makes a new id; clones and position updates keep it (the faces never
    /// change), so caches of per-face data made for one mesh can check that they still fit.
    ///
    /// ```
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mut a = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let b = a.clone();
    /// a.set_positions(vec![Vec3::ZERO, Vec3::Y, Vec3::Z]).unwrap();
    /// assert_eq!(a.topology_id(), b.topology_id());
    /// let c = TriMesh::new(b.positions().to_vec(), b.faces().to_vec()).unwrap();
    /// assert_ne!(c.topology_id(), b.topology_id());
    /// ```
    pub fn topology_id(&self) -> u64 {
        self.topology
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
        // Per frame on a deforming mesh: first one pass without early exit over the coordinates
        // (it vectorises), the offending index only when it fails.
        let coords: &[f32] = bytemuck::cast_slice(positions);
        let finite = coords
            .chunks(1024)
            .all(|c| c.iter().fold(true, |ok, x| ok & x.is_finite()));
        if !finite {
            if let Some((index, p)) = positions.iter().enumerate().find(|(_, p)| !p.is_finite()) {
                return Err(GeometryError::NonFiniteVertex {
                    index,
                    value: p.to_array(),
                });
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorised check still names the first bad vertex, wherever it is.
    #[test]
    fn new_positions_must_be_finite() {
        let n = 3000;
        let positions: Vec<Vec3> = (0..n).map(|i| Vec3::splat(i as f32)).collect();
        let mut mesh = TriMesh::new(positions.clone(), vec![[0, 1, 2]]).unwrap();
        for (index, bad) in [
            (0, f32::NAN),
            (1500, f32::INFINITY),
            (n - 1, f32::NEG_INFINITY),
        ] {
            let mut moved = positions.clone();
            moved[index].y = bad;
            moved[n - 1].z = f32::NAN;
            assert!(matches!(
                mesh.copy_positions_from(&moved),
                Err(GeometryError::NonFiniteVertex { index: i, .. }) if i == index
            ));
            assert!(matches!(
                mesh.set_positions(moved),
                Err(GeometryError::NonFiniteVertex { index: i, .. }) if i == index
            ));
        }
        let moved: Vec<Vec3> = positions.iter().map(|p| *p * 2.0).collect();
        mesh.copy_positions_from(&moved).unwrap();
        assert_eq!(mesh.positions(), &moved[..]);
    }
}
