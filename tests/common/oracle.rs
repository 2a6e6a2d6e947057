//! Independent brute-force oracle for intersection tests, in exact rational arithmetic.
//!
//! It shares no code and no formulation with `gprox_geometry::tri_tri`: two closed triangles
//! (convex hulls of three points, possibly degenerate) intersect iff the linear program
//!
//! ```text
//!   find α ∈ R³, β ∈ R³:  α ≥ 0, β ≥ 0, Σα = 1, Σβ = 1,  Σ αᵢ aᵢ − Σ βⱼ bⱼ = 0
//! ```
//!
//! is feasible. The oracle decides that with phase 1 of the simplex method (Bland's rule, so it
//! terminates) over `BigRational`. Coordinates are first made exact integers at one common
//! power-of-two scale (every finite f64 is `m · 2^e`), so everything is exact.
//!
//! Cheap shortcuts run first, each sound on its own (they only ever answer when the answer is
//! certain): disjoint bounding boxes → no; a shared corner → yes; a strictly separating axis
//! among the face normals, edge × edge directions and in-plane edge normals → no; an edge
//! piercing the other triangle (Cramer's rule in integers) → yes. Whatever remains goes to the
//! LP, which alone is complete; `hulls_intersect_lp_only` skips the shortcuts for self-tests.
//!
//! Include it from any test crate with
//! `#[path = "../../../tests/common/oracle.rs"] mod oracle;` (the crate needs the dev-dependencies
//! `num-rational`, `num-bigint`, `num-traits` and `gprox-geometry`).
#![allow(dead_code)]

use gprox_geometry::glam::DVec3;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::TriMesh;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

/// Exact rational value of a finite f64.
pub fn rational(x: f64) -> BigRational {
    BigRational::from_float(x).expect("oracle input must be finite")
}

/// Exact integer coordinates of all points at one common power-of-two scale (the scale is
/// irrelevant to every question the oracle asks: incidence, sides, LP feasibility).
fn scaled_integers(points: &[DVec3]) -> Vec<[BigInt; 3]> {
    let parts: Vec<[(i8, u64, i16); 3]> = points
        .iter()
        .map(|v| {
            [v.x, v.y, v.z].map(|x| {
                assert!(x.is_finite(), "oracle input must be finite");
                let (m, e, sign) = num_traits::float::FloatCore::integer_decode(x);
                (sign, m, e)
            })
        })
        .collect();
    let min_e = parts
        .iter()
        .flatten()
        .filter(|(_, m, _)| *m != 0)
        .map(|&(_, _, e)| e)
        .min()
        .unwrap_or(0);
    parts
        .iter()
        .map(|p| {
            p.map(|(sign, m, e)| {
                let v = BigInt::from(m) << ((e - min_e) as usize);
                if sign < 0 {
                    -v
                } else {
                    v
                }
            })
        })
        .collect()
}

type P = [BigInt; 3];

fn sub(p: &P, q: &P) -> P {
    [0, 1, 2].map(|k| &p[k] - &q[k])
}

fn cross(u: &P, w: &P) -> P {
    [
        &u[1] * &w[2] - &u[2] * &w[1],
        &u[2] * &w[0] - &u[0] * &w[2],
        &u[0] * &w[1] - &u[1] * &w[0],
    ]
}

fn dot(u: &P, w: &P) -> BigInt {
    &u[0] * &w[0] + &u[1] * &w[1] + &u[2] * &w[2]
}

fn det(a: &P, b: &P, c: &P) -> BigInt {
    dot(a, &cross(b, c))
}

/// Edges of a point set of 1 to 3 points (as ordered pairs of indices).
fn edges(n: usize) -> Vec<(usize, usize)> {
    match n {
        1 => vec![],
        2 => vec![(0, 1)],
        _ => vec![(0, 1), (1, 2), (2, 0)],
    }
}

/// Sound rejection: some axis (face normals, edge × edge, in-plane edge normals) on which the
/// projections of the two sets are strictly disjoint.
fn separating_axis_exists(a: &[P], b: &[P]) -> bool {
    let mut axes: Vec<P> = Vec::new();
    let normal = |t: &[P]| (t.len() == 3).then(|| cross(&sub(&t[1], &t[0]), &sub(&t[2], &t[0])));
    let (ea, eb) = (edges(a.len()), edges(b.len()));
    let da: Vec<P> = ea.iter().map(|&(i, j)| sub(&a[j], &a[i])).collect();
    let db: Vec<P> = eb.iter().map(|&(i, j)| sub(&b[j], &b[i])).collect();
    for (t, dirs) in [(a, &da), (b, &db)] {
        if let Some(n) = normal(t) {
            axes.extend(dirs.iter().map(|d| cross(&n, d)));
            axes.push(n);
        }
    }
    for u in &da {
        for w in &db {
            axes.push(cross(u, w));
        }
    }
    axes.iter()
        .filter(|n| n.iter().any(|c| !c.is_zero()))
        .any(|n| {
            let pa: Vec<BigInt> = a.iter().map(|p| dot(n, p)).collect();
            let pb: Vec<BigInt> = b.iter().map(|p| dot(n, p)).collect();
            let (amin, amax) = (pa.iter().min().unwrap(), pa.iter().max().unwrap());
            let (bmin, bmax) = (pb.iter().min().unwrap(), pb.iter().max().unwrap());
            amax < bmin || bmax < amin
        })
}

/// Sound acceptance: an edge of one set crosses the plane of the other (proper) triangle at a
/// point inside it, found by Cramer's rule `s + λ(t − s) = b0 + μ(b1 − b0) + ν(b2 − b0)`.
fn edge_pierces_triangle(a: &[P], b: &[P]) -> bool {
    if b.len() < 3 {
        return false;
    }
    let (u, w) = (sub(&b[1], &b[0]), sub(&b[2], &b[0]));
    edges(a.len()).iter().any(|&(i, j)| {
        let d = sub(&a[j], &a[i]);
        let r = sub(&b[0], &a[i]);
        let big_d = det(&d, &u, &w);
        if big_d.is_zero() {
            return false;
        }
        let sign = big_d.signum();
        let abs_d = big_d.abs();
        let lam = det(&r, &u, &w) * &sign;
        let mu = -det(&d, &r, &w) * &sign;
        let nu = -det(&d, &u, &r) * &sign;
        !lam.is_negative()
            && lam <= abs_d
            && !mu.is_negative()
            && !nu.is_negative()
            && &mu + &nu <= abs_d
    })
}

/// Whether the convex hulls of the point sets `a` and `b` (1 to 3 points each) intersect, exactly.
pub fn hulls_intersect_exact(a: &[DVec3], b: &[DVec3]) -> bool {
    assert!(!a.is_empty() && a.len() <= 3 && !b.is_empty() && b.len() <= 3);
    // Exact box rejection.
    for k in 0..3 {
        let amin = a.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
        let amax = a.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
        let bmin = b.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
        let bmax = b.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
        if amax < bmin || bmax < amin {
            return false;
        }
    }
    // A common corner is a common point.
    if a.iter().any(|p| b.contains(p)) {
        return true;
    }
    let all: Vec<DVec3> = a.iter().chain(b).copied().collect();
    let ints = scaled_integers(&all);
    let (ia, ib) = ints.split_at(a.len());
    // Shortcuts, each sound on its own; the LP below decides whatever they leave open.
    if separating_axis_exists(ia, ib) {
        return false;
    }
    if edge_pierces_triangle(ia, ib) || edge_pierces_triangle(ib, ia) {
        return true;
    }
    let q = |v: &BigInt| BigRational::from_integer(v.clone());
    // Equality system M x = r over x = (α, β) ≥ 0 (rows: x, y, z, Σα, Σβ).
    let mut rows: Vec<Vec<BigRational>> = Vec::new();
    for k in 0..3 {
        let mut row: Vec<BigRational> = ia.iter().map(|p| q(&p[k])).collect();
        row.extend(ib.iter().map(|p| -q(&p[k])));
        row.push(BigRational::zero());
        rows.push(row);
    }
    let (na, nb) = (ia.len(), ib.len());
    let indicator = |first: bool| -> Vec<BigRational> {
        let mut row: Vec<BigRational> = (0..na + nb)
            .map(|j| {
                if (j < na) == first {
                    BigRational::one()
                } else {
                    BigRational::zero()
                }
            })
            .collect();
        row.push(BigRational::one());
        row
    };
    rows.push(indicator(true));
    rows.push(indicator(false));
    lp_feasible(rows)
}

/// The LP alone, without the shortcuts (for testing the oracle against itself).
pub fn hulls_intersect_lp_only(a: &[DVec3], b: &[DVec3]) -> bool {
    let all: Vec<DVec3> = a.iter().chain(b).copied().collect();
    let ints = scaled_integers(&all);
    let (ia, ib) = ints.split_at(a.len());
    let q = |v: &BigInt| BigRational::from_integer(v.clone());
    let mut rows: Vec<Vec<BigRational>> = Vec::new();
    for k in 0..3 {
        let mut row: Vec<BigRational> = ia.iter().map(|p| q(&p[k])).collect();
        row.extend(ib.iter().map(|p| -q(&p[k])));
        row.push(BigRational::zero());
        rows.push(row);
    }
    for first in [true, false] {
        let mut row: Vec<BigRational> = (0..ia.len() + ib.len())
            .map(|j| {
                if (j < ia.len()) == first {
                    BigRational::one()
                } else {
                    BigRational::zero()
                }
            })
            .collect();
        row.push(BigRational::one());
        rows.push(row);
    }
    lp_feasible(rows)
}

/// Phase 1 of the simplex method with Bland's rule, in exact rationals: whether
/// `{x ≥ 0 : M x = r}` is non-empty, for rows `[M_i | r_i]` with `r_i ≥ 0`.
///
/// One artificial variable per row starts as the basis; the artificials' sum is minimised; the
/// system is feasible iff that minimum is 0. Bland's rule (lowest index enters; ties in the
/// ratio test leave by lowest basic index) guarantees termination.
fn lp_feasible(rows: Vec<Vec<BigRational>>) -> bool {
    let m = rows.len();
    let n = rows[0].len() - 1; // original variables
    let width = n + m + 1; // + artificials + rhs
                           // Tableau rows: [M_i | e_i | r_i]; the last row holds reduced costs and −(objective).
    let mut t: Vec<Vec<BigRational>> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r: Vec<BigRational> = row[..n].to_vec();
            r.extend((0..m).map(|k| {
                if k == i {
                    BigRational::one()
                } else {
                    BigRational::zero()
                }
            }));
            r.push(row[n].clone());
            r
        })
        .collect();
    let mut cost: Vec<BigRational> = (0..width)
        .map(|j| {
            if j < n || j == n + m {
                -t.iter()
                    .map(|r| r[j].clone())
                    .fold(BigRational::zero(), |a, b| a + b)
            } else {
                BigRational::zero()
            }
        })
        .collect();
    let mut basis: Vec<usize> = (n..n + m).collect();
    loop {
        let Some(enter) = (0..n + m).find(|&j| cost[j].is_negative()) else {
            return cost[n + m].is_zero(); // −(minimum of Σ artificials)
        };
        let mut leave: Option<usize> = None;
        for i in 0..m {
            if !t[i][enter].is_positive() {
                continue;
            }
            leave = Some(match leave {
                None => i,
                Some(l) => {
                    let ri = &t[i][width - 1] / &t[i][enter];
                    let rl = &t[l][width - 1] / &t[l][enter];
                    if ri < rl || (ri == rl && basis[i] < basis[l]) {
                        i
                    } else {
                        l
                    }
                }
            });
        }
        let l = leave.expect("phase-1 simplex cannot be unbounded");
        let inv = t[l][enter].recip();
        let pivot: Vec<BigRational> = t[l].iter().map(|x| x * &inv).collect();
        for (i, row) in t.iter_mut().enumerate() {
            if i != l && !row[enter].is_zero() {
                let f = row[enter].clone();
                for (x, p) in row.iter_mut().zip(&pivot) {
                    *x -= &f * p;
                }
            }
        }
        let f = cost[enter].clone();
        for (x, p) in cost.iter_mut().zip(&pivot) {
            *x -= &f * p;
        }
        t[l] = pivot;
        basis[l] = enter;
    }
}

/// Whether two closed (possibly degenerate) triangles intersect, exactly (see the module doc).
pub fn triangles_intersect_exact(a: &[DVec3; 3], b: &[DVec3; 3]) -> bool {
    hulls_intersect_exact(a, b)
}

/// Every intersecting pair `[face of a, face of b]` in world coordinates (each mesh under its
/// pose, through `transform_triangle`), sorted, computed pair by pair with the exact oracle.
pub fn brute_force_pairs(
    mesh_a: &TriMesh,
    pose_a: &Pose64,
    mesh_b: &TriMesh,
    pose_b: &Pose64,
) -> Vec<[u32; 2]> {
    let ta = world_triangles(mesh_a, pose_a);
    let tb = world_triangles(mesh_b, pose_b);
    let mut out = Vec::new();
    for (i, a) in ta.iter().enumerate() {
        for (j, b) in tb.iter().enumerate() {
            if triangles_intersect_exact(a, b) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

/// Every intersecting pair `[i, j]`, `i < j`, of faces of one mesh that share no vertex index
/// (identity pose), sorted, computed with the exact oracle.
pub fn brute_force_self_pairs(mesh: &TriMesh) -> Vec<[u32; 2]> {
    let t = world_triangles(mesh, &Pose64::IDENTITY);
    let faces = mesh.faces();
    let mut out = Vec::new();
    for i in 0..t.len() {
        for j in i + 1..t.len() {
            if faces[i].iter().any(|v| faces[j].contains(v)) {
                continue;
            }
            if triangles_intersect_exact(&t[i], &t[j]) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

/// World-space f64 corners of every face under `pose`.
pub fn world_triangles(mesh: &TriMesh, pose: &Pose64) -> Vec<[DVec3; 3]> {
    (0..mesh.face_count())
        .map(|i| transform_triangle(pose, mesh.triangle(i)))
        .collect()
}
