//! Continuous collision detection (CCD) under linear vertex motion over `t ∈ [0, 1]`.
//!
//! * Elementary tests: [`vertex_face_toi`] and [`edge_edge_toi`]: conservative (no false
//!   negatives, ever), inclusion-based bisection over `(t, u, v)` with a rigorous f64 rounding
//!   bound (see [`inclusion`]). They report the earliest time of impact as a certified interval
//!   [`Toi`]: no contact happens before `t_lo`. Each answer carries its certainty
//!   ([`CcdStatus`]): a certified contact (a witness `(t, u, v)` within the tolerance), or
//!   undecided (the check budget ran out), with an upper bound on the separation; `None` is a
//!   certified no-contact. [`CcdOptions::undecided`] chooses what happens to undecided tests.
//!   The bisection runs only where the coplanarity cubic may vanish (`coplanar`), and a face
//!   that stays collinear over the step (certified exactly, `exact`) is decided as three
//!   vertex–edge tests (`degenerate`).
//! * Mesh CCD between two frames ([`mesh`]): swept boxes → LBVH → BVTT → candidate face pairs
//!   (adjacent ones included) → [`ccd_candidates`] ([`candidates`]): the 15 elementary tests per
//!   face pair behind certified filters, each feature pair run once (feature ownership). The
//!   GPU backend runs the same [`ccd_candidates`] after its own traversal.

pub mod candidates;
mod coplanar;
mod degenerate;
mod exact;
mod filter;
pub mod inclusion;
pub mod mesh;
mod traverse;

use glam::DVec3;

pub use candidates::{ccd_candidates, CcdMesh};
pub use mesh::{ccd_pair, ccd_self, ccd_self_with_bvh, Feature, FeatureToi, MeshCcd};

/// Tuning of the elementary CCD tests. The tests stay conservative for every setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcdOptions {
    /// Spatial tolerance (absolute, per axis): a box whose image is this small is accepted as a
    /// contact. Smaller means fewer false positives and more work. Default `1e-6`.
    pub tolerance: f64,
    /// Minimum separation `δ`: report contact when the primitives come within `δ` (per axis,
    /// L∞, a superset of the Euclidean condition). Default `0`.
    pub min_separation: f64,
    /// Widest accepted time interval `t_hi - t_lo` once the image is within the tolerance.
    /// Default `1e-4`.
    pub max_time_width: f64,
    /// Box evaluations per elementary test before it stops and reports an undecided
    /// ([`CcdStatus::Undecided`], conservatively a contact) at the earliest live box.
    /// Default `10_000`.
    pub max_checks: usize,
    /// What to do with undecided tests. Default [`Undecided::AsContact`].
    pub undecided: Undecided,
}

/// What becomes of an elementary test that spent its check budget undecided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Undecided {
    /// Report it as a contact with [`CcdStatus::Undecided`] (conservative). Mesh CCD lists it
    /// in [`MeshCcd::contacts`] (it counts for [`MeshCcd::earliest`]) and again in
    /// [`MeshCcd::undecided`].
    #[default]
    AsContact,
    /// Mesh CCD lists it only in [`MeshCcd::undecided`], not in `contacts` nor `earliest`: the
    /// caller decides. (Elementary tests still return it, with its status.)
    Apart,
    /// Run it again with this larger budget; what is still undecided then is treated as
    /// [`Undecided::AsContact`].
    Refine {
        /// Box evaluations of the second run.
        max_checks: usize,
    },
}

/// How certain a reported time of impact is (a certified no-contact is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CcdStatus {
    /// Certified: at the witness the features are within [`Toi::separation`] `≤ min_separation
    /// + tolerance` (plus the rounding bound) of each other on every axis.
    Contact,
    /// The check budget ran out: no contact before `t_lo` is all that is certified;
    /// [`Toi::separation`] is the smallest upper bound of the separation found.
    Undecided,
}

impl Default for CcdOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            min_separation: 0.0,
            max_time_width: 1e-4,
            max_checks: 10_000,
            undecided: Undecided::AsContact,
        }
    }
}

/// A certified time of impact: no contact happens at any `t < t_lo`; the earliest box that could
/// not be excluded spans `[t_lo, t_hi]`. With [`CcdStatus::Contact`] every point of that box is
/// within the tolerance of contact; with [`CcdStatus::Undecided`] the budget ran out first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Toi {
    /// Lower bound of the first contact time.
    pub t_lo: f64,
    /// Upper end of the earliest possibly-colliding time interval.
    pub t_hi: f64,
    /// Certified contact or undecided.
    pub status: CcdStatus,
    /// Upper bound of the L∞ distance (per axis, like the tolerance) between the features at
    /// [`Toi::witness`]: `max_k |F_k(t, u, v)|` with `F` the difference of the two points
    /// (vertex minus face point, or point of edge a minus point of edge b), rounding included.
    /// For a contact it is at most `min_separation + tolerance` (+ the rounding bound); for an
    /// undecided test it is the smallest found, and the true minimum separation lies in
    /// `[0, separation]`.
    pub separation: f64,
    /// `(t, u, v)` where the separation bound holds: vertex–face, `u` and `v` are the
    /// barycentric weights of the face's second and third corner; edge–edge, the parameters
    /// along edge a and edge b. For a contact `t == t_lo`.
    pub witness: [f64; 3],
}

impl Toi {
    /// Whether this is a certified contact ([`CcdStatus::Contact`]).
    pub fn is_certified(&self) -> bool {
        self.status == CcdStatus::Contact
    }
}

/// Bad input to a CCD query.
#[derive(Debug, thiserror::Error)]
pub enum CcdError {
    /// The two frames have different vertex counts.
    #[error("vertex count mismatch for {what}: {start} vertices at t=0, {end} at t=1")]
    VertexCountMismatch {
        /// Which mesh ("mesh", "mesh a", "mesh b").
        what: &'static str,
        /// Vertex count of the start frame.
        start: usize,
        /// Vertex count of the end frame.
        end: usize,
    },
    /// The topology or BVH passed along was made for a different mesh.
    #[error("{what}: {got} faces/leaves given, the mesh has {faces} faces")]
    Mismatch {
        /// What does not fit ("topology", "bvh").
        what: &'static str,
        /// Its face or leaf count.
        got: usize,
        /// Faces of the mesh.
        faces: usize,
    },
    /// A candidate pair names a face the mesh does not have.
    #[error("{what} {pair}: face {face} out of range ({faces} faces)")]
    FaceIndex {
        /// Which entry ("pair", "pair (face of a)", "pair (face of b)").
        what: &'static str,
        /// Index of the candidate pair.
        pair: usize,
        /// The face index given.
        face: u32,
        /// Faces of the mesh.
        faces: usize,
    },
    /// A position that is NaN, infinite or beyond `±2^1000` (where f64 differences overflow).
    #[error("{what}: point {index} at t={frame} has an unusable coordinate {value:?}")]
    NonFinite {
        /// Which input ("vertex-face", "edge-edge", "mesh", "mesh a", "mesh b").
        what: &'static str,
        /// Frame: 0 (start) or 1 (end).
        frame: u8,
        /// Index of the offending point / vertex.
        index: usize,
        /// Its coordinates.
        value: [f64; 3],
    },
}

/// Largest coordinate magnitude accepted (beyond it f64 differences may overflow).
pub const MAX_COORDINATE: f64 = 1.0715086071862673e301; // 2^1000

pub(crate) fn check_point(
    what: &'static str,
    frame: u8,
    index: usize,
    p: DVec3,
) -> Result<(), CcdError> {
    if p.is_finite() && p.abs().max_element() <= MAX_COORDINATE {
        Ok(())
    } else {
        Err(CcdError::NonFinite {
            what,
            frame,
            index,
            value: p.to_array(),
        })
    }
}

fn check4(what: &'static str, start: &[DVec3; 4], end: &[DVec3; 4]) -> Result<(), CcdError> {
    for i in 0..4 {
        check_point(what, 0, i, start[i])?;
        check_point(what, 1, i, end[i])?;
    }
    Ok(())
}

/// Vertex–face CCD: vertex `p` against triangle `(a, b, c)`, points given as `[p, a, b, c]` at
/// `t = 0` (`start`) and `t = 1` (`end`), moving linearly. `Ok(None)` means certified: no
/// contact (within `min_separation`) for any `t ∈ [0, 1]`.
///
/// ```
/// use gprox_query::ccd::{vertex_face_toi, CcdOptions};
/// use glam::DVec3;
/// let face = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 0.0)];
/// let start = [DVec3::new(0.2, 0.2, 1.0), face[0], face[1], face[2]];
/// let end = [DVec3::new(0.2, 0.2, -1.0), face[0], face[1], face[2]];
/// let toi = vertex_face_toi(start, end, &CcdOptions::default()).unwrap().unwrap();
/// assert!(toi.t_lo <= 0.5 && 0.5 <= toi.t_hi + 1e-4);
/// ```
pub fn vertex_face_toi(
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> Result<Option<Toi>, CcdError> {
    check4("vertex-face", &start, &end)?;
    Ok(vertex_face_unchecked(start, end, opts))
}

/// Edge–edge CCD: edge `(a0, a1)` against edge `(b0, b1)`, points given as `[a0, a1, b0, b1]`
/// at `t = 0` (`start`) and `t = 1` (`end`). `Ok(None)` means certified: no contact.
///
/// ```
/// use gprox_query::ccd::{edge_edge_toi, CcdOptions};
/// use glam::DVec3;
/// let a = [DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0)];
/// let start = [a[0], a[1], DVec3::new(0.0, -1.0, 1.0), DVec3::new(0.0, 1.0, 1.0)];
/// let end = [a[0], a[1], DVec3::new(0.0, -1.0, -1.0), DVec3::new(0.0, 1.0, -1.0)];
/// let toi = edge_edge_toi(start, end, &CcdOptions::default()).unwrap().unwrap();
/// assert!(toi.t_lo <= 0.5);
/// ```
pub fn edge_edge_toi(
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> Result<Option<Toi>, CcdError> {
    check4("edge-edge", &start, &end)?;
    Ok(edge_edge_unchecked(start, end, opts))
}

/// [`vertex_face_toi`] without the input check (inputs already validated).
pub(crate) fn vertex_face_unchecked(
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> Option<Toi> {
    if degenerate::face_always_collinear(&start, &end) {
        return degenerate::vertex_face_collinear(start, end, opts);
    }
    let p = inclusion::Problem::vertex_face(start, end, opts.min_separation);
    solve_with_policy(&p, opts)
}

/// [`inclusion::solve`], run again with the larger budget of [`Undecided::Refine`] when the
/// first run is undecided.
fn solve_with_policy(p: &inclusion::Problem, opts: &CcdOptions) -> Option<Toi> {
    let r = inclusion::solve(p, opts);
    match (r, opts.undecided) {
        (Some(t), Undecided::Refine { max_checks })
            if t.status == CcdStatus::Undecided && max_checks > opts.max_checks =>
        {
            inclusion::solve(
                p,
                &CcdOptions {
                    max_checks,
                    ..*opts
                },
            )
        }
        _ => r,
    }
}

/// [`edge_edge_toi`] without the input check (inputs already validated).
pub(crate) fn edge_edge_unchecked(
    start: [DVec3; 4],
    end: [DVec3; 4],
    opts: &CcdOptions,
) -> Option<Toi> {
    let p = inclusion::Problem::edge_edge(start, end, opts.min_separation);
    solve_with_policy(&p, opts)
}
