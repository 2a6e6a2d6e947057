//! Binary trees of tight bounding volumes (gProximity §4.3–4.4).
//!
//! Build = the LBVH split phase ([`crate::lbvh`] topology: Karras radix tree over sorted Morton
//! codes) followed by a fitting pass in which every node, independently and in parallel, fits
//! its volume to the triangles below it (a node covers a contiguous range of leaves, so its
//! points are a contiguous slice and its principal frame comes from prefix sums of moments).
//! RSS trees split on RSS-oriented Morton codes ([`oriented_morton_codes`]): one RSS is fitted
//! around the whole model and the codes are computed in its frame. Refit (deforming meshes)
//! refits leaves to their triangles and merges bottom-up, level by level.

use glam::DVec3;
use gprox_geometry::TriMesh;
use rayon::prelude::*;

use crate::bounding_volume::{eigen_frames4, BoundingVolume, Moments};
use crate::morton::spread21;
use crate::{lbvh, Bvh, LEAF};

/// One node: a bounding volume and the LBVH links (`right == LEAF`: leaf, `left` = face).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvTreeNode<B> {
    /// Bounds of every triangle below (model coordinates).
    pub bv: B,
    /// Left child, or the face index of a leaf.
    pub left: u32,
    /// Right child, or [`LEAF`].
    pub right: u32,
}

impl<B> BvTreeNode<B> {
    /// Whether this node is a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.right == LEAF
    }
}

/// How the split phase orders the triangles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Standard LBVH Morton codes in model coordinates (the AABB tree's topology).
    World,
    /// Morton codes in the frame of an RSS fitted around the whole model (§4.4).
    Oriented,
}

/// A binary BVH of volumes `B` with the LBVH layout: `2n − 1` nodes, internal nodes `0..n−1`
/// (root 0), leaves `n−1..2n−1` in split order.
#[derive(Clone, Debug, PartialEq)]
pub struct BvTree<B> {
    /// The nodes; node 0 is the root.
    pub nodes: Vec<BvTreeNode<B>>,
    /// Parent of every node (`LEAF` for the root).
    pub parents: Vec<u32>,
}

/// Internal nodes over more triangles than this merge their children instead of fitting all
/// corners (the O(n log n) fitting work stops after log2 of this many levels). Set so that meshes
/// of up to ~100k triangles are fitted exactly all the way up: looser volumes near the root cost
/// the distance queries more than the fitting costs the build (with 2048 here, bunny and bumpy
/// queries were 8–12 % slower for a 3–7 % faster build).
pub const FIT_LEAVES: usize = 1 << 17;

/// Windows of the corner levels (see [`CornerLevel`]), increasing: a node fits all corners of
/// its first `WINDOWS[0]` triangles, then level `j`'s corners from its slot `f + WINDOWS[j]` on.
const WINDOWS: [usize; 2] = [4, 64];

/// The corners of the leaf slots whose vertex does not occur in the `window` slots before, one
/// array per coordinate (`start[k]` = index of slot k's first kept corner). A node over slots
/// `[f, l]` may take its corners of slots `f + window` on from here: every dropped one repeats
/// a vertex of an earlier slot of the same node, so its point set is unchanged. A vertex is
/// shared by ~6 triangles, which Morton order mostly puts close together; the longer window
/// catches most of the rest for the large nodes.
struct CornerLevel {
    window: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    start: Vec<u32>,
}

/// Below this many nodes the passes run on one thread.
const PAR_MIN: usize = 1 << 12;

/// RSS-oriented Morton codes (§4.4): triangle centroids in the frame of one RSS fitted around all
/// vertices, quantised to 21 bits per axis over their bounding box, interleaved like
/// [`crate::morton::morton63`].
pub fn oriented_morton_codes(mesh: &TriMesh) -> Vec<u64> {
    let pts: Vec<DVec3> = mesh.positions().iter().map(|p| p.as_dvec3()).collect();
    // The principal frame of the vertices: that of an RSS fitted around them (`Rss::fit_points`),
    // without fitting the volume itself.
    let frame = Moments::from_points(&pts).frame();
    let ft = frame.transpose();
    let faces = mesh.faces();
    let centroid =
        |f: &[u32; 3]| ft * ((pts[f[0] as usize] + pts[f[1] as usize] + pts[f[2] as usize]) / 3.0);
    let cent: Vec<DVec3> = if faces.len() < PAR_MIN {
        faces.iter().map(centroid).collect()
    } else {
        faces.par_iter().with_min_len(1024).map(centroid).collect()
    };
    let (lo, hi) = cent.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), &c| (lo.min(c), hi.max(c)),
    );
    let ext = (hi - lo).to_array().map(|e| if e > 0.0 { e } else { 1.0 });
    let cells = 2097152.0f64;
    let code = |c: &DVec3| {
        let q = (*c - lo).to_array();
        let k = [0, 1, 2].map(|i| (q[i] / ext[i] * cells).clamp(0.0, cells - 1.0) as u32);
        (spread21(k[0]) << 2) | (spread21(k[1]) << 1) | spread21(k[2])
    };
    if cent.len() < PAR_MIN {
        cent.iter().map(code).collect()
    } else {
        cent.par_iter().with_min_len(1024).map(code).collect()
    }
}

/// Triangle corners in model coordinates (f64).
fn triangle(mesh: &TriMesh, face: u32) -> [DVec3; 3] {
    mesh.triangle(face as usize).map(|p| p.as_dvec3())
}

impl<B: BoundingVolume> BvTree<B> {
    /// Builds the tree over `mesh` with RSS-oriented splitting and a full fitting pass.
    ///
    /// ```
    /// use gprox_bvh::bv_tree::BvTree;
    /// use gprox_bvh::rss::Rss;
    /// use gprox_geometry::{glam::Vec3, TriMesh};
    /// let mesh = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
    ///     vec![[0, 1, 2], [0, 1, 3], [0, 2, 3]],
    /// )
    /// .unwrap();
    /// let tree = BvTree::<Rss>::build(&mesh);
    /// assert_eq!(tree.nodes.len(), 5);
    /// ```
    pub fn build(mesh: &TriMesh) -> Self {
        Self::build_with(mesh, Split::Oriented)
    }

    /// Builds the tree with the given split.
    pub fn build_with(mesh: &TriMesh, split: Split) -> Self {
        let topology = match split {
            Split::World => lbvh::build(mesh),
            Split::Oriented => lbvh::build_from_codes(
                oriented_morton_codes(mesh),
                &crate::refit::triangle_aabbs(mesh),
            ),
        };
        Self::fit(mesh, &topology)
    }

    /// The fitting pass over an existing LBVH topology. Leaves are fitted to their triangle;
    /// every internal node covering at most [`FIT_LEAVES`] triangles is fitted directly to all of
    /// their corners, in its principal frame (from prefix sums of moments), all such nodes in
    /// parallel; the few nodes above merge their children in their own principal frame.
    pub fn fit(mesh: &TriMesh, topology: &Bvh) -> Self {
        Self::fit_with_limit(mesh, topology, FIT_LEAVES)
    }

    /// [`BvTree::fit`] with another limit than [`FIT_LEAVES`] for the directly fitted nodes.
    pub fn fit_with_limit(mesh: &TriMesh, topology: &Bvh, fit_leaves: usize) -> Self {
        let nodes = &topology.nodes;
        let m = nodes.len();
        if m == 0 {
            return Self {
                nodes: Vec::new(),
                parents: Vec::new(),
            };
        }
        let n = m.div_ceil(2);
        let first_leaf = n - 1;
        // Prefix moments of the triangles' corners in leaf order, and the corner levels.
        let faces = mesh.faces();
        let mut tris: Vec<[glam::Vec3; 3]> = Vec::with_capacity(n);
        let mut levels = WINDOWS.map(|window| CornerLevel {
            window,
            x: Vec::with_capacity(n),
            y: Vec::with_capacity(n),
            z: Vec::with_capacity(n),
            start: Vec::with_capacity(n + 1),
        });
        // Slot of every vertex's latest corner so far.
        let mut seen = vec![u32::MAX; mesh.positions().len()];
        let mut prefix = crate::alloc::with_capacity(n + 1);
        let mut last = Moments::default();
        prefix.push(last);
        for (k, leaf) in nodes[first_leaf..].iter().enumerate() {
            let face = faces[leaf.left as usize];
            let t32 = mesh.triangle(leaf.left as usize);
            tris.push(t32);
            for level in &mut levels {
                level.start.push(level.x.len() as u32);
            }
            for (&v, p) in face.iter().zip(t32) {
                let prev = std::mem::replace(&mut seen[v as usize], k as u32);
                let gap = if prev == u32::MAX {
                    usize::MAX // first occurrence
                } else {
                    k - prev as usize
                };
                for level in levels.iter_mut().take_while(|level| gap > level.window) {
                    level.x.push(f64::from(p.x));
                    level.y.push(f64::from(p.y));
                    level.z.push(f64::from(p.z));
                }
            }
            last = Moments::from_points(&t32.map(|p| p.as_dvec3())).add(&last);
            prefix.push(last);
        }
        drop(seen);
        for level in &mut levels {
            level.start.push(level.x.len() as u32);
        }
        let leaf_triangle = |slot: usize| tris[slot].map(|p| p.as_dvec3());
        let ranges = leaf_ranges(topology);
        // Principal frames of the internal nodes, four at a time in SIMD (each alone is a long
        // chain of dependent roots, divisions and trigonometry).
        let frame_batch = |b: usize| -> [glam::DMat3; 4] {
            let cov = std::array::from_fn(|j| {
                let i = 4 * b + j;
                if i >= first_leaf {
                    return glam::DMat3::ZERO;
                }
                let (f, l) = ranges[i];
                prefix[l as usize + 1].sub(&prefix[f as usize]).covariance()
            });
            eigen_frames4(&cov)
        };
        let batches = first_leaf.div_ceil(4);
        let mut frames: Vec<[glam::DMat3; 4]> = crate::alloc::with_capacity(batches);
        if first_leaf < PAR_MIN {
            frames.extend((0..batches).map(frame_batch));
        } else {
            frames.par_extend(
                (0..batches)
                    .into_par_iter()
                    .with_min_len(64)
                    .map(frame_batch),
            );
        }
        let frame_of = |i: usize| &frames[i / 4][i % 4];
        let placeholder = B::fit_in_frame(&[], &glam::DMat3::IDENTITY);
        let fit_node = |i: usize| -> BvTreeNode<B> {
            let (f, l) = ranges[i];
            let bv = if i >= first_leaf {
                B::fit_triangle(&leaf_triangle(f as usize))
            } else if (l - f) as usize >= fit_leaves {
                placeholder // merged below
            } else {
                let (f, end) = (f as usize, l as usize + 1);
                // Slot where each level takes over (the last runs to the end).
                let from = |j: usize| WINDOWS.get(j).map_or(end, |w| (f + w).min(end));
                let mut hx = [0.0; 3 * WINDOWS[0]];
                let mut hy = [0.0; 3 * WINDOWS[0]];
                let mut hz = [0.0; 3 * WINDOWS[0]];
                for (j, slot) in (f..from(0)).enumerate() {
                    for (c, p) in leaf_triangle(slot).into_iter().enumerate() {
                        (hx[3 * j + c], hy[3 * j + c], hz[3 * j + c]) = (p.x, p.y, p.z);
                    }
                }
                let h = 3 * (from(0) - f);
                let mut parts = [[&[][..]; 3]; WINDOWS.len() + 1];
                parts[0] = [&hx[..h], &hy[..h], &hz[..h]];
                for (j, level) in levels.iter().enumerate() {
                    let r = level.start[from(j)] as usize..level.start[from(j + 1)] as usize;
                    parts[j + 1] = [&level.x[r.clone()], &level.y[r.clone()], &level.z[r]];
                }
                B::fit_in_frame_soa(&parts, frame_of(i))
            };
            BvTreeNode {
                bv,
                left: nodes[i].left,
                right: nodes[i].right,
            }
        };
        let mut out: Vec<BvTreeNode<B>> = crate::alloc::with_capacity(m);
        if m < PAR_MIN {
            out.extend((0..m).map(fit_node));
        } else {
            out.par_extend((0..m).into_par_iter().with_min_len(64).map(fit_node));
        }
        // Large nodes: fitted in their principal frame around the maximal small nodes below
        // them (one level of approximation, no compounding), independently of each other.
        let is_small =
            |i: usize| i >= first_leaf || ((ranges[i].1 - ranges[i].0) as usize) < fit_leaves;
        let large: Vec<usize> = (0..first_leaf).filter(|&i| !is_small(i)).collect();
        let fit_large = |&i: &usize| -> (usize, B) {
            let mut parts = Vec::new();
            let mut stack = vec![i];
            while let Some(j) = stack.pop() {
                if is_small(j) {
                    parts.push(out[j].bv);
                } else {
                    stack.push(out[j].left as usize);
                    stack.push(out[j].right as usize);
                }
            }
            (i, B::merge_all_in_frame(&parts, frame_of(i)))
        };
        let fitted: Vec<(usize, B)> = if large.len() < 64 {
            large.iter().map(fit_large).collect()
        } else {
            large.par_iter().map(fit_large).collect()
        };
        for (i, bv) in fitted {
            out[i].bv = bv;
        }
        Self {
            nodes: out,
            parents: topology.parents.clone(),
        }
    }

    /// Number of leaves (triangles).
    pub fn leaf_count(&self) -> usize {
        self.nodes.len().div_ceil(2)
    }

    /// Refits to new vertex positions of the same mesh topology: leaves are refitted to their
    /// triangles, internal nodes merge their children, deepest level first.
    pub fn refit(&mut self, mesh: &TriMesh) {
        let m = self.nodes.len();
        if m == 0 {
            return;
        }
        let first_leaf = m.div_ceil(2) - 1;
        let refit_leaf = |node: &mut BvTreeNode<B>| {
            node.bv = B::fit_triangle(&triangle(mesh, node.left));
        };
        if m < PAR_MIN {
            self.nodes[first_leaf..].iter_mut().for_each(refit_leaf);
        } else {
            self.nodes[first_leaf..]
                .par_iter_mut()
                .with_min_len(256)
                .for_each(refit_leaf);
        }
        for level in internal_levels(self).iter().rev() {
            let nodes = &self.nodes;
            let merge = |&i: &u32| {
                let n = &nodes[i as usize];
                let (l, r) = (&nodes[n.left as usize], &nodes[n.right as usize]);
                (i, l.bv.merge(&r.bv))
            };
            let merged: Vec<(u32, B)> = if level.len() < PAR_MIN {
                level.iter().map(merge).collect()
            } else {
                level.par_iter().with_min_len(256).map(merge).collect()
            };
            for (i, bv) in merged {
                self.nodes[i as usize].bv = bv;
            }
        }
    }
}

/// Internal nodes grouped by depth (root level first).
fn internal_levels<B>(tree: &BvTree<B>) -> Vec<Vec<u32>> {
    let mut levels: Vec<Vec<u32>> = Vec::new();
    if tree.nodes.is_empty() || tree.nodes[0].is_leaf() {
        return levels;
    }
    let mut current = vec![0u32];
    while !current.is_empty() {
        let mut next = Vec::new();
        for &i in &current {
            let n = &tree.nodes[i as usize];
            for c in [n.left, n.right] {
                if !tree.nodes[c as usize].is_leaf() {
                    next.push(c);
                }
            }
        }
        levels.push(current);
        current = next;
    }
    levels
}

/// Leaf range `[first, last]` (leaf slots) of every node of an LBVH topology.
pub fn leaf_ranges(topology: &Bvh) -> Vec<(u32, u32)> {
    let nodes = &topology.nodes;
    let m = nodes.len();
    let n = m.div_ceil(2);
    let first_leaf = (n - 1) as u32;
    // Leaf slot k is node `first_leaf + k`; only the internal nodes need the descent.
    let mut ranges = vec![(0u32, 0u32); first_leaf as usize];
    ranges.extend((0..n as u32).map(|k| (k, k)));
    if m <= 1 {
        return ranges;
    }
    let mut stack = vec![(0u32, 0u32, first_leaf)];
    while let Some((i, f, l)) = stack.pop() {
        ranges[i as usize] = (f, l);
        let node = &nodes[i as usize];
        let gamma = if node.left >= first_leaf {
            node.left - first_leaf
        } else {
            stack.push((node.left, f, node.left));
            node.left
        };
        if node.right < first_leaf {
            stack.push((node.right, gamma + 1, l));
        }
    }
    ranges
}
