//! The gprox benchmark harness: every scene in a `proxbench-scene/1` folder (plus the built-in
//! one) × query × backend configuration, timed per stage, checked against the reference
//! results of `shared/peers/results`, reported as JSON (`docs/bench-schema.md`), markdown and
//! SVG plots.
//!
//! Run with `cargo run --release -p gprox-bench -- --help` or `cargo bench -p gprox-bench`.

mod check;
pub mod compare;
pub mod external;
pub mod field_oracle;
pub mod harness;
pub mod image_query;
pub mod kernel_profile;
pub mod oracle;
#[cfg(feature = "parry")]
pub mod parry;
pub mod peers;
pub mod plot;
pub mod query;
pub mod report;
pub mod run;
pub mod stages;
pub mod stats;

pub use harness::{run_all, Args};
