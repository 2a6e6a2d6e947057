//! gprox-query: the CPU backend's queries (collision, distance, CCD, ...), parallel with rayon.
pub mod broad_phase;
pub mod ccd;
pub mod collide;
pub mod distance;
pub mod epa;
pub mod freeform;
pub mod front;
pub mod geometry_image;
pub mod gjk;
pub mod image_space;
mod pairs;
pub mod penetration;
pub mod self_collide;
mod world;
