//! Helpers of the image-space tests: icospheres, posed objects, world triangles and the
//! brute-force nearest face.

use glam::{DVec3, Vec3};
use gprox_bvh::Bvh;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::point_triangle_distance;
use gprox_geometry::TriMesh;
use gprox_query::collide::CollisionObject;

/// A sphere of radius `r` around `c`: the icosahedron subdivided `levels` times, vertices
/// pushed onto the sphere.
pub fn icosphere(r: f32, c: Vec3, levels: u32) -> TriMesh {
    let ico = super::shapes::icosahedron(1.0);
    let mut pos: Vec<Vec3> = ico.positions().to_vec();
    let mut faces: Vec<[u32; 3]> = ico.faces().to_vec();
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut next = Vec::with_capacity(faces.len() * 4);
        let mut m = |a: u32, b: u32, pos: &mut Vec<Vec3>| -> u32 {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                pos.push(((pos[a as usize] + pos[b as usize]) * 0.5).normalize());
                pos.len() as u32 - 1
            })
        };
        for [a, b, c] in faces {
            let (ab, bc, ca) = (m(a, b, &mut pos), m(b, c, &mut pos), m(c, a, &mut pos));
            next.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
        }
        faces = next;
    }
    let pos = pos.into_iter().map(|p| p.normalize() * r + c).collect();
    TriMesh::new(pos, faces).unwrap()
}

/// A mesh with its LBVH.
pub struct Posed {
    pub mesh: TriMesh,
    pub bvh: Bvh,
    pub pose: Pose64,
}

impl Posed {
    pub fn new(mesh: TriMesh, pose: Pose64) -> Self {
        let bvh = gprox_bvh::lbvh::build(&mesh);
        Self { mesh, bvh, pose }
    }

    pub fn object(&self) -> CollisionObject<'_> {
        CollisionObject::new(&self.mesh, &self.bvh, self.pose).unwrap()
    }

    /// World corners of every face.
    pub fn triangles(&self) -> Vec<[DVec3; 3]> {
        (0..self.mesh.face_count())
            .map(|i| transform_triangle(&self.pose, self.mesh.triangle(i)))
            .collect()
    }
}

/// The nearest face by brute force: (distance, point, face), smallest face id on ties.
pub fn brute_nearest(p: DVec3, tris: &[[DVec3; 3]]) -> (f64, DVec3, u32) {
    let mut best = (f64::INFINITY, DVec3::ZERO, u32::MAX);
    for (f, t) in tris.iter().enumerate() {
        let (d, q) = point_triangle_distance(p, t);
        if d < best.0 {
            best = (d, q, f as u32);
        }
    }
    best
}

/// Volume of the lens where two balls of radius `r` with centres `c` apart overlap.
pub fn lens(r: f64, c: f64) -> f64 {
    if c >= 2.0 * r {
        return 0.0;
    }
    std::f64::consts::PI * (4.0 * r + c) * (2.0 * r - c).powi(2) / 12.0
}

/// Smallest distance from `c` to a face plane and largest distance to a vertex of a convex
/// mesh around `c`: the polyhedron lies between the two balls.
pub fn radii(tris: &[[DVec3; 3]], c: DVec3) -> (f64, f64) {
    let mut inner = f64::INFINITY;
    let mut outer = 0.0f64;
    for t in tris {
        let n = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
        inner = inner.min((c - t[0]).dot(n).abs());
        for q in t {
            outer = outer.max(q.distance(c));
        }
    }
    (inner, outer)
}

/// The translation by `t`.
pub fn translate(t: [f64; 3]) -> Pose64 {
    let mut p = Pose64::IDENTITY;
    for (i, x) in t.iter().enumerate() {
        p.rows[i][3] = *x;
    }
    p
}
