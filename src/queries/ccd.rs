//! Continuous collision over one time step: two moving models, or one deforming model
//! against itself.

use glam::{Affine3A, Vec3};
use gprox_query::ccd::{ccd_pair, ccd_self_with_bvh, CcdOptions, MeshCcd};

use super::self_collide::welded;
use crate::{Context, Error, Model, ModelKind};

/// How a model moves over a step: from `start` to `end` (poses), its vertices optionally
/// moving to `end_positions` (model coordinates) as well. Every vertex moves on a straight
/// line from `start · p` to `end · p_end`, the motion linear CCD certifies; a rotation is
/// thereby taken as the chord between its two poses.
#[derive(Clone, Copy, Debug)]
pub struct Motion<'a> {
    /// Pose at the start of the step.
    pub start: Affine3A,
    /// Pose at the end of the step.
    pub end: Affine3A,
    /// Vertex positions at the end of the step (model coordinates, one per vertex); `None`:
    /// the model is rigid.
    pub end_positions: Option<&'a [Vec3]>,
}

impl<'a> Motion<'a> {
    /// A rigid motion from `start` to `end`.
    pub fn rigid(start: Affine3A, end: Affine3A) -> Self {
        Self {
            start,
            end,
            end_positions: None,
        }
    }

    /// A deformation in place: the vertices move to `end_positions`, the pose stays `pose`.
    pub fn deform(pose: Affine3A, end_positions: &'a [Vec3]) -> Self {
        Self {
            start: pose,
            end: pose,
            end_positions: Some(end_positions),
        }
    }

    /// World positions at the start and the end of the step (f32, as the mesh stores them;
    /// exact when the poses are the identity).
    fn world(&self, model: &Model) -> (Vec<Vec3>, Vec<Vec3>) {
        let place = |pose: &Affine3A, p: &[Vec3]| -> Vec<Vec3> {
            if *pose == Affine3A::IDENTITY {
                p.to_vec()
            } else {
                p.iter().map(|&v| pose.transform_point3(v)).collect()
            }
        };
        let now = model.mesh().positions();
        let end = self.end_positions.unwrap_or(now);
        (place(&self.start, now), place(&self.end, end))
    }
}

impl Context {
    /// Continuous collision of two models over one step, each moving by its [`Motion`]: every
    /// vertex–face, face–vertex and edge–edge pair that may touch during the step, with a
    /// certified lower bound of its time of impact (never later than the truth), and the
    /// earliest. Runs on the CPU on every backend ([`Context::capabilities`]).
    ///
    /// ```
    /// use gprox::{geometry::TriMesh, query::ccd::CcdOptions, Backend, Context, Motion};
    /// use glam::{Affine3A, Vec3};
    /// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let m = ctx.model(tri).unwrap();
    /// let still = Motion::rigid(Affine3A::IDENTITY, Affine3A::IDENTITY);
    /// // B falls from z = 1 to z = -1 through A: first contact half-way.
    /// let at = |z: f32| Affine3A::from_translation(Vec3::new(0.1, 0.1, z));
    /// let falling = Motion::rigid(at(1.0), at(-1.0));
    /// let r = ctx.ccd(&m, &still, &m, &falling, &CcdOptions::default()).unwrap();
    /// let toi = r.earliest.unwrap();
    /// assert!(toi.t_lo <= 0.5 && toi.t_lo > 0.49);
    /// ```
    pub fn ccd(
        &self,
        a: &Model,
        motion_a: &Motion<'_>,
        b: &Model,
        motion_b: &Motion<'_>,
        opts: &CcdOptions,
    ) -> Result<MeshCcd, Error> {
        a.require(ModelKind::Mesh, "ccd", "model a")?;
        b.require(ModelKind::Mesh, "ccd", "model b")?;
        let (a0, a1) = motion_a.world(a);
        let (b0, b1) = motion_b.world(b);
        let mut ma = a.mesh().clone();
        ma.copy_positions_from(&a0)?;
        let mut mb = b.mesh().clone();
        mb.copy_positions_from(&b0)?;
        Ok(ccd_pair(
            &ma,
            &a1,
            a.topology(),
            &mb,
            &b1,
            b.topology(),
            opts,
        )?)
    }

    /// Continuous self-collision of `model` moving linearly from its current positions to
    /// `end` (one per vertex) over a step: every vertex–face and edge–edge contact of
    /// non-adjacent features with a certified lower bound of its time of impact (never later
    /// than the truth), and the earliest. On a device the end positions are the only upload,
    /// the candidates and the certified elementary tests run there and only the contacts come
    /// back after one synchronisation. Errors with [`Error::Unwelded`] on an unwelded mesh.
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
        welded("ccd_self", model)?;
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
}
