//! A simple broad phase for `pairs: "all"` queries: world boxes of the objects' BVH roots and a
//! sweep along x.

use glam::{DVec3, Vec3};
use gprox_geometry::transform::{transform_point, Pose64};

/// World-space box (f64) of an object whose local BVH root box is `min..max`, under `pose`,
/// slightly inflated so f64 rounding of the corner transform can never drop a contact.
pub fn world_box(min: [f32; 3], max: [f32; 3], pose: &Pose64) -> (DVec3, DVec3) {
    let (mut lo, mut hi) = (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN));
    for i in 0..8 {
        let c = Vec3::new(
            if i & 1 == 0 { min[0] } else { max[0] },
            if i & 2 == 0 { min[1] } else { max[1] },
            if i & 4 == 0 { min[2] } else { max[2] },
        );
        let p = transform_point(pose, c);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let pad =
        1e-9 * (hi - lo).max_element().max(1.0) + 1e-12 * hi.abs().max(lo.abs()).max_element();
    (lo - DVec3::splat(pad), hi + DVec3::splat(pad))
}

/// All pairs `[i, j]` (`i < j`) whose boxes overlap (closed intervals), sorted.
pub fn overlapping_pairs(boxes: &[(DVec3, DVec3)]) -> Vec<[usize; 2]> {
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|&a, &b| boxes[a].0.x.total_cmp(&boxes[b].0.x).then(a.cmp(&b)));
    let mut out = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if boxes[j].0.x > boxes[i].1.x {
                break;
            }
            let (a, b) = (boxes[i], boxes[j]);
            if a.0.cmple(b.1).all() && b.0.cmple(a.1).all() {
                out.push([i.min(j), i.max(j)]);
            }
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_matches_all_pairs() {
        // Deterministic pseudo-random boxes; compare with the O(n^2) test.
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as f64 / (1u64 << 31) as f64
        };
        let boxes: Vec<(DVec3, DVec3)> = (0..300)
            .map(|_| {
                let lo = DVec3::new(next(), next(), next()) * 10.0;
                (lo, lo + DVec3::new(next(), next(), next()))
            })
            .collect();
        let mut brute = Vec::new();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                let (a, b) = (boxes[i], boxes[j]);
                if a.0.cmple(b.1).all() && b.0.cmple(a.1).all() {
                    brute.push([i, j]);
                }
            }
        }
        assert!(!brute.is_empty());
        assert_eq!(overlapping_pairs(&boxes), brute);
    }
}
