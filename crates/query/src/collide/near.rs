//! Temporal coherence of the early-out query beyond its witness pair.
//!
//! An early-out query ([`super::try_collide_any_near`]) returns the touching pair it found with
//! the two BVH leaves that hold it ([`Witness`]). Given that witness next frame, the query tests
//! the pair itself first; when it no longer touches, the query searches the subtree pair
//! [`NEAR_LEVELS`] levels above those leaves — where a contact that moved a little is found
//! again, after a few dozen node tests instead of a descent from the roots — and only then the
//! whole trees. Only the order of the search depends on the witness, never the answer (whether
//! some pair touches).

use gprox_bvh::Bvh;

/// A touching pair found by an early-out query: its faces and the leaves of the two BVHs that
/// hold them, to start the next frame's query from ([`super::try_collide_any_near`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Witness {
    /// `[face of a, face of b]`.
    pub faces: [u32; 2],
    /// The leaf nodes of `a`'s and of `b`'s BVH that hold those faces, or
    /// [`Witness::NO_LEAVES`]. Leaves that no longer hold the faces (a rebuilt tree) are ignored.
    pub leaves: [u32; 2],
}

impl Witness {
    /// Leaves of a witness that names its faces only.
    pub const NO_LEAVES: [u32; 2] = [u32::MAX; 2];

    /// A witness of the face pair `faces` alone (its pair is tested first, its neighbourhood
    /// is not searched).
    pub fn of_faces(faces: [u32; 2]) -> Self {
        Self {
            faces,
            leaves: Self::NO_LEAVES,
        }
    }
}

/// How far above the witness's leaves the neighbourhood search starts: 2⁶ = 64 leaves a side.
/// In the two-tori benchmark, where B moves by about a triangle a frame, the last pair had
/// parted in 47 of the 54 contact frames and 35 of those found a pair there (2 levels: 19,
/// 4: 26, 8: 45, at a larger search each).
pub(crate) const NEAR_LEVELS: usize = 6;

/// Whether node `leaf` of `bvh` is a leaf holding `face`.
fn holds(bvh: &Bvh, leaf: u32, face: u32) -> bool {
    bvh.nodes
        .get(leaf as usize)
        .is_some_and(|n| n.is_leaf() && n.left == face)
}

/// The node `levels` above `node` in `bvh`, or the highest one reached through parent links
/// that lead back to their child (a malformed parent array stops the climb, it never fails).
fn ancestor(bvh: &Bvh, mut node: u32, levels: usize) -> u32 {
    for _ in 0..levels {
        let Some(&p) = bvh.parents.get(node as usize) else {
            break;
        };
        match bvh.nodes.get(p as usize) {
            Some(n) if !n.is_leaf() && (n.left == node || n.right == node) => node = p,
            _ => break,
        }
    }
    node
}

/// The node pair where the neighbourhood search for `w` starts, when its leaves still hold its
/// faces in `a` and `b`.
pub(crate) fn start(a: &Bvh, b: &Bvh, w: &Witness) -> Option<[u32; 2]> {
    let [la, lb] = w.leaves;
    let [fa, fb] = w.faces;
    (holds(a, la, fa) && holds(b, lb, fb))
        .then(|| [ancestor(a, la, NEAR_LEVELS), ancestor(b, lb, NEAR_LEVELS)])
}
