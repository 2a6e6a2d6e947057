//! The built-in scene: two interlocking procedural tori, generated in memory.

use glam::{Mat3, Vec3};

use super::{Motion, QueryKind, QueryTargets, Scene, SceneObject, SceneQuery};
use crate::TriMesh;

/// A closed torus around the z axis: major radius `major`, tube radius `minor`, `segments`
/// quads around the axis and `sides` around the tube (`2 * segments * sides` triangles),
/// wound counter-clockwise seen from outside.
///
/// Returns `None` when `segments < 3`, `sides < 3`, the radii are not finite or
/// `0 < minor < major` does not hold.
///
/// ```
/// let t = gprox_geometry::scene::torus(1.0, 0.3, 48, 32).unwrap();
/// assert_eq!(t.face_count(), 2 * 48 * 32);
/// ```
pub fn torus(major: f32, minor: f32, segments: u32, sides: u32) -> Option<TriMesh> {
    let radii_ok = major.is_finite() && minor.is_finite() && 0.0 < minor && minor < major;
    if segments < 3 || sides < 3 || !radii_ok {
        return None;
    }
    let tau = std::f32::consts::TAU;
    let mut positions = Vec::with_capacity((segments * sides) as usize);
    for i in 0..segments {
        let u = tau * i as f32 / segments as f32;
        for j in 0..sides {
            let v = tau * j as f32 / sides as f32;
            let ring = major + minor * v.cos();
            positions.push(Vec3::new(ring * u.cos(), ring * u.sin(), minor * v.sin()));
        }
    }
    let index = |i: u32, j: u32| (i % segments) * sides + (j % sides);
    let mut faces = Vec::with_capacity((2 * segments * sides) as usize);
    for i in 0..segments {
        for j in 0..sides {
            // d/du x d/dv points outwards, so (i,j) -> (i+1,j) -> (i+1,j+1) is CCW outside.
            let (a, b, c, d) = (
                index(i, j),
                index(i + 1, j),
                index(i + 1, j + 1),
                index(i, j + 1),
            );
            faces.push([a, b, c]);
            faces.push([a, c, d]);
        }
    }
    TriMesh::new(positions, faces).ok()
}

/// Frames of the built-in scene.
const FRAMES: usize = 8;

/// Row-major `[R | t]` of a rotation and a translation.
fn rows(r: Mat3, t: Vec3) -> [f32; 12] {
    let (x, y, z) = (r.row(0), r.row(1), r.row(2));
    [x.x, x.y, x.z, t.x, y.x, y.y, y.z, t.y, z.x, z.y, z.z, t.z]
}

/// Torus A lies in the xy plane at the origin; torus B (the same mesh, stood up in the xz plane)
/// slides along +x through A's hole with a slight wobble, so its tube cuts A's tube near both
/// ends of the sweep and passes freely in between.
pub(super) fn two_tori() -> Scene {
    // 48 x 32 quads: 3,072 triangles per torus. The parameters are valid by construction.
    let Some(mesh) = torus(1.0, 0.3, 48, 32) else {
        unreachable!("valid torus parameters")
    };
    let mut transforms = Vec::with_capacity(FRAMES * 2);
    for f in 0..FRAMES {
        let s = f as f32 / (FRAMES - 1) as f32;
        transforms.push(rows(Mat3::IDENTITY, Vec3::ZERO));
        let stand_up = Mat3::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let wobble = Mat3::from_rotation_z(0.25 * (s - 0.5)) * Mat3::from_rotation_y(0.6 * s);
        transforms.push(rows(
            wobble * stand_up,
            Vec3::new(0.35 + 1.3 * s, 0.05, 0.0),
        ));
    }
    let objects = vec![
        SceneObject {
            name: "torusA".into(),
            mesh: 0,
            motion: Motion::Rigid,
        },
        SceneObject {
            name: "torusB".into(),
            mesh: 0,
            motion: Motion::Rigid,
        },
    ];
    let pair = QueryTargets::Pairs(vec![[0, 1]]);
    let queries = vec![
        SceneQuery {
            kind: QueryKind::CollideAll,
            targets: pair.clone(),
        },
        SceneQuery {
            kind: QueryKind::CollideAny,
            targets: pair,
        },
    ];
    let scene = Scene::from_parts(
        "builtin-two-tori",
        "Built-in: torus B (3,072 tris) slides through torus A (same mesh) over 8 frames",
        FRAMES,
        vec![mesh],
        objects,
        transforms,
        vec![Vec::new(), Vec::new()],
        queries,
    );
    match scene {
        Ok(s) => s,
        Err(e) => unreachable!("built-in scene is consistent: {e}"),
    }
}
