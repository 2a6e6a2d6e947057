//! Simultaneous breadth-first traversal of two hierarchy images (paper §5). Both quad-trees are
//! descended one level per step (the deeper one alone until both have the same number of levels
//! left), so every surviving pair of a step yields up to 16 child pairs, all tested at once. The
//! first steps are not tested (the paper's skip of levels with fewer than [`MIN_PAIRS`] pairs,
//! with the root pair tested as the paper's CPU pre-test). Null pairs are removed by stream
//! compaction: rayon splits the pair list into chunks, each writes its surviving pairs, and the
//! chunks are concatenated in order (a per-chunk count and an exclusive prefix sum over the
//! counts: the 1D, two-level form of the paper's 2D counting mip-map, whose top-down pass gives
//! each entry the number of survivors before it). The traversal stops when no pair survives.

use glam::{DVec3, Vec3, Vec4};
use gprox_geometry::tri_tri::triangles_intersect;
use rayon::prelude::*;

use gprox_bvh::aabb::Aabb;

use gprox_geometry::freeform::TrimmedFace;
use gprox_geometry::transform::Pose64;

use super::hierarchy::{is_empty, Level};
use super::resolution::world_box;
use super::{GeometryImage, GeometryImageError, HierarchyImage};
use crate::pairs::sort_keys;

/// The traversal starts testing at the first level with at least this many pairs.
pub const MIN_PAIRS: usize = 256;

/// What the leaf pairs mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every pair of quads whose padded boxes overlap (the paper's approximate mode): the
    /// surfaces come within 2ε there, and every true contact is reported.
    Approximate,
    /// Pairs of quads whose triangles (diagonal 00–11) intersect, decided exactly.
    Exact,
}

/// A pair of surface elements: quad `(i, j)` of face `face_a` and of face `face_b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TexelPair {
    /// Face of the first element.
    pub face_a: u32,
    /// Quad `[i, j]` (i along u) of the first element.
    pub quad_a: [u32; 2],
    /// Face of the second element.
    pub face_b: u32,
    /// Quad of the second element.
    pub quad_b: [u32; 2],
}

impl TexelPair {
    /// A contact point for display: the middle of the two quads' centres.
    pub fn contact(&self, a: &GeometryImage, b: &GeometryImage) -> Vec3 {
        let quad = |img: &GeometryImage, q: [u32; 2]| img.quad(q[0] as usize, q[1] as usize);
        contact_point(quad(a, self.quad_a), quad(b, self.quad_b))
    }
}

/// The display point of two quads given by their corners (order 00, 10, 01, 11): the middle
/// of their centres, as [`TexelPair::contact`] computes it.
pub fn contact_point(a: [Vec3; 4], b: [Vec3; 4]) -> Vec3 {
    let centre = |q: [Vec3; 4]| q.iter().fold(Vec3::ZERO, |s, &p| s + p) * 0.25;
    (centre(a) + centre(b)) * 0.5
}

/// A node pair: node indices `y * width + x` in the current levels of A and B.
pub(crate) type NodePair = (u32, u32);

/// The existing children of node `k` of a level `upper_width` wide in the level below
/// (`lower`): their indices and count, without allocation.
#[inline]
pub(crate) fn children(upper_width: usize, lower: &Level, k: u32) -> ([u32; 4], usize) {
    let (x, y) = (k as usize % upper_width, k as usize / upper_width);
    let (w, h) = (lower.width, lower.height);
    let (mut out, mut n) = ([0u32; 4], 0);
    for c in 0..4usize {
        let (cx, cy) = (2 * x + (c & 1), 2 * y + (c >> 1));
        if cx < w && cy < h {
            out[n] = (cy * w + cx) as u32;
            n += 1;
        }
    }
    (out, n)
}

/// Pairs per compaction chunk.
const CHUNK: usize = 2048;

/// Work buffers of the traversal, kept across frames so that a frame allocates nothing once they
/// have grown: the frontier and the per-chunk survivor lists of the compaction.
#[derive(Clone, Debug, Default)]
pub struct TraversalBuffers {
    frontier: Vec<NodePair>,
    next: Vec<NodePair>,
    chunks: Vec<Vec<NodePair>>,
    keys: Vec<u64>,
    /// The second buffer of the keys' radix sort.
    scratch: Vec<u64>,
}

impl TraversalBuffers {
    /// One traversal step: `expand` writes the surviving children of each pair of the frontier;
    /// rayon splits the frontier into chunks, each writes its survivors to its own buffer, and
    /// the buffers are concatenated in order into the new frontier (the compaction). Returns
    /// whether any pair survives.
    pub(crate) fn step(&mut self, expand: impl Fn(NodePair, &mut Vec<NodePair>) + Sync) -> bool {
        let n = self.frontier.len().div_ceil(CHUNK);
        if self.chunks.len() < n {
            self.chunks.resize_with(n, Vec::new);
        }
        let chunks = &mut self.chunks[..n];
        self.frontier
            .par_chunks(CHUNK)
            .zip(chunks.par_iter_mut())
            .for_each(|(pairs, out)| {
                out.clear();
                for &p in pairs {
                    expand(p, out);
                }
            });
        self.next.clear();
        for c in chunks.iter() {
            self.next.extend_from_slice(c);
        }
        std::mem::swap(&mut self.frontier, &mut self.next);
        !self.frontier.is_empty()
    }

    /// Starts a traversal at the pair `root`.
    pub(crate) fn start(&mut self, root: NodePair) {
        self.frontier.clear();
        self.frontier.push(root);
    }

    /// The current frontier.
    pub(crate) fn frontier(&self) -> &[NodePair] {
        &self.frontier
    }
}

/// Exact test of the two triangles (diagonal 00–11) of quad `qa` of `a` against those of quad
/// `qb` of `b` (exact mode's leaf test).
pub fn quads_intersect(a: &GeometryImage, qa: [u32; 2], b: &GeometryImage, qb: [u32; 2]) -> bool {
    let quad = |img: &GeometryImage, q: [u32; 2]| img.quad(q[0] as usize, q[1] as usize);
    quad_corners_intersect(quad(a, qa), quad(b, qb))
}

/// [`quads_intersect`] on two quads given by their corners (order 00, 10, 01, 11): whether a
/// triangle (00 10 11 or 00 11 01) of one meets one of the other, decided exactly. The device
/// (`gprox_cuda`) hands the corners of the pairs its filtered test leaves undecided to this.
pub fn quad_corners_intersect(a: [Vec3; 4], b: [Vec3; 4]) -> bool {
    let tris = |q: [Vec3; 4]| {
        let c = q.map(|p| p.as_dvec3());
        [[c[0], c[1], c[3]], [c[0], c[3], c[2]]]
    };
    let (ta, tb): ([[DVec3; 3]; 2], [[DVec3; 3]; 2]) = (tris(a), tris(b));
    ta.iter()
        .any(|x| tb.iter().any(|y| triangles_intersect(x, y)))
}

/// All pairs of quads of `a` and `b` whose padded boxes overlap (approximate mode) or whose
/// triangles intersect (exact mode), sorted. The hierarchies must be built from the images.
/// [`collide_images_with`] reuses buffers across frames.
pub fn collide_images(
    a: (&GeometryImage, &HierarchyImage),
    b: (&GeometryImage, &HierarchyImage),
    mode: Mode,
) -> Vec<TexelPair> {
    let mut out = Vec::new();
    collide_images_with(a, b, mode, &mut TraversalBuffers::default(), &mut out);
    out
}

/// [`collide_images`] writing into `out` (cleared first) with the work buffers `bufs`.
pub fn collide_images_with(
    a: (&GeometryImage, &HierarchyImage),
    b: (&GeometryImage, &HierarchyImage),
    mode: Mode,
    bufs: &mut TraversalBuffers,
    out: &mut Vec<TexelPair>,
) {
    out.clear();
    let (ha, hb) = (a.1, b.1);
    if !ha.root().overlaps(&hb.root()) {
        return;
    }
    let (mut la, mut lb) = (ha.levels.len() - 1, hb.levels.len() - 1);
    bufs.start((0, 0));
    let mut tested = false;
    while la > 0 || lb > 0 {
        let (da, db) = (la > 0 && la >= lb, lb > 0 && lb >= la);
        let (na, nb) = (if da { la - 1 } else { la }, if db { lb - 1 } else { lb });
        let (wa, lwa) = (ha.levels[la].width, ha.nodes(a.0, na));
        let (wb, lwb) = (hb.levels[lb].width, hb.nodes(b.0, nb));
        let fanout = if da { 4 } else { 1 } * if db { 4 } else { 1 };
        let test = tested || bufs.frontier().len() * fanout >= MIN_PAIRS;
        tested = test;
        let alive = bufs.step(|(x, y), out| {
            let (ca, boxes_a, ka) = if da {
                lwa.children_boxes(wa, x)
            } else {
                ([x, 0, 0, 0], [lwa.aabb(x); 4], 1)
            };
            let (cb, boxes_b, kb) = if db {
                lwb.children_boxes(wb, y)
            } else {
                ([y, 0, 0, 0], [lwb.aabb(y); 4], 1)
            };
            if test {
                // The 16 box tests at once, one child of `a` against the four of `b` per step.
                let rows = overlap_rows(&boxes_a, &boxes_b, kb);
                for (&p, &row) in ca[..ka].iter().zip(&rows) {
                    let mut m = row;
                    while m != 0 {
                        out.push((p, cb[m.trailing_zeros() as usize]));
                        m &= m - 1;
                    }
                }
                return;
            }
            for (&p, bp) in ca[..ka].iter().zip(&boxes_a) {
                if is_empty(bp) {
                    continue;
                }
                for (&q, bq) in cb[..kb].iter().zip(&boxes_b) {
                    if !is_empty(bq) {
                        out.push((p, q));
                    }
                }
            }
        });
        (la, lb) = (na, nb);
        if !alive {
            return;
        }
    }
    // Leaf pairs as packed keys (i_a, j_a, i_b, j_b), each field as wide as its side needs
    // (9 bits for 512 quads), so the sort compares one u64 — the order of `TexelPair` for fixed
    // faces — and its radix passes cover few bits (3 passes of 12 for two 512² images).
    let (l0a, l0b) = (&ha.levels[0], &hb.levels[0]);
    let (wa, wb) = (l0a.width as u32, l0b.width as u32);
    let field = |n: usize| u64::BITS - (n.max(1) as u64 - 1).leading_zeros();
    let bits = [
        field(l0a.width),
        field(l0a.height),
        field(l0b.width),
        field(l0b.height),
    ];
    let shift = [bits[1] + bits[2] + bits[3], bits[2] + bits[3], bits[3], 0];
    let (la0, lb0) = (ha.nodes(a.0, 0), hb.nodes(b.0, 0));
    let key = |p: u32, q: u32| {
        (u64::from(p % wa) << shift[0])
            | (u64::from(p / wa) << shift[1])
            | (u64::from(q % wb) << shift[2])
            | u64::from(q / wb)
    };
    bufs.keys.clear();
    let pairs = bufs.frontier.par_iter();
    if tested {
        // Pairs of a tested step overlap already (an indexed map writes in place).
        bufs.keys.par_extend(pairs.map(|&(p, q)| key(p, q)));
    } else {
        bufs.keys.par_extend(
            pairs
                .filter(|&&(p, q)| la0.aabb(p).overlaps(&lb0.aabb(q)))
                .map(|&(p, q)| key(p, q)),
        );
    }
    sort_keys(&mut bufs.keys, &mut bufs.scratch);
    let (fa, fb) = (a.0.face, b.0.face);
    let pair = |k: u64| {
        let part = |f: usize| ((k >> shift[f]) & ((1u64 << bits[f]) - 1)) as u32;
        TexelPair {
            face_a: fa,
            quad_a: [part(0), part(1)],
            face_b: fb,
            quad_b: [part(2), part(3)],
        }
    };
    match mode {
        // Every key is a pair: an indexed map writes the output in place.
        Mode::Approximate => out.par_extend(bufs.keys.par_iter().map(|&k| pair(k))),
        Mode::Exact => out.par_extend(
            bufs.keys
                .par_iter()
                .map(|&k| pair(k))
                .filter(|t| quads_intersect(a.0, t.quad_a, b.0, t.quad_b)),
        ),
    }
}

/// For each box of `a`, one bit per box `m < kb` of `b` that it overlaps ([`Aabb::overlaps`],
/// the same comparisons in f32 lanes), none for an empty box of `a` (as the scalar loop skips
/// it; an empty box of `b` fails the comparisons).
#[inline]
fn overlap_rows(a: &[Aabb; 4], b: &[Aabb; 4], kb: usize) -> [u32; 4] {
    let lane = |f: fn(&Aabb) -> f32| Vec4::from_array(b.each_ref().map(f));
    let (blo, bhi) = (
        [lane(|x| x.min[0]), lane(|x| x.min[1]), lane(|x| x.min[2])],
        [lane(|x| x.max[0]), lane(|x| x.max[1]), lane(|x| x.max[2])],
    );
    let keep = (1u32 << kb) - 1;
    a.each_ref().map(|x| {
        if is_empty(x) {
            return 0;
        }
        let mut m = Vec4::splat(x.min[0]).cmple(bhi[0]) & blo[0].cmple(Vec4::splat(x.max[0]));
        for i in 1..3 {
            m &= Vec4::splat(x.min[i]).cmple(bhi[i]) & blo[i].cmple(Vec4::splat(x.max[i]));
        }
        m.bitmask() & keep
    })
}

/// Images and hierarchies of the faces of a posed model restricted to `clip` (§3): face `k`
/// (id `k`) is imaged on the part of it whose control box meets `clip`, and left out when none
/// does. With the overlap of two models' boxes as `clip` this is what [`collide_models`] needs.
pub fn clipped_images(
    faces: &[TrimmedFace],
    pose: &Pose64,
    eps: f64,
    clip: &Aabb,
) -> Result<Vec<(GeometryImage, HierarchyImage)>, GeometryImageError> {
    let mut out = Vec::new();
    for (k, f) in faces.iter().enumerate() {
        let b = world_box(f.surface(), pose);
        let c = Aabb {
            min: std::array::from_fn(|i| b.min[i].max(clip.min[i])),
            max: std::array::from_fn(|i| b.max[i].min(clip.max[i])),
        };
        if is_empty(&c) {
            continue;
        }
        if let Some(img) = GeometryImage::generate(k as u32, f, pose, eps, Some(&c))? {
            let h = HierarchyImage::build(&img);
            out.push((img, h));
        }
    }
    Ok(out)
}

/// [`collide_images`] over every pair of faces of two models whose root boxes overlap; faces
/// are `(image, hierarchy)` pairs and keep their own face ids. Sorted.
pub fn collide_models(
    a: &[(GeometryImage, HierarchyImage)],
    b: &[(GeometryImage, HierarchyImage)],
    mode: Mode,
) -> Vec<TexelPair> {
    let pairs: Vec<(usize, usize)> = (0..a.len())
        .flat_map(|i| (0..b.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| a[i].1.root().overlaps(&b[j].1.root()))
        .collect();
    let mut out: Vec<TexelPair> = pairs
        .par_iter()
        .flat_map_iter(|&(i, j)| {
            collide_images((&a[i].0, &a[i].1), (&b[j].0, &b[j].1), mode).into_iter()
        })
        .collect();
    out.par_sort_unstable();
    out
}
