//! The LBVH kernels, run on the test device (`Device::for_tests()`: the emulator,
//! or CUDA device 0 with `GPROX_TEST_DEVICE=cuda`), against the CPU stages of `gprox_bvh::lbvh`:
//! same boxes, same Morton codes, same sorted order, same topology, bit-identical refit boxes,
//! and a valid tree. The radix sort is also stressed on its own (duplicates, high-digit-only
//! keys, any launch shape) and the build's device operations are counted.

mod common;

use gprox_bvh::{lbvh, refit, sort, Aabb, Bvh, BvhNode, LEAF};
use gprox_cuda::lbvh::RadixOptions;
use gprox_cuda::{Device, ResidentMesh};
use gprox_geometry::glam::Vec3;
use gprox_geometry::TriMesh;
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

/// Keys that stress the radix sort: few distinct keys (long runs of duplicates), keys that differ
/// only in their high digits (the low passes see one digit: the device skips them), and
/// anything, small or full width. Short inputs are as likely as long ones.
fn stress_keys() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![0usize..40, 0usize..300, 0usize..1200].prop_flat_map(|len| {
        prop_oneof![
            (
                prop::collection::vec(any::<u64>(), 1..5),
                prop::collection::vec(any::<prop::sample::Index>(), len),
            )
                .prop_map(|(pool, picks)| picks.iter().map(|i| *i.get(&pool)).collect()),
            (
                any::<u64>(),
                1u32..=3,
                prop::collection::vec(any::<u32>(), len)
            )
                .prop_map(|(low, bytes, high)| {
                    let shift = 64 - 8 * bytes;
                    let low = low & ((1u64 << shift) - 1);
                    high.iter()
                        .map(|&h| (u64::from(h) & ((1u64 << (8 * bytes)) - 1)) << shift | low)
                        .collect()
                }),
            prop::collection::vec(prop_oneof![any::<u64>(), 0u64..300], len),
        ]
    })
}

/// Keys and a launch shape for them: tiles from one element up (at most 24 tiles, as every
/// emulated block costs a round of thread hand-offs; several rounds a tile when it holds more
/// than four elements a thread), one to eight warps (the look-back chains through every tile).
fn stress_case() -> impl Strategy<Value = (Vec<u64>, RadixOptions)> {
    (
        stress_keys(),
        prop_oneof![0usize..8, 0usize..300],
        prop_oneof![6 => Just(32u32), 2 => Just(64), 1 => Just(96), 1 => Just(256)],
    )
        .prop_map(|(codes, extra, block)| {
            let tile = (codes.len().div_ceil(24).max(1) + extra) as u32;
            (codes, RadixOptions { tile, block })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn sort_stress_matches_cpu((codes, opts) in stress_case()) {
        let d = Device::for_tests();
        prop_assert_eq!(d.sort_codes_with(&codes, opts).unwrap(), sort::sort_codes(&codes));
    }
}

#[test]
fn sort_with_the_default_shape_on_many_tiles() {
    // Pseudo-random 63-bit codes and a repeated one, over many tiles (look-back chains on a GPU).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let codes: Vec<u64> = (0..20_000)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 7 == 0 {
                42
            } else {
                x >> 1
            }
        })
        .collect();
    let d = Device::for_tests();
    assert_eq!(d.sort_codes(&codes).unwrap(), sort::sort_codes(&codes));
}

#[test]
fn sort_with_passes_to_skip() {
    let d = Device::for_tests();
    let n = 300u64;
    // Every pass skipped (all keys equal), all but one (one digit varies), and the top bit.
    let cases: Vec<Vec<u64>> = vec![
        vec![0x0123_4567_89ab_cdef; n as usize],
        (0..n).map(|i| ((n - i) % 256) << 56).collect(),
        (0..n).map(|i| ((i * 37) % 256) << 24 | 0xff).collect(),
        (0..n).map(|i| (i % 3) << 63 | (i % 5)).collect(),
    ];
    for codes in cases {
        for opts in [
            RadixOptions::default_for(&d),
            RadixOptions { tile: 7, block: 64 },
        ] {
            assert_eq!(
                d.sort_codes_with(&codes, opts).unwrap(),
                sort::sort_codes(&codes)
            );
        }
    }
}

#[test]
fn sort_rejects_unsupported_shapes() {
    let d = Device::for_tests();
    let codes = [3u64, 1, 2];
    for (tile, block) in [(0, 32), (8, 0), (8, 48), (8, 512)] {
        let opts = RadixOptions { tile, block };
        assert!(
            d.sort_codes_with(&codes, opts).is_err(),
            "{opts:?} must be rejected"
        );
    }
}

/// A strip of `faces` triangles winding through space.
fn strip(faces: u32) -> TriMesh {
    let pos: Vec<_> = (0..faces + 2)
        .map(|i| {
            let f = i as f32;
            Vec3::new((f * 0.37).sin(), (f * 0.11).cos(), (f * 0.07).sin())
        })
        .collect();
    TriMesh::new(pos, (0..faces).map(|i| [i, i + 1, i + 2]).collect()).unwrap()
}

/// The device build uploads the mesh and nothing else, runs every stage as launches with no
/// host synchronisation in between, and brings the finished tree back in one download of the
/// nodes and one of the parents. The resident build costs exactly the same (it keeps the
/// buffers the build made instead of uploading the tree again), and later refits from them.
#[test]
fn build_ops_one_download_per_output_array() {
    let d = Device::for_tests();
    let mesh = strip(500);
    let n = mesh.face_count() as u64;
    let mesh_bytes = 12 * (mesh.positions().len() as u64 + n);
    let tree_bytes = (2 * n - 1) * (std::mem::size_of::<BvhNode>() as u64 + 4);
    // Face boxes, two bound reductions, codes; the radix sort's digit counts and its 8 passes;
    // hierarchy; refit.
    let launches = 4 + 1 + 8 + 1 + 1;

    let before = d.ops();
    let bvh = d.build_bvh(&mesh).unwrap();
    let used = d.ops() - before;
    assert_eq!(bvh, lbvh::build(&mesh));
    assert_eq!(used.launches, launches);
    assert_eq!(used.syncs, 2, "one sync-causing download per output array");
    assert_eq!(used.h2d_bytes, mesh_bytes, "the mesh is the only upload");
    assert_eq!(used.d2h_bytes, tree_bytes, "nodes and parents, once each");

    let before = d.ops();
    let (mut resident, host) = ResidentMesh::build(&d, &mesh).unwrap();
    let resident_used = d.ops() - before;
    assert_eq!(host, bvh);
    assert_eq!(resident_used, used, "no re-upload, no extra buffer");
    assert_eq!(
        bits_nodes(&resident.nodes().unwrap()),
        bits_nodes(&bvh.nodes)
    );

    // Refits run from the kept buffers (face boxes, visit flags): twice, like the CPU.
    let mut cpu = bvh.clone();
    for step in 1..=2 {
        let moved: Vec<Vec3> = mesh
            .positions()
            .iter()
            .enumerate()
            .map(|(i, p)| *p * (1.0 + 0.25 * step as f32) + Vec3::new(0.0, (i % 3) as f32, 0.0))
            .collect();
        let before = d.ops();
        resident.update(&moved).unwrap();
        let used = d.ops() - before;
        assert_eq!(
            (used.syncs, used.h2d_bytes, used.allocations),
            (0, 12 * moved.len() as u64, 0)
        );
        let moved_mesh = TriMesh::new(moved, mesh.faces().to_vec()).unwrap();
        refit::refit(&mut cpu, &refit::triangle_aabbs(&moved_mesh)).unwrap();
        assert_eq!(
            bits_nodes(&resident.nodes().unwrap()),
            bits_nodes(&cpu.nodes)
        );
    }
}

#[test]
fn resident_build_of_tiny_meshes() {
    let d = Device::for_tests();
    for faces in [1u32, 2, 3] {
        let mesh = strip(faces);
        let (resident, bvh) = ResidentMesh::build(&d, &mesh).unwrap();
        assert_eq!(bvh, lbvh::build(&mesh));
        assert_eq!(resident.leaf_count(), faces);
        assert_eq!(resident.nodes().unwrap(), bvh.nodes);
    }
}
