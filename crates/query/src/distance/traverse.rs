//! The best-first BVTT search behind [`super::distance`] and [`super::distance_wide`], written
//! once over [`Bvtt`]: the binary trees ([`super::binary`]) and the eight-wide RSS trees
//! ([`super::wide`]) differ only in how a node pair expands into children with lower bounds.

use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use glam::{DMat3, DVec3};
use gprox_bvh::bounding_volume::{nearest_rotation, pose_parts, stretch};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::TriMesh;
use rayon::prelude::*;

use super::{DistanceOptions, DistanceResult};

/// The bounding-volume test tree of two trees: node pairs, their children and bounds.
pub(super) trait Bvtt: Sync {
    /// The pair of the two roots.
    const ROOT: (u32, u32);
    /// Whether both nodes of the pair are leaves.
    fn is_leaf_pair(&self, a: u32, b: u32) -> bool;
    /// The faces of a leaf pair.
    fn faces(&self, a: u32, b: u32) -> (u32, u32);
    /// Writes the child pairs of a non-leaf pair to `out` as `(a', b', lb)`, `lb` a world lower
    /// bound of the distance between its contents, and returns how many there are.
    fn expand(&self, a: u32, b: u32, out: &mut Children) -> usize;
    /// Distance between the centres of the pair's volumes (in A's frame; a heuristic for ties
    /// of the first descent, not a bound).
    fn centre_gap(&self, a: u32, b: u32) -> f64;
}

/// Room for the children of one node pair.
pub(super) type Children = [(u32, u32, f64); 8];

/// An empty [`Children`] buffer.
const NO_CHILDREN: Children = [(0, 0, 0.0); 8];

/// B's model frame mapped into A's: the nearest rotation `q` of A⁻¹·B's linear part and the
/// translation `t`, with `grow` (the residual `‖A⁻¹B − q‖` times the reach of B's contents)
/// added to B's mapped volumes so bounds stay conservative, and `sigma` (a lower bound of A's
/// smallest singular value) taking local distances to world ones.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mapped {
    pub(super) q: DMat3,
    pub(super) t: DVec3,
    pub(super) grow: f64,
    /// The inverse map (A's frame into B's): `qᵀ`, `−qᵀ·t`.
    pub(super) q_inv: DMat3,
    pub(super) t_inv: DVec3,
    sigma: f64,
}

impl Mapped {
    /// The map of `b`'s frame into `a`'s; `reach_b` bounds `|p|` over B's contents.
    pub(super) fn new(a: &Pose64, b: &Pose64, reach_b: f64) -> Self {
        let (ma, ta) = pose_parts(a);
        let (mb, tb) = pose_parts(b);
        let inv = ma.inverse();
        let (q, eps) = nearest_rotation(&(inv * mb));
        let sigma = 1.0 / stretch(&inv);
        let t = inv * (tb - ta);
        Self {
            q,
            t,
            q_inv: q.transpose(),
            t_inv: -(q.transpose() * t),
            grow: if eps.is_finite() {
                eps * reach_b
            } else {
                f64::INFINITY
            },
            // A singular pose cannot be bounded: fall back to a bound that prunes nothing.
            sigma: if sigma.is_finite() && eps.is_finite() {
                sigma
            } else {
                0.0
            },
        }
    }

    /// A local (A's frame) lower bound as a world one.
    #[inline(always)]
    pub(super) fn world(&self, lb: f64) -> f64 {
        lb * (self.sigma * (1.0 - 1e-12))
    }
}

/// The best triangle pair so far.
#[derive(Clone, Copy, Debug)]
struct Best {
    d: f64,
    pa: DVec3,
    pb: DVec3,
    ta: u32,
    tb: u32,
}

/// A node pair waiting in the queue: a max-heap on `(key, pair)` pops the least bound first,
/// ties by node pair, with two integer compares (the key is the bound's bit pattern inverted:
/// non-negative floats and +∞ order like their bits; −0 and NaN are stored as 0, explored
/// first and never lost at the bottom of the heap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: u64,
    pair: u64,
}

impl Entry {
    #[inline(always)]
    fn new(lb: f64, a: u32, b: u32) -> Self {
        let lb = if lb > 0.0 { lb } else { 0.0 };
        Self {
            key: !lb.to_bits(),
            pair: !((u64::from(a) << 32) | u64::from(b)),
        }
    }

    /// The lower bound (≥ 0).
    #[inline(always)]
    fn lb(&self) -> f64 {
        f64::from_bits(!self.key)
    }

    /// The node pair.
    #[inline(always)]
    fn nodes(&self) -> (u32, u32) {
        let p = !self.pair;
        ((p >> 32) as u32, p as u32)
    }
}

/// A lower bound of the distance between triangles `t` and `o`: how far `o` lies on one side
/// of `t`'s plane (0 when it meets the plane, `t` is degenerate or a figure is not finite),
/// made smaller by far more than its rounding (relative `1e-12` of the coordinates'
/// magnitudes).
#[inline]
fn plane_gap(t: &[DVec3; 3], o: &[DVec3; 3]) -> f64 {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    let len = n.length();
    if !len.is_finite() || len <= 0.0 {
        return 0.0;
    }
    let d = o.map(|v| n.dot(v - t[0]) / len);
    if d.iter().any(|x| !x.is_finite()) {
        return 0.0;
    }
    let (lo, hi) = (d[0].min(d[1]).min(d[2]), d[0].max(d[1]).max(d[2]));
    let gap = if lo > 0.0 {
        lo
    } else if hi < 0.0 {
        -hi
    } else {
        return 0.0;
    };
    let scale = t
        .iter()
        .chain(o)
        .fold(0.0f64, |m, v| m.max(v.abs().max_element()));
    gap - 1e-12 * (scale + gap)
}

/// Shared state of one query: the upper bound (as f64 bits; non-negative floats order like
/// their bits) and its witness.
struct Shared {
    upper: AtomicU64,
    best: Mutex<Best>,
    stop: AtomicBool,
}

/// One query: the meshes, poses and options around a [`Bvtt`].
pub(super) struct Search<'q, T> {
    tt: T,
    am: &'q TriMesh,
    bm: &'q TriMesh,
    pose_a: Pose64,
    pose_b: Pose64,
    options: DistanceOptions,
}

impl<'q, T: Bvtt> Search<'q, T> {
    /// The query of meshes `a` and `b` at their poses over the BVTT `tt`.
    pub(super) fn new(
        tt: T,
        (am, pose_a): (&'q TriMesh, Pose64),
        (bm, pose_b): (&'q TriMesh, Pose64),
        options: &DistanceOptions,
    ) -> Self {
        Self {
            tt,
            am,
            bm,
            pose_a,
            pose_b,
            options: *options,
        }
    }

    fn threshold(&self) -> f64 {
        self.options.threshold.unwrap_or(f64::INFINITY)
    }

    /// Whether `d` answers a threshold query (below its threshold).
    fn below(&self, d: f64) -> bool {
        self.options.threshold.is_some_and(|t| d < t)
    }

    /// Pairs with a lower bound at or above this cannot matter.
    #[inline]
    fn cut(&self, upper: f64) -> f64 {
        let o = &self.options;
        (upper - o.abs_tol.max(o.rel_tol * upper)).min(self.threshold())
    }

    fn leaf_pair(&self, a: u32, b: u32) -> Best {
        let (ta, tb) = self.tt.faces(a, b);
        self.face_pair(ta, tb)
    }

    /// The world triangles of face `ta` of A and face `tb` of B.
    fn world_faces(&self, ta: u32, tb: u32) -> [[DVec3; 3]; 2] {
        [
            transform_triangle(&self.pose_a, self.am.triangle(ta as usize)),
            transform_triangle(&self.pose_b, self.bm.triangle(tb as usize)),
        ]
    }

    /// The exact distance of face `ta` of A and face `tb` of B.
    fn face_pair(&self, ta: u32, tb: u32) -> Best {
        let [x, y] = self.world_faces(ta, tb);
        self.exact(ta, tb, &x, &y)
    }

    /// The exact distance of the world triangles `x` (face `ta` of A) and `y` (face `tb` of B).
    fn exact(&self, ta: u32, tb: u32, x: &[DVec3; 3], y: &[DVec3; 3]) -> Best {
        let r = triangle_distance(x, y);
        Best {
            d: r.distance,
            pa: r.point_a,
            pb: r.point_b,
            ta,
            tb,
        }
    }

    /// Greedy descent along the nearest child pair (ties: the nearer centres): the first
    /// upper bound.
    fn greedy(&self) -> Best {
        let (mut a, mut b) = T::ROOT;
        while !self.tt.is_leaf_pair(a, b) {
            let mut pick: Option<(u32, u32, f64)> = None;
            let mut kids = NO_CHILDREN;
            let n = self.tt.expand(a, b, &mut kids);
            for &(x, y, lb) in &kids[..n] {
                let better = match pick {
                    None => true,
                    Some((_, _, l)) if lb != l => lb < l,
                    Some((pa, pb, _)) => self.tt.centre_gap(x, y) < self.tt.centre_gap(pa, pb),
                };
                if better {
                    pick = Some((x, y, lb));
                }
            }
            let Some((x, y, _)) = pick else { break };
            (a, b) = (x, y);
        }
        self.leaf_pair(a, b)
    }

    fn offer(&self, shared: &Shared, cand: Best) {
        if cand.d < f64::from_bits(shared.upper.load(Ordering::Relaxed)) {
            let mut best = shared.best.lock().unwrap_or_else(|e| e.into_inner());
            if cand.d < best.d {
                *best = cand;
                shared.upper.store(cand.d.to_bits(), Ordering::Relaxed);
            }
        }
        if self.below(cand.d) {
            shared.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Best-first search below `start`; returns the smallest bound it discarded. Of the
    /// children of an expanded pair, the nearest one is processed next without a trip through
    /// the heap (a dive along the best child) and only the others are queued: fewer heap
    /// operations, nearly the same order.
    fn best_first(&self, start: Entry, shared: &Shared) -> f64 {
        let mut lower = f64::INFINITY;
        let mut heap = BinaryHeap::with_capacity(256);
        let mut kids = NO_CHILDREN;
        let mut dive = Some(start);
        loop {
            let (e, from_heap) = match dive.take() {
                Some(e) => (e, false),
                None => match heap.pop() {
                    Some(e) => (e, true),
                    None => break,
                },
            };
            let upper = f64::from_bits(shared.upper.load(Ordering::Relaxed));
            let cut = self.cut(upper);
            let (lb, (ea, eb)) = (e.lb(), e.nodes());
            if lb >= cut || shared.stop.load(Ordering::Relaxed) {
                lower = lower.min(lb);
                if from_heap || shared.stop.load(Ordering::Relaxed) {
                    // Everything left in the heap is at least this far.
                    if let Some(top) = heap.peek() {
                        lower = lower.min(top.lb());
                    }
                    break;
                }
                continue;
            }
            if self.tt.is_leaf_pair(ea, eb) {
                // Most leaf pairs reached do not improve the bound: the plane test skips those
                // whose triangles lie on either side of one's plane by at least the cut.
                let (ta, tb) = self.tt.faces(ea, eb);
                let [x, y] = self.world_faces(ta, tb);
                let plane = plane_gap(&x, &y).max(plane_gap(&y, &x));
                if plane >= cut {
                    lower = lower.min(plane);
                    continue;
                }
                self.offer(shared, self.exact(ta, tb, &x, &y));
                continue;
            }
            let mut near: Option<Entry> = None;
            let n = self.tt.expand(ea, eb, &mut kids);
            for &(a, b, lb) in &kids[..n] {
                if lb >= cut {
                    lower = lower.min(lb);
                    continue;
                }
                let c = Entry::new(lb, a, b);
                match near {
                    Some(n) if n.key >= c.key => heap.push(c),
                    Some(n) => {
                        heap.push(n);
                        near = Some(c);
                    }
                    None => near = Some(c),
                }
            }
            dive = near;
        }
        lower
    }

    /// Breadth-first expansion into at least `target` pairs (for parallel tasks).
    fn frontier(&self, target: usize, shared: &Shared, lower: &mut f64) -> Vec<Entry> {
        let (a, b) = T::ROOT;
        let mut front = vec![Entry::new(0.0, a, b)];
        let mut kids = NO_CHILDREN;
        loop {
            let leaf = |e: &Entry| {
                let (a, b) = e.nodes();
                self.tt.is_leaf_pair(a, b)
            };
            if front.len() >= target || front.iter().all(leaf) {
                return front;
            }
            let cut = self.cut(f64::from_bits(shared.upper.load(Ordering::Relaxed)));
            let mut next = Vec::with_capacity(front.len() * 2);
            for e in front {
                let (ea, eb) = e.nodes();
                if self.tt.is_leaf_pair(ea, eb) {
                    next.push(e);
                    continue;
                }
                let n = self.tt.expand(ea, eb, &mut kids);
                for &(a, b, lb) in &kids[..n] {
                    if lb < cut {
                        next.push(Entry::new(lb, a, b));
                    } else {
                        *lower = lower.min(lb);
                    }
                }
            }
            if next.is_empty() {
                return next;
            }
            front = next;
        }
    }

    /// The query; `hint` (a face pair, e.g. the previous frame's witness) gives a first upper
    /// bound when it is nearer than the greedy descent's.
    pub(super) fn run(&self, hint: Option<[u32; 2]>) -> DistanceResult {
        let greedy = self.greedy();
        let hinted = hint
            .filter(|h| {
                (h[0] as usize) < self.am.face_count() && (h[1] as usize) < self.bm.face_count()
            })
            .map(|[ta, tb]| self.face_pair(ta, tb));
        let first = match hinted {
            Some(h) if h.d < greedy.d => h,
            _ => greedy,
        };
        let shared = Shared {
            upper: AtomicU64::new(first.d.to_bits()),
            best: Mutex::new(first),
            stop: AtomicBool::new(self.below(first.d)),
        };
        let mut lower = f64::INFINITY;
        if self.options.parallel && rayon::current_num_threads() > 1 {
            let mut front = self.frontier(16 * rayon::current_num_threads(), &shared, &mut lower);
            front.sort_by(|x, y| y.cmp(x));
            let task_lower = front
                .par_iter()
                .map(|&e| self.best_first(e, &shared))
                .reduce(|| f64::INFINITY, f64::min);
            lower = lower.min(task_lower);
        } else {
            let (a, b) = T::ROOT;
            lower = self.best_first(Entry::new(0.0, a, b), &shared);
        }
        let best = *shared.best.lock().unwrap_or_else(|e| e.into_inner());
        DistanceResult {
            distance: best.d,
            lower: lower.min(best.d).max(0.0),
            upper: best.d,
            point_a: best.pa,
            point_b: best.pb,
            tri_a: best.ta,
            tri_b: best.tb,
            below_threshold: self.below(best.d),
        }
    }
}
