//! Checking a run's frames against what is known to be true: the reference results of the
//! peers' folder (a brute-force oracle) and the scene's own truth (or the harness's brute-force
//! truth for small targets, `oracle.rs`).

use std::collections::BTreeMap;

use gprox::geometry::scene::Truth;

use crate::peers::RefFrame;
use crate::report::RefCheck;
use crate::run::RunData;

/// Entry `f` of an optional per-frame array.
fn at<T: Copy>(v: &Option<Vec<T>>, f: usize) -> Option<T> {
    v.as_ref().and_then(|v| v.get(f).copied())
}

/// The scene's own truth of a target as reference frames (`None` when it has none).
fn truth_frames(truth: Option<Truth>) -> Option<BTreeMap<usize, RefFrame>> {
    let t = truth?;
    let frames = [
        t.count.as_ref().map(Vec::len),
        t.collide.as_ref().map(Vec::len),
        t.distance.as_ref().map(Vec::len),
        t.toi.as_ref().map(Vec::len),
    ]
    .into_iter()
    .flatten()
    .max()?;
    Some(
        (0..frames)
            .map(|f| {
                let r = RefFrame {
                    count: at(&t.count, f),
                    collide: at(&t.collide, f),
                    distance: at(&t.distance, f),
                    toi: at(&t.toi, f),
                    object_pairs: None,
                };
                (f, r)
            })
            .collect(),
    )
}

/// Compares a run's frames with the reference frames of the peers' results (the brute-force
/// oracle) and with the scene's own truth; `source` is `none` when there was neither.
pub(crate) fn check_reference(
    data: &RunData,
    peers: Option<&crate::peers::PeerQuery>,
    src: &str,
    truth: Option<(&str, Truth)>,
) -> RefCheck {
    let mut check = RefCheck::default();
    let mut sources = Vec::new();
    if let Some(pq) = peers.filter(|p| !p.reference.is_empty()) {
        sources.push(src.to_string());
        if data.frames.iter().any(|f| f.inside_vertices.is_some()) {
            check.notes.push(
                "penetration: the reference is analytic (tessellation error), not compared; \
                 parry3d-f64 (same process) is the cross-check"
                    .into(),
            );
        }
        // The reference is a float64 numpy computation: distances agree to 1e-5 relative (or
        // to the digits it is written with).
        compare_frames(data, &pq.reference, "ref", 1e-5, &mut check);
    }
    if let Some((label, t)) = truth.and_then(|(label, t)| Some((label, truth_frames(Some(t))?))) {
        sources.push(label.into());
        // The scene's truth is exact to the digits it is written with: distances agree to
        // 1e-9 relative or half a unit in its last digit.
        compare_frames(data, &t, "truth", 1e-9, &mut check);
    }
    check.source = if sources.is_empty() {
        "none".into()
    } else {
        sources.join(" + ")
    };
    check
}

/// Half a unit in the last digit `x` is written with (its shortest decimal form): a truth
/// value rounded to six decimals, `0.019615`, is trusted to `5e-7`.
fn written_precision(x: f64) -> f64 {
    let text = format!("{:e}", x.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let exp: i32 = exp.parse().unwrap_or(0);
    0.5 * 10f64.powi(exp - digits)
}

/// Compares every frame of `data` that `reference` has; mismatches and notes name `tag`.
fn compare_frames(
    data: &RunData,
    reference: &BTreeMap<usize, RefFrame>,
    tag: &str,
    distance_rel: f64,
    check: &mut RefCheck,
) {
    for f in &data.frames {
        let Some(r) = reference.get(&f.frame) else {
            continue;
        };
        check.frames_checked += 1;
        if let (Some(a), Some(b)) = (f.count, r.count) {
            if a != b {
                check
                    .mismatches
                    .push(format!("f{}: count {a} vs {b} ({tag})", f.frame));
            }
        }
        if let (Some(a), Some(b)) = (f.collide, r.collide) {
            if a != b {
                check
                    .mismatches
                    .push(format!("f{}: collide {a} vs {b} ({tag})", f.frame));
            }
        }
        if let (Some(a), Some(b)) = (f.distance, r.distance) {
            let allowed = (distance_rel * b.abs())
                .max(written_precision(b))
                .max(1e-15);
            if (a - b).abs() > allowed {
                check
                    .mismatches
                    .push(format!("f{}: distance {a:.9} vs {b:.9} ({tag})", f.frame));
            }
        }
        if let (Some(a), Some(b)) = (f.toi, r.toi) {
            // Later than the reference = a missed contact: a failure. Earlier is what a
            // conservative solver may report (a certified lower bound): noted, not failed.
            if a > b + 1e-9 {
                check.mismatches.push(format!(
                    "f{}: toi {a:.9} later than {b:.9} ({tag})",
                    f.frame
                ));
            } else if a < b - 1e-6 {
                check.notes.push(format!(
                    "f{}: toi {a:.9} earlier than {b:.9} ({tag}), conservative",
                    f.frame
                ));
            }
        }
        if let (Some(a), Some(b)) = (&f.object_pairs, &r.object_pairs) {
            if a != b {
                check.mismatches.push(format!(
                    "f{}: object pairs differ ({} vs {} ({tag}))",
                    f.frame,
                    a.len(),
                    b.len()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::written_precision;

    #[test]
    fn precision_of_written_numbers() {
        assert_eq!(written_precision(0.019615), 0.5e-6);
        assert_eq!(written_precision(0.5), 0.05);
        assert_eq!(written_precision(2.0), 0.5);
        assert_eq!(written_precision(1.25e-7), 0.5e-9);
        // A full-precision value is trusted to its last bit or so.
        assert!(written_precision(0.1 + 0.2) < 1e-16);
    }
}
