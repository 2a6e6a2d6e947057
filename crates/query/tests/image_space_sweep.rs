//! The depth stage of an image-space sweep (`IntersectionSweep::classify`,
//! `SweepSamples::finish`) against a brute-force oracle: the nearest face of every sample over
//! all triangles (smallest id among equal distances), computed here from the posed vertices.
//! Finished with the oracle's surface points the sweep equals `intersect` bit for bit (so the
//! CPU's own depths are the brute-force minimum); undecided points are recomputed on the host
//! without changing the result; a wrong number of points is a typed error.

use glam::{DVec3, Quat, Vec3};
use gprox_bvh::lbvh;
use gprox_geometry::scene::torus;
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::tri_distance::point_triangle_distance;
use gprox_geometry::TriMesh;
use gprox_query::collide::CollisionObject;
use gprox_query::image_space::{
    intersect, ImageSpaceError, ImageSpaceOptions, IntersectionSweep, Lattice, SurfacePoint,
    UNDECIDED_FACE,
};

/// The nearest face of `mesh` under `pose` to every cell's sample, by brute force.
fn brute_force(
    mesh: &TriMesh,
    pose: &Pose64,
    lattice: &Lattice,
    cells: &[[u32; 3]],
) -> Vec<SurfacePoint> {
    let world: Vec<DVec3> = mesh
        .positions()
        .iter()
        .map(|&p| transform_point(pose, p))
        .collect();
    cells
        .iter()
        .map(|&c| {
            let p = lattice.center(c);
            let mut best = SurfacePoint {
                distance: f64::INFINITY,
                point: DVec3::ZERO,
                face: u32::MAX,
            };
            for (f, t) in mesh.faces().iter().enumerate() {
                let (d, q) = point_triangle_distance(p, &t.map(|v| world[v as usize]));
                if d < best.distance {
                    best = SurfacePoint {
                        distance: d,
                        point: q,
                        face: f as u32,
                    };
                }
            }
            best
        })
        .collect()
}

#[test]
fn depths_from_outside_equal_intersect_and_undecided_ones_are_recomputed() {
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let bvh = lbvh::build(&t);
    let pb = Pose64::from_affine(&glam::Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 0.05, 0.1),
    ));
    let (oa, ob) = (
        CollisionObject::new(&t, &bvh, Pose64::IDENTITY).unwrap(),
        CollisionObject::new(&t, &bvh, pb).unwrap(),
    );
    let opts = ImageSpaceOptions {
        tile: 6,
        ..ImageSpaceOptions::new(0.04)
    };
    let reference = intersect(&oa, &ob, &opts).unwrap();
    // The sweep classified with its own (CPU) codes.
    let classified = || {
        let sweep = IntersectionSweep::new(&oa, &ob, &opts).unwrap();
        let codes: Vec<u8> = (0..sweep.tiles().len())
            .flat_map(|t| sweep.classify_tile(t))
            .collect();
        sweep.classify(&codes).unwrap()
    };
    let samples = classified();
    let cells = samples.cells();
    assert_eq!(cells.len() as u64, reference.count());
    assert!(cells.len() > 100, "{}", cells.len());
    let lattice = *samples.lattice();
    let mut near = [
        brute_force(&t, &Pose64::IDENTITY, &lattice, &cells),
        brute_force(&t, &pb, &lattice, &cells),
    ];
    // A wrong number of points: a typed error.
    assert_eq!(
        samples.finish(Some([&near[0], &near[1][1..]])).map(|_| ()),
        Err(ImageSpaceError::BadDepths {
            expected: cells.len() as u64,
            got: cells.len() as u64 - 1
        })
    );
    let done = classified().finish(Some([&near[0], &near[1]])).unwrap();
    assert_eq!(done.host_depths, 0);
    assert_eq!(done.intersection, reference);
    // Every fifth point of each mesh undecided (garbage behind the mark): recomputed here.
    let mut marked = 0;
    for side in &mut near {
        for q in side.iter_mut().step_by(5) {
            *q = SurfacePoint {
                distance: -1.0,
                point: DVec3::NAN,
                face: UNDECIDED_FACE,
            };
            marked += 1;
        }
    }
    let done = classified().finish(Some([&near[0], &near[1]])).unwrap();
    assert_eq!(done.host_depths, marked);
    assert_eq!(done.intersection, reference);
    // Without points the CPU computes all of them.
    let done = classified().finish(None).unwrap();
    assert_eq!(done.host_depths, 2 * cells.len() as u64);
    assert_eq!(done.intersection, reference);
}
