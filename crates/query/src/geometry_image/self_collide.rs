//! Self-collision of one geometry image (paper §6.2): its hierarchy traversed against itself.
//! A pair `(t, t)` expands into the child pairs `(c_k, c_l)` with `k ≤ l` (children numbered in
//! Z order), a pair `(t0, t1)`, `t0 ≠ t1`, into all 16; in Z (Morton) order the first node of
//! every pair then precedes the second, so the pairs `t0 > t1` the paper skips never arise.
//! At the leaves `t0 = t1` and quads sharing a texel (adjacent) are not reported. The normal
//! test: a pair of identical or adjacent nodes (texel coordinates differ by at most one) whose
//! sign bytes share an equal non-zero entry has all its normals on one side of a direction and
//! is not descended (the paper's test, after Volino and Magnenat-Thalmann; like theirs it
//! assumes the region's boundary does not fold over itself in projection).

use rayon::prelude::*;

use super::hierarchy::{is_empty, Level, Nodes};
use super::traverse::{children, quads_intersect, TraversalBuffers};
use super::{GeometryImage, HierarchyImage, Mode, TexelPair};

/// Whether two nodes of `level` are the same or adjacent (share an edge or a corner).
#[inline]
fn near(level: &Level, p: u32, q: u32) -> bool {
    let w = level.width as i64;
    let (px, py, qx, qy) = (p as i64 % w, p as i64 / w, q as i64 % w, q as i64 / w);
    (px - qx).abs() <= 1 && (py - qy).abs() <= 1
}

/// Whether two sign byte sets share an equal non-zero entry.
#[inline]
fn common_direction(a: &[i8; 4], b: &[i8; 4]) -> bool {
    a.iter().zip(b).any(|(&x, &y)| x != 0 && x == y)
}

/// Whether the pair `(p, q)` of `level` survives: boxes overlap and, for identical or adjacent
/// nodes, the normal test (when enabled) does not rule a self-intersection out.
#[inline]
fn survives(nodes: Nodes, p: u32, q: u32, normal_test: bool) -> bool {
    let level = nodes.level;
    let (bp, bq) = (nodes.aabb(p), nodes.aabb(q));
    if is_empty(&bp) || is_empty(&bq) || !bp.overlaps(&bq) {
        return false;
    }
    !(normal_test
        && !level.signs.is_empty()
        && near(level, p, q)
        && common_direction(&level.signs[p as usize], &level.signs[q as usize]))
}

/// Every pair of non-adjacent quads of `img` whose padded boxes overlap (approximate) or whose
/// triangles intersect (exact), each once with the smaller quad in Z order first, sorted;
/// `normal_test` prunes regions whose normals share a direction (it reads the sign bytes of a
/// hierarchy made by [`HierarchyImage::build_with_signs`]; without them nothing is pruned).
pub fn self_collide_image(
    img: &GeometryImage,
    h: &HierarchyImage,
    mode: Mode,
    normal_test: bool,
) -> Vec<TexelPair> {
    let top = h.levels.len() - 1;
    if is_empty(&h.root()) {
        return Vec::new();
    }
    if normal_test && top > 0 && !survives(h.nodes(img, top), 0, 0, true) {
        return Vec::new();
    }
    let mut bufs = TraversalBuffers::default();
    bufs.start((0, 0));
    for l in (1..=top).rev() {
        let (uw, low) = (h.levels[l].width, h.nodes(img, l - 1));
        let alive = bufs.step(|(p, q), out| {
            let (cp, kp) = children(uw, low.level, p);
            let (cq, kq) = children(uw, low.level, q);
            for (k, &x) in cp[..kp].iter().enumerate() {
                let from = if p == q { k } else { 0 };
                for &y in &cq[from..kq] {
                    if l - 1 == 0 && near(low.level, x, y) {
                        continue;
                    }
                    if survives(low, x, y, normal_test) {
                        out.push((x, y));
                    }
                }
            }
        });
        if !alive {
            return Vec::new();
        }
    }
    let w = h.levels[0].width as u32;
    let mut out: Vec<TexelPair> = bufs
        .frontier()
        .par_iter()
        .filter(|&&(p, q)| top > 0 || p != q)
        .map(|&(p, q)| TexelPair {
            face_a: img.face,
            quad_a: [p % w, p / w],
            face_b: img.face,
            quad_b: [q % w, q / w],
        })
        .filter(|t| mode == Mode::Approximate || quads_intersect(img, t.quad_a, img, t.quad_b))
        .collect();
    out.par_sort_unstable();
    out
}
