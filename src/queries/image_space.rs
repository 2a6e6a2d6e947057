//! Image-space intersection volume between two closed mesh models (Hoff, Zaferakis, Lin,
//! Manocha 2002): the samples of a lattice inside both, with per-sample penetration depths and
//! directions.

use glam::Affine3A;
use gprox_query::image_space::{
    distance_field, intersect, separation, CellBox, DistanceField, ImageSpaceOptions, Intersection,
    IntersectionSweep, Lattice, Separation,
};

use super::{aabb_object, meshes, on_device};
use crate::{Context, Error, Model};

impl Context {
    /// The intersection volume of the closed meshes `a` and `b` sampled on a lattice whose
    /// cells are no wider than the tolerance allows (`options.tolerance`: no point is farther
    /// than it from a sample): the samples strictly inside both, the volume estimate with a
    /// rigorous error bound, and per sample the nearest point, face and distance on both
    /// surfaces — the penetration depth and direction of every sampled point of `A ∩ B` — with
    /// one contact per connected region. See `gprox::query::image_space` and
    /// `docs/image-space.md`.
    ///
    /// On a device context the inside classification of the samples (§5.1, one thread per ray
    /// column) and their depths (§5.4, one thread per sample and mesh) run on the device; the
    /// columns its certified filters cannot decide and the samples whose tree walk overflows
    /// are computed on the CPU. The answer is the CPU's exactly, sample for sample ([`Context::runs_on`]`(`[`crate::Query::IntersectionVolume`]`)`).
    ///
    /// Errors ([`Error::ImageSpace`]) when a mesh is not closed and consistently oriented,
    /// the tolerance is not positive, or the sweep would need more than `options.max_cells`
    /// cells.
    ///
    /// ```
    /// use gprox::{Affine3A, Backend, Context, ImageSpaceOptions, Vec3};
    /// use gprox::geometry::scene::torus;
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let t = ctx.model(torus(1.0, 0.3, 24, 12).unwrap()).unwrap();
    /// // B stands upright through A's ring: the tubes cross twice.
    /// let b_pose = Affine3A::from_rotation_x(std::f32::consts::FRAC_PI_2);
    /// let r = ctx
    ///     .intersection_volume(&t, &Affine3A::IDENTITY, &t, &b_pose, &ImageSpaceOptions::new(0.04))
    ///     .unwrap();
    /// assert_eq!(r.contacts().len(), 2);
    /// let s = &r.samples()[0];
    /// // Every sample is inside both tubes (radius 0.3): depths below the radius.
    /// assert!(s.depth_in_a() <= 0.3 && s.depth_in_b() <= 0.3);
    /// assert!((r.volume() - 2.0 * (16.0 / 3.0) * 0.027).abs() <= r.volume_bound() + 0.05);
    /// ```
    pub fn intersection_volume(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        options: &ImageSpaceOptions,
    ) -> Result<Intersection, Error> {
        meshes("intersection_volume", a, b)?;
        let (oa, ob) = (aabb_object(a, pose_a), aabb_object(b, pose_b));
        let Some(d) = &self.device else {
            return Ok(intersect(&oa, &ob, options)?);
        };
        let sweep = IntersectionSweep::new(&oa, &ob, options)?;
        if sweep.tiles().is_empty() {
            // The meshes cannot meet: nothing to classify, so the resident copies are not even
            // brought up to date (a deformed model's positions go up at its next device query).
            return Ok(sweep.classify(&[])?.finish(None)?.intersection);
        }
        // Classification and depths on the device: one synchronisation per batch of tiles and
        // one per batch of samples (one each for the deforming tori).
        let done = on_device(d, a, pose_a, b, pose_b, |ra, rb| {
            let (codes, _) = d.image_space_codes(ra, rb, &sweep)?;
            let samples = match sweep.classify(&codes) {
                Ok(s) => s,
                Err(e) => return Ok(Err(e)),
            };
            let near = if samples.is_empty() {
                None
            } else {
                let cells = samples.cells();
                Some(d.image_space_depths(ra, rb, samples.lattice(), &cells)?.0)
            };
            Ok(Ok((samples, near)))
        })?;
        let (samples, near) = done?;
        let near = near.as_ref().map(|[na, nb]| [&na[..], &nb[..]]);
        Ok(samples.finish(near)?.intersection)
    }
}

impl Context {
    /// The signed distance field of the closed mesh `model` (placed by `pose`) at the samples
    /// (cell centres) of `cells` of `lattice`: per sample the winding number, the exact
    /// distance to the surface, the closest point and face, [`signed_distance`] and
    /// [`gradient`] (§5.2–5.3 of Hoff et al.). Runs on the CPU on every backend.
    ///
    /// [`signed_distance`]: gprox_query::image_space::DistanceSample::signed_distance
    /// [`gradient`]: gprox_query::image_space::DistanceSample::gradient
    ///
    /// ```
    /// use gprox::{Affine3A, Backend, Context, DVec3, ImageSpaceOptions, Lattice};
    /// use gprox::query::image_space::CellBox;
    /// use gprox::geometry::scene::torus;
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let t = ctx.model(torus(1.0, 0.3, 48, 24).unwrap()).unwrap();
    /// // One sample at (1, 0, 0.05): inside the tube, ~0.25 from its surface.
    /// let lattice = Lattice { origin: DVec3::new(0.95, -0.05, 0.0), spacing: 0.1 };
    /// let cells = CellBox { lo: [0, 0, 0], hi: [1, 1, 1] };
    /// let f = ctx
    ///     .distance_field(&t, &Affine3A::IDENTITY, &lattice, cells, &ImageSpaceOptions::new(0.1))
    ///     .unwrap();
    /// assert!((f.samples[0].signed_distance() + 0.25).abs() < 0.01);
    /// ```
    pub fn distance_field(
        &self,
        model: &Model,
        pose: &Affine3A,
        lattice: &Lattice,
        cells: CellBox,
        options: &ImageSpaceOptions,
    ) -> Result<DistanceField, Error> {
        model.require(crate::ModelKind::Mesh, "distance_field", "the model")?;
        Ok(distance_field(
            &aabb_object(model, pose),
            lattice,
            cells,
            options,
        )?)
    }

    /// Closest points and separation direction of the closed meshes `a` and `b` from the
    /// image-space samples (§5.4; `None` when some sample lies inside both): a real pair of
    /// surface points, so the distance is never below the true one and within about a cell
    /// diagonal of it. [`Context::distance`] is exact and cheaper; this exists for
    /// completeness. Runs on the CPU on every backend.
    ///
    /// ```
    /// use gprox::{Affine3A, Backend, Context, ImageSpaceOptions, Vec3};
    /// use gprox::geometry::scene::torus;
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let t = ctx.model(torus(1.0, 0.3, 48, 24).unwrap()).unwrap();
    /// let apart = Affine3A::from_translation(Vec3::new(2.8, 0.0, 0.0));
    /// let s = ctx
    ///     .sampled_separation(&t, &Affine3A::IDENTITY, &t, &apart, &ImageSpaceOptions::new(0.02))
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(s.distance >= 0.19 && s.distance <= 0.2 + 0.03);
    /// ```
    pub fn sampled_separation(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        options: &ImageSpaceOptions,
    ) -> Result<Option<Separation>, Error> {
        meshes("sampled_separation", a, b)?;
        let (oa, ob) = (aabb_object(a, pose_a), aabb_object(b, pose_b));
        Ok(separation(&oa, &ob, options)?)
    }
}
