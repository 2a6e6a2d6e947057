//! The topological half of a certificate, kept across frames: which boundary loop a node set
//! has. Whether the boundary half-edges of a node (or of the union of two) form exactly one
//! closed loop through distinct vertices, and in which order the walk visits them, depends only
//! on the mesh topology and the tree layout, not on the positions. A deforming mesh whose tree
//! is only refitted asks about the same sets frame after frame, so each answer is found once
//! (the scan of the boundaries and the walk of the loop in [`Contours::find`]) and then read
//! back: the per-frame work of a certificate is the projection of the loop's vertices and the
//! planar tests.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::super::layout::Half;

/// What the topology says about a node set's boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Contour {
    /// The two parts of a union share no edge: no set below them can be certified either.
    Apart,
    /// Not one closed loop through distinct vertices: never certified.
    Broken,
    /// One loop: its vertices in walk order are `pool[start..end]`.
    Loop { start: u32, end: u32 },
}

/// Key of a single node's set (the second entry of a union's key is a node, never this).
pub(super) const SINGLE: u32 = u32::MAX;

/// Answers kept before the cache starts over: a bound on its size when the sets asked about
/// drift from frame to frame (the cloth scene asks about 2,000 a frame, nearly the same ones).
const MAX_ENTRIES: usize = 1 << 16;

/// Multiplicative hashing of a node pair (the keys are small integers; no attacker).
#[derive(Default)]
pub(super) struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(29) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The contours found so far for one layout, and the scratch of the walk.
#[derive(Clone, Debug, Default)]
pub(super) struct Contours {
    map: HashMap<(u32, u32), Contour, BuildHasherDefault<PairHasher>>,
    pool: Vec<u32>,
    /// Per vertex: the stamp of the walk it was last put on, and its successor there
    /// (together: one cache line per vertex visit).
    vert: Vec<[u32; 2]>,
    stamp: u32,
}

impl Contours {
    /// An empty cache for a mesh of `vertex_count` vertices.
    pub(super) fn new(vertex_count: usize) -> Self {
        Self {
            vert: vec![[0, 0]; vertex_count],
            ..Self::default()
        }
    }

    /// Vertex count this cache was made for.
    pub(super) fn vertex_count(&self) -> usize {
        self.vert.len()
    }

    /// Forgets every answer (the layout they were found for is gone).
    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.pool.clear();
    }

    /// The vertices of a [`Contour::Loop`].
    pub(super) fn vertices(&self, start: u32, end: u32) -> &[u32] {
        &self.pool[start as usize..end as usize]
    }

    /// The contour of the set `key` whose boundary is given by `parts` (each: a node's
    /// boundary without the edges whose face across lies in the given leaf-slot range), found
    /// on first use.
    pub(super) fn get(&mut self, key: (u32, u32), parts: &[(&[Half], [u32; 2])]) -> Contour {
        if let Some(&c) = self.map.get(&key) {
            return c;
        }
        if self.map.len() >= MAX_ENTRIES {
            self.clear();
        }
        let c = self.find(parts);
        self.map.insert(key, c);
        c
    }

    fn bump(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.vert.fill([0, 0]);
            self.stamp = 1;
        }
        self.stamp
    }

    /// The boundary half-edges of `parts`, one outgoing per vertex, walked as one loop from
    /// the tail of the last edge scanned; [`Contour::Apart`] when there are several parts and
    /// the first has no edge across to the slot range given with it (read while scanning).
    fn find(&mut self, parts: &[(&[Half], [u32; 2])]) -> Contour {
        let stamp = self.bump();
        let (mut nb, mut start) = (0usize, 0u32);
        let mut removed = false;
        for (k, &(edges, [lo, hi])) in parts.iter().enumerate() {
            if k == 1 && !removed {
                return Contour::Apart;
            }
            for h in edges {
                if lo <= h.adj && h.adj <= hi {
                    removed = true;
                    continue;
                }
                let slot = &mut self.vert[h.u as usize];
                if slot[0] == stamp {
                    return Contour::Broken;
                }
                *slot = [stamp, h.v];
                (nb, start) = (nb + 1, h.u);
            }
        }
        if nb < 3 {
            return Contour::Broken;
        }
        let first = self.pool.len();
        let mut cur = start;
        loop {
            let [at, next] = self.vert[cur as usize];
            if at != stamp || self.pool.len() - first >= nb {
                self.pool.truncate(first);
                return Contour::Broken;
            }
            self.pool.push(cur);
            cur = next;
            if cur == start {
                break;
            }
        }
        if self.pool.len() - first != nb {
            self.pool.truncate(first);
            return Contour::Broken;
        }
        match (u32::try_from(first), u32::try_from(self.pool.len())) {
            (Ok(start), Ok(end)) => Contour::Loop { start, end },
            // More vertex ids than a u32 counts: start over (never with real meshes).
            _ => {
                self.clear();
                Contour::Broken
            }
        }
    }
}

#[cfg(test)]
impl Contours {
    /// How many sets have an answer.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use gprox_bvh::lbvh;
    use gprox_geometry::scene::torus;

    use super::super::super::layout::Layout;
    use super::super::super::topology::Topology;
    use super::{Contour, Contours, SINGLE};

    /// Every node of a torus's tree: the kept answer is the one a fresh search gives, and a
    /// loop is a closed walk along the node's boundary half-edges, each vertex once.
    #[test]
    fn kept_contours_are_the_boundary_loops() {
        let mesh = torus(1.0, 0.3, 24, 12).unwrap();
        let bvh = lbvh::build(&mesh);
        let topo = Topology::new(mesh.faces(), mesh.vertex_count());
        let layout = Layout::new(&bvh, mesh.faces(), &topo).unwrap();
        let mut kept = Contours::new(mesh.vertex_count());
        let mut loops = 0;
        for node in 0..bvh.nodes.len() as u32 {
            let parts = [(layout.boundary(node), [u32::MAX, 0])];
            let c = kept.get((node, SINGLE), &parts);
            assert_eq!(kept.get((node, SINGLE), &parts), c);
            let mut fresh = Contours::new(mesh.vertex_count());
            let f = fresh.get((node, SINGLE), &parts);
            let Contour::Loop { start, end } = c else {
                assert_eq!(f, c);
                continue;
            };
            let Contour::Loop { start: s, end: e } = f else {
                panic!("node {node}: {f:?} against a kept loop");
            };
            let walk = kept.vertices(start, end);
            assert_eq!(walk, fresh.vertices(s, e));
            let edges = layout.boundary(node);
            assert_eq!(walk.len(), edges.len());
            for (i, &u) in walk.iter().enumerate() {
                let v = walk[(i + 1) % walk.len()];
                assert!(edges.iter().any(|h| h.u == u && h.v == v), "node {node}");
                assert_eq!(walk.iter().filter(|&&w| w == u).count(), 1);
            }
            loops += 1;
        }
        assert!(loops > 10, "{loops} loops");
        assert_eq!(kept.len(), bvh.nodes.len());
    }
}
