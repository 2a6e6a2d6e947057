//! One surface's tree of the Coons BVH (paper §3–4): level by level, each pending cell is
//! either a Coons leaf (its corner-interpolating patch within ε, with the ε-lists of its two
//! boundary-curve pairs), a cell to split (worst deviation first, within the surface's node
//! budget) or left to the queries' exact evaluation. [`build_surface`] returns the surface's
//! nodes in a local, pointer-based form; [`super::build`] lays every surface's tree out in the
//! succinct forest.

use gprox_geometry::freeform::{NurbsSurface, ParamRect};
use rayon::prelude::*;

use super::build::{MAX_DEPTH, MAX_EPS_LEVELS, NODE_BASE};
use super::quantise::quantise;
pub(super) enum LocalKind {
    Leaf {
        lu: Vec<u8>,
        lv: Vec<u8>,
    },
    /// Not within ε and not split (budget, depth): continued exactly by the queries.
    Exact,
    Internal {
        split_u: bool,
        children: [usize; 2],
    },
}

pub(super) struct LocalNode {
    pub(super) kind: LocalKind,
    pub(super) radius: u8,
    pub(super) deviation: u8,
}

/// Levels of the ε-lists computed by actually splitting the curves; deeper levels of
/// polynomial curves use the certified second-derivative bound `h^2/8 max|C''|`.
const EXACT_LEVELS: usize = 3;

/// `(max |C''|, sum of |C'(k+) - C'(k-)|)` over the Bézier segments of a (rational) curve and
/// their junctions, from the homogeneous control points (quotient rule with hodograph bounds). On any parameter
/// segment of length `h` the chord error is then at most `h^2/8 max|C''| + h/4 sum|jump|`
/// (interpolation error through the Green's function of `d^2/dt^2`, a kink contributing
/// `G(t, k) |jump| <= h/4 |jump|`).
fn derivative_bounds(c: &gprox_geometry::freeform::NurbsCurve) -> Option<(f64, f64)> {
    let p = c.degree();
    let segs = c.bezier_segments();
    let (mut m, mut jumps) = (0.0f64, 0.0f64);
    let mut prev_end: Option<glam::DVec3> = None;
    for ([a, b], seg) in &segs {
        let len = b - a;
        if len <= 0.0 {
            continue;
        }
        let x: Vec<glam::DVec3> = seg.iter().map(|h| h.truncate() / h.w).collect();
        let w: Vec<f64> = seg.iter().map(|h| h.w).collect();
        let wmin = w.iter().copied().fold(f64::INFINITY, f64::min);
        if wmin.is_nan() || wmin <= 0.0 {
            return None;
        }
        // Homogeneous numerator relative to the first point: P = sum B_i w_i (x_i - x_0), so
        // C - x_0 = P / W and |C - x_0| <= r (convex hull).
        let q: Vec<glam::DVec3> = x
            .iter()
            .zip(&w)
            .map(|(xi, wi)| (*xi - x[0]) * *wi)
            .collect();
        let r = x.iter().map(|xi| xi.distance(x[0])).fold(0.0, f64::max);
        let pf = p as f64;
        let (mut p1, mut w1, mut p2, mut w2) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..p {
            p1 = p1.max((q[i + 1] - q[i]).length() * pf / len);
            w1 = w1.max((w[i + 1] - w[i]).abs() * pf / len);
        }
        if p >= 2 {
            let k = pf * (pf - 1.0) / (len * len);
            for i in 0..p - 1 {
                p2 = p2.max((q[i + 2] - 2.0 * q[i + 1] + q[i]).length() * k);
                w2 = w2.max((w[i + 2] - 2.0 * w[i + 1] + w[i]).abs() * k);
            }
        }
        // C' = (P' - W'(C - x0)) / W,  C'' = (P'' - 2 W' C' - W'' (C - x0)) / W.
        let c1 = (p1 + w1 * r) / wmin;
        let c2 = (p2 + 2.0 * w1 * c1 + w2 * r) / wmin;
        m = m.max(c2);
        let start = (x[1] - x[0]) * (pf * w[1] / (w[0] * len));
        if let Some(e) = prev_end {
            jumps += (start - e).length();
        }
        prev_end = Some((x[p] - x[p - 1]) * (pf * w[p - 1] / (w[p] * len)));
    }
    Some((m, jumps))
}

/// Dyadic ε-list of a pair of opposite boundary curves: level k bounds the chord deviation of
/// both curves on each of the `2^k` uniform parameter segments.
fn eps_list(curves: [gprox_geometry::freeform::NurbsCurve; 2], stop: f64, unit: f64) -> Vec<u8> {
    let mut pieces: Vec<gprox_geometry::freeform::NurbsCurve> = curves.to_vec();
    let mut out = Vec::new();
    // Per piece (max |C''|, sum of derivative jumps, parameter length) once the analytic bound
    // takes over.
    let mut analytic: Option<Vec<(f64, f64, f64)>> = None;
    loop {
        let e = match &analytic {
            Some(v) => v
                .iter()
                .map(|&(m, j, h)| m * h * h / 8.0 + j * h / 4.0)
                .fold(0.0, f64::max),
            None => pieces
                .iter()
                .map(|c| c.chord_deviation())
                .fold(0.0, f64::max),
        };
        let Some(q) = quantise(e, unit) else { break };
        out.push(q);
        if e <= stop || out.len() >= MAX_EPS_LEVELS || q == 255 {
            break;
        }
        if let Some(v) = &mut analytic {
            for x in v.iter_mut() {
                x.2 *= 0.5;
            }
            continue;
        }
        pieces = pieces
            .iter()
            .flat_map(|c| {
                let [a, b] = c.domain();
                match c.split(0.5 * (a + b)) {
                    Ok((l, r)) => vec![l, r],
                    Err(_) => vec![c.clone(), c.clone()],
                }
            })
            .collect();
        if out.len() >= EXACT_LEVELS {
            let bounds: Option<Vec<(f64, f64, f64)>> = pieces
                .iter()
                .map(|c| {
                    let [a, b] = c.domain();
                    derivative_bounds(c).map(|(m, j)| (m, j, b - a))
                })
                .collect();
            analytic = bounds;
        }
    }
    out
}

/// One candidate split of a cell: direction, parameter, the two halves and their refined Coons
/// deviations (reused by the children's leaf test).
struct Split {
    along_u: bool,
    t: f64,
    halves: (NurbsSurface, NurbsSurface),
    devs: [f64; 2],
}

impl Split {
    fn worst(&self) -> f64 {
        self.devs[0].max(self.devs[1])
    }
}

/// Chooses the split direction by look-ahead: the direction whose worse half has the smaller
/// Coons deviation (ties: the direction of the larger boundary/net curvature). `None` when the
/// surface cannot be split in either direction.
fn choose_split(
    s: &NurbsSurface,
    sub: &NurbsSurface,
    rect: &ParamRect,
    cd: &[f64],
    depth: usize,
    eps: f64,
    own: f64,
) -> Option<Split> {
    let [du, dv] = sub.net_second_differences();
    let prefer_u = cd[0].max(cd[1]) + du >= cd[2].max(cd[3]) + dv;
    let candidate = |along_u: bool| -> Option<Split> {
        let t = s.split_parameter(rect, along_u);
        let (a, b) = sub.split(along_u, t).ok()?;
        let devs = [a.coons_deviation_within(eps), b.coons_deviation_within(eps)];
        Some(Split {
            along_u,
            t,
            halves: (a, b),
            devs,
        })
    };
    let (su, sv) = rayon::join(|| candidate(true), || candidate(false));
    let (su, sv) = match (su, sv) {
        (None, None) => return None,
        (Some(x), None) | (None, Some(x)) => return Some(x),
        (Some(x), Some(y)) => (x, y),
    };
    let (wu, wv) = (su.worst(), sv.worst());
    // No progress either way (degenerate or rational nets where the look-ahead bound stalls):
    // alternate directions so both parameter lengths shrink and the build converges.
    let progress = wu.min(wv) < own;
    let choice = if !progress {
        depth.is_multiple_of(2)
    } else if wu == wv {
        prefer_u
    } else {
        wu < wv
    };
    // Aspect guard: never keep halving a direction that is already far narrower (relative to
    // the surface's domain) than the other one. Without it the look-ahead can pick the same
    // direction forever on marginal gains (seen on rational nets: a v-width of 1e-12 at depth
    // 40), so the build never converges; with it both widths shrink and it always does.
    let d = s.domain();
    let ru = (rect.u1 - rect.u0) / (d.u1 - d.u0);
    let rv = (rect.v1 - rect.v0) / (d.v1 - d.v0);
    let along_u = if !progress {
        choice
    } else if choice && ru * ASPECT_LIMIT < rv {
        false
    } else if !choice && rv * ASPECT_LIMIT < ru {
        true
    } else {
        choice
    };
    Some(if along_u { su } else { sv })
}

/// Largest ratio of the relative parameter widths of a cell the split choice allows.
const ASPECT_LIMIT: f64 = 16.0;

/// Constants of one build: model unit, absolute Coons tolerance, ε-list stop value, budget.
pub(super) struct Ctx {
    pub(super) unit: f64,
    pub(super) eps: f64,
    pub(super) stop: f64,
    pub(super) budget: usize,
}

/// A node waiting to be built: its sub-surface, rectangle, depth, slot in the surface's node
/// list and (from the parent's look-ahead) its refined Coons deviation.
struct Pending {
    sub: NurbsSurface,
    rect: ParamRect,
    depth: usize,
    slot: usize,
    known_dev: Option<f64>,
}

/// What one node of a level turned out to be before the budget is applied.
enum Outcome {
    Leaf {
        lu: Vec<u8>,
        lv: Vec<u8>,
    },
    /// Not within ε: to be split if the budget allows, worst deviation `own` first.
    Wants {
        own: f64,
    },
    /// Neither within ε nor splittable (depth limit, degenerate): the queries go on exactly.
    Stuck,
}

/// Evaluates one pending node: its quantised scalars and whether it is a Coons leaf or wants a
/// split.
fn evaluate(s: &NurbsSurface, p: &Pending, ctx: &Ctx) -> (u8, u8, Outcome) {
    let (unit, eps, stop) = (ctx.unit, ctx.eps, ctx.stop);
    let nb = NODE_BASE * unit;
    let (um, vm) = p.rect.mid();
    let centre = s.point(um, vm);
    let sub = &p.sub;
    let radius = sub
        .homogeneous_points()
        .iter()
        .map(|h| (h.truncate() / h.w - centre).length())
        .fold(0.0, f64::max);
    let dev = sub.bilinear_deviation().min(2.0 * radius);
    let (radius, deviation) = (
        quantise(radius, nb).unwrap_or(0),
        quantise(dev, nb).unwrap_or(0),
    );
    let level0 = (0..4)
        .map(|k| sub.boundary_curve(k).chord_deviation())
        .fold(0.0, f64::max);
    let own = p
        .known_dev
        .unwrap_or_else(|| sub.coons_deviation_within(eps));
    let outcome = if level0 <= unit && own <= eps {
        let lu = eps_list([sub.boundary_curve(0), sub.boundary_curve(1)], stop, unit);
        let lv = eps_list([sub.boundary_curve(2), sub.boundary_curve(3)], stop, unit);
        Outcome::Leaf { lu, lv }
    } else if p.depth >= MAX_DEPTH {
        Outcome::Stuck
    } else {
        Outcome::Wants { own }
    };
    (radius, deviation, outcome)
}

/// The look-ahead split of a node that wants one.
fn split_of(s: &NurbsSurface, p: &Pending, own: f64, ctx: &Ctx) -> Option<Split> {
    let cd: Vec<f64> = (0..4)
        .map(|k| p.sub.boundary_curve(k).chord_deviation())
        .collect();
    choose_split(s, &p.sub, &p.rect, &cd, p.depth, ctx.eps, own)
}

/// Builds the tree of one surface level by level (index 0 is its root). A level's nodes are
/// evaluated in parallel; its splits are granted worst Coons deviation first while the surface
/// has node budget left, and the nodes left unsplit become exact leaves (the queries continue
/// below them with exact sub-surfaces, as the paper generates nodes on the fly). Returns the
/// nodes, the deepest level and the estimated peak working memory in bytes.
pub(super) fn build_surface(s: &NurbsSurface, ctx: &Ctx) -> (Vec<LocalNode>, usize, usize) {
    let placeholder = || LocalNode {
        kind: LocalKind::Exact,
        radius: 0,
        deviation: 0,
    };
    let mut nodes = vec![placeholder()];
    let mut frontier = vec![Pending {
        sub: s.clone(),
        rect: s.domain(),
        depth: 0,
        slot: 0,
        known_dev: None,
    }];
    let mut deepest = 0;
    let (mut peak, mut eps_bytes) = (0usize, 0usize);
    let net_bytes = |p: &Pending| {
        let [ku, kv] = p.sub.knots();
        std::mem::size_of::<Pending>()
            + std::mem::size_of_val(p.sub.homogeneous_points())
            + 8 * (ku.len() + kv.len())
    };
    while !frontier.is_empty() {
        let working = frontier.iter().map(net_bytes).sum::<usize>()
            + nodes.len() * std::mem::size_of::<LocalNode>()
            + eps_bytes;
        peak = peak.max(working);
        let evaluated: Vec<(u8, u8, Outcome)> =
            frontier.par_iter().map(|p| evaluate(s, p, ctx)).collect();
        // Splits by decreasing deviation get the budget first; only granted ones are computed.
        let own = |k: usize| match &evaluated[k].2 {
            Outcome::Wants { own } => Some(*own),
            _ => None,
        };
        let mut order: Vec<usize> = (0..frontier.len()).filter(|&k| own(k).is_some()).collect();
        order.sort_by(|&x, &y| own(y).unwrap_or(0.0).total_cmp(&own(x).unwrap_or(0.0)));
        let granted = ((ctx.budget.saturating_sub(nodes.len())) / 2).min(order.len());
        let mut splits: Vec<Option<Split>> = (0..frontier.len()).map(|_| None).collect();
        let computed: Vec<(usize, Option<Split>)> = order[..granted]
            .par_iter()
            .map(|&k| (k, split_of(s, &frontier[k], own(k).unwrap_or(0.0), ctx)))
            .collect();
        for (k, sp) in computed {
            splits[k] = sp;
        }
        let mut next = Vec::with_capacity(2 * granted);
        for ((p, (radius, deviation, outcome)), split) in
            frontier.into_iter().zip(evaluated).zip(splits)
        {
            deepest = deepest.max(p.depth);
            let kind = match (outcome, split) {
                (Outcome::Leaf { lu, lv }, _) => {
                    eps_bytes += lu.len() + lv.len();
                    LocalKind::Leaf { lu, lv }
                }
                (Outcome::Wants { .. }, Some(split)) => {
                    let Split {
                        along_u,
                        t,
                        halves: (a, b),
                        devs,
                    } = split;
                    let rects = p.rect.split_at(along_u, t);
                    let first = nodes.len();
                    nodes.push(placeholder());
                    nodes.push(placeholder());
                    for (k, sub) in [a, b].into_iter().enumerate() {
                        next.push(Pending {
                            sub,
                            rect: rects[k],
                            depth: p.depth + 1,
                            slot: first + k,
                            known_dev: Some(devs[k]),
                        });
                    }
                    LocalKind::Internal {
                        split_u: along_u,
                        children: [first, first + 1],
                    }
                }
                (Outcome::Wants { .. } | Outcome::Stuck, _) => LocalKind::Exact,
            };
            nodes[p.slot] = LocalNode {
                kind,
                radius,
                deviation,
            };
        }
        frontier = next;
    }
    (nodes, deepest, peak)
}
