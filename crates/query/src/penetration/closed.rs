//! The closedness check: every edge shared by exactly two faces that traverse it in opposite
//! directions (a closed, consistently oriented surface), in O(faces + vertices).
//!
//! Directed edges `(u, v)` are bucketed by `min(u, v)` with a counting sort; inside a bucket
//! (a handful of entries) each undirected edge must occur exactly twice, once in each direction.
//! Edges of a repeated index (`u == v`, from a collapsed face) are skipped: they bound nothing.
//!
//! Closedness depends on the faces alone, which a [`TriMesh::topology_id`] fixes (positions
//! change, faces never do), so the topologies found closed are remembered: a deforming mesh is
//! checked on its first query only.

use std::sync::Mutex;

use gprox_geometry::TriMesh;

use super::PenetrationError;
use crate::collide::Side;

/// One directed edge, filed under its smaller vertex.
#[derive(Clone, Copy)]
struct Entry {
    /// `max(u, v) << 1 | (u < v)`.
    key: u64,
    /// The face it comes from.
    face: u32,
}

/// How many closed topologies are remembered (the most recent ones).
const REMEMBERED: usize = 32;

/// The topology ids most recently found closed, oldest first.
static CLOSED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Checks that `mesh` is closed and consistently oriented; the error names `object`, an
/// offending edge (its two vertex ids) and a face on it. A topology found closed before is not
/// checked again.
pub(crate) fn check_closed(mesh: &TriMesh, object: Side) -> Result<(), PenetrationError> {
    let id = mesh.topology_id();
    let known = |ids: &Vec<u64>| ids.contains(&id);
    if known(&CLOSED.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(());
    }
    check_edges(mesh, object)?;
    let mut ids = CLOSED.lock().unwrap_or_else(|e| e.into_inner());
    if !known(&ids) {
        if ids.len() == REMEMBERED {
            ids.remove(0);
        }
        ids.push(id);
    }
    Ok(())
}

/// [`check_closed`] without the memory.
fn check_edges(mesh: &TriMesh, object: Side) -> Result<(), PenetrationError> {
    let n = mesh.vertex_count();
    let mut start = vec![0u32; n + 1];
    for f in mesh.faces() {
        for i in 0..3 {
            let (u, v) = (f[i], f[(i + 1) % 3]);
            if u != v {
                start[u.min(v) as usize + 1] += 1;
            }
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut entries = vec![Entry { key: 0, face: 0 }; start[n] as usize];
    for (face, f) in mesh.faces().iter().enumerate() {
        for i in 0..3 {
            let (u, v) = (f[i], f[(i + 1) % 3]);
            if u == v {
                continue;
            }
            let slot = &mut fill[u.min(v) as usize];
            entries[*slot as usize] = Entry {
                key: (u64::from(u.max(v)) << 1) | u64::from(u < v),
                face: face as u32,
            };
            *slot += 1;
        }
    }
    for lo in 0..n {
        let bucket = &mut entries[start[lo] as usize..start[lo + 1] as usize];
        bucket.sort_unstable_by_key(|e| e.key);
        let mut i = 0;
        while i < bucket.len() {
            let hi = bucket[i].key >> 1;
            let mut j = i + 1;
            while j < bucket.len() && bucket[j].key >> 1 == hi {
                j += 1;
            }
            let edge = [lo as u32, hi as u32];
            let face = bucket[i].face;
            if j - i != 2 {
                return Err(PenetrationError::NotClosed {
                    object,
                    edge,
                    faces: j - i,
                    face,
                });
            }
            if bucket[i].key == bucket[i + 1].key {
                return Err(PenetrationError::NotOriented { object, edge, face });
            }
            i = j;
        }
    }
    Ok(())
}
