//! Reading a scene folder (`scene.json`, the mesh files, `transforms.f32`, the per-frame vertex
//! and control-point arrays), with every size checked against the header.

use std::path::Path;

use super::*;

impl Scene {
    /// Reads the scene folder `dir` (`dir/scene.json` and the files it names).
    ///
    /// Errors name the file and the problem: missing file, malformed JSON (with line and
    /// column), wrong array size (expected vs actual bytes), unknown object in a query, a bad
    /// mesh, a non-finite transform or vertex.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, SceneError> {
        let dir = dir.as_ref();
        let header_path = dir.join("scene.json");
        let text = std::fs::read_to_string(&header_path).map_err(|source| SceneError::Io {
            path: header_path.clone(),
            source,
        })?;
        let header = json::parse_header(&header_path, &text)?;

        // Distinct mesh files, loaded once each.
        let mut mesh_files: Vec<String> = Vec::new();
        let mut meshes = Vec::new();
        let mut objects = Vec::with_capacity(header.objects.len());
        let mut surfaces = Vec::with_capacity(header.objects.len());
        for obj in &header.objects {
            if obj.surfaces {
                let path = dir.join(&obj.mesh);
                let faces = surfaces::load_faces(&path)?;
                let s = SceneSurfaces::rigid(faces);
                meshes.push(s.display_mesh(&path)?);
                mesh_files.push(obj.mesh.clone());
                objects.push(SceneObject {
                    name: obj.name.clone(),
                    mesh: meshes.len() - 1,
                    motion: obj.motion,
                });
                surfaces.push(Some(s));
                continue;
            }
            surfaces.push(None);
            let mesh = match mesh_files.iter().position(|m| *m == obj.mesh) {
                Some(i) => i,
                None => {
                    let path = dir.join(&obj.mesh);
                    if !path.is_file() {
                        return Err(SceneError::Io {
                            path,
                            source: std::io::Error::new(
                                std::io::ErrorKind::NotFound,
                                format!("mesh of object `{}` not found", obj.name),
                            ),
                        });
                    }
                    let mesh = load_scene_mesh(&path)
                        .map_err(|source| SceneError::Mesh { path, source })?;
                    meshes.push(mesh);
                    mesh_files.push(obj.mesh.clone());
                    meshes.len() - 1
                }
            };
            objects.push(SceneObject {
                name: obj.name.clone(),
                mesh,
                motion: obj.motion,
            });
        }

        let frames = header.frames;
        let n = objects.len();
        let transforms_path = dir.join(&header.transforms);
        let floats = read_f32s(
            &transforms_path,
            frames * n * 12,
            "f32[frames][objects][12]",
        )?;
        let transforms: Vec<[f32; 12]> = floats
            .chunks_exact(12)
            .map(|c| c.try_into().unwrap_or([0.0; 12]))
            .collect();
        if let Some(i) = transforms
            .iter()
            .position(|t| t.iter().any(|x| !x.is_finite()))
        {
            return Err(SceneError::NonFinite {
                path: transforms_path,
                frame: i / n.max(1),
                index: i % n.max(1),
            });
        }

        let mut verts = vec![Vec::new(); n];
        for (i, obj) in header.objects.iter().enumerate() {
            let Some(file) = &obj.verts else { continue };
            let path = dir.join(file);
            if let Some(s) = surfaces[i].take() {
                let c = s.control_count();
                let floats = read_f32s(&path, frames * c * 3, "f32[frames][control points][3]")?;
                let points: Vec<glam::DVec3> = floats
                    .chunks_exact(3)
                    .map(|p| glam::DVec3::new(p[0].into(), p[1].into(), p[2].into()))
                    .collect();
                surfaces::check_frame0(&path, s.faces(), &points[..c.min(points.len())])?;
                let faces = s.faces().to_vec();
                surfaces[i] = Some(SceneSurfaces::deforming(&path, faces, frames, points)?);
                continue;
            }
            let v = meshes[objects[i].mesh].vertex_count();
            let floats = read_f32s(&path, frames * v * 3, "f32[frames][vertices][3]")?;
            let positions: Vec<Vec3> = floats
                .chunks_exact(3)
                .map(|c| Vec3::new(c[0], c[1], c[2]))
                .collect();
            if let Some(k) = positions.iter().position(|p| !p.is_finite()) {
                return Err(SceneError::NonFinite {
                    path,
                    frame: k / v,
                    index: k % v,
                });
            }
            // The OBJ holds frame 0: a reader that reordered vertices would break the arrays.
            let rest = meshes[objects[i].mesh].positions();
            if positions[..v] != *rest {
                return Err(SceneError::Invalid {
                    path,
                    message: format!(
                        "frame 0 differs from the vertices of `{}` (vertex order changed?)",
                        obj.mesh
                    ),
                });
            }
            verts[i] = positions;
        }

        let queries = header.queries;
        Ok(Self {
            name: header.name,
            description: header.description,
            dir: Some(dir.to_path_buf()),
            frames,
            meshes,
            mesh_files,
            objects,
            transforms,
            verts,
            surfaces,
            queries,
            truth: header.truth,
        })
    }
}

/// OBJ through the scene reader (file vertex order, which the vertex arrays rely on); other
/// formats (binary STL, PLY) through [`crate::io::load_mesh`].
fn load_scene_mesh(path: &Path) -> Result<TriMesh, crate::GeometryError> {
    let is_obj = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("obj"));
    if !is_obj {
        return crate::io::load_mesh(path);
    }
    let bytes = std::fs::read(path).map_err(|source| crate::GeometryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| crate::GeometryError::Parse {
        path: path.to_path_buf(),
        location: None,
        message: format!("not UTF-8 text: {e}"),
    })?;
    obj::parse(text, path)
}

/// Reads a little-endian f32 array of exactly `count` values.
fn read_f32s(path: &Path, count: usize, shape: &'static str) -> Result<Vec<f32>, SceneError> {
    let bytes = std::fs::read(path).map_err(|source| SceneError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let expected = count as u64 * 4;
    if bytes.len() as u64 != expected {
        return Err(SceneError::ArraySize {
            path: path.to_path_buf(),
            shape,
            expected,
            actual: bytes.len() as u64,
        });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}
