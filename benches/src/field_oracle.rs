//! Independent check of the `penetration-field` target: per frame, the lattice samples strictly
//! inside both meshes counted by brute force — one `+z` ray per lattice column over the whole
//! overlap of the two meshes' world boxes, every triangle crossed found by a plain
//! floating-point point-in-triangle test, winding numbers from the signed crossings above each
//! sample. Nothing is shared with the library's classification (localisation, tiles, active
//! lists, exact predicates, symbolic perturbation); only the lattice (origin and spacing) is
//! taken from the query's result. Columns whose ray passes within rounding of a triangle's
//! edge, and samples within rounding of a crossing, are counted as unsure: the query's count
//! must be within the unsure samples of the oracle's.

use anyhow::{Context as _, Result};
use glam::DVec3;
use gprox::geometry::scene::Scene;
use gprox_geometry::transform::transform_point;
use gprox_query::collide::CollisionObject;
use gprox_query::image_space::{intersect, ImageSpaceOptions, Lattice};

use crate::query::field_tolerance;
use crate::report::RefCheck;
use crate::run::{RunData, Target};

/// The oracle's count of one pair and frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OracleCount {
    /// Samples strictly inside both meshes by the oracle.
    pub inside: u64,
    /// Samples the oracle's floating-point tests cannot settle (counted either way).
    pub unsure: u64,
}

/// The world triangles of object `i` of `scene` at frame `f`.
fn world_triangles(scene: &Scene, f: usize, i: usize) -> Vec<[DVec3; 3]> {
    let pose = scene.pose64(f, i);
    let p: Vec<DVec3> = scene
        .positions(f, i)
        .iter()
        .map(|&v| transform_point(&pose, v))
        .collect();
    scene
        .mesh(i)
        .faces()
        .iter()
        .map(|t| t.map(|v| p[v as usize]))
        .collect()
}

/// Signed `+z` crossings of every lattice column `(ix, iy)` (row-major over `nx × ny`,
/// first column `i0`) with `tris`; marks the columns passing within rounding of an edge.
fn crossings(
    tris: &[[DVec3; 3]],
    lattice: &Lattice,
    i0: [i64; 2],
    [nx, ny]: [usize; 2],
    unsure: &mut [bool],
) -> Vec<Vec<(f64, i32)>> {
    let h = lattice.spacing;
    let at = |k: usize, i: i64| lattice.origin[k] + (i as f64 + 0.5) * h;
    let mut out = vec![Vec::new(); nx * ny];
    for t in tris {
        let (lo, hi) = (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
        let range = |k: usize, n: usize| {
            let a = ((lo[k] - lattice.origin[k]) / h - 0.5).floor() as i64 - 1 - i0[k];
            let b = ((hi[k] - lattice.origin[k]) / h - 0.5).ceil() as i64 + 1 - i0[k];
            a.max(0)..(b + 1).min(n as i64).max(0)
        };
        let scale = hi.abs().max(lo.abs()).max_element().max(1.0);
        let eps = 1e-10 * scale * scale;
        for iy in range(1, ny) {
            for ix in range(0, nx) {
                let (x, y) = (at(0, ix + i0[0]), at(1, iy + i0[1]));
                let e = |a: DVec3, b: DVec3| (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
                let w = [e(t[1], t[2]), e(t[2], t[0]), e(t[0], t[1])];
                let area = w[0] + w[1] + w[2];
                let c = iy as usize * nx + ix as usize;
                if area.abs() <= eps {
                    // A vertical triangle: crossed only by a ray in its plane (unsure).
                    let near = |a: DVec3, b: DVec3| {
                        let (d, q) = (b - a, DVec3::new(x - a.x, y - a.y, 0.0));
                        let len2 = d.x * d.x + d.y * d.y;
                        let s = if len2 > 0.0 {
                            ((q.x * d.x + q.y * d.y) / len2).clamp(0.0, 1.0)
                        } else {
                            0.0
                        };
                        (q.x - s * d.x).hypot(q.y - s * d.y) <= 1e-10 * scale
                    };
                    if near(t[0], t[1]) || near(t[1], t[2]) || near(t[2], t[0]) {
                        unsure[c] = true;
                    }
                    continue;
                }
                if w.iter().any(|v| v.abs() <= eps) {
                    unsure[c] = true;
                    continue;
                }
                let inside = w.iter().all(|&v| v > 0.0) || w.iter().all(|&v| v < 0.0);
                if !inside {
                    continue;
                }
                let z = (w[0] * t[0].z + w[1] * t[1].z + w[2] * t[2].z) / area;
                out[c].push((z, if area > 0.0 { 1 } else { -1 }));
            }
        }
    }
    out
}

/// The oracle's count of the samples of `lattice` strictly inside both `a` and `b` (world
/// triangles of closed, outward-oriented meshes).
pub fn count_inside_both(a: &[[DVec3; 3]], b: &[[DVec3; 3]], lattice: &Lattice) -> OracleCount {
    let bounds = |t: &[[DVec3; 3]]| {
        t.iter().flatten().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(l, h), &p| (l.min(p), h.max(p)),
        )
    };
    let ((la, ha), (lb, hb)) = (bounds(a), bounds(b));
    let (lo, hi) = (la.max(lb), ha.min(hb));
    if lo.cmpgt(hi).any() {
        return OracleCount::default();
    }
    let h = lattice.spacing;
    let first = |k: usize| ((lo[k] - lattice.origin[k]) / h - 0.5).floor() as i64 - 1;
    let last = |k: usize| ((hi[k] - lattice.origin[k]) / h - 0.5).ceil() as i64 + 1;
    let i0 = [first(0), first(1), first(2)];
    let n = [0, 1, 2].map(|k| (last(k) - i0[k] + 1).max(0) as usize);
    let mut unsure_col = vec![false; n[0] * n[1]];
    let mut ca = crossings(a, lattice, [i0[0], i0[1]], [n[0], n[1]], &mut unsure_col);
    let mut cb = crossings(b, lattice, [i0[0], i0[1]], [n[0], n[1]], &mut unsure_col);
    let mut out = OracleCount::default();
    let eps = 1e-10 * lo.abs().max(hi.abs()).max_element().max(1.0);
    for c in 0..n[0] * n[1] {
        if unsure_col[c] {
            out.unsure += n[2] as u64;
            continue;
        }
        for col in [&mut ca[c], &mut cb[c]] {
            col.sort_by(|x, y| x.0.total_cmp(&y.0));
        }
        for iz in 0..n[2] {
            let z = lattice.origin[2] + ((iz as i64 + i0[2]) as f64 + 0.5) * h;
            let winding = |col: &[(f64, i32)]| -> Option<i32> {
                let mut w = 0;
                for &(zc, s) in col {
                    if (zc - z).abs() <= eps {
                        return None;
                    }
                    if zc > z {
                        w += s;
                    }
                }
                Some(w)
            };
            match (winding(&ca[c]), winding(&cb[c])) {
                (Some(wa), Some(wb)) => out.inside += u64::from(wa != 0 && wb != 0),
                _ => out.unsure += 1,
            }
        }
    }
    out
}

/// Checks every frame of a `penetration-field` run against the oracle (the lattice of each
/// frame and pair from the CPU query with depths off); mismatches go to `check`.
pub fn check(scene: &Scene, target: &Target, data: &RunData, check: &mut RefCheck) -> Result<()> {
    let mut unsure_total = 0;
    for f in &data.frames {
        let (mut inside, mut unsure) = (0u64, 0u64);
        for &[ia, ib] in &target.pairs {
            let (ta, tb) = (
                world_triangles(scene, f.frame, ia),
                world_triangles(scene, f.frame, ib),
            );
            let mesh = |i: usize| {
                gprox_geometry::TriMesh::new(
                    scene.positions(f.frame, i).to_vec(),
                    scene.mesh(i).faces().to_vec(),
                )
            };
            let (ma, mb) = (mesh(ia)?, mesh(ib)?);
            let (ba, bb) = (gprox_bvh::lbvh::build(&ma), gprox_bvh::lbvh::build(&mb));
            let oa = CollisionObject::new(&ma, &ba, scene.pose64(f.frame, ia))?;
            let ob = CollisionObject::new(&mb, &bb, scene.pose64(f.frame, ib))?;
            let mut opts = ImageSpaceOptions::new(field_tolerance(scene, ia));
            opts.depths = false;
            let lattice = *intersect(&oa, &ob, &opts)?.lattice();
            let c = count_inside_both(&ta, &tb, &lattice);
            inside += c.inside;
            unsure += c.unsure;
        }
        check.frames_checked += 1;
        unsure_total += unsure;
        let got = f.count.context("penetration-field frame without a count")?;
        if got.abs_diff(inside) > unsure {
            check.mismatches.push(format!(
                "f{}: samples inside both {got} vs {inside} ± {unsure} (oracle)",
                f.frame
            ));
        }
    }
    check.notes.push(format!(
        "penetration-field: samples checked by the ray-parity oracle, {unsure_total} unsure"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gprox_geometry::scene::{box_mesh, torus};
    use gprox_geometry::transform::Pose64;

    fn triangles(m: &gprox_geometry::TriMesh, pose: &Pose64) -> Vec<[DVec3; 3]> {
        m.faces()
            .iter()
            .map(|t| t.map(|v| transform_point(pose, m.positions()[v as usize])))
            .collect()
    }

    /// Two boxes: the oracle counts exactly the lattice centres in the overlap box (closed
    /// form), and agrees with the library on a torus pair.
    #[test]
    fn oracle_counts_box_overlap_and_matches_the_query() {
        let (a, b) = (
            box_mesh(glam::Vec3::ZERO, glam::Vec3::splat(1.0)).unwrap(),
            box_mesh(glam::Vec3::splat(0.37), glam::Vec3::new(1.5, 1.2, 1.3)).unwrap(),
        );
        let lattice = Lattice {
            origin: DVec3::new(0.01, -0.02, 0.03),
            spacing: 0.05,
        };
        let id = Pose64::IDENTITY;
        let c = count_inside_both(&triangles(&a, &id), &triangles(&b, &id), &lattice);
        let per_axis = |k: usize| {
            (-50..100)
                .filter(|&i| {
                    let x = lattice.origin[k] + (f64::from(i) + 0.5) * lattice.spacing;
                    x > 0.37 && x < 1.0
                })
                .count() as u64
        };
        assert_eq!(
            c,
            OracleCount {
                inside: per_axis(0) * per_axis(1) * per_axis(2),
                unsure: 0
            }
        );

        let t = torus(1.0, 0.3, 32, 16).unwrap();
        let bvh = gprox_bvh::lbvh::build(&t);
        let mut pose = Pose64::IDENTITY;
        pose.rows[0][3] = 0.8;
        pose.rows[2][3] = 0.1;
        let oa = CollisionObject::new(&t, &bvh, id).unwrap();
        let ob = CollisionObject::new(&t, &bvh, pose).unwrap();
        let r = intersect(&oa, &ob, &ImageSpaceOptions::new(0.02)).unwrap();
        let c = count_inside_both(&triangles(&t, &id), &triangles(&t, &pose), r.lattice());
        assert!(c.inside > 1000);
        assert!(
            r.count().abs_diff(c.inside) <= c.unsure,
            "{} vs {c:?}",
            r.count()
        );
    }
}
