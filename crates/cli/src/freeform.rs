//! `collide` and `distance` between two freeform models (NURBS JSON or `.bpt` files).

use std::time::Instant;

use gprox::Context;
use gprox::FreeformDistanceOptions;
use serde_json::json;

use super::{input, ms, query_error, Failure, MeshPair, Models};

/// How many pairs the human-readable output lists.
const LISTED: usize = 10;

/// The larger of the two models' sizes (largest side of their tessellations' boxes).
fn size(m: &Models) -> f64 {
    [&m.a, &m.b]
        .iter()
        .map(|x| {
            let b = x.bvh().root_aabb();
            (0..3)
                .map(|i| f64::from(b.max[i] - b.min[i]))
                .fold(0.0, f64::max)
        })
        .fold(f64::MIN_POSITIVE, f64::max)
}

/// A tolerance argument, or `fraction` of the models' size.
fn tolerance_or(m: &Models, given: Option<f64>, fraction: f64) -> Result<f64, Failure> {
    match given {
        Some(t) if t.is_finite() && t > 0.0 => Ok(t),
        Some(t) => Err(input(format!(
            "--tolerance must be finite and > 0, got {t}"
        ))),
        None => Ok(fraction * size(m)),
    }
}

/// `gprox collide A B` on freeform models: witnessed contacts within the tolerance (surface
/// points and `(u, v)` on both) and the undecided sub-patch pairs.
pub fn collide_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    tolerance: Option<f64>,
    any: bool,
    json: bool,
) -> Result<(), Failure> {
    let tol = tolerance_or(m, tolerance, 1e-3)?;
    let (pa, pb) = (pair.pose_a(), pair.pose_b());
    let t = Instant::now();
    let (hits, hit) = if any {
        let hit = ctx
            .freeform_collide_any(&m.a, &pa, &m.b, &pb, tol)
            .map_err(query_error)?;
        (None, hit)
    } else {
        let h = ctx
            .freeform_collide(&m.a, &pa, &m.b, &pb, tol)
            .map_err(query_error)?;
        let hit = !h.is_empty();
        (Some(h), hit)
    };
    let query_ms = ms(t);
    if json {
        let contacts: Option<Vec<_>> = hits.as_ref().map(|h| {
            h.contacts
                .iter()
                .map(|x| {
                    json!({
                        "surface_a": x.surface_a,
                        "rect_a": [x.rect_a.u0, x.rect_a.u1, x.rect_a.v0, x.rect_a.v1],
                        "uv_a": [x.uv_a.0, x.uv_a.1],
                        "point_a": x.point_a.to_array(),
                        "surface_b": x.surface_b,
                        "rect_b": [x.rect_b.u0, x.rect_b.u1, x.rect_b.v0, x.rect_b.v1],
                        "uv_b": [x.uv_b.0, x.uv_b.1],
                        "point_b": x.point_b.to_array(),
                        "distance": x.distance,
                    })
                })
                .collect()
        });
        let undecided: Option<Vec<_>> = hits.as_ref().map(|h| {
            h.undecided
                .iter()
                .map(|x| {
                    json!({
                        "surface_a": x.surface_a,
                        "rect_a": [x.rect_a.u0, x.rect_a.u1, x.rect_a.v0, x.rect_a.v1],
                        "surface_b": x.surface_b,
                        "rect_b": [x.rect_b.u0, x.rect_b.u1, x.rect_b.v0, x.rect_b.v1],
                        "lower": x.lower,
                        "upper": x.upper,
                    })
                })
                .collect()
        });
        let v = json!({
            "a": pair.a.display().to_string(),
            "b": pair.b.display().to_string(),
            "backend": ctx.backend().to_string(),
            "freeform": true,
            "tolerance": tol,
            "collide": hit,
            "count": hits.as_ref().map(|h| h.contacts.len()),
            "witnessed": hits.as_ref().map(|h| h.contacts.len()),
            "undecided_count": hits.as_ref().map(|h| h.undecided.len()),
            "contacts": contacts,
            "undecided": undecided,
            "build_ms": m.build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "A: {} ({} surfaces)\nB: {} ({} surfaces)\nbackend: {} (freeform queries run on the cpu)",
        pair.a.display(),
        m.a.surfaces().map_or(0, <[_]>::len),
        pair.b.display(),
        m.b.surfaces().map_or(0, <[_]>::len),
        ctx.backend()
    );
    println!("tolerance: {tol}");
    match &hits {
        None => println!("within tolerance: {hit}"),
        Some(h) => {
            println!(
                "witnessed contacts: {} (undecided sub-patch pairs: {})",
                h.contacts.len(),
                h.undecided.len()
            );
            for x in h.contacts.iter().take(LISTED) {
                println!(
                    "  A surface {} (u, v) = ({:.4}, {:.4}) at {:.6} {:.6} {:.6} x B surface {} ({:.4}, {:.4}) at {:.6} {:.6} {:.6}: {:.3e} apart",
                    x.surface_a,
                    x.uv_a.0,
                    x.uv_a.1,
                    x.point_a.x,
                    x.point_a.y,
                    x.point_a.z,
                    x.surface_b,
                    x.uv_b.0,
                    x.uv_b.1,
                    x.point_b.x,
                    x.point_b.y,
                    x.point_b.z,
                    x.distance
                );
            }
        }
    }
    println!("build {:.3} ms, query {query_ms:.3} ms", m.build_ms);
    Ok(())
}

/// `gprox distance A B` on freeform models: certified minimum distance and closest points.
pub fn distance_cmd(
    ctx: &Context,
    pair: &MeshPair,
    m: &Models,
    tolerance: Option<f64>,
    json: bool,
) -> Result<(), Failure> {
    let opts = FreeformDistanceOptions {
        tolerance: tolerance_or(m, tolerance, 1e-6)?,
        ..Default::default()
    };
    let t = Instant::now();
    let d = ctx
        .freeform_distance(&m.a, &pair.pose_a(), &m.b, &pair.pose_b(), &opts)
        .map_err(query_error)?;
    let query_ms = ms(t);
    if json {
        let v = json!({
            "a": pair.a.display().to_string(),
            "b": pair.b.display().to_string(),
            "backend": ctx.backend().to_string(),
            "freeform": true,
            "distance": d.distance,
            "lower": d.lower,
            "upper": d.upper,
            "converged": d.converged,
            "point_a": d.point_a.to_array(),
            "point_b": d.point_b.to_array(),
            "surface_a": d.surface_a,
            "surface_b": d.surface_b,
            "uv_a": [d.uv_a.0, d.uv_a.1],
            "uv_b": [d.uv_b.0, d.uv_b.1],
            "build_ms": m.build_ms,
            "query_ms": query_ms,
        });
        println!("{v}");
        return Ok(());
    }
    println!(
        "A: {}\nB: {}\nbackend: {} (freeform queries run on the cpu)",
        pair.a.display(),
        pair.b.display(),
        ctx.backend()
    );
    println!(
        "distance: {} (certified bounds [{}, {}]{})",
        d.distance,
        d.lower,
        d.upper,
        if d.converged {
            ""
        } else {
            ", work cap reached"
        }
    );
    let (p, q) = (d.point_a, d.point_b);
    println!(
        "closest point on A: {} {} {} (surface {}, u {}, v {})",
        p.x, p.y, p.z, d.surface_a, d.uv_a.0, d.uv_a.1
    );
    println!(
        "closest point on B: {} {} {} (surface {}, u {}, v {})",
        q.x, q.y, q.z, d.surface_b, d.uv_b.0, d.uv_b.1
    );
    println!("build {:.3} ms, query {query_ms:.3} ms", m.build_ms);
    Ok(())
}
