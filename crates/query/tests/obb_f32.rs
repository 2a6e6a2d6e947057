//! The f32 OBB node test ([`LocalMap`] with [`CollisionVolume::overlaps_local`]) against
//! independent checks: it never rejects what the f64 test accepts, nor boxes that share a point
//! (sampled points of one box inside the other; boxes built to touch at one point, along an
//! edge crossing or over a face, under random rotations), and it rejects those boxes pushed apart
//! by a gap well above its pad.

use gprox_bvh::obb::Obb;
use gprox_geometry::glam::{DMat3, DQuat, DVec3};
use gprox_query::collide::{CollisionVolume, LocalMap};
use proptest::prelude::*;

fn rotation(v: [f64; 4]) -> DMat3 {
    let q = DQuat::from_xyzw(v[0], v[1], v[2], v[3]);
    let q = if q.length() > 0.1 {
        q.normalize()
    } else {
        DQuat::IDENTITY
    };
    DMat3::from_quat(q)
}

fn quat() -> impl Strategy<Value = [f64; 4]> {
    [-1.0f64..1.0, -1.0..1.0, -1.0..1.0, -1.0..1.0]
}

fn vec3(r: f64) -> impl Strategy<Value = DVec3> {
    [-r..r, -r..r, -r..r].prop_map(DVec3::from_array)
}

fn halves() -> impl Strategy<Value = DVec3> {
    [1e-3f64..1.0, 1e-3..1.0, 1e-3..1.0].prop_map(DVec3::from_array)
}

fn scale() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![1e-3, 1.0, 37.0, 1e4])
}

/// B given in world space, stored in the frame that `(q, t)` maps to world space.
fn stored(q: &DMat3, t: DVec3, center: DVec3, axes: DMat3, half: DVec3) -> Obb {
    let qt = q.transpose();
    Obb {
        center: qt * (center - t),
        axes: qt * axes,
        half_extents: half,
    }
}

fn map_for(a: &Obb, b: &Obb, q: DMat3, t: DVec3, grow: f64) -> LocalMap {
    let mag = (a.center.abs().max_element() + a.half_extents.element_sum())
        .max(b.center.abs().max_element() + b.half_extents.element_sum());
    LocalMap::new(q, t, grow, 2.0 * mag)
}

/// Whether world point `x` lies in `a` (f64; only points well inside or well outside matter).
fn contains(a: &Obb, x: DVec3) -> bool {
    let l = a.axes.transpose() * (x - a.center);
    (0..3).all(|i| l[i].abs() <= a.half_extents[i])
}

/// The scale `Σ|T| + Σh_A + Σh_B` of a pair with world centres `ca`, `cb`.
fn pair_scale(ca: DVec3, ha: DVec3, cb: DVec3, hb: DVec3) -> f64 {
    3f64.sqrt() * (cb - ca).length() + ha.element_sum() + hb.element_sum()
}

/// Checks `f32` on `b` touching `a`, pushed in by a hair, and pushed out along the unit
/// `n` by a gap that leaves every separating quantity `≥ 10^-3 S` (`sin` scales it for cross
/// axes).
#[allow(clippy::too_many_arguments)]
fn check_touching(
    a: &Obb,
    q: &DMat3,
    t: DVec3,
    cbw: DVec3,
    bw: DMat3,
    hb: DVec3,
    n: DVec3,
    sin: f64,
) -> Result<(), TestCaseError> {
    let s = pair_scale(a.center, a.half_extents, cbw, hb);
    let make = |c: DVec3| stored(q, t, c, bw, hb);
    let (touch, inside) = (make(cbw), make(cbw - n * (1e-9 * s)));
    let out = make(cbw + n * (1e-3 * s / sin));
    for (b, want) in [(touch, true), (inside, true), (out, false)] {
        let m = map_for(a, &b, *q, t, 0.0);
        prop_assert_eq!(a.overlaps_local(&b, &m), want, "f32");
        prop_assert_eq!(a.overlaps_local(&b, &m.f64_only()), want, "f64");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random pairs placed near contact: f64 accepts ⇒ f32 accepts, and a sampled point of B
    /// inside A ⇒ both accept.
    #[test]
    fn never_rejects_what_f64_accepts_or_a_shared_point(
        ra in quat(), rb in quat(), rq in quat(),
        ha in halves(), hb in halves(), ca in vec3(1.0), dir in vec3(1.0),
        reach in 0.3f64..1.2, t in vec3(2.0), s in scale(),
        grow in prop::sample::select(vec![0.0, 1e-9, 1e-3]),
        samples in proptest::collection::vec(vec3(1.0), 8),
    ) {
        let q = rotation(rq);
        let (ha, hb, t) = (ha * s, hb * s, t * s);
        let a = Obb { center: ca * s, axes: rotation(ra), half_extents: ha };
        let dir = if dir.length() > 1e-3 { dir.normalize() } else { DVec3::X };
        let cbw = a.center + dir * (reach * (ha.length() + hb.length()));
        let bw = rotation(rb);
        let b = stored(&q, t, cbw, bw, hb);
        let m = map_for(&a, &b, q, t, grow * s);
        let fast = a.overlaps_local(&b, &m);
        if a.overlaps_local(&b, &m.f64_only()) {
            prop_assert!(fast);
        }
        let corners = (0..8).map(|k| DVec3::new(
            if k & 1 == 0 { -1.0 } else { 1.0 },
            if k & 2 == 0 { -1.0 } else { 1.0 },
            if k & 4 == 0 { -1.0 } else { 1.0 },
        ));
        for u in corners.chain(samples) {
            let x = cbw + bw * (u * hb);
            if contains(&a, x) {
                prop_assert!(fast, "B's point {x} lies in A");
            }
        }
    }

    /// A corner of B on a face of A (one shared point), B outside A's face plane.
    #[test]
    fn vertex_on_face(
        ra in quat(), rb in quat(), rq in quat(), ha in halves(), hb in halves(),
        ca in vec3(1.0), t in vec3(2.0), s in scale(), k in 0usize..3, up in any::<bool>(),
        f in vec3(1.0),
    ) {
        let (q, ax, bw) = (rotation(rq), rotation(ra), rotation(rb));
        let a = Obb { center: ca * s, axes: ax, half_extents: ha * s };
        let sg = if up { 1.0 } else { -1.0 };
        let mut u = f;
        u[k] = sg;
        let p = a.center + ax * (u * a.half_extents);
        let n = ax.col(k) * sg;
        let corner = DVec3::from_array([0, 1, 2].map(|j| -n.dot(bw.col(j)).signum()));
        let hb = hb * s;
        check_touching(&a, &q, t * s, p - bw * (corner * hb), bw, hb, n, 1.0)?;
    }

    /// An edge of B crossing an edge of A at one point; the boxes on either side of the plane
    /// through both edges (normal `A_k × B_0`).
    #[test]
    fn edge_on_edge(
        ra in quat(), rq in quat(), ha in halves(), hb in halves(), ca in vec3(1.0),
        t in vec3(2.0), s in scale(), k in 0usize..3, sg in (any::<bool>(), any::<bool>()),
        w in 0.1f64..0.9, phi in 0.2f64..2.9, psi in 0.0f64..6.3, along in -1.0f64..1.0,
    ) {
        let (q, ax) = (rotation(rq), rotation(ra));
        let a = Obb { center: ca * s, axes: ax, half_extents: ha * s };
        let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
        let (s1, s2) = (if sg.0 { 1.0 } else { -1.0 }, if sg.1 { 1.0 } else { -1.0 });
        let mut u = DVec3::ZERO;
        (u[k], u[k1], u[k2]) = (along, s1, s2);
        let p = a.center + ax * (u * a.half_extents);
        let n = (ax.col(k1) * (s1 * w) + ax.col(k2) * (s2 * (1.0 - w))).normalize();
        let ak = ax.col(k);
        let e = (ak * phi.cos() + n.cross(ak) * phi.sin()).normalize();
        let (u0, v0) = (n, e.cross(n));
        let bu = u0 * psi.cos() + v0 * psi.sin();
        let bv = e.cross(bu);
        let bw = DMat3::from_cols(e, bu, bv);
        let hb = hb * s;
        let cbw = p + bu * (n.dot(bu).signum() * hb.y) + bv * (n.dot(bv).signum() * hb.z);
        check_touching(&a, &q, t * s, cbw, bw, hb, n, phi.sin())?;
    }

    /// B's face lying on A's face (B turned about A's face normal, its face centre on A's face).
    #[test]
    fn face_on_face(
        ra in quat(), rq in quat(), ha in halves(), hb in halves(), ca in vec3(1.0),
        t in vec3(2.0), s in scale(), k in 0usize..3, up in any::<bool>(),
        theta in 0.0f64..6.3, f in vec3(1.0),
    ) {
        let (q, ax) = (rotation(rq), rotation(ra));
        let a = Obb { center: ca * s, axes: ax, half_extents: ha * s };
        let sg = if up { 1.0 } else { -1.0 };
        let n = ax.col(k) * sg;
        let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
        let (c, sn) = (theta.cos(), theta.sin());
        let mut cols = [DVec3::ZERO; 3];
        cols[k] = ax.col(k);
        cols[k1] = ax.col(k1) * c + ax.col(k2) * sn;
        cols[k2] = ax.col(k2) * c - ax.col(k1) * sn;
        let bw = DMat3::from_cols(cols[0], cols[1], cols[2]);
        let hb = hb * s;
        let mut u = f;
        u[k] = sg;
        let on_face = a.center + ax * (u * a.half_extents);
        check_touching(&a, &q, t * s, on_face + n * hb[k], bw, hb, n, 1.0)?;
    }
}

/// Figures near the f32 range fall back to the f64 test (same answers as f64 on a far pair and
/// a touching pair).
#[test]
fn huge_figures_use_f64() {
    let a = Obb {
        center: DVec3::splat(1e33),
        axes: DMat3::IDENTITY,
        half_extents: DVec3::splat(1e32),
    };
    let near = Obb {
        center: DVec3::new(1e33 + 2e32, 1e33, 1e33),
        ..a
    };
    let far = Obb {
        center: DVec3::new(1e33 + 3e32, 1e33, 1e33),
        ..a
    };
    let m = LocalMap::new(DMat3::IDENTITY, DVec3::ZERO, 0.0, 3e33);
    assert!(a.overlaps_local(&near, &m));
    assert!(!a.overlaps_local(&far, &m));
}
