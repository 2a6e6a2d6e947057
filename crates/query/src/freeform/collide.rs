//! Collision within a tolerance between two freeform objects (paper §4), reporting contacts:
//! pairs of sub-patches are refined on the dual Coons BVH down to its leaves (and below them,
//! through the Coons levels and then exact sub-surfaces) until each is either **witnessed** (two actual surface points within the
//! tolerance, found by the GJK witnesses of the pair bound or refined by Levenberg–Marquardt on
//! the two sub-patches), **separated** (certified lower bound above the tolerance: dropped), or
//! left **undecided** when the refinement limits are reached. No false negatives: every pair of
//! surface points within the tolerance lies in a reported contact's or undecided pair's patches.

use glam::DVec3;
use gprox_bvh::coons::CellKind;
use gprox_geometry::freeform::ParamRect;
use gprox_geometry::transform::Pose64;
use rayon::prelude::*;

use super::bound::{pair_bound, BoundedCell, FreeformObject, QueryCell};

/// One pair of sub-patches that may come within the tolerance, without a witness (an
/// undecided candidate of [`FreeformContacts`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollisionPair {
    /// Surface of A.
    pub surface_a: u32,
    /// Parameter rectangle on that surface.
    pub rect_a: ParamRect,
    /// Surface of B.
    pub surface_b: u32,
    /// Parameter rectangle on that surface.
    pub rect_b: ParamRect,
    /// Certified lower bound of the distance between the two pieces (`<= tolerance`).
    pub lower: f64,
    /// Distance between the two closest surface points found on the pieces (an upper bound of
    /// their distance, above the tolerance).
    pub upper: f64,
    /// Whether `upper <= tolerance`: always `false` for undecided pairs (witnessed pairs are
    /// [`FreeformContact`]s; [`FreeformContacts::pairs`] lists both with this flag).
    pub witnessed: bool,
}

/// A witnessed contact: two actual surface points, one on each sub-patch, within the tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FreeformContact {
    /// Surface of A.
    pub surface_a: u32,
    /// The sub-patch of A (parameter rectangle) the contact was found on.
    pub rect_a: ParamRect,
    /// `(u, v)` of `point_a` on surface `surface_a` (inside `rect_a`).
    pub uv_a: (f64, f64),
    /// The surface point of A (world).
    pub point_a: DVec3,
    /// Surface of B.
    pub surface_b: u32,
    /// The sub-patch of B.
    pub rect_b: ParamRect,
    /// `(u, v)` of `point_b` on surface `surface_b` (inside `rect_b`).
    pub uv_b: (f64, f64),
    /// The surface point of B (world).
    pub point_b: DVec3,
    /// `|point_a - point_b|`, at most the tolerance.
    pub distance: f64,
}

/// Result of [`freeform_collide`]: witnessed contacts and, apart, the candidates neither
/// witnessed nor separated within the refinement limits. Both sorted by (surfaces, rectangles).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FreeformContacts {
    /// Witnessed contacts, one per sub-patch pair.
    pub contacts: Vec<FreeformContact>,
    /// Sub-patch pairs that may come within the tolerance but have no witness.
    pub undecided: Vec<CollisionPair>,
}

impl FreeformContacts {
    /// Whether nothing may come within the tolerance (no contact, no undecided pair).
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty() && self.undecided.is_empty()
    }

    /// Every reported sub-patch pair as a [`CollisionPair`]: contacts (witnessed, `upper` their
    /// distance, `lower` 0) then undecided pairs (the candidate list of earlier versions).
    pub fn pairs(&self) -> Vec<CollisionPair> {
        self.contacts
            .iter()
            .map(|c| CollisionPair {
                surface_a: c.surface_a,
                rect_a: c.rect_a,
                surface_b: c.surface_b,
                rect_b: c.rect_b,
                lower: 0.0,
                upper: c.distance,
                witnessed: true,
            })
            .chain(self.undecided.iter().copied())
            .collect()
    }
}

/// Exact (below-the-BVH) splits one pair may take before it is left undecided.
pub const MAX_EXACT_SPLITS: u32 = 10;
/// Cell pairs one query may bound; the pairs left then are decided without further splits.
pub const MAX_PAIRS: usize = 4_000_000;
/// Levenberg–Marquardt iterations of one witness search.
const LM_ITERATIONS: usize = 40;

/// Linear part of a pose applied to a direction.
fn rotate(pose: &Pose64, d: DVec3) -> DVec3 {
    let r = &pose.rows;
    DVec3::new(
        r[0][0] * d.x + r[0][1] * d.y + r[0][2] * d.z,
        r[1][0] * d.x + r[1][1] * d.y + r[1][2] * d.z,
        r[2][0] * d.x + r[2][1] * d.y + r[2][2] * d.z,
    )
}

/// Solves the 4x4 system `m x = b` by Gaussian elimination with partial pivoting.
fn solve4(mut m: [[f64; 4]; 4], mut b: [f64; 4]) -> Option<[f64; 4]> {
    for c in 0..4 {
        let p = (c..4).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c] == 0.0 || m[p][c].is_nan() {
            return None;
        }
        m.swap(c, p);
        b.swap(c, p);
        let pivot = m[c];
        for r in c + 1..4 {
            let f = m[r][c] / pivot[c];
            for (x, y) in m[r][c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * y;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; 4];
    for c in (0..4).rev() {
        let s: f64 = (c + 1..4).map(|k| m[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / m[c][c];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The closest pair of surface points found by Levenberg–Marquardt on `|A(u,v) - B(s,t)|^2`
/// over the two rectangles (clamped), from the start parameters: `(distance, uv_a, uv_b)`.
/// Every returned value is the distance of two actual surface points.
fn refine_witness(
    a: &FreeformObject,
    (sa, ra, mut x): (u32, ParamRect, (f64, f64)),
    b: &FreeformObject,
    (sb, rb, mut y): (u32, ParamRect, (f64, f64)),
    target: f64,
) -> (f64, (f64, f64), (f64, f64)) {
    let (fa, fb) = (&a.surfaces[sa as usize], &b.surfaces[sb as usize]);
    let eval = |x: (f64, f64), y: (f64, f64)| {
        let (da, db) = (fa.derivatives(x.0, x.1), fb.derivatives(y.0, y.1));
        let r = a.world_point(sa, x.0, x.1) - b.world_point(sb, y.0, y.1);
        let j = [
            rotate(&a.pose, da.du),
            rotate(&a.pose, da.dv),
            -rotate(&b.pose, db.du),
            -rotate(&b.pose, db.dv),
        ];
        (r, j)
    };
    let clamp = |p: (f64, f64), r: &ParamRect| (p.0.clamp(r.u0, r.u1), p.1.clamp(r.v0, r.v1));
    let (mut r, mut j) = eval(x, y);
    let mut best = r.length();
    let mut lambda = 1e-3;
    for _ in 0..LM_ITERATIONS {
        if best <= target {
            break;
        }
        let mut h = [[0.0; 4]; 4];
        let mut g = [0.0; 4];
        for p in 0..4 {
            g[p] = -j[p].dot(r);
            for q in 0..4 {
                h[p][q] = j[p].dot(j[q]);
            }
        }
        let scale = (0..4).map(|p| h[p][p]).fold(0.0, f64::max).max(1e-300);
        for (p, row) in h.iter_mut().enumerate() {
            row[p] += lambda * (row[p] + 1e-12 * scale);
        }
        let Some(d) = solve4(h, g) else { break };
        let nx = clamp((x.0 + d[0], x.1 + d[1]), &ra);
        let ny = clamp((y.0 + d[2], y.1 + d[3]), &rb);
        let (nr, nj) = eval(nx, ny);
        let len = nr.length();
        if len < best {
            let moved =
                (nx.0 - x.0).abs() + (nx.1 - x.1).abs() + (ny.0 - y.0).abs() + (ny.1 - y.1).abs();
            (x, y, r, j, best) = (nx, ny, nr, nj, len);
            lambda = (lambda / 3.0).max(1e-12);
            if moved == 0.0 {
                break;
            }
        } else {
            lambda *= 4.0;
            if lambda > 1e12 {
                break;
            }
        }
    }
    (best, x, y)
}

/// A pair of cells in the search, with the exact splits it has taken.
struct Work {
    a: BoundedCell,
    b: BoundedCell,
    exact_splits: u32,
}

/// What one visited pair became.
enum Visit {
    Dropped,
    Contact(FreeformContact),
    Undecided(CollisionPair),
    Split(Vec<Work>),
}

fn has_tree_children(o: &FreeformObject, c: &BoundedCell) -> bool {
    match &c.cell {
        QueryCell::Tree(t) => o.bvh.children(o.surfaces, t).is_some(),
        QueryCell::Exact { .. } => false,
    }
}

/// Whether a cell is a BVH leaf or lies below one (not a surface-level internal node).
fn at_leaf(o: &FreeformObject, c: &BoundedCell) -> bool {
    match &c.cell {
        QueryCell::Tree(t) => match t.kind {
            CellKind::Surface { node } => !o.bvh.is_internal(node as usize),
            CellKind::Coons { .. } => true,
        },
        QueryCell::Exact { .. } => true,
    }
}

fn visit(
    a: &FreeformObject,
    b: &FreeformObject,
    w: Work,
    tol: f64,
    may_split: bool,
    first: bool,
) -> Visit {
    let (x, y) = (&w.a, &w.b);
    let pb = pair_bound(a, x, b, y);
    if pb.lower > tol {
        return Visit::Dropped;
    }
    let (sa, sb) = (x.cell.surface(), y.cell.surface());
    let (ra, rb) = (x.cell.rect(), y.cell.rect());
    let contact = |d: f64, uva: (f64, f64), uvb: (f64, f64)| {
        let (pa, pb) = (
            a.world_point(sa, uva.0, uva.1),
            b.world_point(sb, uvb.0, uvb.1),
        );
        Visit::Contact(FreeformContact {
            surface_a: sa,
            rect_a: ra,
            uv_a: uva,
            point_a: pa,
            surface_b: sb,
            rect_b: rb,
            uv_b: uvb,
            point_b: pb,
            distance: d,
        })
    };
    let (ta, tb) = (has_tree_children(a, x), has_tree_children(b, y));
    // Contacts are reported per pair of BVH leaves (Coons patches or exact leaves) or finer
    // cells; a witness at a coarser level only ends the search of `collide_any`.
    let leaves = at_leaf(a, x) && at_leaf(b, y);
    if pb.upper <= tol && (first || leaves) {
        return contact(pb.upper, pb.point_a.1, pb.point_b.1);
    }
    let mut upper = pb.upper;
    if leaves {
        // Leaf level or below: look for a witness on the two sub-patches.
        let (d, uva, uvb) =
            refine_witness(a, (sa, ra, pb.point_a.1), b, (sb, rb, pb.point_b.1), tol);
        if d <= tol {
            return contact(d, uva, uvb);
        }
        upper = upper.min(d);
    }
    let exact = !(ta || tb);
    let can = |c: &BoundedCell, tree: bool| tree || (exact && c.splittable);
    let (ca, cb) = (can(x, ta), can(y, tb));
    if !may_split || !(ca || cb) || (exact && w.exact_splits >= MAX_EXACT_SPLITS) {
        return Visit::Undecided(CollisionPair {
            surface_a: sa,
            rect_a: ra,
            surface_b: sb,
            rect_b: rb,
            lower: pb.lower,
            upper,
            witnessed: false,
        });
    }
    let split_a = match (ca, cb) {
        (true, false) => true,
        (false, true) => false,
        _ => x.size() >= y.size(),
    };
    let exact_splits = w.exact_splits + u32::from(exact);
    let kids = if split_a {
        a.children(&x.cell)
            .into_iter()
            .map(|k| Work {
                a: a.bound(k),
                b: y.clone(),
                exact_splits,
            })
            .collect()
    } else {
        b.children(&y.cell)
            .into_iter()
            .map(|k| Work {
                a: x.clone(),
                b: b.bound(k),
                exact_splits,
            })
            .collect()
    };
    Visit::Split(kids)
}

/// The traversal shared by [`freeform_collide`] and [`freeform_collide_any`] (which stops at
/// the first level that yields a contact).
fn traverse(a: &FreeformObject, b: &FreeformObject, tol: f64, first: bool) -> FreeformContacts {
    let ra: Vec<BoundedCell> = a.roots().into_iter().map(|c| a.bound(c)).collect();
    let rb: Vec<BoundedCell> = b.roots().into_iter().map(|c| b.bound(c)).collect();
    let mut frontier: Vec<Work> = ra
        .iter()
        .flat_map(|x| {
            rb.iter().map(move |y| Work {
                a: x.clone(),
                b: y.clone(),
                exact_splits: 0,
            })
        })
        .collect();
    let mut out = FreeformContacts::default();
    let mut visited = 0usize;
    while !frontier.is_empty() {
        visited += frontier.len();
        let may_split = visited < MAX_PAIRS;
        let visits: Vec<Visit> = frontier
            .into_par_iter()
            .map(|w| visit(a, b, w, tol, may_split, first))
            .collect();
        frontier = Vec::new();
        for v in visits {
            match v {
                Visit::Dropped => {}
                Visit::Contact(c) => out.contacts.push(c),
                Visit::Undecided(p) => out.undecided.push(p),
                Visit::Split(kids) => frontier.extend(kids),
            }
        }
        if first && !out.contacts.is_empty() {
            break;
        }
    }
    let key = |sa: u32, sb: u32, ra: &ParamRect, rb: &ParamRect| {
        (
            sa,
            sb,
            [ra.u0, ra.v0, rb.u0, rb.v0, ra.u1, ra.v1, rb.u1, rb.v1],
        )
    };
    let cmp = |p: (u32, u32, [f64; 8]), q: (u32, u32, [f64; 8])| {
        (p.0, p.1).cmp(&(q.0, q.1)).then_with(|| {
            p.2.iter()
                .zip(&q.2)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    };
    out.contacts.sort_by(|p, q| {
        cmp(
            key(p.surface_a, p.surface_b, &p.rect_a, &p.rect_b),
            key(q.surface_a, q.surface_b, &q.rect_a, &q.rect_b),
        )
    });
    out.undecided.sort_by(|p, q| {
        cmp(
            key(p.surface_a, p.surface_b, &p.rect_a, &p.rect_b),
            key(q.surface_a, q.surface_b, &q.rect_a, &q.rect_b),
        )
    });
    out
}

/// Contacts of `a` and `b` within `tolerance`: every pair of sub-patches that may come within
/// it is refined down to leaves of both BVHs, then until it is witnessed (a [`FreeformContact`]: two surface points, their
/// `(u, v)`, at most `tolerance` apart), certified separated (dropped), or, after
/// [`MAX_EXACT_SPLITS`] exact splits below the BVH or [`MAX_PAIRS`] bounded pairs, reported as
/// undecided. None missed: any two surface points within `tolerance` lie in the patches of a
/// contact or an undecided pair.
///
/// ```
/// use gprox_bvh::coons::{CoonsBvh, CoonsOptions};
/// use gprox_geometry::transform::Pose64;
/// use gprox_query::freeform::{freeform_collide, FreeformObject};
/// let teapot = gprox_geometry::freeform::teapot();
/// let bvh = CoonsBvh::build(&teapot, &CoonsOptions { epsilon: 1e-3, ..Default::default() }).unwrap();
/// let a = FreeformObject { surfaces: &teapot, bvh: &bvh, pose: Pose64::IDENTITY };
/// let mut pose = Pose64::IDENTITY;
/// pose.rows[0][3] = 5.0; // the spout into the other pot's handle
/// let b = FreeformObject { pose, ..a };
/// let hits = freeform_collide(&a, &b, 1e-3);
/// assert!(!hits.contacts.is_empty());
/// assert!(hits.contacts.iter().all(|c| c.point_a.distance(c.point_b) <= 1e-3));
/// ```
pub fn freeform_collide(
    a: &FreeformObject,
    b: &FreeformObject,
    tolerance: f64,
) -> FreeformContacts {
    traverse(a, b, tolerance, false)
}

/// Whether `a` and `b` may come within `tolerance`: true at the first witnessed contact, or
/// when undecided pairs remain (conservative); false only when every pair is certified apart.
pub fn freeform_collide_any(a: &FreeformObject, b: &FreeformObject, tolerance: f64) -> bool {
    !traverse(a, b, tolerance, true).is_empty()
}
