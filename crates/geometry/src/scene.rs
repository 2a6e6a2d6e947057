//! Benchmark and demo scenes in the `proxbench-scene/1` format.
//!
//! A scene is a folder holding `scene.json` (objects, frame count, queries), one OBJ or STL file
//! per distinct mesh, `transforms.f32` (little-endian `f32[F][N][12]`, a row-major `[R | t]` per
//! frame and object) and, for deforming objects, `<object>.verts.f32` (little-endian
//! `f32[F][V][3]`). The format is documented in `docs/scene-format.md`.
//!
//! [`Scene::load`] reads a folder and checks every size against the header; [`Scene::builtin`]
//! generates a small scene in memory (two interlocking tori) so demos run without any files.
//!
//! ```
//! use gprox_geometry::scene::{QueryKind, Scene};
//! let scene = Scene::builtin();
//! assert_eq!(scene.object_count(), 2);
//! let query = &scene.queries()[0];
//! assert_eq!(query.kind, QueryKind::CollideAll);
//! let pose = scene.pose64(0, 1); // frame 0, object 1, ready for the exact tests
//! assert!(pose.rows[0][3].is_finite());
//! ```

mod builtin;
pub mod builtin_fold;
pub mod builtin_trimmed;
mod error;
mod json;
mod load;
mod obj;
mod surfaces;
mod truth;

use std::path::{Path, PathBuf};

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use crate::transform::Pose64;
use crate::TriMesh;

pub use builtin::{box_mesh, torus};
pub use error::SceneError;
pub use surfaces::{SceneSurfaces, DISPLAY_TOLERANCE_REL};
pub use truth::{SceneTruth, Truth};

/// Accuracy ε of the geometry-image queries relative to the scene's size (the largest side of
/// any surface object's control box at frame 0): one world-space ε for every object.
pub const IMAGE_EPSILON_REL: f64 = 1e-3;

/// The only format string this reader accepts.
pub const FORMAT: &str = "proxbench-scene/1";

/// How an object moves from frame to frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// Fixed vertex positions moved by a rigid transform per frame.
    Rigid,
    /// New vertex positions every frame (`<object>.verts.f32`).
    Deforming,
}

/// One object of a scene: a named instance of a mesh.
#[derive(Clone, Debug)]
pub struct SceneObject {
    /// Unique name (queries refer to objects by it).
    pub name: String,
    /// Index into [`Scene::meshes`].
    pub mesh: usize,
    /// Rigid or deforming.
    pub motion: Motion,
}

/// The kind of a scene query.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueryKind {
    /// Every intersecting triangle pair.
    CollideAll,
    /// Whether any triangle pair intersects.
    CollideAny,
    /// Minimum distance and closest points.
    Distance,
    /// Self-intersections of one mesh (non-adjacent triangles).
    SelfCollide,
    /// Continuous self-collision: earliest time of impact between frames.
    Ccd,
    /// Penetration samples (inside vertices and depths).
    Penetration,
    /// Image-space penetration field (Hoff et al.): lattice samples inside both meshes with
    /// their depths (`gprox::Context::intersection_volume`).
    PenetrationField,
    /// Geometry-image collision of trimmed NURBS objects (Greß et al.): quad pairs whose padded
    /// boxes overlap, at ε = [`IMAGE_EPSILON_REL`] of the scene's size.
    ImageCollide,
    /// Geometry-image self-collision of one trimmed NURBS object (exact quad triangles).
    ImageSelfCollide,
    /// A kind this reader does not know (kept so newer scenes still load).
    Other(String),
}

impl QueryKind {
    /// Parses the `kind` string of `scene.json`.
    pub fn parse(kind: &str) -> Self {
        match kind {
            "collide-all" => Self::CollideAll,
            "collide-any" => Self::CollideAny,
            "distance" => Self::Distance,
            "self" => Self::SelfCollide,
            "ccd" => Self::Ccd,
            "penetration" => Self::Penetration,
            "penetration-field" => Self::PenetrationField,
            "image-collide" => Self::ImageCollide,
            "image-self-collide" => Self::ImageSelfCollide,
            other => Self::Other(other.to_string()),
        }
    }

    /// The `kind` string as written in `scene.json`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::CollideAll => "collide-all",
            Self::CollideAny => "collide-any",
            Self::Distance => "distance",
            Self::SelfCollide => "self",
            Self::Ccd => "ccd",
            Self::Penetration => "penetration",
            Self::PenetrationField => "penetration-field",
            Self::ImageCollide => "image-collide",
            Self::ImageSelfCollide => "image-self-collide",
            Self::Other(s) => s,
        }
    }
}

/// What a query applies to, with object names resolved to indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryTargets {
    /// Listed object pairs `[a, b]`.
    Pairs(Vec<[usize; 2]>),
    /// `"pairs": "all"`: every unordered pair of objects (a broad phase is part of the query).
    AllPairs,
    /// Single objects (self-collision, CCD).
    Objects(Vec<usize>),
}

/// One query of a scene.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneQuery {
    /// What to compute.
    pub kind: QueryKind,
    /// On which objects.
    pub targets: QueryTargets,
}

/// A loaded scene: meshes, objects, per-frame poses and deforming vertex positions, queries.
#[derive(Clone, Debug)]
pub struct Scene {
    name: String,
    description: String,
    dir: Option<PathBuf>,
    frames: usize,
    meshes: Vec<TriMesh>,
    mesh_files: Vec<String>,
    objects: Vec<SceneObject>,
    /// `frames * objects` row-major `[R | t]`.
    transforms: Vec<[f32; 12]>,
    /// Per object: `frames * vertex_count` positions for deforming objects, empty otherwise.
    verts: Vec<Vec<Vec3>>,
    /// Per object: its trimmed faces (surface objects) or `None` (meshes).
    surfaces: Vec<Option<SceneSurfaces>>,
    queries: Vec<SceneQuery>,
    truth: SceneTruth,
}

impl Scene {
    /// The built-in scene: two interlocking procedural tori (3,072 triangles each); torus B
    /// slides through torus A over 8 frames of rigid motion, touching it in some frames.
    pub fn builtin() -> Self {
        builtin::two_tori()
    }

    /// The built-in scene of the image-space queries (like the "Tori" of Hoff et al. 2002):
    /// two interlocking tori of 5,000 triangles each, both deforming every frame (their
    /// surfaces breathe by ±3 %), torus B sliding through torus A over 16 frames; one
    /// `penetration-field` query.
    ///
    /// ```
    /// let s = gprox_geometry::scene::Scene::builtin_deforming_tori();
    /// assert_eq!(s.name(), "builtin-deforming-tori");
    /// assert_eq!((s.frame_count(), s.positions(3, 1).len()), (16, 2500));
    /// ```
    pub fn builtin_deforming_tori() -> Self {
        builtin::deforming_tori()
    }

    /// The built-in geometry-image scene (like Fig. 6a of Greß et al. 2006): a waving trimmed
    /// NURBS flag with a spline-shaped hole and three rigid NURBS balls, one falling through
    /// the hole (it touches nothing), two passing through the cloth (contacts appear and
    /// disappear); 24 frames, one `image-collide` query over all pairs, with per-frame truth
    /// from a certified construction ([`builtin_trimmed::flag_ball_contact`]).
    ///
    /// ```
    /// let s = gprox_geometry::scene::Scene::builtin_flag_balls();
    /// assert_eq!((s.object_count(), s.frame_count()), (4, 24));
    /// assert!(s.surfaces(0).unwrap().is_deforming());
    /// ```
    pub fn builtin_flag_balls() -> Self {
        builtin_trimmed::flag_balls()
    }

    /// The built-in geometry-image self-collision scene (like Fig. 6b of Greß et al. 2006): a
    /// trimmed NURBS sheet with a spline-shaped hole folding over itself, apart in frames
    /// 0–13 (flat, then folding to 170°), its flap passing through the sheet in frames 14–23; 24 frames, one
    /// `image-self-collide` query on the sheet, with per-frame truth from a certified rule
    /// ([`builtin_fold::fold_self_contact`]).
    ///
    /// ```
    /// let s = gprox_geometry::scene::Scene::builtin_folding_sheet();
    /// assert_eq!((s.object_count(), s.frame_count()), (1, 24));
    /// assert!(s.surfaces(0).unwrap().is_deforming());
    /// ```
    pub fn builtin_folding_sheet() -> Self {
        builtin_fold::folding_sheet()
    }

    /// Assembles an in-memory scene (used by [`Scene::builtin`] and by generators).
    ///
    /// `transforms` holds `frames * objects.len()` row-major `[R | t]` matrices (frame-major);
    /// `verts[i]` holds `frames * vertex_count` positions for deforming object `i` and is empty
    /// for rigid ones.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        name: &str,
        description: &str,
        frames: usize,
        meshes: Vec<TriMesh>,
        objects: Vec<SceneObject>,
        transforms: Vec<[f32; 12]>,
        verts: Vec<Vec<Vec3>>,
        queries: Vec<SceneQuery>,
    ) -> Result<Self, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            path: PathBuf::from(name),
            message,
        };
        if transforms.len() != frames * objects.len() {
            return Err(invalid(format!(
                "{} transforms for {frames} frames x {} objects",
                transforms.len(),
                objects.len()
            )));
        }
        if verts.len() != objects.len() {
            return Err(invalid(format!(
                "{} vertex arrays for {} objects",
                verts.len(),
                objects.len()
            )));
        }
        for (i, o) in objects.iter().enumerate() {
            let Some(mesh) = meshes.get(o.mesh) else {
                return Err(invalid(format!("object `{}`: no mesh {}", o.name, o.mesh)));
            };
            let want = match o.motion {
                Motion::Rigid => 0,
                Motion::Deforming => frames * mesh.vertex_count(),
            };
            if verts[i].len() != want {
                return Err(invalid(format!(
                    "object `{}`: {} positions, expected {want}",
                    o.name,
                    verts[i].len()
                )));
            }
        }
        let mesh_files = (0..meshes.len()).map(|i| format!("mesh{i}")).collect();
        let objects_len = objects.len();
        Ok(Self {
            name: name.to_string(),
            description: description.to_string(),
            dir: None,
            frames,
            meshes,
            mesh_files,
            objects,
            transforms,
            surfaces: vec![None; objects_len],
            verts,
            queries,
            truth: SceneTruth::default(),
        })
    }

    /// Makes object `object` a surface object of trimmed faces (its mesh is then for display
    /// only); the faces' control points must cover every frame when they deform. Used by
    /// in-memory generators after [`Scene::from_parts`].
    pub fn with_surfaces(
        mut self,
        object: usize,
        surfaces: SceneSurfaces,
    ) -> Result<Self, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            path: PathBuf::from(&self.name),
            message,
        };
        if object >= self.objects.len() {
            return Err(invalid(format!("no object {object}")));
        }
        if surfaces.is_deforming() {
            let n = surfaces.control_count();
            // Every frame's control points are there (`SceneSurfaces::deforming` checked the
            // total against its own frame count).
            if surfaces.faces_at(self.frames.saturating_sub(1)).is_err() || n == 0 {
                return Err(invalid(format!(
                    "object `{}`: control points do not cover {} frames",
                    self.objects[object].name, self.frames
                )));
            }
            self.objects[object].motion = Motion::Deforming;
        }
        self.surfaces[object] = Some(surfaces);
        Ok(self)
    }

    /// The trimmed faces of a surface object (`None` for mesh objects).
    pub fn surfaces(&self, object: usize) -> Option<&SceneSurfaces> {
        self.surfaces.get(object).and_then(Option::as_ref)
    }

    /// The size the geometry-image accuracy refers to: the largest side of any surface
    /// object's control box at frame 0 (object coordinates; 0 without surface objects).
    pub fn surface_size(&self) -> f64 {
        self.surfaces
            .iter()
            .flatten()
            .map(|s| {
                let (lo, hi) = s.faces().iter().fold(
                    (glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY),
                    |(lo, hi), f| {
                        let (a, b) = f.surface().control_bounds();
                        (lo.min(a), hi.max(b))
                    },
                );
                (hi - lo).max_element()
            })
            .fold(0.0, f64::max)
    }

    /// The scene's own per-frame truth (`truth` and `exact_distance_per_frame` in
    /// `scene.json`; empty for in-memory scenes).
    pub fn truth(&self) -> &SceneTruth {
        &self.truth
    }

    /// Scene name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Free-text description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The folder it was loaded from (`None` for in-memory scenes).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames
    }

    /// Number of objects.
    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    /// The objects, in transform order.
    pub fn objects(&self) -> &[SceneObject] {
        &self.objects
    }

    /// The distinct meshes (rest positions = frame 0 for deforming objects).
    pub fn meshes(&self) -> &[TriMesh] {
        &self.meshes
    }

    /// The file name each mesh was read from (in-memory scenes: `mesh<i>`).
    pub fn mesh_files(&self) -> &[String] {
        &self.mesh_files
    }

    /// The queries that apply to this scene.
    pub fn queries(&self) -> &[SceneQuery] {
        &self.queries
    }

    /// Index of the object called `name`.
    pub fn object_index(&self, name: &str) -> Option<usize> {
        self.objects.iter().position(|o| o.name == name)
    }

    /// The mesh (topology and rest positions) of `object`.
    ///
    /// # Panics
    /// If `object >= object_count()`.
    pub fn mesh(&self, object: usize) -> &TriMesh {
        &self.meshes[self.objects[object].mesh]
    }

    /// Total triangle count over all objects.
    pub fn triangle_count(&self) -> usize {
        (0..self.objects.len())
            .map(|i| self.mesh(i).face_count())
            .sum()
    }

    /// Row-major `[R | t]` of `object` at `frame`, as stored.
    ///
    /// # Panics
    /// If `frame` or `object` is out of range.
    pub fn transform(&self, frame: usize, object: usize) -> [f32; 12] {
        assert!(frame < self.frames && object < self.objects.len());
        self.transforms[frame * self.objects.len() + object]
    }

    /// The pose of `object` at `frame` as a glam affine (f32).
    ///
    /// # Panics
    /// If `frame` or `object` is out of range.
    pub fn pose(&self, frame: usize, object: usize) -> Affine3A {
        let m = self.transform(frame, object);
        Affine3A {
            matrix3: Mat3A::from_cols(
                Vec3A::new(m[0], m[4], m[8]),
                Vec3A::new(m[1], m[5], m[9]),
                Vec3A::new(m[2], m[6], m[10]),
            ),
            translation: Vec3A::new(m[3], m[7], m[11]),
        }
    }

    /// The pose of `object` at `frame` promoted to f64 (exactly) for the exact tests.
    ///
    /// # Panics
    /// If `frame` or `object` is out of range.
    pub fn pose64(&self, frame: usize, object: usize) -> Pose64 {
        let m = self.transform(frame, object).map(f64::from);
        Pose64 {
            rows: [
                [m[0], m[1], m[2], m[3]],
                [m[4], m[5], m[6], m[7]],
                [m[8], m[9], m[10], m[11]],
            ],
        }
    }

    /// Whether `object` deforms (has per-frame vertex positions).
    pub fn is_deforming(&self, object: usize) -> bool {
        self.objects
            .get(object)
            .is_some_and(|o| o.motion == Motion::Deforming && !self.verts[object].is_empty())
    }

    /// Vertex positions of `object` at `frame` in the object's own frame (apply
    /// [`Scene::pose64`] for world coordinates): the per-frame array for deforming objects,
    /// the mesh's positions for rigid ones.
    ///
    /// # Panics
    /// If `frame` or `object` is out of range.
    pub fn positions(&self, frame: usize, object: usize) -> &[Vec3] {
        assert!(frame < self.frames);
        let mesh = self.mesh(object);
        if self.is_deforming(object) {
            let v = mesh.vertex_count();
            &self.verts[object][frame * v..(frame + 1) * v]
        } else {
            mesh.positions()
        }
    }

    /// The object pairs a query covers: its listed pairs, or every unordered pair `i < j` for
    /// `"all"`; empty for single-object queries.
    pub fn query_pairs(&self, query: &SceneQuery) -> Vec<[usize; 2]> {
        match &query.targets {
            QueryTargets::Pairs(p) => p.clone(),
            QueryTargets::AllPairs => {
                let n = self.objects.len();
                (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| [i, j]))
                    .collect()
            }
            QueryTargets::Objects(_) => Vec::new(),
        }
    }
}
