//! The image-space distance field against independent oracles: exact BigInt ray casting for
//! the classification of every sample (inside, outside, on the surface; no code in common with
//! the library's perturbed column sweep) and brute-force nearest faces over all triangles for
//! its distance, closest point, face and gradient.

use glam::{DVec3, Vec3};
use gprox_geometry::transform::Pose64;
use gprox_query::image_space::{distance_field, CellBox, ImageSpaceOptions, Lattice};
use proptest::prelude::*;

#[path = "penetration/oracle.rs"]
mod oracle;
#[path = "penetration/shapes.rs"]
#[allow(dead_code)]
mod shapes;
#[path = "image_space/support.rs"]
#[allow(dead_code)]
mod support;

use oracle::{oracle, Truth};
use shapes::*;
use support::*;

/// Checks a distance field of `m` at `pose` over `cells` against the oracle and brute force.
fn check_field(
    m: &Posed,
    lattice: &Lattice,
    cells: CellBox,
    tile: u32,
) -> Result<[usize; 3], TestCaseError> {
    let mut opts = ImageSpaceOptions::new(1.0);
    opts.tile = tile;
    let f = distance_field(&m.object(), lattice, cells, &opts).unwrap();
    prop_assert_eq!(f.samples.len() as u64, cells.count());
    let tris = m.triangles();
    let pts: Vec<DVec3> = f.samples.iter().map(|s| s.position).collect();
    let truth = oracle(&pts, &tris);
    let mut counts = [0; 3];
    let mut last = None;
    for (s, t) in f.samples.iter().zip(&truth) {
        prop_assert!(cells.contains(s.cell));
        prop_assert_eq!(s.position, lattice.center(s.cell));
        let order = (s.cell[2], s.cell[1], s.cell[0]);
        prop_assert!(last < Some(order), "lattice order");
        last = Some(order);
        match t {
            Truth::Surface => {
                prop_assert!(s.on_surface, "{:?} is on the surface", s.position);
                prop_assert_eq!(s.distance, 0.0);
                counts[0] += 1;
            }
            Truth::Winding(w) => {
                prop_assert!(!s.on_surface, "{:?} is off the surface", s.position);
                prop_assert_eq!(s.winding, *w, "winding at {:?}", s.position);
                counts[1 + usize::from(*w != 0)] += 1;
            }
        }
        let (d, q, face) = brute_nearest(s.position, &tris);
        prop_assert_eq!((s.distance, s.closest, s.face), (d, q, face));
        prop_assert_eq!(s.signed_distance() < 0.0, s.inside() && d > 0.0);
        if let Some(g) = s.gradient() {
            prop_assert!((g.length() - 1.0).abs() < 1e-12);
            let out = (s.position - s.closest).normalize();
            let sign = if s.inside() { -1.0 } else { 1.0 };
            prop_assert!(g.dot(out) * sign > 1.0 - 1e-12);
        }
    }
    Ok(counts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Grid shapes at exact grid poses sampled on a lattice of spacing 1/8 whose samples fall
    /// on the 1/8 grid: samples exactly on faces, edges and vertices, columns through edges
    /// and vertices. Winding numbers, "on the surface", distances, closest points and faces
    /// equal the oracle's.
    #[test]
    fn grid_samples_match_oracle(
        kind in 0u8..3, lo in prop::array::uniform3(-4i8..2), size in prop::array::uniform3(1u8..8),
        perm in 0u8..6, signs in 0u8..8, t in prop::array::uniform3(-3i8..4),
        flip in any::<bool>(), tile in 1u32..5,
    ) {
        let mut mesh = grid_shape(kind, lo, size);
        if flip {
            mesh = flipped(&mesh);
        }
        let m = Posed::new(mesh, grid_pose(perm, signs, t));
        let lattice = Lattice { origin: DVec3::splat(-4.0 - 1.0 / 16.0), spacing: 0.125 };
        let cells = CellBox { lo: [0, 0, 0], hi: [64, 64, 64] };
        // A slab of the box (all of it would be slow against the BigInt oracle).
        let mut slab = cells;
        slab.lo[2] = 24 + 2 * (tile % 4);
        slab.hi[2] = slab.lo[2] + 3;
        check_field(&m, &lattice, slab, tile)?;
    }

    /// Perturbed shapes at random poses on a random lattice.
    #[test]
    fn random_samples_match_oracle(
        kind in 0u8..4, s in 0.5f32..1.5,
        noise in prop::collection::vec(prop::array::uniform3(-0.05f32..0.05), 1..8),
        axis in prop::array::uniform3(-1f32..1.0), angle in 0f32..6.3,
        t in prop::array::uniform3(-0.3f32..0.3),
        origin in prop::array::uniform3(-2.0f64..-1.5), h in 0.1f64..0.3,
    ) {
        let m = Posed::new(perturbed(&shape(kind, s), &noise), pose(axis, angle, t));
        let lattice = Lattice { origin: DVec3::from_array(origin), spacing: h };
        let n = (3.5 / h) as u32;
        check_field(&m, &lattice, CellBox { lo: [0, 0, n / 2], hi: [n, n, n / 2 + 2] }, 8)?;
    }
}

/// The grid lattice really puts samples on the surface, inside and outside.
#[test]
fn grid_lattice_hits_the_surface() {
    let m = Posed::new(grid_shape(0, [-2, -2, -2], [6, 5, 7]), Pose64::IDENTITY);
    let lattice = Lattice {
        origin: DVec3::splat(-1.0 - 1.0 / 16.0),
        spacing: 0.125,
    };
    let counts = check_field(
        &m,
        &lattice,
        CellBox {
            lo: [0, 0, 6],
            hi: [16, 16, 10],
        },
        3,
    )
    .unwrap();
    assert!(
        counts.iter().all(|&c| c > 20),
        "surface/outside/inside {counts:?}"
    );
}

/// Outside a box, next to a face, the gradient is the face's outward normal; inside, too.
#[test]
fn box_gradient_is_the_face_normal() {
    let m = Posed::new(cube(Vec3::splat(-1.0), Vec3::splat(1.0)), Pose64::IDENTITY);
    let lattice = Lattice {
        origin: DVec3::new(-0.5, -0.5, -2.0),
        spacing: 0.1,
    };
    let f = distance_field(
        &m.object(),
        &lattice,
        CellBox {
            lo: [0, 0, 0],
            hi: [10, 10, 40],
        },
        &ImageSpaceOptions::new(1.0),
    )
    .unwrap();
    let mut checked = 0;
    for s in &f.samples {
        let z = s.position.z;
        let g = s.gradient().unwrap();
        let expect = if z > 0.5 {
            DVec3::Z
        } else if z < -0.5 {
            -DVec3::Z
        } else {
            continue;
        };
        assert!(g.distance(expect) < 1e-12, "{:?}: {g:?}", s.position);
        assert!((s.signed_distance() - (z.abs() - 1.0)).abs() < 1e-12);
        checked += 1;
    }
    assert!(checked > 100);
}
