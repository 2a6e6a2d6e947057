//! The kernel profile of a device run as a markdown table (`Device::set_profiling`): per
//! kernel, launches and milliseconds per frame, and its share of the profiled time.

use std::fmt::Write as _;

use gprox::cuda::{Device, KernelTime};

/// Runs `frame` `frames` times with the device's profiler on and returns the table of
/// [`table`] (the profiler is off again afterwards).
pub fn profile_frames<E>(
    device: &Device,
    frames: usize,
    mut frame: impl FnMut(usize) -> Result<(), E>,
) -> anyhow::Result<String>
where
    E: Into<anyhow::Error>,
{
    let _ = device.take_profile()?;
    device.set_profiling(true);
    let run = (0..frames).try_for_each(&mut frame);
    device.set_profiling(false);
    run.map_err(Into::into)?;
    let profile = device.take_profile()?;
    Ok(table(&profile, frames))
}

/// `profile` (summed over `frames` frames) as a markdown table, per frame.
pub fn table(profile: &[KernelTime], frames: usize) -> String {
    let n = frames.max(1) as f64;
    let total: f64 = profile.iter().map(|k| k.ms).sum();
    let mut s = String::from(
        "| kernel | launches per frame | ms per frame | share |\n|---|---:|---:|---:|\n",
    );
    for k in profile {
        let _ = writeln!(
            s,
            "| `{}` | {:.1} | {:.4} | {:.0} % |",
            k.kernel,
            k.launches as f64 / n,
            k.ms / n,
            100.0 * k.ms / total.max(f64::MIN_POSITIVE)
        );
    }
    let launches: u64 = profile.iter().map(|k| k.launches).sum();
    let _ = writeln!(
        s,
        "| all | {:.1} | {:.4} | |",
        launches as f64 / n,
        total / n
    );
    s
}
