//! The dual Coons BVH (paper §3–4): a surface-level binary tree per surface whose nodes keep
//! two one-byte scalars (bounding-sphere radius around the surface mid-point, deviation from the
//! corner tetrahedron) and whose leaves are Coons patches carrying two ε-lists of one-byte levels.
//!
//! Layout (succinct): the forest of all surfaces' trees is stored in level order, roots first.
//! Per node one "internal" bit and one "split along u" bit; a rank directory (internal nodes
//! before each block of 64) finds the children of internal node `i` at `S + 2 rank(i)` and
//! `S + 2 rank(i) + 1` (`S` = number of surfaces), and leaf `i` is leaf number `i - rank(i)`.
//! Per leaf one byte holds both ε-list lengths; a directory every 16 leaves gives the ε offset.

use std::time::Instant;

use gprox_geometry::freeform::basis_cache::BasisCache;
use gprox_geometry::freeform::{NurbsSurface, ParamRect};
use rayon::prelude::*;

use super::quantise::{dequantise, quantise};

/// Deepest surface-level subdivision before the build gives up.
pub const MAX_DEPTH: usize = 40;
/// Longest ε-list (levels of dyadic curve subdivision) kept per direction (fits a nibble).
pub const MAX_EPS_LEVELS: usize = 15;
/// Node scalars (radius, deviation) are quantised with base `NODE_BASE * unit`.
pub const NODE_BASE: f64 = 4.0;
/// Leaves per ε-offset directory entry.
pub const EPS_BLOCK: usize = 16;
/// Most surface-level nodes one build may create before it gives up with a typed error.
pub const MAX_NODES: usize = 1 << 22;

/// Errors of the Coons BVH build.
#[derive(Debug, thiserror::Error)]
pub enum CoonsError {
    /// A model without surfaces.
    #[error("cannot build a Coons BVH of zero surfaces")]
    Empty,
    /// The tolerance is not a finite number in [1e-7, 1].
    #[error("relative tolerance {0} must be finite and in [1e-7, 1]")]
    BadTolerance(f64),
    /// Subdivision did not reach the tolerance within [`MAX_DEPTH`] levels.
    #[error("surface {surface}: Coons approximation did not converge within {depth} subdivisions at {rect:?}")]
    DepthExceeded {
        /// Index of the surface.
        surface: usize,
        /// Depth reached.
        depth: usize,
        /// Parameter rectangle where it failed.
        rect: ParamRect,
    },
    /// Subdivision created more than [`MAX_NODES`] nodes (or another surface failed first).
    #[error("surface {surface}: Coons subdivision exceeded {MAX_NODES} nodes")]
    TooManyNodes {
        /// Index of the surface.
        surface: usize,
    },
}

/// Build options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoonsOptions {
    /// Coons approximation error bound relative to the model unit (paper: 1e-2 … 1e-5).
    pub epsilon: f64,
    /// The ε-lists continue until the curve polyline error is below `curve_fraction * epsilon`
    /// (paper Table 1: 0.1).
    pub curve_fraction: f64,
    /// Coons levels (`ku + kv`) below the leaves whose evaluation parameters get cached basis
    /// values ([`CoonsBvh::basis`]); the surface-level nodes are always cached.
    pub cache_levels: u8,
}

impl Default for CoonsOptions {
    fn default() -> Self {
        Self {
            epsilon: 1e-5,
            curve_fraction: 0.1,
            cache_levels: DEFAULT_CACHE_LEVELS,
        }
    }
}

/// Default [`CoonsOptions::cache_levels`].
pub const DEFAULT_CACHE_LEVELS: u8 = 2;

/// The compact dual Coons BVH of a set of surfaces (the surfaces themselves are not stored).
#[derive(Clone, Debug)]
pub struct CoonsBvh {
    /// The model unit (largest side of the control-net bounding box).
    pub unit: f64,
    /// Absolute Coons approximation bound `epsilon * unit`: every leaf's Coons patch is within it.
    pub epsilon: f64,
    /// Number of surfaces (= roots, nodes `0..surface_count`).
    pub surface_count: usize,
    /// Bit `i`: node `i` is internal.
    pub internal: Vec<u64>,
    /// Bit `i`: internal node `i` splits along u (else along v).
    pub split_u: Vec<u64>,
    /// Internal nodes before each block of 64 nodes.
    pub rank: Vec<u32>,
    /// Per node: quantised bounding-sphere radius (base `NODE_BASE * unit`).
    pub radius: Vec<u8>,
    /// Per node: quantised deviation from the corner tetrahedron (base `NODE_BASE * unit`).
    pub deviation: Vec<u8>,
    /// Per leaf: `len_u | len_v << 4`.
    pub eps_len: Vec<u8>,
    /// ε bytes before each block of [`EPS_BLOCK`] leaves.
    pub eps_block: Vec<u32>,
    /// ε-lists, leaf after leaf: `len_u` u-levels then `len_v` v-levels (base `unit`).
    pub eps: Vec<u8>,
    /// Number of Coons leaves.
    pub leaf_count: usize,
    /// Number of bilinear surfaces at the finest ε-list level, summed over leaves.
    pub bilinear_count: u64,
    /// Build wall time in seconds (hierarchy and basis cache).
    pub build_seconds: f64,
    /// Cached basis values at the parameters the traversal evaluates (paper §6: runtime
    /// memory next to the BVH, not part of its Table 1 size; see [`CoonsBvh::cache_bytes`]).
    /// Empty: every point is evaluated directly.
    pub basis: BasisCache,
}

enum LocalKind {
    Leaf { lu: Vec<u8>, lv: Vec<u8> },
    Internal { split_u: bool, children: [usize; 2] },
}

struct LocalNode {
    kind: LocalKind,
    radius: u8,
    deviation: u8,
}

/// Levels of the ε-lists computed by actually splitting the curves; deeper levels of
/// polynomial curves use the certified second-derivative bound `h^2/8 max|C''|`.
const EXACT_LEVELS: usize = 3;

/// `(max |C''|, sum of |C'(k+) - C'(k-)|)` over the Bézier segments of a (rational) curve and
/// their junctions, from the homogeneous control points (quotient rule with hodograph bounds). On any parameter
/// segment of length `h` the chord error is then at most `h^2/8 max|C''| + h/4 sum|jump|`
/// (interpolation error through the Green's function of `d^2/dt^2`, a kink contributing
/// `G(t, k) |jump| <= h/4 |jump|`).
fn derivative_bounds(c: &gprox_geometry::freeform::NurbsCurve) -> Option<(f64, f64)> {
    let p = c.degree();
    let segs = c.bezier_segments();
    let (mut m, mut jumps) = (0.0f64, 0.0f64);
    let mut prev_end: Option<glam::DVec3> = None;
    for ([a, b], seg) in &segs {
        let len = b - a;
        if len <= 0.0 {
            continue;
        }
        let x: Vec<glam::DVec3> = seg.iter().map(|h| h.truncate() / h.w).collect();
        let w: Vec<f64> = seg.iter().map(|h| h.w).collect();
        let wmin = w.iter().copied().fold(f64::INFINITY, f64::min);
        if wmin.is_nan() || wmin <= 0.0 {
            return None;
        }
        // Homogeneous numerator relative to the first point: P = sum B_i w_i (x_i - x_0), so
        // C - x_0 = P / W and |C - x_0| <= r (convex hull).
        let q: Vec<glam::DVec3> = x
            .iter()
            .zip(&w)
            .map(|(xi, wi)| (*xi - x[0]) * *wi)
            .collect();
        let r = x.iter().map(|xi| xi.distance(x[0])).fold(0.0, f64::max);
        let pf = p as f64;
        let (mut p1, mut w1, mut p2, mut w2) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..p {
            p1 = p1.max((q[i + 1] - q[i]).length() * pf / len);
            w1 = w1.max((w[i + 1] - w[i]).abs() * pf / len);
        }
        if p >= 2 {
            let k = pf * (pf - 1.0) / (len * len);
            for i in 0..p - 1 {
                p2 = p2.max((q[i + 2] - 2.0 * q[i + 1] + q[i]).length() * k);
                w2 = w2.max((w[i + 2] - 2.0 * w[i + 1] + w[i]).abs() * k);
            }
        }
        // C' = (P' - W'(C - x0)) / W,  C'' = (P'' - 2 W' C' - W'' (C - x0)) / W.
        let c1 = (p1 + w1 * r) / wmin;
        let c2 = (p2 + 2.0 * w1 * c1 + w2 * r) / wmin;
        m = m.max(c2);
        let start = (x[1] - x[0]) * (pf * w[1] / (w[0] * len));
        if let Some(e) = prev_end {
            jumps += (start - e).length();
        }
        prev_end = Some((x[p] - x[p - 1]) * (pf * w[p - 1] / (w[p] * len)));
    }
    Some((m, jumps))
}

/// Dyadic ε-list of a pair of opposite boundary curves: level k bounds the chord deviation of
/// both curves on each of the `2^k` uniform parameter segments.
fn eps_list(curves: [gprox_geometry::freeform::NurbsCurve; 2], stop: f64, unit: f64) -> Vec<u8> {
    let mut pieces: Vec<gprox_geometry::freeform::NurbsCurve> = curves.to_vec();
    let mut out = Vec::new();
    // Per piece (max |C''|, sum of derivative jumps, parameter length) once the analytic bound
    // takes over.
    let mut analytic: Option<Vec<(f64, f64, f64)>> = None;
    loop {
        let e = match &analytic {
            Some(v) => v
                .iter()
                .map(|&(m, j, h)| m * h * h / 8.0 + j * h / 4.0)
                .fold(0.0, f64::max),
            None => pieces
                .iter()
                .map(|c| c.chord_deviation())
                .fold(0.0, f64::max),
        };
        let Some(q) = quantise(e, unit) else { break };
        out.push(q);
        if e <= stop || out.len() >= MAX_EPS_LEVELS || q == 255 {
            break;
        }
        if let Some(v) = &mut analytic {
            for x in v.iter_mut() {
                x.2 *= 0.5;
            }
            continue;
        }
        pieces = pieces
            .iter()
            .flat_map(|c| {
                let [a, b] = c.domain();
                match c.split(0.5 * (a + b)) {
                    Ok((l, r)) => vec![l, r],
                    Err(_) => vec![c.clone(), c.clone()],
                }
            })
            .collect();
        if out.len() >= EXACT_LEVELS {
            let bounds: Option<Vec<(f64, f64, f64)>> = pieces
                .iter()
                .map(|c| {
                    let [a, b] = c.domain();
                    derivative_bounds(c).map(|(m, j)| (m, j, b - a))
                })
                .collect();
            analytic = bounds;
        }
    }
    out
}

/// One candidate split of a cell: direction, parameter, the two halves and their refined Coons
/// deviations (reused by the children's leaf test).
struct Split {
    along_u: bool,
    t: f64,
    halves: (NurbsSurface, NurbsSurface),
    devs: [f64; 2],
}

impl Split {
    fn worst(&self) -> f64 {
        self.devs[0].max(self.devs[1])
    }
}

/// Chooses the split direction by look-ahead: the direction whose worse half has the smaller
/// Coons deviation (ties: the direction of the larger boundary/net curvature). `None` when the
/// surface cannot be split in either direction.
fn choose_split(
    s: &NurbsSurface,
    sub: &NurbsSurface,
    rect: &ParamRect,
    cd: &[f64],
    depth: usize,
    eps: f64,
    own: f64,
) -> Option<Split> {
    let [du, dv] = sub.net_second_differences();
    let prefer_u = cd[0].max(cd[1]) + du >= cd[2].max(cd[3]) + dv;
    let candidate = |along_u: bool| -> Option<Split> {
        let t = s.split_parameter(rect, along_u);
        let (a, b) = sub.split(along_u, t).ok()?;
        let devs = [a.coons_deviation_within(eps), b.coons_deviation_within(eps)];
        Some(Split {
            along_u,
            t,
            halves: (a, b),
            devs,
        })
    };
    let (su, sv) = rayon::join(|| candidate(true), || candidate(false));
    let (su, sv) = match (su, sv) {
        (None, None) => return None,
        (Some(x), None) | (None, Some(x)) => return Some(x),
        (Some(x), Some(y)) => (x, y),
    };
    let (wu, wv) = (su.worst(), sv.worst());
    // No progress either way (degenerate or rational nets where the look-ahead bound stalls):
    // alternate directions so both parameter lengths shrink and the build converges.
    let progress = wu.min(wv) < own;
    let choice = if !progress {
        depth % 2 == 0
    } else if wu == wv {
        prefer_u
    } else {
        wu < wv
    };
    // Aspect guard: never keep halving a direction that is already far narrower (relative to
    // the surface's domain) than the other one. Without it the look-ahead can pick the same
    // direction forever on marginal gains (seen on rational nets: a v-width of 1e-12 at depth
    // 40), so the build never converges; with it both widths shrink and it always does.
    let d = s.domain();
    let ru = (rect.u1 - rect.u0) / (d.u1 - d.u0);
    let rv = (rect.v1 - rect.v0) / (d.v1 - d.v0);
    let along_u = if !progress {
        choice
    } else if choice && ru * ASPECT_LIMIT < rv {
        false
    } else if !choice && rv * ASPECT_LIMIT < ru {
        true
    } else {
        choice
    };
    Some(if along_u { su } else { sv })
}

/// Largest ratio of the relative parameter widths of a cell the split choice allows.
const ASPECT_LIMIT: f64 = 16.0;

/// Shared stop state of one build: a failure anywhere aborts every branch at once, so a
/// surface that does not converge costs at most [`MAX_NODES`] nodes, never an exponential walk.
#[derive(Default)]
struct Guard {
    abort: std::sync::atomic::AtomicBool,
    nodes: std::sync::atomic::AtomicUsize,
}

/// Constants of one build: model unit, absolute Coons tolerance, ε-list stop value, stop state.
struct Ctx {
    unit: f64,
    eps: f64,
    stop: f64,
    guard: Guard,
}

/// Builds the subtree of `sub` (over `rect`); index 0 of the result is its root.
fn build_node(
    index: usize,
    s: &NurbsSurface,
    sub: NurbsSurface,
    rect: ParamRect,
    depth: usize,
    ctx: &Ctx,
    known_dev: Option<f64>,
) -> Result<Vec<LocalNode>, CoonsError> {
    use std::sync::atomic::Ordering::Relaxed;
    let guard = &ctx.guard;
    if guard.abort.load(Relaxed) || guard.nodes.fetch_add(1, Relaxed) >= MAX_NODES {
        guard.abort.store(true, Relaxed);
        return Err(CoonsError::TooManyNodes { surface: index });
    }
    let (unit, eps, stop) = (ctx.unit, ctx.eps, ctx.stop);
    let nb = NODE_BASE * unit;
    let (um, vm) = rect.mid();
    let centre = s.point(um, vm);
    let radius = sub
        .homogeneous_points()
        .iter()
        .map(|h| (h.truncate() / h.w - centre).length())
        .fold(0.0, f64::max);
    let dev = sub.bilinear_deviation().min(2.0 * radius);
    let (radius, deviation) = (
        quantise(radius, nb).unwrap_or(0),
        quantise(dev, nb).unwrap_or(0),
    );
    let curves: Vec<_> = (0..4).map(|k| sub.boundary_curve(k)).collect();
    let cd: Vec<f64> = curves.iter().map(|c| c.chord_deviation()).collect();
    let level0 = cd.iter().copied().fold(0.0, f64::max);
    let own = known_dev.unwrap_or_else(|| sub.coons_deviation_within(eps));
    if level0 <= unit && own <= eps {
        let lu = eps_list([curves[0].clone(), curves[1].clone()], stop, unit);
        let lv = eps_list([curves[2].clone(), curves[3].clone()], stop, unit);
        return Ok(vec![LocalNode {
            kind: LocalKind::Leaf { lu, lv },
            radius,
            deviation,
        }]);
    }
    let fail = || {
        guard.abort.store(true, Relaxed);
        CoonsError::DepthExceeded {
            surface: index,
            depth,
            rect,
        }
    };
    if depth >= MAX_DEPTH {
        return Err(fail());
    }
    let Some(split) = choose_split(s, &sub, &rect, &cd, depth, eps, own) else {
        return Err(fail());
    };
    let Split {
        along_u,
        t,
        halves: (a, b),
        devs,
    } = split;
    let halves = rect.split_at(along_u, t);
    let (l, r) = rayon::join(
        || build_node(index, s, a, halves[0], depth + 1, ctx, Some(devs[0])),
        || build_node(index, s, b, halves[1], depth + 1, ctx, Some(devs[1])),
    );
    let (l, r) = (l?, r?);
    let mut out = Vec::with_capacity(1 + l.len() + r.len());
    let (lo, ro) = (1, 1 + l.len());
    out.push(LocalNode {
        kind: LocalKind::Internal {
            split_u: along_u,
            children: [lo, ro],
        },
        radius,
        deviation,
    });
    let shift = |mut n: LocalNode, by: usize| {
        if let LocalKind::Internal { children, .. } = &mut n.kind {
            children[0] += by;
            children[1] += by;
        }
        n
    };
    out.extend(l.into_iter().map(|n| shift(n, lo)));
    out.extend(r.into_iter().map(|n| shift(n, ro)));
    Ok(out)
}

#[inline]
fn bit(v: &[u64], i: usize) -> bool {
    v[i / 64] >> (i % 64) & 1 == 1
}

impl CoonsBvh {
    /// Builds the Coons BVH of `surfaces` (model coordinates) with Coons error bound
    /// `options.epsilon * unit`, `unit` the largest side of the control-net bounding box.
    ///
    /// ```
    /// use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
    /// let teapot = gprox_geometry::freeform::teapot();
    /// let bvh = CoonsBvh::build(&teapot, &CoonsOptions { epsilon: 1e-2, ..Default::default() }).unwrap();
    /// assert!(bvh.leaf_count >= teapot.len());
    /// ```
    pub fn build(surfaces: &[NurbsSurface], options: &CoonsOptions) -> Result<Self, CoonsError> {
        let start = Instant::now();
        if surfaces.is_empty() {
            return Err(CoonsError::Empty);
        }
        let e = options.epsilon;
        if !(e.is_finite() && (1e-7..=1.0).contains(&e)) {
            return Err(CoonsError::BadTolerance(e));
        }
        let (lo, hi) = surfaces.iter().fold(
            (glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY),
            |(lo, hi), s| {
                let (a, b) = s.control_bounds();
                (lo.min(a), hi.max(b))
            },
        );
        let unit = (hi - lo).max_element().max(f64::MIN_POSITIVE);
        let ctx = Ctx {
            unit,
            eps: e * unit,
            stop: options.curve_fraction * e * unit,
            guard: Guard::default(),
        };
        let locals: Vec<Vec<LocalNode>> = surfaces
            .par_iter()
            .enumerate()
            .map(|(i, s)| build_node(i, s, s.clone(), s.domain(), 0, &ctx, None))
            .collect::<Result<_, _>>()?;
        // Level order over the forest: roots first, then children in parent order.
        let mut queue: std::collections::VecDeque<(usize, usize)> =
            (0..locals.len()).map(|s| (s, 0)).collect();
        let mut bvh = Self {
            unit,
            epsilon: ctx.eps,
            surface_count: surfaces.len(),
            internal: Vec::new(),
            split_u: Vec::new(),
            rank: Vec::new(),
            radius: Vec::new(),
            deviation: Vec::new(),
            eps_len: Vec::new(),
            eps_block: Vec::new(),
            eps: Vec::new(),
            leaf_count: 0,
            bilinear_count: 0,
            build_seconds: 0.0,
            basis: BasisCache::default(),
        };
        let mut i = 0usize;
        let mut internal_count = 0u32;
        while let Some((s, k)) = queue.pop_front() {
            let node = &locals[s][k];
            if i % 64 == 0 {
                bvh.internal.push(0);
                bvh.split_u.push(0);
                bvh.rank.push(internal_count);
            }
            bvh.radius.push(node.radius);
            bvh.deviation.push(node.deviation);
            match &node.kind {
                LocalKind::Internal { split_u, children } => {
                    bvh.internal[i / 64] |= 1 << (i % 64);
                    if *split_u {
                        bvh.split_u[i / 64] |= 1 << (i % 64);
                    }
                    internal_count += 1;
                    queue.push_back((s, children[0]));
                    queue.push_back((s, children[1]));
                }
                LocalKind::Leaf { lu, lv } => {
                    if bvh.leaf_count % EPS_BLOCK == 0 {
                        bvh.eps_block.push(bvh.eps.len() as u32);
                    }
                    bvh.eps_len.push(lu.len() as u8 | (lv.len() as u8) << 4);
                    bvh.eps.extend_from_slice(lu);
                    bvh.eps.extend_from_slice(lv);
                    bvh.bilinear_count +=
                        1u64 << (lu.len().saturating_sub(1) + lv.len().saturating_sub(1));
                    bvh.leaf_count += 1;
                }
            }
            i += 1;
        }
        bvh.basis = bvh.fill_basis_cache(surfaces, options.cache_levels);
        bvh.build_seconds = start.elapsed().as_secs_f64();
        Ok(bvh)
    }

    /// Memory of the BVH in bytes: radius and deviation bytes, the two bit vectors and rank
    /// directory, ε lengths, ε directory and ε bytes, and 16 for `unit` and `epsilon`.
    pub fn memory_bytes(&self) -> usize {
        let n = self.node_count();
        2 * n
            + (self.internal.len() + self.split_u.len()) * 8
            + self.rank.len() * 4
            + self.eps_len.len()
            + self.eps_block.len() * 4
            + self.eps.len()
            + 16
    }

    /// Number of surface-level nodes.
    pub fn node_count(&self) -> usize {
        self.radius.len()
    }

    /// Whether node `i` is internal.
    pub fn is_internal(&self, i: usize) -> bool {
        bit(&self.internal, i)
    }

    /// Whether internal node `i` splits along u.
    pub fn splits_u(&self, i: usize) -> bool {
        bit(&self.split_u, i)
    }

    /// Internal nodes before node `i`.
    pub fn rank_of(&self, i: usize) -> usize {
        let mask = (1u64 << (i % 64)) - 1;
        self.rank[i / 64] as usize + (self.internal[i / 64] & mask).count_ones() as usize
    }

    /// First child of internal node `i` (the second is the next node).
    pub fn first_child(&self, i: usize) -> usize {
        self.surface_count + 2 * self.rank_of(i)
    }

    /// ε offset and list lengths `(offset, len_u, len_v)` of leaf node `i`.
    pub fn leaf_eps(&self, i: usize) -> (u32, u8, u8) {
        let k = i - self.rank_of(i);
        let mut off = self.eps_block[k / EPS_BLOCK] as usize;
        for j in (k / EPS_BLOCK) * EPS_BLOCK..k {
            let l = self.eps_len[j];
            off += usize::from(l & 15) + usize::from(l >> 4);
        }
        let l = self.eps_len[k];
        (off as u32, l & 15, l >> 4)
    }

    /// Dequantised bounding-sphere radius of node `i`.
    pub fn node_radius(&self, i: usize) -> f64 {
        dequantise(self.radius[i], NODE_BASE * self.unit)
    }

    /// Dequantised deviation of node `i` from its corner tetrahedron.
    pub fn node_deviation(&self, i: usize) -> f64 {
        dequantise(self.deviation[i], NODE_BASE * self.unit)
    }
}
