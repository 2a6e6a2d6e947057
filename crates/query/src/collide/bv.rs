//! Mesh–mesh collision over trees of tight bounding volumes (gProximity §4.3): the same pair
//! sets as the AABB path ([`super::collide_all`]), with a choice of volume per model.
//!
//! A simultaneous traversal of the two trees descends the larger node of every overlapping
//! pair. The node test is the volume's own overlap test (OBB: the 15-axis separating-axis test)
//! with B's volumes mapped into A's model frame by the relative pose `R_Aᵀ R_B`, grown by a
//! rigorous bound on every rounding involved — the world corners of both meshes, the gap between
//! `R_Aᵀ` and `R_A⁻¹`, the mapping itself and the margin — so no intersecting pair is ever
//! pruned. Poses that are not rotations (scaled, sheared) compare both trees in world space,
//! each volume grown by its pose's distance to the nearest rotation; a singular pose prunes
//! nothing. Leaf pairs get the exact test [`gprox_geometry::tri_tri::triangles_intersect`] on the
//! f64 world corners from [`gprox_geometry::transform::transform_triangle`] (or, with a margin,
//! [`gprox_geometry::tri_distance::triangle_distance`] `≤ margin`), so results equal the AABB
//! path's exactly. Large queries split the traversal front into rayon tasks; output is sorted.
//!
//! Two entry points: [`collide_all_bv`] / [`collide_any_bv`] for two trees of one volume type
//! `B` (OBB, RSS, sphere), and [`collide_all_models`] / [`collide_any_models`] where each model
//! picks AABB or OBB ([`CollisionModel`]); an AABB model paired with an OBB model has its boxes
//! read as axis-aligned OBBs, two AABB models use [`super::collide_all`].

use std::sync::atomic::{AtomicBool, Ordering};

use gprox_bvh::bv_tree::BvTree;
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::TriMesh;
use rayon::prelude::*;

mod models;
mod obb32;
mod obb8;
mod volume;
mod wide;

pub use models::{
    collide_all_models, collide_any_models, try_collide_all_models, try_collide_any_models,
    try_collide_any_models_near, try_collide_any_models_witness, CollisionModel, ModelObject,
};
pub use volume::{CollisionVolume, LocalMap};
use volume::{Mapping, NodeSource};

use super::{hint_holds, triangle_pad, triangles_touch, CollideError, CollideOptions, Side};

/// Relative bound used for every rounding term (the operations round a few times at `2^-53`).
pub(crate) const K: f64 = 1e-14;
/// Front size per rayon thread before the traversal is split into tasks.
const FRONT_PER_THREAD: usize = 32;
/// Below this many faces (both meshes together) a query runs on one thread.
const PAR_MIN_FACES: usize = 32_768;

/// A mesh with a tree of volumes `B` over its faces ([`BvTree::build`], or refitted to the
/// mesh's current positions) and a rigid pose.
#[derive(Clone, Copy, Debug)]
pub struct BvCollisionObject<'a, B> {
    /// The triangles.
    pub mesh: &'a TriMesh,
    /// Its tree (model coordinates).
    pub tree: &'a BvTree<B>,
    /// Local-to-world pose.
    pub pose: Pose64,
}

impl<'a, B: CollisionVolume> BvCollisionObject<'a, B> {
    /// Bundles a mesh, its tree and a pose, checking that the tree has one leaf per face, a
    /// finite root volume, and that the pose is finite.
    pub fn new(mesh: &'a TriMesh, tree: &'a BvTree<B>, pose: Pose64) -> Result<Self, CollideError> {
        check(mesh, tree, &pose, Side::A)?;
        Ok(Self { mesh, tree, pose })
    }
}

fn check<V, T: NodeSource<V>>(
    mesh: &TriMesh,
    tree: &T,
    pose: &Pose64,
    side: Side,
) -> Result<(), CollideError> {
    let faces = mesh.face_count();
    if tree.node_count() + 1 != 2 * faces {
        return Err(CollideError::BvhMismatch {
            side,
            nodes: tree.node_count(),
            faces,
        });
    }
    if pose.rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(CollideError::NonFinitePose { side });
    }
    if !tree.reach().is_finite() {
        return Err(CollideError::NonFiniteBounds { side });
    }
    Ok(())
}

/// What a traversal task reports into.
struct Sink<'s> {
    pairs: Vec<[u32; 2]>,
    any: Option<&'s AtomicBool>,
    error: Option<CollideError>,
}

/// One query over two posed trees.
struct Traversal<'q, V, TA, TB> {
    faces: Faces<'q>,
    ta: &'q TA,
    tb: &'q TB,
    map: Mapping,
    _v: std::marker::PhantomData<fn() -> V>,
}

/// The leaf side of a query: both meshes posed, and the exact test of two of their faces.
struct Faces<'q> {
    ma: &'q TriMesh,
    mb: &'q TriMesh,
    pa: Pose64,
    pb: Pose64,
    margin: f64,
    tri_pad: f64,
}

impl<'q> Faces<'q> {
    fn new(
        (ma, pa): (&'q TriMesh, &Pose64),
        (mb, pb): (&'q TriMesh, &Pose64),
        opts: &CollideOptions,
        s: &Setup,
    ) -> Self {
        Self {
            ma,
            mb,
            pa: *pa,
            pb: *pb,
            margin: opts.margin,
            tri_pad: s.tri_pad,
        }
    }

    /// The exact test of face `fa` of A against face `fb` of B on their world triangles: the
    /// pair if they touch (or lie within the margin), an error for a face out of range.
    fn touch(&self, fa: u32, fb: u32) -> Result<Option<[u32; 2]>, CollideError> {
        if fa as usize >= self.ma.face_count() {
            return Err(CollideError::FaceOutOfRange {
                side: Side::A,
                face: fa,
            });
        }
        if fb as usize >= self.mb.face_count() {
            return Err(CollideError::FaceOutOfRange {
                side: Side::B,
                face: fb,
            });
        }
        let x = transform_triangle(&self.pa, self.ma.triangle(fa as usize));
        let y = transform_triangle(&self.pb, self.mb.triangle(fb as usize));
        Ok(triangles_touch(&x, &y, self.margin, self.tri_pad).then_some([fa, fb]))
    }
}

impl<V, TA, TB> Traversal<'_, V, TA, TB>
where
    V: CollisionVolume,
    TA: NodeSource<V>,
    TB: NodeSource<V>,
{
    /// Links of node `i` of one side, checked.
    #[inline]
    fn links(&self, side: Side, i: u32) -> Result<(u32, u32), CollideError> {
        let ok = match side {
            Side::A => (i as usize) < self.ta.node_count(),
            Side::B => (i as usize) < self.tb.node_count(),
        };
        if !ok {
            return Err(CollideError::InvalidTree { side, node: i });
        }
        Ok(match side {
            Side::A => self.ta.links(i as usize),
            Side::B => self.tb.links(i as usize),
        })
    }

    /// Whether the volumes of node `a` of A and node `b` of B overlap (conservatively).
    #[inline]
    fn test(&self, a: u32, b: u32) -> bool {
        let (va, vb) = (self.ta.volume(a as usize), self.tb.volume(b as usize));
        match &self.map {
            Mapping::Local(m) => va.overlaps_local(&vb, m),
            Mapping::World {
                qa,
                ta,
                grow_a,
                qb,
                tb,
                grow_b,
            } => va
                .transform_rigid(qa, *ta, *grow_a)
                .overlaps_mapped(&vb, qb, *tb, *grow_b),
            Mapping::All => true,
        }
    }

    fn roots_overlap(&self) -> bool {
        self.test(0, 0)
    }

    /// Pushes the overlapping children pairs of `p` (descending the larger node); returns false
    /// for a leaf pair (pushed nothing).
    fn expand(&self, p: [u32; 2], out: &mut Vec<[u32; 2]>) -> Result<bool, CollideError> {
        let (al, ar) = self.links(Side::A, p[0])?;
        let (bl, br) = self.links(Side::B, p[1])?;
        let (leaf_a, leaf_b) = (ar == gprox_bvh::LEAF, br == gprox_bvh::LEAF);
        if leaf_a && leaf_b {
            return Ok(false);
        }
        let split_a = match (leaf_a, leaf_b) {
            (true, _) => false,
            (false, true) => true,
            (false, false) => {
                self.ta.volume(p[0] as usize).size() >= self.tb.volume(p[1] as usize).size()
            }
        };
        let (side, kids) = if split_a {
            (Side::A, [ar, al])
        } else {
            (Side::B, [br, bl])
        };
        for c in kids {
            self.links(side, c)?;
        }
        let pairs = kids.map(|c| if split_a { [c, p[1]] } else { [p[0], c] });
        // In the local frame the fixed node is prepared once for both children.
        let (va, vb) = (
            |i: u32| self.ta.volume(i as usize),
            |i| self.tb.volume(i as usize),
        );
        let hits = match &self.map {
            Mapping::Local(m) if split_a => {
                let b = vb(p[1]).mapped_b(m);
                pairs.map(|q| V::overlaps_prepared(&va(q[0]).local_a(m), &b, m))
            }
            Mapping::Local(m) => {
                let a = va(p[0]).local_a(m);
                pairs.map(|q| V::overlaps_prepared(&a, &vb(q[1]).mapped_b(m), m))
            }
            _ => pairs.map(|q| self.test(q[0], q[1])),
        };
        out.extend((0..2).filter(|&k| hits[k]).map(|k| pairs[k]));
        Ok(true)
    }

    /// The exact leaf test on world triangles.
    fn leaf_pair(&self, p: [u32; 2]) -> Result<Option<[u32; 2]>, CollideError> {
        let fa = self.ta.links(p[0] as usize).0;
        let fb = self.tb.links(p[1] as usize).0;
        self.faces.touch(fa, fb)
    }
}

/// A simultaneous traversal of two trees, for [`drive`]: pairs of nodes, expanded into the
/// pairs of their children whose volumes overlap, down to leaf pairs tested exactly.
pub(super) trait Walk: Sync {
    /// A pair of nodes.
    type Pair: Copy + Send + Sync;
    /// Pushes the overlapping children pairs of `p`; false for a leaf pair (pushed nothing).
    fn expand(&self, p: Self::Pair, out: &mut Vec<Self::Pair>) -> Result<bool, CollideError>;
    /// The exact test of a leaf pair: its faces if they touch.
    fn leaf(&self, p: Self::Pair) -> Result<Option<[u32; 2]>, CollideError>;
    /// More expansions than this means a cycle in a tree.
    fn budget(&self) -> u64;
}

impl<V, TA, TB> Walk for Traversal<'_, V, TA, TB>
where
    V: CollisionVolume,
    TA: NodeSource<V>,
    TB: NodeSource<V>,
{
    type Pair = [u32; 2];
    fn expand(&self, p: [u32; 2], out: &mut Vec<[u32; 2]>) -> Result<bool, CollideError> {
        Traversal::expand(self, p, out)
    }
    fn leaf(&self, p: [u32; 2]) -> Result<Option<[u32; 2]>, CollideError> {
        self.leaf_pair(p)
    }
    fn budget(&self) -> u64 {
        (self.ta.node_count() as u64) * (self.tb.node_count() as u64) + 1
    }
}

/// Expands `front` breadth-first until it holds `want` pairs or only leaf pairs.
fn widen<W: Walk>(w: &W, front: &mut Vec<W::Pair>, want: usize) -> Result<(), CollideError> {
    let mut next = Vec::with_capacity(front.len() * 4);
    while front.len() < want {
        next.clear();
        let mut grew = false;
        for &p in front.iter() {
            if w.expand(p, &mut next)? {
                grew = true;
            } else {
                next.push(p);
            }
        }
        std::mem::swap(front, &mut next);
        if !grew {
            break;
        }
    }
    Ok(())
}

/// Depth-first traversal below `start`.
fn run<W: Walk>(w: &W, start: &[W::Pair], sink: &mut Sink<'_>) {
    let mut stack: Vec<W::Pair> = start.iter().rev().copied().collect();
    let mut budget = w.budget();
    let mut polls = 0u32;
    while let Some(p) = stack.pop() {
        if budget == 0 {
            sink.error = Some(CollideError::CyclicTree);
            return;
        }
        budget -= 1;
        if let Some(flag) = sink.any {
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(64) && flag.load(Ordering::Relaxed) {
                return;
            }
        }
        let res = w
            .expand(p, &mut stack)
            .and_then(|inner| if inner { Ok(None) } else { w.leaf(p) });
        match res {
            Ok(None) => {}
            Ok(Some(faces)) => {
                sink.pairs.push(faces);
                if let Some(flag) = sink.any {
                    flag.store(true, Ordering::Relaxed);
                    return;
                }
            }
            Err(e) => {
                sink.error = Some(e);
                return;
            }
        }
    }
}

/// Every touching pair below `root` (or the first, with `any`), sorted, without duplicates:
/// on `threads` rayon tasks after widening the front when there are several.
fn drive<W: Walk>(
    w: &W,
    root: W::Pair,
    threads: usize,
    any: Option<&AtomicBool>,
) -> Result<Vec<[u32; 2]>, CollideError> {
    let mut front = vec![root];
    if threads > 1 {
        widen(w, &mut front, FRONT_PER_THREAD * threads)?;
    }
    let task = |start: &[W::Pair]| {
        let mut sink = Sink {
            pairs: Vec::new(),
            any,
            error: None,
        };
        run(w, start, &mut sink);
        match sink.error {
            Some(e) => Err(e),
            None => Ok(sink.pairs),
        }
    };
    let mut out = if threads > 1 && front.len() > 1 {
        let chunk = front.len().div_ceil(threads * 4).max(1);
        let parts: Vec<Result<Vec<[u32; 2]>, CollideError>> =
            front.par_chunks(chunk).map(task).collect();
        let mut out = Vec::new();
        for p in parts {
            out.extend(p?);
        }
        out
    } else {
        task(&front)?
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What every query over two trees settles before traversing: the comparison frame.
struct Setup {
    map: Mapping,
    tri_pad: f64,
    threads: usize,
}

/// Checks the input and the hint: `Err` carries the answer when the hint's pair touches (an
/// early-out query then stops there).
fn setup<V, TA, TB>(
    (ma, ta, pa): Posed<'_, TA>,
    (mb, tb, pb): Posed<'_, TB>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<[u32; 2]>,
) -> Result<Result<Setup, [u32; 2]>, CollideError>
where
    TA: NodeSource<V>,
    TB: NodeSource<V>,
{
    if !(opts.margin.is_finite() && opts.margin >= 0.0) {
        return Err(CollideError::BadMargin {
            margin: opts.margin,
        });
    }
    check(ma, ta, pa, Side::A)?;
    check(mb, tb, pb, Side::B)?;
    let (mag_a, mag_b) = (ta.reach(), tb.reach());
    let world = |p: &Pose64, mag: f64| {
        p.rows
            .iter()
            .map(|r| (r[0].abs() + r[1].abs() + r[2].abs()) * mag + r[3].abs())
            .fold(0.0, f64::max)
    };
    let mag = world(pa, mag_a).max(world(pb, mag_b));
    if let Some(flag) = any {
        if let Some(w) = hint_holds((ma, pa), (mb, pb), hint, opts.margin, mag) {
            flag.store(true, Ordering::Relaxed);
            return Ok(Err(w));
        }
    }
    let threads = if ma.face_count() + mb.face_count() < PAR_MIN_FACES {
        1
    } else {
        rayon::current_num_threads()
    };
    Ok(Ok(Setup {
        map: Mapping::new(pa, mag_a, pb, mag_b, opts.margin),
        tri_pad: triangle_pad(opts.margin, mag),
        threads,
    }))
}

/// One side of a query: a mesh, its tree and its pose.
type Posed<'a, T> = (&'a TriMesh, &'a T, &'a Pose64);

/// Runs one query over any pair of node sources with a common volume type.
fn run_query<V, TA, TB>(
    a: Posed<'_, TA>,
    b: Posed<'_, TB>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<[u32; 2]>,
) -> Result<Vec<[u32; 2]>, CollideError>
where
    V: CollisionVolume,
    TA: NodeSource<V>,
    TB: NodeSource<V>,
{
    match setup(a, b, opts, any, hint)? {
        Ok(s) => binary(a, b, opts, any, s),
        Err(w) => Ok(vec![w]),
    }
}

/// The traversal of two binary trees after [`setup`].
fn binary<V, TA, TB>(
    (ma, ta, pa): Posed<'_, TA>,
    (mb, tb, pb): Posed<'_, TB>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    s: Setup,
) -> Result<Vec<[u32; 2]>, CollideError>
where
    V: CollisionVolume,
    TA: NodeSource<V>,
    TB: NodeSource<V>,
{
    let t = Traversal {
        faces: Faces::new((ma, pa), (mb, pb), opts, &s),
        ta,
        tb,
        map: s.map,
        _v: std::marker::PhantomData,
    };
    if !t.roots_overlap() {
        return Ok(Vec::new());
    }
    drive(&t, [0, 0], s.threads, any)
}

/// Every pair `[face of a, face of b]` whose closed world triangles intersect (or lie within
/// `opts.margin`), sorted, without duplicates — the same set as [`super::try_collide_all`] —
/// using the volume trees; errors on inconsistent input.
pub fn try_collide_all_bv<B: CollisionVolume>(
    a: &BvCollisionObject<'_, B>,
    b: &BvCollisionObject<'_, B>,
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, CollideError> {
    run_query(
        (a.mesh, a.tree, &a.pose),
        (b.mesh, b.tree, &b.pose),
        opts,
        None,
        None,
    )
}

/// Whether any triangle pair intersects (or lies within the margin); stops at the first one.
pub fn try_collide_any_bv<B: CollisionVolume>(
    a: &BvCollisionObject<'_, B>,
    b: &BvCollisionObject<'_, B>,
    opts: &CollideOptions,
) -> Result<bool, CollideError> {
    let flag = AtomicBool::new(false);
    run_query(
        (a.mesh, a.tree, &a.pose),
        (b.mesh, b.tree, &b.pose),
        opts,
        Some(&flag),
        None,
    )?;
    Ok(flag.into_inner())
}

/// Every intersecting pair `[face of a, face of b]` of two meshes with trees of volumes `B`
/// (OBB, RSS, sphere), sorted, without duplicates.
///
/// # Panics
/// On the errors of [`try_collide_all_bv`] (a tree not built for its mesh, a non-finite pose,
/// a negative margin); objects made by [`BvCollisionObject::new`] with a valid margin never do.
///
/// ```
/// use gprox_bvh::{bv_tree::BvTree, obb::Obb};
/// use gprox_geometry::{glam::{Affine3A, Vec3}, transform::Pose64, TriMesh};
/// use gprox_query::collide::{collide_all_bv, collide_any_bv, BvCollisionObject, CollideOptions};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let tree = BvTree::<Obb>::build(&tri);
/// let a = BvCollisionObject::new(&tri, &tree, Pose64::IDENTITY).unwrap();
/// // The same triangle turned a quarter about x, through A's corner: they touch.
/// let pose = Pose64::from_affine(&Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2));
/// let b = BvCollisionObject::new(&tri, &tree, pose).unwrap();
/// assert_eq!(collide_all_bv(&a, &b, &CollideOptions::default()), vec![[0, 0]]);
/// assert!(collide_any_bv(&a, &b, &CollideOptions::default()));
/// ```
pub fn collide_all_bv<B: CollisionVolume>(
    a: &BvCollisionObject<'_, B>,
    b: &BvCollisionObject<'_, B>,
    opts: &CollideOptions,
) -> Vec<[u32; 2]> {
    match try_collide_all_bv(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_all_bv: {e}"),
    }
}

/// Whether any triangle pair intersects; `== !collide_all_bv(..).is_empty()`.
///
/// # Panics
/// On the errors of [`try_collide_any_bv`], as [`collide_all_bv`].
pub fn collide_any_bv<B: CollisionVolume>(
    a: &BvCollisionObject<'_, B>,
    b: &BvCollisionObject<'_, B>,
    opts: &CollideOptions,
) -> bool {
    match try_collide_any_bv(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_any_bv: {e}"),
    }
}
