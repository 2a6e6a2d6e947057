//! Cells of the dual Coons BVH and their bounds, generated on the fly: surface-level nodes are
//! bounded by a sphere around the surface mid-point and by the offset of the corner
//! tetrahedron; Coons-level cells by `O_{ε + ε_u + ε_v}(V)` with `V` the tetrahedron of the
//! Coons patch corners (paper §3–4).

use glam::DVec3;
use gprox_geometry::freeform::basis_cache::CachedSurface;
use gprox_geometry::freeform::{NurbsSurface, ParamRect};

use super::build::CoonsBvh;
use super::quantise::dequantise;

/// Where a cell sits in the dual hierarchy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellKind {
    /// A surface-level node (index into the BVH's node arrays).
    Surface {
        /// Node index.
        node: u32,
    },
    /// A sub-rectangle of a Coons leaf at ε-list levels `(ku, kv)`.
    Coons {
        /// The leaf's parameter rectangle (the Coons patch domain).
        leaf: ParamRect,
        /// The leaf's ε-list offset.
        eps_offset: u32,
        /// Lengths of the leaf's u- and v-lists.
        lens: [u8; 2],
        /// Level in the u-list.
        ku: u8,
        /// Level in the v-list.
        kv: u8,
    },
}

/// One cell: a parameter rectangle of one surface, with its place in the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Surface index.
    pub surface: u32,
    /// Parameter rectangle covered.
    pub rect: ParamRect,
    /// Level of the hierarchy.
    pub kind: CellKind,
}

/// Bound of a cell in model coordinates: every surface point over `rect` lies within `offset`
/// of the tetrahedron `corners` (and, for surface-level cells, within `sphere`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellBound {
    /// Tetrahedron vertices, order 00, 10, 01, 11 (parameter corners in `params`).
    pub corners: [DVec3; 4],
    /// Parameters `(u, v)` of the corners.
    pub params: [(f64, f64); 4],
    /// Offset radius around the tetrahedron.
    pub offset: f64,
    /// Optional bounding sphere `(centre, radius)`.
    pub sphere: Option<(DVec3, f64)>,
}

/// The bilinearly blended Coons patch of the leaf `leaf` of `s` at normalised `(a, b)`.
pub fn coons_point(s: &NurbsSurface, leaf: &ParamRect, a: f64, b: f64) -> DVec3 {
    let u = leaf.u0 + a * (leaf.u1 - leaf.u0);
    let v = leaf.v0 + b * (leaf.v1 - leaf.v0);
    let c00 = s.point(leaf.u0, leaf.v0);
    let c10 = s.point(leaf.u1, leaf.v0);
    let c01 = s.point(leaf.u0, leaf.v1);
    let c11 = s.point(leaf.u1, leaf.v1);
    let ruled_v = s.point(leaf.u0, v) * (1.0 - a) + s.point(leaf.u1, v) * a;
    let ruled_u = s.point(u, leaf.v0) * (1.0 - b) + s.point(u, leaf.v1) * b;
    let bil = (c00 * (1.0 - a) + c10 * a) * (1.0 - b) + (c01 * (1.0 - a) + c11 * a) * b;
    ruled_v + ruled_u - bil
}

/// The Coons patch of the leaf `leaf` at the corners of its sub-rectangle `rect` (order 00,
/// 10, 01, 11), from 12 surface points: the 4 leaf corners and the 8 points where the
/// iso-lines through `rect`'s corners meet the leaf boundary (the paper's boundary-curve
/// points). Evaluated through `e`, i.e. with cached basis values where stored.
pub fn coons_corners(e: &CachedSurface, leaf: &ParamRect, rect: &ParamRect) -> [DVec3; 4] {
    // Basis values of the 4 distinct u and 4 distinct v parameters, each found once.
    let [lu0, lu1, ru0, ru1] = [leaf.u0, leaf.u1, rect.u0, rect.u1].map(|u| e.basis(true, u));
    let [lv0, lv1, rv0, rv1] = [leaf.v0, leaf.v1, rect.v0, rect.v1].map(|v| e.basis(false, v));
    let c = [
        e.point_from(&lu0, &lv0),
        e.point_from(&lu1, &lv0),
        e.point_from(&lu0, &lv1),
        e.point_from(&lu1, &lv1),
    ];
    let (bu, bv) = ([ru0, ru1], [rv0, rv1]);
    let left = bv.map(|v| e.point_from(&lu0, &v));
    let right = bv.map(|v| e.point_from(&lu1, &v));
    let bottom = bu.map(|u| e.point_from(&u, &lv0));
    let top = bu.map(|u| e.point_from(&u, &lv1));
    let (us, vs) = ([rect.u0, rect.u1], [rect.v0, rect.v1]);
    let (wu, wv) = (leaf.u1 - leaf.u0, leaf.v1 - leaf.v0);
    [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(i, j): (usize, usize)| {
        let a = (us[i] - leaf.u0) / wu;
        let b = (vs[j] - leaf.v0) / wv;
        let ruled_v = left[j] * (1.0 - a) + right[j] * a;
        let ruled_u = bottom[i] * (1.0 - b) + top[i] * b;
        let bil = (c[0] * (1.0 - a) + c[1] * a) * (1.0 - b) + (c[2] * (1.0 - a) + c[3] * a) * b;
        ruled_v + ruled_u - bil
    })
}

impl CoonsBvh {
    /// The root cell of every surface.
    pub fn root_cells(&self, surfaces: &[NurbsSurface]) -> Vec<Cell> {
        surfaces
            .iter()
            .take(self.surface_count)
            .enumerate()
            .map(|(i, s)| Cell {
                surface: i as u32,
                rect: s.domain(),
                kind: CellKind::Surface { node: i as u32 },
            })
            .collect()
    }

    fn eps_at(&self, offset: u32, lens: [u8; 2], u_dir: bool, k: u8) -> Option<f64> {
        let o = offset as usize;
        let (start, len) = if u_dir {
            (o, lens[0])
        } else {
            (o + usize::from(lens[0]), lens[1])
        };
        (k < len).then(|| dequantise(self.eps[start + usize::from(k)], self.unit))
    }

    /// The two ε-lists `(u, v)` of leaf node `node`, dequantised.
    pub fn eps_lists(&self, node: usize) -> (Vec<f64>, Vec<f64>) {
        let (o, lu, lv) = self.leaf_eps(node);
        let l = [lu, lv];
        (
            (0..lu).filter_map(|k| self.eps_at(o, l, true, k)).collect(),
            (0..lv)
                .filter_map(|k| self.eps_at(o, l, false, k))
                .collect(),
        )
    }

    /// Coons children of a Coons-level cell: split along the direction with the larger current
    /// ε that still has a deeper level; `None` when both lists are exhausted.
    fn coons_children(
        &self,
        c: &Cell,
        leaf: ParamRect,
        eps_offset: u32,
        lens: [u8; 2],
        ku: u8,
        kv: u8,
    ) -> Option<[Cell; 2]> {
        let (cu, cv) = (
            self.eps_at(eps_offset, lens, true, ku)?,
            self.eps_at(eps_offset, lens, false, kv)?,
        );
        let can_u = ku + 1 < lens[0];
        let can_v = kv + 1 < lens[1];
        let along_u = match (can_u, can_v) {
            (false, false) => return None,
            (true, false) => true,
            (false, true) => false,
            (true, true) => cu >= cv,
        };
        let halves = c.rect.halves(along_u);
        let (nu, nv) = if along_u { (ku + 1, kv) } else { (ku, kv + 1) };
        Some(halves.map(|rect| Cell {
            surface: c.surface,
            rect,
            kind: CellKind::Coons {
                leaf,
                eps_offset,
                lens,
                ku: nu,
                kv: nv,
            },
        }))
    }

    /// The two children of a cell, or `None` at the finest level (both ε-lists exhausted) and
    /// at exact leaves ([`CoonsBvh::is_exact_leaf`]).
    /// `surfaces` are the surfaces the BVH was built from (split parameters follow their knots).
    pub fn children(&self, surfaces: &[NurbsSurface], c: &Cell) -> Option<[Cell; 2]> {
        match c.kind {
            CellKind::Surface { node } => {
                let i = node as usize;
                if !self.is_internal(i) {
                    let (o, lu, lv) = self.leaf_eps(i);
                    return self.coons_children(c, c.rect, o, [lu, lv], 0, 0);
                }
                let first = self.first_child(i) as u32;
                let along_u = self.splits_u(i);
                let t = surfaces[c.surface as usize].split_parameter(&c.rect, along_u);
                let halves = c.rect.split_at(along_u, t);
                Some([0, 1].map(|k| Cell {
                    surface: c.surface,
                    rect: halves[k],
                    kind: CellKind::Surface {
                        node: first + k as u32,
                    },
                }))
            }
            CellKind::Coons {
                leaf,
                eps_offset,
                lens,
                ku,
                kv,
            } => self.coons_children(c, leaf, eps_offset, lens, ku, kv),
        }
    }

    /// Whether the cell is a Coons-level cell or a Coons leaf (not an exact leaf).
    pub fn is_coons_level(&self, c: &Cell) -> bool {
        match c.kind {
            CellKind::Surface { node } => {
                !self.is_internal(node as usize) && !self.is_exact_leaf(node as usize)
            }
            CellKind::Coons { .. } => true,
        }
    }

    /// Bound of a cell in model coordinates (surfaces evaluated on the fly, with the cached
    /// basis values of [`CoonsBvh::basis`] where stored).
    pub fn bound(&self, surfaces: &[NurbsSurface], c: &Cell) -> CellBound {
        let s = &surfaces[c.surface as usize];
        let e = self.basis.evaluator(s, c.surface as usize);
        let params = c.rect.corners();
        match c.kind {
            CellKind::Surface { node } => {
                let (um, vm) = c.rect.mid();
                let i = node as usize;
                let r = &c.rect;
                let [u0, u1, bum] = [r.u0, r.u1, um].map(|u| e.basis(true, u));
                let [v0, v1, bvm] = [r.v0, r.v1, vm].map(|v| e.basis(false, v));
                CellBound {
                    corners: [
                        e.point_from(&u0, &v0),
                        e.point_from(&u1, &v0),
                        e.point_from(&u0, &v1),
                        e.point_from(&u1, &v1),
                    ],
                    params,
                    offset: self.node_deviation(i),
                    sphere: Some((e.point_from(&bum, &bvm), self.node_radius(i))),
                }
            }
            CellKind::Coons {
                leaf,
                eps_offset,
                lens,
                ku,
                kv,
            } => {
                let eu = self.eps_at(eps_offset, lens, true, ku).unwrap_or(self.unit);
                let ev = self
                    .eps_at(eps_offset, lens, false, kv)
                    .unwrap_or(self.unit);
                CellBound {
                    corners: coons_corners(&e, &leaf, &c.rect),
                    params,
                    offset: self.epsilon + eu + ev,
                    sphere: None,
                }
            }
        }
    }
}
