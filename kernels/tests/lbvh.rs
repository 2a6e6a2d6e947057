//! The LBVH kernels, run on the test device (`Device::for_tests()`: the emulator,
//! or CUDA device 0 with `GPROX_TEST_DEVICE=cuda`), against the CPU stages of `gprox_bvh::lbvh`:
//! same boxes, same Morton codes, same sorted order, same topology, bit-identical refit boxes,
//! and a valid tree.

mod common;

use gprox_bvh::{lbvh, refit, Aabb, Bvh, BvhNode, LEAF};
use gprox_cuda::Device;
use proptest::prelude::*;

fn bits_boxes(b: &[Aabb]) -> &[u32] {
    bytemuck::cast_slice(b)
}
fn bits_nodes(n: &[BvhNode]) -> &[u32] {
    bytemuck::cast_slice(n)
}

/// Every node's box contains its children's, every leaf box is its primitive's box, and every
/// primitive is in exactly one leaf.
fn assert_valid(bvh: &Bvh, boxes: &[Aabb]) {
    let n = boxes.len();
    assert_eq!(bvh.nodes.len(), 2 * n - 1);
    let mut seen = vec![0u32; n];
    for (i, node) in bvh.nodes.iter().enumerate() {
        if node.right == LEAF {
            assert!(i >= n - 1, "leaf {i} among internal nodes");
            seen[node.left as usize] += 1;
            assert_eq!(node.aabb, boxes[node.left as usize]);
        } else {
            for c in [node.left, node.right] {
                assert!(
                    node.aabb.contains(&bvh.nodes[c as usize].aabb),
                    "node {i} child {c}"
                );
                assert_eq!(bvh.parents[c as usize], i as u32);
            }
        }
    }
    assert!(seen.iter().all(|&s| s == 1), "every primitive exactly once");
    assert_eq!(bvh.parents[0], LEAF);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn stages_match_cpu(mesh in common::mesh(200)) {
        let d = Device::for_tests();
        let boxes = refit::triangle_aabbs(&mesh);
        let gpu_boxes = d.triangle_aabbs(&mesh).unwrap();
        prop_assert_eq!(bits_boxes(&gpu_boxes), bits_boxes(&boxes));

        let codes = lbvh::morton_codes(&boxes);
        prop_assert_eq!(d.morton_codes(&boxes).unwrap(), codes.clone());

        let (sorted, order) = lbvh::sort_codes(&codes);
        let (gpu_sorted, gpu_order) = d.sort_codes(&codes).unwrap();
        prop_assert_eq!(&gpu_sorted, &sorted);
        prop_assert_eq!(&gpu_order, &order);

        let cpu_tree = lbvh::hierarchy(&sorted, &order);
        let mut gpu_tree = d.hierarchy(&sorted, &order).unwrap();
        prop_assert_eq!(bits_nodes(&gpu_tree.nodes), bits_nodes(&cpu_tree.nodes));
        prop_assert_eq!(&gpu_tree.parents, &cpu_tree.parents);

        let mut cpu_fit = cpu_tree.clone();
        refit::refit(&mut cpu_fit, &boxes).unwrap();
        d.refit(&mut gpu_tree, &boxes).unwrap();
        prop_assert_eq!(bits_nodes(&gpu_tree.nodes), bits_nodes(&cpu_fit.nodes));
        assert_valid(&gpu_tree, &boxes);

        let built = d.build_bvh(&mesh).unwrap();
        let cpu_built = lbvh::build(&mesh);
        prop_assert_eq!(bits_nodes(&built.nodes), bits_nodes(&cpu_built.nodes));
        prop_assert_eq!(&built.parents, &cpu_fit.parents);
    }

    #[test]
    fn sort_matches_cpu(codes in prop::collection::vec(
        prop_oneof![
            0u64..8,
            any::<u64>().prop_map(|x| x >> 1),
            (0u64..4, 0u32..63).prop_map(|(v, s)| v << s),
        ],
        0..700,
    )) {
        let d = Device::for_tests();
        prop_assert_eq!(d.sort_codes(&codes).unwrap(), lbvh::sort_codes(&codes));
    }
}

#[test]
fn refit_follows_moved_boxes() {
    let d = Device::for_tests();
    let mut boxes: Vec<Aabb> = (0..50)
        .map(|i| Aabb {
            min: [i as f32; 3],
            max: [i as f32 + 1.0; 3],
        })
        .collect();
    let mut bvh = lbvh::build_from_aabbs(&boxes);
    boxes[17].max = [1000.0, 2.0, 3.0];
    boxes[3].min = [-5.0; 3];
    let mut cpu = bvh.clone();
    refit::refit(&mut cpu, &boxes).unwrap();
    d.refit(&mut bvh, &boxes).unwrap();
    assert_eq!(bvh, cpu);
    assert_eq!(bvh.root_aabb().max[0], 1000.0);
    assert_eq!(bvh.root_aabb().min[1], -5.0);
}

#[test]
fn refit_rejects_malformed_trees() {
    let d = Device::for_tests();
    let boxes = vec![
        Aabb {
            min: [0.0; 3],
            max: [1.0; 3]
        };
        4
    ];
    let good = lbvh::build_from_aabbs(&boxes);
    // Too few primitives for the leaves.
    assert!(d.refit(&mut good.clone(), &boxes[..2]).is_err());
    // Wrong node count.
    let mut bad = good.clone();
    bad.nodes.pop();
    assert!(d.refit(&mut bad, &boxes).is_err());
    // A cycle: the root's child points back up.
    let mut bad = good.clone();
    let c = bad.nodes[0].left as usize;
    if bad.nodes[c].right != LEAF {
        bad.nodes[c].left = 0;
        assert!(d.refit(&mut bad, &boxes).is_err());
    }
}

#[test]
fn single_face_and_duplicates() {
    let d = Device::for_tests();
    for n in [1usize, 2, 3, 129, 300] {
        let boxes = vec![
            Aabb {
                min: [1.0, 2.0, 3.0],
                max: [1.0, 2.0, 3.0]
            };
            n
        ];
        let codes = lbvh::morton_codes(&boxes);
        let (s, o) = lbvh::sort_codes(&codes);
        assert_eq!(d.sort_codes(&codes).unwrap(), (s.clone(), o.clone()));
        assert_eq!(d.hierarchy(&s, &o).unwrap(), lbvh::hierarchy(&s, &o));
    }
}

#[test]
fn chain_of_300_faces_builds_like_the_cpu() {
    let pos: Vec<_> = (0..300)
        .map(|i| {
            let f = i as f32;
            gprox_geometry::glam::Vec3::new((f * 0.37).sin(), (f * 0.11).cos(), (f * 0.07).sin())
        })
        .collect();
    let faces = (0..298u32).map(|i| [i, i + 1, i + 2]).collect();
    let mesh = gprox_geometry::TriMesh::new(pos, faces).unwrap();
    let gpu = Device::for_tests().build_bvh(&mesh).unwrap();
    assert_eq!(gpu, lbvh::build(&mesh));
    assert_valid(&gpu, &refit::triangle_aabbs(&mesh));
}
