//! Tessellation of freeform surfaces into triangle meshes within a chordal tolerance.
//!
//! Each surface gets a tensor-product grid that is uniform inside every Bézier piece (so the
//! grid is conforming within the surface). Every grid cell is certified: its two triangles are
//! within `tolerance` of the surface at corresponding parameters, using
//! `|S - T| <= |S - L| + |L - T|` with `L` the bilinear surface of the cell corners
//! ([`NurbsSurface::bilinear_deviation`]) and `|L - T| <= |p00 + p11 - p01 - p10| / 4` (Kim et al.
//! 2011 §5 remark). Cells that fail double the resolution of their piece's column or row.

#![allow(clippy::needless_range_loop)] // index loops mirror The NURBS Book

use glam::{DVec3, Vec3};

use super::{apply_pose, FreeformError, FreeformModel, NurbsSurface, ParamRect};
use crate::TriMesh;

/// Finest per-piece resolution before tessellation gives up.
const MAX_CELLS_PER_PIECE_SIDE: usize = 1 << 14;

/// Chordal error bound of the two triangles (diagonal 00–11) of the sub-surface `cell`.
pub fn cell_error(cell: &NurbsSurface) -> f64 {
    let c = cell.corner_points();
    cell.bilinear_deviation() + 0.25 * (c[0] + c[3] - c[1] - c[2]).length()
}

fn uniform_breaks(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|k| {
            if k == n {
                b
            } else {
                a + (b - a) * k as f64 / n as f64
            }
        })
        .collect()
}

/// Parameter grid lines `(u, v)` of one surface meeting `tolerance`.
pub fn surface_grid(
    s: &NurbsSurface,
    tolerance: f64,
) -> Result<(Vec<f64>, Vec<f64>), FreeformError> {
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(FreeformError::Tolerance {
            tolerance,
            cells: MAX_CELLS_PER_PIECE_SIDE,
        });
    }
    let pieces = s.bezier_pieces();
    let mut ucols: Vec<(f64, f64)> = pieces.iter().map(|(r, _)| (r.u0, r.u1)).collect();
    ucols.dedup();
    ucols.sort_by(|a, b| a.0.total_cmp(&b.0));
    ucols.dedup();
    let mut vrows: Vec<(f64, f64)> = pieces.iter().map(|(r, _)| (r.v0, r.v1)).collect();
    vrows.sort_by(|a, b| a.0.total_cmp(&b.0));
    vrows.dedup();
    let col = |r: &ParamRect| ucols.iter().position(|c| c.0 == r.u0).unwrap_or(0);
    let row = |r: &ParamRect| vrows.iter().position(|c| c.0 == r.v0).unwrap_or(0);
    // Initial guess from the control net's second differences (heuristic; verified below).
    let mut nu = vec![1usize; ucols.len()];
    let mut nv = vec![1usize; vrows.len()];
    for (r, p) in &pieces {
        let [du, dv] = p.net_second_differences();
        let [pu, pv] = p.degree();
        let gu = ((pu * pu) as f64 * du / (8.0 * tolerance)).sqrt().ceil() as usize;
        let gv = ((pv * pv) as f64 * dv / (8.0 * tolerance)).sqrt().ceil() as usize;
        let (a, b) = (col(r), row(r));
        nu[a] = nu[a].max(gu.clamp(1, 1 << 10));
        nv[b] = nv[b].max(gv.clamp(1, 1 << 10));
    }
    loop {
        let mut grow_u = vec![false; nu.len()];
        let mut grow_v = vec![false; nv.len()];
        for (r, p) in &pieces {
            let (a, b) = (col(r), row(r));
            if grow_u[a] && grow_v[b] {
                continue;
            }
            let us = uniform_breaks(r.u0, r.u1, nu[a]);
            let vs = uniform_breaks(r.v0, r.v1, nv[b]);
            'cells: for wu in us.windows(2) {
                for wv in vs.windows(2) {
                    let cell = p.restrict(&ParamRect::new(wu[0], wu[1], wv[0], wv[1]));
                    if cell_error(&cell) > tolerance {
                        let c = cell.corner_points();
                        let [du, dv] = cell.net_second_differences();
                        let lu = c[1].distance(c[0]) + c[3].distance(c[2]) + 4.0 * du;
                        let lv = c[2].distance(c[0]) + c[3].distance(c[1]) + 4.0 * dv;
                        if lu >= lv {
                            grow_u[a] = true;
                        } else {
                            grow_v[b] = true;
                        }
                        if grow_u[a] && grow_v[b] {
                            break 'cells;
                        }
                    }
                }
            }
        }
        if !grow_u.contains(&true) && !grow_v.contains(&true) {
            break;
        }
        for (n, g) in nu.iter_mut().zip(&grow_u).chain(nv.iter_mut().zip(&grow_v)) {
            if *g {
                *n *= 2;
                if *n > MAX_CELLS_PER_PIECE_SIDE {
                    return Err(FreeformError::Tolerance {
                        tolerance,
                        cells: MAX_CELLS_PER_PIECE_SIDE,
                    });
                }
            }
        }
    }
    let mut us = vec![ucols[0].0];
    for (c, &n) in ucols.iter().zip(&nu) {
        us.extend(uniform_breaks(c.0, c.1, n).into_iter().skip(1));
    }
    let mut vs = vec![vrows[0].0];
    for (c, &n) in vrows.iter().zip(&nv) {
        vs.extend(uniform_breaks(c.0, c.1, n).into_iter().skip(1));
    }
    Ok((us, vs))
}

/// Tessellates one surface: grid vertices (model coordinates, f64) and triangles.
pub fn tessellate_surface(
    s: &NurbsSurface,
    tolerance: f64,
) -> Result<(Vec<DVec3>, Vec<[u32; 3]>), FreeformError> {
    let (us, vs) = surface_grid(s, tolerance)?;
    let m = vs.len();
    let mut pts = Vec::with_capacity(us.len() * m);
    for &u in &us {
        for &v in &vs {
            pts.push(s.point(u, v));
        }
    }
    let mut faces = Vec::with_capacity(2 * (us.len() - 1) * (m - 1));
    for i in 0..us.len() - 1 {
        for j in 0..m - 1 {
            let k = |a: usize, b: usize| (a * m + b) as u32;
            faces.push([k(i, j), k(i + 1, j), k(i + 1, j + 1)]);
            faces.push([k(i, j), k(i + 1, j + 1), k(i, j + 1)]);
        }
    }
    Ok((pts, faces))
}

impl FreeformModel {
    /// Tessellates every surface within `tolerance` (model units, > 0) into one world-space
    /// triangle mesh (f32 positions: add f32 rounding, ~1e-7 relative, to the bound).
    ///
    /// ```
    /// use gprox_geometry::freeform::{teapot, FreeformModel};
    /// let mesh = FreeformModel::new(teapot()).unwrap().tessellate(1e-2).unwrap();
    /// assert!(mesh.face_count() > 0);
    /// ```
    pub fn tessellate(&self, tolerance: f64) -> Result<TriMesh, FreeformError> {
        if !(tolerance.is_finite() && tolerance > 0.0) {
            return Err(FreeformError::Tolerance {
                tolerance,
                cells: MAX_CELLS_PER_PIECE_SIDE,
            });
        }
        let mut positions = Vec::new();
        let mut faces = Vec::new();
        for (index, s) in self.surfaces.iter().enumerate() {
            let (p, f) =
                tessellate_surface(s, tolerance).map_err(|e| FreeformError::InSurface {
                    index,
                    source: Box::new(e),
                })?;
            let base = positions.len() as u32;
            positions.extend(p.into_iter().map(|x| {
                let w = apply_pose(&self.pose, x);
                Vec3::new(w.x as f32, w.y as f32, w.z as f32)
            }));
            faces.extend(f.into_iter().map(|t| t.map(|k| k + base)));
        }
        TriMesh::new(positions, faces).map_err(|e| FreeformError::Parse {
            path: "<tessellation>".into(),
            line: 0,
            message: e.to_string(),
        })
    }
}
