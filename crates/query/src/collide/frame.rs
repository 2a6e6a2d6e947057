//! The space in which node boxes of two posed trees are compared, with a rigorous padding.
//!
//! The exact triangle test works on the f64 world corners from
//! [`gprox_geometry::transform::transform_point`], which carry rounding. A node test is
//! *conservative* when it never rejects two nodes whose (rounded) world triangles meet, or come
//! within the margin. Two ways:
//!
//! * **Local** (A's pose is a rotation up to f32 rounding): B's boxes are mapped into A's local
//!   frame by `M = R_Aᵀ R_B`, `t' = R_Aᵀ (t_B − t_A)`; A's f32 boxes are used as they are.
//!   `R_Aᵀ` is not exactly `R_A⁻¹`: with `N = R_Aᵀ R_A`, `η = ‖N − I‖∞ < 1/2` bounds the
//!   difference by `‖R_A⁻¹ − R_Aᵀ‖∞ ≤ η / (1 − η) · ‖R_Aᵀ‖∞`, and that term, the rounding of the
//!   world corners (both sides), the rounding of the mapping and the margin (scaled by
//!   `‖R_A⁻¹‖∞ ≤ ‖R_Aᵀ‖∞ / (1 − η)`) make up one padding added to every mapped box.
//! * **World** (any other affine pose): both trees' boxes are mapped to world space, each padded
//!   by the rounding of its corners and of the mapping, plus the margin.
//!
//! A box with centre `c` and half-extent `h` maps to centre `M c + t` and half-extent `|M| h`.
//! All rounding terms use the relative bound [`K`] (about 90 units in the last place, far above
//! the few rounding steps involved), applied to magnitudes bounded by the root boxes.

use glam::Vec3A;
use gprox_bvh::Aabb;
use gprox_geometry::transform::Pose64;

/// Relative bound used for every rounding term (generous: the operations involved round a few
/// times at `2^-53` each).
pub(crate) const K: f64 = 1e-14;

/// A 3x4 affine map in f64 applied to boxes, with a padding added on every side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxMap {
    m: [[f64; 3]; 3],
    /// `|m|` entrywise (maps half-extents).
    abs: [[f64; 3]; 3],
    t: [f64; 3],
    pad: f64,
}

impl BoxMap {
    fn new(m: [[f64; 3]; 3], t: [f64; 3], pad: f64) -> Self {
        let abs = m.map(|r| r.map(f64::abs));
        Self { m, abs, t, pad }
    }

    /// The f32 version of this map for boxes with coordinates within `±mag`, or `None` when its
    /// figures come near the f32 range (the f32 evaluation could overflow).
    pub(crate) fn f32_map(&self, mag: f64) -> Option<BoxMap32> {
        let reach = 2.0 * norm(&self.m) * mag + max_abs(&self.t) + self.pad;
        if !reach.is_finite() || reach >= 1e30 {
            return None;
        }
        let pad = up32((self.pad + K32 * reach + TINY32) * (1.0 + K32));
        let col = |m: &[[f64; 3]; 3], j: usize| {
            Vec3A::new(m[0][j] as f32, m[1][j] as f32, m[2][j] as f32)
        };
        Some(BoxMap32 {
            cols: [0, 1, 2].map(|j| col(&self.m, j)),
            abs_cols: [0, 1, 2].map(|j| col(&self.abs, j)),
            t: Vec3A::new(self.t[0] as f32, self.t[1] as f32, self.t[2] as f32),
            pad: Vec3A::splat(pad),
        })
    }

    /// The padded image of `b`: `[lo; 3]` then `[hi; 3]`.
    #[inline]
    pub(crate) fn map(&self, b: &Aabb) -> [f64; 6] {
        let c = [0, 1, 2].map(|i| (b.min[i] as f64 + b.max[i] as f64) * 0.5);
        let h = [0, 1, 2].map(|i| (b.max[i] as f64 - b.min[i] as f64) * 0.5);
        let mut out = [0.0; 6];
        for i in 0..3 {
            let (r, a) = (&self.m[i], &self.abs[i]);
            let cc = r[0] * c[0] + r[1] * c[1] + r[2] * c[2] + self.t[i];
            let hh = a[0] * h[0] + a[1] * h[1] + a[2] * h[2] + self.pad;
            out[i] = cc - hh;
            out[i + 3] = cc + hh;
        }
        out
    }
}

/// Relative bound on the f32 rounding of [`BoxMap32::map`]: the map's entries rounded to f32,
/// the centre and half-extent of the input box, two dot products of three terms and the final
/// sums round a dozen times at `2^-24` each (≈ 7e-7 in all); 4e-6 leaves a wide margin.
const K32: f64 = 4e-6;
/// Absolute term covering subnormal rounding (halving a subnormal loses a bit).
const TINY32: f64 = 1e-30;

/// A box in f32 lanes (`w` unused), for the 4-wide node test.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Box32 {
    /// Lower corner.
    pub(crate) lo: Vec3A,
    /// Upper corner.
    pub(crate) hi: Vec3A,
}

impl Box32 {
    /// A stored box as it is (exact).
    #[inline(always)]
    pub(crate) fn stored(b: &Aabb) -> Self {
        Self {
            lo: Vec3A::from_array(b.min),
            hi: Vec3A::from_array(b.max),
        }
    }

    /// Whether the two closed boxes overlap.
    #[inline(always)]
    pub(crate) fn overlaps(&self, o: &Self) -> bool {
        (self.lo.cmple(o.hi) & o.lo.cmple(self.hi)).all()
    }
}

/// A [`BoxMap`] evaluated in f32, its padding grown by a bound on the f32 rounding so that its
/// image of a box always contains the image in exact arithmetic, padded as the f64 map pads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxMap32 {
    cols: [Vec3A; 3],
    abs_cols: [Vec3A; 3],
    t: Vec3A,
    pad: Vec3A,
}

impl BoxMap32 {
    /// The padded image of `b` (coordinates within the `mag` given to [`BoxMap::f32_map`]).
    #[inline(always)]
    pub(crate) fn map(&self, b: &Aabb) -> Box32 {
        let (lo, hi) = (Vec3A::from_array(b.min), Vec3A::from_array(b.max));
        // Halves first: no overflow for any finite box.
        let (lo, hi) = (lo * 0.5, hi * 0.5);
        let (c, h) = (lo + hi, hi - lo);
        let cc = self.cols[0] * c.x + self.cols[1] * c.y + self.cols[2] * c.z + self.t;
        let hh =
            self.abs_cols[0] * h.x + self.abs_cols[1] * h.y + self.abs_cols[2] * h.z + self.pad;
        Box32 {
            lo: cc - hh,
            hi: cc + hh,
        }
    }
}

/// `x` rounded up to f32 (`0 ≤ x < 1e30`: the next float up is the next bit pattern).
fn up32(x: f64) -> f32 {
    let y = x as f32;
    if (y as f64) < x {
        f32::from_bits(y.to_bits() + 1)
    } else {
        y
    }
}

/// How the two trees are compared.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Frame {
    /// A's boxes as stored, B's mapped (with all padding).
    Local(BoxMap),
    /// Both mapped to world space (padding split between them).
    World(BoxMap, BoxMap),
}

fn rot(p: &Pose64) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [p.rows[i][0], p.rows[i][1], p.rows[i][2]])
}

fn trans(p: &Pose64) -> [f64; 3] {
    [p.rows[0][3], p.rows[1][3], p.rows[2][3]]
}

/// Row-sum (∞) norm.
fn norm(m: &[[f64; 3]; 3]) -> f64 {
    m.iter()
        .map(|r| r[0].abs() + r[1].abs() + r[2].abs())
        .fold(0.0, f64::max)
}

fn transpose(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[j][i]))
}

fn mul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))
}

fn mul_vec(a: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

fn max_abs(v: &[f64; 3]) -> f64 {
    v[0].abs().max(v[1].abs()).max(v[2].abs())
}

/// Largest absolute coordinate of a box.
pub(crate) fn box_magnitude(b: &Aabb) -> f64 {
    (0..3)
        .map(|i| (b.min[i] as f64).abs().max((b.max[i] as f64).abs()))
        .fold(0.0, f64::max)
}

/// Bound on the rounding of `transform_point(pose, v)` for `|v|∞ ≤ mag`.
fn corner_rounding(r: &[[f64; 3]; 3], t: &[f64; 3], mag: f64) -> f64 {
    K * (norm(r) * mag + max_abs(t))
}

impl Frame {
    /// Whether node box `a` of A and node box `b` of B overlap in this frame (padded: never
    /// false for boxes whose rounded world contents meet or come within the margin).
    #[inline]
    pub(crate) fn overlaps(&self, a: &Aabb, b: &Aabb) -> bool {
        let (x, y) = match self {
            Frame::Local(mb) => {
                let (lo, hi) = (a.min.map(f64::from), a.max.map(f64::from));
                ([lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]], mb.map(b))
            }
            Frame::World(ma, mb) => (ma.map(a), mb.map(b)),
        };
        (0..3).all(|i| x[i] <= y[i + 3] && y[i] <= x[i + 3])
    }

    /// The comparison frame for trees with root-box magnitudes `mag_a`, `mag_b` (see
    /// [`box_magnitude`]) under `pa`, `pb`, with `margin ≥ 0`.
    pub(crate) fn new(pa: &Pose64, mag_a: f64, pb: &Pose64, mag_b: f64, margin: f64) -> Self {
        let (ra, ta, rb, tb) = (rot(pa), trans(pa), rot(pb), trans(pb));
        let eps_a = corner_rounding(&ra, &ta, mag_a);
        let eps_b = corner_rounding(&rb, &tb, mag_b);
        let rat = transpose(&ra);
        let n = mul(&rat, &ra);
        let eta = (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| (n[i][j] - f64::from(i == j)).abs())
                    .sum::<f64>()
            })
            .fold(0.0, f64::max)
            + K;
        if eta < 0.5 {
            let m = mul(&rat, &rb);
            let d = [0, 1, 2].map(|i| tb[i] - ta[i]);
            let t = mul_vec(&rat, &d);
            let nrat = norm(&rat);
            let inv = nrat / (1.0 - eta);
            let reach = norm(&rb) * mag_b + max_abs(&d);
            let pad = inv * (eps_a + eps_b + margin) * (1.0 + K)
                + eta / (1.0 - eta) * nrat * reach * (1.0 + K)
                + K * (3.0 * norm(&m) * mag_b + 2.0 * max_abs(&t) + nrat * reach);
            Frame::Local(BoxMap::new(m, t, pad))
        } else {
            let (a, b) = Self::world_maps(pa, mag_a, pb, mag_b, margin);
            Frame::World(a, b)
        }
    }

    /// The maps of the world frame for the same inputs as [`Frame::new`] (valid for any affine
    /// poses).
    pub(crate) fn world_maps(
        pa: &Pose64,
        mag_a: f64,
        pb: &Pose64,
        mag_b: f64,
        margin: f64,
    ) -> (BoxMap, BoxMap) {
        let one = |p: &Pose64, mag: f64| {
            let (r, t) = (rot(p), trans(p));
            let eps = corner_rounding(&r, &t, mag);
            let pad = eps + K * (2.0 * norm(&r) * mag + max_abs(&t)) + margin * 0.5;
            BoxMap::new(r, t, pad)
        };
        (one(pa, mag_a), one(pb, mag_b))
    }
}

#[cfg(test)]
mod tests {
    use glam::{DQuat, DVec3};
    use proptest::prelude::*;

    use super::*;

    fn pose(q: DQuat, t: DVec3) -> Pose64 {
        let m = glam::DMat3::from_quat(q);
        let mut rows = [[0.0; 4]; 3];
        for (i, row) in rows.iter_mut().enumerate() {
            *row = [m.row(i).x, m.row(i).y, m.row(i).z, t[i]];
        }
        Pose64 { rows }
    }

    proptest! {
        /// The f32 image of a box contains its f64 image (which carries only f64 rounding,
        /// far below the f32 map's slack), for boxes within the magnitude given.
        #[test]
        fn f32_image_contains_f64_image(
            axis in (-1.0f64..1.0, -1.0f64..1.0, 0.1f64..1.0),
            angle in -3.2f64..3.2,
            t in (-50.0f64..50.0, -50.0f64..50.0, -50.0f64..50.0),
            c in (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0),
            h in (0.0f64..0.3, 0.0f64..0.3, 0.0f64..0.3),
            scale in prop::sample::select(vec![1e-3, 1.0, 7.0, 1e4]),
            margin in prop::sample::select(vec![0.0, 1e-3, 0.5]),
        ) {
            let q = DQuat::from_axis_angle(DVec3::new(axis.0, axis.1, axis.2).normalize(), angle);
            let pb = pose(q, DVec3::new(t.0, t.1, t.2) * scale);
            let pa = pose(DQuat::from_rotation_z(0.3), DVec3::ZERO);
            let mag = 1.3 * scale;
            let Frame::Local(m) = Frame::new(&pa, mag, &pb, mag, margin) else {
                panic!("rotations compare in a local frame");
            };
            let lo = [c.0 - h.0, c.1 - h.1, c.2 - h.2].map(|v| (v * scale) as f32);
            let hi = [c.0 + h.0, c.1 + h.1, c.2 + h.2].map(|v| (v * scale) as f32);
            let b = Aabb { min: lo, max: hi };
            let wide = m.map(&b);
            let narrow = m.f32_map(mag).expect("figures in f32 range").map(&b);
            for i in 0..3 {
                prop_assert!((narrow.lo[i] as f64) <= wide[i]);
                prop_assert!((narrow.hi[i] as f64) >= wide[i + 3]);
            }
        }
    }

    #[test]
    fn f32_map_refused_near_the_f32_range() {
        let p = Pose64::IDENTITY;
        let Frame::Local(m) = Frame::new(&p, 1e31, &p, 1e31, 0.0) else {
            panic!("identity compares in a local frame");
        };
        assert!(m.f32_map(1e31).is_none());
        assert!(m.f32_map(1e20).is_some());
    }
}
