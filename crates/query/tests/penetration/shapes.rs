//! Closed test meshes: boxes, octahedra, icosahedra, tori, L-shaped prisms, grid-exact shapes
//! and poses.

use glam::{Affine3A, Quat, Vec3};
use gprox_geometry::scene::{box_mesh, torus};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;

pub fn cube(lo: Vec3, hi: Vec3) -> TriMesh {
    box_mesh(lo, hi).unwrap()
}

/// Faces of a convex polyhedron around the origin turned outwards.
pub fn outward(positions: Vec<Vec3>, faces: Vec<[u32; 3]>) -> TriMesh {
    let faces = faces
        .into_iter()
        .map(|[a, b, c]| {
            let [p, q, r] = [a, b, c].map(|i| positions[i as usize]);
            if (q - p).cross(r - p).dot(p + q + r) < 0.0 {
                [a, c, b]
            } else {
                [a, b, c]
            }
        })
        .collect();
    TriMesh::new(positions, faces).unwrap()
}

pub fn octahedron(r: f32) -> TriMesh {
    let p = vec![
        Vec3::X * r,
        -Vec3::X * r,
        Vec3::Y * r,
        -Vec3::Y * r,
        Vec3::Z * r,
        -Vec3::Z * r,
    ];
    let mut f = Vec::new();
    for x in [0, 1] {
        for y in [2, 3] {
            for z in [4, 5] {
                f.push([x, y, z]);
            }
        }
    }
    outward(p, f)
}

pub fn icosahedron(r: f32) -> TriMesh {
    let g = (1.0 + 5f32.sqrt()) / 2.0;
    let mut p = Vec::new();
    for s in [-1.0, 1.0] {
        for t in [-1.0, 1.0] {
            p.push(Vec3::new(0.0, s, t * g));
            p.push(Vec3::new(s, t * g, 0.0));
            p.push(Vec3::new(t * g, 0.0, s));
        }
    }
    let p: Vec<Vec3> = p.into_iter().map(|v| v.normalize() * r).collect();
    // Faces: triples of mutually adjacent vertices (edge length 2 before normalising).
    let edge = p[0].distance(p[1]).min(p[0].distance(p[2]));
    let adj = |i: usize, j: usize| (p[i].distance(p[j]) - edge).abs() < 1e-3 * r;
    let mut f = Vec::new();
    for i in 0..12 {
        for j in i + 1..12 {
            for k in j + 1..12 {
                if adj(i, j) && adj(j, k) && adj(i, k) {
                    f.push([i as u32, j as u32, k as u32]);
                }
            }
        }
    }
    outward(p, f)
}

pub fn perturbed(m: &TriMesh, noise: &[[f32; 3]]) -> TriMesh {
    let pos = m
        .positions()
        .iter()
        .zip(noise.iter().cycle())
        .map(|(p, n)| *p + Vec3::from_array(*n))
        .collect();
    TriMesh::new(pos, m.faces().to_vec()).unwrap()
}

pub fn flipped(m: &TriMesh) -> TriMesh {
    let faces = m.faces().iter().map(|&[a, b, c]| [a, c, b]).collect();
    TriMesh::new(m.positions().to_vec(), faces).unwrap()
}

/// Shape `kind` (box, octahedron, icosahedron, torus) of size about `s`.
pub fn shape(kind: u8, s: f32) -> TriMesh {
    match kind % 4 {
        0 => cube(Vec3::splat(-s), Vec3::new(s, 0.8 * s, 1.1 * s)),
        1 => octahedron(1.3 * s),
        2 => icosahedron(1.2 * s),
        _ => torus(s, 0.4 * s, 6, 4).unwrap(),
    }
}

pub fn pose(axis: [f32; 3], angle: f32, t: [f32; 3]) -> Pose64 {
    let axis = Vec3::from_array(axis);
    let axis = if axis.length() < 1e-3 {
        Vec3::Z
    } else {
        axis.normalize()
    };
    Pose64::from_affine(&Affine3A::from_rotation_translation(
        Quat::from_axis_angle(axis, angle),
        Vec3::from_array(t),
    ))
}

/// An exact pose: a signed axis permutation and a translation on the 1/4 grid.
pub fn grid_pose(perm: u8, signs: u8, t: [i8; 3]) -> Pose64 {
    let p = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ][perm as usize % 6];
    let mut rows = [[0.0; 4]; 3];
    for (i, row) in rows.iter_mut().enumerate() {
        row[p[i]] = if signs >> i & 1 == 0 { 1.0 } else { -1.0 };
        row[3] = f64::from(t[i]) * 0.25;
    }
    Pose64 { rows }
}

/// An L-shaped prism over `[0, 2]² \ [0, 1)²` times `[0, 1]`, scaled by `s` and moved by `at`:
/// a concave (reflex) edge along z at x = y = s.
pub fn l_prism(s: f32, at: Vec3) -> TriMesh {
    // The L, counter-clockwise; the fan from the reflex corner (index 5) covers it.
    let poly = [
        (1.0, 0.0),
        (2.0, 0.0),
        (2.0, 2.0),
        (0.0, 2.0),
        (0.0, 1.0),
        (1.0, 1.0),
    ];
    let mut pos = Vec::new();
    for z in [0.0, 1.0] {
        for (x, y) in poly {
            pos.push(Vec3::new(x, y, z) * s + at);
        }
    }
    let mut faces = Vec::new();
    for i in 0..4u32 {
        faces.push([5, i + 1, i]); // bottom, seen from below
        faces.push([11, 6 + i, 7 + i]); // top
    }
    for i in 0..6u32 {
        let j = (i + 1) % 6;
        faces.push([i, j, 6 + j]);
        faces.push([i, 6 + j, 6 + i]);
    }
    TriMesh::new(pos, faces).unwrap()
}

/// A closed shape with every coordinate on the 1/4 grid.
pub fn grid_shape(kind: u8, lo: [i8; 3], size: [u8; 3]) -> TriMesh {
    let lo = Vec3::from_array(lo.map(|x| f32::from(x) * 0.25));
    let hi = lo + Vec3::from_array(size.map(|x| f32::from(x.max(1)) * 0.25));
    if kind.is_multiple_of(3) {
        cube(lo, hi)
    } else if kind % 3 == 2 {
        l_prism(f32::from(size[0].max(1)) * 0.25, lo)
    } else {
        let c = (lo + hi) * 0.5;
        let r = (hi - lo).max_element().max(0.5).round();
        let o = octahedron(r);
        let pos = o.positions().iter().map(|&p| p + c.floor()).collect();
        TriMesh::new(pos, o.faces().to_vec()).unwrap()
    }
}
