//! Image-space proximity queries (Hoff, Zaferakis, Lin, Manocha 2002) on the CPU: the space
//! where two closed meshes interact is sampled on a uniform lattice whose spacing follows one
//! error tolerance, and every query becomes a per-sample operation.
//!
//! * **Localisation** (`region.rs`, §4): boxes holding the intersection volume `A ∩ B` — the
//!   overlap of the root boxes, shrunk through both world trees, split where the contact is
//!   split ([`Intersection::regions`]).
//! * **Lattice** (`lattice.rs`): cubic cells of edge `h = 2d/√3` for the tolerance `d`, so no
//!   point of a cell is farther than `d` from the cell's sample (its centre). Regions are swept
//!   in tiles of at most `tile × tile` ray columns, so the working memory is bounded by the
//!   tile, not by the region ([`ImageSpaceOptions::tile`]).
//! * **Inside tests** (`column.rs`, §5.1): each sample is classified against each closed mesh
//!   by its winding number along a `+k` ray column, one column at a time, face by face over
//!   runs of samples that share a state (§5.1.1's sorted crossings), exactly (`orient2d`/`orient3d` signs and the symbolic
//!   perturbation of `penetration/inside.rs`): a sample on an edge or a vertex is settled by
//!   the same tie-break, a sample on a face is "on the surface" (not inside). Tiles run in
//!   parallel (rayon).
//! * **Intersection volume** (`intersect.rs`): the samples inside both meshes; `count · h³`
//!   estimates the volume, and [`Intersection::volume_bound`] bounds the error rigorously: a
//!   cell that no face of A or B meets (separating-axis test, `near.rs`) lies wholly on its
//!   sample's side of both surfaces, so only the other cells can be misclassified
//!   ("uncertain" cells, `h³` each).
//! * **Distance field and gradient** (`field.rs`, §5.2–5.3): the exact unsigned distance from
//!   each sample to the mesh (nearest-face search through the world tree, equal to the
//!   brute-force minimum over all faces: error zero up to the rounding of
//!   `point_triangle_distance`), signed by the inside test, with the closest point and face;
//!   the gradient is the unit vector from the closest point (no finite differences).
//! * **Penetration, contacts, separation** (`intersect.rs`, `contact.rs`, §5.4): every
//!   intersection sample carries its distance and closest point on both surfaces (the depth of
//!   a point of A inside B is its distance to B's surface, and vice versa); one contact per
//!   region (deepest sample, normal from the per-sample directions); when the solids are
//!   apart, the closest sampled points refined to a surface pair ([`separation`]). Everything
//!   is symmetric: swapping A and B swaps the per-sample fields and negates the normals.
//! * **Self-intersection volume** (`self_volume.rs`, §5.1.3): samples with winding number
//!   `≥ 2` (in absolute value) of one closed mesh.
//!
//! Each mesh must be closed and consistently oriented (checked as in
//! [`crate::penetration`]; otherwise a typed error), so that "inside" is defined.
//!
//! ```
//! use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
//! use gprox_query::collide::CollisionObject;
//! use gprox_query::image_space::{intersect, ImageSpaceOptions};
//! // Two unit cubes overlapping in a 0.5 × 1 × 1 slab.
//! let c = |i: u32| Vec3::new((i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2 & 1) as f32);
//! let quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
//! let faces = quads.iter().flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect();
//! let cube = TriMesh::new((0..8).map(c).collect(), faces).unwrap();
//! let bvh = gprox_bvh::lbvh::build(&cube);
//! let a = CollisionObject::new(&cube, &bvh, Pose64::IDENTITY).unwrap();
//! let mut pose = Pose64::IDENTITY;
//! pose.rows[0][3] = 0.5;
//! let b = CollisionObject::new(&cube, &bvh, pose).unwrap();
//! let r = intersect(&a, &b, &ImageSpaceOptions::new(0.05)).unwrap();
//! assert!((r.volume() - 0.5).abs() <= r.volume_bound());
//! let deepest = r.contacts()[0].depth; // 0.25: the middle of the slab
//! assert!((deepest - 0.25).abs() <= 0.05);
//! ```

mod column;
mod contact;
mod depth;
mod field;
mod intersect;
mod lattice;
mod near;
mod region;
mod self_volume;
mod sweep;
mod sweep_depths;

pub use contact::{separation, Contact, Separation};
pub use field::{distance_field, DistanceField, DistanceSample};
pub use intersect::{intersect, Intersection, IntersectionSample, SurfacePoint};
pub use lattice::{CellBox, Lattice};
pub use self_volume::{self_intersection_volume, SelfIntersection};
pub use sweep::{IntersectionSweep, SweepOutcome, SweepTile};
pub use sweep_depths::{SweepSamples, UNDECIDED_FACE};

use crate::collide::{CollisionObject, Side};
use crate::penetration::{self, PenetrationError};
use crate::world::World;

/// Sample code bit ([`IntersectionSweep`]): strictly inside the mesh.
pub const SAMPLE_INSIDE: u8 = 1;
/// Sample code bit: some face of the mesh may meet the sample's cell.
pub const SAMPLE_NEAR: u8 = 2;
/// Sample code bit: the sample lies on a closed face of the mesh.
pub const SAMPLE_SURFACE: u8 = 4;
/// Sample code bit, on every sample of a column: the column could not be decided (a
/// classifier's filter failed or its capacity was exceeded); the CPU classifies it again.
pub const SAMPLE_UNDECIDED: u8 = 0x80;

/// Options of the image-space queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageSpaceOptions {
    /// Error tolerance `d` (world units, finite, `> 0`): half the diagonal of a lattice cell,
    /// so the cell edge is `h = 2d/√3` ([`Lattice::spacing_for`]).
    pub tolerance: f64,
    /// Compute the per-sample distances, closest points and faces (and the contacts) of the
    /// intersection samples; `false` gives the count, the volume and its bound only.
    pub depths: bool,
    /// Largest number of lattice cells a query may sweep ([`ImageSpaceError::TooManyCells`]
    /// beyond).
    pub max_cells: u64,
    /// Columns per tile side: a tile of `tile × tile` columns is the unit of work and of
    /// memory (clamped to `1..=4096`).
    pub tile: u32,
}

impl ImageSpaceOptions {
    /// Options with tolerance `d`, depths on, at most 2³⁰ cells, tiles of 16 × 16 columns.
    pub fn new(tolerance: f64) -> Self {
        Self {
            tolerance,
            depths: true,
            max_cells: 1 << 30,
            tile: 16,
        }
    }

    fn spacing(&self) -> Result<f64, ImageSpaceError> {
        let d = self.tolerance;
        if !(d.is_finite() && d > 0.0) {
            return Err(ImageSpaceError::BadTolerance(d));
        }
        Ok(Lattice::spacing_for(d))
    }
}

/// Errors of the image-space queries.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImageSpaceError {
    /// A mesh is not closed and oriented, or its tree or pose is invalid (as for
    /// [`crate::penetration::penetration`]).
    #[error(transparent)]
    Mesh(#[from] PenetrationError),
    /// The tolerance is not finite and positive.
    #[error("tolerance must be finite and > 0, got {0}")]
    BadTolerance(f64),
    /// A lattice's origin is not finite or its spacing not finite and positive.
    #[error("lattice must have a finite origin and a finite spacing > 0")]
    BadLattice,
    /// An [`IntersectionSweep`] was finished with the wrong number of sample codes.
    #[error("an intersection sweep needs {expected} sample codes, got {got}")]
    BadCodes {
        /// Codes the sweep has.
        expected: u64,
        /// Codes given.
        got: u64,
    },
    /// [`SweepSamples::finish`] got the wrong number of surface points for a mesh.
    #[error("the intersection samples need {expected} surface points per mesh, got {got}")]
    BadDepths {
        /// Samples that want depths.
        expected: u64,
        /// Surface points given.
        got: u64,
    },
    /// The query would sweep more cells than [`ImageSpaceOptions::max_cells`].
    #[error("the query needs {cells} lattice cells, more than max_cells = {max}")]
    TooManyCells {
        /// Cells needed.
        cells: u64,
        /// The limit.
        max: u64,
    },
}

/// Validates one object (tree, pose, closed and oriented mesh) and places it in world space.
fn prepare<'a>(o: &CollisionObject<'a>, side: Side) -> Result<World<'a>, ImageSpaceError> {
    penetration::check(o, side)?;
    penetration::closed::check_closed(o.mesh, side)?;
    World::new(o, side).map_err(|e| ImageSpaceError::Mesh(e.into()))
}

/// [`prepare`] for both objects of a pair query, side by side on the rayon pool (each
/// transforms its vertices and refits its world tree); A's error first when both fail.
fn prepare_pair<'a>(
    a: &CollisionObject<'a>,
    b: &CollisionObject<'a>,
) -> Result<(World<'a>, World<'a>), ImageSpaceError> {
    let (wa, wb) = rayon::join(|| prepare(a, Side::A), || prepare(b, Side::B));
    Ok((wa?, wb?))
}

/// Fails when `cells` exceeds the limit.
fn check_cells(cells: u64, options: &ImageSpaceOptions) -> Result<(), ImageSpaceError> {
    if cells > options.max_cells {
        return Err(ImageSpaceError::TooManyCells {
            cells,
            max: options.max_cells,
        });
    }
    Ok(())
}
