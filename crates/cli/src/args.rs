//! The command line: subcommands, their arguments and the pose syntax.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use glam::{Affine3A, EulerRot, Quat, Vec3};
use gprox::{Backend, Context};

use super::{input, models, Failure, Models};

#[derive(Parser)]
#[command(
    name = "gprox",
    version,
    about = "Geometric proximity queries between triangle meshes"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The poses of A and B.
#[derive(Args)]
pub struct Poses {
    /// Pose of A: `tx,ty,tz[,rx,ry,rz]`, rotations in degrees about x, then y, then z.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pub pose_a: Option<Affine3A>,
    /// Pose of B, as `--pose-a`.
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pub pose_b: Option<Affine3A>,
}

impl Poses {
    /// Pose of A (identity when not given).
    pub fn pose_a(&self) -> Affine3A {
        self.pose_a.unwrap_or(Affine3A::IDENTITY)
    }

    /// Pose of B (identity when not given).
    pub fn pose_b(&self) -> Affine3A {
        self.pose_b.unwrap_or(Affine3A::IDENTITY)
    }
}

/// Where a query runs and how it reports (every query subcommand but `image-collide`).
#[derive(Args)]
pub struct RunArgs {
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Two model files and their poses (the pair subcommands).
#[derive(Args)]
pub struct MeshPair {
    /// First model file (mesh: .obj .stl .ply; freeform: .json NURBS, .bpt).
    pub a: PathBuf,
    /// Second model file.
    pub b: PathBuf,
    #[command(flatten)]
    pub poses: Poses,
    /// Freeform inputs: run the mesh queries on their tessellation (within 1e-3 of the
    /// model's size) instead of the freeform queries.
    #[arg(long)]
    pub tessellate: bool,
}

impl MeshPair {
    /// Pose of A (identity when not given).
    pub fn pose_a(&self) -> Affine3A {
        self.poses.pose_a()
    }

    /// Pose of B (identity when not given).
    pub fn pose_b(&self) -> Affine3A {
        self.poses.pose_b()
    }

    /// Loads both models on `ctx` (bad files: exit status 2): meshes, or freeform models
    /// (their tessellations with `--tessellate`).
    pub fn models(&self, ctx: &Context) -> Result<Models, Failure> {
        let (a, ta) = models::load(ctx, &self.a, self.tessellate)?;
        let (b, tb) = models::load(ctx, &self.b, self.tessellate)?;
        Ok(Models {
            a,
            b,
            build_ms: ta + tb,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendArg {
    /// CUDA device 0 when usable, else the CPU.
    Auto,
    /// The CPU (rayon).
    Cpu,
    /// CUDA device 0.
    Cuda,
    /// The CUDA kernels on the CPU through the host emulator (slow; for checking).
    Emulated,
}

impl BackendArg {
    /// The context of the chosen backend (a typed input error when CUDA cannot run here).
    pub fn context(self) -> Result<Context, Failure> {
        let backend = match self {
            BackendArg::Auto => Backend::auto(),
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Cuda => Backend::Cuda(0),
            BackendArg::Emulated => Backend::Emulated,
        };
        Context::new(backend).map_err(input)
    }
}

// Parsed once per run: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Command {
    /// Intersecting triangle pairs between two meshes (OBJ, STL, PLY).
    Collide {
        #[command(flatten)]
        pair: MeshPair,
        /// Contact margin (world units, >= 0): pairs closer than this also count.
        #[arg(long, default_value_t = 0.0)]
        margin: f64,
        /// Only answer whether they intersect (early out).
        #[arg(long)]
        any: bool,
        /// Freeform models: contact tolerance in world units (default: 1e-3 of the larger
        /// model's size).
        #[arg(long)]
        tolerance: Option<f64>,
        #[command(flatten)]
        run: RunArgs,
        /// Draw both meshes with the contact triangles highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
        /// Write both posed meshes with per-face colours, contact faces red (`.ply`, or `.obj`
        /// with a companion `.mtl`).
        #[arg(long)]
        export: Option<PathBuf>,
    },
    /// Exact minimum distance between two models, closest points and triangles (surfaces).
    Distance {
        #[command(flatten)]
        pair: MeshPair,
        /// Freeform models: certified bound gap `upper - lower` in world units (default: 1e-6
        /// of the larger model's size).
        #[arg(long)]
        tolerance: Option<f64>,
        #[command(flatten)]
        run: RunArgs,
        /// Draw both meshes, the closest points joined by a segment (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Vertices of each closed mesh strictly inside the other: depth, closest point, direction.
    Penetration {
        /// The two meshes (closed, consistently oriented).
        #[command(flatten)]
        pair: MeshPair,
        #[command(flatten)]
        run: RunArgs,
        /// Draw both meshes, penetrating vertices as dots joined to their closest points, the
        /// faces holding those points highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Image-space intersection of two closed meshes (Hoff et al. 2002): volume with its error
    /// bound, samples inside both, deepest contact and direction, optionally every sample.
    ///
    /// A device backend classifies the samples; the depths run on the CPU.
    PenetrationField {
        /// The two meshes (closed, consistently oriented).
        #[command(flatten)]
        pair: MeshPair,
        /// Error tolerance d (world units, > 0): no point is farther than d from a sample
        /// (default: A's box diagonal / 180, the paper's ratio).
        #[arg(long, allow_hyphen_values = true)]
        tolerance: Option<f64>,
        #[command(flatten)]
        run: RunArgs,
        /// Write every sample inside both meshes as CSV: position, region, depth, unit
        /// direction and face out of B, then out of A.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Continuous collision over one step: A and B move from their poses to their end poses;
    /// every feature pair that may touch, with a certified time of impact.
    Ccd {
        #[command(flatten)]
        pair: MeshPair,
        /// Pose of A at the end of the step (default: `--pose-a`).
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        end_pose_a: Option<Affine3A>,
        /// Pose of B at the end of the step (default: `--pose-b`).
        #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
        end_pose_b: Option<Affine3A>,
        /// Minimum separation: report pairs that come closer than this (world units, >= 0).
        #[arg(long, default_value_t = 0.0)]
        min_separation: f64,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Self-intersecting face pairs (sharing no vertex) of one mesh.
    #[command(name = "self")]
    SelfCollide {
        /// Mesh file.
        m: PathBuf,
        #[command(flatten)]
        run: RunArgs,
        /// Draw the mesh with the contact triangles highlighted (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
        /// Write the mesh with per-face colours, contact faces red (`.ply` or `.obj`).
        #[arg(long)]
        export: Option<PathBuf>,
    },
    /// Geometry-image collision of two trimmed NURBS models (face files, `model.json` or its
    /// folder), or self-collision of one (B left out): the quad pairs that may touch.
    ImageCollide {
        /// First model: a trimmed face file, a `model.json` or a folder holding one.
        a: PathBuf,
        /// Second model (left out: self-collision of A).
        b: Option<PathBuf>,
        #[command(flatten)]
        poses: Poses,
        /// Accuracy ε relative to each model's size (the largest side of its control box).
        #[arg(long, default_value_t = 1e-3)]
        epsilon: f64,
        /// Report quads whose triangles intersect (exact mode) instead of overlapping boxes.
        #[arg(long)]
        exact: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Draw the models with the contact texels as red dots (`.png` or `.svg`).
        #[arg(long)]
        render: Option<PathBuf>,
    },
    /// Facts about a mesh file or a scene folder.
    Info {
        /// Mesh file or `proxbench-scene/1` folder.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Every query of a scene over its frames, with times (the benchmark harness's engine).
    Bench {
        /// Scene folder, or `builtin`.
        scene: PathBuf,
        /// Only the first N frames.
        #[arg(long)]
        frames: Option<usize>,
        /// Repetitions of every build, update and query (medians are reported).
        #[arg(long, default_value_t = 1)]
        repeats: usize,
        #[command(flatten)]
        run: RunArgs,
    },
}

/// Parses `tx,ty,tz[,rx,ry,rz]` (rotations in degrees about x, then y, then z).
pub fn parse_pose(s: &str) -> Result<Affine3A, String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f32>()
                .map_err(|_| format!("`{x}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() != 3 && v.len() != 6 {
        return Err(format!(
            "expected tx,ty,tz or tx,ty,tz,rx,ry,rz; got {} values",
            v.len()
        ));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err("pose values must be finite".into());
    }
    let r = if v.len() == 6 {
        let d = |x: f32| x.to_radians();
        Quat::from_euler(EulerRot::ZYX, d(v[5]), d(v[4]), d(v[3]))
    } else {
        Quat::IDENTITY
    };
    Ok(Affine3A::from_rotation_translation(
        r,
        Vec3::new(v[0], v[1], v[2]),
    ))
}
