//! Reader of trimmed faces (`shared/data/trimmed/<model>/face_NN.json`: the NURBS JSON surface
//! fields plus `trim`) and of models (`model.json`, whose `faces[k].file` names the face files).

use std::path::{Path, PathBuf};

use glam::DVec2;
use serde_json::Value;

use super::{LoopRole, TrimCurve, TrimError, TrimLoop, TrimmedFace};
use crate::freeform::io::surface_from_json;

fn json_err(path: &Path, field: impl Into<String>, message: impl Into<String>) -> TrimError {
    TrimError::Json {
        path: path.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

fn get<'a>(doc: &'a Value, path: &Path, at: &str, key: &str) -> Result<&'a Value, TrimError> {
    doc.get(key)
        .ok_or_else(|| json_err(path, format!("{at}{key}"), "missing"))
}

fn array<'a>(v: &'a Value, path: &Path, field: &str) -> Result<&'a Vec<Value>, TrimError> {
    v.as_array()
        .ok_or_else(|| json_err(path, field, "expected an array"))
}

fn number(v: &Value, path: &Path, field: &str) -> Result<f64, TrimError> {
    v.as_f64()
        .ok_or_else(|| json_err(path, field, "expected a number"))
}

fn numbers(v: &Value, path: &Path, field: &str) -> Result<Vec<f64>, TrimError> {
    array(v, path, field)?
        .iter()
        .enumerate()
        .map(|(i, x)| number(x, path, &format!("{field}[{i}]")))
        .collect()
}

fn read_file(path: &Path) -> Result<Value, TrimError> {
    let text = std::fs::read_to_string(path).map_err(|source| TrimError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        json_err(
            path,
            format!("<line {}, column {}>", e.line(), e.column()),
            e.to_string(),
        )
    })
}

fn curve_from_json(c: &Value, path: &Path, at: &str) -> Result<TrimCurve, TrimError> {
    let degree = get(c, path, at, "degree")?
        .as_u64()
        .ok_or_else(|| json_err(path, format!("{at}degree"), "expected an integer"))?;
    let knots = numbers(get(c, path, at, "knots")?, path, &format!("{at}knots"))?;
    let field = format!("{at}control_points");
    let points = array(get(c, path, at, "control_points")?, path, &field)?
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let f = format!("{field}[{k}]");
            match numbers(p, path, &f)?.as_slice() {
                [u, v] => Ok(DVec2::new(*u, *v)),
                x => Err(json_err(
                    path,
                    f,
                    format!("expected [u, v], got {} numbers", x.len()),
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let weights = match c.get("weights") {
        None | Some(Value::Null) => None,
        Some(w) => Some(numbers(w, path, &format!("{at}weights"))?),
    };
    let field = format!("{at}param_range");
    let range = match numbers(get(c, path, at, "param_range")?, path, &field)?.as_slice() {
        [t0, t1] => [*t0, *t1],
        _ => return Err(json_err(path, field, "expected [t0, t1]")),
    };
    let reversed = get(c, path, at, "reversed")?
        .as_bool()
        .ok_or_else(|| json_err(path, format!("{at}reversed"), "expected a boolean"))?;
    TrimCurve::new(degree as usize, knots, &points, weights, range, reversed)
        .map_err(|e| json_err(path, at.trim_end_matches('.'), e.to_string()))
}

/// Parses one trimmed face from a JSON value (`path` names it in errors).
pub fn parse_trimmed_face(doc: &Value, path: &Path) -> Result<TrimmedFace, TrimError> {
    let surface = surface_from_json(doc, path).map_err(|source| TrimError::Spline {
        what: "surface".into(),
        source,
    })?;
    let mut loops = Vec::new();
    for (li, l) in array(get(doc, path, "", "trim")?, path, "trim")?
        .iter()
        .enumerate()
    {
        let at = format!("trim[{li}].");
        let role = match get(l, path, &at, "role")?.as_str() {
            Some("outer") => LoopRole::Outer,
            Some("hole") => LoopRole::Hole,
            _ => {
                return Err(json_err(
                    path,
                    format!("{at}role"),
                    "expected \"outer\" or \"hole\"",
                ))
            }
        };
        let curves = array(get(l, path, &at, "curves")?, path, &format!("{at}curves"))?
            .iter()
            .enumerate()
            .map(|(ci, c)| curve_from_json(c, path, &format!("{at}curves[{ci}].")))
            .collect::<Result<Vec<_>, _>>()?;
        loops.push(TrimLoop { role, curves });
    }
    TrimmedFace::new(surface, loops).map_err(|e| e.in_file(path))
}

/// Reads a trimmed face file.
pub fn load_trimmed_face(path: impl AsRef<Path>) -> Result<TrimmedFace, TrimError> {
    let path = path.as_ref();
    parse_trimmed_face(&read_file(path)?, path)
}

/// A model of trimmed faces (a B-rep solid or a single face).
#[derive(Clone, Debug)]
pub struct TrimmedModel {
    /// The model's name.
    pub name: String,
    /// The faces, numbered as in `model.json`.
    pub faces: Vec<TrimmedFace>,
    /// The file each face came from.
    pub files: Vec<PathBuf>,
}

/// Reads `model.json` (or the folder holding it) and every face file it lists.
pub fn load_trimmed_model(path: impl AsRef<Path>) -> Result<TrimmedModel, TrimError> {
    let mut path = path.as_ref().to_path_buf();
    if path.is_dir() {
        path.push("model.json");
    }
    let doc = read_file(&path)?;
    let name = doc
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let dir = path.parent().unwrap_or(Path::new("."));
    let (mut faces, mut files) = (Vec::new(), Vec::new());
    for (k, f) in array(get(&doc, &path, "", "faces")?, &path, "faces")?
        .iter()
        .enumerate()
    {
        let file = f
            .get("file")
            .and_then(Value::as_str)
            .ok_or_else(|| json_err(&path, format!("faces[{k}].file"), "missing file name"))?;
        let fp = dir.join(file);
        faces.push(load_trimmed_face(&fp)?);
        files.push(fp);
    }
    if faces.is_empty() {
        return Err(json_err(&path, "faces", "the model has no face"));
    }
    Ok(TrimmedModel { name, faces, files })
}
