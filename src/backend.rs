//! Backend choice and the [`Context`] that runs queries on it.

use std::fmt;

use rayon::prelude::*;

use glam::{Affine3A, Vec3};
use gprox_cuda::{Device, DeviceOps, GpuCollideOptions, ResidentObject};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::broad_phase::{try_collide_many, ManyContacts};
use gprox_query::ccd::{ccd_self_with_bvh, CcdOptions, MeshCcd};
use gprox_query::collide::{self, CollideOptions};
use gprox_query::distance::{distance, DistanceObject, DistanceOptions, DistanceResult};
use gprox_query::self_collide::self_collide;

use crate::{Error, Model};

/// Where queries run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU, parallel with rayon (the current rayon pool: wrap calls in
    /// `ThreadPool::install` to choose the thread count).
    Cpu,
    /// A CUDA device by index.
    Cuda(usize),
    /// The CUDA kernels run on the CPU through the host emulator (slow; for tests).
    #[cfg(feature = "emulated")]
    Emulated,
}

impl Backend {
    /// CUDA device 0 if a driver, a device and device code are present, else the CPU.
    pub fn auto() -> Self {
        if Context::new(Self::Cuda(0)).is_ok() {
            Self::Cuda(0)
        } else {
            Self::Cpu
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cpu => write!(f, "cpu"),
            Self::Cuda(i) => write!(f, "cuda:{i}"),
            #[cfg(feature = "emulated")]
            Self::Emulated => write!(f, "emulated"),
        }
    }
}

/// An open backend: create once, run many queries.
///
/// ```
/// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
/// use glam::{Affine3A, Vec3};
/// let ctx = Context::new(Backend::Cpu).unwrap();
/// let a = ctx.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
/// let b = ctx.model(torus(1.0, 0.3, 32, 16).unwrap()).unwrap();
/// let near = Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.0));
/// let far = Affine3A::from_translation(Vec3::new(9.0, 0.0, 0.0));
/// let opts = CollideOptions::default();
/// let pairs = ctx.collide_all(&a, &Affine3A::IDENTITY, &b, &near, &opts).unwrap();
/// assert!(!pairs.is_empty());
/// assert!(!ctx.collide_any(&a, &Affine3A::IDENTITY, &b, &far, &opts).unwrap());
/// ```
pub struct Context {
    backend: Backend,
    /// The device for `Cuda` / `Emulated`; `None` on the CPU.
    device: Option<Device>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("backend", &self.backend)
            .finish()
    }
}

impl Context {
    /// Opens `backend`. CUDA errors when it cannot run here: no driver, no such device, or a
    /// build without device code ([`Error::Cuda`]).
    pub fn new(backend: Backend) -> Result<Self, Error> {
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(i) => Some(Device::cuda(i)?),
            #[cfg(feature = "emulated")]
            Backend::Emulated => Some(Device::emulated()),
        };
        Ok(Self { backend, device })
    }

    /// The backend this context runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Runs `f` and, on a CUDA GPU, times it with CUDA events on the device's stream
    /// (milliseconds); `None` on the CPU and in the emulator.
    ///
    /// ```
    /// use gprox::{Backend, Context};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let (x, gpu_ms) = ctx.time_on_device(|| 6 * 7).unwrap();
    /// assert_eq!((x, gpu_ms), (42, None));
    /// ```
    pub fn time_on_device<R>(&self, f: impl FnOnce() -> R) -> Result<(R, Option<f64>), Error> {
        match &self.device {
            None => Ok((f(), None)),
            Some(d) => Ok(d.time(f)?),
        }
    }

    /// Device operations performed so far by this context (launches, host synchronisations,
    /// bytes copied each way, allocations); `None` on the CPU. Subtract two snapshots for the
    /// cost of the queries in between.
    ///
    /// ```
    /// use gprox::{Backend, Context};
    /// assert!(Context::new(Backend::Cpu).unwrap().device_ops().is_none());
    /// ```
    pub fn device_ops(&self) -> Option<DeviceOps> {
        self.device.as_ref().map(Device::ops)
    }

    /// Builds the BVH of `mesh` on this backend (every backend builds the same tree); on a
    /// device the model's mesh and tree stay there for its queries.
    pub fn model(&self, mesh: TriMesh) -> Result<Model, Error> {
        match &self.device {
            None => Ok(Model::new(mesh)),
            Some(d) => {
                let bvh = d.build_bvh(&mesh)?;
                let model = Model::from_trusted(mesh, bvh);
                model.resident(d)?;
                Ok(model)
            }
        }
    }

    /// Moves a model's vertices to `positions` (same count) and refits its BVH on this
    /// backend: on a device, the positions are uploaded once and the resident tree refit
    /// there (the host tree is refit only when asked for, see [`Model::bvh`]).
    pub fn update(&self, model: &mut Model, positions: &[Vec3]) -> Result<(), Error> {
        match &self.device {
            None => model.update_positions(positions),
            Some(d) => {
                model.move_positions_for_device(positions)?;
                model.resident(d)?;
                Ok(())
            }
        }
    }

    /// Every intersecting triangle pair `(face of a, face of b)` with `a` placed by `pose_a`
    /// and `b` by `pose_b` (pairs within `opts.margin` with a margin): sorted, no duplicates,
    /// none missed (exact tests in f64 world coordinates).
    pub fn collide_all(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<Vec<[u32; 2]>, Error> {
        match &self.device {
            None => {
                let (oa, ob) = (object(a, pose_a), object(b, pose_b));
                Ok(collide::try_collide_all(&oa, &ob, opts)?)
            }
            Some(d) => on_device(d, a, pose_a, b, pose_b, |oa, ob| {
                d.collide_all_resident(oa, ob, &gpu_options(opts))
            }),
        }
    }

    /// Whether any triangle of `a` intersects any triangle of `b` (or comes within
    /// `opts.margin`); stops at the first certified intersecting pair on every backend.
    pub fn collide_any(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &CollideOptions,
    ) -> Result<bool, Error> {
        match &self.device {
            None => {
                let (oa, ob) = (object(a, pose_a), object(b, pose_b));
                Ok(collide::try_collide_any(&oa, &ob, opts)?)
            }
            Some(d) => on_device(d, a, pose_a, b, pose_b, |oa, ob| {
                d.collide_any_resident(oa, ob, &gpu_options(opts))
            }),
        }
    }

    /// The separation distance between `a` (placed by `pose_a`) and `b` (by `pose_b`), with
    /// the closest points, their faces and certified bounds `lower ≤ d ≤ upper` within the
    /// options' tolerance (or only "below the threshold?" with `opts.threshold`). Each model
    /// keeps an RSS tree for distance (and on a device its 8-wide copy), built on first use and
    /// rebuilt after its positions moved. Distances and bounds are the same on every backend;
    /// where several triangle pairs tie at the minimum, the reported pair may differ.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, query::distance::DistanceOptions, Backend, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.25, 24, 12).unwrap()).unwrap();
    /// let apart = Affine3A::from_translation(Vec3::new(3.0, 0.0, 0.0));
    /// let r = ctx.distance(&m, &Affine3A::IDENTITY, &m, &apart, &DistanceOptions::default()).unwrap();
    /// assert!((r.distance - 0.5).abs() < 0.02 && r.lower <= r.distance);
    /// ```
    pub fn distance(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &DistanceOptions,
    ) -> Result<DistanceResult, Error> {
        let (pa, pb) = (Pose64::from_affine(pose_a), Pose64::from_affine(pose_b));
        match &self.device {
            None => {
                let (ta, tb) = (a.distance_tree(), b.distance_tree());
                let oa = DistanceObject {
                    mesh: a.mesh(),
                    tree: &ta,
                    pose: pa,
                };
                let ob = DistanceObject {
                    mesh: b.mesh(),
                    tree: &tb,
                    pose: pb,
                };
                Ok(distance(&oa, &ob, opts)?)
            }
            Some(d) => {
                let (ra, rb) = (a.resident_distance(d)?, b.resident_distance(d)?);
                let gopts = gprox_cuda::distance::GpuDistanceOptions {
                    abs_tol: opts.abs_tol,
                    rel_tol: opts.rel_tol,
                    threshold: opts.threshold,
                    ..Default::default()
                };
                Ok(d.distance_resident(&ra, &pa, &rb, &pb, &gopts)?)
            }
        }
    }

    /// Continuous self-collision of `model` moving linearly from its current positions to
    /// `end` (one per vertex) over a step: every vertex–face and edge–edge contact of
    /// non-adjacent features with a certified lower bound of its time of impact (never later
    /// than the truth), and the earliest. On a device the end positions are the only upload
    /// and the candidates come back after one synchronisation; the elementary tests run on the
    /// host (the same certified solver as the CPU), so the answers are identical.
    ///
    /// ```
    /// use gprox::{geometry::TriMesh, query::ccd::CcdOptions, Backend, Context};
    /// use glam::Vec3;
    /// // Two separate triangles; the second drops through the first.
    /// let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y,
    ///              Vec3::new(0.2, 0.2, 1.0), Vec3::new(1.2, 0.2, 1.0), Vec3::new(0.2, 1.2, 1.0)];
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(TriMesh::new(p.clone(), vec![[0, 1, 2], [3, 4, 5]]).unwrap()).unwrap();
    /// let end: Vec<Vec3> = p.iter().enumerate()
    ///     .map(|(i, &v)| if i >= 3 { v - 2.0 * Vec3::Z } else { v }).collect();
    /// let r = ctx.ccd_self(&m, &end, &CcdOptions::default()).unwrap();
    /// let toi = r.earliest.unwrap();
    /// assert!(toi.t_lo <= 0.5 && toi.t_lo > 0.49);
    /// ```
    pub fn ccd_self(
        &self,
        model: &Model,
        end: &[Vec3],
        opts: &CcdOptions,
    ) -> Result<MeshCcd, Error> {
        match &self.device {
            None => Ok(ccd_self_with_bvh(
                model.mesh(),
                end,
                model.topology(),
                model.bvh(),
                opts,
            )?),
            Some(d) => {
                let r = model.resident(d)?;
                let balance = gprox_cuda::BalanceOptions::default();
                let (ccd, _) =
                    d.ccd_self_resident(&r, model.mesh(), end, model.topology(), opts, &balance)?;
                Ok(ccd)
            }
        }
    }

    /// Every intersecting pair of faces of `model` that share no vertex (`[a, b]`, `a < b`,
    /// sorted): the model's self-collision, exact, none missed (the model keeps its face
    /// adjacency). On the CPU with normal-cone culling; on a device the resident tree is
    /// traversed against itself with one host synchronisation.
    ///
    /// ```
    /// use gprox::{geometry::TriMesh, Backend, Context};
    /// use glam::Vec3;
    /// // Two triangles crossing each other, sharing no vertex.
    /// let p = vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0),
    ///              Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 1.0), Vec3::new(3.0, 3.0, 0.0)];
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(TriMesh::new(p, vec![[0, 1, 2], [3, 4, 5]]).unwrap()).unwrap();
    /// assert_eq!(ctx.self_collide(&m).unwrap(), vec![[0, 1]]);
    /// ```
    pub fn self_collide(&self, model: &Model) -> Result<Vec<[u32; 2]>, Error> {
        match &self.device {
            None => Ok(self_collide(model.mesh(), model.bvh(), model.topology(), None)?.pairs),
            Some(d) => {
                let r = model.resident(d)?;
                let balance = gprox_cuda::BalanceOptions::default();
                Ok(d.self_collide_resident(&r, model.mesh(), &balance)?.pairs)
            }
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

    /// Every intersecting triangle pair between every two of `bodies` (each a model and its
    /// pose), grouped by body pair `(a < b)`, with the broad phase over the bodies' world
    /// boxes. On a device the broad phase, the traversal of every overlapping body pair and the
    /// triangle tests are one batch of launches with one host synchronisation.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollideOptions, Context};
    /// use glam::{Affine3A, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 16, 8).unwrap()).unwrap();
    /// let at = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    /// let many = ctx
    ///     .collide_many(&[(&m, at(0.0)), (&m, at(9.0)), (&m, at(0.4))], &CollideOptions::default())
    ///     .unwrap();
    /// assert_eq!(many.object_pairs.len(), 1);
    /// assert_eq!((many.object_pairs[0].a, many.object_pairs[0].b), (0, 2));
    /// ```
    pub fn collide_many(
        &self,
        bodies: &[(&Model, Affine3A)],
        opts: &CollideOptions,
    ) -> Result<ManyContacts, Error> {
        match &self.device {
            None => {
                let objects: Vec<_> = bodies.iter().map(|(m, p)| object(m, p)).collect();
                Ok(try_collide_many(&objects, opts)?)
            }
            Some(d) => {
                let resident = bodies
                    .iter()
                    .map(|(m, _)| m.resident(d))
                    .collect::<Result<Vec<_>, Error>>()?;
                let objects: Vec<_> = bodies
                    .iter()
                    .zip(&resident)
                    .map(|((m, p), r)| ResidentObject::new(r, m.mesh(), Pose64::from_affine(p)))
                    .collect();
                Ok(d.collide_world(&objects, &gpu_options(opts))?)
            }
        }
    }
}

fn object<'a>(m: &'a Model, pose: &Affine3A) -> collide::CollisionObject<'a> {
    collide::CollisionObject {
        mesh: m.mesh(),
        bvh: m.bvh(),
        pose: Pose64::from_affine(pose),
    }
}

/// Runs a pair query on `d` over the models' resident copies (made or brought up to date).
fn on_device<R>(
    d: &Device,
    a: &Model,
    pose_a: &Affine3A,
    b: &Model,
    pose_b: &Affine3A,
    query: impl FnOnce(&ResidentObject<'_>, &ResidentObject<'_>) -> gprox_cuda::Result<R>,
) -> Result<R, Error> {
    let (ra, rb) = (a.resident(d)?, b.resident(d)?);
    let oa = ResidentObject::new(&ra, a.mesh(), Pose64::from_affine(pose_a));
    let ob = ResidentObject::new(&rb, b.mesh(), Pose64::from_affine(pose_b));
    Ok(query(&oa, &ob)?)
}

fn gpu_options(opts: &CollideOptions) -> GpuCollideOptions {
    GpuCollideOptions {
        margin: opts.margin,
        ..Default::default()
    }
}
