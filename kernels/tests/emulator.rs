//! The emulator's portability layer keeps CUDA semantics: warp ballot and shuffles, the xor
//! butterfly, shared memory with `__syncthreads`, over several blocks and block sizes. These
//! tests are about the emulator and stay on it; the warp check also runs on CUDA device 0 with
//! `GPROX_TEST_DEVICE=cuda`, to hold the expectations themselves to a real GPU.

use gprox_cuda::params::SelftestParams;
use gprox_cuda::{Device, Kernel};

/// What the self-test kernel must write for thread `i` of a launch with `block` threads.
fn expected(i: u32, block: u32) -> [u32; 5] {
    let warp0 = i / 32 * 32;
    let lane = i % 32;
    let ballot = (0..32).fold(0u32, |m, l| m | ((warp0 + l).is_multiple_of(3) as u32) << l);
    let shfl = 7 * (warp0 + (lane + 5) % 32);
    let down = if lane + 3 < 32 { i + 3 } else { i };
    let warp_sum = (warp0..warp0 + 32).sum();
    let b0 = i / block * block;
    let block_sum = (b0..b0 + block).sum();
    [ballot, shfl, down, warp_sum, block_sum]
}

/// Runs the self-test kernel on `d` over several grids and block sizes and checks every value.
fn check_warp_intrinsics(d: &Device) {
    for (grid, block) in [(1u32, 32u32), (3, 64), (2, 256)] {
        let count = grid * block;
        let out = d.alloc_zeros::<u32>(5 * count as usize).unwrap();
        let p = SelftestParams {
            out: out.device_ptr(),
            count,
            pad: 0,
        };
        // SAFETY: out holds 5 values per thread of the launch.
        unsafe { d.launch(Kernel::SelftestWarp, grid, block, &p) }.unwrap();
        let got = out.download().unwrap();
        for i in 0..count {
            let at = 5 * i as usize;
            assert_eq!(
                got[at..at + 5],
                expected(i, block),
                "thread {i}, block {block}"
            );
        }
    }
}

#[test]
fn warp_intrinsics_and_shared_memory() {
    check_warp_intrinsics(&Device::emulated());
}

/// The same expectations hold on a real GPU (`GPROX_TEST_DEVICE=cuda`): this checks the
/// reference semantics the emulator is held to. Nothing more to run when the test device is the
/// emulator itself.
#[test]
fn warp_intrinsics_on_the_test_device() {
    let d = Device::for_tests();
    if d.is_emulated() {
        eprintln!("note: test device is the emulator (checked above); set GPROX_TEST_DEVICE=cuda");
        return;
    }
    check_warp_intrinsics(&d);
}

#[test]
fn launches_from_many_threads_are_serialised() {
    // cargo runs tests in parallel: concurrent launches must not mix their blocks.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let d = Device::emulated();
                let out = d.alloc_zeros::<u32>(5 * 64).unwrap();
                let p = SelftestParams {
                    out: out.device_ptr(),
                    count: 64,
                    pad: 0,
                };
                for _ in 0..10 {
                    // SAFETY: as above.
                    unsafe { d.launch(Kernel::SelftestWarp, 2, 32, &p) }.unwrap();
                    let got = out.download().unwrap();
                    for i in 0..64u32 {
                        let at = 5 * i as usize;
                        assert_eq!(got[at..at + 5], expected(i, 32));
                    }
                }
            });
        }
    });
}
