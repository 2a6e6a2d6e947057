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
    /// Normal signs against [`DIRECTIONS`] (−1, 0, 1; 0 = not the same everywhere below).
    pub signs: Vec<[i8; 4]>,
}

/// The quad-tree of one geometry image: `levels[0]` are the quads, the last level one node.
#[derive(Clone, Debug, Default)]
pub struct HierarchyImage {
    /// Face id of the image.
    pub face: u32,
    /// Levels from the leaves up.
    pub levels: Vec<Level>,
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

impl HierarchyImage {
    /// Builds the hierarchy of `img`.
    pub fn build(img: &GeometryImage) -> Self {
        let mut h = Self::default();
        h.rebuild(img);
        h
    }

    /// Rebuilds in place for new positions (allocations are reused when the size is the same).
    pub fn rebuild(&mut self, img: &GeometryImage) {
        self.face = img.face;
        let (w, ht) = (img.width() - 1, img.height() - 1);
        let mut sizes = vec![(w, ht)];
        while sizes.last().is_some_and(|&(a, b)| a > 1 || b > 1) {
            let (a, b) = sizes[sizes.len() - 1];
            sizes.push((a.div_ceil(2), b.div_ceil(2)));
        }
        self.levels.resize_with(sizes.len(), Level::default);
        self.levels.truncate(sizes.len());
        for (l, &(a, b)) in self.levels.iter_mut().zip(&sizes) {
            l.width = a;
            l.height = b;
            l.boxes.resize(a * b, Aabb::EMPTY);
            l.signs.resize(a * b, [0; 4]);
        }
        let leaf = &mut self.levels[0];
        leaf.boxes
            .par_chunks_mut(w)
            .zip(leaf.signs.par_chunks_mut(w))
            .enumerate()
            .for_each(|(j, (boxes, signs))| {
                for i in 0..w {
                    boxes[i] = img.quad_box(i, j);
                    signs[i] = quad_signs(&img.quad(i, j));
                }
            });
        for l in 1..self.levels.len() {
            let (lower, upper) = self.levels.split_at_mut(l);
            let (c, p) = (&lower[l - 1], &mut upper[0]);
            let pw = p.width;
            p.boxes
                .par_chunks_mut(pw)
                .zip(p.signs.par_chunks_mut(pw))
                .enumerate()
                .for_each(|(y, (boxes, signs))| {
                    for x in 0..pw {
                        let (mut b, mut s, mut any) = (Aabb::EMPTY, [0i8; 4], false);
                        for cy in 2 * y..(2 * y + 2).min(c.height) {
                            for cx in 2 * x..(2 * x + 2).min(c.width) {
                                let k = cy * c.width + cx;
                                if is_empty(&c.boxes[k]) {
                                    continue;
                                }
                                b = b.merge(&c.boxes[k]);
                                let cs = c.signs[k];
                                if any {
                                    for d in 0..4 {
                                        if s[d] != cs[d] {
                                            s[d] = 0;
                                        }
                                    }
                                } else {
                                    s = cs;
                                    any = true;
                                }
                            }
                        }
                        boxes[x] = b;
                        signs[x] = s;
                    }
                });
        }
    }

    /// The root box (empty when no quad has its stencil set).
    pub fn root(&self) -> Aabb {
        self.levels.last().map_or(Aabb::EMPTY, |l| l.boxes[0])
    }
}
