//! Shared test support for the root package's integration tests: the exact brute-force oracle
//! ([`oracle`]) and proptest generators ([`gen`]). Use with `mod common;`.
#![allow(dead_code)]

pub mod gen;
pub mod oracle;
