//! The `penetration-field` subcommand: the image-space intersection of two closed meshes (Hoff
//! et al. 2002) — the samples inside both, the volume with its error bound, the deepest
//! contact with its direction, and optionally every sample with its depths and directions as
//! CSV.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use gprox::query::collide::Side;
use gprox::query::penetration::PenetrationError;
use gprox::{Context, Error, ImageSpaceError, ImageSpaceOptions, Intersection};
use serde_json::json;

use super::{input, internal, ms, query_error, Failure, MeshPair, Models};

/// The paper's tolerance ratio: the default tolerance is A's box diagonal over this.
const DEFAULT_RATIO: f64 = 180.0;

/// What `penetration-field` was asked for besides the pair.
pub struct FieldArgs<'a> {
    /// Tolerance `d` (default: A's box diagonal / 180).
    pub tolerance: Option<f64>,
    /// Where to write the samples (CSV).
    pub out: Option<&'a Path>,
    /// Machine-readable output.
    pub json: bool,
}

/// The default tolerance for `m`: its box diagonal over [`DEFAULT_RATIO`].
fn default_tolerance(m: &gprox::geometry::TriMesh) -> f64 {
    let p = m.positions();
    let lo = p.iter().fold(glam::Vec3::INFINITY, |a, &b| a.min(b));
    let hi = p.iter().fold(glam::Vec3::NEG_INFINITY, |a, &b| a.max(b));
    f64::from((hi - lo).length()) / DEFAULT_RATIO
}

/// Maps the query's error: the input's fault (exit status 2, naming the file) when a mesh is
/// open or misoriented, the tolerance bad or the lattice too large.
fn field_error(e: Error, a: &Path, b: &Path) -> Failure {
    let file = |s: Side| match s {
        Side::A => a.display().to_string(),
        Side::B => b.display().to_string(),
    };
    match &e {
        Error::ImageSpace(ImageSpaceError::Mesh(
            PenetrationError::NotClosed { object, .. }
            | PenetrationError::NotOriented { object, .. }
            | PenetrationError::NonFinitePose { object },
        )) => input(format!("{}: {e}", file(*object))),
        Error::ImageSpace(
            ImageSpaceError::BadTolerance(_) | ImageSpaceError::TooManyCells { .. },
        ) => input(format!("--tolerance: {e}")),
        _ => query_error(e),
    }
}

/// Writes every sample (position, depth and unit direction out of each mesh) as CSV.
fn write_samples(r: &Intersection, path: &Path) -> Result<(), Failure> {
    let file = std::fs::File::create(path)
        .map_err(|e| input(format!("{}: cannot write: {e}", path.display())))?;
    let mut w = std::io::BufWriter::new(file);
    let fail = |e: std::io::Error| internal(format!("{}: {e}", path.display()));
    writeln!(
        w,
        "x,y,z,region,depth_in_b,dir_out_of_b_x,dir_out_of_b_y,dir_out_of_b_z,face_b,\
         depth_in_a,dir_out_of_a_x,dir_out_of_a_y,dir_out_of_a_z,face_a"
    )
    .map_err(fail)?;
    for s in r.samples() {
        let (p, db, da) = (s.position, s.direction_out_of_b(), s.direction_out_of_a());
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.x,
            p.y,
            p.z,
            s.region,
            s.depth_in_b(),
            db.x,
            db.y,
            db.z,
            s.b.face,
            s.depth_in_a(),
            da.x,
            da.y,
            da.z,
            s.a.face
        )
        .map_err(fail)?;
    }
    w.flush().map_err(fail)
}

/// `gprox penetration-field A B`: the intersection volume with its bound, the sample count,
/// the deepest contact (depth, point, direction to move A out) and one line per contact.
pub fn penetration_field_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    args: &FieldArgs<'_>,
) -> Result<(), Failure> {
    let (a, b) = (pair.a.as_path(), pair.b.as_path());
    let d = match args.tolerance {
        Some(d) => d,
        None => default_tolerance(m.a.mesh()),
    };
    let opts = ImageSpaceOptions::new(d);
    let t = Instant::now();
    let r = ctx
        .intersection_volume(&m.a, &pair.pose_a(), &m.b, &pair.pose_b(), &opts)
        .map_err(|e| field_error(e, a, b))?;
    let query_ms = ms(t);
    if let Some(path) = args.out {
        write_samples(&r, path)?;
    }
    let deepest = r
        .contacts()
        .iter()
        .max_by(|x, y| x.depth.total_cmp(&y.depth));
    let max_depth = deepest.map_or(0.0, |c| c.depth);
    if args.json {
        let contacts: Vec<_> = r
            .contacts()
            .iter()
            .map(|c| {
                json!({
                    "region": c.region,
                    "point": c.point.to_array(),
                    "depth": c.depth,
                    "normal": c.normal.to_array(),
                    "samples": c.samples,
                })
            })
            .collect();
        let v = json!({
            "a": a.display().to_string(),
            "b": b.display().to_string(),
            "backend": ctx.backend().to_string(),
            "tolerance": d,
            "spacing": r.lattice().spacing,
            "samples": r.count(),
            "volume": r.volume(),
            "volume_bound": r.volume_bound(),
            "max_depth": max_depth,
            "direction": deepest.map(|c| c.normal.to_array()),
            "contacts": contacts,
            "build_ms": m.build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
        return Ok(());
    }
    println!("{}", m.header(pair));
    println!(
        "tolerance {d} (cell edge {}), backend {}",
        r.lattice().spacing,
        ctx.backend()
    );
    println!(
        "intersection volume {} ± {} ({} samples inside both)",
        r.volume(),
        r.volume_bound(),
        r.count()
    );
    match deepest {
        Some(c) => {
            let (p, n) = (c.point, c.normal);
            println!(
                "max depth {} at {} {} {}, direction (move A) {} {} {}",
                c.depth, p.x, p.y, p.z, n.x, n.y, n.z
            );
        }
        None => println!("max depth 0 (no sample inside both)"),
    }
    for c in r.contacts() {
        println!(
            "  contact {}: {} samples, depth {}",
            c.region, c.samples, c.depth
        );
    }
    println!("build {:.3} ms, query {query_ms:.3} ms", m.build_ms);
    if let Some(path) = args.out {
        println!("samples: {}", path.display());
    }
    Ok(())
}
