//! Loading a model file as a mesh or freeform model on the chosen backend; the two models
//! of a pair subcommand.

use std::path::Path;
use std::time::Instant;

use gprox::geometry::freeform::io::{load_bpt, load_nurbs_json};
use gprox::geometry::io::load_mesh;
use gprox::{Context, Model, ModelKind, ModelOptions};

use super::{input, ms, query_error, Failure, MeshPair};

/// The model in `path` built on `ctx`, and the build time (ms): a NURBS JSON (`.json`) or
/// Bézier patch (`.bpt`) file gives a freeform model (its tessellation with `tessellate`),
/// any other a mesh (OBJ, STL, PLY). Bad files are input errors (exit status 2).
pub fn load(ctx: &Context, path: &Path, tessellate: bool) -> Result<(Model, f64), Failure> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let surfaces = match ext.as_deref() {
        Some("json") => Some(vec![load_nurbs_json(path).map_err(input)?]),
        Some("bpt") => Some(load_bpt(path).map_err(input)?),
        _ => None,
    };
    let t = Instant::now();
    let model = match surfaces {
        Some(s) => {
            let m = ctx
                .freeform_model(s, &ModelOptions::default())
                .map_err(|e| input(format!("{}: {e}", path.display())))?;
            if tessellate {
                ctx.model(m.mesh().clone()).map_err(query_error)?
            } else {
                m
            }
        }
        None => {
            let mesh = load_mesh(path).map_err(input)?;
            ctx.model(mesh).map_err(query_error)?
        }
    };
    Ok((model, ms(t)))
}

/// The two models of a pair subcommand.
pub struct Models {
    /// Model A.
    pub a: Model,
    /// Model B.
    pub b: Model,
    /// Time to build both (trees on the context's backend), ms.
    pub build_ms: f64,
}

impl Models {
    /// Whether both are freeform models (the freeform queries answer).
    pub fn freeform(&self) -> bool {
        self.a.kind() == ModelKind::Freeform && self.b.kind() == ModelKind::Freeform
    }

    /// The text report's first lines: both files and their triangle counts.
    pub fn header(&self, pair: &MeshPair) -> String {
        format!(
            "A: {} ({} triangles)\nB: {} ({} triangles)",
            pair.a.display(),
            self.a.face_count(),
            pair.b.display(),
            self.b.face_count()
        )
    }
}
