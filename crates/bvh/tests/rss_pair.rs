//! The two-lane RSS bound of the distance query (`rss_pair::lower_bounds_mapped`) and the
//! eight-lane one of the wide query (`wide_rss::bounds`): bit for bit the scalar bound of the
//! mapped volume, below the distance of any two sampled points of the
//! volumes and below the exact rectangle distance, and 0 for volumes built to share a point.

use glam::{DMat3, DQuat, DVec2, DVec3};
use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::lane_tree::LaneNode;
use gprox_bvh::rss::Rss;
use gprox_bvh::rss_pair::lower_bounds_mapped;
use gprox_bvh::wide::EMPTY;
use gprox_bvh::wide_rss::{bounds, bounds_every_path, bounds_portable, slot, WideRssNode};
use proptest::prelude::*;

fn unit() -> impl Strategy<Value = DVec3> {
    prop::array::uniform3(-1.0f64..1.0)
        .prop_map(|v| DVec3::from_array(v).try_normalize().unwrap_or(DVec3::Z))
}

fn rotation() -> impl Strategy<Value = DMat3> {
    prop::array::uniform4(-1.0f64..1.0)
        .prop_map(|q| DMat3::from_quat(DQuat::from_xyzw(q[0], q[1], q[2], q[3] + 1.2).normalize()))
}

/// An RSS of size about `10^k`, sometimes flat (zero half length or radius), sometimes far
/// from the origin.
fn rss() -> impl Strategy<Value = Rss> {
    (
        prop::array::uniform3(-1.0f64..1.0),
        rotation(),
        prop::array::uniform2(0.0f64..1.0),
        0.0f64..0.5,
        0u8..4,
        -3i32..3,
    )
        .prop_map(|(c, axes, h, r, mode, k)| {
            let s = 10f64.powi(k);
            let far = if mode == 3 { 100.0 } else { 1.0 };
            Rss {
                center: DVec3::from_array(c) * s * far,
                axes,
                half_lengths: DVec2::new(h[0], if mode == 1 { 0.0 } else { h[1] }) * s,
                radius: if mode == 2 { 0.0 } else { r * s },
            }
        })
}

/// A rigid map `(q, t, grow)`.
fn map() -> impl Strategy<Value = (DMat3, DVec3, f64)> {
    (
        rotation(),
        prop::array::uniform3(-2.0f64..2.0),
        prop_oneof![Just(0.0), 0.0f64..1e-3],
    )
        .prop_map(|(q, t, g)| (q, DVec3::from_array(t), g))
}

/// A point of `v`: `(x, y)` in [-1, 1]² scales the half lengths, `w` in [0, 1] the radius.
fn point_in(v: &Rss, x: f64, y: f64, w: f64, dir: DVec3) -> DVec3 {
    v.center
        + v.axes.x_axis * (x * v.half_lengths.x)
        + v.axes.y_axis * (y * v.half_lengths.y)
        + dir * (w * v.radius)
}

fn scale(a: &Rss, b: &Rss) -> f64 {
    a.center.length() + b.center.length() + a.size() + b.size() + 1.0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Both lanes equal the scalar bound of the mapped volume, bit for bit.
    #[test]
    fn rss_pair_bounds_bit_identical(a0 in rss(), b0 in rss(), a1 in rss(), b1 in rss(), m in map(), near in any::<bool>()) {
        let (q, t, grow) = m;
        // Near pairs as well (the axes' gaps then decide, not the centre line).
        let b0 = if near { Rss { center: q.transpose() * (a0.center - t), ..b0 } } else { b0 };
        let got = lower_bounds_mapped([(&a0, &b0), (&a1, &b1)], &q, t, grow);
        let want = [(a0, b0), (a1, b1)].map(|(a, b)| a.distance_lower_bound(&b.transform_rigid(&q, t, grow)));
        prop_assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{:?} vs {:?}", got, want);
        // The trait's entry point takes the same path.
        let via = Rss::distance_lower_bounds_mapped([(&a0, &b0), (&a1, &b1)], &q, t, grow);
        prop_assert_eq!(via.map(f64::to_bits), want.map(f64::to_bits));
    }

    /// Below the distance of sampled points of A and of B's image, and below the exact
    /// rectangle distance of A and B's image (f64 reference).
    #[test]
    fn rss_pair_bound_below_points(a in rss(), b in rss(), m in map(), samples in prop::collection::vec((prop::array::uniform3(-1.0f64..1.0), unit(), prop::array::uniform3(-1.0f64..1.0), unit()), 8)) {
        let (q, t, grow) = m;
        let [lb, _] = lower_bounds_mapped([(&a, &b), (&b, &a)], &q, t, grow);
        let tol = 1e-12 * scale(&a, &b);
        for (u, du, v, dv) in samples {
            let pa = point_in(&a, u[0], u[1], u[2].abs(), du);
            let pb = q * point_in(&b, v[0], v[1], v[2].abs(), dv) + t;
            prop_assert!(lb <= pa.distance(pb) + tol, "bound {lb} > sampled {}", pa.distance(pb));
        }
        let exact = a.distance(&b.transform_rigid(&q, t, grow));
        prop_assert!(lb <= exact + tol, "bound {lb} > rectangle distance {exact}");
    }

    /// Volumes built to share a point (a point of A on the rim of B's image) give 0.
    #[test]
    fn rss_pair_touching_gives_zero(a in rss(), b in rss(), m in map(), u in prop::array::uniform3(-1.0f64..1.0), du in unit(), v in prop::array::uniform2(-1.0f64..1.0), dv in unit()) {
        let (q, t, grow) = m;
        // The shared point, in A's frame.
        let p = point_in(&a, u[0], u[1], u[2].abs(), du);
        // B's image: a rectangle point at `p + r_B dv`; back to B's model frame.
        let img_axes = q * b.axes;
        let rect = p + dv * b.radius;
        let img_center = rect
            - img_axes.x_axis * (v[0] * b.half_lengths.x)
            - img_axes.y_axis * (v[1] * b.half_lengths.y);
        let b = Rss { center: q.transpose() * (img_center - t), ..b };
        let got = lower_bounds_mapped([(&a, &b), (&a, &b)], &q, t, grow);
        prop_assert_eq!(got, [0.0, 0.0]);
    }
}

/// A node of eight volumes (the first `used` slots linked, the rest empty).
fn node_of(vols: &[Rss; 8], used: usize) -> WideRssNode {
    let children = std::array::from_fn(|s| if s < used { s as u32 } else { EMPTY });
    let mut n = WideRssNode::with_children(children);
    for (s, v) in vols.iter().enumerate() {
        n.set_slot(s, v);
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The eight-lane bound equals the scalar bound of each slot, bit for bit, on the dispatched
    /// lanes and on every path the CPU runs (portable, AVX2, AVX-512F); slots read back as
    /// written.
    #[test]
    fn wide_bounds_bit_identical(vols in prop::array::uniform8(rss()), o in rss(), m in map(), near in 0usize..8, used in 1usize..=8) {
        let (q, t, grow) = m;
        let mut vols = vols;
        // One slot near the other volume (the axes' gaps decide there, not the centre line).
        vols[near].center = o.center + DVec3::new(1e-3, 0.0, 0.0) * o.size();
        let o = o.transform_rigid(&q, t, grow);
        let n = node_of(&vols, used);
        let got = bounds(&n, &o);
        prop_assert_eq!(got.map(f64::to_bits), bounds_portable(&n, &o).map(f64::to_bits));
        for each in bounds_every_path(&n, &o) {
            prop_assert_eq!(got.map(f64::to_bits), each.map(f64::to_bits));
        }
        for (s, v) in vols.iter().enumerate() {
            prop_assert_eq!(slot(&n, s), *v);
            prop_assert_eq!(got[s].to_bits(), v.distance_lower_bound(&o).to_bits(), "slot {}", s);
        }
        prop_assert_eq!(n.used(), (1u32 << used) - 1);
    }
}
