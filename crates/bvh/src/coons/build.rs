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
use gprox_geometry::freeform::NurbsSurface;
use rayon::prelude::*;

use super::quantise::dequantise;
use super::surface_tree::{build_surface, Ctx, LocalKind, LocalNode};

/// Deepest surface-level subdivision; deeper cells are left to the queries (exact leaves).
pub const MAX_DEPTH: usize = 40;
/// Longest ε-list (levels of dyadic curve subdivision) kept per direction (fits a nibble).
pub const MAX_EPS_LEVELS: usize = 15;
/// Node scalars (radius, deviation) are quantised with base `NODE_BASE * unit`.
pub const NODE_BASE: f64 = 4.0;
/// Leaves per ε-offset directory entry.
pub const EPS_BLOCK: usize = 16;
/// Most surface-level nodes one forest may hold (a typed error beyond).
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
    /// The forest would have more than [`MAX_NODES`] nodes (first reached at `surface`).
    #[error("surface {surface}: the Coons BVH would exceed {MAX_NODES} nodes")]
    TooManyNodes {
        /// Index of the surface.
        surface: usize,
    },
    /// A node budget below 1.
    #[error("max_nodes_per_surface must be at least 1, got {0}")]
    BadBudget(usize),
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
    /// Most surface-level nodes per surface. Splits are granted level by level, worst Coons
    /// deviation first; cells left unsplit when the budget runs out are exact leaves, below
    /// which the queries continue with exact sub-surfaces (so the bound holds on demand). Caps
    /// build time and memory per surface whatever its parametrisation.
    pub max_nodes_per_surface: usize,
}

impl Default for CoonsOptions {
    fn default() -> Self {
        Self {
            epsilon: 1e-5,
            curve_fraction: 0.1,
            cache_levels: DEFAULT_CACHE_LEVELS,
            max_nodes_per_surface: DEFAULT_MAX_NODES_PER_SURFACE,
        }
    }
}

/// Default [`CoonsOptions::cache_levels`].
pub const DEFAULT_CACHE_LEVELS: u8 = 2;

/// Default [`CoonsOptions::max_nodes_per_surface`]: about 0.15 s and a few MB of build on one
/// thread for rational surfaces of up to 100 control points (the teapot at ε = 1e-5 needs fewer).
pub const DEFAULT_MAX_NODES_PER_SURFACE: usize = 1 << 13;

/// Statistics of a Coons BVH build ([`CoonsBvh::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoonsBuildStats {
    /// Surface-level nodes.
    pub nodes: usize,
    /// Coons leaves (within ε, with ε-lists).
    pub coons_leaves: usize,
    /// Exact leaves: cells the budget (or the depth limit) left unsplit; the queries continue
    /// below them with exact sub-surfaces.
    pub exact_leaves: usize,
    /// Deepest surface-level node.
    pub max_depth: usize,
    /// Bytes of the BVH ([`CoonsBvh::memory_bytes`]).
    pub bytes: usize,
    /// Bytes of the basis cache ([`CoonsBvh::cache_bytes`]).
    pub cache_bytes: usize,
    /// Estimated peak of the build's working memory (pending sub-surfaces and the nodes built
    /// so far, summed over surfaces), in bytes.
    pub build_bytes: usize,
    /// Build wall time in seconds.
    pub seconds: f64,
}

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
    /// Number of exact leaves (see [`CoonsBuildStats::exact_leaves`]).
    pub exact_leaf_count: usize,
    /// Deepest surface-level node.
    pub max_depth: usize,
    /// Estimated peak working memory of the build (see [`CoonsBuildStats::build_bytes`]).
    pub build_bytes: usize,
    /// Number of bilinear surfaces at the finest ε-list level, summed over leaves.
    pub bilinear_count: u64,
    /// Build wall time in seconds (hierarchy and basis cache).
    pub build_seconds: f64,
    /// Cached basis values at the parameters the traversal evaluates (paper §6: runtime
    /// memory next to the BVH, not part of its Table 1 size; see [`CoonsBvh::cache_bytes`]).
    /// Empty: every point is evaluated directly.
    pub basis: BasisCache,
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
        if options.max_nodes_per_surface == 0 {
            return Err(CoonsError::BadBudget(0));
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
            budget: options.max_nodes_per_surface,
        };
        let built: Vec<(Vec<LocalNode>, usize, usize)> = surfaces
            .par_iter()
            .map(|s| build_surface(s, &ctx))
            .collect();
        let mut total = 0usize;
        for (i, b) in built.iter().enumerate() {
            total += b.0.len();
            if total > MAX_NODES {
                return Err(CoonsError::TooManyNodes { surface: i });
            }
        }
        let max_depth = built.iter().map(|b| b.1).max().unwrap_or(0);
        let build_bytes = built.iter().map(|b| b.2).sum();
        let locals: Vec<Vec<LocalNode>> = built.into_iter().map(|b| b.0).collect();
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
            exact_leaf_count: 0,
            max_depth,
            build_bytes,
            bilinear_count: 0,
            build_seconds: 0.0,
            basis: BasisCache::default(),
        };
        let mut i = 0usize;
        let mut internal_count = 0u32;
        while let Some((s, k)) = queue.pop_front() {
            let node = &locals[s][k];
            if i.is_multiple_of(64) {
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
                LocalKind::Leaf { .. } | LocalKind::Exact => {
                    // Leaf number `i - rank(i)` counts Coons and exact leaves alike.
                    let k = i - internal_count as usize;
                    if k.is_multiple_of(EPS_BLOCK) {
                        bvh.eps_block.push(bvh.eps.len() as u32);
                    }
                    match &node.kind {
                        LocalKind::Leaf { lu, lv } => {
                            bvh.eps_len.push(lu.len() as u8 | (lv.len() as u8) << 4);
                            bvh.eps.extend_from_slice(lu);
                            bvh.eps.extend_from_slice(lv);
                            bvh.bilinear_count +=
                                1u64 << (lu.len().saturating_sub(1) + lv.len().saturating_sub(1));
                            bvh.leaf_count += 1;
                        }
                        _ => {
                            // Empty ε-lists mark an exact leaf.
                            bvh.eps_len.push(0);
                            bvh.exact_leaf_count += 1;
                        }
                    }
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

    /// Build statistics: nodes, leaves, depth, bytes and time.
    pub fn stats(&self) -> CoonsBuildStats {
        CoonsBuildStats {
            nodes: self.node_count(),
            coons_leaves: self.leaf_count,
            exact_leaves: self.exact_leaf_count,
            max_depth: self.max_depth,
            bytes: self.memory_bytes(),
            cache_bytes: self.cache_bytes(),
            build_bytes: self.build_bytes,
            seconds: self.build_seconds,
        }
    }

    /// Whether node `i` is an exact leaf: a leaf the build left unsplit without reaching ε (no
    /// ε-lists); queries continue below it with exact sub-surfaces.
    pub fn is_exact_leaf(&self, i: usize) -> bool {
        !self.is_internal(i) && {
            let (_, lu, lv) = self.leaf_eps(i);
            lu == 0 && lv == 0
        }
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
