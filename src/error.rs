//! The facade's error type: every crate's error, plus backend availability.

/// Everything a gprox call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad geometric input (mesh validation, mesh files).
    #[error(transparent)]
    Geometry(#[from] gprox_geometry::GeometryError),
    /// A malformed scene folder.
    #[error(transparent)]
    Scene(#[from] gprox_geometry::scene::SceneError),
    /// A BVH that does not fit its mesh.
    #[error(transparent)]
    Refit(#[from] gprox_bvh::refit::RefitError),
    /// Inconsistent collision input (tree not built for its mesh, non-finite pose, bad margin).
    #[error(transparent)]
    Collide(#[from] gprox_query::collide::CollideError),
    /// Inconsistent many-body input (bad margin, a tree not built for its mesh).
    #[error(transparent)]
    BroadPhase(#[from] gprox_query::broad_phase::BroadPhaseError),
    /// A self-collision query on a tree that does not fit its mesh.
    #[error(transparent)]
    SelfCollide(#[from] gprox_query::self_collide::SelfCollideError),
    /// Bad distance options or inconsistent distance input.
    #[error(transparent)]
    Distance(#[from] gprox_query::distance::DistanceError),
    /// Inconsistent continuous-collision input (end positions, options).
    #[error(transparent)]
    Ccd(#[from] gprox_query::ccd::CcdError),
    /// A failure on the CUDA (or emulated CUDA) backend, including "no driver / no device /
    /// no device code" when opening it.
    #[error(transparent)]
    Cuda(#[from] gprox_cuda::CudaError),
    /// A picture could not be written.
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
}
