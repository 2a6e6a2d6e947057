//! EPA: penetration depth and direction of two intersecting convex shapes.
//!
//! The expanding polytope algorithm grows a polytope inside the Minkowski difference `A − B`,
//! starting from the tetrahedron GJK ends with (completed by support points when GJK stopped on
//! a lower-dimensional simplex), always splitting the face nearest the origin with the support
//! point along its normal, until that support point no longer moves the face by more than the
//! tolerance. The nearest face then gives the depth `d`, the unit direction `n` (translating B
//! by `d·n` separates the shapes) and, through the barycentrics of the origin's projection, a
//! witness point on each shape.
//!
//! ```
//! use gprox_query::epa::penetration;
//! use gprox_query::gjk::Sphere;
//! use glam::DVec3;
//! let a = Sphere { center: DVec3::ZERO, radius: 1.0 };
//! let b = Sphere { center: DVec3::new(1.5, 0.0, 0.0), radius: 1.0 };
//! let p = penetration(&a, &b, 1e-6).expect("overlapping");
//! assert!((p.depth - 0.5).abs() < 1e-3 && p.normal.x > 0.99);
//! ```

use crate::gjk::simplex::Vertex;
use crate::gjk::{gjk_run, Outcome, SupportMap};
use glam::DVec3;

/// Penetration of two intersecting convex shapes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penetration {
    /// Penetration depth: the shortest translation length that separates the shapes (≥ 0).
    pub depth: f64,
    /// Unit direction from A towards B: translating B by `depth * normal` makes them touch.
    pub normal: DVec3,
    /// Deepest point of A along `normal` (on A's boundary).
    pub point_a: DVec3,
    /// Deepest point of B along `-normal` (on B's boundary); `point_a - point_b = depth * normal`.
    pub point_b: DVec3,
}

/// Iteration cap of the expansion.
const MAX_ITERATIONS: usize = 256;

#[derive(Clone, Copy, Debug)]
struct Face {
    v: [usize; 3],
    normal: DVec3,
    dist: f64,
}

fn support<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(a: &A, b: &B, dir: DVec3) -> Vertex {
    let (pa, ia) = a.support(dir);
    let (pb, ib) = b.support(-dir);
    Vertex {
        w: pa - pb,
        a: pa,
        b: pb,
        ia,
        ib,
    }
}

fn make_face(verts: &[Vertex], v: [usize; 3]) -> Face {
    let (p0, p1, p2) = (verts[v[0]].w, verts[v[1]].w, verts[v[2]].w);
    let n = (p1 - p0).cross(p2 - p0);
    let len = n.length();
    if len <= f64::MIN_POSITIVE || !len.is_finite() {
        return Face {
            v,
            normal: DVec3::ZERO,
            dist: f64::INFINITY,
        };
    }
    let normal = n / len;
    Face {
        v,
        normal,
        dist: normal.dot(p0),
    }
}

/// Completes `verts` to 4 affinely independent Minkowski points; false when `A − B` is flat.
fn complete_tetrahedron<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    verts: &mut Vec<Vertex>,
    scale: f64,
) -> bool {
    let eps = 1e-12 * scale;
    while verts.len() < 4 {
        let dirs: Vec<DVec3> = match verts.len() {
            0 | 1 => vec![
                DVec3::X,
                -DVec3::X,
                DVec3::Y,
                -DVec3::Y,
                DVec3::Z,
                -DVec3::Z,
            ],
            2 => {
                let d = verts[1].w - verts[0].w;
                let (e1, e2) = d.normalize_or(DVec3::X).any_orthonormal_pair();
                vec![
                    e1,
                    -e1,
                    e2,
                    -e2,
                    (e1 + e2).normalize(),
                    -(e1 + e2).normalize(),
                ]
            }
            _ => {
                let n = (verts[1].w - verts[0].w).cross(verts[2].w - verts[0].w);
                let n = n.normalize_or(DVec3::Z);
                vec![n, -n]
            }
        };
        let mut best: Option<(f64, Vertex)> = None;
        for d in dirs {
            let c = support(a, b, d);
            let gap = affine_gap(verts, c.w);
            if gap > eps && best.is_none_or(|(g, _)| gap > g) {
                best = Some((gap, c));
            }
        }
        match best {
            Some((_, c)) => verts.push(c),
            None => return false,
        }
    }
    true
}

/// Distance of `p` from the affine hull of the vertices (≤ 3 of them).
fn affine_gap(verts: &[Vertex], p: DVec3) -> f64 {
    match verts.len() {
        0 => f64::INFINITY,
        1 => p.distance(verts[0].w),
        2 => {
            let d = verts[1].w - verts[0].w;
            let l = d.length_squared();
            if l <= f64::MIN_POSITIVE {
                return p.distance(verts[0].w);
            }
            let r = p - verts[0].w;
            (r - d * (r.dot(d) / l)).length()
        }
        _ => {
            let n = (verts[1].w - verts[0].w).cross(verts[2].w - verts[0].w);
            let l = n.length();
            if l <= f64::MIN_POSITIVE {
                return 0.0;
            }
            (p - verts[0].w).dot(n).abs() / l
        }
    }
}

/// Barycentric weights (unclamped) of the projection of `p` on the plane of triangle (a, b, c).
fn barycentric(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let n = (b - a).cross(c - a);
    let n2 = n.length_squared();
    if n2 <= f64::MIN_POSITIVE {
        return [1.0, 0.0, 0.0];
    }
    let u = (c - b).cross(p - b).dot(n) / n2;
    let v = (a - c).cross(p - c).dot(n) / n2;
    [u, v, 1.0 - u - v]
}

/// Clamps weights to the triangle (non-negative, summing to 1).
fn clamp_weights(l: [f64; 3]) -> [f64; 3] {
    let l = l.map(|x| x.max(0.0));
    let s = l[0] + l[1] + l[2];
    if s > 0.0 {
        l.map(|x| x / s)
    } else {
        [1.0 / 3.0; 3]
    }
}

/// Penetration depth and direction of two convex shapes; `None` when they do not intersect.
/// `rel_tol` bounds the relative error of the depth (1e-9 is a good default for polytopes;
/// smooth shapes converge to it linearly).
pub fn penetration<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    rel_tol: f64,
) -> Option<Penetration> {
    let (simplex, outcome) = gjk_run(a, b, 1e-12, false);
    if outcome != Outcome::Intersecting {
        return None;
    }
    let rel_tol = if rel_tol.is_finite() {
        rel_tol.max(1e-15)
    } else {
        1e-9
    };
    let mut verts = simplex.verts.clone();
    let scale = [
        DVec3::X,
        -DVec3::X,
        DVec3::Y,
        -DVec3::Y,
        DVec3::Z,
        -DVec3::Z,
    ]
    .iter()
    .map(|&d| support(a, b, d).w.length())
    .fold(f64::MIN_POSITIVE, f64::max);
    if !complete_tetrahedron(a, b, &mut verts, scale) {
        // A − B is flat: touching along a plane, depth 0 along its normal.
        let point_a = simplex.point_a();
        let point_b = simplex.point_b();
        let normal = if verts.len() >= 3 {
            (verts[1].w - verts[0].w)
                .cross(verts[2].w - verts[0].w)
                .normalize_or(DVec3::Z)
        } else {
            DVec3::Z
        };
        return Some(Penetration {
            depth: 0.0,
            normal,
            point_a,
            point_b,
        });
    }
    // Outward-oriented tetrahedron faces.
    let mut faces = Vec::with_capacity(64);
    for (f, opp) in [
        ([0, 1, 2], 3),
        ([0, 3, 1], 2),
        ([0, 2, 3], 1),
        ([1, 3, 2], 0),
    ] {
        let mut face = make_face(&verts, f);
        if face.normal.dot(verts[opp].w - verts[f[0]].w) > 0.0 {
            face = make_face(&verts, [f[0], f[2], f[1]]);
        }
        faces.push(face);
    }
    let mut best = faces[0];
    for _ in 0..MAX_ITERATIONS {
        best = *faces
            .iter()
            .min_by(|x, y| x.dist.total_cmp(&y.dist))
            .expect("a polytope has faces");
        if !best.dist.is_finite() {
            break;
        }
        let c = support(a, b, best.normal);
        let gain = c.w.dot(best.normal) - best.dist;
        if gain <= rel_tol * best.dist.abs().max(1e-9 * scale) {
            break;
        }
        // Remove every face that sees the new point; keep the horizon.
        let new = verts.len();
        verts.push(c);
        let mut edges: Vec<[usize; 2]> = Vec::new();
        faces.retain(|f| {
            let visible = f.dist.is_finite() && f.normal.dot(c.w - verts[f.v[0]].w) > 0.0;
            if visible {
                for k in 0..3 {
                    let e = [f.v[k], f.v[(k + 1) % 3]];
                    if let Some(pos) = edges.iter().position(|x| *x == [e[1], e[0]]) {
                        edges.swap_remove(pos);
                    } else {
                        edges.push(e);
                    }
                }
            }
            !visible
        });
        if edges.is_empty() {
            break;
        }
        for e in edges {
            faces.push(make_face(&verts, [e[0], e[1], new]));
        }
    }
    // Coplanar faces of the polytope split one facet of A − B: take the piece holding the
    // projection of the origin (the nearest facet of a convex polytope always holds it).
    let depth = best.dist.max(0.0);
    let plane_tol = 1e-9 * scale;
    let mut chosen = (best, f64::NEG_INFINITY, [1.0, 0.0, 0.0]);
    for f in faces.iter().chain(std::iter::once(&best)) {
        if !(f.dist <= best.dist + plane_tol && f.normal.dot(best.normal) > 1.0 - 1e-9) {
            continue;
        }
        let [i, j, k] = f.v;
        let l = barycentric(f.normal * f.dist, verts[i].w, verts[j].w, verts[k].w);
        let worst = l[0].min(l[1]).min(l[2]);
        if worst > chosen.1 {
            chosen = (*f, worst, l);
        }
    }
    let (face, _, l) = chosen;
    let normal = face.normal.normalize_or(DVec3::Z);
    let l = clamp_weights(l);
    let [i, j, k] = face.v;
    let point_a = verts[i].a * l[0] + verts[j].a * l[1] + verts[k].a * l[2];
    let point_b = verts[i].b * l[0] + verts[j].b * l[1] + verts[k].b * l[2];
    Some(Penetration {
        depth,
        normal,
        point_a,
        point_b,
    })
}
