//! Backend choice and the [`Context`] that runs queries on it.

use std::fmt;

use glam::{Affine3A, Vec3};
use gprox_cuda::{Device, GpuCollideOptions};
use gprox_geometry::transform::Pose64;
use gprox_geometry::TriMesh;
use gprox_query::collide::{self, CollideOptions};

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

    /// Builds the BVH of `mesh` on this backend (every backend builds the same tree).
    pub fn model(&self, mesh: TriMesh) -> Result<Model, Error> {
        match &self.device {
            None => Ok(Model::new(mesh)),
            Some(d) => {
                let bvh = d.build_bvh(&mesh)?;
                Ok(Model::from_trusted(mesh, bvh))
            }
        }
    }

    /// Moves a model's vertices to `positions` (same count) and refits its BVH on this backend.
    pub fn update(&self, model: &mut Model, positions: &[Vec3]) -> Result<(), Error> {
        match &self.device {
            None => model.update_positions(positions),
            Some(d) => {
                let (mesh, bvh) = model.parts_mut();
                mesh.copy_positions_from(positions)?;
                let boxes = d.triangle_aabbs(mesh)?;
                d.refit(bvh, &boxes)?;
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
            Some(d) => {
                let (oa, ob) = (gpu_object(a, pose_a), gpu_object(b, pose_b));
                let gopts = GpuCollideOptions {
                    margin: opts.margin,
                    ..Default::default()
                };
                Ok(d.collide_all(&oa, &ob, &gopts)?)
            }
        }
    }

    /// Whether any triangle of `a` intersects any triangle of `b` (early out on the CPU).
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
            // No early-out kernel yet: the full pair set, then "is it empty".
            Some(_) => Ok(!self.collide_all(a, pose_a, b, pose_b, opts)?.is_empty()),
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

fn gpu_object<'a>(m: &'a Model, pose: &Affine3A) -> gprox_cuda::CollisionObject<'a> {
    gprox_cuda::CollisionObject {
        mesh: m.mesh(),
        bvh: m.bvh(),
        pose: Pose64::from_affine(pose),
    }
}
