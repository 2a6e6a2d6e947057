//! Adversarial elementary CCD queries in twelve families (issue #15), built in a canonical
//! frame from dyadic numbers and then moved by an exact dyadic shear, translation and
//! power-of-two scale, so every coordinate is exact in f64 and contact (an affine invariant)
//! is known by construction. Shared by `ccd_elementary.rs` (proptests, with the exact check
//! of each constructed contact) and `ccd_quality.rs` (rates and timings).
#![allow(dead_code)]

use glam::DVec3;

/// The twelve families.
pub const FAMILIES: [&str; 12] = [
    "vf parallel offset",
    "vf coplanar sliding",
    "vf degenerate face",
    "vf tangent double root",
    "vf grazing t=0",
    "vf grazing t=1",
    "vf near miss in space",
    "vf near miss in time",
    "ee parallel offset",
    "ee coplanar sliding",
    "ee crossing / near miss",
    "large coordinates",
];

/// What the construction guarantees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Truth {
    /// `F(t, u, v) = 0` exactly (vertex–face: `u`, `v` barycentric weights of corners 1, 2;
    /// edge–edge: parameters along edge a and edge b).
    Contact { t: f64, u: f64, v: f64 },
    /// No contact; `d` is the separation in the canonical frame (the shear distorts it by a
    /// factor within [1/8, 8]).
    Negative { d: f64 },
}

/// One constructed query.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub family: usize,
    pub edge_edge: bool,
    pub start: [DVec3; 4],
    pub end: [DVec3; 4],
    pub truth: Truth,
}

/// splitmix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Integer in `[lo, hi]`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
    /// Dyadic in `[lo, hi]` with step `2^-bits`.
    pub fn dy(&mut self, lo: f64, hi: f64, bits: i32) -> f64 {
        let s = 2f64.powi(bits);
        self.int((lo * s) as i64, (hi * s) as i64) as f64 / s
    }
    pub fn vec(&mut self, r: f64) -> DVec3 {
        DVec3::new(self.dy(-r, r, 10), self.dy(-r, r, 10), self.dy(-r, r, 10))
    }
    /// A separation `(1 + j/8) 2^-e`, `e` in `[6, 21]` (about 2e-2 down to 5e-7).
    pub fn sep(&mut self) -> f64 {
        (1.0 + self.int(0, 7) as f64 / 8.0) * 2f64.powi(-(self.int(6, 21) as i32))
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }
}

fn d3(x: f64, y: f64, z: f64) -> DVec3 {
    DVec3::new(x, y, z)
}

/// A random triangle in the plane `z = 0` with vertex 0 at the origin, area bounded below.
fn plane_triangle(r: &mut Rng) -> [DVec3; 3] {
    let b = d3(r.dy(0.5, 1.5, 6), r.dy(-0.25, 0.25, 6), 0.0);
    let c = d3(r.dy(-0.25, 0.5, 6), r.dy(0.5, 1.5, 6), 0.0);
    [DVec3::ZERO, b, c]
}

/// `p(t*) = target` with `t* = i / 2^k`: `end = start + (target - start) / t*` (exact when the
/// division is by a power of two; `t* = 0` keeps `start = target`).
fn towards(r: &mut Rng, target: DVec3, tstar: f64) -> (DVec3, DVec3) {
    if tstar == 0.0 {
        return (target, target + r.vec(1.0));
    }
    let start = target + r.vec(1.0);
    (start, start + (target - start) / tstar)
}

/// A time `t*` with `1 / t*` a power of two (so `towards` stays exact), 0 or 1 sometimes.
fn tstar(r: &mut Rng) -> f64 {
    match r.int(0, 5) {
        0 => 0.0,
        1 => 1.0,
        k => 2f64.powi(-(k as i32 - 1)),
    }
}

/// Builds a case of `family` from `seed`.
pub fn case(family: usize, seed: u64) -> Case {
    let mut r = Rng(seed ^ (family as u64).wrapping_mul(0x1000_0001));
    let (edge_edge, mut start, mut end, truth) = canonical(family, &mut r);
    // Exact dyadic shear (unimodular), translation and scale: incidence is preserved.
    let [a, b, c, e, f, g] = [0; 6].map(|_| r.dy(-0.5, 0.5, 3));
    let large = family == 11;
    let shift = if large {
        r.vec(1.0) * 2f64.powi(r.int(16, 20) as i32)
    } else {
        r.vec(4.0)
    };
    let scale = 2f64.powi(if large { r.int(-2, 4) } else { r.int(-3, 3) } as i32);
    let common = if r.chance(1, 2) {
        r.vec(1.0)
    } else {
        DVec3::ZERO
    };
    let map = |p: DVec3, moved: bool| {
        let x = p.x + a * p.y + b * p.z;
        let y = p.y + c * p.z + f * x;
        let z = p.z + e * x + g * y;
        (d3(x, y, z) + if moved { common } else { DVec3::ZERO }) * scale + shift
    };
    for i in 0..4 {
        start[i] = map(start[i], false);
        end[i] = map(end[i], true);
    }
    let truth = match truth {
        Truth::Negative { d } => Truth::Negative { d: d * scale },
        t => t,
    };
    Case {
        family,
        edge_edge,
        start,
        end,
        truth,
    }
}

#[allow(clippy::type_complexity)]
fn canonical(family: usize, r: &mut Rng) -> (bool, [DVec3; 4], [DVec3; 4], Truth) {
    match family {
        // Vertex moving parallel to the face plane at height d across the face.
        0 => {
            let f = plane_triangle(r);
            let d = r.sep();
            let p0 = d3(r.dy(-0.5, 1.5, 8), r.dy(-0.5, 1.5, 8), d);
            let p1 = d3(r.dy(-0.5, 1.5, 8), r.dy(-0.5, 1.5, 8), d);
            (
                false,
                [p0, f[0], f[1], f[2]],
                [p1, f[0], f[1], f[2]],
                Truth::Negative { d },
            )
        }
        // Vertex sliding in the face plane along edge 0-1 (y = 0), just outside (y = -d).
        1 => {
            let f = [
                DVec3::ZERO,
                d3(r.dy(0.5, 1.5, 6), 0.0, 0.0),
                plane_triangle(r)[2],
            ];
            let d = r.sep();
            let p0 = d3(r.dy(-0.5, 1.5, 8), -d, 0.0);
            let p1 = d3(r.dy(-0.5, 1.5, 8), -d, 0.0);
            (
                false,
                [p0, f[0], f[1], f[2]],
                [p1, f[0], f[1], f[2]],
                Truth::Negative { d },
            )
        }
        // Zero-area face (a segment or a point): the vertex passes at distance d, or through it.
        2 => {
            let a = d3(0.0, 0.0, 0.0);
            let len = if r.chance(1, 4) {
                0.0
            } else {
                r.dy(0.25, 1.0, 6)
            };
            let (s1, s2) = (len, len * r.dy(0.0, 1.0, 3));
            let f = [a, d3(s1, 0.0, 0.0), d3(s2, 0.0, 0.0)];
            let x = len * r.dy(0.0, 1.0, 3);
            if r.chance(1, 4) {
                let t = tstar(r);
                let (p0, p1) = towards(r, d3(x, 0.0, 0.0), t);
                let (u, v) = if len == 0.0 {
                    (0.0, 0.0)
                } else {
                    (x / s1, 0.0)
                };
                return (
                    false,
                    [p0, f[0], f[1], f[2]],
                    [p1, f[0], f[1], f[2]],
                    Truth::Contact { t, u, v },
                );
            }
            let d = r.sep();
            let p0 = d3(x, d, r.dy(-1.0, -0.25, 6));
            let p1 = d3(x, d, r.dy(0.25, 1.0, 6));
            (
                false,
                [p0, f[0], f[1], f[2]],
                [p1, f[0], f[1], f[2]],
                Truth::Negative { d },
            )
        }
        // Tilting face, vertex height h + κμ (t - t*)²: a double root when h = 0.
        3 => {
            let ts = r.dy(0.0, 1.0, 4);
            let kappa = r.dy(0.25, 2.0, 4);
            let mu = r.dy(0.25, 2.0, 4);
            let x = r.dy(0.0625, 0.4375, 6);
            let y0 = r.dy(0.0625, 0.4375, 6);
            let h = if r.chance(1, 3) { 0.0 } else { r.sep() };
            let c0 = d3(0.0, 1.0, -kappa * ts);
            let c1 = d3(0.0, 1.0, kappa * (1.0 - ts));
            let p0 = d3(x, y0 + mu * ts, h - kappa * y0 * ts);
            let p1 = d3(x, y0 - mu * (1.0 - ts), h + kappa * y0 * (1.0 - ts));
            let (a, b) = (DVec3::ZERO, d3(1.0, 0.0, 0.0));
            let truth = if h == 0.0 {
                Truth::Contact { t: ts, u: x, v: y0 }
            } else {
                Truth::Negative { d: h }
            };
            (false, [p0, a, b, c0], [p1, a, b, c1], truth)
        }
        // Vertex on the face (inside, on an edge or a corner) at t = 0 or at t = 1.
        4 | 5 => {
            let f0 = plane_triangle(r);
            let f1 = [f0[0] + r.vec(0.5), f0[1] + r.vec(0.5), f0[2] + r.vec(0.5)];
            let (u, v) = match r.int(0, 3) {
                0 => (0.0, 0.0),
                1 => (r.dy(0.0, 1.0, 4), 0.0),
                2 => {
                    let u = r.dy(0.0, 1.0, 4);
                    (u, 1.0 - u)
                }
                _ => {
                    let u = r.dy(0.0, 0.5, 4);
                    (u, r.dy(0.0, 0.5, 4))
                }
            };
            let on = |f: &[DVec3; 3]| f[0] + (f[1] - f[0]) * u + (f[2] - f[0]) * v;
            let t = if family == 4 { 0.0 } else { 1.0 };
            let (p0, p1) = if family == 4 {
                (on(&f0), on(&f0) + r.vec(1.0))
            } else {
                (on(&f1) + r.vec(1.0), on(&f1))
            };
            (
                false,
                [p0, f0[0], f0[1], f0[2]],
                [p1, f1[0], f1[1], f1[2]],
                Truth::Contact { t, u, v },
            )
        }
        // Vertex crossing the face plane just outside edge 0-1 (at y = -d).
        6 => {
            let f = [
                DVec3::ZERO,
                d3(r.dy(0.5, 1.5, 6), 0.0, 0.0),
                plane_triangle(r)[2],
            ];
            let d = r.sep();
            let x = r.dy(0.0, 0.5, 6);
            let z = r.dy(0.25, 1.0, 6);
            let dx = r.dy(-0.25, 0.25, 6);
            let p0 = d3(x - dx, -d, z);
            let p1 = d3(x + dx, -d, -z);
            (
                false,
                [p0, f[0], f[1], f[2]],
                [p1, f[0], f[1], f[2]],
                Truth::Negative { d },
            )
        }
        // Vertex approaching the face interior and stopping at height d at t = 1 (or leaving
        // from height d at t = 0).
        7 => {
            let f = plane_triangle(r);
            let d = r.sep();
            let q = d3(r.dy(0.125, 0.375, 6), r.dy(0.125, 0.375, 6), d);
            let far = q + d3(
                r.dy(-0.25, 0.25, 6),
                r.dy(-0.25, 0.25, 6),
                r.dy(0.25, 1.0, 6),
            );
            let (p0, p1) = if r.chance(1, 2) { (far, q) } else { (q, far) };
            (
                false,
                [p0, f[0], f[1], f[2]],
                [p1, f[0], f[1], f[2]],
                Truth::Negative { d },
            )
        }
        // Parallel edges at constant offset d, sliding along each other.
        8 => {
            let d = r.sep();
            let la = r.dy(0.5, 1.5, 6);
            let lb = r.dy(0.5, 1.5, 6);
            let (s0, s1) = (r.dy(-1.0, 1.0, 6), r.dy(-1.0, 1.0, 6));
            let (dy, dz) = if r.chance(1, 2) { (d, 0.0) } else { (0.0, d) };
            let a = [DVec3::ZERO, d3(la, 0.0, 0.0)];
            let b0 = [d3(s0, dy, dz), d3(s0 + lb, dy, dz)];
            let b1 = [d3(s1, dy, dz), d3(s1 + lb, dy, dz)];
            (
                true,
                [a[0], a[1], b0[0], b0[1]],
                [a[0], a[1], b1[0], b1[1]],
                Truth::Negative { d },
            )
        }
        // Coplanar edges: b's endpoint slides across the line of a just beyond a's end, or b
        // collinear with a and sliding at a gap d.
        9 => {
            let d = r.sep();
            let la = r.dy(0.5, 1.5, 6);
            let a = [DVec3::ZERO, d3(la, 0.0, 0.0)];
            if r.chance(1, 2) {
                let e = d3(r.dy(0.0, 1.0, 6), r.dy(0.25, 1.0, 6), 0.0);
                let y0 = r.dy(-1.0, -0.25, 6);
                let y1 = r.dy(0.25, 1.0, 6);
                let p0 = d3(la + d, y0, 0.0);
                let p1 = d3(la + d, y1, 0.0);
                (
                    true,
                    [a[0], a[1], p0, p0 + e],
                    [a[0], a[1], p1, p1 + e],
                    Truth::Negative { d },
                )
            } else {
                let lb = r.dy(0.25, 1.0, 6);
                let g0 = la + d;
                let g1 = g0 + r.dy(0.0, 0.5, 6);
                (
                    true,
                    [a[0], a[1], d3(g0, 0.0, 0.0), d3(g0 + lb, 0.0, 0.0)],
                    [a[0], a[1], d3(g1, 0.0, 0.0), d3(g1 + lb, 0.0, 0.0)],
                    Truth::Negative { d },
                )
            }
        }
        // Edges crossing exactly at t* (t* = 0, 1 or inside), or missing by d in z there.
        10 => {
            let la = r.dy(0.5, 1.5, 6);
            let a = [DVec3::ZERO, d3(la, 0.0, 0.0)];
            let u = r.dy(0.0, 1.0, 4);
            let v = r.dy(0.0, 1.0, 4);
            let e = d3(r.dy(-1.0, 1.0, 6), r.dy(0.25, 1.0, 6), r.dy(-0.5, 0.5, 6));
            let ts = tstar(r);
            let miss = r.chance(1, 2);
            let d = if miss { r.sep() } else { 0.0 };
            let q = d3(la * u, 0.0, d);
            // b0 + v (b1 - b0) = q at t*, b1 - b0 = e.
            let (b0s, b0e) = if miss {
                // Motion within the span of a and e: the lines keep their distance (> d/4).
                let m = d3(r.dy(-1.0, 1.0, 6), 0.0, 0.0) + e * r.dy(-1.0, 1.0, 6);
                if ts == 0.0 {
                    (q - e * v, q - e * v + m)
                } else {
                    let s = q - e * v + m;
                    (s, s + (q - e * v - s) / ts)
                }
            } else {
                towards(r, q - e * v, ts)
            };
            let truth = if miss {
                Truth::Negative { d }
            } else {
                Truth::Contact { t: ts, u, v }
            };
            (
                true,
                [a[0], a[1], b0s, b0s + e],
                [a[0], a[1], b0e, b0e + e],
                truth,
            )
        }
        _ => canonical(r.int(0, 10) as usize, r),
    }
}
