//! Inside classification of lattice samples (§5.1 of Hoff et al.), one ray column at a time.
//!
//! A tile of columns along axis `k` gathers, with one walk of the world tree, the faces whose
//! box reaches the tile's prism (faces wholly below it are behind every sample and cannot
//! count) and bins them into its columns by their projected boxes. Each column is classified
//! face by face, not sample by sample (the runs of §5.1.1's sorted crossings): a face's
//! contribution is constant on runs of samples — ahead of every sample below its box, behind
//! every sample above it, and inside its `k` range split by the exact `orient3d` sign, which is
//! monotone along the column, into at most three runs found with a few evaluations. The runs
//! are added to difference arrays, and one prefix sum gives every sample's winding number and
//! surface flag. The triangle–cell test of `near` runs only on the cells the face's plane may
//! meet.
//!
//! The ray from a sample runs along `+e_k` with the symbolic perturbation of
//! `penetration/inside.rs` ([`crossing`]): a face crossed by the perturbed line counts `±1`
//! when the crossing lies ahead. The crossing lies on the face, so within the face's `k` range:
//! a face wholly above the sample is ahead, one wholly below is behind, and only faces whose
//! range holds the sample need the exact `orient3d` sign. A sample on a closed face is
//! [`Sample::surface`] (exactly as `classify` decides it, including faces the perturbed line
//! misses), so every sample gets exactly the place `classify` would give it. `near` records
//! whether any face may meet the sample's cell (`near.rs`): when none does, the whole cell
//! lies on the sample's side of the surface.

use std::ops::Range;

use glam::{DVec2, DVec3};
use gprox_geometry::predicates::{orient3d, project};

use super::lattice::{CellBox, Lattice};
use super::near::triangle_meets_box;
use crate::penetration::inside::{crossing, on_coplanar_face};
use crate::world::World;

/// The place of one sample relative to one closed mesh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Winding number of the mesh around the sample (meaningless when `surface`).
    pub(crate) winding: i32,
    /// The sample lies on a closed face.
    pub(crate) surface: bool,
    /// Some face may meet the sample's cell (else the cell is wholly on one side).
    pub(crate) near: bool,
}

impl Sample {
    /// Strictly inside: not on the surface and a non-zero winding number.
    #[inline]
    pub(crate) fn inside(&self) -> bool {
        !self.surface && self.winding != 0
    }

    /// The sample's code ([`super::SAMPLE_INSIDE`], [`super::SAMPLE_NEAR`],
    /// [`super::SAMPLE_SURFACE`] bits), as the device kernel writes it.
    #[inline]
    pub(crate) fn code(&self) -> u8 {
        let mut c = 0;
        if self.inside() {
            c |= super::SAMPLE_INSIDE;
        }
        if self.near {
            c |= super::SAMPLE_NEAR;
        }
        if self.surface {
            c |= super::SAMPLE_SURFACE;
        }
        c
    }
}

/// A face gathered by a tile: its box.
#[derive(Clone, Copy, Debug)]
struct Item {
    lo: DVec3,
    hi: DVec3,
    face: u32,
}

/// Work space of [`ColumnTile::column`]: per sample, the differences of the winding number
/// and of the number of faces the sample lies on, and whether some face may meet its cell.
#[derive(Default)]
pub(crate) struct ColumnScratch {
    winding: Vec<i32>,
    surface: Vec<i32>,
    near: Vec<bool>,
}

/// The faces of one mesh binned into the columns of one tile.
pub(crate) struct ColumnTile<'t, 'w> {
    world: &'t World<'w>,
    lattice: Lattice,
    k: usize,
    tile: CellBox,
    items: Vec<Item>,
    /// Column `c`'s items are `bins[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    bins: Vec<u32>,
}

impl<'t, 'w> ColumnTile<'t, 'w> {
    /// Gathers and bins the faces of `world` for the columns along `k` of `tile`.
    pub(crate) fn new(world: &'t World<'w>, lattice: &Lattice, k: usize, tile: &CellBox) -> Self {
        let (u, v) = ((k + 1) % 3, (k + 2) % 3);
        let h = lattice.spacing;
        // The tile's prism, one cell wider than its cells (a superset; cells test exactly).
        let mut lo = DVec3::ZERO;
        let mut hi = DVec3::ZERO;
        for a in [u, v] {
            lo[a] = lattice.coordinate(a, tile.lo[a], 0.0) - h;
            hi[a] = lattice.coordinate(a, tile.hi[a], 0.0) + h;
        }
        lo[k] = lattice.coordinate(k, tile.lo[k], 0.0) - h;
        hi[k] = f64::INFINITY;
        let mut items = Vec::new();
        let mut stack = vec![world.root()];
        while let Some(i) = stack.pop() {
            let n = &world.nodes[i as usize];
            if !(n.lo.cmple(hi).all() && lo.cmple(n.hi).all()) {
                continue;
            }
            if n.is_leaf() {
                items.push(Item {
                    lo: n.lo,
                    hi: n.hi,
                    face: n.left,
                });
            } else {
                stack.push(n.right);
                stack.push(n.left);
            }
        }
        // Bin by projected box: padded index ranges (the column test is exact).
        let nu = tile.hi[u] - tile.lo[u];
        let nv = tile.hi[v] - tile.lo[v];
        let range = |a: usize, l: f64, h_: f64| {
            let idx = |x: f64| ((x - lattice.origin[a]) / h).floor();
            let first = (idx(l) - 1.0).max(f64::from(tile.lo[a])) as u32;
            let last = (idx(h_) + 1.0).min(f64::from(tile.hi[a]) - 1.0) as u32;
            (first, last)
        };
        let ranges: Vec<[(u32, u32); 2]> = items
            .iter()
            .map(|it| [range(u, it.lo[u], it.hi[u]), range(v, it.lo[v], it.hi[v])])
            .collect();
        let mut start = vec![0u32; (nu * nv) as usize + 1];
        for [ru, rv] in &ranges {
            for cv in rv.0..=rv.1 {
                for cu in ru.0..=ru.1 {
                    start[((cv - tile.lo[v]) * nu + (cu - tile.lo[u])) as usize + 1] += 1;
                }
            }
        }
        for i in 0..(nu * nv) as usize {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut bins = vec![0u32; start[(nu * nv) as usize] as usize];
        for (i, [ru, rv]) in ranges.iter().enumerate() {
            for cv in rv.0..=rv.1 {
                for cu in ru.0..=ru.1 {
                    let c = ((cv - tile.lo[v]) * nu + (cu - tile.lo[u])) as usize;
                    bins[fill[c] as usize] = i as u32;
                    fill[c] += 1;
                }
            }
        }
        Self {
            world,
            lattice: *lattice,
            k,
            tile: *tile,
            items,
            start,
            bins,
        }
    }

    /// Classifies the samples of column `(cu, cv)` (lattice indices along `k + 1`, `k + 2`),
    /// from `tile.lo[k]` upwards, into `out`.
    ///
    /// Face by face rather than sample by sample: a face counts `sig` for every sample below
    /// its box and none above it; inside its `k` range the exact sign of `orient3d` is
    /// monotone along the column (linear in the sample's `k` coordinate), so the samples where
    /// the crossing lies ahead, on the face's plane, or behind are three runs found with a few
    /// evaluations ([`sign_runs`]). Only the cells near the face's plane ([`plane_slab`]) get
    /// the triangle–cell test.
    pub(crate) fn column(&self, cu: u32, cv: u32, out: &mut Vec<Sample>, s: &mut ColumnScratch) {
        let k = self.k;
        let (u, v) = ((k + 1) % 3, (k + 2) % 3);
        let l = &self.lattice;
        let (ul, uh) = (l.coordinate(u, cu, 0.0), l.coordinate(u, cu, 1.0));
        let (vl, vh) = (l.coordinate(v, cv, 0.0), l.coordinate(v, cv, 1.0));
        let mut p = DVec3::ZERO;
        p[u] = l.coordinate(u, cu, 0.5);
        p[v] = l.coordinate(v, cv, 0.5);
        let pp: DVec2 = project(p, k);
        let nu = self.tile.hi[u] - self.tile.lo[u];
        let c = ((cv - self.tile.lo[v]) * nu + (cu - self.tile.lo[u])) as usize;
        let k0 = self.tile.lo[k];
        let n = (self.tile.hi[k] - k0) as usize;
        let z = |i: usize, f: f64| l.coordinate(k, k0 + i as u32, f);
        // Fractional sample index of a `k` coordinate (a guess, corrected exactly).
        let at = |x: f64| (x - l.origin[k]) / l.spacing - f64::from(k0);
        let sample = |i: usize| {
            let mut q = p;
            q[k] = z(i, 0.5);
            q
        };
        s.winding.clear();
        s.winding.resize(n + 1, 0);
        s.surface.clear();
        s.surface.resize(n + 1, 0);
        s.near.clear();
        s.near.resize(n, false);
        let half = DVec3::splat(0.5 * l.spacing);
        for &i in &self.bins[self.start[c] as usize..self.start[c + 1] as usize] {
            let it = &self.items[i as usize];
            if it.lo[u] > uh || it.hi[u] < ul || it.lo[v] > vh || it.hi[v] < vl {
                continue;
            }
            let (lo_k, hi_k) = (it.lo[k], it.hi[k]);
            let on_line =
                it.lo[u] <= p[u] && p[u] <= it.hi[u] && it.lo[v] <= p[v] && p[v] <= it.hi[v];
            let t = self.world.triangle(it.face);
            let sig = if on_line { crossing(&t, k, pp, 1) } else { 0 };
            // Cells whose `k` range meets the face's: `[a, b)`.
            let a = first_from(n, at(lo_k) - 1.0, |i| lo_k <= z(i, 1.0));
            let b = first_from(n, at(hi_k), |i| hi_k < z(i, 0.0));
            // The triangle–cell test where the face's plane may meet the cell.
            let (mut na, mut nb) = (a, b);
            if let Some((lo, hi)) = plane_slab(&t, p, k, half.x) {
                na = na.max(first_from(n, at(lo) - 0.5, |i| lo <= z(i, 0.5)));
                nb = nb.min(first_from(n, at(hi) - 0.5, |i| hi < z(i, 0.5)));
            }
            for i in na..nb {
                if !s.near[i] {
                    s.near[i] = triangle_meets_box(&t, sample(i), half);
                }
            }
            // Samples below the face's box: the crossing lies ahead. Within `[s0, s1)` the
            // exact sign decides.
            let s0 = first_from(n, at(lo_k) - 0.5, |i| lo_k <= z(i, 0.5));
            s.winding[0] += sig;
            s.winding[s0] -= sig;
            if !on_line {
                continue;
            }
            let s1 = first_from(n, at(hi_k) - 0.5, |i| hi_k < z(i, 0.5));
            if s0 >= s1 {
                continue;
            }
            let o = |i: usize| orient3d(t[0], t[1], t[2], sample(i)).total_cmp(&0.0) as i32;
            let guess = plane_along(&t, p, k).map_or(f64::NAN, |(x, _)| at(x) - 0.5);
            let (z0, z1, sa, sb) = sign_runs(s0..s1, guess, o);
            if sig != 0 {
                // Ahead where the sign is `sig`'s, on the surface where zero.
                for (from, to, sign) in [(s0, z0, sa), (z1, s1, sb)] {
                    if from < to && sign != 0 && (sign > 0) == (sig > 0) {
                        s.winding[from] += sig;
                        s.winding[to] -= sig;
                    }
                }
                if z0 < z1 {
                    s.surface[z0] += 1;
                    s.surface[z1] -= 1;
                }
            } else {
                for i in z0..z1 {
                    if on_coplanar_face(sample(i), &t) {
                        s.surface[i] += 1;
                        s.surface[i + 1] -= 1;
                    }
                }
            }
        }
        out.clear();
        let (mut winding, mut surface) = (0, 0);
        for i in 0..n {
            winding += s.winding[i];
            surface += s.surface[i];
            out.push(Sample {
                winding,
                surface: surface > 0,
                near: s.near[i],
            });
        }
    }
}

/// The first index `i` of `0..=n` with `pred(i)` (`pred` monotone on `0..n`: false, then
/// true; `n` when none), searched from the fractional guess `g`: exact whatever the guess, a
/// few evaluations when it is close (galloping, then bisection).
fn first_from(n: usize, g: f64, pred: impl Fn(usize) -> bool) -> usize {
    // Truncation (a guess need not be rounded up; `ceil` is a library call on baseline x86).
    let g = if g.is_nan() {
        0
    } else {
        g.clamp(0.0, n as f64) as usize
    };
    // The answer lies in `[lo, hi]`: `lo == 0` or `pred(lo - 1)` false, `hi == n` or
    // `pred(hi)` true.
    let (mut lo, mut hi);
    if g == n || pred(g) {
        hi = g;
        lo = 0;
        let mut step = 1;
        while hi > 0 {
            let x = hi - step.min(hi);
            if pred(x) {
                hi = x;
                step *= 2;
            } else {
                lo = x + 1;
                break;
            }
        }
    } else {
        lo = g + 1;
        hi = n;
        let mut step = 1;
        while lo < hi {
            let x = (lo + step - 1).min(hi - 1);
            if pred(x) {
                hi = x;
                break;
            }
            lo = x + 1;
            step *= 2;
        }
    }
    while lo < hi {
        let m = (lo + hi) / 2;
        if pred(m) {
            hi = m;
        } else {
            lo = m + 1;
        }
    }
    lo
}

/// The runs of a sign that is monotone over `range` (exact `orient3d` signs along a column:
/// one sign, then zeros, then the other sign): `(z0, z1, sa, sb)` with sign `sa` on
/// `range.start..z0`, zero on `z0..z1` and sign `sb` on `z1..range.end` (the outer runs may
/// be empty). `guess`: a fractional index near the change.
fn sign_runs(
    range: Range<usize>,
    guess: f64,
    o: impl Fn(usize) -> i32,
) -> (usize, usize, i32, i32) {
    let (s0, s1) = (range.start, range.end);
    let sa = o(s0);
    let sb = if s1 - s0 > 1 { o(s1 - 1) } else { sa };
    if sa == sb {
        return if sa == 0 {
            (s0, s1, 0, 0)
        } else {
            (s1, s1, sa, sa)
        };
    }
    let r0 = s0 + first_from(s1 - s0, guess - s0 as f64, |i| o(s0 + i) != sa);
    if sa == 0 {
        return (s0, r0, 0, sb);
    }
    if sb == 0 {
        return (r0, s1, sa, 0);
    }
    let r1 = if o(r0) == sb {
        r0
    } else {
        r0 + first_from(s1 - r0, 0.0, |i| o(r0 + i) == sb)
    };
    (r0, r1, sa, sb)
}

/// Where the plane of `t` meets the line through `p` along `k` (its `k` coordinate, rounded)
/// and `|m|₁ / |m_k|` for the plane's normal `m`; `None` for a sliver (sine of the corner
/// angle below `1e-3`, the normal is uncertain) or a plane within a `1e-3` sine of parallel
/// to the line.
fn plane_along(t: &[DVec3; 3], p: DVec3, k: usize) -> Option<(f64, f64)> {
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let m = e1.cross(e2);
    let len = m.length();
    if !(len > 1e-3 * e1.length() * e2.length() && m[k].abs() > 1e-3 * len) {
        return None;
    }
    let mut q = p;
    q[k] = 0.0;
    let z = (m.dot(t[0]) - m.dot(q)) / m[k];
    let ratio = m.abs().element_sum() / m[k].abs();
    (z.is_finite() && ratio.is_finite()).then_some((z, ratio))
}

/// The `k` coordinates between which the plane of `t` may meet a cell of side `2·half`
/// centred on the line through `p` along `k`: the exact slab `|z − z_c| ≤ half·|m|₁/|m_k|`
/// widened by far more than the rounding of this computation and the margin
/// of [`triangle_meets_box`], so that no cell outside meets the triangle by that test.
fn plane_slab(t: &[DVec3; 3], p: DVec3, k: usize, half: f64) -> Option<(f64, f64)> {
    let (z, ratio) = plane_along(t, p, k)?;
    let r = half * ratio;
    let scale = t
        .iter()
        .fold(p.abs().max_element(), |m, x| m.max(x.abs().max_element()));
    let pad = r + 1e-3 * half + 1e-8 * (scale + z.abs() + r) * ratio;
    let (lo, hi) = (z - pad, z + pad);
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    //! The face-by-face column classification against a sample-by-sample evaluation of the
    //! same rules over every face of the column (the plain definition: each sample looks at
    //! every face), on tori crossing at random poses and on a cube whose faces hold samples.

    use super::*;
    use crate::collide::{CollisionObject, Side};
    use crate::image_space::lattice::jobs;
    use crate::image_space::prepare;
    use gprox_geometry::scene::torus;
    use gprox_geometry::transform::Pose64;
    use gprox_geometry::TriMesh;
    use proptest::prelude::*;

    /// Sample `i` of column `(cu, cv)` of `tile`, by the definition.
    fn reference(tile: &ColumnTile<'_, '_>, cu: u32, cv: u32, i: usize) -> Sample {
        let (k, l) = (tile.k, &tile.lattice);
        let (u, v) = ((k + 1) % 3, (k + 2) % 3);
        let c = ((cv - tile.tile.lo[v]) * (tile.tile.hi[u] - tile.tile.lo[u])
            + (cu - tile.tile.lo[u])) as usize;
        let ck = tile.tile.lo[k] + i as u32;
        let (zl, z, zh) = (
            l.coordinate(k, ck, 0.0),
            l.coordinate(k, ck, 0.5),
            l.coordinate(k, ck, 1.0),
        );
        let mut p = DVec3::ZERO;
        (p[u], p[v], p[k]) = (l.coordinate(u, cu, 0.5), l.coordinate(v, cv, 0.5), z);
        let (ul, uh) = (l.coordinate(u, cu, 0.0), l.coordinate(u, cu, 1.0));
        let (vl, vh) = (l.coordinate(v, cv, 0.0), l.coordinate(v, cv, 1.0));
        let half = DVec3::splat(0.5 * l.spacing);
        let mut out = Sample::default();
        for &j in &tile.bins[tile.start[c] as usize..tile.start[c + 1] as usize] {
            let it = &tile.items[j as usize];
            if it.lo[u] > uh || it.hi[u] < ul || it.lo[v] > vh || it.hi[v] < vl {
                continue;
            }
            let t = tile.world.triangle(it.face);
            if it.lo[k] <= zh && it.hi[k] >= zl && triangle_meets_box(&t, p, half) {
                out.near = true;
            }
            let on_line =
                it.lo[u] <= p[u] && p[u] <= it.hi[u] && it.lo[v] <= p[v] && p[v] <= it.hi[v];
            let sig = if on_line {
                crossing(&t, k, project(p, k), 1)
            } else {
                0
            };
            if z < it.lo[k] {
                out.winding += sig;
            } else if z <= it.hi[k] && on_line {
                let o = orient3d(t[0], t[1], t[2], p);
                if sig != 0 {
                    if o == 0.0 {
                        out.surface = true;
                    } else if (o > 0.0) == (sig > 0) {
                        out.winding += sig;
                    }
                } else if o == 0.0 && on_coplanar_face(p, &t) {
                    out.surface = true;
                }
            }
        }
        out
    }

    /// Every column of every tile of the box `cells` around `mesh` equals the reference.
    fn check(mesh: &TriMesh, pose: Pose64, lattice: Lattice, cells: CellBox, tile: u32) -> usize {
        let bvh = gprox_bvh::lbvh::build(mesh);
        let o = CollisionObject::new(mesh, &bvh, pose).unwrap();
        let w = prepare(&o, Side::A).unwrap();
        let (mut col, mut scratch, mut flagged) = (Vec::new(), ColumnScratch::default(), 0);
        for job in jobs(&[cells], tile) {
            let t = ColumnTile::new(&w, &lattice, job.k, &job.tile);
            for (cu, cv) in job.columns() {
                t.column(cu, cv, &mut col, &mut scratch);
                for (i, s) in col.iter().enumerate() {
                    assert_eq!(*s, reference(&t, cu, cv, i), "column {cu} {cv} sample {i}");
                    flagged += usize::from(s.surface || s.near || s.winding != 0);
                }
            }
        }
        flagged
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        #[test]
        fn columns_match_the_definition_on_tori(
            angles in prop::array::uniform3(-3.2f64..3.2),
            origin in prop::array::uniform3(-1.6f64..-1.2),
            h in 0.02f64..0.09,
            tile in 3u32..20,
        ) {
            let mesh = torus(1.0, 0.35, 40, 16).unwrap();
            let (sa, ca) = angles[0].sin_cos();
            let (sb, cb) = angles[1].sin_cos();
            let mut pose = Pose64::IDENTITY;
            // A rotation about x then z, and a shift.
            pose.rows = [
                [cb, -sb * ca, sb * sa, 0.1 * angles[2]],
                [sb, cb * ca, -cb * sa, 0.05],
                [0.0, sa, ca, -0.1],
            ];
            let lattice = Lattice { origin: DVec3::from(origin), spacing: h };
            let n = (3.2 / h) as u32;
            let cells = CellBox { lo: [0, 0, 0], hi: [n, n - 3, n + 2] };
            prop_assert!(check(&mesh, pose, lattice, cells, tile) > 0);
        }
    }

    /// A cube with samples on its faces, edges and corners: the samples on the surface are
    /// flagged exactly as by the definition.
    #[test]
    fn columns_match_the_definition_on_a_cube_through_samples() {
        let cube = gprox_geometry::scene::box_mesh(glam::Vec3::ZERO, glam::Vec3::ONE).unwrap();
        let h = 0.125;
        let lattice = Lattice {
            origin: DVec3::splat(-2.5 * h),
            spacing: h,
        };
        let cells = CellBox {
            lo: [0, 0, 0],
            hi: [14, 13, 12],
        };
        for tile in [4, 16] {
            assert!(check(&cube, Pose64::IDENTITY, lattice, cells, tile) > 0);
        }
    }

    proptest! {
        #[test]
        fn first_from_is_the_first_true(n in 0usize..40, t in 0usize..45, g in -5.0f64..50.0) {
            let first = t.min(n);
            prop_assert_eq!(first_from(n, g, |i| i >= t), first);
            prop_assert_eq!(first_from(n, f64::NAN, |i| i >= t), first);
        }

        #[test]
        fn sign_runs_split_monotone_signs(
            a in 0usize..20, zeros in 0usize..4, b in 0usize..20, up: bool, g in -5.0f64..50.0,
        ) {
            prop_assume!(a + zeros + b > 0);
            let (sa, sb) = if up { (-1, 1) } else { (1, -1) };
            let signs: Vec<i32> = std::iter::repeat_n(sa, a)
                .chain(std::iter::repeat_n(0, zeros))
                .chain(std::iter::repeat_n(sb, b))
                .collect();
            let (z0, z1, ra, rb) = sign_runs(0..signs.len(), g, |i| signs[i]);
            for (i, &x) in signs.iter().enumerate() {
                let got = if i < z0 { ra } else if i < z1 { 0 } else { rb };
                prop_assert_eq!(got, x, "index {} of {:?}", i, signs);
            }
        }
    }
}
