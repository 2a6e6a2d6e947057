//! The backend of the device tests: CUDA device 0 when the environment variable
//! `GPROX_TEST_DEVICE` is `cuda`, else the host emulator — the facade's twin of
//! `gprox_cuda::Device::for_tests()`. Include with `#[path = "common/device.rs"] mod device;`.
#![allow(dead_code)]

/// `Backend::Cuda(0)` under `GPROX_TEST_DEVICE=cuda` (a `Context` on it then fails loudly when
/// there is no usable GPU: a GPU test run must not fall back silently), else
/// `Backend::Emulated`. Any other value of the variable is a mistake and panics.
#[cfg(feature = "emulated")]
pub fn test_backend() -> gprox::Backend {
    use gprox::Backend;
    match std::env::var("GPROX_TEST_DEVICE").as_deref() {
        Ok("cuda") => Backend::Cuda(0),
        Ok("emulated") | Ok("") | Err(_) => Backend::Emulated,
        Ok(other) => panic!("GPROX_TEST_DEVICE={other}: expected `cuda` or `emulated`"),
    }
}

/// The CPU context, then (with the `emulated` feature) the device context of the tests.
pub fn contexts() -> Vec<gprox::Context> {
    #[allow(unused_mut)]
    let mut v = vec![gprox::Context::new(gprox::Backend::Cpu).unwrap()];
    #[cfg(feature = "emulated")]
    v.push(gprox::Context::new(test_backend()).unwrap());
    v
}

/// The ops `f` performed on `ctx`'s device.
#[cfg(feature = "emulated")]
pub fn ops<R>(ctx: &gprox::Context, f: impl FnOnce() -> R) -> (R, gprox::cuda::DeviceOps) {
    let before = ctx.device_ops().unwrap();
    let r = f();
    (r, ctx.device_ops().unwrap() - before)
}
