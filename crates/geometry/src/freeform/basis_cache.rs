//! Cached B-spline basis values (Kim et al. 2011 §6): the traversal of a Coons BVH evaluates
//! surface points on the fly (corners and mid-points of the cells) at parameters that recur in
//! every query; the non-zero basis values `B_a(u)`, `B_b(v)` at those parameters are computed
//! once and stored per knot vector, so a cached point costs only the tensor sum of the control
//! points. Surfaces with equal knot vectors (e.g. the Bézier patches of the teapot) share one
//! table. A cached point equals [`NurbsSurface::point`] bitwise.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use glam::DVec3;

use super::knots::{basis_derivatives, basis_values, find_span, BASIS_STACK};
use super::NurbsSurface;

/// Hasher for `f64` bit patterns (splitmix64 finaliser).
#[derive(Default, Clone, Copy)]
pub struct ParamHasher(u64);

impl Hasher for ParamHasher {
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 30;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 27;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

type ParamMap = HashMap<u64, u32, BuildHasherDefault<ParamHasher>>;

/// Non-zero basis values of one knot vector at a set of parameters.
#[derive(Clone, Debug, Default)]
pub struct BasisTable {
    degree: usize,
    count: usize,
    knots: Vec<f64>,
    slots: ParamMap,
    spans: Vec<u32>,
    values: Vec<f64>,
}

impl BasisTable {
    /// An empty table for the knot vector `knots` of degree `degree` and `count` control points.
    pub fn new(degree: usize, knots: &[f64], count: usize) -> Self {
        Self {
            degree,
            count,
            knots: knots.to_vec(),
            ..Self::default()
        }
    }

    fn clamp(&self, t: f64) -> f64 {
        let (a, b) = (self.knots[self.degree], self.knots[self.count]);
        if t.is_nan() {
            a
        } else {
            t.clamp(a, b)
        }
    }

    /// Stores the basis values at `t` (clamped to the domain like [`NurbsSurface::point`]).
    pub fn insert(&mut self, t: f64) {
        let t = self.clamp(t);
        if self.slots.contains_key(&t.to_bits()) {
            return;
        }
        let span = find_span(self.count, self.degree, t, &self.knots);
        self.slots.insert(t.to_bits(), self.spans.len() as u32);
        self.spans.push(span as u32);
        if self.degree < BASIS_STACK {
            let mut n = [0.0; BASIS_STACK];
            basis_values(span, t, self.degree, &self.knots, &mut n[..=self.degree]);
            self.values.extend_from_slice(&n[..=self.degree]);
        } else {
            let n = basis_derivatives(span, t, self.degree, 0, &self.knots);
            self.values.extend_from_slice(&n[0]);
        }
    }

    /// `(span, basis values)` at `t` (clamped), if stored.
    #[inline]
    pub fn get(&self, t: f64) -> Option<(usize, &[f64])> {
        let k = *self.slots.get(&self.clamp(t).to_bits())? as usize;
        let w = self.degree + 1;
        Some((self.spans[k] as usize, &self.values[k * w..(k + 1) * w]))
    }

    /// Number of stored parameters.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no parameter is stored.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Whether the table belongs to this knot vector.
    fn matches(&self, degree: usize, knots: &[f64], count: usize) -> bool {
        self.degree == degree && self.count == count && self.knots == knots
    }

    /// Heap bytes: hash slots (capacity × (key + index + control byte)), spans, values, knots.
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * (8 + 4 + 1)
            + self.spans.capacity() * 4
            + self.values.capacity() * 8
            + self.knots.capacity() * 8
    }
}

/// Basis-value tables of a set of surfaces: one per distinct knot vector, shared by every
/// surface (and direction) that uses it.
#[derive(Clone, Debug, Default)]
pub struct BasisCache {
    tables: Vec<BasisTable>,
    /// Per surface: the tables of its u and v knot vectors.
    of_surface: Vec<[u32; 2]>,
}

impl BasisCache {
    /// Empty tables for `surfaces`.
    pub fn new(surfaces: &[NurbsSurface]) -> Self {
        let mut tables: Vec<BasisTable> = Vec::new();
        let of_surface = surfaces
            .iter()
            .map(|s| {
                [0, 1].map(|d| {
                    let (p, k, n) = (s.degree()[d], s.knots()[d], s.count()[d]);
                    let i = match tables.iter().position(|t| t.matches(p, k, n)) {
                        Some(i) => i,
                        None => {
                            tables.push(BasisTable::new(p, k, n));
                            tables.len() - 1
                        }
                    };
                    i as u32
                })
            })
            .collect();
        Self { tables, of_surface }
    }

    /// Stores the basis values of surface `surface` at parameter `t` of direction u
    /// (`along_u`) or v. Out-of-range surfaces are ignored.
    pub fn insert(&mut self, surface: usize, along_u: bool, t: f64) {
        if let Some(ts) = self.of_surface.get(surface) {
            let k = ts[usize::from(!along_u)] as usize;
            self.tables[k].insert(t);
        }
    }

    /// Number of stored `(knot vector, parameter)` entries.
    pub fn len(&self) -> usize {
        self.tables.iter().map(BasisTable::len).sum()
    }

    /// Whether nothing is stored (evaluation then goes straight to [`NurbsSurface::point`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of distinct knot vectors (tables).
    pub fn table_count(&self) -> usize {
        self.tables.len()
    }

    /// Heap bytes of the tables and the surface-to-table map.
    pub fn bytes(&self) -> usize {
        self.tables.iter().map(BasisTable::bytes).sum::<usize>() + self.of_surface.capacity() * 8
    }

    /// An evaluator of surface `index` (`s` must be that surface; if its knot vectors differ
    /// from the cached ones, every evaluation falls back to [`NurbsSurface::point`]).
    pub fn evaluator<'a>(&'a self, s: &'a NurbsSurface, index: usize) -> CachedSurface<'a> {
        let tables = self.of_surface.get(index).and_then(|ts| {
            let [tu, tv] = ts.map(|k| &self.tables[k as usize]);
            let ok = !(tu.is_empty() && tv.is_empty())
                && tu.matches(s.degree()[0], s.knots()[0], s.count()[0])
                && tv.matches(s.degree()[1], s.knots()[1], s.count()[1]);
            ok.then_some([tu, tv])
        });
        CachedSurface { s, tables }
    }
}

/// The non-zero basis values of one direction at one parameter, from a table or computed.
#[derive(Clone, Copy, Debug)]
pub struct ParamBasis {
    /// The parameter (as given).
    t: f64,
    span: usize,
    values: [f64; BASIS_STACK],
    /// False for degrees of at least [`BASIS_STACK`] (points are then evaluated directly).
    stacked: bool,
}

/// A surface with its basis tables: points are evaluated from cached basis values where the
/// parameter is stored, else from basis values computed on the spot with the arithmetic of
/// [`NurbsSurface::point`].
#[derive(Clone, Copy, Debug)]
pub struct CachedSurface<'a> {
    s: &'a NurbsSurface,
    tables: Option<[&'a BasisTable; 2]>,
}

impl CachedSurface<'_> {
    /// Basis values at parameter `t` of direction u (`along_u`) or v: looked up, or computed.
    #[inline]
    pub fn basis(&self, along_u: bool, t: f64) -> ParamBasis {
        let d = usize::from(!along_u);
        let p = self.s.degree()[d];
        let mut out = ParamBasis {
            t,
            span: 0,
            values: [0.0; BASIS_STACK],
            stacked: p < BASIS_STACK,
        };
        if !out.stacked {
            return out;
        }
        if let Some(tables) = self.tables {
            if let Some((span, v)) = tables[d].get(t) {
                out.span = span;
                out.values[..=p].copy_from_slice(v);
                return out;
            }
        }
        let tc = if along_u {
            self.s.clamp_param(t, self.s.domain().v0).0
        } else {
            self.s.clamp_param(self.s.domain().u0, t).1
        };
        let knots = self.s.knots()[d];
        out.span = find_span(self.s.count()[d], p, tc, knots);
        basis_values(out.span, tc, p, knots, &mut out.values[..=p]);
        out
    }

    /// The point from basis values of u (`bu`) and v (`bv`), bitwise equal to
    /// `NurbsSurface::point(u, v)`.
    #[inline]
    pub fn point_from(&self, bu: &ParamBasis, bv: &ParamBasis) -> DVec3 {
        if bu.stacked && bv.stacked {
            let [p, q] = self.s.degree();
            self.s
                .point_from_basis(bu.span, &bu.values[..=p], bv.span, &bv.values[..=q])
        } else {
            self.s.point(bu.t, bv.t)
        }
    }

    /// The point at `(u, v)`, bitwise equal to `NurbsSurface::point(u, v)`.
    ///
    /// ```
    /// use gprox_geometry::freeform::basis_cache::BasisCache;
    /// let teapot = gprox_geometry::freeform::teapot();
    /// let mut cache = BasisCache::new(&teapot);
    /// cache.insert(3, true, 0.25);
    /// cache.insert(3, false, 0.5);
    /// let p = cache.evaluator(&teapot[3], 3).point(0.25, 0.5);
    /// assert_eq!(p, teapot[3].point(0.25, 0.5));
    /// ```
    #[inline]
    pub fn point(&self, u: f64, v: f64) -> DVec3 {
        self.point_from(&self.basis(true, u), &self.basis(false, v))
    }

    /// Whether basis tables are in use (a non-empty cache matching this surface).
    pub fn is_cached(&self) -> bool {
        self.tables.is_some()
    }

    /// The surface.
    pub fn surface(&self) -> &NurbsSurface {
        self.s
    }
}
