//! Sequential simultaneous traversal of two BVHs (the bounding-volume test tree), with lazily
//! filled per-thread caches of mapped node boxes and world vertices.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::DVec3;
use gprox_bvh::{Aabb, BvhNode};
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;

use super::frame::{box_magnitude, BoxMap, Frame};
use super::{CollideError, CollisionObject, Side};

/// Reusable per-thread buffers; entries are valid when their stamp equals `generation`.
#[derive(Default)]
pub(crate) struct Scratch {
    generation: u32,
    box_a: Stamped<[f64; 6]>,
    box_b: Stamped<[f64; 6]>,
    vert_a: Stamped<DVec3>,
    vert_b: Stamped<DVec3>,
    pub(crate) stack: Vec<[u32; 2]>,
}

#[derive(Default)]
struct Stamped<T> {
    stamp: Vec<u32>,
    value: Vec<T>,
}

impl<T: Copy + Default> Stamped<T> {
    fn reset(&mut self, len: usize, clear: bool) {
        if clear {
            self.stamp.iter_mut().for_each(|s| *s = 0);
        }
        if self.stamp.len() < len {
            self.stamp.resize(len, 0);
            self.value.resize(len, T::default());
        }
    }

    #[inline(always)]
    fn get_or(&mut self, i: usize, generation: u32, f: impl FnOnce() -> T) -> T {
        if self.stamp[i] == generation {
            self.value[i]
        } else {
            let v = f();
            self.stamp[i] = generation;
            self.value[i] = v;
            v
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch (or a fresh one when it is already in use, e.g. a
/// collision query nested inside another on the same thread).
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut g) => f(&mut g),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// What the traversal does at a leaf pair and when it stops.
pub(crate) struct Sink<'s> {
    /// Pairs found (`collide_all`).
    pub(crate) pairs: Vec<[u32; 2]>,
    /// Stop at the first pair and raise this flag (`collide_any`); also polled to stop early.
    pub(crate) any: Option<&'s AtomicBool>,
    /// First error met (bad tree).
    pub(crate) error: Option<CollideError>,
}

/// One traversal over two posed trees, borrowing a scratch.
pub(crate) struct Traversal<'a, 's> {
    a: &'a CollisionObject<'a>,
    b: &'a CollisionObject<'a>,
    frame: Frame,
    margin: f64,
    /// Padding of the triangle-box prefilter when `margin > 0`: pairs farther apart than this
    /// along an axis cannot have a computed distance within the margin (`mag` bounds the world
    /// coordinates).
    tri_pad: f64,
    scratch: &'s mut Scratch,
    /// Pops left before the tree is declared cyclic.
    budget: u64,
    /// Whether A's / B's pose is the identity (world vertices = stored ones, no cache needed;
    /// the usual case of deforming meshes given in world coordinates).
    identity: [bool; 2],
    /// With a local frame (B mapped into A's): A's boxes mapped into B's frame, when B's pose
    /// is a rotation too. A node pair must then overlap in both frames — the face axes of both
    /// boxes, as the first six axes of an OBB test — which rejects far more pairs under a
    /// relative rotation than one mapped box alone (its image grows up to √3 times).
    reverse: Option<BoxMap>,
}

#[inline]
fn overlap(a: &[f64; 6], b: &[f64; 6]) -> bool {
    a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] && b[2] <= a[5]
}

#[inline]
fn promote(b: &Aabb) -> [f64; 6] {
    [
        b.min[0] as f64,
        b.min[1] as f64,
        b.min[2] as f64,
        b.max[0] as f64,
        b.max[1] as f64,
        b.max[2] as f64,
    ]
}

#[inline]
fn size(n: &BvhNode) -> f32 {
    let b = &n.aabb;
    (b.max[0] - b.min[0]) + (b.max[1] - b.min[1]) + (b.max[2] - b.min[2])
}

impl<'a, 's> Traversal<'a, 's> {
    pub(crate) fn new(
        a: &'a CollisionObject<'a>,
        b: &'a CollisionObject<'a>,
        frame: Frame,
        margin: f64,
        mag: f64,
        scratch: &'s mut Scratch,
    ) -> Self {
        scratch.generation = scratch.generation.wrapping_add(1);
        let clear = scratch.generation == 0;
        if clear {
            scratch.generation = 1;
        }
        scratch.box_a.reset(a.bvh.nodes.len(), clear);
        scratch.box_b.reset(b.bvh.nodes.len(), clear);
        scratch.vert_a.reset(a.mesh.vertex_count(), clear);
        scratch.vert_b.reset(b.mesh.vertex_count(), clear);
        let budget = (a.bvh.nodes.len() as u64) * (b.bvh.nodes.len() as u64) + 1;
        let identity = [a.pose == Pose64::IDENTITY, b.pose == Pose64::IDENTITY];
        // Two poses differing by a translation only: A's image in B's frame is as loose as B's
        // in A's, a second test would reject nothing more.
        let rotated = a
            .pose
            .rows
            .iter()
            .zip(&b.pose.rows)
            .any(|(x, y)| x[..3] != y[..3]);
        let reverse = match (&frame, rotated) {
            (Frame::Local(_), true) => {
                let (mag_a, mag_b) = (
                    box_magnitude(&a.bvh.root_aabb()),
                    box_magnitude(&b.bvh.root_aabb()),
                );
                match Frame::new(&b.pose, mag_b, &a.pose, mag_a, margin) {
                    Frame::Local(m) => Some(m),
                    Frame::World(..) => None,
                }
            }
            _ => None,
        };
        Self {
            a,
            b,
            frame,
            margin,
            tri_pad: margin * (1.0 + 1e-12) + 1e-12 * mag,
            scratch,
            budget,
            identity,
            reverse,
        }
    }

    /// Whether node `i` of A (its box `ba` in the comparison frame) and node `j` of B (`bb`)
    /// overlap: in the comparison frame, then in B's frame when there is a reverse map.
    #[inline(always)]
    fn pair_overlaps(
        &mut self,
        i: usize,
        na: &BvhNode,
        ba: &[f64; 6],
        nb: &BvhNode,
        bb: &[f64; 6],
    ) -> bool {
        if !overlap(ba, bb) {
            return false;
        }
        match self.reverse {
            None => true,
            Some(rev) => {
                let g = self.scratch.generation;
                let ra = self.scratch.box_a.get_or(i, g, || rev.map(&na.aabb));
                overlap(&ra, &promote(&nb.aabb))
            }
        }
    }

    /// Box of node `i` of A in the comparison frame.
    #[inline]
    fn box_a(&mut self, i: usize, node: &BvhNode) -> [f64; 6] {
        match &self.frame {
            Frame::Local(_) => promote(&node.aabb),
            Frame::World(ma, _) => {
                let g = self.scratch.generation;
                self.scratch.box_a.get_or(i, g, || ma.map(&node.aabb))
            }
        }
    }

    /// Box of node `i` of B in the comparison frame.
    #[inline]
    fn box_b(&mut self, i: usize, node: &BvhNode) -> [f64; 6] {
        let map: &BoxMap = match &self.frame {
            Frame::Local(m) => m,
            Frame::World(_, mb) => mb,
        };
        let g = self.scratch.generation;
        self.scratch.box_b.get_or(i, g, || map.map(&node.aabb))
    }

    fn bad_node(&self, side: Side, node: u32) -> CollideError {
        CollideError::InvalidTree { side, node }
    }

    /// Whether the root boxes overlap (the traversal starts at `[0, 0]` only then).
    pub(crate) fn roots_overlap(&mut self) -> bool {
        let (na, nb) = (self.a.bvh.nodes[0], self.b.bvh.nodes[0]);
        let (ba, bb) = (self.box_a(0, &na), self.box_b(0, &nb));
        self.pair_overlaps(0, &na, &ba, &nb, &bb)
    }

    /// Replaces the overlapping pair `p` by its overlapping children pairs (descending the
    /// larger node), pushed on `out`; leaf pairs are pushed back unchanged. Returns false when
    /// `p` was a leaf pair.
    #[inline(always)]
    fn expand(&mut self, p: [u32; 2], out: &mut Vec<[u32; 2]>) -> Result<bool, CollideError> {
        let (an, bn) = (self.a.bvh.nodes.as_slice(), self.b.bvh.nodes.as_slice());
        let na = *an
            .get(p[0] as usize)
            .ok_or_else(|| self.bad_node(Side::A, p[0]))?;
        let nb = *bn
            .get(p[1] as usize)
            .ok_or_else(|| self.bad_node(Side::B, p[1]))?;
        let split_a = match (na.is_leaf(), nb.is_leaf()) {
            (true, true) => {
                out.push(p);
                return Ok(false);
            }
            (true, false) => false,
            (false, true) => true,
            (false, false) => size(&na) >= size(&nb),
        };
        if split_a {
            let bb = self.box_b(p[1] as usize, &nb);
            for c in [na.right, na.left] {
                let nc = *an
                    .get(c as usize)
                    .ok_or_else(|| self.bad_node(Side::A, c))?;
                let bc = self.box_a(c as usize, &nc);
                if self.pair_overlaps(c as usize, &nc, &bc, &nb, &bb) {
                    out.push([c, p[1]]);
                }
            }
        } else {
            let ba = self.box_a(p[0] as usize, &na);
            for c in [nb.right, nb.left] {
                let nc = *bn
                    .get(c as usize)
                    .ok_or_else(|| self.bad_node(Side::B, c))?;
                let bc = self.box_b(c as usize, &nc);
                if self.pair_overlaps(p[0] as usize, &na, &ba, &nc, &bc) {
                    out.push([p[0], c]);
                }
            }
        }
        Ok(true)
    }

    /// Expands `front` breadth-first until it holds at least `want` pairs or only leaf pairs.
    pub(crate) fn widen(
        &mut self,
        front: &mut Vec<[u32; 2]>,
        want: usize,
    ) -> Result<(), CollideError> {
        let mut next = Vec::with_capacity(front.len() * 4);
        while front.len() < want {
            next.clear();
            let mut grew = false;
            for &p in front.iter() {
                grew |= self.expand(p, &mut next)?;
            }
            std::mem::swap(front, &mut next);
            if !grew {
                break;
            }
        }
        Ok(())
    }

    /// Depth-first traversal below the overlapping pairs `start`, reporting into `sink`.
    pub(crate) fn run(&mut self, start: &[[u32; 2]], sink: &mut Sink<'_>) {
        let mut stack = std::mem::take(&mut self.scratch.stack);
        stack.clear();
        stack.extend(start.iter().rev());
        let mut polls = 0u32;
        while let Some(p) = stack.pop() {
            if self.budget == 0 {
                sink.error = Some(CollideError::CyclicTree);
                break;
            }
            self.budget -= 1;
            if let Some(flag) = sink.any {
                polls = polls.wrapping_add(1);
                if polls % 64 == 0 && flag.load(Ordering::Relaxed) {
                    break;
                }
            }
            match self.expand(p, &mut stack) {
                Ok(true) => {}
                Ok(false) => {
                    stack.pop();
                    match self.leaf_pair(p) {
                        Ok(None) => {}
                        Ok(Some(faces)) => {
                            if let Some(flag) = sink.any {
                                flag.store(true, Ordering::Relaxed);
                                break;
                            }
                            sink.pairs.push(faces);
                        }
                        Err(e) => {
                            sink.error = Some(e);
                            break;
                        }
                    }
                }
                Err(e) => {
                    sink.error = Some(e);
                    break;
                }
            }
        }
        self.scratch.stack = stack;
    }

    /// World corners of face `f` of one side, through the vertex cache.
    #[inline]
    fn world_triangle(&mut self, side: Side, face: u32) -> Result<[DVec3; 3], CollideError> {
        let (obj, cache, identity) = match side {
            Side::A => (self.a, &mut self.scratch.vert_a, self.identity[0]),
            Side::B => (self.b, &mut self.scratch.vert_b, self.identity[1]),
        };
        let g = self.scratch.generation;
        let f = obj
            .mesh
            .faces()
            .get(face as usize)
            .ok_or(CollideError::FaceOutOfRange { side, face })?;
        let f = *f;
        let pos = obj.mesh.positions();
        if identity {
            // x·1 + y·0 + z·0 + 0 = x exactly: the same values the transform would give.
            return Ok(f.map(|v| pos[v as usize].as_dvec3()));
        }
        let pose: &Pose64 = &obj.pose;
        let mut corner =
            |v: u32| cache.get_or(v as usize, g, || transform_point(pose, pos[v as usize]));
        Ok([corner(f[0]), corner(f[1]), corner(f[2])])
    }

    /// The leaf test: exact intersection (margin 0) or distance within the margin; the face
    /// pair when it counts.
    #[inline]
    fn leaf_pair(&mut self, p: [u32; 2]) -> Result<Option<[u32; 2]>, CollideError> {
        let fa = self.a.bvh.nodes[p[0] as usize].left;
        let fb = self.b.bvh.nodes[p[1] as usize].left;
        self.face_pair(fa, fb)
    }

    /// The exact test of face `fa` of A against face `fb` of B: the pair when it counts.
    #[inline]
    pub(crate) fn face_pair(&mut self, fa: u32, fb: u32) -> Result<Option<[u32; 2]>, CollideError> {
        let ta = self.world_triangle(Side::A, fa)?;
        let tb = self.world_triangle(Side::B, fb)?;
        // Exact prefilter: the world triangles' own boxes (comparisons of f64 values are exact).
        let pad = if self.margin > 0.0 { self.tri_pad } else { 0.0 };
        let lo = |t: &[DVec3; 3]| t[0].min(t[1]).min(t[2]);
        let hi = |t: &[DVec3; 3]| t[0].max(t[1]).max(t[2]);
        let (la, ha, lb, hb) = (lo(&ta), hi(&ta), lo(&tb), hi(&tb));
        if pad == 0.0 {
            if la.cmpgt(hb).any() || lb.cmpgt(ha).any() {
                return Ok(None);
            }
            Ok(triangles_intersect(&ta, &tb).then_some([fa, fb]))
        } else {
            if (la - hb).cmpgt(DVec3::splat(pad)).any() || (lb - ha).cmpgt(DVec3::splat(pad)).any()
            {
                return Ok(None);
            }
            Ok((triangle_distance(&ta, &tb).distance <= self.margin).then_some([fa, fb]))
        }
    }
}
