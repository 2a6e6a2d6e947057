//! Hierarchy images (paper §4, §6.1.1, §6.2.1): the padded boxes of the quads are the leaf
//! level; each upper level is a min/max mip level of the one below, node `(x, y)` holding its
//! children `(2x..=2x+1, 2y..=2y+1)` that exist (odd sizes round up) and whose stencil is set.
//! A node without stencil holds [`Aabb::EMPTY`], which overlaps nothing, so the stencil needs no
//! separate test (the paper's fourth box component plays the same role). Each node also keeps
//! four sign bytes, the signs of its normals against four fixed directions (the eight corners of
//! a cube, one of each opposite pair), kept upwards while all children with stencil agree.
//! Built every frame, each level's rows in parallel.

use glam::Vec3;
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
    /// Node boxes, `y * width + x`; [`Aabb::EMPTY`] where the stencil is 0.
    pub boxes: Vec<Aabb>,
    /// Normal signs against [`DIRECTIONS`] (−1, 0, 1; 0 = not the same everywhere below), one
    /// per node when the hierarchy keeps signs ([`HierarchyImage::build_with_signs`]), else
    /// empty.
    pub signs: Vec<[i8; 4]>,
}

/// The quad-tree of one geometry image: `levels[0]` are the quads, the last level one node.
#[derive(Clone, Debug, Default)]
pub struct HierarchyImage {
    /// Face id of the image.
    pub face: u32,
    /// Levels from the leaves up.
    pub levels: Vec<Level>,
    /// Whether the levels keep normal sign bytes (only self-collision's normal test reads them).
    pub with_signs: bool,
}

/// Whether a box is empty (stencil 0).
#[inline]
pub fn is_empty(b: &Aabb) -> bool {
    b.min[0] > b.max[0]
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

/// The leaf boxes of quad row `j` (texel rows `j` and `j + 1`): one sweep that carries the
/// column min/max of the previous texel column, no per-quad stencil or bounds lookups beyond
/// the row slices.
#[inline]
fn leaf_row(img: &GeometryImage, j: usize, out: &mut [Aabb]) {
    let w = img.width();
    let (r0, r1) = (
        &img.positions[j * w..(j + 1) * w],
        &img.positions[(j + 1) * w..(j + 2) * w],
    );
    let stencil = &img.quad_stencil[j * (w - 1)..(j + 1) * (w - 1)];
    let pad = Vec3::splat(img.pad);
    let (mut lo, mut hi) = (r0[0].min(r1[0]), r0[0].max(r1[0]));
    for (i, (o, &st)) in out.iter_mut().zip(stencil).enumerate() {
        let (a, b) = (r0[i + 1], r1[i + 1]);
        let (lo1, hi1) = (a.min(b), a.max(b));
        *o = if st == 0 {
            Aabb::EMPTY
        } else {
            Aabb {
                min: (lo.min(lo1) - pad).into(),
                max: (hi.max(hi1) + pad).into(),
            }
        };
        (lo, hi) = (lo1, hi1);
    }
}

/// The sign bytes of quad row `j`.
fn leaf_signs_row(img: &GeometryImage, j: usize, out: &mut [[i8; 4]]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = quad_signs(&img.quad(i, j));
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
        *o = c0[i0].merge(&c0[i1]).merge(&c1[i0].merge(&c1[i1]));
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
    /// only when [`Self::with_signs`]). The leaves and the level above them are made in one
    /// pass, each rayon task making two leaf rows and the row above them while they are in
    /// cache; every further level is one pass over the level below, rows split across threads.
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
            l.boxes.resize(size.0 * size.1, Aabb::EMPTY);
            if self.with_signs {
                l.signs.resize(size.0 * size.1, [0; 4]);
            } else {
                l.signs = Vec::new();
            }
            n += 1;
            if size.0 <= 1 && size.1 <= 1 {
                break;
            }
            size = (size.0.div_ceil(2), size.1.div_ceil(2));
        }
        self.levels.truncate(n);
        let signs = self.with_signs;
        if n == 1 {
            let leaf = &mut self.levels[0];
            leaf_row(img, 0, &mut leaf.boxes);
            if signs {
                leaf_signs_row(img, 0, &mut leaf.signs);
            }
            return;
        }
        // Leaves and level 1 together: task y makes leaf rows 2y, 2y + 1 and row y above.
        {
            let (lower, upper) = self.levels.split_at_mut(1);
            let (leaf, l1) = (&mut lower[0], &mut upper[0]);
            let pw = l1.width;
            let band = |y: usize, leaves: &mut [Aabb], row: &mut [Aabb]| {
                let rows = leaves.len() / w;
                for r in 0..rows {
                    leaf_row(img, 2 * y + r, &mut leaves[r * w..(r + 1) * w]);
                }
                let c1 = &leaves[(rows - 1) * w..rows * w];
                merge_row(&leaves[..w], c1, row);
            };
            leaf.boxes
                .par_chunks_mut(2 * w)
                .zip(l1.boxes.par_chunks_mut(pw))
                .with_min_len(8)
                .enumerate()
                .for_each(|(y, (leaves, row))| band(y, leaves, row));
            if signs {
                leaf.signs
                    .par_chunks_mut(w)
                    .enumerate()
                    .for_each(|(j, row)| leaf_signs_row(img, j, row));
                let (cb, cs, ch) = (&leaf.boxes, &leaf.signs, leaf.height);
                l1.signs
                    .par_chunks_mut(pw)
                    .enumerate()
                    .for_each(|(y, row)| {
                        merge_signs_row(child_rows(cb, w, ch, y), child_rows(cs, w, ch, y), row)
                    });
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
            if p.height >= PAR_ROWS {
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

    /// The root box (empty when no quad has its stencil set).
    pub fn root(&self) -> Aabb {
        self.levels.last().map_or(Aabb::EMPTY, |l| l.boxes[0])
    }
}
