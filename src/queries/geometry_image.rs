//! Geometry-image queries between trimmed models (Greß, Guthe, Klein 2006): stenciled geometry
//! images of every face at the query's pose and accuracy, their quad-trees traversed on the CPU.

use glam::{Affine3A, Vec3};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{
    collide_models, self_collide_image, GeometryImage, HierarchyImage, TexelPair,
};

use crate::options::GeometryImageOptions;
use crate::{Context, Error, Model};

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
    /// certified derivative bounds, with a stencil for its trim loops. Runs on the CPU on every
    /// backend.
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
        let pairs = collide_models(&ia, &ib, opts.mode);
        Ok(ImageContacts::new(pairs, &ia, &ib))
    }

    /// The self-intersecting quad pairs of each face of the trimmed `model` under `pose`
    /// (pairs of non-adjacent quads of one face, see [`Context::image_collide`] for the modes;
    /// `opts.normal_test` prunes regions whose normals share a direction). Faces are not
    /// tested against each other. Runs on the CPU on every backend.
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
        let mut pairs: Vec<TexelPair> = imgs
            .iter()
            .flat_map(|(i, h)| self_collide_image(i, h, opts.mode, opts.normal_test))
            .collect();
        pairs.sort_unstable();
        Ok(ImageContacts::new(pairs, &imgs, &imgs))
    }
}
