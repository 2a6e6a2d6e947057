//! Inside classification of lattice samples (§5.1 of Hoff et al.), one ray column at a time.
//!
//! A tile of columns along axis `k` gathers, with one walk of the world tree, the faces whose
//! box reaches the tile's prism (faces wholly below it are behind every sample and cannot
//! count) and bins them into its columns by their projected boxes. Each column sorts its faces
//! by their lowest `k` and sweeps its samples upwards with an active list (§5.1.1): a face
//! enters when the sweep reaches its box and leaves once passed, so a sample looks only at the
//! faces whose box meets its cell.
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

/// A face of one column, with its crossing.
#[derive(Clone, Copy, Debug)]
struct ColumnItem {
    lo_k: f64,
    hi_k: f64,
    face: u32,
    /// Winding contribution of the perturbed line's crossing (0: not crossed).
    sig: i32,
    /// The column's line meets the face's box.
    on_line: bool,
}

/// Work space of [`ColumnTile::column`].
#[derive(Default)]
pub(crate) struct ColumnScratch {
    items: Vec<ColumnItem>,
    active: Vec<u32>,
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
        s.items.clear();
        for &i in &self.bins[self.start[c] as usize..self.start[c + 1] as usize] {
            let it = &self.items[i as usize];
            if it.lo[u] > uh || it.hi[u] < ul || it.lo[v] > vh || it.hi[v] < vl {
                continue;
            }
            let on_line =
                it.lo[u] <= p[u] && p[u] <= it.hi[u] && it.lo[v] <= p[v] && p[v] <= it.hi[v];
            let sig = if on_line {
                crossing(&self.world.triangle(it.face), k, pp, 1)
            } else {
                0
            };
            s.items.push(ColumnItem {
                lo_k: it.lo[k],
                hi_k: it.hi[k],
                face: it.face,
                sig,
                on_line,
            });
        }
        s.items
            .sort_unstable_by(|a, b| a.lo_k.total_cmp(&b.lo_k).then(a.face.cmp(&b.face)));
        // Sum of the crossings not yet reached by the sweep (all ahead of the sample).
        let mut ahead: i32 = s.items.iter().map(|it| it.sig).sum();
        let mut next = 0usize;
        s.active.clear();
        out.clear();
        let half = DVec3::splat(0.5 * l.spacing);
        for ck in self.tile.lo[k]..self.tile.hi[k] {
            let (zl, z, zh) = (
                l.coordinate(k, ck, 0.0),
                l.coordinate(k, ck, 0.5),
                l.coordinate(k, ck, 1.0),
            );
            while next < s.items.len() && s.items[next].lo_k <= zh {
                ahead -= s.items[next].sig;
                s.active.push(next as u32);
                next += 1;
            }
            let items = &s.items;
            s.active.retain(|&i| items[i as usize].hi_k >= zl);
            p[k] = z;
            let mut sample = Sample {
                winding: ahead,
                surface: false,
                near: false,
            };
            for &i in &s.active {
                let it = &items[i as usize];
                if !sample.near {
                    let t = self.world.triangle(it.face);
                    sample.near = triangle_meets_box(&t, p, half);
                }
                if it.lo_k > z {
                    sample.winding += it.sig;
                    continue;
                }
                if it.hi_k < z || (it.sig == 0 && !it.on_line) {
                    continue;
                }
                let t = self.world.triangle(it.face);
                let o = orient3d(t[0], t[1], t[2], p);
                if it.sig != 0 {
                    if o == 0.0 {
                        sample.surface = true;
                    } else if (o > 0.0) == (it.sig > 0) {
                        sample.winding += it.sig;
                    }
                } else if o == 0.0 && on_coplanar_face(p, &t) {
                    sample.surface = true;
                }
            }
            out.push(sample);
        }
    }
}
