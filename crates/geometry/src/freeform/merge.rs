//! Joining surfaces that share a whole boundary row of control points into one B-spline
//! surface (e.g. the 32 Bézier patches of the teapot into a few piecewise-polynomial surfaces,
//! as the paper's 8 NURBS surfaces), so a Coons patch may span several Bézier pieces.

use glam::DVec4;

use super::NurbsSurface;

/// Joins `a` and `b` along u when `a`'s last u-row equals `b`'s first u-row exactly (same
/// degrees, same v knots, same homogeneous points); `b` is reparametrised to follow `a`.
pub fn join_along_u(a: &NurbsSurface, b: &NurbsSurface) -> Option<NurbsSurface> {
    let ([p, q], [na, m]) = (a.degree(), a.count());
    let [nb, mb] = b.count();
    if b.degree() != [p, q] || mb != m || a.knots()[1] != b.knots()[1] {
        return None;
    }
    let (ha, hb) = (a.homogeneous_points(), b.homogeneous_points());
    if ha[(na - 1) * m..] != hb[..m] {
        return None;
    }
    let (ka, kb) = (a.knots()[0], b.knots()[0]);
    let end = ka[ka.len() - 1];
    let shift = end - kb[0];
    let mut knots: Vec<f64> = ka[..ka.len() - 1].to_vec();
    knots.extend(kb[p + 1..].iter().map(|&k| k + shift));
    if knots.windows(2).any(|w| w[1] < w[0]) {
        return None;
    }
    // Junction multiplicity must stay <= p (it is p: the end copies of a minus one).
    let mut pts: Vec<DVec4> = ha.to_vec();
    pts.extend_from_slice(&hb[m..]);
    let euclid: Vec<glam::DVec3> = pts.iter().map(|h| h.truncate() / h.w).collect();
    let weights: Vec<f64> = pts.iter().map(|h| h.w).collect();
    NurbsSurface::new(
        [p, q],
        [knots, a.knots()[1].to_vec()],
        [na + nb - 1, m],
        euclid,
        Some(weights),
    )
    .ok()
}

/// The same surface with u and v exchanged.
pub fn transpose(s: &NurbsSurface) -> NurbsSurface {
    let [n, m] = s.count();
    let h = s.homogeneous_points();
    let mut euclid = Vec::with_capacity(n * m);
    let mut weights = Vec::with_capacity(n * m);
    for j in 0..m {
        for i in 0..n {
            let x = h[i * m + j];
            euclid.push(x.truncate() / x.w);
            weights.push(x.w);
        }
    }
    let [ku, kv] = s.knots();
    let [p, q] = s.degree();
    // The input was valid, so is its transpose.
    NurbsSurface::new(
        [q, p],
        [kv.to_vec(), ku.to_vec()],
        [m, n],
        euclid,
        Some(weights),
    )
    .unwrap_or_else(|_| s.clone())
}

/// Greedily joins surfaces sharing a boundary row (along u or v, either order) until no pair
/// joins. Geometry is unchanged; the result usually has far fewer surfaces.
pub fn merge_adjacent(surfaces: &[NurbsSurface]) -> Vec<NurbsSurface> {
    let mut out: Vec<NurbsSurface> = surfaces.to_vec();
    loop {
        let mut joined = None;
        'search: for i in 0..out.len() {
            for j in 0..out.len() {
                if i == j {
                    continue;
                }
                if let Some(s) = join_along_u(&out[i], &out[j]) {
                    joined = Some((i, j, s));
                    break 'search;
                }
                if let Some(s) = join_along_u(&transpose(&out[i]), &transpose(&out[j])) {
                    joined = Some((i, j, transpose(&s)));
                    break 'search;
                }
            }
        }
        let Some((i, j, s)) = joined else { break };
        out[i] = s;
        out.remove(j);
    }
    out
}
