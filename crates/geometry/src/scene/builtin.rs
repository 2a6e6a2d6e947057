//! The built-in scenes: interlocking procedural tori, generated in memory.

use glam::{Mat3, Vec3};

use super::{Motion, QueryKind, QueryTargets, Scene, SceneObject, SceneQuery};
use crate::TriMesh;

/// The closed box `[lo, hi]` as 12 triangles wound outwards (vertex `i` has x from bit 0, y from
/// bit 1, z from bit 2: `hi` where the bit is set). Errors on a non-finite corner.
///
/// ```
/// use gprox_geometry::{glam::Vec3, scene::box_mesh};
/// let b = box_mesh(Vec3::ZERO, Vec3::ONE).unwrap();
/// assert_eq!((b.vertex_count(), b.face_count()), (8, 12));
/// ```
pub fn box_mesh(lo: Vec3, hi: Vec3) -> Result<TriMesh, crate::GeometryError> {
    let corner = |i: u32| {
        Vec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    // Quads counter-clockwise seen from outside, split along a diagonal.
    let quads = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let faces = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    TriMesh::new((0..8).map(corner).collect(), faces)
}

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

/// Frames of [`deforming_tori`].
const DEFORMING_FRAMES: usize = 16;

/// Two tori of 5,000 triangles (50 x 50 quads), A in the xy plane at the origin, B stood up
/// in the xz plane sliding along +x through A's hole (as in [`two_tori`], without the wobble);
/// both breathe: vertex `p` of frame `f` is `p · (1 + 0.03 sin(4 p.x + phase + 6 s))` with
/// `s = f / 15` and phase 0 for A, 1 for B (frame 0: the undeformed mesh, as the format asks).
pub(super) fn deforming_tori() -> Scene {
    let Some(mesh) = torus(1.0, 0.3, 50, 50) else {
        unreachable!("valid torus parameters")
    };
    let mut transforms = Vec::with_capacity(DEFORMING_FRAMES * 2);
    let mut verts = [Vec::new(), Vec::new()];
    for f in 0..DEFORMING_FRAMES {
        let s = f as f32 / (DEFORMING_FRAMES - 1) as f32;
        transforms.push(rows(Mat3::IDENTITY, Vec3::ZERO));
        transforms.push(rows(
            Mat3::from_rotation_x(std::f32::consts::FRAC_PI_2),
            Vec3::new(0.35 + 1.3 * s, 0.05, 0.0),
        ));
        for (phase, out) in verts.iter_mut().enumerate() {
            out.extend(mesh.positions().iter().map(|p| {
                if f == 0 {
                    *p
                } else {
                    *p * (1.0 + 0.03 * (4.0 * p.x + phase as f32 + 6.0 * s).sin())
                }
            }));
        }
    }
    let objects = ["torusA", "torusB"]
        .iter()
        .map(|n| SceneObject {
            name: (*n).into(),
            mesh: 0,
            motion: Motion::Deforming,
        })
        .collect();
    let queries = vec![SceneQuery {
        kind: QueryKind::PenetrationField,
        targets: QueryTargets::Pairs(vec![[0, 1]]),
    }];
    let [va, vb] = verts;
    let scene = Scene::from_parts(
        "builtin-deforming-tori",
        "Built-in: two deforming tori (5,000 tris each, breathing ±3 %), B slides through A over 16 frames",
        DEFORMING_FRAMES,
        vec![mesh],
        objects,
        transforms,
        vec![va, vb],
        queries,
    );
    match scene {
        Ok(s) => s,
        Err(e) => unreachable!("built-in scene is consistent: {e}"),
    }
}
