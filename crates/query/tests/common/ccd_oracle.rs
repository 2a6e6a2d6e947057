//! Exact-rational oracle for the certainty of CCD answers (issue #15): every reported answer's
//! witness `(t, u, v)` is checked in exact arithmetic — it lies in the domain, inside the
//! reported time interval for a certified contact, and the features there are within the
//! reported separation bound on every axis — and a certified contact's bound is within the
//! tolerance (+ min separation + the rounding bound).
#![allow(dead_code)]

use glam::DVec3;
use gprox_query::ccd::{CcdOptions, CcdStatus, Toi};
use num_rational::BigRational;
use num_traits::{Signed, Zero};

fn q(x: f64) -> BigRational {
    BigRational::from_float(x).expect("finite")
}

/// Exact `F(t, u, v)` of a query (`[p, a, b, c]` or `[a0, a1, b0, b1]` at both ends).
pub fn exact_f(
    edge_edge: bool,
    start: &[DVec3; 4],
    end: &[DVec3; 4],
    t: f64,
    u: f64,
    v: f64,
) -> [BigRational; 3] {
    let (t, u, v) = (q(t), q(u), q(v));
    let one = BigRational::from_integer(1.into());
    std::array::from_fn(|axis| {
        let x: Vec<BigRational> = (0..4)
            .map(|i| {
                let (s, e) = (q(start[i][axis]), q(end[i][axis]));
                &s * (&one - &t) + &e * &t
            })
            .collect();
        if edge_edge {
            // (a0 - b0) + u (a1 - a0) + v (b0 - b1)
            (&x[0] - &x[2]) + &u * (&x[1] - &x[0]) + &v * (&x[2] - &x[3])
        } else {
            // (p - a) + u (a - b) + v (a - c)
            (&x[0] - &x[1]) + &u * (&x[1] - &x[2]) + &v * (&x[1] - &x[3])
        }
    })
}

/// Checks one answer's claims exactly; `Err` says which failed.
pub fn check_answer(
    edge_edge: bool,
    start: &[DVec3; 4],
    end: &[DVec3; 4],
    r: &Option<Toi>,
    opts: &CcdOptions,
) -> Result<(), String> {
    let Some(toi) = r else { return Ok(()) };
    let [t, u, v] = toi.witness;
    let in_unit = |x: f64| (0.0..=1.0).contains(&x);
    if !(in_unit(t) && in_unit(u) && in_unit(v)) || (!edge_edge && q(u) + q(v) > q(1.0)) {
        return Err(format!("witness outside the domain: {toi:?}"));
    }
    if toi.t_lo > toi.t_hi || toi.t_lo.is_nan() || toi.t_hi.is_nan() {
        return Err(format!("empty interval: {toi:?}"));
    }
    let f = exact_f(edge_edge, start, end, t, u, v);
    let bound = q(toi.separation);
    if f.iter().any(|x| x.abs() > bound) {
        let got: Vec<f64> = f.iter().map(to_f64).collect();
        return Err(format!("|F(witness)| = {got:?} above the bound: {toi:?}"));
    }
    if toi.status == CcdStatus::Contact {
        if !(toi.t_lo <= t && t <= toi.t_hi) {
            return Err(format!("contact witness outside [t_lo, t_hi]: {toi:?}"));
        }
        let m = start
            .iter()
            .chain(end.iter())
            .map(|p| p.abs().max_element())
            .fold(0.0, f64::max);
        let slack = 2.0 * 64.0 * f64::EPSILON * m * 1.01 + 1e-300;
        if toi.separation > opts.tolerance + opts.min_separation + slack {
            return Err(format!("certified contact above the tolerance: {toi:?}"));
        }
    }
    Ok(())
}

fn to_f64(x: &BigRational) -> f64 {
    use num_traits::ToPrimitive;
    x.to_f64().unwrap_or(f64::NAN)
}

/// Whether `F(t, u, v) = 0` exactly.
pub fn touches(
    edge_edge: bool,
    start: &[DVec3; 4],
    end: &[DVec3; 4],
    t: f64,
    u: f64,
    v: f64,
) -> bool {
    exact_f(edge_edge, start, end, t, u, v)
        .iter()
        .all(|x| x.is_zero())
}
