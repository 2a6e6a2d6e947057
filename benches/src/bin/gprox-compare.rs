//! `gprox-compare`: one combined table from the gprox harness report and the peers' result
//! files (see [`gprox_bench::compare`] and `scripts/compare-peers.sh`).

use std::path::PathBuf;

use clap::Parser;

/// Command line of `gprox-compare`.
#[derive(Debug, Parser)]
#[command(name = "gprox-compare", about = "combined gprox vs peers table")]
struct Cli {
    /// The gprox harness report (`report.json` of `gprox-bench --out DIR`).
    #[arg(long)]
    report: PathBuf,
    /// Folder of the peers' `<scene>.json` result files.
    #[arg(long)]
    results: PathBuf,
    /// Output folder for combined.md and combined.json.
    #[arg(long)]
    out: PathBuf,
    /// Name the gprox external peer was registered under (`run.sh --external NAME=...`).
    #[arg(long, default_value = "gprox")]
    gprox_peer: String,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match gprox_bench::compare::run(&cli.report, &cli.results, &cli.out, &cli.gprox_peer) {
        Ok(c) => {
            println!("{}", c.markdown());
            eprintln!("wrote {}/combined.md and combined.json", cli.out.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gprox-compare: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
