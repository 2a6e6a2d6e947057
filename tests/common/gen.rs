//! proptest generators shared by the test suites: triangles, small meshes and poses on which
//! degenerate contacts (touching, coplanar, vertex-on-face, shared edges) happen often.
//!
//! Coordinates are snapped to a small integer grid (exact in f32 and f64), and the "grid" poses
//! are axis-aligned rotations with integer translations, so world coordinates stay on the grid
//! and exact contacts survive the transform. Random-float variants cover the generic case.
//!
//! Include it with `#[path = "../../../tests/common/gen.rs"] mod gen;` (needs `proptest` and
//! `gprox-geometry`).
#![allow(dead_code)]

use gprox_geometry::glam::{Affine3A, DVec3, Mat3, Quat, Vec3};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

/// A point with integer coordinates in `[-n, n]`.
pub fn grid_point(n: i32) -> impl Strategy<Value = DVec3> {
    [-n..=n, -n..=n, -n..=n].prop_map(|[x, y, z]| DVec3::new(x as f64, y as f64, z as f64))
}

/// A triangle with corners on the integer grid `[-n, n]³` (often degenerate or touching).
pub fn grid_triangle(n: i32) -> impl Strategy<Value = [DVec3; 3]> {
    [grid_point(n), grid_point(n), grid_point(n)]
}

/// A triangle with f32 corners in `[-1, 1]³` (generic position).
pub fn float_triangle() -> impl Strategy<Value = [DVec3; 3]> {
    let p = [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0]
        .prop_map(|[x, y, z]| DVec3::new(x as f64, y as f64, z as f64));
    [p.clone(), p.clone(), p]
}

/// A point related to triangle `t`: one of its corners, a point on an edge, a point of its plane
/// (barycentric weights in quarters, inside or outside), or a free grid point.
pub fn feature_point(t: [DVec3; 3], n: i32) -> impl Strategy<Value = DVec3> {
    prop_oneof![
        (0usize..3).prop_map(move |i| t[i]),
        (0usize..3, 0i32..=4).prop_map(move |(i, k)| {
            let (a, b) = (t[i], t[(i + 1) % 3]);
            a + (b - a) * (k as f64 / 4.0)
        }),
        (-4i32..=8, -4i32..=8).prop_map(move |(i, j)| {
            t[0] + (t[1] - t[0]) * (i as f64 / 4.0) + (t[2] - t[0]) * (j as f64 / 4.0)
        }),
        grid_point(n),
    ]
}

/// Two triangles, the second built from feature points of the first (vertex on face, edge on
/// edge, shared corner, coplanar overlap...), both on the grid `[-n, n]³` (n ≤ 16 keeps every
/// derived point exact).
pub fn touching_pair(n: i32) -> impl Strategy<Value = ([DVec3; 3], [DVec3; 3])> {
    grid_triangle(n).prop_flat_map(move |p| {
        let q = [
            feature_point(p, n),
            feature_point(p, n),
            feature_point(p, n),
        ];
        (Just(p), q)
    })
}

/// Moves `x` by `steps` units in the last place (towards +∞ for positive steps). Zero moves to
/// `±f32::MIN_POSITIVE` instead of an f64 subnormal: the exact predicates (and any f32 input
/// under a pose) stay clear of underflow, which no f64 predicate survives.
pub fn ulp_step(x: f64, steps: i64) -> f64 {
    if x == 0.0 && steps != 0 {
        return (f32::MIN_POSITIVE as f64).copysign(steps as f64);
    }
    let mut v = x;
    for _ in 0..steps.unsigned_abs() {
        v = if steps > 0 { next_up(v) } else { -next_up(-v) };
    }
    v
}

fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::MIN_POSITIVE as f64;
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

/// A touching pair with one coordinate of one corner of `q` nudged by ±1 or ±2 ulp (tests that
/// the exact predicates see the difference).
pub fn nudged_pair(n: i32) -> impl Strategy<Value = ([DVec3; 3], [DVec3; 3])> {
    (
        touching_pair(n),
        0usize..3,
        0usize..3,
        prop_oneof![Just(-2i64), Just(-1), Just(1), Just(2)],
    )
        .prop_map(|((p, mut q), i, k, s)| {
            q[i][k] = ulp_step(q[i][k], s);
            (p, q)
        })
}

/// The 24 rotations that map coordinate axes to coordinate axes (exact in f32).
pub fn axis_rotations() -> Vec<Mat3> {
    let mut out = Vec::new();
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for p in perms {
        for signs in 0..8 {
            let col = |c: usize| {
                let mut v = Vec3::ZERO;
                v[p[c]] = if signs & (1 << c) != 0 { -1.0 } else { 1.0 };
                v
            };
            let m = Mat3::from_cols(col(0), col(1), col(2));
            if m.determinant() > 0.0 {
                out.push(m);
            }
        }
    }
    out
}

/// An axis-aligned rotation with an integer translation in `[-t, t]³`: world coordinates of grid
/// meshes stay on the grid, so contacts stay exact.
pub fn grid_pose(t: i32) -> impl Strategy<Value = Affine3A> {
    (0usize..24, [-t..=t, -t..=t, -t..=t]).prop_map(|(r, [x, y, z])| {
        Affine3A::from_mat3_translation(
            axis_rotations()[r],
            Vec3::new(x as f32, y as f32, z as f32),
        )
    })
}

/// An arbitrary rotation (random unit quaternion) with a translation in `[-t, t]³`.
pub fn random_pose(t: f32) -> impl Strategy<Value = Affine3A> {
    (
        [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0],
        [-t..t, -t..t, -t..t],
    )
        .prop_map(|([a, b, c, d], [x, y, z])| {
            let q = Quat::from_xyzw(a, b, c, d + 1e-3);
            Affine3A::from_rotation_translation(q.normalize(), Vec3::new(x, y, z))
        })
}

/// Either kind of pose (grid poses twice as often, they produce the degenerate contacts).
pub fn any_pose() -> impl Strategy<Value = Affine3A> {
    prop_oneof![2 => grid_pose(2), 1 => random_pose(2.0)]
}

/// A small mesh: `2..=max_vertices` vertices on the integer grid `[-n, n]³` and
/// `1..=max_faces` faces indexing them (shared vertices and edges, occasional degenerate faces).
pub fn grid_mesh(max_vertices: usize, max_faces: usize, n: i32) -> impl Strategy<Value = TriMesh> {
    let vertex =
        [-n..=n, -n..=n, -n..=n].prop_map(|[x, y, z]| Vec3::new(x as f32, y as f32, z as f32));
    prop::collection::vec(vertex, 3..=max_vertices.max(3)).prop_flat_map(move |positions| {
        let nv = positions.len() as u32;
        let face = [0..nv, 0..nv, 0..nv];
        prop::collection::vec(face, 1..=max_faces.max(1)).prop_map(move |faces| {
            TriMesh::new(positions.clone(), faces).expect("generated mesh is valid")
        })
    })
}

/// A small mesh with f32 vertices in `[-1, 1]³` (generic position).
pub fn float_mesh(max_vertices: usize, max_faces: usize) -> impl Strategy<Value = TriMesh> {
    let vertex = [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0].prop_map(Vec3::from_array);
    prop::collection::vec(vertex, 3..=max_vertices.max(3)).prop_flat_map(move |positions| {
        let nv = positions.len() as u32;
        let face = [0..nv, 0..nv, 0..nv];
        prop::collection::vec(face, 1..=max_faces.max(1)).prop_map(move |faces| {
            TriMesh::new(positions.clone(), faces).expect("generated mesh is valid")
        })
    })
}

/// Two meshes with poses for collision tests: mostly grid meshes under grid poses (many exact
/// contacts), sometimes generic float meshes under random poses.
pub fn mesh_pair_case() -> impl Strategy<Value = (TriMesh, Affine3A, TriMesh, Affine3A)> {
    prop_oneof![
        3 => (grid_mesh(8, 12, 2), grid_pose(1), grid_mesh(8, 12, 2), grid_pose(1)),
        1 => (grid_mesh(8, 12, 2), any_pose(), grid_mesh(8, 12, 2), any_pose()),
        1 => (float_mesh(10, 12), random_pose(0.5), float_mesh(10, 12), random_pose(0.5)),
    ]
}

/// [`Pose64`] of an f32 pose (shorthand).
pub fn pose64(a: &Affine3A) -> Pose64 {
    Pose64::from_affine(a)
}
