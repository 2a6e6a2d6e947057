//! Sequential simultaneous traversal of two BVHs (the bounding-volume test tree): a depth-first
//! descent that keeps its current pair out of the stack and carries each pair's mapped boxes
//! (module `node_test`), with a lazily filled per-thread cache of world vertices.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::DVec3;
use gprox_bvh::BvhNode;
use gprox_geometry::transform::{transform_point, Pose64};

use super::frame::{box_magnitude, Frame};
use super::node_test::{Both, Entry, Local, Mapped, NodeTest, Stacks, World};
use super::{triangle_pad, triangles_touch, CollideError, CollisionObject, Side, Witness, GATHER};

/// Expansions of an early-out query that pick the child pair sharing more volume first
/// (two-tori collide-any: median frame −16 %; separation proofs, which visit every pair
/// anyway, +1 % — docs/benchmarks.md, fourth pass).
const ORDERED_EXPANSIONS: u32 = 32;

/// Reusable per-thread buffers; cache entries are valid when their stamp equals `generation`.
#[derive(Default)]
pub(crate) struct Scratch {
    generation: u32,
    vert_a: Stamped<DVec3>,
    vert_b: Stamped<DVec3>,
    stacks: Stacks,
    /// Leaf pairs of a full query waiting for their exact tests ([`Traversal::flush`]).
    pending: Vec<[u32; 2]>,
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
    /// The first pair found, with its leaves.
    pub(crate) first: Option<Witness>,
}

impl<'s> Sink<'s> {
    /// An empty sink; `any`: stop at the first pair.
    pub(crate) fn new(any: Option<&'s AtomicBool>) -> Self {
        Self {
            pairs: Vec::new(),
            any,
            error: None,
            first: None,
        }
    }
}

/// The node-pair test of a query (see module `node_test`).
#[derive(Clone, Copy, Debug)]
enum Test {
    Local(Local),
    Both(Both),
    World(World),
}

/// What one step of the descent found below a pair.
enum Step<X> {
    /// A leaf pair: the exact test is due.
    Leaf,
    /// The overlapping children pairs, left child first.
    Inner(Option<Entry<X>>, Option<Entry<X>>),
}

/// One traversal over two posed trees, borrowing a scratch.
pub(crate) struct Traversal<'a, 's> {
    a: &'a CollisionObject<'a>,
    b: &'a CollisionObject<'a>,
    test: Test,
    margin: f64,
    /// Padding of the triangle-box prefilter when `margin > 0`: pairs farther apart than this
    /// along an axis cannot have a computed distance within the margin (`mag` bounds the world
    /// coordinates).
    tri_pad: f64,
    scratch: &'s mut Scratch,
    /// Pops left before the tree is declared cyclic (set by [`Self::run`]).
    budget: u64,
    /// Whether A's / B's pose is the identity (world vertices = stored ones, no cache needed;
    /// the usual case of deforming meshes given in world coordinates).
    identity: [bool; 2],
}

#[inline(always)]
fn size(n: &BvhNode) -> f32 {
    let b = &n.aabb;
    (b.max[0] - b.min[0]) + (b.max[1] - b.min[1]) + (b.max[2] - b.min[2])
}

/// Node `i` of one side's tree, or the error naming it.
#[inline(always)]
fn node(nodes: &[BvhNode], side: Side, i: u32) -> Result<&BvhNode, CollideError> {
    match nodes.get(i as usize) {
        Some(n) => Ok(n),
        None => Err(bad_node(side, i)),
    }
}

#[cold]
#[inline(never)]
fn bad_node(side: Side, node: u32) -> CollideError {
    CollideError::InvalidTree { side, node }
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
        scratch.vert_a.reset(a.mesh.vertex_count(), clear);
        scratch.vert_b.reset(b.mesh.vertex_count(), clear);
        let identity = [a.pose == Pose64::IDENTITY, b.pose == Pose64::IDENTITY];
        // Two poses differing by a translation only: A's image in B's frame is as loose as B's
        // in A's, a second test would reject nothing more. Under a relative rotation a node
        // pair must overlap in both frames — the face axes of both boxes, as the first six
        // axes of an OBB test — which rejects far more pairs than one mapped box alone (its
        // image grows up to √3 times).
        let rotated = a
            .pose
            .rows
            .iter()
            .zip(&b.pose.rows)
            .any(|(x, y)| x[..3] != y[..3]);
        let (mag_a, mag_b) = (
            box_magnitude(&a.bvh.root_aabb()),
            box_magnitude(&b.bvh.root_aabb()),
        );
        let world_frame = || {
            let (a, b) = Frame::world_maps(&a.pose, mag_a, &b.pose, mag_b, margin);
            Test::World(World { a, b })
        };
        let test = match frame {
            Frame::World(a, b) => Test::World(World { a, b }),
            Frame::Local(to_a) => match to_a.f32_map(mag_b) {
                // f32 figures out of range (absurd poses or coordinates): compare in world
                // space in f64.
                None => world_frame(),
                Some(to_a) if rotated => match Frame::new(&b.pose, mag_b, &a.pose, mag_a, margin) {
                    Frame::Local(to_b) => match to_b.f32_map(mag_a) {
                        Some(to_b) => Test::Both(Both { to_a, to_b }),
                        None => Test::Local(Local(to_a)),
                    },
                    Frame::World(..) => Test::Local(Local(to_a)),
                },
                Some(to_a) => Test::Local(Local(to_a)),
            },
        };
        Self {
            a,
            b,
            test,
            margin,
            tri_pad: triangle_pad(margin, mag),
            scratch,
            budget: 0,
            identity,
        }
    }

    /// Whether the root boxes overlap (the traversal starts at `[0, 0]` only then).
    pub(crate) fn roots_overlap(&mut self) -> bool {
        self.overlaps([0, 0])
    }

    /// Whether the boxes of the node pair `p` overlap (false for a node out of range).
    pub(crate) fn overlaps(&mut self, p: [u32; 2]) -> bool {
        match self.test {
            Test::Local(t) => self.entry(&t, p).is_some(),
            Test::Both(t) => self.entry(&t, p).is_some(),
            Test::World(t) => self.entry(&t, p).is_some(),
        }
    }

    /// The pair `p` with its mapped boxes, when it overlaps (`None` too for a missing node: it
    /// is reported when the pair is expanded).
    fn entry<T: NodeTest>(&self, t: &T, p: [u32; 2]) -> Option<Entry<T::Box>> {
        let (Some(na), Some(nb)) = (
            self.a.bvh.nodes.get(p[0] as usize),
            self.b.bvh.nodes.get(p[1] as usize),
        ) else {
            return None;
        };
        let m = t.pair(&na.aabb, &nb.aabb)?;
        Some(Entry {
            i: p[0],
            j: p[1],
            m,
        })
    }

    /// The overlapping children pairs of `e` (descending the larger node), or `Leaf` for a leaf
    /// pair.
    #[inline(always)]
    fn step<T: NodeTest>(&self, t: &T, e: &Entry<T::Box>) -> Result<Step<T::Box>, CollideError> {
        let (an, bn) = (self.a.bvh.nodes.as_slice(), self.b.bvh.nodes.as_slice());
        let na = node(an, Side::A, e.i)?;
        let nb = node(bn, Side::B, e.j)?;
        let split_a = match (na.is_leaf(), nb.is_leaf()) {
            (true, true) => return Ok(Step::Leaf),
            (true, false) => false,
            (false, true) => true,
            (false, false) => size(na) >= size(nb),
        };
        if split_a {
            let nr = node(an, Side::A, na.right)?;
            let nl = node(an, Side::A, na.left)?;
            let child = |c: u32, nc: &BvhNode| {
                t.child_a(&nc.aabb, &nb.aabb, &e.m.b).map(|a| Entry {
                    i: c,
                    j: e.j,
                    m: Mapped { a, b: e.m.b },
                })
            };
            let r = child(na.right, nr);
            Ok(Step::Inner(child(na.left, nl), r))
        } else {
            let nr = node(bn, Side::B, nb.right)?;
            let nl = node(bn, Side::B, nb.left)?;
            let child = |c: u32, nc: &BvhNode| {
                t.child_b(&na.aabb, &e.m.a, &nc.aabb).map(|b| Entry {
                    i: e.i,
                    j: c,
                    m: Mapped { a: e.m.a, b },
                })
            };
            let r = child(nb.right, nr);
            Ok(Step::Inner(child(nb.left, nl), r))
        }
    }

    /// Expands `front` breadth-first until it holds at least `want` pairs or only leaf pairs.
    pub(crate) fn widen(
        &mut self,
        front: &mut Vec<[u32; 2]>,
        want: usize,
    ) -> Result<(), CollideError> {
        match self.test {
            Test::Local(t) => self.widen_with(&t, front, want),
            Test::Both(t) => self.widen_with(&t, front, want),
            Test::World(t) => self.widen_with(&t, front, want),
        }
    }

    fn widen_with<T: NodeTest>(
        &self,
        t: &T,
        front: &mut Vec<[u32; 2]>,
        want: usize,
    ) -> Result<(), CollideError> {
        let mut cur: Vec<Entry<T::Box>> = front.iter().filter_map(|&p| self.entry(t, p)).collect();
        let mut next = Vec::with_capacity(cur.len() * 4);
        while cur.len() < want {
            next.clear();
            let mut grew = false;
            for e in &cur {
                match self.step(t, e)? {
                    Step::Leaf => next.push(*e),
                    Step::Inner(l, r) => {
                        grew = true;
                        next.extend(r);
                        next.extend(l);
                    }
                }
            }
            std::mem::swap(&mut cur, &mut next);
            if !grew {
                break;
            }
        }
        front.clear();
        front.extend(cur.iter().map(|e| [e.i, e.j]));
        Ok(())
    }

    /// Depth-first traversal below the overlapping pairs `start`, reporting into `sink`. Each
    /// call may expand as many pairs as the two trees have (more means a cycle).
    pub(crate) fn run(&mut self, start: &[[u32; 2]], sink: &mut Sink<'_>) {
        self.budget = (self.a.bvh.nodes.len() as u64) * (self.b.bvh.nodes.len() as u64) + 1;
        let res = match self.test {
            Test::Local(t) => self.run_with(&t, start, sink),
            Test::Both(t) => self.run_with(&t, start, sink),
            Test::World(t) => self.run_with(&t, start, sink),
        };
        if let Err(e) = res {
            sink.error = Some(e);
        }
    }

    /// The descent of [`Self::run`] for one node test: the current pair stays out of the stack
    /// (its first overlapping child pair becomes the next current one; only a second is pushed).
    fn run_with<T: NodeTest>(
        &mut self,
        t: &T,
        start: &[[u32; 2]],
        sink: &mut Sink<'_>,
    ) -> Result<(), CollideError> {
        let mut stack = std::mem::take(T::stack(&mut self.scratch.stacks));
        stack.clear();
        self.scratch.pending.clear();
        for &p in start.iter().rev() {
            // A pair whose node is missing gets an empty entry, so the descent reports it.
            let e = self.entry(t, p).unwrap_or(Entry {
                i: p[0],
                j: p[1],
                m: Mapped::default(),
            });
            stack.push(e);
        }
        // Near the root an early-out query enters the child pair whose boxes share more volume
        // first (more likely to hold an intersecting pair); deeper, and in a full query, which
        // visits both anyway, the order is not worth its cost — so the first expansions run in
        // their own loop and the main loop stays as it was.
        let ordered_done = sink.any.is_some() && self.descend::<T, true>(t, &mut stack, sink)?;
        let res = if ordered_done {
            Ok(true)
        } else {
            self.descend::<T, false>(t, &mut stack, sink)
        };
        *T::stack(&mut self.scratch.stacks) = stack;
        res.map(|_| ())
    }

    /// Depth-first descent from the top of `stack`. `ORDERED`: at most [`ORDERED_EXPANSIONS`]
    /// expansions, each entering the child pair that shares more box volume first; returns
    /// whether the descent finished (false: the current pair is back on the stack).
    #[inline(always)]
    fn descend<T: NodeTest, const ORDERED: bool>(
        &mut self,
        t: &T,
        stack: &mut Vec<Entry<T::Box>>,
        sink: &mut Sink<'_>,
    ) -> Result<bool, CollideError> {
        let mut polls = 0u32;
        let mut expansions = 0u32;
        let Some(mut cur) = stack.pop() else {
            return Ok(true);
        };
        loop {
            if ORDERED {
                if expansions == ORDERED_EXPANSIONS {
                    stack.push(cur);
                    return Ok(false);
                }
                expansions += 1;
            }
            if self.budget == 0 {
                return Err(CollideError::CyclicTree);
            }
            self.budget -= 1;
            if let Some(flag) = sink.any {
                polls = polls.wrapping_add(1);
                if polls.is_multiple_of(64) && flag.load(Ordering::Relaxed) {
                    return Ok(true);
                }
            }
            let next = match self.step(t, &cur)? {
                Step::Inner(Some(l), Some(r))
                    if ORDERED && self.shared(t, &r) > self.shared(t, &l) =>
                {
                    stack.push(l);
                    Some(r)
                }
                Step::Inner(Some(l), r) => {
                    stack.extend(r);
                    Some(l)
                }
                Step::Inner(None, Some(r)) => Some(r),
                Step::Inner(None, None) => None,
                Step::Leaf if sink.any.is_none() => {
                    self.scratch.pending.push([cur.i, cur.j]);
                    if self.scratch.pending.len() == GATHER {
                        self.flush(sink)?;
                    }
                    None
                }
                Step::Leaf => {
                    if let Some(faces) = self.leaf_pair([cur.i, cur.j])? {
                        sink.pairs.push(faces);
                        sink.first.get_or_insert(Witness {
                            faces,
                            leaves: [cur.i, cur.j],
                        });
                        if let Some(flag) = sink.any {
                            flag.store(true, Ordering::Relaxed);
                            return Ok(true);
                        }
                    }
                    None
                }
            };
            cur = match next.or_else(|| stack.pop()) {
                Some(e) => e,
                None => {
                    self.flush(sink)?;
                    return Ok(true);
                }
            };
        }
    }

    /// The exact tests of the pending leaf pairs of a full query, into `sink`. The corners of
    /// all of them are fetched first and tested after (see [`GATHER`]).
    fn flush(&mut self, sink: &mut Sink<'_>) -> Result<(), CollideError> {
        let mut pending = std::mem::take(&mut self.scratch.pending);
        let mut tris = [[[DVec3::ZERO; 3]; 2]; GATHER];
        let mut faces = [[0u32; 2]; GATHER];
        for chunk in pending.chunks(GATHER) {
            for ((&[i, j], t), f) in chunk.iter().zip(&mut tris).zip(&mut faces) {
                *f = [
                    self.a.bvh.nodes[i as usize].left,
                    self.b.bvh.nodes[j as usize].left,
                ];
                let [ta, tb] = t;
                self.world_triangle(Side::A, f[0], ta)?;
                self.world_triangle(Side::B, f[1], tb)?;
            }
            for (([ta, tb], &f), &leaves) in tris.iter().zip(&faces).zip(chunk) {
                if triangles_touch(ta, tb, self.margin, self.tri_pad) {
                    sink.pairs.push(f);
                    sink.first.get_or_insert(Witness { faces: f, leaves });
                }
            }
        }
        pending.clear();
        self.scratch.pending = pending;
        Ok(())
    }

    /// [`NodeTest::shared_volume`] of an overlapping pair.
    #[inline(always)]
    fn shared<T: NodeTest>(&self, t: &T, e: &Entry<T::Box>) -> f32 {
        let (an, bn) = (&self.a.bvh.nodes, &self.b.bvh.nodes);
        t.shared_volume(&an[e.i as usize].aabb, &bn[e.j as usize].aabb, &e.m)
    }

    /// World corners of face `f` of one side, through the vertex cache, written into `out`
    /// corner by corner: a triangle returned by value was copied in 16-byte pieces across its
    /// 24-byte corners, and reading those back stalled on store forwarding.
    #[inline]
    fn world_triangle(
        &mut self,
        side: Side,
        face: u32,
        out: &mut [DVec3; 3],
    ) -> Result<(), CollideError> {
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
        let pos = obj.mesh.positions();
        let pose: &Pose64 = &obj.pose;
        for (c, &v) in out.iter_mut().zip(f) {
            *c = if identity {
                // x·1 + y·0 + z·0 + 0 = x exactly: the same values the transform would give.
                pos[v as usize].as_dvec3()
            } else {
                cache.get_or(v as usize, g, || transform_point(pose, pos[v as usize]))
            };
        }
        Ok(())
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
        let (mut ta, mut tb) = ([DVec3::ZERO; 3], [DVec3::ZERO; 3]);
        self.world_triangle(Side::A, fa, &mut ta)?;
        self.world_triangle(Side::B, fb, &mut tb)?;
        Ok(triangles_touch(&ta, &tb, self.margin, self.tri_pad).then_some([fa, fb]))
    }
}
