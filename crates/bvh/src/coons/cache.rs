//! The basis-value cache of a Coons BVH (paper §6): "by traversing the Coons BVH in a
//! preprocessing step, we can precompute and store the function values `B_a(u)` and `B_b(v)`
//! up to a certain level". Every parameter at which [`CoonsBvh::bound`] evaluates the surface
//! (corners and mid-point of each surface-level node; leaf corners and boundary points of the
//! Coons-level cells down to a level) gets its non-zero basis values stored, per knot vector.

use gprox_geometry::freeform::basis_cache::BasisCache;
use gprox_geometry::freeform::NurbsSurface;

use super::build::CoonsBvh;
use super::cell::CellKind;

impl CoonsBvh {
    /// Traverses the BVH of `surfaces` (the surfaces it was built from) and caches the basis
    /// values at every parameter its bounds evaluate: all surface-level nodes, and Coons-level
    /// cells whose level `ku + kv` is at most `coons_levels`.
    pub fn fill_basis_cache(&self, surfaces: &[NurbsSurface], coons_levels: u8) -> BasisCache {
        let mut cache = BasisCache::new(surfaces);
        let mut stack = self.root_cells(surfaces);
        while let Some(c) = stack.pop() {
            let s = c.surface as usize;
            let r = c.rect;
            let (um, vm) = r.mid();
            let descend = match c.kind {
                CellKind::Surface { node } => {
                    for u in [r.u0, r.u1, um] {
                        cache.insert(s, true, u);
                    }
                    for v in [r.v0, r.v1, vm] {
                        cache.insert(s, false, v);
                    }
                    self.is_internal(node as usize) || coons_levels > 0
                }
                CellKind::Coons { leaf, ku, kv, .. } => {
                    for u in [leaf.u0, leaf.u1, r.u0, r.u1] {
                        cache.insert(s, true, u);
                    }
                    for v in [leaf.v0, leaf.v1, r.v0, r.v1] {
                        cache.insert(s, false, v);
                    }
                    u16::from(ku) + u16::from(kv) < u16::from(coons_levels)
                }
            };
            if descend {
                if let Some(kids) = self.children(surfaces, &c) {
                    stack.extend(kids);
                }
            }
        }
        cache
    }

    /// Bytes of the basis cache ([`CoonsBvh::basis`]): runtime memory kept next to the BVH
    /// (the paper's Figure 9), reported apart from [`CoonsBvh::memory_bytes`] (its Table 1).
    pub fn cache_bytes(&self) -> usize {
        self.basis.bytes()
    }
}
