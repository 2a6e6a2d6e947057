//! Readers for the reference data that accompanies the NURBS JSON schema: per-surface
//! `samples` / `point_queries`, and surface-pair distance oracles (`pairs.json`), so tests and
//! benchmarks in other crates can use them without a JSON dependency.

use std::path::Path;

use glam::DVec3;
use serde_json::Value;

use super::io::vec3;
use super::FreeformError;
use crate::transform::Pose64;

/// One reference evaluation: point and derivatives at `(u, v)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReferenceSample {
    /// Parameters.
    pub uv: (f64, f64),
    /// S, S_u, S_v, S_uu, S_uv, S_vv.
    pub values: [DVec3; 6],
}

/// One point query: a point and its reference distance to the surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReferencePointQuery {
    /// The query point.
    pub query: DVec3,
    /// Reference minimum distance to the (bounded) surface.
    pub distance: f64,
}

/// One surface pair with its reference minimum distance.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferencePair {
    /// Pair name.
    pub name: String,
    /// Kind ("separated", "touching", "intersecting", ...).
    pub kind: String,
    /// File name of surface A (relative to the pairs file).
    pub surface_a: String,
    /// File name of surface B.
    pub surface_b: String,
    /// Pose of A.
    pub pose_a: Pose64,
    /// Pose of B.
    pub pose_b: Pose64,
    /// Reference minimum distance.
    pub min_distance: f64,
    /// Reference closest-point pairs (world).
    pub solutions: Vec<(DVec3, DVec3)>,
}

fn err(path: &Path, field: impl Into<String>, message: impl Into<String>) -> FreeformError {
    FreeformError::Json {
        path: path.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

fn read_json(path: &Path) -> Result<Value, FreeformError> {
    let text = std::fs::read_to_string(path).map_err(|source| FreeformError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text)
        .map_err(|e| err(path, format!("<line {}>", e.line()), e.to_string()))
}

fn num(v: &Value, path: &Path, field: &str) -> Result<f64, FreeformError> {
    v.as_f64()
        .ok_or_else(|| err(path, field, "expected a number"))
}

fn list<'a>(v: &'a Value, path: &Path, field: &str) -> Result<&'a Vec<Value>, FreeformError> {
    v.as_array()
        .ok_or_else(|| err(path, field, "expected an array"))
}

/// Reads `samples` and `point_queries` of a surface file in the NURBS JSON schema.
pub fn load_surface_reference(
    path: impl AsRef<Path>,
) -> Result<(Vec<ReferenceSample>, Vec<ReferencePointQuery>), FreeformError> {
    let path = path.as_ref();
    let doc = read_json(path)?;
    let mut samples = Vec::new();
    for (k, s) in list(&doc["samples"], path, "samples")?.iter().enumerate() {
        let f = |name: &str| vec3(&s[name], path, &format!("samples[{k}].{name}"));
        samples.push(ReferenceSample {
            uv: (num(&s["u"], path, "u")?, num(&s["v"], path, "v")?),
            values: [
                f("point")?,
                f("du")?,
                f("dv")?,
                f("duu")?,
                f("duv")?,
                f("dvv")?,
            ],
        });
    }
    let mut queries = Vec::new();
    for (k, q) in list(&doc["point_queries"], path, "point_queries")?
        .iter()
        .enumerate()
    {
        queries.push(ReferencePointQuery {
            query: vec3(&q["query"], path, &format!("point_queries[{k}].query"))?,
            distance: num(
                &q["distance"],
                path,
                &format!("point_queries[{k}].distance"),
            )?,
        });
    }
    Ok((samples, queries))
}

fn pose(v: &Value, path: &Path, field: &str) -> Result<Pose64, FreeformError> {
    let rows = list(v, path, field)?;
    if rows.len() < 3 {
        return Err(err(path, field, "expected a 4x4 matrix"));
    }
    let mut p = Pose64::IDENTITY;
    for (i, row) in rows.iter().take(3).enumerate() {
        let r = list(row, path, field)?;
        if r.len() != 4 {
            return Err(err(path, format!("{field}[{i}]"), "expected 4 numbers"));
        }
        for (j, x) in r.iter().enumerate() {
            p.rows[i][j] = num(x, path, field)?;
        }
    }
    Ok(p)
}

/// Reads a `pairs.json` file (surface-pair minimum-distance oracles).
pub fn load_pairs(path: impl AsRef<Path>) -> Result<Vec<ReferencePair>, FreeformError> {
    let path = path.as_ref();
    let doc = read_json(path)?;
    let mut out = Vec::new();
    for (k, p) in list(&doc["pairs"], path, "pairs")?.iter().enumerate() {
        let s = |name: &str| {
            p[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| err(path, format!("pairs[{k}].{name}"), "expected a string"))
        };
        let mut solutions = Vec::new();
        if let Some(sols) = p["solutions"].as_array() {
            for (i, sol) in sols.iter().enumerate() {
                let f = format!("pairs[{k}].solutions[{i}]");
                solutions.push((
                    vec3(&sol["on_a"]["point"], path, &f)?,
                    vec3(&sol["on_b"]["point"], path, &f)?,
                ));
            }
        }
        out.push(ReferencePair {
            name: s("name")?,
            kind: s("kind")?,
            surface_a: s("surface_a")?,
            surface_b: s("surface_b")?,
            pose_a: pose(&p["transform_a"], path, &format!("pairs[{k}].transform_a"))?,
            pose_b: pose(&p["transform_b"], path, &format!("pairs[{k}].transform_b"))?,
            min_distance: num(
                &p["min_distance"],
                path,
                &format!("pairs[{k}].min_distance"),
            )?,
            solutions,
        });
    }
    Ok(out)
}
