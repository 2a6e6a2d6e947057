//! Backend choice and the [`Context`] that runs queries on it.

use std::fmt;

use glam::Vec3;
use gprox_cuda::{Device, DeviceOps};
use gprox_geometry::freeform::NurbsSurface;
use gprox_geometry::TriMesh;

use crate::witness::Witnesses;
use crate::{Error, Model, ModelOptions};

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

/// Parses what [`Backend`]'s `Display` writes, plus `auto` ([`Backend::auto`]) and `cuda`
/// (device 0): `cpu`, `cuda`, `cuda:1`, `emulated` (with the `emulated` feature), `auto`.
///
/// ```
/// use gprox::Backend;
/// assert_eq!("cpu".parse::<Backend>().unwrap(), Backend::Cpu);
/// assert_eq!("cuda:1".parse::<Backend>().unwrap(), Backend::Cuda(1));
/// assert!("gpu".parse::<Backend>().is_err());
/// ```
impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(Self::Cpu),
            "auto" => Ok(Self::auto()),
            "cuda" => Ok(Self::Cuda(0)),
            #[cfg(feature = "emulated")]
            "emulated" => Ok(Self::Emulated),
            other => match other.strip_prefix("cuda:").map(str::parse) {
                Some(Ok(i)) => Ok(Self::Cuda(i)),
                _ => Err(format!(
                    "unknown backend `{s}`: expected cpu, cuda, cuda:<index>, auto{}",
                    if cfg!(feature = "emulated") {
                        " or emulated"
                    } else {
                        ""
                    }
                )),
            },
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
    pub(crate) device: Option<Device>,
    /// The last witness pair of each model pair's early-out and distance queries.
    pub(crate) witnesses: Witnesses,
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
    ///
    /// ```
    /// use gprox::{Backend, Context};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// // A device that is not there is a typed error, not a panic.
    /// assert!(Context::new(Backend::Cuda(99)).is_err());
    /// # let _ = ctx;
    /// ```
    pub fn new(backend: Backend) -> Result<Self, Error> {
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(i) => Some(Device::cuda(i)?),
            #[cfg(feature = "emulated")]
            Backend::Emulated => Some(Device::emulated()),
        };
        Ok(Self {
            backend,
            device,
            witnesses: Witnesses::default(),
        })
    }

    /// The backend this context runs on.
    ///
    /// ```
    /// use gprox::{Backend, Context};
    /// assert_eq!(Context::new(Backend::Cpu).unwrap().backend(), Backend::Cpu);
    /// ```
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

    /// The device this context runs on (`None` on the CPU): for what the facade does not
    /// cover, e.g. the kernel profiler ([`Device::set_profiling`]).
    ///
    /// ```
    /// use gprox::{Backend, Context};
    /// assert!(Context::new(Backend::Cpu).unwrap().device().is_none());
    /// assert!(Context::new(Backend::Emulated).unwrap().device().is_some());
    /// ```
    pub fn device(&self) -> Option<&Device> {
        self.device.as_ref()
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
    /// device the model's mesh and tree stay there for its queries. What else a query needs
    /// (distance tree, adjacency, a device copy) the model builds on first use.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, Context, ModelKind};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(torus(1.0, 0.3, 16, 8).unwrap()).unwrap();
    /// assert_eq!((m.kind(), m.face_count(), m.bvh().nodes.len()), (ModelKind::Mesh, 256, 511));
    /// ```
    pub fn model(&self, mesh: TriMesh) -> Result<Model, Error> {
        self.model_with(mesh, &ModelOptions::default())
    }

    /// [`Context::model`] with options (the CPU collision tree).
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, CollisionTree, Context, ModelOptions};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let opts = ModelOptions { collision_tree: CollisionTree::Obb, ..Default::default() };
    /// let m = ctx.model_with(torus(1.0, 0.3, 16, 8).unwrap(), &opts).unwrap();
    /// assert_eq!(m.options().collision_tree, CollisionTree::Obb);
    /// ```
    pub fn model_with(&self, mesh: TriMesh, options: &ModelOptions) -> Result<Model, Error> {
        match &self.device {
            None => Ok(Model::with_options(mesh, options)),
            Some(d) => {
                let bvh = d.build_bvh(&mesh)?;
                let model = Model::from_trusted(mesh, bvh).with(options);
                model.resident(d)?;
                Ok(model)
            }
        }
    }

    /// A freeform model of NURBS / Bézier `surfaces` for the freeform queries (see
    /// [`Model::freeform`]).
    ///
    /// ```
    /// use gprox::{geometry::freeform::teapot, Backend, Context, ModelKind, ModelOptions};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let pot = ctx.freeform_model(teapot(), &ModelOptions::default()).unwrap();
    /// assert_eq!(pot.kind(), ModelKind::Freeform);
    /// ```
    pub fn freeform_model(
        &self,
        surfaces: Vec<NurbsSurface>,
        options: &ModelOptions,
    ) -> Result<Model, Error> {
        Model::freeform(surfaces, options)
    }

    /// A trimmed model ([`Model::trimmed`]): trimmed NURBS faces for the geometry-image
    /// queries ([`Context::image_collide`], [`Context::image_self_collide`]), which run on the
    /// CPU on every backend.
    ///
    /// ```
    /// use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox::{Backend, Context, DVec3, ModelKind, ModelOptions};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, 0.0)).collect();
    /// let face = TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap();
    /// let m = ctx.trimmed_model(vec![face], &ModelOptions::default()).unwrap();
    /// assert_eq!(m.kind(), ModelKind::Trimmed);
    /// ```
    pub fn trimmed_model(
        &self,
        faces: Vec<gprox_geometry::freeform::TrimmedFace>,
        options: &ModelOptions,
    ) -> Result<Model, Error> {
        Model::trimmed(faces, options)
    }

    /// Moves a model's vertices to `positions` (same count) and refits its BVH on this
    /// backend: on a device, the positions are uploaded once and the resident tree refit
    /// there (the host tree is refit only when asked for, see [`Model::bvh`]). The model's
    /// other structures (distance tree, device copies) follow on their next use.
    ///
    /// ```
    /// use gprox::{geometry::scene::torus, Backend, Context};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let mut m = ctx.model(torus(1.0, 0.3, 16, 8).unwrap()).unwrap();
    /// let bigger: Vec<_> = m.mesh().positions().iter().map(|p| *p * 2.0).collect();
    /// ctx.update(&mut m, &bigger).unwrap();
    /// assert!(m.bvh().root_aabb().max[0] > 2.5);
    /// ```
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
}
