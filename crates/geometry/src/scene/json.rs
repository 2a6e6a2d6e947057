//! Parsing and validation of `scene.json`.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use std::collections::BTreeMap;

use super::truth::{SceneTruth, Truth};
use super::{Motion, QueryKind, QueryTargets, SceneError, SceneQuery, FORMAT};

#[derive(Deserialize)]
struct RawScene {
    format: String,
    name: String,
    #[serde(default)]
    description: String,
    frames: usize,
    objects: Vec<RawObject>,
    transforms: String,
    #[serde(default)]
    queries: Vec<RawQuery>,
    #[serde(default)]
    truth: BTreeMap<String, BTreeMap<String, Truth>>,
    #[serde(default)]
    exact_distance_per_frame: Option<Vec<f64>>,
}

#[derive(Deserialize)]
struct RawObject {
    name: String,
    #[serde(default)]
    mesh: Option<String>,
    #[serde(default)]
    faces: Option<String>,
    #[serde(default)]
    control_points: Option<String>,
    #[serde(default)]
    motion: Option<String>,
    #[serde(default)]
    verts: Option<String>,
}

#[derive(Deserialize)]
struct RawQuery {
    kind: String,
    #[serde(default)]
    pairs: Option<Value>,
    #[serde(default)]
    objects: Option<Vec<String>>,
}

/// One object entry of the header.
pub(super) struct ObjectHeader {
    pub name: String,
    /// The mesh file, or the face / `model.json` file of a surface object.
    pub mesh: String,
    pub motion: Motion,
    /// The per-frame vertices (meshes) or control points (surface objects).
    pub verts: Option<String>,
    /// Whether `mesh` names trimmed faces.
    pub surfaces: bool,
}

/// The validated header.
pub(super) struct Header {
    pub name: String,
    pub description: String,
    pub frames: usize,
    pub objects: Vec<ObjectHeader>,
    pub transforms: String,
    pub queries: Vec<SceneQuery>,
    pub truth: SceneTruth,
}

/// Parses `text` (the contents of `path`) and checks it against the format.
pub(super) fn parse_header(path: &Path, text: &str) -> Result<Header, SceneError> {
    let raw: RawScene = serde_json::from_str(text).map_err(|e| SceneError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let invalid = |message: String| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if raw.format != FORMAT {
        return Err(invalid(format!(
            "format is `{}`, expected `{FORMAT}`",
            raw.format
        )));
    }
    if raw.frames == 0 {
        return Err(invalid("`frames` is 0".into()));
    }
    if raw.objects.is_empty() {
        return Err(invalid("no objects".into()));
    }
    let mut objects = Vec::with_capacity(raw.objects.len());
    for (i, o) in raw.objects.into_iter().enumerate() {
        if objects.iter().any(|p: &ObjectHeader| p.name == o.name) {
            return Err(invalid(format!("object {i}: duplicate name `{}`", o.name)));
        }
        let (file, surfaces, verts) = match (o.mesh, o.faces, o.verts, o.control_points) {
            (Some(m), None, v, None) => (m, false, v),
            (None, Some(f), None, c) => (f, true, c),
            (Some(_), Some(_), _, _) | (None, None, _, _) => {
                return Err(invalid(format!(
                    "object `{}` needs exactly one of `mesh` and `faces`",
                    o.name
                )))
            }
            (Some(_), None, _, Some(_)) => {
                return Err(invalid(format!(
                    "object `{}`: `control_points` belongs to `faces` objects",
                    o.name
                )))
            }
            (None, Some(_), Some(_), _) => {
                return Err(invalid(format!(
                    "object `{}`: `verts` belongs to `mesh` objects (use `control_points`)",
                    o.name
                )))
            }
        };
        let file_key = if surfaces { "control_points" } else { "verts" };
        let motion = match (o.motion.as_deref(), &verts) {
            (Some("deforming"), Some(_)) | (None, Some(_)) => Motion::Deforming,
            (Some("deforming"), None) => {
                return Err(invalid(format!(
                    "object `{}` is deforming but names no `{file_key}` file",
                    o.name
                )))
            }
            (Some("rigid") | None, None) => Motion::Rigid,
            (Some("rigid"), Some(_)) => {
                return Err(invalid(format!(
                    "object `{}` is rigid but names a `{file_key}` file",
                    o.name
                )))
            }
            (Some(other), _) => {
                return Err(invalid(format!(
                    "object `{}`: unknown motion `{other}` (expected `rigid` or `deforming`)",
                    o.name
                )))
            }
        };
        objects.push(ObjectHeader {
            name: o.name,
            mesh: file,
            motion,
            verts,
            surfaces,
        });
    }

    let lookup = |q: usize, kind: &str, name: &str| {
        objects
            .iter()
            .position(|o| o.name == name)
            .ok_or_else(|| SceneError::UnknownObject {
                path: path.to_path_buf(),
                query: q,
                kind: kind.to_string(),
                name: name.to_string(),
            })
    };
    let mut queries = Vec::with_capacity(raw.queries.len());
    for (q, rq) in raw.queries.iter().enumerate() {
        let targets = match (&rq.pairs, &rq.objects) {
            (Some(Value::String(s)), None) if s == "all" => QueryTargets::AllPairs,
            (Some(Value::Array(list)), None) => {
                let mut pairs = Vec::with_capacity(list.len());
                for (k, p) in list.iter().enumerate() {
                    let names = p.as_array().and_then(|a| match a.as_slice() {
                        [Value::String(a), Value::String(b)] => Some((a, b)),
                        _ => None,
                    });
                    let Some((a, b)) = names else {
                        return Err(invalid(format!(
                            "query {q} (`{}`): pair {k} is not [\"a\", \"b\"]: {p}",
                            rq.kind
                        )));
                    };
                    pairs.push([lookup(q, &rq.kind, a)?, lookup(q, &rq.kind, b)?]);
                }
                QueryTargets::Pairs(pairs)
            }
            (None, Some(names)) => QueryTargets::Objects(
                names
                    .iter()
                    .map(|n| lookup(q, &rq.kind, n))
                    .collect::<Result<_, _>>()?,
            ),
            _ => {
                return Err(invalid(format!(
                    "query {q} (`{}`): needs `pairs` (a list of pairs or \"all\") or `objects`",
                    rq.kind
                )))
            }
        };
        queries.push(SceneQuery {
            kind: QueryKind::parse(&rq.kind),
            targets,
        });
    }

    for (kind, targets) in &raw.truth {
        for (label, t) in targets {
            for (what, n) in t.lengths() {
                // A time of impact belongs to a step: the last frame has none.
                let ok = n == raw.frames || (what == "toi" && n + 1 == raw.frames);
                if !ok {
                    return Err(invalid(format!(
                        "truth `{kind}` / `{label}`: `{what}` has {n} entries for {} frames",
                        raw.frames
                    )));
                }
            }
        }
    }
    if let Some(d) = &raw.exact_distance_per_frame {
        if d.len() != raw.frames {
            return Err(invalid(format!(
                "`exact_distance_per_frame` has {} entries for {} frames",
                d.len(),
                raw.frames
            )));
        }
    }
    Ok(Header {
        name: raw.name,
        description: raw.description,
        frames: raw.frames,
        objects,
        transforms: raw.transforms,
        queries,
        truth: SceneTruth {
            by_target: raw.truth,
            distance_per_frame: raw.exact_distance_per_frame,
        },
    })
}
