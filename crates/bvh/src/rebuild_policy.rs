//! When to rebuild a refitted BVH.
//!
//! Refitting keeps the tree topology of the last build; as the mesh deforms, sibling boxes grow
//! and overlap more and traversal slows down. The measure used here is the SAH-style cost
//! `Q = Σ internal-node surface areas / Σ leaf surface areas`, normalised by leaf areas so that
//! a mesh that merely grows or shrinks does not trigger rebuilds. The policy records `Q` right
//! after each build and rebuilds once `Q_now / Q_build` exceeds a threshold.

use crate::{lbvh::build_from_aabbs, refit::refit, refit::RefitError, Aabb, Bvh};

/// Surface area of a box (0 for an empty or inverted box).
#[inline]
pub fn surface_area(b: &Aabb) -> f64 {
    let e = [0, 1, 2].map(|i| (b.max[i] as f64 - b.min[i] as f64).max(0.0));
    2.0 * (e[0] * e[1] + e[1] * e[2] + e[2] * e[0])
}

/// `Q = Σ internal surface areas / Σ leaf surface areas` of `bvh` (1 for a single leaf or
/// when all leaves are flat points).
///
/// ```
/// use gprox_bvh::{lbvh::build_from_aabbs, rebuild_policy::quality, Aabb};
/// let boxes: Vec<Aabb> = (0..8).map(|i| Aabb { min: [i as f32; 3], max: [i as f32 + 1.0; 3] }).collect();
/// assert!(quality(&build_from_aabbs(&boxes)) > 1.0);
/// ```
pub fn quality(bvh: &Bvh) -> f64 {
    let (mut internal, mut leaves) = (0.0, 0.0);
    for n in &bvh.nodes {
        if n.is_leaf() {
            leaves += surface_area(&n.aabb);
        } else {
            internal += surface_area(&n.aabb);
        }
    }
    if leaves > 0.0 {
        internal / leaves
    } else {
        1.0
    }
}

/// What [`RebuildPolicy::update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Boxes refitted, topology kept.
    Refit,
    /// Tree rebuilt from scratch.
    Rebuilt,
}

/// Refit-or-rebuild decision by the quality ratio `Q_now / Q_build` (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RebuildPolicy {
    /// Rebuild when the ratio exceeds this (default 1.5; `f64::INFINITY` = never).
    pub threshold: f64,
    /// `Q` right after the last build.
    pub baseline: f64,
    /// Ratio measured by the last update (1 right after a build).
    pub last_ratio: f64,
    /// Rebuilds done so far.
    pub rebuilds: u64,
}

impl Default for RebuildPolicy {
    fn default() -> Self {
        Self::new(1.5)
    }
}

impl RebuildPolicy {
    /// A policy rebuilding above `threshold`; call [`RebuildPolicy::reset`] after the first build.
    pub fn new(threshold: f64) -> Self {
        Self {
            threshold,
            baseline: f64::NAN,
            last_ratio: 1.0,
            rebuilds: 0,
        }
    }

    /// Records `bvh` as freshly built.
    pub fn reset(&mut self, bvh: &Bvh) {
        self.baseline = quality(bvh);
        self.last_ratio = 1.0;
    }

    /// Current ratio `Q(bvh) / baseline` (1 when no baseline was recorded).
    pub fn ratio(&self, bvh: &Bvh) -> f64 {
        let q = quality(bvh);
        if self.baseline > 0.0 {
            q / self.baseline
        } else {
            1.0
        }
    }

    /// Refits `bvh` to `leaf_aabbs`, then rebuilds it when the ratio exceeds the threshold.
    ///
    /// ```
    /// use gprox_bvh::{lbvh::build_from_aabbs, rebuild_policy::{RebuildPolicy, Update}, Aabb};
    /// let mut boxes: Vec<Aabb> = (0..64).map(|i| Aabb { min: [i as f32, 0.0, 0.0], max: [i as f32 + 1.0, 1.0, 1.0] }).collect();
    /// let mut bvh = build_from_aabbs(&boxes);
    /// let mut policy = RebuildPolicy::new(1.5);
    /// policy.reset(&bvh);
    /// assert_eq!(policy.update(&mut bvh, &boxes).unwrap(), Update::Refit);
    /// // Scatter the primitives: siblings end up far apart and refit quality collapses.
    /// for (i, b) in boxes.iter_mut().enumerate() { let x = ((i * 37) % 64) as f32; b.min[0] = x; b.max[0] = x + 1.0; }
    /// assert_eq!(policy.update(&mut bvh, &boxes).unwrap(), Update::Rebuilt);
    /// ```
    pub fn update(&mut self, bvh: &mut Bvh, leaf_aabbs: &[Aabb]) -> Result<Update, RefitError> {
        refit(bvh, leaf_aabbs)?;
        let ratio = self.ratio(bvh);
        self.last_ratio = ratio;
        if ratio > self.threshold {
            *bvh = build_from_aabbs(leaf_aabbs);
            self.reset(bvh);
            self.rebuilds += 1;
            Ok(Update::Rebuilt)
        } else {
            Ok(Update::Refit)
        }
    }
}
