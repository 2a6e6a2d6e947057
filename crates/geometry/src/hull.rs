//! The exact convex hull of a mesh's vertices, and certified support points on it.
//!
//! [`ConvexHull::of_mesh`] runs the incremental (quickhull-style) construction with every
//! visibility decision taken by the exact [`orient3d`] predicate, so the result is a convex
//! polytope that contains every vertex of the mesh's faces exactly — no tolerance, no
//! dropped point. Facets are triangles (coplanar facets come triangulated); points on a facet
//! are not hull vertices.
//!
//! [`ConvexHull::support`] climbs the hull's edge graph to a vertex farthest along a direction.
//! On a convex polytope a vertex none of whose edges ascends is a global maximum, so the climb
//! ends at one; [`Support::certified`] says whether the final comparisons were decided beyond
//! rounding (a plateau of edges nearly orthogonal to the direction is explored as a whole).
//! `gprox_query::collide::separating_plane` uses it to prove two posed meshes apart.

use std::collections::{HashMap, HashSet};

use glam::{DVec3, Vec3};

use crate::predicates::orient3d;
use crate::TriMesh;

/// A convex polytope over a mesh's vertices: its vertices (mesh vertex ids and positions) and
/// each vertex's neighbours along hull edges.
#[derive(Clone, Debug)]
pub struct ConvexHull {
    /// Mesh vertex id of each hull vertex.
    ids: Vec<u32>,
    /// Position of each hull vertex (the mesh's, exactly, in f64).
    points: Vec<DVec3>,
    /// Neighbours of hull vertex `i`: `steps[start[i]..start[i + 1]]`, each with its position
    /// and the bounds of its own list inline ([`Step`]), so a climb step reads one contiguous
    /// record and nothing that depends on it.
    start: Vec<u32>,
    steps: Vec<Step>,
    /// Facets, as hull vertex indices, counter-clockwise seen from outside.
    facets: Vec<[u32; 3]>,
    /// Where climbs start: for each cell of a cube map of directions ([`cell`]), the vertex
    /// farthest along the cell's centre direction, and its position (so that
    /// [`ConvexHull::seed_point`] reads one small table).
    seeds: Vec<(u32, [f32; 3])>,
    /// Largest coordinate magnitude of a hull vertex.
    reach: f64,
    /// Mean of the hull vertices (inside the hull).
    centroid: DVec3,
}

/// A support point found by [`ConvexHull::support`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Support {
    /// The hull vertex reached (an index into [`ConvexHull::points`]).
    pub vertex: u32,
    /// An upper bound of `dir · p` over the hull when `certified`; else the value at `vertex`.
    pub value: f64,
    /// Whether `value` is a proven upper bound (every comparison decided beyond rounding).
    pub certified: bool,
}

/// Cells along each edge of a cube-map face of [`ConvexHull::seed`].
const CUBE: usize = 16;

/// The cube-map cell of direction `d`: the face of its largest coordinate (axis and sign),
/// then the other two coordinates over it, in `CUBE` bins each. Zero or non-finite: cell 0.
fn cell(d: DVec3) -> usize {
    let a = d.abs();
    let axis = if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    };
    let m = a[axis];
    if !(m > 0.0 && m.is_finite()) {
        return 0;
    }
    let bin = |x: f64| (((x / m + 1.0) * 0.5 * CUBE as f64) as usize).min(CUBE - 1);
    let face = 2 * axis + usize::from(d[axis] < 0.0);
    (face * CUBE + bin(d[(axis + 1) % 3])) * CUBE + bin(d[(axis + 2) % 3])
}

/// The direction at the centre of cube-map cell `c` (inverse of [`cell`]).
fn cell_centre(c: usize) -> DVec3 {
    let (face, u, v) = (c / (CUBE * CUBE), c / CUBE % CUBE, c % CUBE);
    let (axis, sign) = (face / 2, if face % 2 == 0 { 1.0 } else { -1.0 });
    let at = |i: usize| (i as f64 + 0.5) / CUBE as f64 * 2.0 - 1.0;
    let mut d = DVec3::ZERO;
    d[axis] = sign;
    d[(axis + 1) % 3] = at(u);
    d[(axis + 2) % 3] = at(v);
    d
}

/// Largest plateau of near-ties explored before a support gives up certifying.
const PLATEAU: usize = 64;

/// Relative rounding bound of a three-term dot product of exact operands (a generous `3ε`).
const DOT_ERR: f64 = 8.0 * f64::EPSILON;

impl ConvexHull {
    /// The hull of the vertices of `mesh`'s faces, or `None` when they span no volume
    /// (fewer than four points, or all coplanar).
    ///
    /// ```
    /// use gprox_geometry::{glam::{DVec3, Vec3}, hull::ConvexHull, TriMesh};
    /// let tet = TriMesh::new(
    ///     vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z, Vec3::splat(0.1)],
    ///     vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3], [0, 1, 4]],
    /// )
    /// .unwrap();
    /// let hull = ConvexHull::of_mesh(&tet).unwrap();
    /// assert_eq!(hull.points().len(), 4); // the inner vertex is not on the hull
    /// let s = hull.support(DVec3::new(1.0, 0.5, 0.2));
    /// assert!(s.certified && hull.ids()[s.vertex as usize] == 1);
    /// ```
    pub fn of_mesh(mesh: &TriMesh) -> Option<Self> {
        let mut used = vec![false; mesh.vertex_count()];
        for f in mesh.faces() {
            for &v in f {
                used[v as usize] = true;
            }
        }
        let mut seen: HashSet<[u32; 3]> = HashSet::new();
        let mut ids = Vec::new();
        for (v, p) in mesh.positions().iter().enumerate() {
            if used[v] && seen.insert(p.to_array().map(f32::to_bits)) {
                ids.push(v as u32);
            }
        }
        let pts: Vec<DVec3> = ids
            .iter()
            .map(|&v| mesh.positions()[v as usize].as_dvec3())
            .collect();
        let facets = Builder::new(&pts)?.run()?;
        Some(Self::from_facets(&ids, &pts, facets))
    }

    /// The hull from its facets over `pts`: the facets' vertices renumbered, and their edges.
    fn from_facets(ids: &[u32], pts: &[DVec3], facets: Vec<[u32; 3]>) -> Self {
        let mut index = vec![u32::MAX; pts.len()];
        let (mut hull_ids, mut points) = (Vec::new(), Vec::new());
        let facets: Vec<[u32; 3]> = facets
            .into_iter()
            .map(|f| {
                f.map(|v| {
                    if index[v as usize] == u32::MAX {
                        index[v as usize] = points.len() as u32;
                        points.push(pts[v as usize]);
                        hull_ids.push(ids[v as usize]);
                    }
                    index[v as usize]
                })
            })
            .collect();
        // Each edge appears as `u → v` in exactly one facet: its directed edges name every
        // neighbour once.
        let mut degree = vec![0u32; points.len() + 1];
        for f in &facets {
            for &v in f {
                degree[v as usize + 1] += 1;
            }
        }
        for i in 1..degree.len() {
            degree[i] += degree[i - 1];
        }
        let start = degree.clone();
        let mut fill = degree;
        let mut steps = vec![
            Step {
                p: [0.0; 3],
                id: 0,
                first: 0,
                end: 0,
            };
            facets.len() * 3
        ];
        for f in &facets {
            for k in 0..3 {
                let (u, v) = (f[k] as usize, f[(k + 1) % 3]);
                steps[fill[u] as usize] = Step {
                    p: points[v as usize].as_vec3().to_array(),
                    id: v,
                    first: start[v as usize],
                    end: start[v as usize + 1],
                };
                fill[u] += 1;
            }
        }
        let reach = points
            .iter()
            .map(|p| p.abs().max_element())
            .fold(0.0, f64::max);
        let centroid = points.iter().sum::<DVec3>() / points.len().max(1) as f64;
        let mut hull = Self {
            ids: hull_ids,
            points,
            start,
            steps,
            facets,
            seeds: Vec::new(),
            reach,
            centroid,
        };
        let mut from = 0;
        for c in 0..6 * CUBE * CUBE {
            from = hull.climb(cell_centre(c), from);
            let p = hull.points[from as usize].as_vec3().to_array();
            hull.seeds.push((from, p));
        }
        hull
    }

    /// Mesh vertex id of each hull vertex.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Position of each hull vertex.
    pub fn points(&self) -> &[DVec3] {
        &self.points
    }

    /// The facets, as indices into [`Self::points`], counter-clockwise seen from outside.
    pub fn facets(&self) -> &[[u32; 3]] {
        &self.facets
    }

    /// Largest coordinate magnitude of a hull vertex (of any vertex of the mesh).
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// The mean of the hull's vertices, a point inside the hull.
    pub fn centroid(&self) -> DVec3 {
        self.centroid
    }

    /// Neighbours of hull vertex `v` along hull edges.
    pub fn neighbours(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        self.steps[self.start[v as usize] as usize..self.start[v as usize + 1] as usize]
            .iter()
            .map(|s| s.id)
    }

    /// A hull vertex farthest along `dir`, climbing from the stored vertex of the cube-map cell
    /// of `dir` ([`Self::seed`]). The value is an upper bound of `dir · p` over the hull when
    /// [`Support::certified`].
    pub fn support(&self, dir: DVec3) -> Support {
        self.support_from(dir, self.seed(dir))
    }

    /// Where a climb along `dir` starts: the vertex farthest along the centre of `dir`'s cell
    /// in a cube map of directions (a few steps from the answer).
    pub fn seed(&self, dir: DVec3) -> u32 {
        self.seeds.get(cell(dir)).map_or(0, |s| s.0)
    }

    /// An approximate support in one table read: the vertex farthest along the centre of
    /// `dir`'s cube-map cell, and its position. Its height along `dir` falls short of the
    /// maximum by at most the hull's size times the square of the cell's angular size (about
    /// 3·10⁻³ of the size); [`Self::support`] climbs on from it to the exact one.
    pub fn seed_point(&self, dir: DVec3) -> (u32, DVec3) {
        self.seeds.get(cell(dir)).map_or((0, self.points[0]), |s| {
            (s.0, Vec3::from_array(s.1).as_dvec3())
        })
    }

    /// [`Self::support`] climbing from vertex `from` (any index; the last answer for a nearby
    /// direction is fastest).
    pub fn support_from(&self, dir: DVec3, from: u32) -> Support {
        let top = self.climb(dir, from);
        self.certify(dir, top)
    }

    /// The end of the steepest computed ascent along `dir` from vertex `from`: a vertex
    /// farthest along `dir` up to rounding, not certified (see [`Self::support_from`]).
    pub fn climb(&self, dir: DVec3, from: u32) -> u32 {
        let mut v = if (from as usize) < self.points.len() {
            from
        } else {
            0
        };
        let mut height = dir.dot(self.points[v as usize]);
        let (mut first, mut end) = (self.start[v as usize], self.start[v as usize + 1]);
        // Climb by the steepest computed ascent (each step strictly increases the computed
        // height, so it ends).
        loop {
            let mut best: Option<&Step> = None;
            for s in &self.steps[first as usize..end as usize] {
                let h = dir.dot(Vec3::from_array(s.p).as_dvec3());
                if h > height {
                    height = h;
                    best = Some(s);
                }
            }
            match best {
                Some(s) => (v, first, end) = (s.id, s.first, s.end),
                None => return v,
            }
        }
    }

    /// Certifies that `top` is a maximum of `dir` up to the near-ties around it: every vertex
    /// joined to `top` by edges whose rise is within rounding (the plateau) is explored, and
    /// every other edge leaving the plateau must descend beyond rounding. Then the plateau's
    /// exact maximum is a local, hence global, maximum of the polytope, and the largest
    /// computed value over the plateau plus its rounding bounds it.
    fn certify(&self, dir: DVec3, top: u32) -> Support {
        let value_of = |v: u32| dir.dot(self.points[v as usize]);
        let value = value_of(top);
        let (mut plateau, mut len) = ([0u32; PLATEAU], 1);
        plateau[0] = top;
        let mut next = 0;
        let mut certified = true;
        let mut bound = f64::NEG_INFINITY;
        while next < len {
            let v = plateau[next];
            next += 1;
            let pv = self.points[v as usize];
            let val = value_of(v);
            bound = bound.max(val + DOT_ERR * dir.abs().dot(pv.abs()));
            for u in self.neighbours(v) {
                // The edge vector is exact (differences of f32 coordinates).
                let e = self.points[u as usize] - pv;
                let rise = dir.dot(e);
                let err = DOT_ERR * dir.abs().dot(e.abs());
                if rise < -err {
                    continue;
                }
                if plateau[..len].contains(&u) {
                    continue;
                }
                if rise > err || len == PLATEAU {
                    certified = false;
                    break;
                }
                plateau[len] = u;
                len += 1;
            }
            if !certified {
                break;
            }
        }
        Support {
            vertex: top,
            value: if certified { bound } else { value },
            certified: certified && bound.is_finite(),
        }
    }
}

/// A neighbour in a climb's adjacency record: its position (the mesh's f32 coordinates), its
/// hull vertex index and the bounds of its own record.
#[derive(Clone, Copy, Debug)]
struct Step {
    p: [f32; 3],
    id: u32,
    first: u32,
    end: u32,
}

/// One facet under construction: its vertices (outward counter-clockwise), the facet across
/// each edge `v[k] → v[k + 1]`, and the points strictly above it not yet on the hull.
struct Facet {
    v: [u32; 3],
    adj: [u32; 3],
    alive: bool,
    outside: Vec<u32>,
}

/// The incremental construction over `pts`.
struct Builder<'p> {
    pts: &'p [DVec3],
    facets: Vec<Facet>,
}

impl<'p> Builder<'p> {
    /// The first tetrahedron and the assignment of every other point to a facet it is above.
    fn new(pts: &'p [DVec3]) -> Option<Self> {
        if pts.len() < 4 {
            return None;
        }
        let p = |i: usize| pts[i];
        let i0 = (0..pts.len()).min_by(|&a, &b| p(a).x.total_cmp(&p(b).x))?;
        let i1 = (0..pts.len()).max_by(|&a, &b| {
            p(a).distance_squared(p(i0))
                .total_cmp(&p(b).distance_squared(p(i0)))
        })?;
        let i2 = (0..pts.len()).max_by(|&a, &b| {
            let d = |i: usize| (p(i1) - p(i0)).cross(p(i) - p(i0)).length_squared();
            d(a).total_cmp(&d(b))
        })?;
        let i3 = (0..pts.len()).max_by(|&a, &b| {
            let d = |i: usize| orient3d(p(i0), p(i1), p(i2), p(i)).abs();
            d(a).total_cmp(&d(b))
        })?;
        let o = orient3d(p(i0), p(i1), p(i2), p(i3));
        if o == 0.0 {
            // Every point is coplanar with the first three (the farthest one is), or those three
            // are collinear: no volume either way.
            return None;
        }
        // Orient the base so that the apex is below it.
        let (a, b, c, d) = if o > 0.0 {
            (i0, i1, i2, i3)
        } else {
            (i0, i2, i1, i3)
        };
        let [a, b, c, d] = [a, b, c, d].map(|i| i as u32);
        // Facets 0: abc, 1: adb... each counter-clockwise from outside, adjacency by hand.
        let tet = [[a, b, c], [a, d, b], [b, d, c], [c, d, a]];
        let mut facets: Vec<Facet> = tet
            .iter()
            .map(|&v| Facet {
                v,
                adj: [u32::MAX; 3],
                alive: true,
                outside: Vec::new(),
            })
            .collect();
        link(&mut facets, &[0, 1, 2, 3]);
        let mut builder = Self { pts, facets };
        let others: Vec<u32> = (0..pts.len() as u32)
            .filter(|i| ![a, b, c, d].contains(i))
            .collect();
        builder.assign(&others, &[0, 1, 2, 3]);
        Some(builder)
    }

    /// Gives each point of `points` to the first facet of `to` it lies strictly above (the
    /// others are inside or on the hull so far, and never will be hull vertices).
    fn assign(&mut self, points: &[u32], to: &[u32]) {
        for &q in points {
            let pq = self.pts[q as usize];
            for &f in to {
                let [a, b, c] = self.facets[f as usize].v.map(|v| self.pts[v as usize]);
                if orient3d(a, b, c, pq) < 0.0 {
                    self.facets[f as usize].outside.push(q);
                    break;
                }
            }
        }
    }

    /// Adds points until no facet has one above it; the live facets.
    fn run(mut self) -> Option<Vec<[u32; 3]>> {
        let mut f = 0;
        // Every round puts one more point on the hull: a bound against a broken invariant.
        let mut rounds = self.pts.len() + 1;
        while f < self.facets.len() {
            if !self.facets[f].alive || self.facets[f].outside.is_empty() {
                f += 1;
                continue;
            }
            rounds = rounds.checked_sub(1)?;
            self.add(f)?;
        }
        Some(
            self.facets
                .iter()
                .filter(|f| f.alive)
                .map(|f| f.v)
                .collect(),
        )
    }

    /// Adds the point of facet `f`'s outside set farthest from its plane: removes the facets
    /// it sees, fans new facets from it to the horizon, and hands their points on.
    fn add(&mut self, f: usize) -> Option<()> {
        let [a, b, c] = self.facets[f].v.map(|v| self.pts[v as usize]);
        let n = (b - a).cross(c - a);
        let apex = *self.facets[f].outside.iter().max_by(|&&x, &&y| {
            n.dot(self.pts[x as usize] - a)
                .total_cmp(&n.dot(self.pts[y as usize] - a))
        })?;
        let pa = self.pts[apex as usize];
        // The facets the apex sees (strictly above), by a walk from `f`; the horizon edges
        // `u → v` of seen facets whose neighbour it does not see.
        let mut seen = vec![f as u32];
        self.facets[f].alive = false;
        let mut horizon: Vec<(u32, u32, u32)> = Vec::new();
        let mut i = 0;
        while i < seen.len() {
            let g = seen[i] as usize;
            i += 1;
            for k in 0..3 {
                let h = self.facets[g].adj[k];
                let hf = self.facets.get(h as usize)?;
                if !hf.alive {
                    // Seen already (dead facets are only those of this round here).
                    continue;
                }
                let [x, y, z] = hf.v.map(|v| self.pts[v as usize]);
                if orient3d(x, y, z, pa) < 0.0 {
                    self.facets[h as usize].alive = false;
                    seen.push(h);
                } else {
                    let v = self.facets[g].v;
                    horizon.push((v[k], v[(k + 1) % 3], h));
                }
            }
        }
        // One new facet `u, v, apex` per horizon edge; its edge `u → v` faces the old
        // neighbour, the other two face the new facets that start at `v` and end at `u`.
        let first = self.facets.len() as u32;
        let mut by_start: HashMap<u32, u32> = HashMap::with_capacity(horizon.len());
        for (j, &(u, v, h)) in horizon.iter().enumerate() {
            let id = first + j as u32;
            if by_start.insert(u, id).is_some() {
                return None;
            }
            let back = self.facets[h as usize]
                .v
                .iter()
                .position(|&w| w == v)
                .filter(|&k| self.facets[h as usize].v[(k + 1) % 3] == u)?;
            self.facets[h as usize].adj[back] = id;
            self.facets.push(Facet {
                v: [u, v, apex],
                adj: [h, u32::MAX, u32::MAX],
                alive: true,
                outside: Vec::new(),
            });
        }
        for j in 0..horizon.len() {
            let id = first as usize + j;
            let v = self.facets[id].v[1];
            let after = *by_start.get(&v)?;
            self.facets[id].adj[1] = after;
            self.facets[after as usize].adj[2] = id as u32;
        }
        if self.facets[first as usize..]
            .iter()
            .any(|f| f.adj.contains(&u32::MAX))
        {
            return None;
        }
        let new: Vec<u32> = (first..self.facets.len() as u32).collect();
        let mut points = Vec::new();
        for &g in &seen {
            points.append(&mut self.facets[g as usize].outside);
        }
        points.retain(|&q| q != apex);
        self.assign(&points, &new);
        Some(())
    }
}

/// Links the facets `ids` to each other across their shared edges (the first tetrahedron).
fn link(facets: &mut [Facet], ids: &[usize]) {
    for &i in ids {
        for k in 0..3 {
            let (u, v) = (facets[i].v[k], facets[i].v[(k + 1) % 3]);
            for &j in ids {
                let w = facets[j].v;
                if (0..3).any(|m| w[m] == v && w[(m + 1) % 3] == u) {
                    facets[i].adj[k] = j as u32;
                }
            }
        }
    }
}
