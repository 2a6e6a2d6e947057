//! The `info` subcommand: facts about a mesh file or a scene folder.

use std::path::Path;

use glam::Vec3;
use gprox::geometry::scene::Scene;
use gprox::geometry::TriMesh;
use serde_json::json;

use super::{input, Failure};

/// Counts and bounds of a mesh.
fn mesh_facts(m: &TriMesh) -> serde_json::Value {
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for p in m.positions() {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    json!({
        "vertices": m.vertex_count(),
        "triangles": m.face_count(),
        "degenerate_triangles": m.degenerate_faces().len(),
        "bounds": {"min": lo.to_array(), "max": hi.to_array()},
    })
}

/// `gprox info FILE_OR_SCENE_DIR`: vertex and triangle counts and bounds of a mesh file, or
/// the frames, objects and queries of a scene folder.
pub fn info_cmd(file: &Path, json: bool) -> Result<(), Failure> {
    let v = if file.is_dir() {
        let s = Scene::load(file).map_err(input)?;
        let objects: Vec<_> = s
            .objects()
            .iter()
            .enumerate()
            .map(|(i, o)| {
                json!({"name": o.name, "deforming": s.is_deforming(i),
                       "triangles": s.mesh(i).face_count()})
            })
            .collect();
        let queries: Vec<_> = s.queries().iter().map(|q| q.kind.as_str()).collect();
        json!({"scene": s.name(), "frames": s.frame_count(), "triangles": s.triangle_count(),
               "objects": objects, "queries": queries})
    } else {
        let m = gprox::geometry::io::load_mesh(file).map_err(input)?;
        let mut v = mesh_facts(&m);
        v["file"] = json!(file.display().to_string());
        v
    };
    if json {
        println!("{v}");
    } else if let Some(obj) = v.as_object() {
        for (k, x) in obj {
            println!("{k}: {x}");
        }
    }
    Ok(())
}
