//! Conversions between gprox's types and those of other geometry libraries, one module per
//! library, each behind a cargo feature of the same name.

pub mod parry;
