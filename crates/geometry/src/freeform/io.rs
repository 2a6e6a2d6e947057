//! Readers: the NURBS JSON schema (docs/freeform-formats.md) and the `.bpt` Bézier patch text
//! format (Newell tea set).

use std::path::{Path, PathBuf};

use glam::DVec3;
use serde_json::Value;

use super::{FreeformError, NurbsSurface};

fn json_err(path: &Path, field: impl Into<String>, message: impl Into<String>) -> FreeformError {
    FreeformError::Json {
        path: path.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

fn get<'a>(doc: &'a Value, path: &Path, field: &str) -> Result<&'a Value, FreeformError> {
    doc.get(field)
        .ok_or_else(|| json_err(path, field, "missing"))
}

fn as_usize(v: &Value, path: &Path, field: &str) -> Result<usize, FreeformError> {
    v.as_u64()
        .map(|x| x as usize)
        .ok_or_else(|| json_err(path, field, "expected a non-negative integer"))
}

fn as_f64(v: &Value, path: &Path, field: &str) -> Result<f64, FreeformError> {
    v.as_f64()
        .ok_or_else(|| json_err(path, field, "expected a number"))
}

fn as_array<'a>(v: &'a Value, path: &Path, field: &str) -> Result<&'a Vec<Value>, FreeformError> {
    v.as_array()
        .ok_or_else(|| json_err(path, field, "expected an array"))
}

fn f64_list(v: &Value, path: &Path, field: &str) -> Result<Vec<f64>, FreeformError> {
    as_array(v, path, field)?
        .iter()
        .enumerate()
        .map(|(i, x)| as_f64(x, path, &format!("{field}[{i}]")))
        .collect()
}

/// Reads a 3-vector `[x, y, z]`.
pub(crate) fn vec3(v: &Value, path: &Path, field: &str) -> Result<DVec3, FreeformError> {
    let a = f64_list(v, path, field)?;
    if a.len() != 3 {
        return Err(json_err(
            path,
            field,
            format!("expected 3 numbers, got {}", a.len()),
        ));
    }
    Ok(DVec3::new(a[0], a[1], a[2]))
}

/// Parses one surface in the NURBS JSON schema from a JSON value (`path` names it in errors).
pub fn surface_from_json(doc: &Value, path: &Path) -> Result<NurbsSurface, FreeformError> {
    let p = as_usize(get(doc, path, "degree_u")?, path, "degree_u")?;
    let q = as_usize(get(doc, path, "degree_v")?, path, "degree_v")?;
    let n = as_usize(get(doc, path, "num_ctrl_u")?, path, "num_ctrl_u")?;
    let m = as_usize(get(doc, path, "num_ctrl_v")?, path, "num_ctrl_v")?;
    let ku = f64_list(get(doc, path, "knots_u")?, path, "knots_u")?;
    let kv = f64_list(get(doc, path, "knots_v")?, path, "knots_v")?;
    let rows = as_array(get(doc, path, "control_points")?, path, "control_points")?;
    if rows.len() != n {
        return Err(json_err(
            path,
            "control_points",
            format!("expected {n} rows, got {}", rows.len()),
        ));
    }
    let mut points = Vec::with_capacity(n * m);
    for (i, row) in rows.iter().enumerate() {
        let f = format!("control_points[{i}]");
        let row = as_array(row, path, &f)?;
        if row.len() != m {
            return Err(json_err(
                path,
                &f,
                format!("expected {m} points, got {}", row.len()),
            ));
        }
        for (j, pt) in row.iter().enumerate() {
            points.push(vec3(pt, path, &format!("control_points[{i}][{j}]"))?);
        }
    }
    let weights = match doc.get("weights") {
        None | Some(Value::Null) => None,
        Some(w) => {
            let rows = as_array(w, path, "weights")?;
            if rows.len() != n {
                return Err(json_err(
                    path,
                    "weights",
                    format!("expected {n} rows, got {}", rows.len()),
                ));
            }
            let mut out = Vec::with_capacity(n * m);
            for (i, row) in rows.iter().enumerate() {
                let f = format!("weights[{i}]");
                let row = f64_list(row, path, &f)?;
                if row.len() != m {
                    return Err(json_err(
                        path,
                        &f,
                        format!("expected {m} weights, got {}", row.len()),
                    ));
                }
                out.extend(row);
            }
            Some(out)
        }
    };
    NurbsSurface::new([p, q], [ku, kv], [n, m], points, weights)
        .map_err(|e| json_err(path, "surface", e.to_string()))
}

/// Parses a NURBS JSON document held in memory.
pub fn parse_nurbs_json(text: &str, path: &Path) -> Result<NurbsSurface, FreeformError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| FreeformError::Json {
        path: path.to_path_buf(),
        field: format!("<line {}, column {}>", e.line(), e.column()),
        message: e.to_string(),
    })?;
    surface_from_json(&doc, path)
}

/// Reads a surface file in the NURBS JSON schema.
///
/// ```no_run
/// let s = gprox_geometry::freeform::load_nurbs_json("sphere_patch.json").unwrap();
/// println!("{:?}", s.domain());
/// ```
pub fn load_nurbs_json(path: impl AsRef<Path>) -> Result<NurbsSurface, FreeformError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| FreeformError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_nurbs_json(&text, path)
}

/// Parses `.bpt` text: `N`, then per patch `du dv` and `(du+1)(dv+1)` points `x y z`.
pub fn parse_bpt(text: &str, path: &Path) -> Result<Vec<NurbsSurface>, FreeformError> {
    let mut tokens = text.lines().enumerate().flat_map(|(ln, l)| {
        l.split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(move |t| (ln + 1, t))
    });
    let mut last_line = 1;
    let mut next = |what: &str| -> Result<(usize, String), FreeformError> {
        match tokens.next() {
            Some((ln, t)) => {
                last_line = ln;
                Ok((ln, t.to_string()))
            }
            None => Err(FreeformError::Parse {
                path: PathBuf::from(path),
                line: last_line,
                message: format!("unexpected end of file, expected {what}"),
            }),
        }
    };
    let perr = |line: usize, message: String| FreeformError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let (ln, t) = next("patch count")?;
    let count: usize = t
        .parse()
        .map_err(|_| perr(ln, format!("bad patch count `{t}`")))?;
    let mut out = Vec::with_capacity(count.min(1 << 16));
    for index in 0..count {
        let mut deg = [0usize; 2];
        for d in &mut deg {
            let (ln, t) = next("degree")?;
            *d = t
                .parse()
                .map_err(|_| perr(ln, format!("patch {index}: bad degree `{t}`")))?;
            if *d == 0 || *d > 32 {
                return Err(perr(
                    ln,
                    format!("patch {index}: degree {d} out of range 1..=32"),
                ));
            }
        }
        let n = (deg[0] + 1) * (deg[1] + 1);
        let mut pts = Vec::with_capacity(n);
        let mut first_line = 0;
        for k in 0..n {
            let mut c = [0.0f64; 3];
            for x in &mut c {
                let (ln, t) = next("coordinate")?;
                if first_line == 0 {
                    first_line = ln;
                }
                *x = t
                    .parse()
                    .map_err(|_| perr(ln, format!("patch {index}, point {k}: bad number `{t}`")))?;
            }
            pts.push(DVec3::from_array(c));
        }
        let s = NurbsSurface::bezier(deg, pts, None)
            .map_err(|e| perr(first_line, format!("patch {index}: {e}")))?;
        out.push(s);
    }
    Ok(out)
}

/// Reads a `.bpt` file into one Bézier surface per patch.
pub fn load_bpt(path: impl AsRef<Path>) -> Result<Vec<NurbsSurface>, FreeformError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| FreeformError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bpt(&text, path)
}

/// The Utah teapot (32 bicubic Bézier patches), embedded in the library.
pub fn teapot() -> Vec<NurbsSurface> {
    const TEXT: &str = include_str!("../../data/teapot.bpt");
    // The embedded file is fixed data checked by the tests.
    parse_bpt(TEXT, Path::new("<embedded teapot.bpt>")).unwrap_or_default()
}
