//! Nearest-face search over a [`World`] (an object's tree refitted in world space, shared with
//! the broad phase's narrow phase in `crate::world`).

use glam::DVec3;

pub(crate) use crate::world::World;

/// The nearest face to a point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nearest {
    pub(crate) distance: f64,
    pub(crate) point: DVec3,
    pub(crate) face: u32,
}

impl World<'_> {
    /// The face nearest to `p` by [`World::point_distance`], smallest face id among equal
    /// distances: exactly the minimum a loop over all faces finds. `seeds` (faces known to be
    /// near, e.g. those the inside ray crossed) give the first bound; then depth-first, nearer
    /// child first. A subtree is skipped only when its box is farther than the best distance
    /// plus a bound on the rounding of the box and triangle distances (so the minimum is never
    /// pruned, and a seed never hides a smaller face id at the same distance).
    pub(crate) fn nearest(&self, p: DVec3, seeds: &[u32], stack: &mut Vec<(u32, f64)>) -> Nearest {
        let slack = 1e-13 * (self.magnitude + p.abs().max_element());
        let mut best = Nearest {
            distance: f64::INFINITY,
            point: p,
            face: u32::MAX,
        };
        let mut cut = f64::INFINITY;
        let offer = |face: u32, best: &mut Nearest, cut: &mut f64| {
            let (d, q) = self.point_distance(p, face);
            if d < best.distance || (d == best.distance && face < best.face) {
                *best = Nearest {
                    distance: d,
                    point: q,
                    face,
                };
                let r = d + slack;
                *cut = r * r * (1.0 + 1e-12);
            }
        };
        for &f in seeds {
            offer(f, &mut best, &mut cut);
        }
        stack.clear();
        let root = self.root();
        stack.push((root, self.nodes[root as usize].distance_squared(p)));
        while let Some((i, lb)) = stack.pop() {
            if lb > cut {
                continue;
            }
            let n = &self.nodes[i as usize];
            if n.is_leaf() {
                offer(n.left, &mut best, &mut cut);
                continue;
            }
            let (l, r) = (n.left, n.right);
            let dl = self.nodes[l as usize].distance_squared(p);
            let dr = self.nodes[r as usize].distance_squared(p);
            let (near, far) = if dl <= dr {
                ((l, dl), (r, dr))
            } else {
                ((r, dr), (l, dl))
            };
            if far.1 <= cut {
                stack.push(far);
            }
            if near.1 <= cut {
                stack.push(near);
            }
        }
        best
    }
}
