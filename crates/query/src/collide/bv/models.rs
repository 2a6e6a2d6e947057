//! Queries over two models that each bring the tree of their choice ([`CollisionModel`]): two
//! AABB trees go to the LBVH traversal ([`crate::collide::try_collide_all`], with the witness's
//! neighbourhood for early-out queries), any OBB tree to the volume traversal of `bv.rs` (an
//! AABB tree then read as axis-aligned OBBs).

use std::sync::atomic::{AtomicBool, Ordering};

use gprox_bvh::bv_tree::BvTree;
use gprox_bvh::obb::Obb;
use gprox_bvh::wide_obb::WideObbTree;
use gprox_bvh::Bvh;
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;

use super::run_query;
use super::wide::run_wide;
use crate::collide::{CollideError, CollideOptions, CollisionObject, Witness};

/// The bounding-volume tree of one model: an AABB tree ([`gprox_bvh::lbvh::build`]) or an
/// OBB tree ([`BvTree::build`]).
#[derive(Clone, Copy, Debug)]
pub enum CollisionModel<'a> {
    /// Axis-aligned boxes (fast to build and refit, loose on rotated or thin parts).
    Aabb(&'a Bvh),
    /// Oriented boxes (tight, slower to build).
    Obb(&'a BvTree<Obb>),
    /// Oriented boxes eight to a node, tested in SIMD lanes ([`WideObbTree`]): the fastest for
    /// rigid models far from contact; paired with another kind it acts as its binary tree.
    WideObb(&'a WideObbTree),
}

impl<'a> CollisionModel<'a> {
    /// The model with a wide tree read as its binary tree.
    fn binary(self) -> Self {
        match self {
            Self::WideObb(t) => Self::Obb(t.tree()),
            other => other,
        }
    }
}

/// A mesh, the tree chosen for it and a rigid pose, for [`collide_all_models`].
#[derive(Clone, Copy, Debug)]
pub struct ModelObject<'a> {
    /// The triangles.
    pub mesh: &'a TriMesh,
    /// Its tree, of either kind.
    pub model: CollisionModel<'a>,
    /// Local-to-world pose.
    pub pose: Pose64,
}

/// A query over two models: every touching pair (`any == None`), or the first one found with
/// `hint` tried first (its leaves guide the LBVH path only; see `collide/near.rs`).
fn run_models(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
    any: Option<&AtomicBool>,
    hint: Option<Witness>,
) -> Result<(Vec<[u32; 2]>, Option<Witness>), CollideError> {
    use CollisionModel::{Aabb, Obb as O, WideObb as W};
    let (ma, pa, mb, pb) = (a.mesh, &a.pose, b.mesh, &b.pose);
    let faces = hint.map(|w| w.faces);
    let pairs = match (a.model, b.model) {
        (W(x), W(y)) => run_wide((ma, x, pa), (mb, y, pb), opts, any, faces),
        (W(_), _) | (_, W(_)) => {
            let (a, b) = (
                ModelObject {
                    model: a.model.binary(),
                    ..*a
                },
                ModelObject {
                    model: b.model.binary(),
                    ..*b
                },
            );
            return run_models(&a, &b, opts, any, hint);
        }
        (Aabb(x), Aabb(y)) => {
            let oa = CollisionObject {
                mesh: ma,
                bvh: x,
                pose: *pa,
            };
            let ob = CollisionObject {
                mesh: mb,
                bvh: y,
                pose: *pb,
            };
            return match any {
                None => Ok((crate::collide::try_collide_all(&oa, &ob, opts)?, None)),
                Some(flag) => {
                    let w = crate::collide::try_collide_any_near(&oa, &ob, opts, hint)?;
                    flag.store(w.is_some(), Ordering::Relaxed);
                    Ok((w.iter().map(|w| w.faces).collect(), w))
                }
            };
        }
        (Aabb(x), O(y)) => run_query((ma, x, pa), (mb, y, pb), opts, any, faces),
        (O(x), Aabb(y)) => run_query((ma, x, pa), (mb, y, pb), opts, any, faces),
        (O(x), O(y)) => run_query((ma, x, pa), (mb, y, pb), opts, any, faces),
    }?;
    let first = pairs.first().map(|&f| Witness::of_faces(f));
    Ok((pairs, first))
}

/// Every intersecting pair of two models, each with the tree of its choice; see
/// [`collide_all_models`]. Errors on inconsistent input.
pub fn try_collide_all_models(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, CollideError> {
    Ok(run_models(a, b, opts, None, None)?.0)
}

/// Whether any triangle pair of two models intersects; stops at the first one.
pub fn try_collide_any_models(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
) -> Result<bool, CollideError> {
    Ok(try_collide_any_models_witness(a, b, opts, None)?.is_some())
}

/// A touching pair of two models if there is one, trying `hint` first (the previous frame's
/// pair): [`crate::collide::try_collide_any_witness`] for models with trees of their choice.
pub fn try_collide_any_models_witness(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
    hint: Option<[u32; 2]>,
) -> Result<Option<[u32; 2]>, CollideError> {
    let near = try_collide_any_models_near(a, b, opts, hint.map(Witness::of_faces))?;
    Ok(near.map(|w| w.faces))
}

/// [`crate::collide::try_collide_any_near`] for models with trees of their choice: the witness's
/// neighbourhood is searched first when both models use their AABB trees (leaves of OBB trees
/// are not reported: there only the pair itself is tried first).
pub fn try_collide_any_models_near(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
    hint: Option<Witness>,
) -> Result<Option<Witness>, CollideError> {
    let flag = AtomicBool::new(false);
    Ok(run_models(a, b, opts, Some(&flag), hint)?.1)
}

/// Every pair `[face of a, face of b]` whose closed world triangles intersect (or lie within
/// `opts.margin`), sorted, without duplicates, where each model brings an AABB or an OBB tree.
/// The pair set does not depend on the choice.
///
/// # Panics
/// On the errors of [`try_collide_all_models`].
///
/// ```
/// use gprox_bvh::{bv_tree::BvTree, lbvh, obb::Obb};
/// use gprox_geometry::{glam::Vec3, transform::Pose64, TriMesh};
/// use gprox_query::collide::{
///     collide_all_models, CollideOptions, CollisionModel, ModelObject,
/// };
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
/// let (aabbs, obbs) = (lbvh::build(&tri), BvTree::<Obb>::build(&tri));
/// let a = ModelObject { mesh: &tri, model: CollisionModel::Aabb(&aabbs), pose: Pose64::IDENTITY };
/// let b = ModelObject { mesh: &tri, model: CollisionModel::Obb(&obbs), pose: Pose64::IDENTITY };
/// assert_eq!(collide_all_models(&a, &b, &CollideOptions::default()), vec![[0, 0]]);
/// ```
pub fn collide_all_models(
    a: &ModelObject<'_>,
    b: &ModelObject<'_>,
    opts: &CollideOptions,
) -> Vec<[u32; 2]> {
    match try_collide_all_models(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_all_models: {e}"),
    }
}

/// Whether any triangle pair of two models intersects; `== !collide_all_models(..).is_empty()`.
///
/// # Panics
/// On the errors of [`try_collide_any_models`].
pub fn collide_any_models(a: &ModelObject<'_>, b: &ModelObject<'_>, opts: &CollideOptions) -> bool {
    match try_collide_any_models(a, b, opts) {
        Ok(v) => v,
        Err(e) => panic!("collide_any_models: {e}"),
    }
}
