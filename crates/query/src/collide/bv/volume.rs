//! The volume side of the tree collision queries: the overlap test under a mapping
//! ([`CollisionVolume`], with the fast 15-axis test for OBBs), trees as node sources (an AABB
//! tree reads as axis-aligned OBBs), and the rigorous comparison frame ([`Mapping`]).

use glam::{DMat3, DVec3, Mat3A};
use gprox_bvh::bounding_volume::{nearest_rotation, pose_parts, BoundingVolume};
use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::obb::Obb;
use gprox_bvh::rss::Rss;
use gprox_bvh::sphere::Sphere;
use gprox_bvh::Bvh;
use gprox_geometry::transform::Pose64;

use super::{obb32, K};

/// The local comparison frame of one query: B's volumes mapped by `x ↦ q x + t` and grown by
/// `grow`, with `q` kept in f32 lanes for the fast OBB test when the query's figures allow it.
#[derive(Clone, Copy, Debug)]
pub struct LocalMap {
    pub(super) q: DMat3,
    pub(super) t: DVec3,
    pub(super) grow: f64,
    pub(super) q32: Option<Mat3A>,
}

impl LocalMap {
    /// The map for volumes whose centre coordinates and half-extents are bounded by `mag` in
    /// both trees (the f32 test is used only when `mag`, `t` and `grow` are finite and below
    /// `10^30`; its rounding bound assumes the figures stay far from the f32 range, which a
    /// `mag` too small for the volumes could break).
    pub fn new(q: DMat3, t: DVec3, grow: f64, mag: f64) -> Self {
        let reach = mag + t.abs().max_element() + grow;
        let fits = reach.is_finite() && reach < 1e30 && q.is_finite();
        let q32 = fits.then(|| obb32::mat32(&q));
        Self { q, t, grow, q32 }
    }

    /// The same map evaluated in f64 only.
    pub fn f64_only(self) -> Self {
        Self { q32: None, ..self }
    }
}

/// A bounding volume usable by the tree collision queries: the overlap test of a volume in
/// the comparison frame against another volume mapped into it by `x ↦ q x + t` (`q` a rotation
/// up to rounding) and grown by `grow`. The default maps and calls
/// [`BoundingVolume::overlaps`]; volumes may override it with a faster test, which must stay
/// conservative (true whenever the volumes share a point, false only when proven apart).
pub trait CollisionVolume: BoundingVolume {
    /// Whether `self` overlaps `other` mapped by `(q, t)` and grown by `grow`.
    #[inline]
    fn overlaps_mapped(&self, other: &Self, q: &DMat3, t: DVec3, grow: f64) -> bool {
        self.overlaps(&other.transform_rigid(q, t, grow))
    }

    /// Whether `self` overlaps `other` mapped by `map` ([`Self::overlaps_mapped`] by default).
    #[inline]
    fn overlaps_local(&self, other: &Self, map: &LocalMap) -> bool {
        self.overlaps_mapped(other, &map.q, map.t, map.grow)
    }

    /// A volume of A prepared once for several tests under one map.
    type LocalA: Copy;
    /// A volume of B mapped once for several tests under one map.
    type MappedB: Copy;
    /// `self` as a volume of A under `map`.
    fn local_a(&self, map: &LocalMap) -> Self::LocalA;
    /// `self` as a volume of B under `map`.
    fn mapped_b(&self, map: &LocalMap) -> Self::MappedB;
    /// [`Self::overlaps_local`] on prepared volumes (same answer).
    fn overlaps_prepared(a: &Self::LocalA, b: &Self::MappedB, map: &LocalMap) -> bool;
}

/// Volumes without a prepared form: the prepared volume is the volume.
macro_rules! unprepared {
    ($t:ty) => {
        impl CollisionVolume for $t {
            type LocalA = Self;
            type MappedB = Self;
            #[inline]
            fn local_a(&self, _: &LocalMap) -> Self {
                *self
            }
            #[inline]
            fn mapped_b(&self, _: &LocalMap) -> Self {
                *self
            }
            #[inline]
            fn overlaps_prepared(a: &Self, b: &Self, map: &LocalMap) -> bool {
                a.overlaps_local(b, map)
            }
        }
    };
}
unprepared!(Rss);
unprepared!(Sphere);

/// The 15-axis separating-axis test in `self`'s box frame (Gottschalk et al., "OBBTree"), with
/// every gap required to exceed a bound on its rounding before it counts as separating.
impl CollisionVolume for Obb {
    /// The f32 test of [`obb32`] when the map allows it, else the f64 test.
    #[inline]
    fn overlaps_local(&self, other: &Self, map: &LocalMap) -> bool {
        Self::overlaps_prepared(&self.local_a(map), &other.mapped_b(map), map)
    }

    type LocalA = obb32::ObbA;
    type MappedB = obb32::ObbB;
    #[inline]
    fn local_a(&self, map: &LocalMap) -> obb32::ObbA {
        obb32::ObbA::new(self, map)
    }
    #[inline]
    fn mapped_b(&self, map: &LocalMap) -> obb32::ObbB {
        obb32::ObbB::new(self, map)
    }
    #[inline]
    fn overlaps_prepared(a: &obb32::ObbA, b: &obb32::ObbB, map: &LocalMap) -> bool {
        match (a, b) {
            (obb32::ObbA::Exact(a), obb32::ObbB::Exact(b)) => {
                a.overlaps_mapped(b, &map.q, map.t, map.grow)
            }
            _ => obb32::overlaps(a, b),
        }
    }

    #[inline]
    fn overlaps_mapped(&self, other: &Self, q: &DMat3, t: DVec3, grow: f64) -> bool {
        let at = self.axes.transpose();
        // B's edges and centre in A's box frame; the computed image of B's axes under `q` is
        // within a few ulps of the true one, absorbed by the K·Σg growth.
        let r = at * (*q * other.axes);
        let tv = at * ((*q * other.center + t) - self.center);
        let ha = self.half_extents.to_array();
        let g = other.half_extents + DVec3::splat(grow + K * other.half_extents.element_sum());
        let g = g.to_array();
        let rr = [
            r.x_axis.to_array(),
            r.y_axis.to_array(),
            r.z_axis.to_array(),
        ]; // rr[j][i]
        let ab: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| rr[j][i].abs()));
        let tv = tv.to_array();
        let scale = tv[0].abs()
            + tv[1].abs()
            + tv[2].abs()
            + ha.iter().sum::<f64>()
            + g.iter().sum::<f64>();
        let slack = 4.0 * K * scale;
        for i in 0..3 {
            let rb = g[0] * ab[i][0] + g[1] * ab[i][1] + g[2] * ab[i][2];
            if tv[i].abs() - (ha[i] + rb) > slack {
                return false;
            }
        }
        for j in 0..3 {
            let tl = tv[0] * rr[j][0] + tv[1] * rr[j][1] + tv[2] * rr[j][2];
            let ra = ha[0] * ab[0][j] + ha[1] * ab[1][j] + ha[2] * ab[2][j];
            if tl.abs() - (ra + g[j]) > slack {
                return false;
            }
        }
        for i in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            for j in 0..3 {
                let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
                let tl = tv[i2] * rr[j][i1] - tv[i1] * rr[j][i2];
                let ra = ha[i1] * ab[i2][j] + ha[i2] * ab[i1][j];
                let rb = g[j1] * ab[i][j2] + g[j2] * ab[i][j1];
                if tl.abs() - (ra + rb) > slack {
                    return false;
                }
            }
        }
        true
    }
}

/// A tree whose nodes give volumes of type `V` (model coordinates) with LBVH links.
pub(crate) trait NodeSource<V>: Sync {
    fn node_count(&self) -> usize;
    /// `(left, right)`; `right == LEAF` for a leaf whose `left` is the face.
    fn links(&self, i: usize) -> (u32, u32);
    fn volume(&self, i: usize) -> V;
    /// Upper bound of `|p|` over the vertices below the root, or NaN/∞ when not finite.
    fn reach(&self) -> f64;
}

impl<B: BoundingVolume> NodeSource<B> for BvTree<B> {
    fn node_count(&self) -> usize {
        self.nodes.len()
    }
    #[inline]
    fn links(&self, i: usize) -> (u32, u32) {
        (self.nodes[i].left, self.nodes[i].right)
    }
    #[inline]
    fn volume(&self, i: usize) -> B {
        self.nodes[i].bv
    }
    fn reach(&self) -> f64 {
        self.nodes.first().map_or(0.0, |n| n.bv.reach())
    }
}

/// An AABB tree read as axis-aligned OBBs (exact: f32 bounds are exact in f64).
impl NodeSource<Obb> for Bvh {
    fn node_count(&self) -> usize {
        self.nodes.len()
    }
    #[inline]
    fn links(&self, i: usize) -> (u32, u32) {
        (self.nodes[i].left, self.nodes[i].right)
    }
    #[inline]
    fn volume(&self, i: usize) -> Obb {
        let b = &self.nodes[i].aabb;
        let lo = DVec3::from_array(b.min.map(f64::from));
        let hi = DVec3::from_array(b.max.map(f64::from));
        Obb {
            center: (lo + hi) * 0.5,
            axes: DMat3::IDENTITY,
            half_extents: (hi - lo) * 0.5,
        }
    }
    fn reach(&self) -> f64 {
        let b = self.root_aabb();
        let m = DVec3::from_array(std::array::from_fn(|i| {
            f64::from(b.min[i].abs().max(b.max[i].abs()))
        }));
        m.length() * (1.0 + K)
    }
}

/// Row-sum (∞) norm.
fn norm(m: &DMat3) -> f64 {
    (0..3)
        .map(|i| m.row(i).abs().element_sum())
        .fold(0.0, f64::max)
}

/// How node volumes are compared (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(super) enum Mapping {
    /// A's volumes as stored; B's mapped by the rotation `q`, translation `t`, grown by `grow`.
    Local(LocalMap),
    /// Both mapped to world space.
    World {
        qa: DMat3,
        ta: DVec3,
        grow_a: f64,
        qb: DMat3,
        tb: DVec3,
        grow_b: f64,
    },
    /// No bound can be given (singular pose): every node pair is descended.
    All,
}

impl Mapping {
    /// `mag_*` bound `|p|` over each model's vertices (and its volumes' centres by half).
    pub(super) fn new(pa: &Pose64, mag_a: f64, pb: &Pose64, mag_b: f64, margin: f64) -> Self {
        let (ra, ta) = pose_parts(pa);
        let (rb, tb) = pose_parts(pb);
        let s3 = 3f64.sqrt() * (1.0 + K);
        // ∞-norm bounds of the rounding of the world corners (transform_point).
        let eps_a = K * (norm(&ra) * mag_a + ta.abs().max_element());
        let eps_b = K * (norm(&rb) * mag_b + tb.abs().max_element());
        let rat = ra.transpose();
        let n = rat * ra - DMat3::IDENTITY;
        let eta = norm(&n) + K;
        let local = if eta < 0.5 {
            let m = rat * rb;
            let d = tb - ta;
            let t = rat * d;
            let nrat = norm(&rat);
            let inv = nrat / (1.0 - eta);
            let reach = norm(&rb) * mag_b + d.abs().max_element();
            let pad = (inv * (eps_a + eps_b + margin)
                + eta / (1.0 - eta) * nrat * reach
                + K * (3.0 * norm(&m).max(nrat * norm(&rb)) * mag_b
                    + 2.0 * t.abs().max_element()
                    + nrat * reach))
                * (1.0 + K);
            let (q, e) = nearest_rotation(&m);
            // e·|q'| for the residual of q, the padding (∞ → Euclidean), and the rounding of
            // the volume's own centre mapping.
            let grow =
                (e * mag_b + s3 * pad + K * (4.0 * mag_b + t.abs().max_element())) * (1.0 + K);
            let mag = mag_a.max(mag_b);
            grow.is_finite()
                .then(|| Mapping::Local(LocalMap::new(q, t, grow, mag)))
        } else {
            None
        };
        if let Some(l) = local {
            return l;
        }
        let side = |r: &DMat3, t: DVec3, mag: f64, eps: f64| {
            let (q, e) = nearest_rotation(r);
            let grow = (e * mag
                + s3 * (eps + 0.5 * margin)
                + K * (4.0 * norm(r) * mag + t.abs().max_element()))
                * (1.0 + K);
            (q, grow)
        };
        let (qa, grow_a) = side(&ra, ta, mag_a, eps_a);
        let (qb, grow_b) = side(&rb, tb, mag_b, eps_b);
        if grow_a.is_finite() && grow_b.is_finite() {
            Mapping::World {
                qa,
                ta,
                grow_a,
                qb,
                tb,
                grow_b,
            }
        } else {
            Mapping::All
        }
    }
}
