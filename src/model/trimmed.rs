//! Trimmed models: their faces, and their geometry images at the last pose and accuracy.

use std::sync::{Arc, Mutex};

use gprox_geometry::freeform::{FreeformModel, NurbsSurface, TrimmedFace};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::{GeometryImage, HierarchyImage, ImageSpec};

use super::{Model, ModelKind};
use crate::options::ModelOptions;
use crate::Error;

/// The geometry images of a trimmed model at one pose and accuracy, with their hierarchies.
pub(crate) type Images = Arc<Vec<(GeometryImage, HierarchyImage)>>;

/// The last images of a trimmed model: accuracy, pose, with sign bytes, generation of the
/// surfaces, images.
type CachedImages = (f64, Pose64, bool, u64, Images);

/// What the device path reads of a trimmed model: faces, size, generation, device images.
pub(crate) type TrimmedParts<'a> = (
    &'a [TrimmedFace],
    f64,
    u64,
    &'a Mutex<Option<crate::queries::geometry_image::ResidentImages>>,
);

/// The faces of a trimmed model, their size and their last geometry images.
#[derive(Debug)]
pub(super) struct Trimmed {
    faces: Vec<TrimmedFace>,
    /// The largest side of the control box (accuracies are relative to it).
    unit: f64,
    /// Bumped when the surfaces move ([`Model::set_trimmed_surfaces`]).
    generation: u64,
    /// The last images.
    images: Mutex<Option<CachedImages>>,
    /// Their copies on a device (`crate::queries::geometry_image`).
    resident: Mutex<Option<crate::queries::geometry_image::ResidentImages>>,
}

impl Model {
    /// A trimmed model: trimmed NURBS `faces` (model coordinates) for the geometry-image
    /// queries, whose images are made on first use at the query's pose and accuracy (and
    /// regenerated when either changes). [`Model::mesh`] is the tessellation of the faces'
    /// untrimmed surfaces within `options.tessellation` × the model's size, for display only:
    /// mesh and freeform queries on a trimmed model give [`Error::Unsupported`]. Errors on an
    /// empty list or a surface that cannot be tessellated.
    ///
    /// ```
    /// use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox::{DVec3, Model, ModelKind, ModelOptions};
    /// let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, 0.0)).collect();
    /// let face = TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None)?)?;
    /// let m = Model::trimmed(vec![face], &ModelOptions::default())?;
    /// assert_eq!((m.kind(), m.trimmed_faces().unwrap().len()), (ModelKind::Trimmed, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn trimmed(faces: Vec<TrimmedFace>, options: &ModelOptions) -> Result<Self, Error> {
        let model = FreeformModel::new(faces.iter().map(|f| f.surface().clone()).collect())?;
        let mesh = model.tessellate(options.tessellation * model.unit())?;
        let mut m = Self::with_options(mesh, options);
        m.trimmed = Some(Arc::new(Trimmed {
            faces,
            unit: model.unit(),
            generation: 0,
            images: Mutex::new(None),
            resident: Mutex::new(None),
        }));
        Ok(m)
    }

    /// A trimmed model's faces, size (accuracies are relative to it), surface generation and
    /// the slot of its device images; [`Error::Unsupported`] for other models.
    pub(crate) fn trimmed_parts(
        &self,
        query: &'static str,
        which: &'static str,
    ) -> Result<TrimmedParts<'_>, Error> {
        let Some(t) = self.trimmed.as_ref() else {
            return Err(self.unsupported(ModelKind::Trimmed, query, which));
        };
        Ok((&t.faces, t.unit, t.generation, &t.resident))
    }

    /// Moves the surfaces of a trimmed model's faces (a deforming model's next frame): one
    /// surface per face, in order, each on its face's parameter domain (the trim loops stay).
    /// The images follow on the next query: on the CPU their positions are sampled again, on a
    /// device context only the moved control points go up and the positions are evaluated
    /// there. The display mesh and the model's size stay those of the first surfaces.
    /// [`Error::FaceCount`] for a wrong number of surfaces, [`Error::Trim`] for another domain.
    ///
    /// ```
    /// use gprox::geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox::{DVec3, Model, ModelOptions};
    /// let square = |z: f64| {
    ///     let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, z)).collect();
    ///     NurbsSurface::bezier([1, 1], pts, None).unwrap()
    /// };
    /// let face = TrimmedFace::untrimmed(square(0.0))?;
    /// let mut m = Model::trimmed(vec![face], &ModelOptions::default())?;
    /// m.set_trimmed_surfaces(vec![square(0.5)])?;
    /// assert_eq!(m.trimmed_faces().unwrap()[0].surface().control_point(0, 0).z, 0.5);
    /// assert!(m.set_trimmed_surfaces(vec![]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_trimmed_surfaces(&mut self, surfaces: Vec<NurbsSurface>) -> Result<(), Error> {
        let Some(t) = self.trimmed.as_ref() else {
            return Err(self.unsupported(ModelKind::Trimmed, "set_trimmed_surfaces", "the model"));
        };
        if surfaces.len() != t.faces.len() {
            return Err(Error::FaceCount {
                expected: t.faces.len(),
                got: surfaces.len(),
            });
        }
        let faces = t
            .faces
            .iter()
            .zip(surfaces)
            .map(|(f, s)| f.with_surface(s))
            .collect::<Result<Vec<_>, _>>()?;
        fn take<T>(m: &Mutex<Option<T>>) -> Option<T> {
            m.lock().unwrap_or_else(|e| e.into_inner()).take()
        }
        self.trimmed = Some(Arc::new(Trimmed {
            faces,
            unit: t.unit,
            generation: t.generation + 1,
            images: Mutex::new(take(&t.images)),
            resident: Mutex::new(take(&t.resident)),
        }));
        Ok(())
    }

    /// The faces of a trimmed model (`None` otherwise).
    pub fn trimmed_faces(&self) -> Option<&[TrimmedFace]> {
        self.trimmed.as_ref().map(|t| t.faces.as_slice())
    }

    /// The geometry images of a trimmed model's faces under `pose` at accuracy `epsilon`
    /// relative to the model's size, with their hierarchies (sign bytes when `signs`): the
    /// last ones when pose, accuracy and surfaces are the same, their positions updated (stencil
    /// and padding rule kept) when the pose or the control points moved and the grid still
    /// certifies the accuracy ([`ImageSpec::admits`]), else new ones. [`Error::Unsupported`] for other
    /// models.
    pub(crate) fn geometry_images(
        &self,
        query: &'static str,
        which: &'static str,
        pose: &Pose64,
        epsilon: f64,
        signs: bool,
    ) -> Result<Images, Error> {
        let Some(t) = self.trimmed.as_ref() else {
            return Err(self.unsupported(ModelKind::Trimmed, query, which));
        };
        let eps = epsilon * t.unit;
        let mut slot = t.images.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((e, p, s, g, imgs)) = slot.as_ref() {
            if *e == eps && p == pose && (*s || !signs) && *g == t.generation {
                return Ok(imgs.clone());
            }
        }
        let mut old = slot.take().and_then(|(e, _, s, _, imgs)| {
            (e == eps && s == signs)
                .then(|| Arc::try_unwrap(imgs).ok())
                .flatten()
        });
        let mut out = Vec::with_capacity(t.faces.len());
        for (k, f) in t.faces.iter().enumerate() {
            let id = k as u32;
            let reuse = old.as_mut().and_then(|o| {
                let admits =
                    |(i, _): &(GeometryImage, _)| i.face == id && i.spec.admits(f.surface(), pose);
                let at = o.iter().position(admits)?;
                Some(o.swap_remove(at))
            });
            let (img, h) = match reuse {
                Some((mut img, mut h)) => {
                    img.update_positions(f.surface(), pose)?;
                    h.rebuild(&img);
                    (img, h)
                }
                None => {
                    let Some(spec) = ImageSpec::new(id, f.surface(), pose, eps, None)? else {
                        continue;
                    };
                    let img = GeometryImage::from_spec(id, f, pose, spec)?;
                    let h = if signs {
                        HierarchyImage::build_with_signs(&img)
                    } else {
                        HierarchyImage::build(&img)
                    };
                    (img, h)
                }
            };
            out.push((img, h));
        }
        let imgs = Arc::new(out);
        *slot = Some((eps, *pose, signs, t.generation, imgs.clone()));
        Ok(imgs)
    }
}
