//! The `image-collide` subcommand: geometry-image collision (Greß, Guthe, Klein 2006) between
//! two trimmed NURBS models, or self-collision of one, with a picture of the contact texels.

use std::path::Path;
use std::time::Instant;

use gprox::geometry::freeform::trimmed::{load_trimmed_face, load_trimmed_model};
use gprox::geometry::freeform::TrimmedFace;
use gprox::geometry::transform::Pose64;
use gprox::render::Picture;
use gprox::{Affine3A, Context, GeometryImageOptions, ImageContacts, ImageMode, ModelOptions};
use serde_json::json;

use super::{check_picture_path, input, ms, query_error, save_picture, Failure};

/// How many pairs the human-readable output lists.
const LISTED: usize = 10;
/// At most this many contact points are drawn (evenly spread over the list).
const DRAWN: usize = 20_000;

/// The trimmed faces of `path`: a face file (the schema of `shared/data/trimmed`), a
/// `model.json` listing face files, or a folder holding one.
pub fn load_faces(path: &Path) -> Result<Vec<TrimmedFace>, Failure> {
    let model = path.is_dir() || path.file_name().is_some_and(|n| n == "model.json");
    if model {
        return load_trimmed_model(path).map(|m| m.faces).map_err(input);
    }
    load_trimmed_face(path).map(|f| vec![f]).map_err(input)
}

/// What `gprox image-collide` was asked.
pub struct ImageArgs<'a> {
    /// First model.
    pub a: &'a Path,
    /// Second model (`None`: self-collision of the first).
    pub b: Option<&'a Path>,
    /// Poses.
    pub pose_a: Affine3A,
    /// Pose of B.
    pub pose_b: Affine3A,
    /// ε relative to each model's size.
    pub epsilon: f64,
    /// Exact quad triangles instead of overlapping boxes.
    pub exact: bool,
    /// Machine-readable output.
    pub json: bool,
    /// Picture of the contact texels.
    pub render: Option<&'a Path>,
}

/// `gprox image-collide A [B]`: the quad pairs of the two models' geometry images that may
/// touch (or of A with itself), a summary, and optionally a picture with the contacts drawn.
pub fn image_cmd(ctx: &Context, args: &ImageArgs<'_>) -> Result<(), Failure> {
    if let Some(r) = args.render {
        check_picture_path(r)?;
    }
    if !(args.epsilon.is_finite() && args.epsilon > 0.0) {
        return Err(input(format!(
            "--epsilon must be finite and > 0, got {}",
            args.epsilon
        )));
    }
    let t = Instant::now();
    let opts = ModelOptions::default();
    let model = |p: &Path| {
        let faces = load_faces(p)?;
        ctx.trimmed_model(faces, &opts)
            .map_err(|e| input(format!("{}: {e}", p.display())))
    };
    let a = model(args.a)?;
    let b = args.b.map(model).transpose()?;
    let load_ms = ms(t);
    let o = GeometryImageOptions {
        epsilon: args.epsilon,
        mode: if args.exact {
            ImageMode::Exact
        } else {
            ImageMode::Approximate
        },
        normal_test: true,
    };
    let t = Instant::now();
    let hits: ImageContacts = match &b {
        Some(b) => ctx.image_collide(&a, &args.pose_a, b, &args.pose_b, &o),
        None => ctx.image_self_collide(&a, &args.pose_a, &o),
    }
    .map_err(query_error)?;
    let query_ms = ms(t);
    let faces_hit = |side_a: bool| {
        let mut f: Vec<u32> = hits
            .pairs
            .iter()
            .map(|p| if side_a { p.face_a } else { p.face_b })
            .collect();
        f.dedup();
        f.sort_unstable();
        f.dedup();
        f
    };
    if args.json {
        let pairs: Vec<_> = hits
            .pairs
            .iter()
            .zip(&hits.points)
            .map(|(p, x)| {
                json!({"face_a": p.face_a, "quad_a": p.quad_a, "face_b": p.face_b,
                       "quad_b": p.quad_b, "point": x.to_array()})
            })
            .collect();
        let out = json!({
            "mode": if args.exact { "exact" } else { "approximate" },
            "self": b.is_none(),
            "epsilon": args.epsilon,
            "count": hits.pairs.len(),
            "faces_a": faces_hit(true),
            "faces_b": faces_hit(false),
            "pairs": pairs,
            "load_ms": load_ms,
            "query_ms": query_ms,
        });
        println!("{out}");
    } else {
        let what = if b.is_some() {
            "quad pairs"
        } else {
            "self-intersecting quad pairs"
        };
        println!(
            "{} {what} ({} mode, eps {} of each model's size), faces of A {:?}, faces of B {:?}; \
             load {load_ms:.1} ms, query {query_ms:.1} ms",
            hits.pairs.len(),
            if args.exact { "exact" } else { "approximate" },
            args.epsilon,
            faces_hit(true),
            faces_hit(false),
        );
        for (p, x) in hits.pairs.iter().zip(&hits.points).take(LISTED) {
            println!(
                "  face {} quad {:?} - face {} quad {:?} at ({:.6}, {:.6}, {:.6})",
                p.face_a, p.quad_a, p.face_b, p.quad_b, x.x, x.y, x.z
            );
        }
    }
    if let Some(r) = args.render {
        let mut pic = Picture::new(800, 600);
        pic.add_mesh(
            a.mesh(),
            &Pose64::from_affine(&args.pose_a),
            [150, 170, 200],
            &[],
        );
        if let Some(b) = &b {
            pic.add_mesh(
                b.mesh(),
                &Pose64::from_affine(&args.pose_b),
                [200, 180, 140],
                &[],
            );
        }
        let step = hits.points.len().div_ceil(DRAWN).max(1);
        for p in hits.points.iter().step_by(step) {
            pic.add_dot_colored(p.as_dvec3(), Picture::HIGHLIGHT);
        }
        save_picture(&pic, r)?;
    }
    Ok(())
}
