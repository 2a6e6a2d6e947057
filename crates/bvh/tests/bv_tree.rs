//! BvTree: after build (both splits) and after refit, every node's volume contains every
//! triangle below it; the topology is a proper binary tree over all faces.

use glam::{DVec3, Vec3};
use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::bv_tree::{BvTree, Split};
use gprox_bvh::lane_tree::{LaneNode, LaneTree};
use gprox_bvh::obb::Obb;
use gprox_bvh::rss::Rss;
use gprox_bvh::sphere::Sphere;
use gprox_bvh::wide::{Wide4Node, Wide8Node, WideError, WideNode, WideTree, EMPTY, LEAF_BIT};
use gprox_bvh::wide_obb::{slot_center, WideObbTree};
use gprox_bvh::wide_rss::{slot, WideRssTree};
use gprox_bvh::LEAF;
use gprox_geometry::TriMesh;
use proptest::prelude::*;

fn check_tree<B: BoundingVolume>(tree: &BvTree<B>, mesh: &TriMesh) -> Result<(), TestCaseError> {
    let n = mesh.face_count();
    prop_assert_eq!(tree.nodes.len(), 2 * n - 1);
    let mut seen = vec![false; n];
    // Walk every node with the faces below it.
    let mut stack = vec![(0u32, Vec::<u32>::new())];
    while let Some((i, mut ancestors)) = stack.pop() {
        let node = &tree.nodes[i as usize];
        ancestors.push(i);
        if node.is_leaf() {
            let f = node.left as usize;
            prop_assert!(!seen[f], "face {} twice", f);
            seen[f] = true;
            for p in mesh.triangle(f) {
                let p = p.as_dvec3();
                for &a in &ancestors {
                    let bv = &tree.nodes[a as usize].bv;
                    let tol = 1e-9 * (1.0 + p.abs().max_element());
                    prop_assert!(bv.contains_point(p, tol), "node {} misses face {}", a, f);
                }
            }
        } else {
            prop_assert!(node.right != LEAF);
            stack.push((node.left, ancestors.clone()));
            stack.push((node.right, ancestors));
        }
    }
    prop_assert!(seen.iter().all(|&s| s));
    Ok(())
}

fn mesh() -> impl Strategy<Value = TriMesh> {
    (
        prop::collection::vec(prop::array::uniform3(-1.0f32..1.0), 3..40),
        prop::collection::vec(prop::array::uniform3(0usize..1000), 1..60),
    )
        .prop_map(|(v, f)| {
            let n = v.len();
            let pos: Vec<Vec3> = v.into_iter().map(Vec3::from_array).collect();
            let faces: Vec<[u32; 3]> = f.into_iter().map(|t| t.map(|i| (i % n) as u32)).collect();
            TriMesh::new(pos, faces).expect("valid")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rss_tree_contains(m in mesh(), world in any::<bool>()) {
        let split = if world { Split::World } else { Split::Oriented };
        let t = BvTree::<Rss>::build_with(&m, split);
        check_tree(&t, &m)?;
    }

    #[test]
    fn obb_and_sphere_trees_contain(m in mesh()) {
        check_tree(&BvTree::<Obb>::build(&m), &m)?;
        check_tree(&BvTree::<Sphere>::build(&m), &m)?;
    }

    #[test]
    fn refit_contains(m in mesh(), shift in prop::array::uniform3(-1.0f32..1.0), wobble in 0.0f32..0.5) {
        let mut m = m;
        let mut t = BvTree::<Rss>::build(&m);
        let mut o = BvTree::<Obb>::build(&m);
        let moved: Vec<Vec3> = m.positions().iter().enumerate()
            .map(|(i, p)| *p + Vec3::from_array(shift) * ((i % 3) as f32 * wobble))
            .collect();
        m.set_positions(moved).expect("same count");
        t.refit(&m);
        o.refit(&m);
        check_tree(&t, &m)?;
        check_tree(&o, &m)?;
    }
}

/// Every face appears once in the wide tree, and every slot's volume contains all triangles
/// below that slot.
fn check_wide<B: BoundingVolume, N: WideNode>(
    tree: &BvTree<B>,
    mesh: &TriMesh,
) -> Result<(), TestCaseError> {
    let w = WideTree::<B, N>::from_binary(tree).expect("collapses");
    let mut seen = vec![0u32; mesh.face_count()];
    // (wide node, volumes of the slots above it)
    let mut stack: Vec<(usize, Vec<B>)> = vec![(0, Vec::new())];
    while let Some((k, above)) = stack.pop() {
        for (s, &c) in w.nodes[k].children().iter().enumerate() {
            if c == EMPTY {
                continue;
            }
            let mut chain = above.clone();
            chain.push(*w.slot_bv(k, s));
            if c & LEAF_BIT != 0 {
                let f = (c & !LEAF_BIT) as usize;
                seen[f] += 1;
                for p in mesh.triangle(f) {
                    let p = p.as_dvec3();
                    for bv in &chain {
                        prop_assert!(bv.contains_point(p, 1e-9 * (1.0 + p.abs().max_element())));
                    }
                }
            } else {
                prop_assert!((c as usize) < w.nodes.len());
                stack.push((c as usize, chain));
            }
        }
    }
    prop_assert!(seen.iter().all(|&c| c == 1), "faces seen {:?}", seen);
    Ok(())
}

/// A wavy grid of `2k²` faces.
fn big_mesh(k: usize, amp: f32) -> TriMesh {
    let mut pos = Vec::new();
    for i in 0..=k {
        for j in 0..=k {
            let (x, y) = (i as f32 / k as f32, j as f32 / k as f32);
            pos.push(Vec3::new(x, y, amp * (7.0 * x).sin() * (5.0 * y).cos()));
        }
    }
    let mut faces = Vec::new();
    let id = |i: usize, j: usize| (i * (k + 1) + j) as u32;
    for i in 0..k {
        for j in 0..k {
            faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh::new(pos, faces).expect("valid")
}

/// Walks a tree in lanes: every face is below exactly one used slot chain, the used bits match
/// the links, and `check(node, slot, point)` holds for every vertex of every face and every slot
/// above it.
fn walk_lanes<N: LaneNode>(
    t: &LaneTree<N>,
    mesh: &TriMesh,
    check: impl Fn(&N, usize, DVec3) -> bool,
) -> Result<(), TestCaseError> {
    let mut seen = vec![0u32; mesh.face_count()];
    let mut stack: Vec<(usize, Vec<(usize, usize)>)> = vec![(0, Vec::new())];
    while let Some((k, above)) = stack.pop() {
        let n = &t.nodes()[k];
        for (s, &c) in n.children().iter().enumerate() {
            if c == EMPTY {
                prop_assert_eq!(n.used() >> s & 1, 0);
                continue;
            }
            prop_assert_eq!(n.used() >> s & 1, 1);
            let mut chain = above.clone();
            chain.push((k, s));
            let Some(f) = LaneTree::<N>::face(c) else {
                stack.push((c as usize, chain));
                continue;
            };
            seen[f as usize] += 1;
            for p in mesh.triangle(f as usize) {
                for &(k, s) in &chain {
                    prop_assert!(
                        check(&t.nodes()[k], s, p.as_dvec3()),
                        "node {} slot {}",
                        k,
                        s
                    );
                }
            }
        }
    }
    prop_assert!(seen.iter().all(|&c| c == 1), "faces seen {:?}", seen);
    Ok(())
}

/// Every face below a slot of a wide OBB tree lies in that slot's lane box (centre, f32 axes,
/// half-extents rounded up, to the axes' f32 rounding), once.
fn check_wide_obb(mesh: &TriMesh) -> Result<(), TestCaseError> {
    let w = WideObbTree::build(mesh).expect("collapses");
    walk_lanes(&w, mesh, |n, s, p| {
        let d = p - slot_center(n, s);
        (0..3).all(|i| {
            let axis = DVec3::new(
                f64::from(n.axes[3 * i][s]),
                f64::from(n.axes[3 * i + 1][s]),
                f64::from(n.axes[3 * i + 2][s]),
            );
            let tol = 1e-6 * (1.0 + d.length());
            axis.dot(d).abs() <= f64::from(n.half[i][s]) + tol
        })
    })
}

/// Every face below a slot of a wide RSS tree lies in that slot's volume, once.
fn check_wide_rss(mesh: &TriMesh) -> Result<(), TestCaseError> {
    let w = WideRssTree::build(mesh).expect("collapses");
    walk_lanes(&w, mesh, |n, s, p| {
        slot(n, s).contains_point(p, 1e-9 * (1.0 + p.abs().max_element()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn wide_obb_lanes_contain_every_face(m in mesh()) {
        check_wide_obb(&m)?;
    }

    #[test]
    fn wide_rss_lanes_contain_every_face(m in mesh()) {
        check_wide_rss(&m)?;
    }

    #[test]
    fn wide_trees_keep_every_face(m in mesh()) {
        let t = BvTree::<Rss>::build(&m);
        check_wide::<Rss, Wide4Node>(&t, &m)?;
        check_wide::<Rss, Wide8Node>(&t, &m)?;
    }
}

proptest! {
    // Larger meshes: fewer cases, each exercising the merge path above the fitting limit.
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn large_trees_contain(amp in 0.0f32..0.3) {
        const LIMIT: usize = 512;
        let m = big_mesh(50, amp);
        prop_assert!(m.face_count() > 4 * LIMIT);
        let topology = gprox_bvh::lbvh::build(&m);
        let t = BvTree::<Rss>::fit_with_limit(&m, &topology, LIMIT);
        check_tree(&t, &m)?;
        check_wide::<Rss, Wide8Node>(&t, &m)?;
        // The default build: parallel oriented codes, nodes over both corner levels.
        check_tree(&BvTree::<Rss>::build(&m), &m)?;
        check_wide_rss(&m)?;
    }
}

#[test]
fn single_triangle_tree() {
    let m = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).expect("valid");
    let t = BvTree::<Rss>::build(&m);
    assert_eq!(t.nodes.len(), 1);
    assert!(t.nodes[0]
        .bv
        .contains_point(DVec3::new(0.5, 0.5, 0.0), 1e-12));
}

/// A binary tree whose links leave the tree or loop is a typed error, not a panic or a hang.
#[test]
fn malformed_trees_do_not_collapse() {
    let m = big_mesh(4, 0.1);
    let t = BvTree::<Obb>::build(&m);
    let mut past = t.clone();
    past.nodes[0].left = past.nodes.len() as u32 + 5;
    assert!(matches!(
        WideObbTree::from_tree(past),
        Err(WideError::BadLink { node: 0, .. })
    ));
    let mut cycle = t.clone();
    let inner = (1..cycle.nodes.len())
        .find(|&i| !cycle.nodes[i].is_leaf())
        .expect("an inner node below the root");
    cycle.nodes[inner].left = 0;
    assert!(matches!(
        WideTree::<Obb, Wide8Node>::from_binary(&cycle),
        Err(WideError::NotATree)
    ));
    assert!(WideObbTree::from_tree(t).is_ok());
}
