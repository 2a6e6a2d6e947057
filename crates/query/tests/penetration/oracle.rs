//! The exact brute-force oracle: where a point is relative to a closed triangle mesh, by
//! integer ray casting over all faces (random generic rays in 3-D, Cramer's rule in `BigInt`,
//! a new ray whenever one meets an edge or a vertex or runs in a face's plane), with sound
//! floating box filters in front. No code or formulation shared with the library's perturbed
//! axis ray.

use glam::DVec3;
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

type I3 = [BigInt; 3];

/// Exact integers for f64 coordinates at one common power-of-two scale.
fn integers(points: &[DVec3]) -> Vec<I3> {
    let parts: Vec<[(i8, u64, i16); 3]> = points
        .iter()
        .map(|p| {
            p.to_array().map(|x| {
                let (m, e, s) = num_traits::float::FloatCore::integer_decode(x);
                (s, m, e)
            })
        })
        .collect();
    let min_e = parts
        .iter()
        .flatten()
        .filter(|c| c.1 != 0)
        .map(|c| c.2)
        .min()
        .unwrap_or(0);
    parts
        .iter()
        .map(|p| {
            p.map(|(s, m, e)| {
                let v = BigInt::from(m) << ((e - min_e) as usize);
                if s < 0 {
                    -v
                } else {
                    v
                }
            })
        })
        .collect()
}

fn sub(a: &I3, b: &I3) -> I3 {
    [&a[0] - &b[0], &a[1] - &b[1], &a[2] - &b[2]]
}
fn dot(a: &I3, b: &I3) -> BigInt {
    &a[0] * &b[0] + &a[1] * &b[1] + &a[2] * &b[2]
}
fn cross(a: &I3, b: &I3) -> I3 {
    [
        &a[1] * &b[2] - &a[2] * &b[1],
        &a[2] * &b[0] - &a[0] * &b[2],
        &a[0] * &b[1] - &a[1] * &b[0],
    ]
}
fn is_zero(a: &I3) -> bool {
    a.iter().all(Zero::is_zero)
}

/// `p` on the closed segment `[a, b]`.
fn on_segment(p: &I3, a: &I3, b: &I3) -> bool {
    let (ab, ap) = (sub(b, a), sub(p, a));
    is_zero(&cross(&ab, &ap)) && !dot(&ap, &ab).is_negative() && dot(&ap, &ab) <= dot(&ab, &ab)
}

/// `p` on the closed triangle `t`.
fn on_triangle(p: &I3, t: &[I3; 3]) -> bool {
    let n = cross(&sub(&t[1], &t[0]), &sub(&t[2], &t[0]));
    if is_zero(&n) {
        return (0..3).any(|i| on_segment(p, &t[i], &t[(i + 1) % 3]));
    }
    if !dot(&n, &sub(p, &t[0])).is_zero() {
        return false;
    }
    (0..3).all(|i| {
        let e = sub(&t[(i + 1) % 3], &t[i]);
        !dot(&cross(&e, &sub(p, &t[i])), &n).is_negative()
    })
}

/// Where the oracle puts a point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Truth {
    /// On a closed face.
    Surface,
    /// Off the surface, with the winding number of the mesh around it.
    Winding(i32),
}

/// Signed crossings of the ray `p + λ d` (λ > 0) with the faces, or None when the ray is not
/// generic (meets an edge or a vertex, or runs inside a face's plane).
fn ray_winding(p: &I3, d: &I3, tris: &[[I3; 3]]) -> Option<i32> {
    let mut w = 0;
    for t in tris {
        let (e1, e2) = (sub(&t[1], &t[0]), sub(&t[2], &t[0]));
        let n = cross(&e1, &e2);
        let rhs = sub(&t[0], p);
        let det = dot(d, &n);
        if det.is_zero() {
            if !is_zero(&n) && dot(&n, &rhs).is_zero() {
                return None;
            }
            continue;
        }
        // p + λ d = t0 + β e1 + γ e2, Cramer on the columns [d, -e1, -e2].
        let lam = dot(&rhs, &n);
        let beta = dot(d, &cross(&e2, &rhs));
        let gamma = dot(d, &cross(&rhs, &e1));
        let s = det.signum();
        let (lam, beta, gamma, det) = (lam * &s, beta * &s, gamma * &s, det.abs());
        if !lam.is_positive() {
            continue;
        }
        let sum = &beta + &gamma;
        if beta.is_negative() || gamma.is_negative() || sum > det {
            continue;
        }
        if beta.is_zero() || gamma.is_zero() || sum == det {
            return None;
        }
        w += if s.is_positive() { 1 } else { -1 };
    }
    Some(w)
}

/// Whether the ray `p + λ d` (λ ≥ 0) may meet the box `[lo, hi]`: a sound floating filter
/// (the box is widened by far more than the rounding of the slab parameters).
fn ray_may_hit(p: DVec3, d: DVec3, lo: DVec3, hi: DVec3, slack: f64) -> bool {
    let (mut t0, mut t1) = (0.0f64, f64::INFINITY);
    for i in 0..3 {
        let (l, h) = (lo[i] - slack, hi[i] + slack);
        if d[i] == 0.0 {
            if p[i] < l || p[i] > h {
                return false;
            }
            continue;
        }
        let (a, b) = ((l - p[i]) / d[i], (h - p[i]) / d[i]);
        t0 = t0.max(a.min(b));
        t1 = t1.min(a.max(b));
    }
    t0 <= t1 * (1.0 + 1e-9) + 1e-9
}

/// Exact place of every point of `pts` relative to the closed mesh with world corners `tris`
/// (floating box filters first, each sound; the exact integer tests decide).
pub fn oracle(pts: &[DVec3], tris: &[[DVec3; 3]]) -> Vec<Truth> {
    let mut all: Vec<DVec3> = pts.to_vec();
    all.extend(tris.iter().flatten());
    let ints = integers(&all);
    let (ip, it) = ints.split_at(pts.len());
    let it: Vec<[I3; 3]> = it
        .chunks(3)
        .map(|c| [c[0].clone(), c[1].clone(), c[2].clone()])
        .collect();
    let boxes: Vec<(DVec3, DVec3)> = tris
        .iter()
        .map(|t| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2])))
        .collect();
    let slack = 1e-9
        * (1.0
            + all
                .iter()
                .map(|p| p.abs().max_element())
                .fold(0.0, f64::max));
    let mut seed = 0x2545_f491_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 2001) as i64 - 1000
    };
    ip.iter()
        .zip(pts)
        .map(|(p, &pf)| {
            let on = boxes.iter().zip(&it).any(|((lo, hi), t)| {
                lo.cmple(pf).all() && pf.cmple(*hi).all() && on_triangle(p, t)
            });
            if on {
                return Truth::Surface;
            }
            loop {
                let d = [next(), next(), next()];
                if d == [0, 0, 0] {
                    continue;
                }
                let df = DVec3::new(d[0] as f64, d[1] as f64, d[2] as f64);
                let near: Vec<[I3; 3]> = boxes
                    .iter()
                    .zip(&it)
                    .filter(|((lo, hi), _)| ray_may_hit(pf, df, *lo, *hi, slack))
                    .map(|(_, t)| t.clone())
                    .collect();
                if let Some(w) = ray_winding(p, &d.map(BigInt::from), &near) {
                    return Truth::Winding(w);
                }
            }
        })
        .collect()
}
