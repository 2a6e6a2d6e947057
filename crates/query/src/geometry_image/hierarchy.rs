//! Hierarchy images (paper §4, §6.1.1, §6.2.1): the padded boxes of the quads are the leaf
//! level; each upper level is a min/max mip level of the one below, node `(x, y)` holding its
//! children `(2x..=2x+1, 2y..=2y+1)` that exist (odd sizes round up) and whose stencil is set.
//! A node without stencil holds [`Aabb::EMPTY`], which overlaps nothing, so the stencil needs no
//! separate test (the paper's fourth box component plays the same role). Each node also keeps
//! four sign bytes, the signs of its normals against four fixed directions (the eight corners of
//! a cube, one of each opposite pair), kept upwards while all children with stencil agree.
//! Built every frame, each level's rows in parallel.

use glam::{Vec3, Vec3A, Vec4};
use gprox_bvh::aabb::Aabb;
use rayon::prelude::*;

use super::GeometryImage;

/// The four predefined directions; with their opposites, the eight corners of a cube.
pub const DIRECTIONS: [Vec3; 4] = [
    Vec3::new(1.0, 1.0, 1.0),
    Vec3::new(1.0, 1.0, -1.0),
    Vec3::new(1.0, -1.0, 1.0),
    Vec3::new(-1.0, 1.0, 1.0),
];

/// One mip level.
#[derive(Clone, Debug, Default)]
pub struct Level {
    /// Nodes along u.
    pub width: usize,
    /// Nodes along v.
    pub height: usize,
    /// Node boxes, `y * width + x`; [`Aabb::EMPTY`] where the stencil is 0. Empty for the leaf
    /// level (level 0) unless it is the root: leaf boxes are made from the image on demand.
    pub boxes: Vec<Aabb>,
    /// Normal signs against [`DIRECTIONS`] (−1, 0, 1; 0 = not the same everywhere below), one
    /// per node when the hierarchy keeps signs ([`HierarchyImage::build_with_signs`]), else
    /// empty.
    pub signs: Vec<[i8; 4]>,
}

/// The node boxes of one level, the leaves computed from the image when they are not stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nodes<'a> {
    /// The level.
    pub level: &'a Level,
    img: &'a GeometryImage,
}

impl Nodes<'_> {
    /// The box of node `k`.
    #[inline]
    pub fn aabb(&self, k: u32) -> Aabb {
        match self.level.boxes.get(k as usize) {
            Some(b) => *b,
            None => {
                let w = self.level.width;
                self.img.quad_box(k as usize % w, k as usize / w)
            }
        }
    }

    /// The children of node `k` of the level above (`upper_width` wide) in this level, as
    /// [`crate::geometry_image::traverse::children`] lists them, with their boxes (leaves from
    /// [`GeometryImage::block_boxes`]: the four quads of a node share their texels).
    #[inline]
    pub(crate) fn children_boxes(
        &self,
        upper_width: usize,
        k: u32,
    ) -> ([u32; 4], [Aabb; 4], usize) {
        let (idx, n) = super::traverse::children(upper_width, self.level, k);
        if !self.level.boxes.is_empty() {
            return (
                idx,
                std::array::from_fn(|c| self.aabb(idx[c.min(n - 1)])),
                n,
            );
        }
        let (x, y) = (k as usize % upper_width, k as usize / upper_width);
        let block = self.img.block_boxes(x, y);
        // `children` lists the existing quads in block order: keep those.
        let (w, h) = (self.level.width, self.level.height);
        let mut boxes = [Aabb::EMPTY; 4];
        let mut m = 0;
        for (c, b) in block.into_iter().enumerate() {
            if 2 * x + (c & 1) < w && 2 * y + (c >> 1) < h {
                boxes[m] = b;
                m += 1;
            }
        }
        (idx, boxes, n)
    }
}

/// The quad-tree of one geometry image: `levels[0]` are the quads (boxes not stored, see
/// [`HierarchyImage::node_box`]), the last level one node.
#[derive(Clone, Debug, Default)]
pub struct HierarchyImage {
    /// Face id of the image.
    pub face: u32,
    /// Levels from the leaves up.
    pub levels: Vec<Level>,
    /// Whether the levels keep normal sign bytes (only self-collision's normal test reads them).
    pub with_signs: bool,
}

/// Whether a box holds no point: the hierarchy's empty box (stencil 0) or an overlap of two
/// disjoint boxes, which can be inverted on any one axis.
#[inline]
pub fn is_empty(b: &Aabb) -> bool {
    b.min[0] > b.max[0] || b.min[1] > b.max[1] || b.min[2] > b.max[2]
}

fn sign(x: f32) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Signs of the two triangles' normals (diagonal 00–11) of a quad, 0 where they differ.
fn quad_signs(q: &[Vec3; 4]) -> [i8; 4] {
    let n1 = (q[1] - q[0]).cross(q[3] - q[0]);
    let n2 = (q[3] - q[0]).cross(q[2] - q[0]);
    DIRECTIONS.map(|d| {
        let (a, b) = (sign(n1.dot(d)), sign(n2.dot(d)));
        if a == b {
            a
        } else {
            0
        }
    })
}

/// Levels with fewer rows than this are built on the calling thread.
const PAR_ROWS: usize = 64;

/// Row `y` of level 1 straight from the texels (the leaf level is not stored): node `x` merges
/// the quads `(2x..=2x+1, 2y..=2y+1)` that exist and have stencil 1. The four corners of a quad
/// are merged first and the padding is applied once to the merged box; `fl(a − pad)` is
/// monotone in `a`, so this equals the merge of the padded leaf boxes bit for bit, and a node
/// without stencil stays [`Aabb::EMPTY`] (`±∞ ∓ pad = ±∞`).
#[inline]
fn first_row(img: &GeometryImage, y: usize, out: &mut [Aabb]) {
    let qw = img.width() - 1;
    let j0 = 2 * y;
    let j1 = (2 * y + 1).min(img.height() - 2);
    // A branch-free minimum over the bytes (vectorised), not a search that stops early.
    let full = |j: usize| {
        img.quad_stencil[j * qw..(j + 1) * qw]
            .iter()
            .fold(1u8, |m, &s| m.min(s))
            != 0
    };
    if full(j0) && full(j1) {
        first_row_with::<true>(img, y, out);
    } else {
        first_row_with::<false>(img, y, out);
    }
}

/// [`first_row`]; `FULL`: every quad of the node row's quad rows has stencil 1 (no selection).
#[inline(always)]
fn first_row_with<const FULL: bool>(img: &GeometryImage, y: usize, out: &mut [Aabb]) {
    let w = img.width();
    let (qw, qh) = (w - 1, img.height() - 1);
    let pad = Vec3A::splat(img.pad);
    let (j0, j1) = (2 * y, (2 * y + 1).min(qh - 1));
    let row = |j: usize| &img.positions[j * w..(j + 1) * w];
    let (r0, r1, r2) = (row(j0), row(j0 + 1), row(j1 + 1));
    let (s0, s1) = (
        &img.quad_stencil[j0 * qw..(j0 + 1) * qw],
        &img.quad_stencil[j1 * qw..(j1 + 1) * qw],
    );
    // Column extremes of the texel rows of quad row j0 (`r0`, `r1`) and j1 (`r1`, `r2`).
    let col = |i: usize| {
        let (a, b, c) = (Vec3A::from(r0[i]), Vec3A::from(r1[i]), Vec3A::from(r2[i]));
        (a.min(b), a.max(b), b.min(c), b.max(c))
    };
    let mut left = col(0);
    for (x, o) in out.iter_mut().enumerate() {
        let i0 = 2 * x;
        let i1 = (i0 + 1).min(qw - 1);
        let (mid, right) = (col(i0 + 1), col(i1 + 1));
        // Quad (i, j) spans columns i and i + 1; a quad without stencil contributes nothing.
        let pick = |on: u8, lo: Vec3A, hi: Vec3A| {
            if FULL || on != 0 {
                (lo, hi)
            } else {
                (Vec3A::INFINITY, Vec3A::NEG_INFINITY)
            }
        };
        let q = [
            pick(s0[i0], left.0.min(mid.0), left.1.max(mid.1)),
            pick(s0[i1], mid.0.min(right.0), mid.1.max(right.1)),
            pick(s1[i0], left.2.min(mid.2), left.3.max(mid.3)),
            pick(s1[i1], mid.2.min(right.2), mid.3.max(right.3)),
        ];
        let lo = q[0].0.min(q[1].0).min(q[2].0.min(q[3].0));
        let hi = q[0].1.max(q[1].1).max(q[2].1.max(q[3].1));
        *o = Aabb {
            min: (lo - pad).into(),
            max: (hi + pad).into(),
        };
        left = right;
    }
}

/// The sign bytes of row `y` of level 1 from the quads below it (stencil 1 only).
fn first_signs_row(img: &GeometryImage, y: usize, out: &mut [[i8; 4]]) {
    let (qw, qh) = (img.width() - 1, img.height() - 1);
    for (x, o) in out.iter_mut().enumerate() {
        let (mut s, mut any) = ([0i8; 4], false);
        for j in [2 * y, 2 * y + 1].into_iter().filter(|&j| j < qh) {
            for i in [2 * x, 2 * x + 1].into_iter().filter(|&i| i < qw) {
                if img.quad_stencil[j * qw + i] == 0 {
                    continue;
                }
                let cs = quad_signs(&img.quad(i, j));
                if any {
                    s = std::array::from_fn(|d| if s[d] == cs[d] { s[d] } else { 0 });
                } else {
                    (s, any) = (cs, true);
                }
            }
        }
        *o = s;
    }
}

/// Row `y` of a level from the two rows `c0`, `c1` below it (`c1 == c0` at an odd bottom edge;
/// a missing right child repeats the left one: min/max are idempotent, so no branch is needed
/// and empty children, the identity of the merge, need no test either).
#[inline]
fn merge_row(c0: &[Aabb], c1: &[Aabb], out: &mut [Aabb]) {
    let cw = c0.len();
    for (x, o) in out.iter_mut().enumerate() {
        let (i0, i1) = (2 * x, (2 * x + 1).min(cw - 1));
        *o = merge4([&c0[i0], &c0[i1], &c1[i0], &c1[i1]]);
    }
}

/// The merge of four boxes ([`Aabb::merge`], the same values: no box holds a NaN, positions
/// being finite or infinite only, and min/max of those never round): each box read as two
/// overlapping groups of four floats, `min` in lanes 0–2 of the first and `max` in lanes 1–3
/// of the second.
#[inline(always)]
fn merge4(b: [&Aabb; 4]) -> Aabb {
    let [(l0, h0), (l1, h1), (l2, h2), (l3, h3)] = b.map(|b| {
        let f: &[f32; 6] = bytemuck::cast_ref(b);
        (Vec4::from_slice(&f[..4]), Vec4::from_slice(&f[2..]))
    });
    let (lo, hi) = (l0.min(l1).min(l2.min(l3)), h0.max(h1).max(h2.max(h3)));
    Aabb {
        min: [lo.x, lo.y, lo.z],
        max: [hi.y, hi.z, hi.w],
    }
}

/// The signs of row `y` from the rows below; children without stencil are skipped.
fn merge_signs_row(
    (c0, c1): (&[Aabb], &[Aabb]),
    (s0, s1): (&[[i8; 4]], &[[i8; 4]]),
    out: &mut [[i8; 4]],
) {
    let cw = c0.len();
    for (x, o) in out.iter_mut().enumerate() {
        let (mut s, mut any) = ([0i8; 4], false);
        for (boxes, signs) in [(c0, s0), (c1, s1)] {
            for cx in [2 * x, (2 * x + 1).min(cw - 1)] {
                if is_empty(&boxes[cx]) {
                    continue;
                }
                let cs = signs[cx];
                if any {
                    for d in 0..4 {
                        if s[d] != cs[d] {
                            s[d] = 0;
                        }
                    }
                } else {
                    (s, any) = (cs, true);
                }
            }
        }
        *o = s;
    }
}

/// The two child rows of row `y` in a level of `ch` rows and width `cw`.
#[inline]
fn child_rows<T>(c: &[T], cw: usize, ch: usize, y: usize) -> (&[T], &[T]) {
    let (y0, y1) = (2 * y, (2 * y + 1).min(ch - 1));
    (&c[y0 * cw..(y0 + 1) * cw], &c[y1 * cw..(y1 + 1) * cw])
}

impl HierarchyImage {
    /// Builds the hierarchy of `img` (boxes only: enough for collision between faces and for
    /// self-collision without the normal test).
    ///
    /// ```
    /// use gprox_geometry::freeform::{NurbsSurface, TrimmedFace};
    /// use gprox_geometry::transform::Pose64;
    /// use gprox_query::geometry_image::{GeometryImage, HierarchyImage};
    /// use glam::DVec3;
    ///
    /// let pts = (0..4).map(|k| DVec3::new((k / 2) as f64, (k % 2) as f64, 0.0)).collect();
    /// let face = TrimmedFace::untrimmed(NurbsSurface::bezier([1, 1], pts, None).unwrap()).unwrap();
    /// let img = GeometryImage::generate(0, &face, &Pose64::IDENTITY, 0.1, None).unwrap().unwrap();
    /// let h = HierarchyImage::build(&img);
    /// assert!(h.root().contains_point(glam::Vec3::new(0.5, 0.5, 0.0)));
    /// assert_eq!(h.levels.last().unwrap().boxes.len(), 1);
    /// ```
    pub fn build(img: &GeometryImage) -> Self {
        let mut h = Self::default();
        h.rebuild(img);
        h
    }

    /// Builds the hierarchy with the normal sign bytes that self-collision's normal test needs.
    pub fn build_with_signs(img: &GeometryImage) -> Self {
        let mut h = Self {
            with_signs: true,
            ..Self::default()
        };
        h.rebuild(img);
        h
    }

    /// Rebuilds in place for new positions (no allocation when the size is the same; signs
    /// only when [`Self::with_signs`]). The leaf level is not stored (its boxes are
    /// [`Self::node_box`] from the image, made when a traversal reaches them) unless it is the
    /// only level; level 1 is made straight from the texels together with level 2 (each task
    /// two level-1 rows and the level-2 row above them, while in cache), every further level is
    /// one pass over the level below, rows split across threads.
    pub fn rebuild(&mut self, img: &GeometryImage) {
        self.face = img.face;
        let (w, ht) = (img.width() - 1, img.height() - 1);
        let mut size = (w, ht);
        let mut n = 0;
        loop {
            if self.levels.len() == n {
                self.levels.push(Level::default());
            }
            let l = &mut self.levels[n];
            (l.width, l.height) = size;
            let last = size.0 <= 1 && size.1 <= 1;
            // The leaves are stored only when they are the root.
            let stored = if n == 0 && !last { 0 } else { size.0 * size.1 };
            l.boxes.resize(stored, Aabb::EMPTY);
            if self.with_signs {
                l.signs.resize(stored, [0; 4]);
            } else {
                l.signs = Vec::new();
            }
            n += 1;
            if last {
                break;
            }
            size = (size.0.div_ceil(2), size.1.div_ceil(2));
        }
        self.levels.truncate(n);
        let signs = self.with_signs;
        if n == 1 {
            let leaf = &mut self.levels[0];
            leaf.boxes[0] = img.quad_box(0, 0);
            if signs {
                leaf.signs[0] = quad_signs(&img.quad(0, 0));
            }
            return;
        }
        // Level 1 from the texels; with level 2 in the same pass when there is one (task y
        // makes level-1 rows 2y, 2y + 1 and level-2 row y while they are in cache).
        let fused = n > 2;
        {
            let (lower, upper) = self.levels.split_at_mut(2);
            let l1 = &mut lower[1];
            let pw = l1.width;
            if fused {
                let l2 = &mut upper[0];
                let band = |y: usize, rows: &mut [Aabb], out: &mut [Aabb]| {
                    let r = rows.len() / pw;
                    for k in 0..r {
                        first_row(img, 2 * y + k, &mut rows[k * pw..(k + 1) * pw]);
                    }
                    merge_row(&rows[..pw], &rows[(r - 1) * pw..], out);
                };
                let pw2 = l2.width;
                if l2.height >= PAR_ROWS / 2 {
                    l1.boxes
                        .par_chunks_mut(2 * pw)
                        .zip(l2.boxes.par_chunks_mut(pw2))
                        .with_min_len(4)
                        .enumerate()
                        .for_each(|(y, (rows, out))| band(y, rows, out));
                } else {
                    l1.boxes
                        .chunks_mut(2 * pw)
                        .zip(l2.boxes.chunks_mut(pw2))
                        .enumerate()
                        .for_each(|(y, (rows, out))| band(y, rows, out));
                }
            } else {
                l1.boxes
                    .chunks_mut(pw)
                    .enumerate()
                    .for_each(|(y, out)| first_row(img, y, out));
            }
            if signs {
                l1.signs
                    .par_chunks_mut(pw)
                    .enumerate()
                    .for_each(|(y, out)| first_signs_row(img, y, out));
            }
        }
        for l in 2..n {
            let (lower, upper) = self.levels.split_at_mut(l);
            let (c, p) = (&lower[l - 1], &mut upper[0]);
            let (pw, cw, ch) = (p.width, c.width, c.height);
            let row = |y: usize, out: &mut [Aabb]| {
                let (c0, c1) = child_rows(&c.boxes, cw, ch, y);
                merge_row(c0, c1, out);
            };
            if l == 2 {
                // Made with level 1.
            } else if p.height >= PAR_ROWS {
                p.boxes
                    .par_chunks_mut(pw)
                    .with_min_len(8)
                    .enumerate()
                    .for_each(|(y, out)| row(y, out));
            } else {
                p.boxes
                    .chunks_mut(pw)
                    .enumerate()
                    .for_each(|(y, out)| row(y, out));
            }
            if signs {
                p.signs.chunks_mut(pw).enumerate().for_each(|(y, out)| {
                    merge_signs_row(
                        child_rows(&c.boxes, cw, ch, y),
                        child_rows(&c.signs, cw, ch, y),
                        out,
                    )
                });
            }
        }
    }

    /// The box of node `k` (`y * width + x`) of level `l`; the leaf boxes are not stored and
    /// come from `img` ([`GeometryImage::quad_box`]), which must be the image this was built
    /// from.
    #[inline]
    pub fn node_box(&self, img: &GeometryImage, l: usize, k: u32) -> Aabb {
        self.nodes(img, l).aabb(k)
    }

    /// The node boxes of level `l`.
    #[inline]
    pub(crate) fn nodes<'a>(&'a self, img: &'a GeometryImage, l: usize) -> Nodes<'a> {
        Nodes {
            level: &self.levels[l],
            img,
        }
    }

    /// The root box (empty when no quad has its stencil set).
    pub fn root(&self) -> Aabb {
        self.levels.last().map_or(Aabb::EMPTY, |l| l.boxes[0])
    }
}
