//! `cargo bench -p gprox-bench`: the harness with its default options (all scenes present,
//! all frames, 1 and all threads, results under `target/bench`).

fn main() -> std::process::ExitCode {
    // cargo passes `--bench` (and filters) to custom harnesses: only defaults are used here.
    let args = gprox_bench::Args::default();
    match gprox_bench::run_all(&args) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            eprintln!("gprox-bench: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
