//! Certified bounds of `max |F(u,v)|` for vector-valued tensor Bézier patches `F` by best-first
//! de Casteljau subdivision: the largest control-point norm of a piece bounds `|F|` on it
//! (convex hull property), and its corner control points are values of `F`, so a corner above
//! the target proves the maximum exceeds it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::DVec3;

/// Most Bézier sub-patches one refinement examines before it returns its current bound.
pub const COONS_REFINE_BUDGET: usize = 64;

struct Piece {
    bound: f64,
    pts: Vec<DVec3>,
}

impl PartialEq for Piece {
    fn eq(&self, o: &Self) -> bool {
        self.bound == o.bound
    }
}
impl Eq for Piece {}
impl PartialOrd for Piece {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Piece {
    fn cmp(&self, o: &Self) -> Ordering {
        self.bound.total_cmp(&o.bound)
    }
}

fn piece(pts: Vec<DVec3>) -> Piece {
    let bound = pts.iter().map(|c| c.length()).fold(0.0, f64::max);
    Piece { bound, pts }
}

/// Norm of the corner control points (values of the patch at its parameter corners).
fn corner_max(pts: &[DVec3], [p, q]: [usize; 2]) -> f64 {
    let w = q + 1;
    [0, q, p * w, p * w + q]
        .iter()
        .map(|&k| pts[k].length())
        .fold(0.0, f64::max)
}

/// Largest second difference of the net along u and along v.
fn second_differences(pts: &[DVec3], [p, q]: [usize; 2]) -> [f64; 2] {
    let w = q + 1;
    let mut out = [0.0f64; 2];
    for i in 0..=p {
        for j in 0..=q {
            let c = pts[i * w + j];
            if i > 0 && i < p {
                out[0] =
                    out[0].max((pts[(i - 1) * w + j] - 2.0 * c + pts[(i + 1) * w + j]).length());
            }
            if j > 0 && j < q {
                out[1] = out[1].max((pts[i * w + j - 1] - 2.0 * c + pts[i * w + j + 1]).length());
            }
        }
    }
    out
}

/// Halves a row-major `(p+1) x (q+1)` net at the parameter middle along u (`along_u`) or v.
fn halve(pts: &[DVec3], [p, q]: [usize; 2], along_u: bool) -> (Vec<DVec3>, Vec<DVec3>) {
    let w = q + 1;
    let (mut a, mut b) = (pts.to_vec(), pts.to_vec());
    let (lines, len) = if along_u {
        (q + 1, p + 1)
    } else {
        (p + 1, q + 1)
    };
    let idx = |line: usize, k: usize| if along_u { k * w + line } else { line * w + k };
    let mut tmp = vec![DVec3::ZERO; len];
    for line in 0..lines {
        for (k, t) in tmp.iter_mut().enumerate() {
            *t = pts[idx(line, k)];
        }
        a[idx(line, 0)] = tmp[0];
        b[idx(line, len - 1)] = tmp[len - 1];
        for r in 1..len {
            for k in 0..len - r {
                tmp[k] = (tmp[k] + tmp[k + 1]) * 0.5;
            }
            a[idx(line, r)] = tmp[0];
            b[idx(line, len - 1 - r)] = tmp[len - 1 - r];
        }
    }
    (a, b)
}

/// An upper bound of `max |F|` over the patches `pieces` (row-major control nets of degrees
/// `[p, q]`), refined best-first until it is at most `target`, a corner value above `target`
/// proves the maximum exceeds it, or [`COONS_REFINE_BUDGET`] sub-patches were examined.
/// The result is an upper bound computed in floating point: callers add a rounding margin.
pub fn max_norm_within(pieces: Vec<Vec<DVec3>>, degree: [usize; 2], target: f64) -> f64 {
    let mut heap: BinaryHeap<Piece> = pieces.into_iter().map(piece).collect();
    let mut done = 0.0f64;
    let mut examined = heap.len();
    while let Some(top) = heap.pop() {
        if top.bound <= target {
            done = done.max(top.bound);
            break;
        }
        if corner_max(&top.pts, degree) > target || examined >= COONS_REFINE_BUDGET {
            heap.push(top);
            break;
        }
        let [du, dv] = second_differences(&top.pts, degree);
        let along_u = if degree[1] == 0 {
            true
        } else if degree[0] == 0 {
            false
        } else {
            du >= dv
        };
        let (a, b) = halve(&top.pts, degree, along_u);
        examined += 2;
        for half in [a, b] {
            let h = piece(half);
            if h.bound <= target {
                done = done.max(h.bound);
            } else {
                heap.push(h);
            }
        }
    }
    heap.iter().map(|x| x.bound).fold(done, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_reproduce_the_patch() {
        // A bicubic-by-quadratic patch; the halves evaluated at their own parameters equal the
        // original (de Casteljau evaluation).
        let [p, q] = [3usize, 2usize];
        let pts: Vec<DVec3> = (0..(p + 1) * (q + 1))
            .map(|k| DVec3::new((k * 7 % 5) as f64, (k * 3 % 4) as f64, k as f64 * 0.1))
            .collect();
        let eval = |pts: &[DVec3], u: f64, v: f64| {
            let b = |n: usize, i: usize, t: f64| {
                let c = (0..i).fold(1.0, |a, k| a * (n - k) as f64 / (k + 1) as f64);
                c * t.powi(i as i32) * (1.0 - t).powi((n - i) as i32)
            };
            let mut acc = DVec3::ZERO;
            for i in 0..=p {
                for j in 0..=q {
                    acc += pts[i * (q + 1) + j] * (b(p, i, u) * b(q, j, v));
                }
            }
            acc
        };
        for along_u in [true, false] {
            let (a, b) = halve(&pts, [p, q], along_u);
            for (s, t) in [(0.1, 0.7), (0.5, 0.5), (0.9, 0.2)] {
                let (ua, va, ub, vb) = if along_u {
                    (0.5 * s, t, 0.5 + 0.5 * s, t)
                } else {
                    (s, 0.5 * t, s, 0.5 + 0.5 * t)
                };
                assert!((eval(&a, s, t) - eval(&pts, ua, va)).length() < 1e-12);
                assert!((eval(&b, s, t) - eval(&pts, ub, vb)).length() < 1e-12);
            }
        }
        // The refined bound is never below a value of the patch, and not above the net bound.
        let net = pts.iter().map(|c| c.length()).fold(0.0, f64::max);
        let r = max_norm_within(vec![pts.clone()], [p, q], 0.0);
        assert!(r <= net && r >= eval(&pts, 0.5, 0.5).length());
    }
}
