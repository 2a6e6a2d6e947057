//! Stenciled geometry images of trimmed NURBS faces and collision on them (Greß, Guthe, Klein
//! 2006), on the CPU with rayon; see `docs/geometry-images.md`.
//!
//! * [`resolution`]: the grid size from the requested accuracy ε and certified derivative
//!   bounds (§7.3), optionally restricted to a clip box (§3).
//! * [`image`]: positions and stencil bits on the grid (§6.1, §7.2), regenerated per frame.
//! * [`hierarchy`]: stencil-aware min/max mip levels of the quad boxes and the normal sign
//!   bytes (§4, §6.1.1, §6.2.1).
//! * [`traverse`]: simultaneous breadth-first traversal with compaction (§5), approximate and
//!   exact results.
//! * [`self_collide`]: one hierarchy against itself with the normal test (§6.2).

pub mod hierarchy;
pub mod image;
pub mod resolution;
pub mod self_collide;
pub mod traverse;

pub use hierarchy::HierarchyImage;
pub use image::GeometryImage;
pub use resolution::ImageSpec;
pub use self_collide::self_collide_image;

pub use traverse::{
    clipped_images, collide_images, collide_images_with, collide_models, Mode, TexelPair,
    TraversalBuffers,
};

use gprox_geometry::freeform::TrimError;

/// Errors of geometry image generation.
#[derive(Debug, thiserror::Error)]
pub enum GeometryImageError {
    /// The accuracy ε is not positive and finite.
    #[error("face {face}: accuracy {eps} is not positive and finite")]
    BadAccuracy {
        /// Face index.
        face: u32,
        /// The accuracy given.
        eps: f64,
    },
    /// The pose has a non-finite entry.
    #[error("face {face}: pose has a non-finite entry")]
    NonFinitePose {
        /// Face index.
        face: u32,
    },
    /// The accuracy needs a grid larger than [`resolution::MAX_SIDE`] texels per side.
    #[error("face {face}: accuracy {eps} needs {width} x {height} texels (limit {max} per side)")]
    TooLarge {
        /// Face index.
        face: u32,
        /// The accuracy.
        eps: f64,
        /// Texels needed along u.
        width: f64,
        /// Texels needed along v.
        height: f64,
        /// The limit.
        max: usize,
    },
    /// The trim loops could not be flattened at the grid's tolerance.
    #[error("face {face}: {source}")]
    Trim {
        /// Face index.
        face: u32,
        /// The underlying error.
        source: TrimError,
    },
    /// An image update with a surface whose grid differs from the image's.
    #[error("face {face}: {message}")]
    Mismatch {
        /// Face index.
        face: u32,
        /// What differs.
        message: &'static str,
    },
}

#[cfg(test)]
mod pairs_tests;
#[cfg(test)]
mod scene_tests;
#[cfg(test)]
mod tests;
