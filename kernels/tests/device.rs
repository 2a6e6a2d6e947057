//! Device selection and the embedded device code: typed errors instead of panics. Launch checks
//! and buffer round trips run on the test device (`Device::for_tests()`: the emulator, or CUDA
//! device 0 with `GPROX_TEST_DEVICE=cuda`).

use gprox_cuda::{CudaError, Device, Kernel, FATBIN, HAS_DEVICE_CODE};

#[cfg(gprox_device_code)]
#[test]
fn fatbin_is_embedded() {
    assert_eq!(HAS_DEVICE_CODE, !FATBIN.is_empty());
    assert!(!FATBIN.is_empty());
    // A fatbin starts with the fatbin wrapper magic 0xBA55ED50 (little endian).
    assert_eq!(&FATBIN[..4], &0xBA55_ED50u32.to_le_bytes());
}

#[cfg(not(gprox_device_code))]
#[test]
fn fatbin_is_empty_without_nvcc() {
    assert_eq!(HAS_DEVICE_CODE, !FATBIN.is_empty());
    assert!(FATBIN.is_empty());
    assert!(matches!(
        gprox_cuda::Device::cuda(0),
        Err(CudaError::NoDriver | CudaError::NoDevice { .. } | CudaError::NoDeviceCode)
    ));
}

#[test]
fn cuda_device_is_a_typed_error_or_works() {
    match Device::cuda(0) {
        Ok(d) => assert!(!d.is_emulated()),
        Err(e) => {
            assert!(
                matches!(
                    e,
                    CudaError::NoDriver | CudaError::NoDevice { .. } | CudaError::NoDeviceCode
                ),
                "unexpected error {e:?}"
            );
            assert!(!e.to_string().is_empty());
        }
    }
}

#[test]
fn absurd_device_index_is_a_typed_error() {
    let e = Device::cuda(1 << 20).expect_err("no machine has that many GPUs");
    assert!(matches!(
        e,
        CudaError::NoDriver | CudaError::NoDevice { .. } | CudaError::NoDeviceCode
    ));
}

#[test]
fn launch_rejects_bad_configuration() {
    let d = Device::for_tests();
    let p = gprox_cuda::params::PrimBoxesParams {
        positions: 0,
        faces: 0,
        boxes: 0,
        count: 0,
        pad: 0,
    };
    // SAFETY: count 0: the kernel touches no memory; the launch is rejected anyway.
    let r = unsafe { d.launch(Kernel::PrimBoxes, 1, 4096, &p) };
    assert!(matches!(r, Err(CudaError::InvalidLaunch { .. })));
    // SAFETY: as above.
    let r = unsafe { d.launch(Kernel::PrimBoxes, 0, 32, &p) };
    assert!(matches!(r, Err(CudaError::InvalidLaunch { .. })));
    // SAFETY: count 0: the kernel reads nothing.
    unsafe { d.launch(Kernel::PrimBoxes, 3, 17, &p) }.expect("odd sizes are fine");
    // A params struct of the wrong size is refused before launching.
    // SAFETY: refused before any launch.
    let r = unsafe { d.launch(Kernel::Refit, 1, 32, &p) };
    assert!(matches!(r, Err(CudaError::ParamsMismatch { .. })));
}

#[test]
fn buffers_round_trip() {
    let d = Device::for_tests();
    let mut b = d.upload(&[1u64, 2, 3]).unwrap();
    assert_eq!(b.download().unwrap(), vec![1, 2, 3]);
    b.write(&[4, 5, 6]).unwrap();
    assert_eq!(b.download().unwrap(), vec![4, 5, 6]);
    assert!(matches!(
        b.write(&[1]),
        Err(CudaError::LengthMismatch { .. })
    ));
    let z = d.alloc_zeros::<u32>(0).unwrap();
    assert!(z.is_empty());
}

#[test]
fn profile_counts_every_launch_while_on_and_none_after() {
    let d = Device::for_tests();
    let codes: Vec<u64> = (0..5000u64)
        .map(|i| (i * 2_654_435_761) % 100_003)
        .collect();
    d.set_profiling(true);
    let before = d.ops();
    let (sorted, _) = d.sort_codes(&codes).unwrap();
    let launched = (d.ops() - before).launches;
    d.set_profiling(false);
    let profile = d.take_profile().unwrap();
    let mut want = codes.clone();
    want.sort_unstable();
    assert_eq!(sorted, want);
    assert!(launched > 0);
    assert_eq!(profile.iter().map(|k| k.launches).sum::<u64>(), launched);
    assert!(profile.iter().all(|k| k.ms >= 0.0 && k.ms.is_finite()));
    // Off: nothing recorded, and taking cleared the earlier marks.
    let _ = d.sort_codes(&codes).unwrap();
    assert!(d.take_profile().unwrap().is_empty());
}
