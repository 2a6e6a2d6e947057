//! The Coons BVH of freeform surfaces (Kim, Oh, Yoon, Kim, Elber 2011): recursive Coons
//! approximation with one-byte ε-lists, a compact dual hierarchy, and bounds generated on the
//! fly for collision and distance queries (`gprox_query::freeform`).

pub mod build;
pub mod cache;
pub mod cell;
pub mod quantise;
mod surface_tree;
pub mod teapot;

pub use build::{CoonsBuildStats, CoonsBvh, CoonsError, CoonsOptions};
pub use cell::{coons_corners, coons_point, Cell, CellBound, CellKind};
pub use teapot::{teapot_table, TeapotRow};
