//! Geometry-image queries between trimmed models (Greß, Guthe, Klein 2006): stenciled geometry
//! images of every face at the query's pose and accuracy, their quad-trees traversed on the CPU
//! or, on a device context, by the kernels (`gprox_cuda::geometry_image`) on device images
//! whose positions are evaluated there from the control points and whose hierarchies are
//! rebuilt there; the host keeps only each face's grid and stencil.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use gprox_bvh::aabb::Aabb;
use gprox_cuda::geometry_image::Evaluation;
use gprox_cuda::{Device, DeviceImage};
use gprox_geometry::freeform::{apply_pose, TrimmedFace};
use gprox_geometry::transform::Pose64;
use gprox_query::geometry_image::image::quad_corners;
use gprox_query::geometry_image::traverse::contact_point;
use gprox_query::geometry_image::{
    collide_models, self_collide_image, GeometryImage, HierarchyImage, ImageSpec, TexelPair,
};

use crate::options::GeometryImageOptions;
use crate::{Context, Error, Model};

/// One face of a trimmed model on a device: its grid and stencil on the host, its positions
/// and hierarchy on the device.
#[derive(Debug)]
pub(crate) struct ResidentFace {
    /// The face's grid and stencils, without positions (`GeometryImage::unsampled`).
    shell: GeometryImage,
    /// The device image.
    image: DeviceImage,
    /// A box holding the device hierarchy's root: the posed control points' box (the surface
    /// lies in their hull) grown by twice the leaf padding (which covers the f32 rounding).
    bound: Aabb,
}

/// The device images of a trimmed model at its last query's pose and accuracy.
#[derive(Debug)]
pub(crate) struct ResidentImages {
    /// [`Device::id`] of the device holding them.
    device: u64,
    /// World accuracy, pose and surface generation they show.
    at: (f64, Pose64, u64),
    /// Whether they keep the normal sign bytes.
    signs: bool,
    /// One per face with an image, in face order.
    faces: Arc<Vec<ResidentFace>>,
}

/// The box of `face`'s control points under `pose`, grown by `margin`.
fn control_bound(face: &TrimmedFace, pose: &Pose64, margin: f32) -> Aabb {
    let s = face.surface();
    let [n, m] = s.count();
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for k in 0..n * m {
        let p = apply_pose(pose, s.control_point(k / m, k % m));
        // Rounded outwards to f32.
        let (l, h) = (p.as_vec3(), p.as_vec3());
        lo = lo.min(l - l.abs() * f32::EPSILON);
        hi = hi.max(h + h.abs() * f32::EPSILON);
    }
    let g = Vec3::splat(2.0 * margin);
    Aabb {
        min: (lo - g).into(),
        max: (hi + g).into(),
    }
}

/// The device images of trimmed `model` under `pose` at accuracy `epsilon` (relative to its
/// size), with sign bytes when `signs`: the last ones when nothing changed; else each face's
/// image re-evaluated on the device from its control points (only moved ones go up, nothing
/// for a new pose) while its grid still certifies the accuracy (`ImageSpec::admits`, as the
/// CPU's images), made anew (stencil up) otherwise. No texel is
/// sampled on the host.
fn device_images(
    model: &Model,
    device: &Device,
    (query, which): (&'static str, &'static str),
    pose: &Pose64,
    epsilon: f64,
    signs: bool,
) -> Result<Arc<Vec<ResidentFace>>, Error> {
    let (faces, unit, generation, slot) = model.trimmed_parts(query, which)?;
    let eps = epsilon * unit;
    let at = (eps, *pose, generation);
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    let mut old = None;
    if let Some(r) = slot.take() {
        if r.device == device.id() && (r.signs || !signs) && r.at == at {
            let faces = r.faces.clone();
            *slot = Some(r);
            return Ok(faces);
        }
        if r.device == device.id() && r.signs == signs && r.at.0 == eps {
            old = Arc::try_unwrap(r.faces).ok();
        }
    }
    let mut out = Vec::with_capacity(faces.len());
    // Faces whose grid still certifies the accuracy are re-evaluated together below.
    let mut reused = Vec::with_capacity(faces.len());
    for (k, f) in faces.iter().enumerate() {
        let id = k as u32;
        let reuse = old.as_mut().and_then(|o| {
            let admits =
                |r: &ResidentFace| r.shell.face == id && r.shell.spec.admits(f.surface(), pose);
            let at = o.iter().position(admits)?;
            Some(o.swap_remove(at))
        });
        let face = match reuse {
            Some(r) => {
                reused.push(true);
                r
            }
            None => {
                let Some(spec) = ImageSpec::new(id, f.surface(), pose, eps, None)? else {
                    continue;
                };
                let shell = GeometryImage::unsampled(id, f, spec)?;
                let image = DeviceImage::new_evaluated(device, &shell, f.surface(), pose, signs)?;
                reused.push(false);
                ResidentFace {
                    shell,
                    image,
                    bound: Aabb::EMPTY,
                }
            }
        };
        out.push(face);
    }
    let mut jobs: Vec<Evaluation<'_>> = out
        .iter_mut()
        .zip(&reused)
        .filter(|(_, &again)| again)
        .map(|(r, _)| Evaluation {
            surface: faces[r.shell.face as usize].surface(),
            image: &mut r.image,
            pose,
        })
        .collect();
    DeviceImage::evaluate_all(device, &mut jobs)?;
    for r in out.iter_mut() {
        r.bound = control_bound(&faces[r.shell.face as usize], pose, r.image.face().pad);
    }
    let out = Arc::new(out);
    *slot = Some(ResidentImages {
        device: device.id(),
        at,
        signs,
        faces: out.clone(),
    });
    Ok(out)
}

/// The display points of `pairs` between faces of `a` and of `b` (both under their poses),
/// from the surfaces: only the reported quads' corners are evaluated, bit for bit as the
/// images hold them, so the points equal the CPU's.
fn device_contact_points(
    pairs: &[TexelPair],
    a: (&Model, &Pose64, &[ResidentFace]),
    b: (&Model, &Pose64, &[ResidentFace]),
) -> Result<Vec<Vec3>, Error> {
    let grids = |faces: &[ResidentFace]| -> Vec<(u32, Vec<f64>, Vec<f64>)> {
        faces
            .iter()
            .map(|r| (r.shell.face, r.shell.spec.us(), r.shell.spec.vs()))
            .collect()
    };
    let (ga, gb) = (grids(a.2), grids(b.2));
    let corners = |m: &Model, pose: &Pose64, g: &[(u32, Vec<f64>, Vec<f64>)], face: u32, q| {
        let (_, us, vs) = g
            .iter()
            .find(|x| x.0 == face)
            .expect("a reported face has an image");
        let surface = m
            .trimmed_faces()
            .expect("device images come from a trimmed model")[face as usize]
            .surface();
        quad_corners(surface, pose, us, vs, q)
    };
    let quad = |q: [u32; 2]| [q[0] as usize, q[1] as usize];
    Ok(pairs
        .iter()
        .map(|p| {
            contact_point(
                corners(a.0, a.1, &ga, p.face_a, quad(p.quad_a)),
                corners(b.0, b.1, &gb, p.face_b, quad(p.quad_b)),
            )
        })
        .collect())
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
    /// faces whose root boxes may overlap) on device images whose positions are evaluated there
    /// from the control points: per frame only moved control points go up (32 B each, none
    /// for a new pose, see [`Model::set_trimmed_surfaces`]), no texel is sampled on the host,
    /// and the display points are evaluated on the host for the reported quads only (exact
    /// mode reads the positions back for its triangle test: 12 B per texel).
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
        let same = std::ptr::eq(a, b) && pa == pb;
        let Some(d) = &self.device else {
            let ia = a.geometry_images("image_collide", "model a", &pa, opts.epsilon, false)?;
            let ib = if same {
                ia.clone()
            } else {
                b.geometry_images("image_collide", "model b", &pb, opts.epsilon, false)?
            };
            let pairs = collide_models(&ia, &ib, opts.mode);
            return Ok(ImageContacts::new(pairs, &ia, &ib));
        };
        let q = "image_collide";
        let da = device_images(a, d, (q, "model a"), &pa, opts.epsilon, false)?;
        let db = if same {
            da.clone()
        } else {
            device_images(b, d, (q, "model b"), &pb, opts.epsilon, false)?
        };
        let mut pairs = Vec::new();
        for fa in da.iter() {
            for fb in db.iter() {
                if fa.bound.overlaps(&fb.bound) {
                    d.image_collide_into(
                        (&fa.shell, &fa.image),
                        (&fb.shell, &fb.image),
                        opts.mode,
                        &mut pairs,
                    )?;
                }
            }
        }
        pairs.sort_unstable();
        let points = device_contact_points(&pairs, (a, &pa, &da), (b, &pb, &db))?;
        Ok(ImageContacts { pairs, points })
    }

    /// The self-intersecting quad pairs of each face of the trimmed `model` under `pose`
    /// (pairs of non-adjacent quads of one face, see [`Context::image_collide`] for the modes;
    /// `opts.normal_test` prunes regions whose normals share a direction). Faces are not
    /// tested against each other. On a device context by the kernels on device-evaluated images
    /// as in [`Context::image_collide`] (one synchronisation per face).
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
        let (q, which) = ("image_self_collide", "the model");
        let Some(d) = &self.device else {
            let imgs = model.geometry_images(q, which, &p, opts.epsilon, opts.normal_test)?;
            let mut pairs: Vec<TexelPair> = imgs
                .iter()
                .flat_map(|(i, h)| self_collide_image(i, h, opts.mode, opts.normal_test))
                .collect();
            pairs.sort_unstable();
            return Ok(ImageContacts::new(pairs, &imgs, &imgs));
        };
        let dev = device_images(model, d, (q, which), &p, opts.epsilon, opts.normal_test)?;
        let mut pairs = Vec::new();
        for f in dev.iter() {
            pairs.extend(d.image_self_collide(
                (&f.shell, &f.image),
                opts.mode,
                opts.normal_test,
            )?);
        }
        pairs.sort_unstable();
        let points = device_contact_points(&pairs, (model, &p, &dev), (model, &p, &dev))?;
        Ok(ImageContacts { pairs, points })
    }
}
