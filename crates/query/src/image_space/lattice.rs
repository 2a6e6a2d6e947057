//! The sampling lattice: cubic cells of one spacing anchored at an origin, the sample of a cell
//! at its centre, boxes of cells (regions) and their split into tiles of ray columns.

use glam::DVec3;

/// A uniform lattice of cubic cells: cell `c` spans `origin + c·spacing` to
/// `origin + (c + 1)·spacing` per axis and is sampled at its centre [`Lattice::center`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lattice {
    /// World position of the corner of cell `[0, 0, 0]`.
    pub origin: DVec3,
    /// Edge length `h` of a cell.
    pub spacing: f64,
}

impl Lattice {
    /// The spacing whose half cell diagonal is `tolerance`: `h = 2d/√3`.
    pub fn spacing_for(tolerance: f64) -> f64 {
        2.0 * tolerance / 3f64.sqrt()
    }

    /// Half the diagonal of a cell, `√3·h/2`: no point of a cell is farther from its sample.
    pub fn half_diagonal(&self) -> f64 {
        0.5 * 3f64.sqrt() * self.spacing
    }

    /// Volume `h³` of one cell.
    pub fn cell_volume(&self) -> f64 {
        self.spacing * self.spacing * self.spacing
    }

    /// The sample (centre) of cell `c`: `origin + (c + ½)·h`, evaluated per axis in this order.
    #[inline]
    pub fn center(&self, c: [u32; 3]) -> DVec3 {
        DVec3::new(
            self.coordinate(0, c[0], 0.5),
            self.coordinate(1, c[1], 0.5),
            self.coordinate(2, c[2], 0.5),
        )
    }

    /// `origin[axis] + (i + f)·h`: a cell face (`f = 0`, `1`) or centre (`f = ½`) along `axis`.
    #[inline]
    pub(crate) fn coordinate(&self, axis: usize, i: u32, f: f64) -> f64 {
        self.origin[axis] + (f64::from(i) + f) * self.spacing
    }

    /// The cells meeting the box `[lo, hi]` (clamped at index 0), padded by one cell on each
    /// side so that the rounding of the index computation can never leave a point of the box
    /// uncovered. `None` when the box lies entirely below the origin or an index overflows.
    pub(crate) fn cover(&self, lo: DVec3, hi: DVec3) -> Option<CellBox> {
        let mut out = CellBox::default();
        for a in 0..3 {
            let l = ((lo[a] - self.origin[a]) / self.spacing).floor() - 1.0;
            let h = ((hi[a] - self.origin[a]) / self.spacing).floor() + 2.0;
            if !(h > 0.0 && h < f64::from(u32::MAX)) || l.is_nan() {
                return None;
            }
            out.lo[a] = l.max(0.0) as u32;
            out.hi[a] = h as u32;
        }
        Some(out)
    }
}

/// Largest tile side (columns), so that a tile's column count fits its `u32` indices.
const MAX_TILE: u32 = 1 << 12;

/// A box of lattice cells: `lo[a] ≤ c[a] < hi[a]` on every axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CellBox {
    /// First cell on every axis.
    pub lo: [u32; 3],
    /// One past the last cell on every axis.
    pub hi: [u32; 3],
}

impl CellBox {
    /// Number of cells (0 for an empty box; saturates at `u64::MAX`).
    pub fn count(&self) -> u64 {
        (0..3)
            .map(|a| u64::from(self.hi[a].saturating_sub(self.lo[a])))
            .fold(1u64, u64::saturating_mul)
    }

    /// Whether cell `c` is in the box.
    pub fn contains(&self, c: [u32; 3]) -> bool {
        (0..3).all(|a| self.lo[a] <= c[a] && c[a] < self.hi[a])
    }

    /// Whether the two boxes share a cell.
    pub(crate) fn overlaps(&self, o: &CellBox) -> bool {
        (0..3).all(|a| self.lo[a] < o.hi[a] && o.lo[a] < self.hi[a])
    }

    /// The smallest box holding both.
    pub(crate) fn union(&self, o: &CellBox) -> CellBox {
        CellBox {
            lo: [0, 1, 2].map(|a| self.lo[a].min(o.lo[a])),
            hi: [0, 1, 2].map(|a| self.hi[a].max(o.hi[a])),
        }
    }

    /// The axis with the most cells (the first of equals): the column axis of a sweep, so
    /// that the columns are few and long.
    pub(crate) fn longest_axis(&self) -> usize {
        let n = |a: usize| self.hi[a] - self.lo[a];
        let mut k = 0;
        for a in 1..3 {
            if n(a) > n(k) {
                k = a;
            }
        }
        k
    }

    /// Splits the box into tiles of at most `tile × tile` columns along axis `k` (each tile
    /// keeps the full range along `k`), in a fixed order.
    pub(crate) fn tiles(&self, k: usize, tile: u32) -> Vec<CellBox> {
        let (u, v) = ((k + 1) % 3, (k + 2) % 3);
        let tile = tile.clamp(1, MAX_TILE);
        let mut out = Vec::new();
        let mut v0 = self.lo[v];
        while v0 < self.hi[v] {
            let v1 = self.hi[v].min(v0.saturating_add(tile));
            let mut u0 = self.lo[u];
            while u0 < self.hi[u] {
                let u1 = self.hi[u].min(u0.saturating_add(tile));
                let mut t = *self;
                (t.lo[u], t.hi[u], t.lo[v], t.hi[v]) = (u0, u1, v0, v1);
                out.push(t);
                u0 = u1;
            }
            v0 = v1;
        }
        out
    }
}

/// Merges boxes that share a cell until all are disjoint, sorted by their first cell (the
/// result does not depend on the input order).
pub(crate) fn merge_disjoint(mut boxes: Vec<CellBox>) -> Vec<CellBox> {
    loop {
        let mut merged = false;
        let mut i = 0;
        while i < boxes.len() {
            let mut j = i + 1;
            while j < boxes.len() {
                if boxes[i].overlaps(&boxes[j]) {
                    boxes[i] = boxes[i].union(&boxes[j]);
                    boxes.swap_remove(j);
                    merged = true;
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
        if !merged {
            break;
        }
    }
    boxes.sort_unstable_by_key(|b| (b.lo[2], b.lo[1], b.lo[0], b.hi));
    boxes
}

/// One unit of work of a sweep: a tile of a region and its column axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    /// Index of the region.
    pub(crate) region: u32,
    /// Column axis (the region's longest).
    pub(crate) k: usize,
    /// The tile's cells.
    pub(crate) tile: CellBox,
}

impl Job {
    /// The cell of sample `i` of column `(cu, cv)` (indices along `k + 1`, `k + 2`).
    #[inline]
    pub(crate) fn cell(&self, cu: u32, cv: u32, i: usize) -> [u32; 3] {
        let mut c = [0; 3];
        c[self.k] = self.tile.lo[self.k] + i as u32;
        c[(self.k + 1) % 3] = cu;
        c[(self.k + 2) % 3] = cv;
        c
    }

    /// The columns `(cu, cv)` of the tile, in a fixed order.
    pub(crate) fn columns(&self) -> impl Iterator<Item = (u32, u32)> {
        let (u, v) = ((self.k + 1) % 3, (self.k + 2) % 3);
        let t = self.tile;
        (t.lo[v]..t.hi[v]).flat_map(move |cv| (t.lo[u]..t.hi[u]).map(move |cu| (cu, cv)))
    }
}

/// The tiles of every region, each swept along the region's longest axis.
pub(crate) fn jobs(regions: &[CellBox], tile: u32) -> Vec<Job> {
    let mut out = Vec::new();
    for (r, b) in regions.iter().enumerate() {
        let k = b.longest_axis();
        out.extend(b.tiles(k, tile).into_iter().map(|t| Job {
            region: r as u32,
            k,
            tile: t,
        }));
    }
    out
}

/// Sorts items by cell in lattice order (`z`, then `y`, then `x`).
pub(crate) fn cell_order(c: [u32; 3]) -> (u32, u32, u32) {
    (c[2], c[1], c[0])
}
