//! Where the refit's leaf boxes come from (precomputed boxes or a mesh's faces), and the
//! NaN-free box arithmetic and prefetch hints of its hot loops.

use gprox_geometry::TriMesh;

use crate::Aabb;

/// `a.min(b)` for non-NaN operands: the same bits as `f32::min` (and the kernels' `min_f`),
/// `a` on ties such as `-0.0` against `0.0`, without the NaN-checking sequence.
#[inline(always)]
pub(super) fn min_finite(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// `a.max(b)` for non-NaN operands (see [`min_finite`]).
#[inline(always)]
pub(super) fn max_finite(a: f32, b: f32) -> f32 {
    if b > a {
        b
    } else {
        a
    }
}

/// [`triangle_aabb`] of a mesh face. The corners of a [`TriMesh`] are finite (it checks
/// them), so the plain comparisons of [`min_finite`] give the same bits.
#[inline]
pub(crate) fn face_aabb(pos: &[glam::Vec3], f: &[u32; 3]) -> Aabb {
    // Written out (no closures or `array::map`): this is the leaf loop's body.
    let (a, b, c) = (pos[f[0] as usize], pos[f[1] as usize], pos[f[2] as usize]);
    Aabb {
        min: [
            min_finite(min_finite(a.x, b.x), c.x),
            min_finite(min_finite(a.y, b.y), c.y),
            min_finite(min_finite(a.z, b.z), c.z),
        ],
        max: [
            max_finite(max_finite(a.x, b.x), c.x),
            max_finite(max_finite(a.y, b.y), c.y),
            max_finite(max_finite(a.z, b.z), c.z),
        ],
    }
}

/// [`Aabb::merge`] of non-NaN boxes (see [`min_finite`]).
#[inline(always)]
pub(crate) fn merge_finite(a: &Aabb, b: &Aabb) -> Aabb {
    Aabb {
        min: [
            min_finite(a.min[0], b.min[0]),
            min_finite(a.min[1], b.min[1]),
            min_finite(a.min[2], b.min[2]),
        ],
        max: [
            max_finite(a.max[0], b.max[0]),
            max_finite(a.max[1], b.max[1]),
            max_finite(a.max[2], b.max[2]),
        ],
    }
}

/// Where the leaf boxes come from. The leaf loop reads them in Morton order, i.e. at random;
/// the prefetch hints let it start those reads a few leaves ahead.
pub(crate) trait LeafSource: Sync {
    /// Number of primitives.
    fn count(&self) -> usize;
    /// Box of primitive `p < count`.
    fn aabb(&self, p: u32) -> Aabb;
    /// Hint, [`FAR`](super::FAR) leaves ahead: primitive `p`'s box will be needed.
    fn prefetch_far(&self, p: u32);
    /// Hint, [`NEAR`](super::NEAR) leaves ahead (after [`LeafSource::prefetch_far`]): the same.
    fn prefetch_near(&self, p: u32);
    /// [`Aabb::merge`], possibly faster when the source knows its boxes hold no NaN.
    #[inline(always)]
    fn merge(&self, a: &Aabb, b: &Aabb) -> Aabb {
        a.merge(b)
    }
}

/// Prefetches the cache line at `x` (a hint: no effect on results). Any address will do, so
/// callers compute it with `wrapping_add` and skip the bounds checks.
#[inline(always)]
pub(crate) fn prefetch<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and never
        // changes memory. (`unsafe` only because of the `sse` target-feature marker, which
        // every x86_64 target has.)
        unsafe { _mm_prefetch::<_MM_HINT_T0>(x.cast()) };
    }
}

/// Precomputed primitive boxes.
pub(crate) struct BoxSource<'a>(pub(crate) &'a [Aabb]);

impl LeafSource for BoxSource<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn aabb(&self, p: u32) -> Aabb {
        self.0[p as usize]
    }
    #[inline]
    fn prefetch_far(&self, _: u32) {}
    #[inline]
    fn prefetch_near(&self, p: u32) {
        prefetch(self.0.as_ptr().wrapping_add(p as usize));
    }
}

/// Triangle boxes computed from a mesh's faces and positions.
pub(crate) struct MeshSource<'a> {
    faces: &'a [[u32; 3]],
    pos: &'a [glam::Vec3],
}

impl<'a> MeshSource<'a> {
    /// The faces and current positions of `mesh`.
    pub(crate) fn new(mesh: &'a TriMesh) -> Self {
        Self {
            faces: mesh.faces(),
            pos: mesh.positions(),
        }
    }
}

impl LeafSource for MeshSource<'_> {
    fn count(&self) -> usize {
        self.faces.len()
    }
    #[inline]
    fn aabb(&self, p: u32) -> Aabb {
        face_aabb(self.pos, &self.faces[p as usize])
    }
    #[inline(always)]
    fn merge(&self, a: &Aabb, b: &Aabb) -> Aabb {
        merge_finite(a, b)
    }
    #[inline]
    fn prefetch_far(&self, p: u32) {
        prefetch(self.faces.as_ptr().wrapping_add(p as usize));
    }
    #[inline]
    fn prefetch_near(&self, p: u32) {
        if let Some(f) = self.faces.get(p as usize) {
            for &v in f {
                prefetch(self.pos.as_ptr().wrapping_add(v as usize));
            }
        }
    }
}
