//! Property tests of the LBVH build and refit against independent oracles:
//! boxes checked against the triangles' own vertices, the topology against a top-down radix
//! tree over `(code, slot)` keys, the order against `slice::sort`.

use gprox_bvh::refit_plan::{MeshRefitPlan, RefitPlan};
use gprox_bvh::{lbvh, morton, refit, sort, Aabb, Bvh, LEAF};
use gprox_geometry::{glam::Vec3, TriMesh};
use proptest::prelude::*;

/// Coordinates from a coarse grid (many duplicate centroids and codes) or continuous.
fn coord(grid: bool) -> BoxedStrategy<f32> {
    if grid {
        (-3i32..=3).prop_map(|v| v as f32 * 0.5).boxed()
    } else {
        (-100.0f32..100.0).boxed()
    }
}

fn mesh_strategy() -> impl Strategy<Value = (TriMesh, Vec<Vec3>)> {
    (any::<bool>(), 3usize..40, 1usize..80).prop_flat_map(|(grid, nv, nf)| {
        let v = || prop::collection::vec((coord(grid), coord(grid), coord(grid)), nv);
        let faces = prop::collection::vec([0..nv as u32, 0..nv as u32, 0..nv as u32], nf);
        (v(), faces, v()).prop_map(|(p, f, q)| {
            let to = |p: Vec<(f32, f32, f32)>| -> Vec<Vec3> {
                p.into_iter().map(|(x, y, z)| Vec3::new(x, y, z)).collect()
            };
            (TriMesh::new(to(p), f).unwrap(), to(q))
        })
    })
}

/// Primitives below every node, by an explicit walk (no use of the library's traversal).
fn prims_below(bvh: &Bvh, node: usize, out: &mut Vec<u32>) {
    let nd = bvh.nodes[node];
    if nd.right == LEAF {
        out.push(nd.left);
    } else {
        prims_below(bvh, nd.left as usize, out);
        prims_below(bvh, nd.right as usize, out);
    }
}

/// (a): every node's box is the exact box of the vertices below it; every face appears once;
/// parents agree with children.
fn check_tree(bvh: &Bvh, mesh: &TriMesh) {
    let n = mesh.face_count();
    assert_eq!(bvh.nodes.len(), 2 * n - 1);
    assert_eq!(bvh.parents.len(), 2 * n - 1);
    assert_eq!(bvh.parents[0], LEAF);
    for (i, nd) in bvh.nodes.iter().enumerate() {
        assert_eq!(nd.is_leaf(), i >= n - 1, "node {i} kind");
        if !nd.is_leaf() {
            assert_eq!(bvh.parents[nd.left as usize], i as u32);
            assert_eq!(bvh.parents[nd.right as usize], i as u32);
        }
        let mut prims = Vec::new();
        prims_below(bvh, i, &mut prims);
        let mut exact = Aabb::EMPTY;
        for &p in &prims {
            for v in mesh.triangle(p as usize) {
                assert!(nd.aabb.contains_point(v), "node {i} misses face {p}");
                exact = exact.merge(&Aabb::from_points(&[v]));
            }
        }
        assert_eq!(nd.aabb, exact, "node {i} box not tight");
    }
    let mut all = Vec::new();
    prims_below(bvh, 0, &mut all);
    all.sort_unstable();
    assert_eq!(
        all,
        (0..n as u32).collect::<Vec<_>>(),
        "each face exactly once"
    );
}

/// Top-down radix tree over 96-bit keys `(code << 32) | slot`: the set of (first, last, split).
fn radix_oracle(codes: &[u64]) -> Vec<(usize, usize, usize)> {
    let key = |i: usize| ((codes[i] as u128) << 32) | i as u128;
    let mut out = Vec::new();
    let mut stack = vec![(0usize, codes.len() - 1)];
    while let Some((f, l)) = stack.pop() {
        if f == l {
            continue;
        }
        let bit = 127 - (key(f) ^ key(l)).leading_zeros();
        let g = (f..l).rev().find(|&m| (key(m) >> bit) & 1 == 0).unwrap();
        out.push((f, l, g));
        stack.push((f, g));
        stack.push((g + 1, l));
    }
    out.sort_unstable();
    out
}

/// The (first, last, split) triples of a built tree.
fn tree_ranges(bvh: &Bvh) -> Vec<(usize, usize, usize)> {
    let n1 = bvh.leaf_count() - 1;
    // Leftmost and rightmost leaf slots by following child links.
    let end = |mut node: usize, right: bool| {
        while !bvh.nodes[node].is_leaf() {
            let nd = bvh.nodes[node];
            node = if right { nd.right } else { nd.left } as usize;
        }
        node - n1
    };
    let mut out: Vec<_> = (0..n1)
        .map(|i| {
            (
                end(i, false),
                end(i, true),
                end(bvh.nodes[i].left as usize, true),
            )
        })
        .collect();
    out.sort_unstable();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn build_and_refit_bound_every_primitive((mut mesh, moved) in mesh_strategy()) {
        let mut bvh = lbvh::build(&mesh);
        check_tree(&bvh, &mesh);
        mesh.set_positions(moved).unwrap();
        let before = bvh.clone();
        refit::refit(&mut bvh, &refit::triangle_aabbs(&mesh)).unwrap();
        check_tree(&bvh, &mesh);
        // Topology unchanged; the fused mesh refit gives identical boxes.
        let mut fused = before.clone();
        refit::refit_from_mesh(&mut fused, &mesh).unwrap();
        prop_assert_eq!(&fused, &bvh);
        // So does a refit plan made for the tree.
        let mut planned = before.clone();
        RefitPlan::new(&before).unwrap().refit_from_mesh(&mut planned, &mesh).unwrap();
        prop_assert_eq!(&planned, &bvh);
        // And a plan holding the mesh's faces in leaf order.
        let mut bound = before.clone();
        MeshRefitPlan::new(&before, &mesh).unwrap().refit(&mut bound, &mesh).unwrap();
        prop_assert_eq!(&bound, &bvh);
        for (a, b) in before.nodes.iter().zip(&bvh.nodes) {
            prop_assert_eq!((a.left, a.right), (b.left, b.right));
        }
    }

    #[test]
    fn order_and_topology_match_oracles((mesh, _) in mesh_strategy()) {
        let boxes = refit::triangle_aabbs(&mesh);
        let codes = lbvh::morton_codes(&boxes);
        let (sorted, order) = lbvh::sort_codes(&codes);
        let mut expect: Vec<(u64, u32)> = codes.iter().copied().zip(0..).collect();
        expect.sort_unstable();
        prop_assert_eq!(&sorted, &expect.iter().map(|p| p.0).collect::<Vec<_>>());
        prop_assert_eq!(&order, &expect.iter().map(|p| p.1).collect::<Vec<_>>());
        let bvh = lbvh::build_from_aabbs(&boxes);
        // The fused build equals the staged one (hierarchy, then refit) exactly.
        let mut staged = lbvh::hierarchy(&sorted, &order);
        refit::refit(&mut staged, &boxes).unwrap();
        prop_assert_eq!(&staged, &bvh);
        let n1 = boxes.len() - 1;
        for (k, &prim) in order.iter().enumerate() {
            prop_assert_eq!(bvh.nodes[n1 + k].left, prim);
        }
        if boxes.len() > 1 {
            prop_assert_eq!(tree_ranges(&bvh), radix_oracle(&sorted));
        }
    }

    #[test]
    fn radix_sort_equals_std_sort(keys in prop::collection::vec(any::<u64>(), 0..3000),
                                  low in any::<bool>()) {
        // `low`: few distinct values (many ties, many skipped passes).
        let keys: Vec<u64> = if low { keys.iter().map(|k| (k % 7) << 40).collect() } else { keys };
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(0..).collect();
        expect.sort_unstable();
        let (k, v) = sort::sort_codes(&keys);
        prop_assert_eq!(k, expect.iter().map(|p| p.0).collect::<Vec<_>>());
        prop_assert_eq!(v, expect.iter().map(|p| p.1).collect::<Vec<_>>());
    }

    #[test]
    fn morton_cells_follow_centroids(pts in prop::collection::vec((-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0), 2..50)) {
        // Decode every code and check each axis cell is the f64 quantisation of the centroid
        // within one cell (the f32 spec rounds), and that larger coordinates never get smaller
        // cells.
        let boxes: Vec<Aabb> = pts.iter().map(|&(x, y, z)| Aabb { min: [x, y, z], max: [x, y, z] }).collect();
        let codes = morton::codes63(&boxes);
        let s = morton::scene_box(&boxes);
        let e = morton::extent(&s);
        let cell = |code: u64, axis: u32| -> u32 {
            (0..21).fold(0, |acc, k| acc | ((((code >> (3 * k + 2 - axis)) & 1) as u32) << k))
        };
        for (b, &c) in boxes.iter().zip(&codes) {
            for (axis, &ext) in e.iter().enumerate() {
                let q = (b.min[axis] as f64 - s.min[axis] as f64) / ext as f64 * 2097152.0;
                let expect = q.clamp(0.0, 2097151.0);
                let got = cell(c, axis as u32) as f64;
                prop_assert!((got - expect.floor()).abs() <= 1.0, "axis {} got {} want {}", axis, got, expect);
            }
        }
        for (i, a) in boxes.iter().enumerate() {
            for (j, b) in boxes.iter().enumerate() {
                for axis in 0..3 {
                    if a.min[axis] < b.min[axis] {
                        prop_assert!(cell(codes[i], axis as u32) <= cell(codes[j], axis as u32), "{} {}", i, j);
                    }
                }
            }
        }
    }
}

#[test]
fn single_primitive_is_one_leaf() {
    let b = Aabb {
        min: [1.0, 2.0, 3.0],
        max: [4.0, 5.0, 6.0],
    };
    let bvh = lbvh::build_from_aabbs(&[b]);
    assert_eq!(bvh.nodes.len(), 1);
    assert_eq!(bvh.parents, vec![LEAF]);
    assert!(bvh.nodes[0].is_leaf());
    assert_eq!(bvh.nodes[0].aabb, b);
    let empty = lbvh::build_from_aabbs(&[]);
    assert!(empty.nodes.is_empty());
}

#[test]
fn identical_boxes_use_index_tie_break() {
    let b = Aabb {
        min: [0.0; 3],
        max: [1.0; 3],
    };
    let bvh = lbvh::build_from_aabbs(&[b; 9]);
    let n1 = 8;
    let leaves: Vec<u32> = bvh.nodes[n1..].iter().map(|n| n.left).collect();
    assert_eq!(leaves, (0..9).collect::<Vec<_>>());
    assert_eq!(tree_ranges(&bvh), radix_oracle(&[0; 9]));
}

#[test]
fn refit_rejects_mismatched_input() {
    let boxes = vec![
        Aabb {
            min: [0.0; 3],
            max: [1.0; 3],
        };
        5
    ];
    let mut bvh = lbvh::build_from_aabbs(&boxes);
    assert!(matches!(
        refit::refit(&mut bvh, &boxes[..3]),
        Err(refit::RefitError::PrimitiveOutOfRange { count: 3, .. })
    ));
    let mut broken = bvh.clone();
    broken.nodes[0].right = 0;
    assert!(matches!(
        refit::refit(&mut broken, &boxes),
        Err(refit::RefitError::BadChildren { node: 0, .. })
    ));
    let mut short = bvh.clone();
    short.nodes.pop();
    assert!(matches!(
        refit::refit(&mut short, &boxes),
        Err(refit::RefitError::BadNodeCount { .. })
    ));
    // A refit plan: made for intact trees only, and replayed only on the tree it was made for.
    let plan = RefitPlan::new(&bvh).unwrap();
    assert!(matches!(
        RefitPlan::new(&broken),
        Err(refit::RefitError::NotATree { .. })
    ));
    assert!(matches!(
        plan.refit(&mut broken, &boxes),
        Err(refit::RefitError::PlanMismatch { node: 0 })
    ));
    assert!(matches!(
        plan.refit(&mut short, &boxes),
        Err(refit::RefitError::BadNodeCount { .. })
    ));
    assert!(matches!(
        plan.refit(&mut bvh, &boxes[..3]),
        Err(refit::RefitError::PrimitiveOutOfRange { count: 3, .. })
    ));
}

/// A [`MeshRefitPlan`] refits only its own mesh (or a clone) and the tree it was made for.
#[test]
fn mesh_refit_plan_rejects_other_meshes_and_trees() {
    let positions: Vec<Vec3> = (0..7)
        .map(|i| Vec3::new(i as f32, (i * i) as f32, 0.5))
        .collect();
    let faces: Vec<[u32; 3]> = (0..5).map(|i| [i, i + 1, i + 2]).collect();
    let mesh = TriMesh::new(positions.clone(), faces.clone()).unwrap();
    let mut bvh = lbvh::build(&mesh);
    let plan = MeshRefitPlan::new(&bvh, &mesh).unwrap();
    // A clone, moved: fine, and the same boxes as the free refit.
    let mut moved = mesh.clone();
    moved
        .set_positions(positions.iter().map(|p| *p * 3.0).collect())
        .unwrap();
    plan.refit(&mut bvh, &moved).unwrap();
    let mut free = bvh.clone();
    refit::refit_from_mesh(&mut free, &moved).unwrap();
    assert_eq!(bvh, free);
    // An equal mesh made separately might have other faces: refused.
    let twin = TriMesh::new(positions.clone(), faces.clone()).unwrap();
    assert!(matches!(
        plan.refit(&mut bvh, &twin),
        Err(refit::RefitError::OtherMesh { .. })
    ));
    // A leaf holding another primitive than when the plan was made.
    let n1 = bvh.nodes.len() / 2;
    let mut swapped = bvh.clone();
    let (a, b) = (swapped.nodes[n1].left, swapped.nodes[n1 + 1].left);
    swapped.nodes[n1].left = b;
    swapped.nodes[n1 + 1].left = a;
    assert!(matches!(
        plan.refit(&mut swapped, &moved),
        Err(refit::RefitError::PlanMismatch { .. })
    ));
    // A tree over more faces than the mesh has.
    let small = TriMesh::new(positions, faces[..3].to_vec()).unwrap();
    assert!(matches!(
        MeshRefitPlan::new(&bvh, &small),
        Err(refit::RefitError::PrimitiveOutOfRange { count: 3, .. })
    ));
}

#[test]
fn large_parallel_build_matches_sequential_oracles() {
    // Enough primitives to take the parallel paths of every stage.
    let n = 100_000usize;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32
    };
    let boxes: Vec<Aabb> = (0..n)
        .map(|i| {
            let p = [rnd(), rnd() * (i % 3) as f32, rnd()];
            Aabb {
                min: p,
                max: [p[0] + 0.01, p[1] + 0.02, p[2]],
            }
        })
        .collect();
    let bvh = lbvh::build_from_aabbs(&boxes);
    let codes = lbvh::morton_codes(&boxes);
    let mut expect: Vec<(u64, u32)> = codes.iter().copied().zip(0..).collect();
    expect.sort_unstable();
    let sorted: Vec<u64> = expect.iter().map(|p| p.0).collect();
    assert_eq!(tree_ranges(&bvh), radix_oracle(&sorted));
    // The parallel staged path (Karras per node, then refit) gives the same nodes bit for bit.
    let order: Vec<u32> = expect.iter().map(|p| p.1).collect();
    let mut staged = lbvh::hierarchy(&sorted, &order);
    refit::refit(&mut staged, &boxes).unwrap();
    assert_eq!(staged, bvh);
    // Boxes: recompute bottom-up sequentially from the explicit recursion.
    fn exact(bvh: &Bvh, boxes: &[Aabb], node: usize) -> Aabb {
        let nd = bvh.nodes[node];
        let b = if nd.is_leaf() {
            boxes[nd.left as usize]
        } else {
            exact(bvh, boxes, nd.left as usize).merge(&exact(bvh, boxes, nd.right as usize))
        };
        assert_eq!(nd.aabb, b, "node {node}");
        b
    }
    exact(&bvh, &boxes, 0);
}

#[test]
fn large_build_with_duplicate_codes_matches_staged() {
    // Many primitives on few cells: long runs of equal codes, split by the index tie break,
    // through both the parallel top-down levels and the one-pass scan below them.
    let n = 60_000usize;
    let boxes: Vec<Aabb> = (0..n)
        .map(|i| {
            let c = [(i % 7) as f32, ((i / 7) % 5) as f32, ((i * 31) % 3) as f32];
            Aabb {
                min: c,
                max: [c[0] + 0.5, c[1], c[2] + 0.25],
            }
        })
        .collect();
    let bvh = lbvh::build_from_aabbs(&boxes);
    let (sorted, order) = lbvh::sort_codes(&lbvh::morton_codes(&boxes));
    assert_eq!(tree_ranges(&bvh), radix_oracle(&sorted));
    let mut staged = lbvh::hierarchy(&sorted, &order);
    refit::refit(&mut staged, &boxes).unwrap();
    assert_eq!(staged, bvh);
}

/// Trees far above the refit's parallel threshold (4096 leaves), on two threads: the staged
/// build (hierarchy, then the parallel refit) equals the fused build, and every box is the
/// union of the primitive boxes below it. Continuous boxes and only a few distinct boxes
/// (duplicate codes: the index tie break shapes the tree).
#[test]
fn parallel_refit_of_large_trees_matches_oracle() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    for distinct in [usize::MAX, 5] {
        let boxes: Vec<Aabb> = (0..20_000)
            .map(|i| {
                let k = if distinct == usize::MAX {
                    i
                } else {
                    i % distinct
                };
                let lo = if distinct == usize::MAX {
                    [next() * 100.0, next() * 100.0, next() * 100.0]
                } else {
                    [k as f32; 3]
                };
                Aabb {
                    min: lo,
                    max: [lo[0] + next(), lo[1] + next(), lo[2] + next()],
                }
            })
            .collect();
        pool.install(|| {
            let fused = lbvh::build_from_aabbs(&boxes);
            let (sorted, order) = lbvh::sort_codes(&lbvh::morton_codes(&boxes));
            let mut staged = lbvh::hierarchy(&sorted, &order);
            let plan = RefitPlan::new(&staged).unwrap();
            let mut planned = staged.clone();
            refit::refit(&mut staged, &boxes).unwrap();
            assert_eq!(staged, fused);
            plan.refit(&mut planned, &boxes).unwrap();
            assert_eq!(planned, fused);
            for (i, node) in staged.nodes.iter().enumerate() {
                let mut below = Vec::new();
                prims_below(&staged, i, &mut below);
                let expect = below
                    .iter()
                    .fold(Aabb::EMPTY, |b, &p| b.merge(&boxes[p as usize]));
                assert_eq!(node.aabb, expect, "node {i}");
            }
        });
    }
}

/// A valid tree that is not laid out as an LBVH (its internal nodes relabelled at random): a
/// plan still refits it exactly on two threads (its parts replayed in parallel), though the
/// free refit refuses it.
#[test]
fn plans_refit_relabelled_trees_exactly() {
    let n = 20_000usize;
    let mut x = 0x853c_49e6_748f_ea9bu64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let boxes: Vec<Aabb> = (0..n)
        .map(|_| {
            let lo = [0, 1, 2].map(|_| (next() % 10_000) as f32 * 0.01);
            Aabb {
                min: lo,
                max: lo.map(|v| v + 0.5),
            }
        })
        .collect();
    let bvh = lbvh::build_from_aabbs(&boxes);
    let n1 = n - 1;
    // A random permutation of the internal nodes 1..n1 (the root stays at 0).
    let mut label: Vec<u32> = (0..n1 as u32).collect();
    for i in (2..n1).rev() {
        label.swap(i, 1 + (next() % i as u64) as usize);
    }
    let map = |c: u32| {
        if (c as usize) < n1 {
            label[c as usize]
        } else {
            c
        }
    };
    let mut t = bvh.clone();
    for (i, node) in bvh.nodes.iter().enumerate() {
        let j = map(i as u32) as usize;
        t.nodes[j] = *node;
        t.nodes[j].aabb = Aabb::EMPTY;
        if !node.is_leaf() {
            t.nodes[j].left = map(node.left);
            t.nodes[j].right = map(node.right);
        }
        t.parents[j] = if bvh.parents[i] == LEAF {
            LEAF
        } else {
            map(bvh.parents[i])
        };
    }
    assert!(
        refit::refit(&mut t.clone(), &boxes).is_err(),
        "not an LBVH layout"
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        RefitPlan::new(&t).unwrap().refit(&mut t, &boxes).unwrap();
    });
    for (i, node) in t.nodes.iter().enumerate() {
        let mut below = Vec::new();
        prims_below(&t, i, &mut below);
        let expect = below
            .iter()
            .fold(Aabb::EMPTY, |b, &p| b.merge(&boxes[p as usize]));
        assert_eq!(node.aabb, expect, "node {i}");
    }
}
