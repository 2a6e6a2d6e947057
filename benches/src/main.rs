//! The gprox benchmark harness.
fn main() {}
