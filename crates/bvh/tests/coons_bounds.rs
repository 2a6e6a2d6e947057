//! Properties of the Coons BVH: the bounds of every cell on random descents contain dense
//! samples of the surface over that cell; quantised ε never under-estimates.

use gprox_bvh::coons::quantise::{dequantise, quantise};
use gprox_bvh::coons::{Cell, CoonsBvh, CoonsOptions};
use gprox_geometry::freeform::NurbsSurface;
use gprox_geometry::glam::DVec3;
use proptest::prelude::*;

/// Closest point on triangle `abc` to `p` (Voronoi-region walk), returned as a distance.
fn point_triangle_distance(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (p - a).length();
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (p - b).length();
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (p - (a + ab * v)).length();
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (p - c).length();
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (p - (a + ac * w)).length();
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (p - (b + (c - b) * w)).length();
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    if !(v.is_finite() && w.is_finite()) {
        // Degenerate triangle: distance to its edges.
        return [(a, b), (b, c), (c, a)]
            .iter()
            .map(|&(x, y)| {
                let d = y - x;
                let t = if d.length_squared() > 0.0 {
                    ((p - x).dot(d) / d.length_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                (p - (x + d * t)).length()
            })
            .fold(f64::INFINITY, f64::min);
    }
    (p - (a + ab * v + ac * w)).length()
}

/// Distance from `p` to the tetrahedron (convex hull of 4 points).
fn point_tetra_distance(p: DVec3, t: &[DVec3; 4]) -> f64 {
    let faces = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)];
    let vol = (t[1] - t[0]).dot((t[2] - t[0]).cross(t[3] - t[0]));
    if vol.abs() > 1e-300 {
        let inside = faces.iter().enumerate().all(|(k, &(a, b, c))| {
            let opp = t[6 - a - b - c];
            let n = (t[b] - t[a]).cross(t[c] - t[a]);
            let s_opp = n.dot(opp - t[a]);
            let s_p = n.dot(p - t[a]);
            let _ = k;
            s_p * s_opp >= 0.0
        });
        if inside {
            return 0.0;
        }
    }
    faces
        .iter()
        .map(|&(a, b, c)| point_triangle_distance(p, t[a], t[b], t[c]))
        .fold(f64::INFINITY, f64::min)
}

fn surface_strategy() -> impl Strategy<Value = NurbsSurface> {
    (
        1usize..=3,
        1usize..=3,
        prop::collection::vec(-1.0f64..1.0, 3 * 36),
        prop::collection::vec(0.3f64..3.0, 36),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(p, q, c, w, rational, split_knot)| {
            let (nu, nv) = (if split_knot { p + 2 } else { p + 1 }, q + 1);
            let pts: Vec<DVec3> = (0..nu * nv)
                .map(|k| {
                    let (i, j) = (k / nv, k % nv);
                    DVec3::new(i as f64, j as f64, 0.0)
                        + DVec3::new(c[3 * k], c[3 * k + 1], c[3 * k + 2]) * 0.3
                })
                .collect();
            let mut ku = vec![0.0; p + 1];
            if split_knot {
                ku.push(0.4);
            }
            ku.extend(std::iter::repeat_n(1.0, p + 1));
            let mut kv = vec![0.0; q + 1];
            kv.extend(std::iter::repeat_n(2.0, q + 1));
            let weights = rational.then(|| w[..nu * nv].to_vec());
            NurbsSurface::new([p, q], [ku, kv], [nu, nv], pts, weights).unwrap()
        })
}

fn check_cell(bvh: &CoonsBvh, surfaces: &[NurbsSurface], cell: &Cell) -> Result<(), TestCaseError> {
    let b = bvh.bound(surfaces, cell);
    let s = &surfaces[cell.surface as usize];
    let slack = 1e-12 * bvh.unit;
    for i in 0..=6 {
        for j in 0..=6 {
            let u = cell.rect.u0 + (cell.rect.u1 - cell.rect.u0) * i as f64 / 6.0;
            let v = cell.rect.v0 + (cell.rect.v1 - cell.rect.v0) * j as f64 / 6.0;
            let p = s.point(u, v);
            let d = point_tetra_distance(p, &b.corners);
            prop_assert!(
                d <= b.offset + slack,
                "{cell:?}: sample ({u},{v}) at {d} > offset {}",
                b.offset
            );
            if let Some((c, r)) = b.sphere {
                prop_assert!((p - c).length() <= r + slack, "{cell:?}: outside sphere");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn bounds_contain_samples_at_every_level(
        s in surface_strategy(),
        eps in 5e-3f64..5e-2,
        path in prop::collection::vec(any::<bool>(), 64),
        budget in prop::option::of(1usize..40),
    ) {
        let surfaces = vec![s];
        let mut opts = CoonsOptions { epsilon: eps, ..Default::default() };
        if let Some(b) = budget {
            opts.max_nodes_per_surface = b;
        }
        let bvh = CoonsBvh::build(&surfaces, &opts).unwrap();
        let st = bvh.stats();
        // A binary tree within the budget: every internal node has two children.
        prop_assert!(st.nodes <= opts.max_nodes_per_surface && st.nodes % 2 == 1);
        prop_assert_eq!(st.coons_leaves + st.exact_leaves, st.nodes.div_ceil(2));
        for root in bvh.root_cells(&surfaces) {
            let mut cell = root;
            let mut step = 0;
            loop {
                check_cell(&bvh, &surfaces, &cell)?;
                let Some(kids) = bvh.children(&surfaces, &cell) else { break };
                // Children tile the parent.
                let (a, b) = (kids[0].rect, kids[1].rect);
                prop_assert!((a.u0 == cell.rect.u0 && b.u1 == cell.rect.u1) && (a.v0 == cell.rect.v0 && b.v1 == cell.rect.v1));
                cell = kids[usize::from(path[step % path.len()])];
                step += 1;
            }
            let node = match cell.kind {
                gprox_bvh::coons::CellKind::Surface { node } => Some(node as usize),
                _ => None,
            };
            prop_assert!(bvh.is_coons_level(&cell) || node.is_some_and(|n| bvh.is_exact_leaf(n)));
        }
    }

    #[test]
    fn quantised_eps_never_underestimates(x in 0.0f64..1.0, base in 1e-3f64..1e3, tiny in any::<bool>()) {
        let value = if tiny { x * 1e-7 * base } else { x * base };
        let q = quantise(value, base).unwrap();
        prop_assert!(dequantise(q, base) >= value);
        if q < 255 {
            prop_assert!(dequantise(q + 1, base) < value, "not the tightest level");
        }
        prop_assert!(quantise(base * 1.0000001, base).is_none());
    }
}

#[test]
fn leaf_coons_patches_are_within_epsilon_on_samples() {
    let surfaces = gprox_geometry::freeform::teapot();
    let bvh = CoonsBvh::build(
        &surfaces,
        &CoonsOptions {
            epsilon: 1e-3,
            ..Default::default()
        },
    )
    .unwrap();
    let mut stack = bvh.root_cells(&surfaces);
    let mut leaves = 0;
    while let Some(c) = stack.pop() {
        if bvh.is_coons_level(&c) {
            leaves += 1;
            let s = &surfaces[c.surface as usize];
            for i in 0..=8 {
                for j in 0..=8 {
                    let (a, b) = (i as f64 / 8.0, j as f64 / 8.0);
                    let x = gprox_bvh::coons::coons_point(s, &c.rect, a, b);
                    let p = s.point(
                        c.rect.u0 + a * (c.rect.u1 - c.rect.u0),
                        c.rect.v0 + b * (c.rect.v1 - c.rect.v0),
                    );
                    assert!((x - p).length() <= bvh.epsilon * (1.0 + 1e-9));
                }
            }
            continue;
        }
        stack.extend(bvh.children(&surfaces, &c).unwrap());
    }
    assert_eq!(leaves, bvh.leaf_count);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Cached basis values change no bound (equal values), at every level of a random descent.
    #[test]
    fn cached_bounds_equal_direct_bounds(
        s in surface_strategy(),
        eps in 5e-3f64..5e-2,
        path in prop::collection::vec(any::<bool>(), 64),
    ) {
        let surfaces = vec![s];
        let bvh = CoonsBvh::build(&surfaces, &CoonsOptions { epsilon: eps, ..Default::default() }).unwrap();
        let mut direct = bvh.clone();
        direct.basis = gprox_geometry::freeform::basis_cache::BasisCache::default();
        let mut cell = bvh.root_cells(&surfaces)[0];
        let mut step = 0;
        loop {
            let (x, y) = (bvh.bound(&surfaces, &cell), direct.bound(&surfaces, &cell));
            prop_assert_eq!(x, y);
            let Some(kids) = bvh.children(&surfaces, &cell) else { break };
            cell = kids[usize::from(path[step % path.len()])];
            step += 1;
        }
    }
}

/// A tiny node budget leaves exact leaves whose surface-level bounds still contain the surface,
/// and a zero budget is a typed error.
#[test]
fn node_budget_is_respected_and_validated() {
    let surfaces = gprox_geometry::freeform::teapot();
    let opts = CoonsOptions {
        epsilon: 1e-4,
        max_nodes_per_surface: 7,
        ..Default::default()
    };
    let bvh = CoonsBvh::build(&surfaces, &opts).unwrap();
    let st = bvh.stats();
    assert!(st.exact_leaves > 0 && st.nodes <= 7 * surfaces.len());
    assert_eq!(st.coons_leaves, bvh.leaf_count);
    let full = CoonsBvh::build(
        &surfaces,
        &CoonsOptions {
            epsilon: 1e-4,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(full.stats().exact_leaves, 0);
    assert!(full.stats().nodes > st.nodes && full.stats().bytes > st.bytes);
    let mut stack = bvh.root_cells(&surfaces);
    let mut exact = 0;
    while let Some(c) = stack.pop() {
        if let gprox_bvh::coons::CellKind::Surface { node } = c.kind {
            if bvh.is_exact_leaf(node as usize) {
                exact += 1;
                assert!(bvh.children(&surfaces, &c).is_none());
                let b = bvh.bound(&surfaces, &c);
                let s = &surfaces[c.surface as usize];
                for i in 0..=8 {
                    for j in 0..=8 {
                        let u = c.rect.u0 + (c.rect.u1 - c.rect.u0) * i as f64 / 8.0;
                        let v = c.rect.v0 + (c.rect.v1 - c.rect.v0) * j as f64 / 8.0;
                        let p = s.point(u, v);
                        let d = point_tetra_distance(p, &b.corners);
                        assert!(d <= b.offset + 1e-12 * bvh.unit);
                    }
                }
                continue;
            }
        }
        if let Some(k) = bvh.children(&surfaces, &c) {
            stack.extend(k);
        }
    }
    assert_eq!(exact, st.exact_leaves);
    assert!(matches!(
        CoonsBvh::build(
            &surfaces,
            &CoonsOptions {
                max_nodes_per_surface: 0,
                ..Default::default()
            }
        ),
        Err(gprox_bvh::coons::CoonsError::BadBudget(0))
    ));
}
