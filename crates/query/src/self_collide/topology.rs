//! Face adjacency and feature ownership of a triangle mesh (computed once per topology).
//!
//! * `adjacent[f][k]`: the face across edge `k = (f[k], f[k+1 mod 3])`, [`NO_FACE`] on a
//!   boundary edge, [`BAD_EDGE`] when the edge has more than two faces or its two faces run
//!   through it in the same direction (inconsistent orientation).
//! * Feature ownership, used to run each vertex–face and edge–edge CCD test once: a vertex or an
//!   edge is owned by the lowest-index face that contains it.

/// No face across this edge (boundary).
pub const NO_FACE: u32 = u32::MAX;
/// Non-manifold or inconsistently oriented edge.
pub const BAD_EDGE: u32 = u32::MAX - 1;

/// Adjacency and feature ownership of one mesh topology.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// Face across each edge of each face (or [`NO_FACE`] / [`BAD_EDGE`]).
    pub adjacent: Vec<[u32; 3]>,
    /// Bit `k` set: this face owns its vertex `k`.
    pub owned_vertices: Vec<u8>,
    /// Bit `k` set: this face owns its edge `k`.
    pub owned_edges: Vec<u8>,
    /// Whether a vertex lies on a [`BAD_EDGE`] (indexed by vertex).
    pub bad_vertex: Vec<bool>,
    /// Faces around vertex `v`: `vertex_faces[vertex_offsets[v]..vertex_offsets[v + 1]]`,
    /// ascending.
    pub vertex_offsets: Vec<u32>,
    /// Concatenated per-vertex face lists (see `vertex_offsets`).
    pub vertex_faces: Vec<u32>,
}

impl Topology {
    /// Computes the topology of `faces` over `vertex_count` vertices (indices must be in range,
    /// as [`gprox_geometry::TriMesh`] guarantees).
    ///
    /// ```
    /// use gprox_query::self_collide::Topology;
    /// let t = Topology::new(&[[0, 1, 2], [2, 1, 3]], 4);
    /// assert_eq!(t.adjacent[0][1], 1); // edge (1, 2) is shared with face 1
    /// ```
    pub fn new(faces: &[[u32; 3]], vertex_count: usize) -> Self {
        let mut half: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(faces.len() * 3);
        for (f, tri) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                half.push((a.min(b), a.max(b), f as u32, k as u8));
            }
        }
        half.sort_unstable();
        let mut adjacent = vec![[NO_FACE; 3]; faces.len()];
        let mut owned_edges = vec![0u8; faces.len()];
        let mut bad_vertex = vec![false; vertex_count];
        let mut i = 0;
        while i < half.len() {
            let mut j = i + 1;
            while j < half.len() && half[j].0 == half[i].0 && half[j].1 == half[i].1 {
                j += 1;
            }
            let group = &half[i..j];
            // Lowest face first (sorted): it owns the edge.
            owned_edges[group[0].2 as usize] |= 1 << group[0].3;
            let consistent = group.len() == 2 && {
                let (f0, k0) = (group[0].2 as usize, group[0].3 as usize);
                let (f1, k1) = (group[1].2 as usize, group[1].3 as usize);
                f0 != f1 && faces[f0][k0] == faces[f1][(k1 + 1) % 3] && group[0].0 != group[0].1
            };
            if group.len() == 2 && consistent {
                adjacent[group[0].2 as usize][group[0].3 as usize] = group[1].2;
                adjacent[group[1].2 as usize][group[1].3 as usize] = group[0].2;
            } else if group.len() >= 2 || group[0].0 == group[0].1 {
                for h in group {
                    adjacent[h.2 as usize][h.3 as usize] = BAD_EDGE;
                }
                bad_vertex[group[0].0 as usize] = true;
                bad_vertex[group[0].1 as usize] = true;
            }
            i = j;
        }
        let mut owner = vec![u32::MAX; vertex_count];
        for (f, tri) in faces.iter().enumerate() {
            for &v in tri {
                let o = &mut owner[v as usize];
                *o = (*o).min(f as u32);
            }
        }
        let owned_vertices = faces
            .iter()
            .enumerate()
            .map(|(f, tri)| {
                let mut bits = 0u8;
                for k in 0..3 {
                    // A repeated index is owned through its first slot only.
                    let first_slot = (0..k).all(|j| tri[j] != tri[k]);
                    if owner[tri[k] as usize] == f as u32 && first_slot {
                        bits |= 1 << k;
                    }
                }
                bits
            })
            .collect();
        let mut vertex_offsets = vec![0u32; vertex_count + 1];
        for tri in faces {
            for (k, &v) in tri.iter().enumerate() {
                if !tri[..k].contains(&v) {
                    vertex_offsets[v as usize + 1] += 1;
                }
            }
        }
        for v in 0..vertex_count {
            vertex_offsets[v + 1] += vertex_offsets[v];
        }
        let mut fill = vertex_offsets.clone();
        let mut vertex_faces = vec![0u32; vertex_offsets[vertex_count] as usize];
        for (f, tri) in faces.iter().enumerate() {
            for (k, &v) in tri.iter().enumerate() {
                if !tri[..k].contains(&v) {
                    vertex_faces[fill[v as usize] as usize] = f as u32;
                    fill[v as usize] += 1;
                }
            }
        }
        Self {
            adjacent,
            owned_vertices,
            owned_edges,
            bad_vertex,
            vertex_offsets,
            vertex_faces,
        }
    }

    /// Faces around vertex `v`, ascending.
    #[inline]
    pub fn faces_of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.vertex_faces[self.vertex_offsets[v] as usize..self.vertex_offsets[v + 1] as usize]
    }

    /// Number of faces described.
    pub fn face_count(&self) -> usize {
        self.adjacent.len()
    }
}

/// Whether two faces share a vertex (adjacent faces are excluded from self-collision).
#[inline]
pub fn share_vertex(a: &[u32; 3], b: &[u32; 3]) -> bool {
    a.iter().any(|v| b.contains(v))
}
