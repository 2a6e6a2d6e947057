//! Shared generators of the kernel tests: small random meshes on a coarse grid (so duplicate
//! codes, shared vertices, touching and coplanar triangles happen often) and rigid poses.
#![allow(dead_code)]

use gprox_geometry::glam::{Affine3A, Quat, Vec3};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

/// A coordinate on a grid of quarter units in [-2, 2].
pub fn grid_coord() -> impl Strategy<Value = f32> {
    (-8i32..=8).prop_map(|i| i as f32 * 0.25)
}

/// A coordinate that is either on the grid, negative zero, or an arbitrary float in [-2, 2].
pub fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![6 => grid_coord(), 1 => Just(-0.0f32), 2 => -2.0f32..2.0]
}

/// A mesh with `1..=max_faces` faces over up to `max_faces + 2` vertices.
pub fn mesh(max_faces: usize) -> impl Strategy<Value = TriMesh> {
    (3usize..=max_faces + 2)
        .prop_flat_map(move |nv| {
            (
                prop::collection::vec((coord(), coord(), coord()), nv),
                prop::collection::vec((0..nv as u32, 0..nv as u32, 0..nv as u32), 1..=max_faces),
            )
        })
        .prop_map(|(v, f)| {
            TriMesh::new(
                v.into_iter().map(|(x, y, z)| Vec3::new(x, y, z)).collect(),
                f.into_iter().map(|(a, b, c)| [a, b, c]).collect(),
            )
            .expect("generated mesh is valid")
        })
}

/// A rigid pose: often the identity or a grid translation (exact touching cases survive),
/// otherwise a random rotation and translation.
pub fn pose() -> impl Strategy<Value = Pose64> {
    prop_oneof![
        1 => Just(Pose64::IDENTITY),
        1 => (grid_coord(), grid_coord(), grid_coord())
            .prop_map(|(x, y, z)| Pose64::from_affine(&Affine3A::from_translation(Vec3::new(x, y, z)))),
        2 => (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -3.2f32..3.2, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
            .prop_map(|(ax, ay, az, angle, x, y, z)| {
                let axis = Vec3::new(ax, ay, az).try_normalize().unwrap_or(Vec3::Z);
                Pose64::from_affine(&Affine3A::from_rotation_translation(
                    Quat::from_axis_angle(axis, angle),
                    Vec3::new(x, y, z),
                ))
            }),
    ]
}

/// Every intersecting face pair of two posed meshes, by testing all of them exactly.
pub fn brute_force_pairs(a: &TriMesh, pa: &Pose64, b: &TriMesh, pb: &Pose64) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    for i in 0..a.face_count() {
        let ta = transform_triangle(pa, a.triangle(i));
        for j in 0..b.face_count() {
            if triangles_intersect(&ta, &transform_triangle(pb, b.triangle(j))) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

/// A grid of `n * n` squares (two triangles each) spanning [0, 1]^2 in xy at height
/// `z(x, y)`, transformed by `m`, with vertex indices starting at `base`.
pub fn sheet_parts(
    n: u32,
    m: Affine3A,
    base: u32,
    z: impl Fn(f32, f32) -> f32,
) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut pos = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (i as f32 / n as f32, j as f32 / n as f32);
            pos.push(m.transform_point3(Vec3::new(x, y, z(x, y))));
        }
    }
    let at = |i: u32, j: u32| base + j * (n + 1) + i;
    let mut faces = Vec::new();
    for j in 0..n {
        for i in 0..n {
            faces.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            faces.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    (pos, faces)
}

/// A flat `n * n` sheet in the plane z = 0 spanning [0, 1]^2.
pub fn sheet(n: u32) -> TriMesh {
    let (p, f) = sheet_parts(n, Affine3A::IDENTITY, 0, |_, _| 0.0);
    TriMesh::new(p, f).expect("sheet is valid")
}
