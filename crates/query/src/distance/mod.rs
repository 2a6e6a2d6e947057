//! Separation distance between two triangle meshes with rigid poses.
//!
//! A simultaneous traversal of the bounding-volume test tree (BVTT) of two [`BvTree`]s,
//! best-first: node pairs wait in a priority queue ordered by the lower bound of their volumes'
//! distance, and one shared upper bound (the best triangle pair so far) prunes every pair that
//! cannot improve it. The first upper bound comes from a greedy descent to one leaf pair.
//! Volumes of B are mapped into A's model frame by the nearest rotation of the relative pose
//! (inflated by the residual, so bounds stay conservative); triangles are compared exactly in
//! f64 world coordinates ([`gprox_geometry::tri_distance::triangle_distance`] on
//! [`gprox_geometry::transform::transform_triangle`] corners).
//!
//! Tolerances (PQP style): a pair is pruned when its lower bound is within
//! `max(abs_tol, rel_tol · upper)` of the upper bound; the result then carries
//! `lower ≤ true distance ≤ upper` (equal for the exact query). A threshold `δ` prunes every pair
//! whose bound is `≥ δ` and stops at the first triangle pair closer than `δ`.
//! With `parallel`, the BVTT is expanded breadth-first into a frontier whose pairs run as rayon
//! tasks sharing the upper bound through an atomic.
//!
//! ```
//! use gprox_bvh::{bv_tree::BvTree, rss::Rss};
//! use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
//! use gprox_query::distance::{distance, DistanceObject, DistanceOptions};
//! let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
//! let tree = BvTree::<Rss>::build(&tri);
//! let a = DistanceObject { mesh: &tri, tree: &tree, pose: Pose64::IDENTITY };
//! let mut pose = Pose64::IDENTITY;
//! pose.rows[2][3] = 2.0; // lift B by 2 along z
//! let b = DistanceObject { mesh: &tri, tree: &tree, pose };
//! let r = distance(&a, &b, &DistanceOptions::default()).unwrap();
//! assert_eq!(r.distance, 2.0);
//! assert!(r.lower <= r.distance && r.distance <= r.upper);
//! ```

mod binary;
mod traverse;
mod wide;

use glam::DVec3;
use gprox_bvh::bounding_volume::BoundingVolume;
use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::rss::Rss;
use gprox_bvh::wide_rss::WideRssTree;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;

/// A mesh, its bounding-volume tree (model coordinates) and its pose.
#[derive(Clone, Copy, Debug)]
pub struct DistanceObject<'a, B = Rss> {
    /// The triangles.
    pub mesh: &'a TriMesh,
    /// Tree over `mesh`'s faces (built by [`BvTree::build`] or refitted to `mesh`).
    pub tree: &'a BvTree<B>,
    /// Rigid pose: world = pose · model.
    pub pose: Pose64,
}

/// A mesh, its eight-wide RSS tree (model coordinates) and its pose, for [`distance_wide`].
#[derive(Clone, Copy, Debug)]
pub struct WideDistanceObject<'a> {
    /// The triangles.
    pub mesh: &'a TriMesh,
    /// Tree over `mesh`'s faces (built by [`WideRssTree::build`] for this mesh).
    pub tree: &'a WideRssTree,
    /// Rigid pose: world = pose · model.
    pub pose: Pose64,
}

impl<'a> WideDistanceObject<'a> {
    /// The same object with its binary tree.
    pub fn binary(&self) -> DistanceObject<'a, Rss> {
        DistanceObject {
            mesh: self.mesh,
            tree: self.tree.tree(),
            pose: self.pose,
        }
    }
}

/// Query options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceOptions {
    /// Absolute error allowed (`upper − lower ≤ max(abs_tol, rel_tol·upper)`).
    pub abs_tol: f64,
    /// Relative error allowed.
    pub rel_tol: f64,
    /// Threshold `δ`: answer only "is the distance below δ?" and stop as early as possible.
    pub threshold: Option<f64>,
    /// Run the traversal as parallel rayon tasks.
    pub parallel: bool,
}

impl Default for DistanceOptions {
    /// Exact distance, sequential.
    fn default() -> Self {
        Self {
            abs_tol: 0.0,
            rel_tol: 0.0,
            threshold: None,
            parallel: false,
        }
    }
}

/// Result of [`distance`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceResult {
    /// Distance of the best triangle pair found (`= upper`).
    pub distance: f64,
    /// Certified lower bound of the true distance.
    pub lower: f64,
    /// Certified upper bound of the true distance (achieved by the reported points).
    pub upper: f64,
    /// Closest point on A (world).
    pub point_a: DVec3,
    /// Closest point on B (world).
    pub point_b: DVec3,
    /// Face of A holding `point_a`.
    pub tri_a: u32,
    /// Face of B holding `point_b`.
    pub tri_b: u32,
    /// Whether the traversal stopped early because a pair closer than the threshold was found.
    pub below_threshold: bool,
}

/// Errors of [`distance`]: a tree that does not belong to its mesh.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistanceError {
    /// The tree's node count is not `2 · faces − 1`.
    #[error(
        "object {object}: tree has {nodes} nodes but the mesh has {faces} faces (expected 2n-1)"
    )]
    TreeSize {
        /// "a" or "b".
        object: &'static str,
        /// Nodes in the tree.
        nodes: usize,
        /// Faces in the mesh.
        faces: usize,
    },
    /// A leaf or child link points outside the arrays.
    #[error("object {object}: node {node} links to {target}, out of range")]
    BadLink {
        /// "a" or "b".
        object: &'static str,
        /// The node.
        node: usize,
        /// The out-of-range child or face.
        target: u32,
    },
    /// A pose with a NaN or infinite entry: no distance is defined.
    #[error("object {object}: the pose has a non-finite entry")]
    NonFinitePose {
        /// "a" or "b".
        object: &'static str,
    },
    /// A tree could not be collapsed into eight-wide nodes.
    #[error("wide tree: {0}")]
    Wide(#[from] gprox_bvh::wide::WideError),
    /// A tolerance or threshold is NaN or negative.
    #[error("invalid option {what} = {value}")]
    BadOption {
        /// Which option.
        what: &'static str,
        /// Its value.
        value: f64,
    },
}

fn check_size<B>(obj: &DistanceObject<'_, B>, name: &'static str) -> Result<(), DistanceError> {
    if obj.pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(DistanceError::NonFinitePose { object: name });
    }
    let faces = obj.mesh.face_count();
    let nodes = obj.tree.nodes.len();
    if nodes != 2 * faces - 1 {
        return Err(DistanceError::TreeSize {
            object: name,
            nodes,
            faces,
        });
    }
    Ok(())
}

/// Full structural check of a tree against its mesh (every child link and leaf face in range),
/// O(n). [`distance`] only checks the node count (O(1)); call this once for trees that were not
/// made by [`BvTree::build`] / [`BvTree::fit`] for this mesh.
pub fn validate_tree<B>(obj: &DistanceObject<'_, B>) -> Result<(), DistanceError> {
    check_size(obj, "tree")?;
    let faces = obj.mesh.face_count();
    let nodes = obj.tree.nodes.len();
    for (i, n) in obj.tree.nodes.iter().enumerate() {
        let bad = if n.is_leaf() {
            (n.left as usize >= faces).then_some(n.left)
        } else if n.left as usize >= nodes {
            Some(n.left)
        } else {
            (n.right as usize >= nodes).then_some(n.right)
        };
        if let Some(target) = bad {
            return Err(DistanceError::BadLink {
                object: "tree",
                node: i,
                target,
            });
        }
    }
    Ok(())
}

/// Minimum distance between two posed meshes, closest points and faces (see the module docs).
pub fn distance<B: BoundingVolume>(
    a: &DistanceObject<'_, B>,
    b: &DistanceObject<'_, B>,
    options: &DistanceOptions,
) -> Result<DistanceResult, DistanceError> {
    distance_from(a, b, options, None)
}

/// [`distance`] with a first guess: `hint = [face of a, face of b]`, typically the previous
/// frame's `[tri_a, tri_b]`, whose exact distance is the first upper bound when it beats the
/// greedy descent's (temporal coherence: a near-optimal first bound prunes more of the tree).
/// The distance and bounds do not depend on the hint; where several pairs tie at the minimum,
/// the reported pair may. An out-of-range hint is ignored.
///
/// ```
/// use gprox_bvh::{bv_tree::BvTree, rss::Rss};
/// use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
/// use gprox_query::distance::{distance_from, DistanceObject, DistanceOptions};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let tree = BvTree::<Rss>::build(&tri);
/// let a = DistanceObject { mesh: &tri, tree: &tree, pose: Pose64::IDENTITY };
/// let mut pose = Pose64::IDENTITY;
/// pose.rows[2][3] = 2.0;
/// let b = DistanceObject { mesh: &tri, tree: &tree, pose };
/// let first = distance_from(&a, &b, &DistanceOptions::default(), None).unwrap();
/// let next = distance_from(&a, &b, &DistanceOptions::default(), Some([first.tri_a, first.tri_b])).unwrap();
/// assert_eq!(next.distance, first.distance);
/// ```
pub fn distance_from<B: BoundingVolume>(
    a: &DistanceObject<'_, B>,
    b: &DistanceObject<'_, B>,
    options: &DistanceOptions,
    hint: Option<[u32; 2]>,
) -> Result<DistanceResult, DistanceError> {
    check(a, b, options)?;
    let tt = binary::BinaryBvtt {
        an: &a.tree.nodes,
        bn: &b.tree.nodes,
        map: traverse::Mapped::new(&a.pose, &b.pose, b.tree.nodes[0].bv.reach()),
    };
    let search = traverse::Search::new(tt, (a.mesh, a.pose), (b.mesh, b.pose), options);
    Ok(search.run(hint))
}

/// The checks of every query: tree sizes, finite poses, valid options.
fn check<B>(
    a: &DistanceObject<'_, B>,
    b: &DistanceObject<'_, B>,
    options: &DistanceOptions,
) -> Result<(), DistanceError> {
    check_size(a, "a")?;
    check_size(b, "b")?;
    for (what, value) in [("abs_tol", options.abs_tol), ("rel_tol", options.rel_tol)] {
        if value.is_nan() || value < 0.0 {
            return Err(DistanceError::BadOption { what, value });
        }
    }
    match options.threshold {
        Some(t) if t.is_nan() => Err(DistanceError::BadOption {
            what: "threshold",
            value: t,
        }),
        _ => Ok(()),
    }
}

/// [`distance`] on eight-wide RSS trees: the same best-first search, each step bounding one
/// node's eight volumes at once ([`gprox_bvh::wide_rss`]). The distance and bounds are those
/// of [`distance`] on the objects' binary trees; where several pairs tie at the minimum, the
/// reported pair may differ.
///
/// ```
/// use gprox_bvh::wide_rss::WideRssTree;
/// use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
/// use gprox_query::distance::{distance_wide, DistanceOptions, WideDistanceObject};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let tree = WideRssTree::build(&tri).unwrap();
/// let a = WideDistanceObject { mesh: &tri, tree: &tree, pose: Pose64::IDENTITY };
/// let mut pose = Pose64::IDENTITY;
/// pose.rows[2][3] = 2.0; // lift B by 2 along z
/// let b = WideDistanceObject { mesh: &tri, tree: &tree, pose };
/// let r = distance_wide(&a, &b, &DistanceOptions::default()).unwrap();
/// assert_eq!(r.distance, 2.0);
/// ```
pub fn distance_wide(
    a: &WideDistanceObject<'_>,
    b: &WideDistanceObject<'_>,
    options: &DistanceOptions,
) -> Result<DistanceResult, DistanceError> {
    distance_wide_from(a, b, options, None)
}

/// [`distance_wide`] with a first guess, as [`distance_from`].
pub fn distance_wide_from(
    a: &WideDistanceObject<'_>,
    b: &WideDistanceObject<'_>,
    options: &DistanceOptions,
    hint: Option<[u32; 2]>,
) -> Result<DistanceResult, DistanceError> {
    check(&a.binary(), &b.binary(), options)?;
    let tt = wide::WideBvtt {
        a: a.tree,
        b: b.tree,
        map: traverse::Mapped::new(&a.pose, &b.pose, b.tree.reach()),
    };
    let search = traverse::Search::new(tt, (a.mesh, a.pose), (b.mesh, b.pose), options);
    Ok(search.run(hint))
}

/// Whether the distance between the posed meshes is below `delta` (stops at the first triangle
/// pair closer than `delta`, or as soon as every remaining pair is provably at least `delta`
/// apart).
pub fn distance_below<B: BoundingVolume>(
    a: &DistanceObject<'_, B>,
    b: &DistanceObject<'_, B>,
    delta: f64,
) -> Result<bool, DistanceError> {
    let r = distance(
        a,
        b,
        &DistanceOptions {
            threshold: Some(delta),
            ..DistanceOptions::default()
        },
    )?;
    Ok(r.upper < delta)
}
