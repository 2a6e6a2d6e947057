//! Small meshes and poses shared by the query tests. Include with
//! `#[path = "common/fixtures.rs"] mod fixtures;`.
#![allow(dead_code)]

use gprox::geometry::TriMesh;
use gprox::{Affine3A, Vec3};

/// The translation by `(x, y, z)`.
pub fn at(x: f32, y: f32, z: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, y, z))
}

/// A unit cube, closed, faces wound outwards.
pub fn cube() -> TriMesh {
    gprox::geometry::scene::box_mesh(Vec3::ZERO, Vec3::ONE).unwrap()
}
