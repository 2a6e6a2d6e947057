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
mod volume;

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
    ma: &'q TriMesh,
    mb: &'q TriMesh,
    ta: &'q TA,
    tb: &'q TB,
    pa: Pose64,
    pb: Pose64,
    map: Mapping,
    margin: f64,
    tri_pad: f64,
    _v: std::marker::PhantomData<fn() -> V>,
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

    /// Expands `front` breadth-first until it holds `want` pairs or only leaf pairs.
    fn widen(&self, front: &mut Vec<[u32; 2]>, want: usize) -> Result<(), CollideError> {
        let mut next = Vec::with_capacity(front.len() * 4);
        while front.len() < want {
            next.clear();
            let mut grew = false;
            for &p in front.iter() {
                if self.expand(p, &mut next)? {
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
    fn run(&self, start: &[[u32; 2]], sink: &mut Sink<'_>) {
        let mut stack: Vec<[u32; 2]> = start.iter().rev().copied().collect();
        let mut budget = (self.ta.node_count() as u64) * (self.tb.node_count() as u64) + 1;
        let mut polls = 0u32;
        while let Some(p) = stack.pop() {
            if budget == 0 {
                sink.error = Some(CollideError::CyclicTree);
                return;
            }
            budget -= 1;
            if let Some(flag) = sink.any {
                polls = polls.wrapping_add(1);
                if polls % 64 == 0 && flag.load(Ordering::Relaxed) {
                    return;
                }
            }
            let res = self.expand(p, &mut stack).and_then(|inner| {
                if inner {
                    Ok(None)
                } else {
                    self.leaf_pair(p)
                }
            });
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

    /// The exact leaf test on world triangles.
    fn leaf_pair(&self, p: [u32; 2]) -> Result<Option<[u32; 2]>, CollideError> {
        let fa = self.ta.links(p[0] as usize).0;
        let fb = self.tb.links(p[1] as usize).0;
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
        let hit = triangles_touch(&x, &y, self.margin, self.tri_pad);
        Ok(hit.then_some([fa, fb]))
    }
}

/// Runs one query over any pair of node sources with a common volume type.
#[allow(clippy::too_many_arguments)]
fn run_query<V, TA, TB>(
    ma: &TriMesh,
    ta: &TA,
    pa: &Pose64,
    mb: &TriMesh,
    tb: &TB,
    pb: &Pose64,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<[u32; 2]>,
) -> Result<Vec<[u32; 2]>, CollideError>
where
    V: CollisionVolume,
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
            return Ok(vec![w]);
        }
    }
    let t = Traversal {
        ma,
        mb,
        ta,
        tb,
        pa: *pa,
        pb: *pb,
        map: Mapping::new(pa, mag_a, pb, mag_b, opts.margin),
        margin: opts.margin,
        tri_pad: triangle_pad(opts.margin, mag),
        _v: std::marker::PhantomData,
    };
    if !t.roots_overlap() {
        return Ok(Vec::new());
    }
    let threads = if ma.face_count() + mb.face_count() < PAR_MIN_FACES {
        1
    } else {
        rayon::current_num_threads()
    };
    let mut front = vec![[0u32, 0u32]];
    if threads > 1 {
        t.widen(&mut front, FRONT_PER_THREAD * threads)?;
    }
    let task = |start: &[[u32; 2]]| {
        let mut sink = Sink {
            pairs: Vec::new(),
            any,
            error: None,
        };
        t.run(start, &mut sink);
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

/// Every pair `[face of a, face of b]` whose closed world triangles intersect (or lie within
/// `opts.margin`), sorted, without duplicates — the same set as [`super::try_collide_all`] —
/// using the volume trees; errors on inconsistent input.
pub fn try_collide_all_bv<B: CollisionVolume>(
    a: &BvCollisionObject<'_, B>,
    b: &BvCollisionObject<'_, B>,
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, CollideError> {
    run_query(
        a.mesh, a.tree, &a.pose, b.mesh, b.tree, &b.pose, opts, None, None,
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
        a.mesh,
        a.tree,
        &a.pose,
        b.mesh,
        b.tree,
        &b.pose,
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
