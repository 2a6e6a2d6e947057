//! Point-in-face by winding number against the flattened loops: a horizontal ray from the point
//! towards +u counts each edge it crosses, +1 upwards and -1 downwards (half-open in v, so a ray
//! through a vertex counts once). Outer loops (counter-clockwise) give 1 inside, holes
//! (clockwise) cancel it. [`TrimPolygon::classify_grid`] classifies a whole grid with one sorted
//! sweep per row, from the same crossing rule as [`TrimPolygon::winding_number`].

use glam::DVec2;

use super::TrimPolygon;

/// Where the edge `a → b` crosses the line at height `v` (half-open: `[min v, max v)`), with the
/// crossing's sign: +1 when the edge goes up (towards +v), -1 when it goes down.
#[inline]
pub fn edge_crossing(a: DVec2, b: DVec2, v: f64) -> Option<(f64, i32)> {
    if (a.y <= v) == (b.y <= v) {
        return None;
    }
    let u = a.x + (v - a.y) * (b.x - a.x) / (b.y - a.y);
    Some((u, if b.y > a.y { 1 } else { -1 }))
}

impl TrimPolygon {
    /// Winding number of `p` about all loops (non-zero inside the face).
    pub fn winding_number(&self, p: DVec2) -> i32 {
        self.edges()
            .filter_map(|(a, b, _, _)| edge_crossing(a, b, p.y))
            .filter(|&(u, _)| u > p.x)
            .map(|(_, s)| s)
            .sum()
    }

    /// Inside flags (1 inside, 0 outside) of the grid `(us[i], vs[j])`, stored at
    /// `j * us.len() + i`. `us` must be ascending; `vs` may be in any order.
    pub fn classify_grid(&self, us: &[f64], vs: &[f64]) -> Vec<u8> {
        let nu = us.len();
        let mut out = vec![0u8; nu * vs.len()];
        let edges: Vec<(DVec2, DVec2)> = self.edges().map(|(a, b, _, _)| (a, b)).collect();
        let mut row: Vec<(f64, i32)> = Vec::new();
        for (j, &v) in vs.iter().enumerate() {
            row.clear();
            row.extend(edges.iter().filter_map(|&(a, b)| edge_crossing(a, b, v)));
            // Descending u: walk the texels from the right, adding crossings strictly right of u.
            row.sort_by(|x, y| y.0.total_cmp(&x.0));
            let (mut w, mut k) = (0i32, 0usize);
            for i in (0..nu).rev() {
                while k < row.len() && row[k].0 > us[i] {
                    w += row[k].1;
                    k += 1;
                }
                out[j * nu + i] = u8::from(w != 0);
            }
        }
        out
    }
}
