//! How a [`Model`](crate::Model) is built: the optional choices a user may make.

use gprox_bvh::coons::CoonsOptions;

/// The tree of a mesh model's collision queries on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CollisionTree {
    /// Picked per query by what the context saw last: the OBB tree (as [`Self::Obb`], built on
    /// first need) to
    /// prove a pair of rigid models apart again once the context's last query of that kind
    /// found them apart — tight volumes prune a separation proof early — and the LBVH
    /// otherwise: for pairs in contact (cheap box tests, the early-out child order), for new
    /// pairs, and for a model whose positions ever moved (no OBB tree is rebuilt per frame).
    #[default]
    Auto,
    /// Axis-aligned boxes over a Morton-ordered LBVH: fast to build and refit, the tree of
    /// deforming models and of every device query.
    Aabb,
    /// Oriented boxes: tighter around rotated or thin parts, slower to build (rebuilt after
    /// each deformation), eight to a node and tested eight at a time in SIMD lanes
    /// ([`gprox_bvh::wide_obb::WideObbTree`]). Device queries keep the LBVH; pair sets are the
    /// same either way.
    Obb,
}

/// Options of [`Model::with_options`](crate::Model::with_options),
/// [`Model::freeform`](crate::Model::freeform) and
/// [`Context::model_with`](crate::Context::model_with). The defaults suit most models: nothing
/// here changes an answer, only how fast it comes (and, for freeform models, the Coons BVH's
/// error bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelOptions {
    /// The collision tree of CPU queries.
    pub collision_tree: CollisionTree,
    /// The Coons BVH of freeform models (`epsilon` relative to the model's size).
    pub coons: CoonsOptions,
    /// Tessellation tolerance of freeform models' display mesh, relative to the model's size.
    pub tessellation: f64,
}

impl Default for ModelOptions {
    fn default() -> Self {
        Self {
            collision_tree: CollisionTree::Auto,
            coons: CoonsOptions::default(),
            tessellation: 1e-3,
        }
    }
}

/// Options of the geometry-image queries ([`Context::image_collide`](crate::Context::image_collide),
/// [`Context::image_self_collide`](crate::Context::image_self_collide)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeometryImageOptions {
    /// The accuracy ε relative to each model's size (the largest side of its control box):
    /// approximate pairs are within 2ε of each other and none is missed.
    pub epsilon: f64,
    /// Approximate (overlapping padded quad boxes, the paper's mode) or exact (intersecting
    /// quad triangles).
    pub mode: gprox_query::geometry_image::Mode,
    /// Self-collision only: prune regions whose normals share a direction (the paper's normal
    /// test).
    pub normal_test: bool,
}

impl Default for GeometryImageOptions {
    fn default() -> Self {
        Self {
            epsilon: 1e-3,
            mode: gprox_query::geometry_image::Mode::Approximate,
            normal_test: true,
        }
    }
}
