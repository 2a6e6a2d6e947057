//! Collision of two posed mesh models: every intersecting triangle pair, or whether there is
//! one; and many such pairs at once.

use std::cell::Cell;

use glam::Affine3A;
use gprox_cuda::{Device, ResidentObject};
use gprox_geometry::transform::Pose64;
use gprox_query::broad_phase::{try_collide_many_shaped, ShapedObject};
use gprox_query::collide::{
    self as cpu, CollideError, CollideOptions, ModelObject, TrackedCollision, Witness,
};
use rayon::prelude::*;

use super::{aabb_object, gpu_options, meshes, object, on_device};
use crate::witness::Kind;
use crate::{Context, Error, Model};

/// Faces of both meshes per pair found above which a `collide_all` stays a pair query (see
/// `Context::world_pays`). On the two-tori scene (2 × 5,120 faces) the two ways break even
/// at 82–98 pairs, 104–125 faces a pair, since the placement refits only the parts of each
/// body near the other (docs/benchmarks.md, session 23; 130–160 pairs before).
const FACES_PER_WORLD_PAIR: usize = 100;

/// `collide_all` of two mesh models in world space: both placed and traversed as one pair of
/// a many-body query (the same pairs as the pair query).
fn world_pair(
    pair: [(&Model, &Affine3A); 2],
    opts: &CollideOptions,
) -> Result<Vec<[u32; 2]>, Error> {
    let [a, b] = pair.map(|(m, pose)| {
        m.tree_shape().map(|shape| ShapedObject {
            object: aabb_object(m, pose),
            shape,
        })
    });
    let many = try_collide_many_shaped(&[a?, b?], opts)?;
    Ok(many
        .object_pairs
        .into_iter()
        .next()
        .map(|c| c.pairs)
        .unwrap_or_default())
}

/// The traversal front of one pair of models, kept from frame to frame by
/// [`Context::collide_all_tracked`] (gProximity's front tracking): each frame's traversal
/// restarts from where the last one ended instead of from the roots.
#[derive(Clone, Debug, Default)]
pub struct PairFront(TrackedCollision);

impl PairFront {
    /// No front yet: the first query traverses from the roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Node pairs in the front (0 before the first query).
    pub fn len(&self) -> usize {
        self.0.front_len()
    }

    /// Whether there is no front yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Context {
    /// [`Context::collide_all`] for a pair of models queried frame after frame: the same pairs,
    /// with the traversal restarting from the front of the previous frame kept in `front` (one
    /// per model pair). Worth it when the poses or shapes change little between frames. On the
    /// CPU with the models' LBVHs; a device context answers with its own traversal (front
    /// tracking has no kernel yet: `front` is then left untouched).
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context, PairFront};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 24, 12).unwrap()).unwrap();
    /// let mut front = PairFront::new();
    /// let opts = CollideOptions::default();
    /// for x in [0.5, 0.52, 0.54] {
    ///     let pose = Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    ///     let tracked = ctx.collide_all_tracked(&mut front, &m, &Affine3A::IDENTITY, &m, &pose, &opts).unwrap();
    ///     assert_eq!(tracked, ctx.collide_all(&m, &Affine3A::IDENTITY, &m, &pose, &opts).unwrap());
    /// }
    /// assert!(!front.is_empty());
    /// ```
    pub fn collide_all_tracked(
        &self,
        front: &mut PairFront,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<Vec<[u32; 2]>, Error> {
        meshes("collide_all_tracked", a, b)?;
        match &self.device {
            None => {
                let (oa, ob) = (aabb_object(a, pose_a), aabb_object(b, pose_b));
                Ok(front.0.collide_all(&oa, &ob, opts)?)
            }
            Some(_) => self.collide_all(a, pose_a, b, pose_b, opts),
        }
    }

    /// Every intersecting triangle pair `(face of a, face of b)` with `a` placed by `pose_a`
    /// and `b` by `pose_b` (pairs within `opts.margin` with a margin): sorted, no duplicates,
    /// none missed (exact tests in f64 world coordinates). Both models must be meshes.
    ///
    /// On the CPU a pair whose last `collide_all` found a large contact for the meshes' size
    /// is answered in world space, both models placed as [`Context::collide_many`] places its
    /// bodies (faster there); the pairs are the same.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let a = ctx.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
    /// let near = Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.0));
    /// let pairs = ctx.collide_all(&a, &Affine3A::IDENTITY, &a, &near, &CollideOptions::default()).unwrap();
    /// assert!(!pairs.is_empty());
    /// ```
    pub fn collide_all(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<Vec<[u32; 2]>, Error> {
        let pair = [(a, pose_a), (b, pose_b)];
        if self.device.is_none() && self.world_pays(pair, opts)? {
            let pairs = world_pair(pair, opts)?;
            self.remember_all(a, b, &pairs);
            return Ok(pairs);
        }
        let apart = self.witnesses.apart(Kind::CollideAll, a, b);
        let pairs = self.pair_query(
            "collide_all",
            [(a, pose_a), (b, pose_b)],
            apart,
            |oa, ob| cpu::try_collide_all_models(oa, ob, opts),
            |d, oa, ob| d.collide_all_resident(oa, ob, &gpu_options(opts)),
        )?;
        if self.device.is_none() {
            self.remember_all(a, b, &pairs);
        }
        Ok(pairs)
    }

    /// What a CPU `collide_all` of `a` against `b` found, for the next one.
    fn remember_all(&self, a: &Model, b: &Model, pairs: &[[u32; 2]]) {
        let first = pairs.first().map(|&f| Witness::of_faces(f));
        self.witnesses.set(Kind::CollideAll, a, b, first);
        self.witnesses.set_count(a, b, pairs.len());
    }

    /// Whether this CPU `collide_all` of two mesh models runs in world space (both placed, as
    /// the many-body query places its bodies) rather than as a pair query: the same pairs
    /// either way. Placing costs time in proportion to the parts of the meshes near each other,
    /// and the world traversal then does the pair query's work in about two thirds of its time
    /// (docs/benchmarks.md, sessions 22–23), so it pays when the contact is large for the
    /// meshes. That is judged by the
    /// pair's last query: it found at least one pair per [`FACES_PER_WORLD_PAIR`] faces of the
    /// two meshes. A model on the OBB tree by choice keeps the pair query, and so does bad
    /// input (non-finite poses, a bad margin), whose errors the pair query names.
    fn world_pays(
        &self,
        [(a, pose_a), (b, pose_b)]: [(&Model, &Affine3A); 2],
        opts: &CollideOptions,
    ) -> Result<bool, Error> {
        meshes("collide_all", a, b)?;
        let on_boxes = |m: &Model| m.options().collision_tree != crate::CollisionTree::Obb;
        let valid = pose_a.is_finite()
            && pose_b.is_finite()
            && opts.margin.is_finite()
            && opts.margin >= 0.0;
        if !(valid && on_boxes(a) && on_boxes(b)) {
            return Ok(false);
        }
        let faces = a.mesh().face_count() + b.mesh().face_count();
        Ok(self
            .witnesses
            .count(a, b)
            .is_some_and(|n| n > 0 && faces <= n.saturating_mul(FACES_PER_WORLD_PAIR)))
    }

    /// Whether any triangle of `a` intersects any triangle of `b` (or comes within
    /// `opts.margin`); stops at the first certified intersecting pair on every backend.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let a = ctx.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
    /// let far = Affine3A::from_translation(Vec3::new(9.0, 0.0, 0.0));
    /// assert!(!ctx.collide_any(&a, &Affine3A::IDENTITY, &a, &far, &CollideOptions::default()).unwrap());
    /// ```
    pub fn collide_any(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<bool, Error> {
        // On the CPU the pair this model pair touched at last is tested first
        // (`crate::witness`): while it still touches, the query is one exact triangle test.
        let last = self.witnesses.last(Kind::CollideAny, a, b);
        let found = Cell::new(None);
        let hit = self.pair_query(
            "collide_any",
            [(a, pose_a), (b, pose_b)],
            last == Some(None),
            |oa, ob| {
                let hint = last.flatten();
                found.set(cpu::try_collide_any_models_near(oa, ob, opts, hint)?);
                Ok(found.get().is_some())
            },
            |d, oa, ob| d.collide_any_resident(oa, ob, &gpu_options(opts)),
        )?;
        if self.device.is_none() {
            self.witnesses.set(Kind::CollideAny, a, b, found.get());
        }
        Ok(hit)
    }

    /// A collision query of two posed mesh models: `cpu` on the models' trees of choice
    /// (`apart`: this context's last query of the kind found the pair apart, see
    /// [`crate::CollisionTree::Auto`]), or `gpu` on their resident copies on a device context.
    fn pair_query<R>(
        &self,
        query: &'static str,
        [(a, pose_a), (b, pose_b)]: [(&Model, &Affine3A); 2],
        apart: bool,
        cpu: impl FnOnce(&ModelObject<'_>, &ModelObject<'_>) -> Result<R, CollideError>,
        gpu: impl FnOnce(&Device, &ResidentObject<'_>, &ResidentObject<'_>) -> gprox_cuda::Result<R>,
    ) -> Result<R, Error> {
        meshes(query, a, b)?;
        match &self.device {
            None => {
                // Auto: OBB trees only when both stay rigid (no mixed traversal).
                let apart = apart && !a.moved() && !b.moved();
                let (ta, tb) = (a.obb_tree(apart), b.obb_tree(apart));
                let (oa, ob) = (object(a, pose_a, &ta), object(b, pose_b, &tb));
                Ok(cpu(&oa, &ob)?)
            }
            Some(d) => on_device(d, a, pose_a, b, pose_b, |oa, ob| gpu(d, oa, ob)),
        }
    }

    /// Many pair queries at once: for each `(a, pose_a, b, pose_b)` of `pairs`, what
    /// [`Context::collide_all`] answers for it. On a device the whole batch is one traversal
    /// and one host synchronisation (small models fill the GPU together); on the CPU the pairs
    /// run in parallel.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 16, 8).unwrap()).unwrap();
    /// let at = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    /// let found = ctx
    ///     .collide_batch(&[(&m, at(0.0), &m, at(0.4)), (&m, at(0.0), &m, at(9.0))], &CollideOptions::default())
    ///     .unwrap();
    /// assert!(!found[0].is_empty() && found[1].is_empty());
    /// ```
    pub fn collide_batch(
        &self,
        pairs: &[(&Model, Affine3A, &Model, Affine3A)],
        opts: &CollideOptions,
    ) -> Result<Vec<Vec<[u32; 2]>>, Error> {
        for (a, _, b, _) in pairs {
            meshes("collide_batch", a, b)?;
        }
        match &self.device {
            None => pairs
                .par_iter()
                .map(|(a, pa, b, pb)| self.collide_all(a, pa, b, pb, opts))
                .collect(),
            Some(d) => {
                let resident = pairs
                    .iter()
                    .map(|(a, _, b, _)| Ok((a.resident(d)?, b.resident(d)?)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let objects: Vec<_> = pairs
                    .iter()
                    .zip(&resident)
                    .map(|((a, pa, b, pb), (ra, rb))| {
                        (
                            ResidentObject::new(ra, a.mesh(), Pose64::from_affine(pa)),
                            ResidentObject::new(rb, b.mesh(), Pose64::from_affine(pb)),
                        )
                    })
                    .collect();
                Ok(d.collide_batch(&objects, &gpu_options(opts))?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Vec3};
    use gprox_geometry::scene::torus;

    use crate::{Backend, CollideOptions, Context};

    /// `CollisionTree::Auto`: a pair's first query and a pair in contact run on the LBVH; once
    /// the context found the pair apart, the next query of that kind builds and uses the OBB
    /// trees — of rigid models only.
    #[test]
    fn auto_proves_rigid_pairs_apart_on_obb_trees() {
        let ctx = Context::new(Backend::Cpu).unwrap();
        let mesh = torus(1.0, 0.3, 16, 8).unwrap();
        let (a, b) = (
            ctx.model(mesh.clone()).unwrap(),
            ctx.model(mesh.clone()).unwrap(),
        );
        let opts = CollideOptions::default();
        let at = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
        let id = Affine3A::IDENTITY;
        // Touching, then apart: neither query needed an OBB tree.
        assert!(ctx.collide_any(&a, &id, &b, &at(0.5), &opts).unwrap());
        assert!(!ctx.collide_any(&a, &id, &b, &at(5.0), &opts).unwrap());
        assert!(!a.has_obb_tree() && !b.has_obb_tree());
        // Found apart last time: this query runs on the OBB trees.
        assert!(!ctx.collide_any(&a, &id, &b, &at(5.1), &opts).unwrap());
        assert!(a.has_obb_tree() && b.has_obb_tree());
        // collide_all keeps its own memory.
        let (c, mut d) = (
            ctx.model(mesh.clone()).unwrap(),
            ctx.model(mesh.clone()).unwrap(),
        );
        assert!(ctx
            .collide_all(&c, &id, &d, &at(5.0), &opts)
            .unwrap()
            .is_empty());
        assert!(!c.has_obb_tree());
        assert!(ctx
            .collide_all(&c, &id, &d, &at(5.0), &opts)
            .unwrap()
            .is_empty());
        assert!(c.has_obb_tree() && d.has_obb_tree());
        // A model that moved is deforming: no OBB tree for its pairs any more.
        let (e, f) = (
            ctx.model(mesh.clone()).unwrap(),
            ctx.model(mesh.clone()).unwrap(),
        );
        ctx.update(&mut d, mesh.positions()).unwrap();
        assert!(!ctx.collide_any(&e, &id, &d, &at(5.0), &opts).unwrap());
        assert!(!ctx.collide_any(&e, &id, &d, &at(5.0), &opts).unwrap());
        assert!(!e.has_obb_tree());
        assert!(!ctx.collide_any(&e, &id, &f, &at(5.0), &opts).unwrap());
        assert!(!ctx.collide_any(&e, &id, &f, &at(5.0), &opts).unwrap());
        assert!(e.has_obb_tree() && f.has_obb_tree());
    }
}
