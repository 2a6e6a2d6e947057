//! The kernels of the fatbin and their emulator entry points.

use std::ffi::c_void;

use crate::params::{
    BalanceInitParams, BalanceScanParams, BalanceSpreadParams, BalanceTraverseParams,
    CollideParams, HierarchyParams, MortonParams, PairsOutParams, PrimBoxesParams, RadixParams,
    ReduceBoundsParams, RefitParams, SelftestParams, TriPairParams, WorldBodyBoxesParams,
    WorldBoxesParams, WorldContactsParams, WorldPairsParams,
};

/// Signature of an emulator launcher `gprox_emu_launch_<kernel>(grid, block, &params)`.
type EmuLaunch = unsafe extern "C" fn(u32, u32, *const c_void) -> i32;

macro_rules! kernels {
    ($($(#[$m:meta])* $variant:ident => $sym:ident, $emu:ident, $params:ty;)*) => {
        /// Every kernel in `kernels/cuda/*.cu`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel { $($(#[$m])* $variant),* }

        impl Kernel {
            /// All kernels.
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant),*];

            /// The kernel's symbol in the fatbin (`extern "C"`).
            pub fn name(self) -> &'static str {
                match self { $(Kernel::$variant => stringify!($sym)),* }
            }

            /// Size of the params struct the kernel takes.
            pub fn params_size(self) -> usize {
                match self { $(Kernel::$variant => std::mem::size_of::<$params>()),* }
            }

            /// The emulator's launcher.
            pub(crate) fn emulator(self) -> EmuLaunch {
                match self { $(Kernel::$variant => $emu),* }
            }
        }

        unsafe extern "C" {
            $(fn $emu(grid: u32, block: u32, params: *const c_void) -> i32;)*
        }
    };
}

kernels! {
    /// Box of every face (`morton.cu`).
    PrimBoxes => gprox_prim_boxes, gprox_emu_launch_gprox_prim_boxes, PrimBoxesParams;
    /// Per-block box of boxes or centroids (`morton.cu`).
    ReduceBounds => gprox_reduce_bounds, gprox_emu_launch_gprox_reduce_bounds, ReduceBoundsParams;
    /// 63-bit Morton codes (`morton.cu`).
    MortonCodes => gprox_morton_codes, gprox_emu_launch_gprox_morton_codes, MortonParams;
    /// Radix sort: every pass's digit counts (`radix_sort.cu`).
    RadixDigits => gprox_radix_digits, gprox_emu_launch_gprox_radix_digits, RadixParams;
    /// Radix sort: one pass, look-back and stable scatter (`radix_sort.cu`).
    RadixPass => gprox_radix_pass, gprox_emu_launch_gprox_radix_pass, RadixParams;
    /// Karras hierarchy (`lbvh.cu`).
    Hierarchy => gprox_hierarchy, gprox_emu_launch_gprox_hierarchy, HierarchyParams;
    /// Bottom-up refit (`refit.cu`).
    Refit => gprox_refit, gprox_emu_launch_gprox_refit, RefitParams;
    /// World boxes of BVH nodes (`collide.cu`).
    WorldBoxes => gprox_world_boxes, gprox_emu_launch_gprox_world_boxes, WorldBoxesParams;
    /// BVTT traversal (`collide.cu`).
    Collide => gprox_collide, gprox_emu_launch_gprox_collide, CollideParams;
    /// Triangle pair test (`tri_pair.cu`).
    TriPair => gprox_tri_pair, gprox_emu_launch_gprox_tri_pair, TriPairParams;
    /// Balanced BVTT traversal: persistent tasks with local queues (`balance.cu`).
    BalanceTraverse => gprox_balance_traverse, gprox_emu_launch_gprox_balance_traverse, BalanceTraverseParams;
    /// Balanced traversal with an early out at the first certified intersecting leaf pair
    /// (`balance.cu`).
    BalanceTraverseAny => gprox_balance_traverse_any, gprox_emu_launch_gprox_balance_traverse_any, BalanceTraverseParams;
    /// Balanced traversal of a world of many bodies (`balance.cu`).
    BalanceTraverseWorld => gprox_balance_traverse_world, gprox_emu_launch_gprox_balance_traverse_world, BalanceTraverseParams;
    /// World boxes of every node of every body (`world.cu`).
    WorldBodyBoxes => gprox_world_body_boxes, gprox_emu_launch_gprox_world_body_boxes, WorldBodyBoxesParams;
    /// Broad phase of a world on the device (`world.cu`).
    WorldPairs => gprox_world_pairs, gprox_emu_launch_gprox_world_pairs, WorldPairsParams;
    /// A world traversal's contacts into host-mapped memory (`world.cu`).
    WorldContacts => gprox_world_contacts, gprox_emu_launch_gprox_world_contacts, WorldContactsParams;
    /// Balanced traversal: root pair and zeroed counters, on the device (`balance.cu`).
    BalanceInit => gprox_balance_init, gprox_emu_launch_gprox_balance_init, BalanceInitParams;
    /// Balanced traversal: prefix sum of queue sizes and even shares (`balance.cu`).
    BalanceScan => gprox_balance_scan, gprox_emu_launch_gprox_balance_scan, BalanceScanParams;
    /// Balanced traversal: redistribution of the remaining work (`balance.cu`).
    BalanceSpread => gprox_balance_spread, gprox_emu_launch_gprox_balance_spread, BalanceSpreadParams;
    /// A traversal's pairs compacted into host-mapped memory (`pairs_out.cu`).
    PairsOut => gprox_pairs_out, gprox_emu_launch_gprox_pairs_out, PairsOutParams;
    /// A traversal's counters in front of its mapped pairs (`pairs_out.cu`).
    PairsHeader => gprox_pairs_header, gprox_emu_launch_gprox_pairs_header, PairsOutParams;
    /// Self-test of warp intrinsics and shared memory (`selftest.cu`).
    SelftestWarp => gprox_selftest_warp, gprox_emu_launch_gprox_selftest_warp, SelftestParams;
    /// Distance traversal: bounds of every child pair of a front (`distance.cu`).
    DistanceExpand => gprox_distance_expand, gprox_emu_launch_gprox_distance_expand, crate::distance::DistanceQueryParams;
    /// Distance traversal: pruning, next front and leaf pairs (`distance.cu`).
    DistanceFilter => gprox_distance_filter, gprox_emu_launch_gprox_distance_filter, crate::distance::DistanceQueryParams;
    /// Distance traversal: exact triangle distances of leaf pairs (`distance.cu`).
    DistanceTriangles => gprox_distance_triangles, gprox_emu_launch_gprox_distance_triangles, crate::distance::DistanceQueryParams;
    /// Distance traversal: block minimum with argmin (`distance.cu`).
    DistanceMin => gprox_distance_min, gprox_emu_launch_gprox_distance_min, crate::distance::DistanceMinParams;
    /// Distance traversal: state reset, root front and seed pair, on the device (`distance.cu`).
    DistanceInit => gprox_distance_init, gprox_emu_launch_gprox_distance_init, crate::distance::DistanceQueryParams;
    /// Distance traversal: tie break by faces, overflow, end or next level (`distance.cu`).
    DistanceStep => gprox_distance_step, gprox_emu_launch_gprox_distance_step, crate::distance::DistanceQueryParams;
    /// Distance traversal: result and closest points into host-mapped memory (`distance.cu`).
    DistanceFinish => gprox_distance_finish, gprox_emu_launch_gprox_distance_finish, crate::distance::DistanceQueryParams;
    /// Elementary CCD tests, one query each (`ccd.cu`).
    CcdElementary => gprox_ccd_elementary, gprox_emu_launch_gprox_ccd_elementary, crate::ccd_narrow::CcdElementaryParams;
    /// CCD narrow phase of a traversal's candidate pairs, contacts into host-mapped memory
    /// (`ccd.cu`).
    CcdPairs => gprox_ccd_pairs, gprox_emu_launch_gprox_ccd_pairs, crate::ccd_narrow::CcdPairsParams;
    /// CCD narrow phase: counters in front of the records (`ccd.cu`).
    CcdHeader => gprox_ccd_header, gprox_emu_launch_gprox_ccd_header, crate::ccd_narrow::CcdPairsParams;
    /// Image-space inside classification of a batch of tiles, one thread per ray column
    /// (`image_space.cu`).
    ImageColumns => gprox_image_columns, gprox_emu_launch_gprox_image_columns, crate::image_space::ImageColumnsParams;
    /// Image-space nearest faces of both meshes to a batch of samples, one thread per sample
    /// and mesh (`image_depth.cu`).
    ImageDepths => gprox_image_depths, gprox_emu_launch_gprox_image_depths, crate::image_depth::ImageDepthParams;
    /// One level of a geometry image's hierarchy (`geometry_image.cu`).
    ImageBuild => gprox_gi_build, gprox_emu_launch_gprox_gi_build, crate::geometry_image::ImageBuildParams;
    /// Geometry-image traversal: counters and root pair (`geometry_image.cu`).
    ImageInit => gprox_gi_init, gprox_emu_launch_gprox_gi_init, crate::geometry_image::ImageTraverseParams;
    /// Geometry-image traversal: one breadth-first step with compaction (`geometry_image.cu`).
    ImageStep => gprox_gi_step, gprox_emu_launch_gprox_gi_step, crate::geometry_image::ImageTraverseParams;
    /// Geometry-image traversal: header and the leaf pairs' sort keys (`geometry_image.cu`).
    ImageKeys => gprox_gi_keys, gprox_emu_launch_gprox_gi_keys, crate::geometry_image::ImageTraverseParams;
    /// Geometry-image traversal, exact mode: header, the filtered triangle test of the leaf
    /// pairs' quads and the kept pairs' sort keys (`geometry_image.cu`).
    ImageExact => gprox_gi_exact, gprox_emu_launch_gprox_gi_exact, crate::geometry_image::ImageTraverseParams;
    /// Geometry-image traversal: sorted keys (and exact mode's undecided corners) into
    /// host-mapped memory (`geometry_image.cu`).
    ImageOut => gprox_gi_out, gprox_emu_launch_gprox_gi_out, crate::geometry_image::ImageTraverseParams;
    /// Geometry-image positions from the control points (`geometry_image_eval.cu`).
    ImageEval => gprox_gi_eval, gprox_emu_launch_gprox_gi_eval, crate::geometry_image::ImageEvalParams;
}

unsafe extern "C" {
    /// `sizeof` / `offsetof` of the shared layouts as the emulator's C++ compiler sees them.
    fn gprox_emu_layout(name: *const std::ffi::c_char) -> usize;
}

/// `sizeof(T)` or `offsetof(T,field)` from the C++ side of the emulator, by name
/// (`"sizeof(Aabb)"`, `"offsetof(BvhNode,left)"`); `usize::MAX` for an unknown name.
pub fn emulator_layout(name: &str) -> usize {
    let Ok(c) = std::ffi::CString::new(name) else {
        return usize::MAX;
    };
    // SAFETY: reads a NUL-terminated string and returns a number.
    unsafe { gprox_emu_layout(c.as_ptr()) }
}
