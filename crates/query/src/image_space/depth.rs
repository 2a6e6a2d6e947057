//! Exact nearest surface points of many lattice samples at once (the per-sample depths of
//! §5.4 and the distance field of §5.2), block by block.
//!
//! A search per sample through the world tree is slow deep inside a solid: the boxes of the
//! tree's inner nodes all contain the sample, and a whole ring of faces lies at nearly the
//! same distance. Lattice samples are close to each other, so the work is shared:
//!
//! 1. Samples are grouped into blocks of `BLOCK³` cells. The exact nearest distance `D` of the
//!    centre `c` of a block's samples (one tree search) bounds every sample `p` of the block:
//!    `dist(p) ≤ D + |p − c| ≤ D + r` (`r`: half the diagonal of the samples' box).
//! 2. One walk of the tree gathers the block's candidates: every face whose box is within
//!    `D + r` of the samples' box. The nearest face of every sample of the block is among
//!    them; each keeps the unit normal and offset of its plane.
//! 3. Per sample (along the columns): the previous sample's face gives a first distance; the
//!    distance to a candidate's plane, a lower bound of the distance to the face that costs one
//!    dot product (a vectorised pass over all candidates), skips every face that cannot beat
//!    it; the others get the exact
//!    [`point_triangle_distance`](gprox_geometry::tri_distance::point_triangle_distance), from
//!    triangles set up once per block ([`PointTriangle`]).
//!
//! Every bound is widened by a margin far above the rounding of the box, plane and triangle
//! distances, so the result is exactly the brute-force minimum over all faces (smallest face
//! id among equal distances), whatever the evaluation order.

use glam::DVec3;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use gprox_geometry::tri_distance::PointTriangle;

use super::intersect::SurfacePoint;
use super::lattice::Lattice;
use crate::world::World;

/// Edge of a block, in cells.
pub(super) const BLOCK: u32 = 4;

/// Relative margin of every pruning bound (in units of the coordinates' magnitude): far above
/// the rounding of box, plane and point–triangle distances.
const MARGIN: f64 = 1e-9;

/// A triangle whose sine of the angle at its first corner is below this gets no plane bound
/// (its normal is too uncertain); it is always evaluated exactly.
const MIN_SINE: f64 = 1e-3;

/// A world mesh and the lower-bound coefficients of its faces ([`bounds`]). A block computes
/// the coefficients of the faces it gathers; once a query has asked for as many samples as the
/// mesh has faces, the coefficients of every face are computed once and shared (a shallow
/// contact then costs no pass over the whole mesh, a deep one no recomputation per block).
pub(crate) struct Surface<'w, 'a> {
    world: &'w World<'a>,
    table: OnceLock<Vec<[f64; 16]>>,
    samples: AtomicUsize,
}

impl<'w, 'a> Surface<'w, 'a> {
    /// `world`, no coefficients computed yet.
    pub(crate) fn new(world: &'w World<'a>) -> Self {
        Self {
            world,
            table: OnceLock::new(),
            samples: AtomicUsize::new(0),
        }
    }

    /// The table of every face's coefficients when this query has reached as many samples as
    /// faces (counting `more` now), else `None`.
    fn table(&self, more: usize) -> Option<&[[f64; 16]]> {
        let faces = self.world.faces.len();
        let seen = self.samples.fetch_add(more, Ordering::Relaxed) + more;
        let table = if seen >= faces {
            self.table.get_or_init(|| {
                (0..faces as u32)
                    .map(|f| bounds(self.world.triangle(f)))
                    .collect()
            })
        } else {
            self.table.get()?
        };
        Some(table)
    }
}

/// Reusable buffers of [`surface_points`].
#[derive(Default)]
pub(crate) struct DepthScratch {
    order: Vec<u32>,
    start: Vec<usize>,
    fill: Vec<usize>,
    stack: Vec<(u32, f64)>,
    walk: Vec<u32>,
    /// The candidates, padded with `u32::MAX` to a multiple of [`LANES`].
    faces: Vec<u32>,
    /// The candidates' triangles, set up for point distances (not padded).
    triangles: Vec<PointTriangle>,
    /// Their bound coefficients, [`LANES`] candidates per pack.
    packs: Vec<Pack>,
    bound: Vec<[f64; LANES]>,
    /// Which candidates have a bound under the first cut, 64 per word.
    under: Vec<u64>,
}

/// Candidates per pack of bound coefficients (one AVX2 register of `f64`).
const LANES: usize = 4;

/// The bound coefficients ([`bounds`]) of [`LANES`] candidates: coefficient `k` of lane `l` at
/// `[k][l]`, so that the bound pass runs on whole registers with no remainder loop.
type Pack = [[f64; LANES]; 16];

/// A pack with no candidates: plane offset `−∞` makes every lane's bound `+∞`.
const EMPTY_PACK: Pack = {
    let mut p = [[0.0; LANES]; 16];
    p[3] = [f64::NEG_INFINITY; LANES];
    p
};

/// The nearest point of `w`'s surface to the sample of every cell of `cells` (same order),
/// written to `out` (cleared first).
pub(crate) fn surface_points(
    w: &Surface<'_, '_>,
    lattice: &Lattice,
    cells: &[[u32; 3]],
    s: &mut DepthScratch,
    out: &mut Vec<SurfacePoint>,
) {
    out.clear();
    out.resize(
        cells.len(),
        SurfacePoint {
            distance: f64::INFINITY,
            point: DVec3::ZERO,
            face: u32::MAX,
        },
    );
    // Sample indices grouped by block (a counting sort: blocks in lattice order `z`, `y`, `x`,
    // the samples of a block in their given order).
    let Some(first) = cells.first() else {
        return;
    };
    let (mut lo, mut hi) = (first.map(|x| x / BLOCK), first.map(|x| x / BLOCK));
    for c in cells {
        for a in 0..3 {
            lo[a] = lo[a].min(c[a] / BLOCK);
            hi[a] = hi[a].max(c[a] / BLOCK);
        }
    }
    let n = [0, 1, 2].map(|a| (hi[a] - lo[a]) as usize + 1);
    let block = |c: &[u32; 3]| {
        let b = [0, 1, 2].map(|a| (c[a] / BLOCK - lo[a]) as usize);
        (b[2] * n[1] + b[1]) * n[0] + b[0]
    };
    let blocks = n[0].checked_mul(n[1]).and_then(|x| x.checked_mul(n[2]));
    let mut order = std::mem::take(&mut s.order);
    order.clear();
    s.start.clear();
    match blocks.filter(|&b| b <= 4 * cells.len() + 64) {
        Some(blocks) => {
            s.start.resize(blocks + 1, 0);
            for c in cells {
                s.start[block(c) + 1] += 1;
            }
            for b in 1..s.start.len() {
                s.start[b] += s.start[b - 1];
            }
            order.resize(cells.len(), 0);
            s.fill.clear();
            s.fill.extend_from_slice(&s.start);
            for (i, c) in cells.iter().enumerate() {
                let b = block(c);
                order[s.fill[b]] = i as u32;
                s.fill[b] += 1;
            }
        }
        // Sparse cells over a huge box: sort by block instead of counting.
        None => {
            let key = |i: u32| {
                let c = cells[i as usize];
                [2, 1, 0].map(|a| c[a] / BLOCK)
            };
            order.extend(0..cells.len() as u32);
            order.sort_by_key(|&i| key(i));
            s.start.push(0);
            for j in 1..order.len() {
                if key(order[j]) != key(order[j - 1]) {
                    s.start.push(j);
                }
            }
            s.start.push(order.len());
        }
    }
    let table = w.table(cells.len());
    let mut seed: Option<(u32, DVec3)> = None;
    for b in 0..s.start.len() - 1 {
        let idx = &order[s.start[b]..s.start[b + 1]];
        if !idx.is_empty() {
            seed = Some(run_block(
                (w.world, table),
                lattice,
                cells,
                idx,
                seed,
                s,
                out,
            ));
        }
    }
    s.order = order;
}

/// The samples `idx` of one block; `seed` is the last face found in the previous block and that
/// block's centre. Returns the last sample's face and this block's centre.
fn run_block(
    (w, table): (&World<'_>, Option<&[[f64; 16]]>),
    lattice: &Lattice,
    cells: &[[u32; 3]],
    idx: &[u32],
    seed: Option<(u32, DVec3)>,
    s: &mut DepthScratch,
    out: &mut [SurfacePoint],
) -> (u32, DVec3) {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for &i in idx {
        let p = lattice.center(cells[i as usize]);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let c = 0.5 * (lo + hi);
    let r = 0.5 * (hi - lo).length();
    // An upper bound `D` of the nearest distance at `c` (any bound keeps the block's search
    // exact, a tight one keeps its candidates few): next to the previous block, the distance to
    // its last face (nearly always within a cell or two of the nearest); else a tree search.
    let centre = match seed {
        Some((f, at)) if at.distance(c) <= 2.0 * f64::from(BLOCK) * lattice.spacing => {
            let (distance, _) = w.point_distance(c, f);
            (distance, f)
        }
        _ => {
            let seeds = seed.map(|x| [x.0]);
            let n = w.nearest(c, seeds.as_ref().map_or(&[], |x| x), &mut s.stack);
            (n.distance, n.face)
        }
    };
    let scale = w.magnitude + lo.abs().max(hi.abs()).max_element();
    let reach = (centre.0 + r) * (1.0 + MARGIN) + MARGIN * scale;
    // A face nearest to a sample p of the block has d(c) − r ≤ d(p) ≤ D + r: its bound at c
    // is at most D + 2r.
    let keep = (centre.0 + 2.0 * r) * (1.0 + MARGIN) + MARGIN * scale;
    gather(w, table, [lo, hi], reach, (c, keep * keep), s);
    // The centre's face is a candidate (its box and its bound at `c` are within `D`), but any
    // candidate is a valid start. None at all can only come from non-finite input: then the
    // centre's face stands in for every sample.
    let start = s.faces.iter().position(|&f| f == centre.1);
    let Some(mut last) = start.or((!s.triangles.is_empty()).then_some(0)) else {
        for &i in idx {
            let p = lattice.center(cells[i as usize]);
            let (distance, point) = w.point_distance(p, centre.1);
            out[i as usize] = SurfacePoint {
                distance,
                point,
                face: centre.1,
            };
        }
        return (centre.1, c);
    };
    for &i in idx {
        let p = lattice.center(cells[i as usize]);
        let (best, at) = nearest_among(p, last, scale, s);
        last = at;
        out[i as usize] = best;
    }
    (s.faces[last], c)
}

/// Collects into `s` every face of `w` whose box is within `reach` of the box `[lo, hi]` and
/// whose squared lower bound at `c` is at most `keep2`, with its bound coefficients (from
/// `table` when there is one).
fn gather(
    w: &World<'_>,
    table: Option<&[[f64; 16]]>,
    [lo, hi]: [DVec3; 2],
    reach: f64,
    (c, keep2): (DVec3, f64),
    s: &mut DepthScratch,
) {
    s.faces.clear();
    s.triangles.clear();
    s.packs.clear();
    let cut = reach * reach;
    let gap = |n: &crate::world::Node| {
        let d = (n.lo - hi).max(lo - n.hi).max(DVec3::ZERO);
        d.length_squared()
    };
    s.walk.clear();
    s.walk.push(w.root());
    while let Some(i) = s.walk.pop() {
        let n = &w.nodes[i as usize];
        if gap(n) > cut {
            continue;
        }
        if !n.is_leaf() {
            s.walk.push(n.right);
            s.walk.push(n.left);
            continue;
        }
        let computed;
        let b = match table {
            Some(all) => &all[n.left as usize],
            None => {
                computed = bounds(w.triangle(n.left));
                &computed
            }
        };
        if lower_bound2(b, c) > keep2 {
            continue;
        }
        let lane = s.faces.len() % LANES;
        if lane == 0 {
            s.packs.push(EMPTY_PACK);
        }
        let pack = s.packs.last_mut().expect("a pack per lane group");
        for (k, &x) in b.iter().enumerate() {
            pack[k][lane] = x;
        }
        s.faces.push(n.left);
        s.triangles.push(PointTriangle::new(&w.triangle(n.left)));
    }
    s.faces.resize(s.packs.len() * LANES, u32::MAX);
}

/// The squared lower bound of [`bounds`] at `p`.
#[inline]
fn lower_bound2(b: &[f64; 16], p: DVec3) -> f64 {
    let dot = |k: usize| b[k] * p.x + b[k + 1] * p.y + b[k + 2] * p.z - b[k + 3];
    let (h, e) = (dot(0), dot(4).max(dot(8)).max(dot(12)).max(0.0));
    h * h + e * e
}

/// Coefficients of the lower bound of the distance from a point to the triangle `[a, b, c]`:
/// its plane `(n, o)` and, for each edge, the plane through the edge perpendicular to the
/// triangle, facing out (`(m, o)`); the distance is at least
/// `√((n·p − o)² + max(0, max_e (m_e·p − o_e))²)`. All zero (no bound) for a sliver.
fn bounds([a, b, c]: [DVec3; 3]) -> [f64; 16] {
    let (e1, e2) = (b - a, c - a);
    let m = e1.cross(e2);
    let len = m.length();
    let mut out = [0.0; 16];
    if !(len.is_finite() && len > MIN_SINE * e1.length() * e2.length()) {
        return out;
    }
    let n = m / len;
    out[..4].copy_from_slice(&[n.x, n.y, n.z, n.dot(a)]);
    // Edge `from -> to` of a counter-clockwise triangle (about n): outward is `edge × n`.
    for (k, (from, to)) in [(a, b), (b, c), (c, a)].into_iter().enumerate() {
        let out_dir = (to - from).cross(n).normalize_or_zero();
        out[4 + 4 * k..8 + 4 * k].copy_from_slice(&[
            out_dir.x,
            out_dir.y,
            out_dir.z,
            out_dir.dot(from),
        ]);
    }
    out
}

/// The nearest of the gathered faces to `p` (the minimum over all faces, see the module
/// docs), starting from candidate `warm`; with its candidate index.
fn nearest_among(p: DVec3, warm: usize, scale: f64, s: &mut DepthScratch) -> (SurfacePoint, usize) {
    let (d, q) = s.triangles[warm].distance(p);
    let mut best = SurfacePoint {
        distance: d,
        point: q,
        face: s.faces[warm],
    };
    let mut at = warm;
    let margin = MARGIN * scale;
    // Lower bounds of the candidates' distances (squared; see `bounds`) and which are under
    // the first cut, in one vectorised pass; then the few set bits with the current cut.
    let mut cut = (best.distance + margin).powi(2);
    // Every entry is written by the pass: only grow the buffer.
    if s.bound.len() < s.packs.len() {
        s.bound.resize(s.packs.len(), [f64::INFINITY; LANES]);
    }
    let bound = &mut s.bound[..s.packs.len()];
    lower_bounds(&s.packs, p, cut, bound, &mut s.under);
    for (word_at, &word) in s.under.iter().enumerate() {
        let mut mask = word;
        while mask != 0 {
            let j = 64 * word_at + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let f = s.faces[j];
            if s.bound[j / LANES][j % LANES] > cut || j == at {
                continue;
            }
            let (d, q) = s.triangles[j].distance(p);
            if d < best.distance || (d == best.distance && f < best.face) {
                best = SurfacePoint {
                    distance: d,
                    point: q,
                    face: f,
                };
                at = j;
                cut = (d + margin).powi(2);
            }
        }
    }
    (best, at)
}

/// Packs per word of [`DepthScratch::under`].
const PACKS_PER_WORD: usize = 64 / LANES;

/// The squared lower bounds ([`bounds`]) at `p` of the candidates of `packs`, into `bound`
/// (same length), and into `under` (cleared first) one bit per candidate, set when its bound
/// is at most `cut`: whole registers, four lanes wide where the CPU has AVX2 (the same
/// operations in the same order either way, so the same values).
fn lower_bounds(
    packs: &[Pack],
    p: DVec3,
    cut: f64,
    bound: &mut [[f64; LANES]],
    under: &mut Vec<u64>,
) {
    under.clear();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { lower_bounds_avx2(packs, p, cut, bound, under) };
    }
    lower_bounds_plain(packs, p, cut, bound, under);
}

/// [`lower_bounds`] with AVX2 intrinsics: one register per coefficient of a pack, the
/// operations of [`lower_bounds_plain`] in its order (`vmaxpd` is its comparison `max`,
/// `vcmppd` with `LE_OQ` its `<=`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lower_bounds_avx2(
    packs: &[Pack],
    p: DVec3,
    cut: f64,
    bound: &mut [[f64; LANES]],
    under: &mut Vec<u64>,
) {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_cmp_pd, _mm256_loadu_pd, _mm256_max_pd, _mm256_movemask_pd,
        _mm256_mul_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd,
        _CMP_LE_OQ,
    };
    let (px, py, pz) = (
        _mm256_set1_pd(p.x),
        _mm256_set1_pd(p.y),
        _mm256_set1_pd(p.z),
    );
    let cut = _mm256_set1_pd(cut);
    // SAFETY: an unaligned load of four `f64`s from an array of four.
    let load = |x: &[f64; LANES]| unsafe { _mm256_loadu_pd(x.as_ptr()) };
    let mut word = 0u64;
    for (i, (c, out)) in packs.iter().zip(bound.iter_mut()).enumerate() {
        // `c[k]·p − c[k + 3]` on the four lanes.
        macro_rules! dot {
            ($k:expr) => {
                _mm256_sub_pd(
                    _mm256_add_pd(
                        _mm256_add_pd(
                            _mm256_mul_pd(load(&c[$k]), px),
                            _mm256_mul_pd(load(&c[$k + 1]), py),
                        ),
                        _mm256_mul_pd(load(&c[$k + 2]), pz),
                    ),
                    load(&c[$k + 3]),
                )
            };
        }
        let h = dot!(0);
        let e = _mm256_max_pd(
            _mm256_max_pd(_mm256_max_pd(dot!(4), dot!(8)), dot!(12)),
            _mm256_setzero_pd(),
        );
        let b = _mm256_add_pd(_mm256_mul_pd(h, h), _mm256_mul_pd(e, e));
        // SAFETY: an unaligned store of four `f64`s into an array of four.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), b) };
        let bits = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(b, cut)) as u64;
        word |= bits << (LANES * (i % PACKS_PER_WORD));
        if i % PACKS_PER_WORD == PACKS_PER_WORD - 1 {
            under.push(word);
            word = 0;
        }
    }
    if !packs.len().is_multiple_of(PACKS_PER_WORD) {
        under.push(word);
    }
}

/// [`lower_bounds`] for any CPU. The maxima are comparisons (`a > b ? a : b`, like
/// `vmaxpd`); a NaN coefficient could only lower a bound.
fn lower_bounds_plain(
    packs: &[Pack],
    p: DVec3,
    cut: f64,
    bound: &mut [[f64; LANES]],
    under: &mut Vec<u64>,
) {
    let max = |a: f64, b: f64| if a > b { a } else { b };
    let mut word = 0u64;
    for (i, (c, out)) in packs.iter().zip(bound.iter_mut()).enumerate() {
        for l in 0..LANES {
            let dot =
                |k: usize| c[k][l] * p.x + c[k + 1][l] * p.y + c[k + 2][l] * p.z - c[k + 3][l];
            let h = dot(0);
            let e = max(max(max(dot(4), dot(8)), dot(12)), 0.0);
            out[l] = h * h + e * e;
            word |= u64::from(out[l] <= cut) << (LANES * (i % PACKS_PER_WORD) + l);
        }
        if i % PACKS_PER_WORD == PACKS_PER_WORD - 1 {
            under.push(word);
            word = 0;
        }
    }
    if !packs.len().is_multiple_of(PACKS_PER_WORD) {
        under.push(word);
    }
}

#[cfg(test)]
mod tests {
    //! The packed bound pass against its definition: every lane's value is the scalar bound of
    //! [`lower_bound2`] (bit for bit, on the dispatched and the plain paths), never above the
    //! exact point–triangle distance, and the mask marks exactly the lanes under the cut.

    use super::*;
    use gprox_geometry::tri_distance::point_triangle_distance;
    use proptest::prelude::*;

    fn point() -> impl Strategy<Value = DVec3> {
        prop::array::uniform3(-2.0f64..2.0).prop_map(DVec3::from_array)
    }

    /// Packs of `tris` (the empty lanes padded) and both passes' outputs at `p`.
    #[allow(clippy::type_complexity)]
    fn passes(tris: &[[DVec3; 3]], p: DVec3, cut: f64) -> ([Vec<[f64; LANES]>; 2], [Vec<u64>; 2]) {
        let mut packs = Vec::new();
        for (j, t) in tris.iter().enumerate() {
            if j % LANES == 0 {
                packs.push(EMPTY_PACK);
            }
            let b = bounds(*t);
            let pack: &mut Pack = packs.last_mut().unwrap();
            for (k, &x) in b.iter().enumerate() {
                pack[k][j % LANES] = x;
            }
        }
        let mut bound = [
            vec![[0.0; LANES]; packs.len()],
            vec![[0.0; LANES]; packs.len()],
        ];
        let mut under = [vec![7], vec![7]];
        let [b0, b1] = &mut bound;
        let [u0, u1] = &mut under;
        lower_bounds(&packs, p, cut, b0, u0);
        u1.clear();
        lower_bounds_plain(&packs, p, cut, b1, u1);
        (bound, under)
    }

    proptest! {
        #[test]
        fn packed_bounds_are_the_scalar_bounds(
            tris in prop::collection::vec(prop::array::uniform3(point()), 0..70),
            p in point(),
            cut in 0.0f64..4.0,
        ) {
            let (bound, under) = passes(&tris, p, cut);
            prop_assert_eq!(&bound[0], &bound[1]);
            prop_assert_eq!(&under[0], &under[1]);
            prop_assert_eq!(under[0].len(), tris.len().div_ceil(64));
            for (j, t) in tris.iter().enumerate() {
                let lb = bound[0][j / LANES][j % LANES];
                prop_assert_eq!(lb.to_bits(), lower_bound2(&bounds(*t), p).to_bits());
                let (d, _) = point_triangle_distance(p, t);
                prop_assert!(lb.sqrt() <= d * (1.0 + 1e-12) + 1e-12, "bound {} > {}", lb.sqrt(), d);
                prop_assert_eq!(under[0][j / 64] >> (j % 64) & 1 == 1, lb <= cut);
            }
            // Padding lanes are never under the cut.
            for j in tris.len()..bound[0].len() * LANES {
                prop_assert!(bound[0][j / LANES][j % LANES] == f64::INFINITY);
                prop_assert_eq!(under[0].get(j / 64).map_or(0, |w| w >> (j % 64) & 1), 0);
            }
        }
    }
}
