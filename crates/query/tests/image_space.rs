//! Image-space proximity queries against independent oracles: exact BigInt ray casting for
//! the classification of samples (shared with the penetration tests, no code in common with
//! the library's perturbed column sweep), brute-force nearest faces over all triangles for
//! every distance, and closed forms — the overlap of two boxes, the lens of two balls
//! (bracketed by the inscribed and circumscribed balls of the tessellated spheres), the
//! distance of two balls — for volumes and contact depths. The distance field
//! (classification and distances of lattice samples) is tested in `image_space_field.rs`,
//! separation and self-intersection in `image_space_separation.rs`.

use glam::{DVec3, Vec3};
use gprox_geometry::scene::torus;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::Side;
use gprox_query::image_space::{
    distance_field, intersect, self_intersection_volume, CellBox, ImageSpaceError,
    ImageSpaceOptions, Intersection, IntersectionSweep, Lattice, SAMPLE_INSIDE, SAMPLE_NEAR,
    SAMPLE_UNDECIDED,
};
use gprox_query::penetration::PenetrationError;
use proptest::prelude::*;

#[path = "penetration/oracle.rs"]
mod oracle;
#[path = "penetration/shapes.rs"]
#[allow(dead_code)]
mod shapes;
#[path = "image_space/support.rs"]
mod support;

use oracle::{oracle, Truth};
use shapes::*;
use support::*;

// ------------------------------------------------------------ intersection

/// Checks an intersection against the oracle and brute force: every sample strictly inside
/// both, its distances and faces those of brute force, the regions disjoint.
fn check_intersection(a: &Posed, b: &Posed, r: &Intersection) -> Result<(), TestCaseError> {
    let (ta, tb) = (a.triangles(), b.triangles());
    let pts: Vec<DVec3> = r.samples().iter().map(|s| s.position).collect();
    let (oa, ob) = (oracle(&pts, &ta), oracle(&pts, &tb));
    prop_assert_eq!(r.samples().len() as u64, r.count());
    prop_assert!(in_order(r), "samples out of (region, z, y, x) order");
    for (i, s) in r.samples().iter().enumerate() {
        prop_assert!(matches!(oa[i], Truth::Winding(w) if w != 0));
        prop_assert!(matches!(ob[i], Truth::Winding(w) if w != 0));
        prop_assert!(r.regions()[s.region as usize].contains(s.cell));
        prop_assert_eq!(s.position, r.lattice().center(s.cell));
        let (da, qa, fa) = brute_nearest(s.position, &ta);
        let (db, qb, fb) = brute_nearest(s.position, &tb);
        prop_assert_eq!((s.a.distance, s.a.point, s.a.face), (da, qa, fa));
        prop_assert_eq!((s.b.distance, s.b.point, s.b.face), (db, qb, fb));
        prop_assert!(s.depth_in_a() > 0.0 && s.depth_in_b() > 0.0);
        prop_assert!((s.direction_out_of_b().length() - 1.0).abs() < 1e-12);
    }
    for (i, x) in r.regions().iter().enumerate() {
        for y in &r.regions()[i + 1..] {
            let disjoint = (0..3).any(|k| x.hi[k] <= y.lo[k] || y.hi[k] <= x.lo[k]);
            prop_assert!(disjoint, "regions {:?} and {:?} overlap", x, y);
        }
    }
    Ok(())
}

/// The samples are in strictly increasing (region, `z`, `y`, `x`) order: each cell once.
fn in_order(r: &Intersection) -> bool {
    let key = |s: &gprox_query::image_space::IntersectionSample| {
        (s.region, s.cell[2], s.cell[1], s.cell[0])
    };
    r.samples().windows(2).all(|w| key(&w[0]) < key(&w[1]))
}

/// `intersect(b, a)` is `intersect(a, b)` with the sides swapped.
fn check_symmetric(a: &Posed, b: &Posed, opts: &ImageSpaceOptions) -> Result<(), TestCaseError> {
    let ab = intersect(&a.object(), &b.object(), opts).unwrap();
    let ba = intersect(&b.object(), &a.object(), opts).unwrap();
    prop_assert_eq!(ab.lattice(), ba.lattice());
    prop_assert_eq!(ab.regions(), ba.regions());
    prop_assert_eq!((ab.count(), ab.uncertain()), (ba.count(), ba.uncertain()));
    prop_assert_eq!(ab.samples().len(), ba.samples().len());
    for (x, y) in ab.samples().iter().zip(ba.samples()) {
        prop_assert_eq!((x.cell, x.a, x.b), (y.cell, y.b, y.a));
    }
    for (x, y) in ab.contacts().iter().zip(ba.contacts()) {
        prop_assert_eq!((x.point, x.depth, x.samples), (y.point, y.depth, y.samples));
        prop_assert_eq!(x.normal, -y.normal);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Two axis-aligned boxes: the volume is within its bound of the exact overlap, the
    /// samples are inside both with brute-force depths, and the query is symmetric.
    #[test]
    fn boxes_volume_within_bound(
        la in prop::array::uniform3(-1.0f32..0.0), sa in prop::array::uniform3(0.3f32..1.5),
        lb in prop::array::uniform3(-1.0f32..0.0), sb in prop::array::uniform3(0.3f32..1.5),
        d in 0.04f64..0.1,
    ) {
        let (la, lb) = (Vec3::from_array(la), Vec3::from_array(lb));
        let (ha, hb) = (la + Vec3::from_array(sa), lb + Vec3::from_array(sb));
        let a = Posed::new(cube(la, ha), Pose64::IDENTITY);
        let b = Posed::new(cube(lb, hb), Pose64::IDENTITY);
        let exact: f64 = (0..3)
            .map(|k| (f64::from(ha[k].min(hb[k])) - f64::from(la[k].max(lb[k]))).max(0.0))
            .product();
        let opts = ImageSpaceOptions::new(d);
        let r = intersect(&a.object(), &b.object(), &opts).unwrap();
        prop_assert!((r.volume() - exact).abs() <= r.volume_bound() * (1.0 + 1e-9),
            "volume {} exact {} bound {}", r.volume(), exact, r.volume_bound());
        check_intersection(&a, &b, &r)?;
        check_symmetric(&a, &b, &opts)?;
    }

    /// Perturbed shapes at random poses: samples, depths and faces against the oracle and
    /// brute force; symmetric.
    #[test]
    fn random_shapes_intersection(
        ka in 0u8..4, kb in 0u8..4,
        na in prop::collection::vec(prop::array::uniform3(-0.05f32..0.05), 1..8),
        axa in prop::array::uniform3(-1f32..1.0), anga in 0f32..6.3,
        tb in prop::array::uniform3(-0.6f32..0.6), tile in 1u32..8,
    ) {
        let a = Posed::new(perturbed(&shape(ka, 1.0), &na), pose(axa, anga, [0.0; 3]));
        let b = Posed::new(shape(kb, 0.8), pose([0.0, 0.0, 1.0], 0.3, tb));
        let mut opts = ImageSpaceOptions::new(0.08);
        opts.tile = tile;
        let r = intersect(&a.object(), &b.object(), &opts).unwrap();
        check_intersection(&a, &b, &r)?;
        check_symmetric(&a, &b, &opts)?;
    }
}

/// Every sample of the swept regions that the oracle puts inside both meshes is reported
/// (completeness), for grid shapes whose samples hit faces, edges and vertices.
#[test]
fn intersection_is_complete() {
    let a = Posed::new(grid_shape(2, [-3, -2, -2], [5, 5, 5]), Pose64::IDENTITY);
    let b = Posed::new(
        grid_shape(1, [-1, -1, -1], [4, 4, 4]),
        grid_pose(1, 2, [1, 0, -1]),
    );
    let r = intersect(&a.object(), &b.object(), &ImageSpaceOptions::new(0.06)).unwrap();
    let mut all = Vec::new();
    for region in r.regions() {
        for z in region.lo[2]..region.hi[2] {
            for y in region.lo[1]..region.hi[1] {
                for x in region.lo[0]..region.hi[0] {
                    all.push(r.lattice().center([x, y, z]));
                }
            }
        }
    }
    let (oa, ob) = (oracle(&all, &a.triangles()), oracle(&all, &b.triangles()));
    let inside = |t: &Truth| matches!(t, Truth::Winding(w) if *w != 0);
    let expected = oa
        .iter()
        .zip(&ob)
        .filter(|(x, y)| inside(x) && inside(y))
        .count();
    assert!(expected > 50, "{expected}");
    assert_eq!(r.count(), expected as u64);
}

/// Two tessellated balls of radius 1 whose centres are `c` apart: the volume estimate is
/// within its bound of the lens (bracketed by the inscribed and circumscribed balls), and the
/// contact's depth is half the overlap with a normal along the centre line.
fn spheres(c: f64, d: f64, levels: u32) -> (f64, f64) {
    let s = icosphere(1.0, Vec3::ZERO, levels);
    let a = Posed::new(s.clone(), Pose64::IDENTITY);
    let b = Posed::new(s, translate([c, 0.0, 0.0]));
    let mut opts = ImageSpaceOptions::new(d);
    opts.depths = d > 0.01;
    let r = intersect(&a.object(), &b.object(), &opts).unwrap();
    let (inner, outer) = radii(&a.triangles(), DVec3::ZERO);
    let (lo, hi) = (lens(inner, c), lens(outer, c));
    let tol = 1e-9 * hi;
    assert!(
        r.volume() - r.volume_bound() <= hi + tol && r.volume() + r.volume_bound() >= lo - tol,
        "d {d}: volume {} ± {} outside [{lo}, {hi}]",
        r.volume(),
        r.volume_bound()
    );
    if opts.depths {
        assert_eq!(r.contacts().len(), 1);
        let k = r.contacts()[0];
        let slack = r.lattice().half_diagonal() + (outer - inner);
        assert!(
            (k.depth - (2.0 - c) / 2.0).abs() <= slack,
            "depth {}",
            k.depth
        );
        assert!(k.normal.dot(-DVec3::X) > 0.999, "normal {:?}", k.normal);
    }
    (r.volume_bound(), hi)
}

#[test]
fn spheres_volume_within_bound() {
    // Model size 2: tolerances 1e-1 and 2e-2 of it.
    let (coarse, v) = spheres(0.8, 0.2, 3);
    let (fine, _) = spheres(0.8, 0.04, 3);
    // The bound shrinks with the tolerance (about linearly: surface cells).
    assert!(
        fine < coarse / 4.0 && fine < 0.4 * v,
        "{coarse} {fine} of {v}"
    );
}

/// The fine end of the tolerance range, 1e-3 of the model size (slow: run with --ignored).
#[test]
#[ignore]
fn spheres_volume_within_bound_fine() {
    let (bound, v) = spheres(0.8, 2e-3, 5);
    assert!(bound < 0.02 * v);
}

/// Torus through torus (the benchmark's interlocking pair): depths equal brute force.
#[test]
fn torus_through_torus() {
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let a = Posed::new(t.clone(), Pose64::IDENTITY);
    // B stands upright through A's ring: the tubes cross at about (±1, 0, 0).
    let b = Posed::new(
        t,
        pose(
            [1.0, 0.0, 0.0],
            std::f32::consts::FRAC_PI_2,
            [0.0, 0.05, 0.1],
        ),
    );
    let opts = ImageSpaceOptions::new(0.04);
    let r = intersect(&a.object(), &b.object(), &opts).unwrap();
    assert!(r.count() > 20, "{}", r.count());
    // The tubes cross in two places: two regions, one contact each.
    assert_eq!(r.contacts().len(), 2, "{:?}", r.regions());
    check_intersection(&a, &b, &r).unwrap();
    check_symmetric(&a, &b, &opts).unwrap();
}

/// The two tori of frame 0 (the deepest) of the benchmark's deforming tori.
fn deforming_tori_frame0() -> (Posed, Posed) {
    let scene = gprox_geometry::scene::Scene::builtin_deforming_tori();
    let posed = |i: usize| {
        let m = scene.mesh(i);
        let mesh = TriMesh::new(scene.positions(0, i).to_vec(), m.faces().to_vec()).unwrap();
        Posed::new(mesh, scene.pose64(0, i))
    };
    (posed(0), posed(1))
}

/// A frame of the benchmark's deforming tori (2 × 5,000 triangles, deep overlap) at the
/// harness's tolerance: thousands of samples deep inside both tubes, where a whole ring of
/// faces is nearly equidistant — every depth, closest point and face equals brute force.
#[test]
fn deep_samples_of_the_deforming_tori_match_brute_force() {
    let (a, b) = deforming_tori_frame0();
    let r = intersect(&a.object(), &b.object(), &ImageSpaceOptions::new(0.0207)).unwrap();
    assert!(r.count() > 5_000, "{}", r.count());
    let deepest = r
        .samples()
        .iter()
        .map(|s| s.depth_in_b())
        .fold(0.0, f64::max);
    assert!(deepest > 0.2, "{deepest}");
    check_intersection(&a, &b, &r).unwrap();
}

/// The deepest frame of the deforming tori at half the harness's tolerance: tens of thousands
/// of samples, so that they are ordered by the radix sort of `sorted_samples` (the smaller
/// cases above take the comparison sort), in the same order, each cell once.
#[test]
fn many_samples_are_in_lattice_order() {
    let (a, b) = deforming_tori_frame0();
    let r = intersect(
        &a.object(),
        &b.object(),
        &ImageSpaceOptions::new(0.0207 / 2.0),
    )
    .unwrap();
    assert!(r.count() > 1 << 15, "{}", r.count());
    assert_eq!(r.samples().len() as u64, r.count());
    assert!(in_order(&r), "samples out of (region, z, y, x) order");
    // The places the radix sort put the samples in hold the right ones: a sample's position is
    // its cell's, inside both, with brute-force depths (every 64th sample).
    let (ta, tb) = (a.triangles(), b.triangles());
    let some: Vec<_> = r.samples().iter().step_by(64).collect();
    let pts: Vec<DVec3> = some.iter().map(|s| s.position).collect();
    let (oa, ob) = (oracle(&pts, &ta), oracle(&pts, &tb));
    for (i, s) in some.iter().enumerate() {
        assert_eq!(s.position, r.lattice().center(s.cell));
        assert!(matches!(oa[i], Truth::Winding(w) if w != 0));
        assert!(matches!(ob[i], Truth::Winding(w) if w != 0));
        let (da, _, fa) = brute_nearest(s.position, &ta);
        assert_eq!((s.a.distance, s.a.face), (da, fa));
    }
}

/// A unit box whose bottom has a sliver face (vertex 8 at `1e-6` from the edge 0–1: an angle
/// of `4e-6`, too thin for a plane bound, so it is always evaluated exactly) through another
/// box: depths equal brute force, the sliver changes nothing.
#[test]
fn sliver_faces_match_brute_force() {
    let mut v: Vec<Vec3> = (0..8u32)
        .map(|i| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2 & 1) as f32))
        .collect();
    v.push(Vec3::new(0.5, 1e-6, 0.0));
    // The sliver first, then the rest of the bottom as a fan from vertex 8.
    let mut faces = vec![[1, 0, 8], [0, 2, 8], [8, 2, 3], [8, 3, 1]];
    for q in [
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ] {
        faces.extend([[q[0], q[1], q[2]], [q[0], q[2], q[3]]]);
    }
    let a = Posed::new(TriMesh::new(v, faces).unwrap(), Pose64::IDENTITY);
    let b = Posed::new(
        cube(Vec3::new(0.1, -0.5, -0.5), Vec3::new(0.9, 0.5, 0.3)),
        Pose64::IDENTITY,
    );
    let r = intersect(&a.object(), &b.object(), &ImageSpaceOptions::new(0.02)).unwrap();
    assert!(r.count() > 1_000, "{}", r.count());
    // Samples nearest to the fan around the sliver's vertex and to the side along its edge.
    assert!(r.samples().iter().any(|s| (1..4).contains(&s.a.face)));
    check_intersection(&a, &b, &r).unwrap();
}

/// Two meshes of two boxes each, far apart pairwise overlapping: two regions, each with its
/// own contact, and the swept cells a small part of the box around both.
#[test]
fn split_contacts_give_two_regions() {
    let pair = |shift: Vec3| {
        let l = cube(
            Vec3::new(-1.8, -0.5, -0.5) + shift,
            Vec3::new(-1.2, 0.5, 0.5) + shift,
        );
        let r = cube(
            Vec3::new(1.2, -0.5, -0.5) + shift,
            Vec3::new(1.8, 0.5, 0.5) + shift,
        );
        let mut pos = l.positions().to_vec();
        pos.extend(r.positions());
        let mut faces = l.faces().to_vec();
        faces.extend(r.faces().iter().map(|f| f.map(|i| i + 8)));
        Posed::new(TriMesh::new(pos, faces).unwrap(), Pose64::IDENTITY)
    };
    let a = pair(Vec3::ZERO);
    let b = pair(Vec3::new(0.3, 0.2, 0.1));
    let res = intersect(&a.object(), &b.object(), &ImageSpaceOptions::new(0.03)).unwrap();
    assert_eq!(res.regions().len(), 2);
    assert_eq!(res.contacts().len(), 2);
    let exact = 2.0 * 0.3 * 0.8 * 0.9;
    assert!((res.volume() - exact).abs() <= res.volume_bound());
    let total: u64 = res.regions().iter().map(|r| r.count()).sum();
    let h = res.lattice().spacing;
    let whole = ((3.3 / h).ceil() * (0.8 / h).ceil() * (0.9 / h).ceil()) as u64;
    assert!(total < whole / 2, "localised {total} of {whole} cells");
}

// ------------------------------------------------------------ errors

#[test]
fn errors_are_typed() {
    let c = Posed::new(cube(Vec3::ZERO, Vec3::ONE), Pose64::IDENTITY);
    let open = TriMesh::new(c.mesh.positions().to_vec(), c.mesh.faces()[1..].to_vec()).unwrap();
    let open = Posed::new(open, Pose64::IDENTITY);
    let e = intersect(&c.object(), &open.object(), &ImageSpaceOptions::new(0.1)).unwrap_err();
    assert!(
        matches!(
            e,
            ImageSpaceError::Mesh(PenetrationError::NotClosed {
                object: Side::B,
                ..
            })
        ),
        "{e:?}"
    );
    for d in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = intersect(&c.object(), &c.object(), &ImageSpaceOptions::new(d)).unwrap_err();
        assert!(matches!(e, ImageSpaceError::BadTolerance(_)), "{e:?}");
    }
    let mut opts = ImageSpaceOptions::new(1e-3);
    opts.max_cells = 1000;
    let e = intersect(&c.object(), &c.object(), &opts).unwrap_err();
    assert!(
        matches!(e, ImageSpaceError::TooManyCells { max: 1000, .. }),
        "{e:?}"
    );
    let bad = Lattice {
        origin: DVec3::ZERO,
        spacing: 0.0,
    };
    let e = distance_field(&c.object(), &bad, CellBox::default(), &opts).unwrap_err();
    assert_eq!(e, ImageSpaceError::BadLattice);
    let huge = CellBox {
        lo: [0; 3],
        hi: [u32::MAX; 3],
    };
    let unit = Lattice {
        origin: DVec3::ZERO,
        spacing: 1.0,
    };
    let e = distance_field(&c.object(), &unit, huge, &opts).unwrap_err();
    assert!(
        matches!(
            e,
            ImageSpaceError::TooManyCells {
                cells: u64::MAX,
                ..
            }
        ),
        "{e:?}"
    );
    let e = self_intersection_volume(&open.object(), &opts).unwrap_err();
    assert!(matches!(
        e,
        ImageSpaceError::Mesh(PenetrationError::NotClosed { .. })
    ));
}

// ------------------------------------------------------------ timing (run with --ignored)

/// The deforming-tori demo: two tori of 5,000 triangles, B sliding through A as in the
/// built-in scene while both breathe (vertex positions change every frame, trees refitted).
/// Prints the median time of a frame (refit + intersection with every sample's depths) at a
/// tolerance `d` and `d/4`; run with `RAYON_NUM_THREADS=2 cargo test --release ... --ignored`.
#[test]
#[ignore]
fn timing_deforming_tori() {
    let base = torus(1.0, 0.3, 50, 50).unwrap();
    assert_eq!(base.face_count(), 5000);
    let frames = 16;
    for d in [0.02, 0.005] {
        let mut a = Posed::new(base.clone(), Pose64::IDENTITY);
        let mut b = Posed::new(base.clone(), Pose64::IDENTITY);
        let mut times = Vec::new();
        let mut samples = 0;
        for f in 0..frames {
            let s = f as f32 / (frames - 1) as f32;
            let breathe = |m: &mut Posed, phase: f32| {
                let pos: Vec<Vec3> = base
                    .positions()
                    .iter()
                    .map(|p| *p * (1.0 + 0.03 * (4.0 * p.x + phase + 6.0 * s).sin()))
                    .collect();
                m.mesh.set_positions(pos).unwrap();
            };
            breathe(&mut a, 0.0);
            breathe(&mut b, 1.0);
            b.pose = pose(
                [1.0, 0.0, 0.0],
                std::f32::consts::FRAC_PI_2,
                [0.35 + 1.3 * s, 0.05, 0.0],
            );
            let t = std::time::Instant::now();
            gprox_bvh::refit::refit_from_mesh(&mut a.bvh, &a.mesh).unwrap();
            gprox_bvh::refit::refit_from_mesh(&mut b.bvh, &b.mesh).unwrap();
            let mut opts = ImageSpaceOptions::new(d);
            opts.depths = std::env::var_os("IMAGE_SPACE_NO_DEPTHS").is_none();
            let r = intersect(&a.object(), &b.object(), &opts).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e3);
            samples += r.count();
            if std::env::var_os("IMAGE_SPACE_FRAMES").is_some() {
                let cells: u64 = r.regions().iter().map(|c| c.count()).sum();
                eprintln!(
                    "  frame {f}: {:.2} ms, {} regions, {cells} cells, {} inside both, {} uncertain",
                    times[f],
                    r.regions().len(),
                    r.count(),
                    r.uncertain()
                );
            }
        }
        times.sort_by(f64::total_cmp);
        eprintln!(
            "d = {d}: median {:.2} ms, max {:.2} ms per frame, {} intersection samples per frame, {} threads",
            times[frames / 2],
            times[frames - 1],
            samples / frames as u64,
            rayon::current_num_threads()
        );
    }
}

// ------------------------------------------------------------ the sweep split for a device

/// The sweep finished from the CPU's own codes is `intersect`; columns marked undecided (with
/// garbage codes behind the mark) are classified again, so the result does not change; a wrong
/// number of codes is a typed error.
#[test]
fn sweep_finish_repairs_undecided_columns() {
    let t = torus(1.0, 0.3, 24, 12).unwrap();
    let a = Posed::new(t.clone(), Pose64::IDENTITY);
    let b = Posed::new(
        t,
        pose(
            [1.0, 0.0, 0.0],
            std::f32::consts::FRAC_PI_2,
            [0.0, 0.05, 0.1],
        ),
    );
    let opts = ImageSpaceOptions {
        tile: 5,
        ..ImageSpaceOptions::new(0.05)
    };
    let (oa, ob) = (a.object(), b.object());
    let reference = intersect(&oa, &ob, &opts).unwrap();
    let sweep = IntersectionSweep::new(&oa, &ob, &opts).unwrap();
    assert!(sweep.tiles().len() > 4);
    let mut codes: Vec<u8> = (0..sweep.tiles().len())
        .flat_map(|t| sweep.classify_tile(t))
        .collect();
    assert_eq!(codes.len() as u64, *sweep.code_offsets().last().unwrap());
    assert_eq!(
        sweep.finish(&codes[1..]).map(|_| ()),
        Err(ImageSpaceError::BadCodes {
            expected: codes.len() as u64,
            got: codes.len() as u64 - 1
        })
    );
    let sweep = IntersectionSweep::new(&oa, &ob, &opts).unwrap();
    // Every third column of every tile and mesh: undecided, with wrong codes behind the mark.
    let mut marked = 0;
    for (t, tile) in sweep.tiles().iter().enumerate() {
        let len = tile.column_len() as usize;
        let at = sweep.code_offsets()[t] as usize;
        for c in (0..2 * tile.columns() as usize).step_by(3) {
            for x in &mut codes[at + c * len..at + (c + 1) * len] {
                *x = SAMPLE_UNDECIDED | (!*x & (SAMPLE_INSIDE | SAMPLE_NEAR));
            }
            marked += 1;
        }
    }
    let done = sweep.finish(&codes).unwrap();
    assert_eq!(done.host_columns, marked);
    assert_eq!(done.intersection, reference);
    assert!(reference.count() > 20);
}
