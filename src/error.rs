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
    /// Vertex penetration on meshes that are not closed and consistently oriented.
    #[error(transparent)]
    Penetration(#[from] gprox_query::penetration::PenetrationError),
    /// An image-space query on meshes that are not closed and consistently oriented, with a
    /// bad tolerance, or needing too many lattice cells.
    #[error(transparent)]
    ImageSpace(#[from] gprox_query::image_space::ImageSpaceError),
    /// Invalid freeform input (no surfaces, a surface that cannot be tessellated).
    #[error(transparent)]
    Freeform(#[from] gprox_geometry::freeform::FreeformError),
    /// Invalid trim loops of a trimmed face (open, outside the domain, crossing).
    #[error(transparent)]
    Trim(#[from] gprox_geometry::freeform::TrimError),
    /// A geometry image could not be made (bad accuracy, a grid too large for it, trim loops
    /// that cannot be flattened, a non-finite pose).
    #[error(transparent)]
    GeometryImage(#[from] gprox_query::geometry_image::GeometryImageError),
    /// The Coons BVH of a freeform model could not be built.
    #[error(transparent)]
    Coons(#[from] gprox_bvh::coons::CoonsError),
    /// A query asked of a model of a kind it does not take (a mesh query on a freeform model,
    /// a freeform query on a mesh).
    #[error("{query}: {which} is a {kind} model; {hint}")]
    Unsupported {
        /// The query (the `Context` method).
        query: &'static str,
        /// Which argument ("model a", "model b", "the model").
        which: &'static str,
        /// What that model is.
        kind: crate::ModelKind,
        /// What to do instead.
        hint: &'static str,
    },
    /// Self-collision or CCD of a mesh with two vertices at one position: its faces touch
    /// there but share no vertex id, so they would be reported as colliding.
    #[error(
        "{query}: vertices {} and {} are at the same position (the mesh is not welded), so the \
         faces around them would count as colliding; weld it first \
         (gprox::geometry::io::weld_vertices)",
        vertices[0], vertices[1]
    )]
    Unwelded {
        /// The query.
        query: &'static str,
        /// The two vertex ids.
        vertices: [u32; 2],
    },
    /// [`crate::Model::set_trimmed_surfaces`] with not one surface per face.
    #[error("set_trimmed_surfaces: the model has {expected} faces, got {got} surfaces")]
    FaceCount {
        /// Faces of the model.
        expected: usize,
        /// Surfaces given.
        got: usize,
    },
    /// A picture could not be written.
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
}
