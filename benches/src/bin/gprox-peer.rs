//! `gprox-peer`: gprox as an external peer of the Python harness in `shared/peers`
//! (`run.sh --external gprox=<this binary>`); see [`gprox_bench::external`].

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = gprox_bench::external::PeerArgs::parse();
    match gprox_bench::external::run_peer(&args) {
        Ok(doc) => {
            println!("{doc}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gprox-peer: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
