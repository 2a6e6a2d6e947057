//! `gprox-bench`: the benchmark harness binary (see the `gprox_bench` library for options).

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = gprox_bench::Args::parse();
    match gprox_bench::run_all(&args) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("gprox-bench: FAILED (results disagree, see the report)");
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("gprox-bench: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
