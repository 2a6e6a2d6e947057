//! The best-first BVTT traversal behind [`super::distance`].

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use glam::{DMat3, DVec3};
use gprox_bvh::bounding_volume::{nearest_rotation, pose_parts, stretch, BoundingVolume};
use gprox_bvh::bv_tree::BvTreeNode;
use gprox_geometry::transform::transform_triangle;
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::TriMesh;
use rayon::prelude::*;

use super::{DistanceObject, DistanceOptions, DistanceResult};

/// The best triangle pair so far.
#[derive(Clone, Copy, Debug)]
struct Best {
    d: f64,
    pa: DVec3,
    pb: DVec3,
    ta: u32,
    tb: u32,
}

/// A node pair waiting in the queue (min-heap on `lb`, ties by node pair).
#[derive(Clone, Copy, Debug)]
struct Entry {
    lb: f64,
    a: u32,
    b: u32,
}

impl Entry {
    /// The heap key, larger = popped first: non-negative floats (and +∞) order like their bit
    /// patterns, so two integer compares order the entries (−0 and NaN count as 0: explored
    /// first, never lost at the bottom of the heap).
    #[inline(always)]
    fn key(&self) -> (u64, u64) {
        let lb = if self.lb > 0.0 { self.lb } else { 0.0 };
        (
            !lb.to_bits(),
            !((u64::from(self.a) << 32) | u64::from(self.b)),
        )
    }
}

impl PartialEq for Entry {
    #[inline(always)]
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> CmpOrdering {
        self.key().cmp(&o.key())
    }
}

/// Shared state of one query: the upper bound (as f64 bits; non-negative floats order like
/// their bits) and its witness.
struct Shared {
    upper: AtomicU64,
    best: Mutex<Best>,
    stop: AtomicBool,
}

struct Ctx<'q, B> {
    an: &'q [BvTreeNode<B>],
    bn: &'q [BvTreeNode<B>],
    am: &'q TriMesh,
    bm: &'q TriMesh,
    pose_a: gprox_geometry::transform::Pose64,
    pose_b: gprox_geometry::transform::Pose64,
    /// Nearest rotation of A⁻¹·B's linear part and the translation.
    q: DMat3,
    t: DVec3,
    /// Growth of B's mapped volumes: residual `‖A⁻¹B − q‖` times the reach of B's contents.
    grow: f64,
    /// Lower bound of A's smallest singular value (local → world distances).
    sigma: f64,
    abs_tol: f64,
    rel_tol: f64,
    threshold: f64,
    has_threshold: bool,
}

impl<B: BoundingVolume> Ctx<'_, B> {
    /// Pairs with a lower bound at or above this cannot matter.
    #[inline]
    fn cut(&self, upper: f64) -> f64 {
        (upper - self.abs_tol.max(self.rel_tol * upper)).min(self.threshold)
    }

    /// World lower bounds of the distance between the contents of two node pairs (the two
    /// children of an expansion): the volumes' cheap bound with B's volume mapped into A's
    /// frame ([`BoundingVolume::distance_lower_bounds_mapped`]; for RSS the 7-axis separating
    /// bound, which prunes nearly as well as the exact rectangle distance at a fraction of its
    /// cost, both pairs at once in f64 lanes, bit for bit the one-pair bound). `_cut` is the
    /// pruning level (kept for volumes whose exact distance pays off).
    #[inline]
    fn lower_bounds(&self, pairs: [(u32, u32); 2], _cut: f64) -> [f64; 2] {
        let scale = self.sigma * (1.0 - 1e-12);
        let [(a0, b0), (a1, b1)] = pairs;
        let vols = [
            (&self.an[a0 as usize].bv, &self.bn[b0 as usize].bv),
            (&self.an[a1 as usize].bv, &self.bn[b1 as usize].bv),
        ];
        B::distance_lower_bounds_mapped(vols, &self.q, self.t, self.grow).map(|l| l * scale)
    }

    /// Distance between the centres of the balls around a node pair's volumes (in A's
    /// frame; a heuristic, not a bound).
    fn centre_gap(&self, (a, b): (u32, u32)) -> f64 {
        let ca = self.an[a as usize].bv.ball().0;
        let cb = self.bn[b as usize].bv.ball().0;
        ca.distance(self.q * cb + self.t)
    }

    fn leaf_pair(&self, a: u32, b: u32) -> Best {
        self.face_pair(self.an[a as usize].left, self.bn[b as usize].left)
    }

    /// The exact distance of face `ta` of A and face `tb` of B.
    fn face_pair(&self, ta: u32, tb: u32) -> Best {
        let x = transform_triangle(&self.pose_a, self.am.triangle(ta as usize));
        let y = transform_triangle(&self.pose_b, self.bm.triangle(tb as usize));
        let r = triangle_distance(&x, &y);
        Best {
            d: r.distance,
            pa: r.point_a,
            pb: r.point_b,
            ta,
            tb,
        }
    }

    /// Which side of a non-leaf pair to split, and its children.
    #[inline]
    fn children(&self, a: u32, b: u32) -> [(u32, u32); 2] {
        let na = &self.an[a as usize];
        let nb = &self.bn[b as usize];
        let split_a = if na.is_leaf() {
            false
        } else if nb.is_leaf() {
            true
        } else {
            na.bv.size() >= nb.bv.size()
        };
        if split_a {
            [(na.left, b), (na.right, b)]
        } else {
            [(a, nb.left), (a, nb.right)]
        }
    }

    #[inline]
    fn is_leaf_pair(&self, a: u32, b: u32) -> bool {
        self.an[a as usize].is_leaf() && self.bn[b as usize].is_leaf()
    }

    /// Greedy descent along the nearer child pair: the first upper bound.
    fn greedy(&self) -> Best {
        let (mut a, mut b) = (0u32, 0u32);
        while !self.is_leaf_pair(a, b) {
            let [c0, c1] = self.children(a, b);
            let [l0, l1] = self.lower_bounds([c0, c1], f64::INFINITY);
            // Equal bounds (overlapping volumes near the top): the nearer centres.
            let near0 = if l0 == l1 {
                self.centre_gap(c0) <= self.centre_gap(c1)
            } else {
                l0 < l1
            };
            (a, b) = if near0 { c0 } else { c1 };
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
        if self.has_threshold && cand.d < self.threshold {
            shared.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Best-first search below `start`; returns the smallest bound it discarded. Of the two
    /// children of an expanded pair, the nearer one is processed next without a trip through
    /// the heap (a dive along the best child) and only the farther one is queued: half the
    /// heap operations, nearly the same order.
    fn best_first(&self, start: Entry, shared: &Shared) -> f64 {
        let mut lower = f64::INFINITY;
        let mut heap = BinaryHeap::with_capacity(256);
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
            if e.lb >= cut || shared.stop.load(Ordering::Relaxed) {
                lower = lower.min(e.lb);
                if from_heap || shared.stop.load(Ordering::Relaxed) {
                    // Everything left in the heap is at least this far.
                    if let Some(top) = heap.peek() {
                        lower = lower.min(top.lb);
                    }
                    break;
                }
                continue;
            }
            if self.is_leaf_pair(e.a, e.b) {
                self.offer(shared, self.leaf_pair(e.a, e.b));
                continue;
            }
            let mut near: Option<Entry> = None;
            let kids = self.children(e.a, e.b);
            for ((a, b), lb) in kids.into_iter().zip(self.lower_bounds(kids, cut)) {
                if lb >= cut {
                    lower = lower.min(lb);
                    continue;
                }
                let c = Entry { lb, a, b };
                match near {
                    Some(n) if n.lb <= lb => heap.push(c),
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
        let mut front = vec![Entry {
            lb: 0.0,
            a: 0,
            b: 0,
        }];
        loop {
            if front.len() >= target || front.iter().all(|e| self.is_leaf_pair(e.a, e.b)) {
                return front;
            }
            let cut = self.cut(f64::from_bits(shared.upper.load(Ordering::Relaxed)));
            let mut next = Vec::with_capacity(front.len() * 2);
            for e in front {
                if self.is_leaf_pair(e.a, e.b) {
                    next.push(e);
                    continue;
                }
                let kids = self.children(e.a, e.b);
                for ((a, b), lb) in kids.into_iter().zip(self.lower_bounds(kids, cut)) {
                    if lb < cut {
                        next.push(Entry { lb, a, b });
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
}

/// The query; `hint` (a face pair, e.g. the previous frame's witness) gives a first upper
/// bound when it is nearer than the greedy descent's.
pub(super) fn run<B: BoundingVolume>(
    a: &DistanceObject<'_, B>,
    b: &DistanceObject<'_, B>,
    options: &DistanceOptions,
    hint: Option<[u32; 2]>,
) -> DistanceResult {
    let (ma, ta) = pose_parts(&a.pose);
    let (mb, tb) = pose_parts(&b.pose);
    let inv = ma.inverse();
    let (q, eps) = nearest_rotation(&(inv * mb));
    let sigma = 1.0 / stretch(&inv);
    let ctx = Ctx {
        an: &a.tree.nodes,
        bn: &b.tree.nodes,
        am: a.mesh,
        bm: b.mesh,
        pose_a: a.pose,
        pose_b: b.pose,
        q,
        t: inv * (tb - ta),
        grow: if eps.is_finite() {
            eps * b.tree.nodes[0].bv.reach()
        } else {
            f64::INFINITY
        },
        // A singular pose cannot be bounded: fall back to a bound that prunes nothing.
        sigma: if sigma.is_finite() && eps.is_finite() {
            sigma
        } else {
            0.0
        },
        abs_tol: options.abs_tol,
        rel_tol: options.rel_tol,
        threshold: options.threshold.unwrap_or(f64::INFINITY),
        has_threshold: options.threshold.is_some(),
    };
    let greedy = ctx.greedy();
    let hinted = hint
        .filter(|h| (h[0] as usize) < a.mesh.face_count() && (h[1] as usize) < b.mesh.face_count())
        .map(|[ta, tb]| ctx.face_pair(ta, tb));
    let first = match hinted {
        Some(h) if h.d < greedy.d => h,
        _ => greedy,
    };
    let shared = Shared {
        upper: AtomicU64::new(first.d.to_bits()),
        best: Mutex::new(first),
        stop: AtomicBool::new(ctx.has_threshold && first.d < ctx.threshold),
    };
    let mut lower = f64::INFINITY;
    if options.parallel && rayon::current_num_threads() > 1 {
        let mut front = ctx.frontier(16 * rayon::current_num_threads(), &shared, &mut lower);
        front.sort_by(|x, y| x.lb.total_cmp(&y.lb));
        let task_lower = front
            .par_iter()
            .map(|&e| ctx.best_first(e, &shared))
            .reduce(|| f64::INFINITY, f64::min);
        lower = lower.min(task_lower);
    } else {
        lower = ctx.best_first(
            Entry {
                lb: 0.0,
                a: 0,
                b: 0,
            },
            &shared,
        );
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
        below_threshold: ctx.has_threshold && best.d < ctx.threshold,
    }
}
