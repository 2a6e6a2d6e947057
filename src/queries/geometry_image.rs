//! Geometry-image queries between trimmed models (Greß, Guthe, Klein 2006): stenciled geometry
//! images of every face at the query's pose and accuracy, their quad-trees traversed on the CPU
//! or, on a device context, by the kernels (`gprox_cuda::geometry_image`) on device copies of
//! the images whose hierarchies are rebuilt there from the positions.

use std::sync::{Arc, Mutex, Weak};

use glam::{Affine3A, Vec3};
use gprox_cuda::{Device, DeviceImage};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{
    collide_models, self_collide_image, GeometryImage, HierarchyImage, TexelPair,
};

use crate::model::Images;
use crate::options::GeometryImageOptions;
use crate::{Context, Error, Model};

/// The device copies of a trimmed model's last images.
#[derive(Debug)]
pub(crate) struct ResidentImages {
    /// [`Device::id`] of the device holding them.
    device: u64,
    /// The host images they were made or updated from.
    source: Weak<Vec<(GeometryImage, HierarchyImage)>>,
    /// One per face image, in the same order.
    images: Arc<Vec<DeviceImage>>,
}

/// The device copies of `imgs` (the current images of `model`): reused when made from them,
/// updated in place (positions up, hierarchies rebuilt on the device, no synchronisation) when
/// only the positions changed, made anew otherwise.
fn resident_images(
    slot: &Mutex<Option<ResidentImages>>,
    device: &Device,
    imgs: &Images,
    signs: bool,
) -> Result<Arc<Vec<DeviceImage>>, Error> {
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = slot.as_mut().filter(|r| r.device == device.id()) {
        if std::ptr::eq(r.source.as_ptr(), Arc::as_ptr(imgs))
            && r.images.iter().all(|d| d.has_signs() || !signs)
        {
            return Ok(r.images.clone());
        }
        if let Some(v) = Arc::get_mut(&mut r.images) {
            let fits = v.len() == imgs.len()
                && v.iter()
                    .zip(imgs.iter())
                    .all(|(d, (i, _))| d.fits(i) && (d.has_signs() || !signs));
            if fits {
                for (d, (i, _)) in v.iter_mut().zip(imgs.iter()) {
                    d.update(device, i)?;
                }
                r.source = Arc::downgrade(imgs);
                return Ok(r.images.clone());
            }
        }
    }
    let images = Arc::new(
        imgs.iter()
            .map(|(i, _)| DeviceImage::new(device, i, signs))
            .collect::<Result<Vec<_>, _>>()?,
    );
    *slot = Some(ResidentImages {
        device: device.id(),
        source: Arc::downgrade(imgs),
        images: images.clone(),
    });
    Ok(images)
}

/// The device images of trimmed `model` for its current images `imgs`.
fn device_images(
    model: &Model,
    device: &Device,
    imgs: &Images,
    signs: bool,
) -> Result<Arc<Vec<DeviceImage>>, Error> {
    let slot = model
        .resident_images_slot()
        .expect("geometry_images succeeded, so the model is trimmed");
    resident_images(slot, device, imgs, signs)
}

/// The texel pairs of a geometry-image query with a display point for each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImageContacts {
    /// Quad pairs (face and quad `[i, j]` on each side), sorted.
    pub pairs: Vec<TexelPair>,
    /// For each pair, the middle of the two quads' centres (world space).
    pub points: Vec<Vec3>,
}

/// The image of `face` among `imgs` (reported faces always have one).
fn image_of(imgs: &[(GeometryImage, HierarchyImage)], face: u32) -> &GeometryImage {
    &imgs
        .iter()
        .find(|(i, _)| i.face == face)
        .expect("a reported face has an image")
        .0
}

impl ImageContacts {
    fn new(
        pairs: Vec<TexelPair>,
        a: &[(GeometryImage, HierarchyImage)],
        b: &[(GeometryImage, HierarchyImage)],
    ) -> Self {
        let points = pairs
            .iter()
            .map(|p| p.contact(image_of(a, p.face_a), image_of(b, p.face_b)))
            .collect();
        Self { pairs, points }
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl Context {
    /// The quad pairs of the trimmed models `a` and `b` ([`Model::trimmed`]) that may touch:
    /// in approximate mode every pair of quads whose padded boxes overlap (their texels are
    /// within 2ε and no contact is missed), in exact mode the quads whose triangles intersect;
    /// ε is `opts.epsilon` times each model's size. Each face is sampled on a grid sized from
    /// certified derivative bounds, with a stencil for its trim loops. On a device context the
    /// hierarchies are built and traversed by the kernels (one host synchronisation per pair of
    /// faces whose root boxes overlap); the images themselves are sampled on the CPU.
    ///
    /// ```
    /// use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox::{Affine3A, Backend, Context, DVec3, GeometryImageOptions, ModelOptions, Vec3};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let square = |z: f64| {
    ///     let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, z)).collect();
    ///     TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap()
    /// };
    /// let a = ctx.trimmed_model(vec![square(0.0)], &ModelOptions::default()).unwrap();
    /// // The same square stood upright through the middle of the first.
    /// let upright = Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.5))
    ///     * Affine3A::from_rotation_y(std::f32::consts::FRAC_PI_2);
    /// let opts = GeometryImageOptions { epsilon: 1e-2, ..Default::default() };
    /// let hits = ctx.image_collide(&a, &Affine3A::IDENTITY, &a, &upright, &opts).unwrap();
    /// assert!(!hits.is_empty());
    /// assert!(hits.points.iter().all(|p| (p.x - 0.5).abs() < 0.05 && p.z.abs() < 0.05));
    /// ```
    pub fn image_collide(
        &self,
        a: &Model,
        pose_a: &Affine3A,
        b: &Model,
        pose_b: &Affine3A,
        opts: &GeometryImageOptions,
    ) -> Result<ImageContacts, Error> {
        let (pa, pb) = (Pose64::from_affine(pose_a), Pose64::from_affine(pose_b));
        let ia = a.geometry_images("image_collide", "model a", &pa, opts.epsilon, false)?;
        let ib = if std::ptr::eq(a, b) && pa == pb {
            ia.clone()
        } else {
            b.geometry_images("image_collide", "model b", &pb, opts.epsilon, false)?
        };
        let pairs = match &self.device {
            None => collide_models(&ia, &ib, opts.mode),
            Some(d) => {
                let da = device_images(a, d, &ia, false)?;
                let db = device_images(b, d, &ib, false)?;
                let mut pairs = Vec::new();
                for (i, (ai, ah)) in ia.iter().enumerate() {
                    for (j, (bi, bh)) in ib.iter().enumerate() {
                        if ah.root().overlaps(&bh.root()) {
                            pairs.extend(d.image_collide((ai, &da[i]), (bi, &db[j]), opts.mode)?);
                        }
                    }
                }
                pairs.sort_unstable();
                pairs
            }
        };
        Ok(ImageContacts::new(pairs, &ia, &ib))
    }

    /// The self-intersecting quad pairs of each face of the trimmed `model` under `pose`
    /// (pairs of non-adjacent quads of one face, see [`Context::image_collide`] for the modes;
    /// `opts.normal_test` prunes regions whose normals share a direction). Faces are not
    /// tested against each other. On a device context by the kernels (one synchronisation per
    /// face).
    ///
    /// ```
    /// use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox::{Affine3A, Backend, Context, DVec3, GeometryImageOptions, ModelOptions};
    /// let ctx = Context::new(Backend::Cpu).unwrap();
    /// let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, 0.0)).collect();
    /// let flat = TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap();
    /// let m = ctx.trimmed_model(vec![flat], &ModelOptions::default()).unwrap();
    /// let opts = GeometryImageOptions { epsilon: 1e-2, ..Default::default() };
    /// assert!(ctx.image_self_collide(&m, &Affine3A::IDENTITY, &opts).unwrap().is_empty());
    /// ```
    pub fn image_self_collide(
        &self,
        model: &Model,
        pose: &Affine3A,
        opts: &GeometryImageOptions,
    ) -> Result<ImageContacts, Error> {
        let p = Pose64::from_affine(pose);
        let imgs = model.geometry_images(
            "image_self_collide",
            "the model",
            &p,
            opts.epsilon,
            opts.normal_test,
        )?;
        let mut pairs: Vec<TexelPair> = match &self.device {
            None => imgs
                .iter()
                .flat_map(|(i, h)| self_collide_image(i, h, opts.mode, opts.normal_test))
                .collect(),
            Some(d) => {
                let dev = device_images(model, d, &imgs, opts.normal_test)?;
                let mut pairs = Vec::new();
                for ((i, _), di) in imgs.iter().zip(dev.iter()) {
                    pairs.extend(d.image_self_collide((i, di), opts.mode, opts.normal_test)?);
                }
                pairs
            }
        };
        pairs.sort_unstable();
        Ok(ImageContacts::new(pairs, &imgs, &imgs))
    }
}
