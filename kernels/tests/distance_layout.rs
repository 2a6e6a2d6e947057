//! The distance layouts (`include/gprox/distance.cuh`) as the emulator's C++ compiler sees them
//! against their Rust mirrors (`gprox_cuda::distance`, `gprox_bvh::rss::Rss`).

use std::mem::{offset_of, size_of};

use gprox_bvh::rss::Rss;
use gprox_cuda::distance::{
    emulator_layout, DistanceExpandParams, DistanceFilterParams, DistanceMinParams, DistanceTree,
    DistanceTrianglesParams,
};

#[test]
fn distance_layouts_match_the_cuda_side() {
    let cases: &[(&str, usize)] = &[
        ("sizeof(dist::Rss)", size_of::<Rss>()),
        ("offsetof(dist::Rss, axes)", offset_of!(Rss, axes)),
        (
            "offsetof(dist::Rss, half_lengths)",
            offset_of!(Rss, half_lengths),
        ),
        ("offsetof(dist::Rss, radius)", offset_of!(Rss, radius)),
        ("sizeof(DistanceTree)", size_of::<DistanceTree>()),
        (
            "sizeof(DistanceExpandParams)",
            size_of::<DistanceExpandParams>(),
        ),
        (
            "offsetof(DistanceExpandParams, a)",
            offset_of!(DistanceExpandParams, a),
        ),
        (
            "offsetof(DistanceExpandParams, b)",
            offset_of!(DistanceExpandParams, b),
        ),
        (
            "offsetof(DistanceExpandParams, q)",
            offset_of!(DistanceExpandParams, q),
        ),
        (
            "offsetof(DistanceExpandParams, t)",
            offset_of!(DistanceExpandParams, t),
        ),
        (
            "offsetof(DistanceExpandParams, grow)",
            offset_of!(DistanceExpandParams, grow),
        ),
        (
            "offsetof(DistanceExpandParams, sigma)",
            offset_of!(DistanceExpandParams, sigma),
        ),
        (
            "offsetof(DistanceExpandParams, front)",
            offset_of!(DistanceExpandParams, front),
        ),
        (
            "offsetof(DistanceExpandParams, count)",
            offset_of!(DistanceExpandParams, count),
        ),
        (
            "sizeof(DistanceFilterParams)",
            size_of::<DistanceFilterParams>(),
        ),
        (
            "offsetof(DistanceFilterParams, rep_bound)",
            offset_of!(DistanceFilterParams, rep_bound),
        ),
        (
            "offsetof(DistanceFilterParams, cut)",
            offset_of!(DistanceFilterParams, cut),
        ),
        (
            "offsetof(DistanceFilterParams, count)",
            offset_of!(DistanceFilterParams, count),
        ),
        (
            "offsetof(DistanceFilterParams, leaf_capacity)",
            offset_of!(DistanceFilterParams, leaf_capacity),
        ),
        (
            "sizeof(DistanceTrianglesParams)",
            size_of::<DistanceTrianglesParams>(),
        ),
        (
            "offsetof(DistanceTrianglesParams, pairs)",
            offset_of!(DistanceTrianglesParams, pairs),
        ),
        (
            "offsetof(DistanceTrianglesParams, counters)",
            offset_of!(DistanceTrianglesParams, counters),
        ),
        (
            "offsetof(DistanceTrianglesParams, count)",
            offset_of!(DistanceTrianglesParams, count),
        ),
        ("sizeof(DistanceMinParams)", size_of::<DistanceMinParams>()),
        (
            "offsetof(DistanceMinParams, out_indices)",
            offset_of!(DistanceMinParams, out_indices),
        ),
        (
            "offsetof(DistanceMinParams, count)",
            offset_of!(DistanceMinParams, count),
        ),
    ];
    for &(name, rust) in cases {
        assert_eq!(emulator_layout(name), rust, "{name}");
    }
    assert_eq!(emulator_layout("sizeof(Nothing)"), usize::MAX);
}
