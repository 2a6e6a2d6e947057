//! The second stage of an [`super::IntersectionSweep`]: the classified samples inside both
//! meshes waiting for their depths (§5.4), which another backend may compute
//! ([`SweepSamples`]); the samples it cannot certify are computed here.

use rayon::prelude::*;

use super::intersect::{
    fill_depths, sorted_samples, surface_point, surfaces, IntersectionSample, Part, Plan,
};
use super::lattice::Lattice;
use super::sweep::SweepOutcome;
use super::{ImageSpaceError, SurfacePoint};
use crate::collide::Side;
use crate::world::World;

/// Face of a [`SurfacePoint`] handed to [`SweepSamples::finish`] that the backend could not
/// certify: the CPU computes that sample's nearest point instead.
pub const UNDECIDED_FACE: u32 = u32::MAX;

/// The samples of an [`super::IntersectionSweep`] inside both meshes, classified, their
/// nearest surface points still to come: made by [`super::IntersectionSweep::classify`],
/// finished by [`SweepSamples::finish`] with the nearest points of A's and B's surfaces to
/// every sample of [`SweepSamples::cells`] (the device's), or without them (the CPU's).
pub struct SweepSamples<'a> {
    worlds: [World<'a>; 2],
    plan: Plan,
    parts: Vec<Part>,
    /// The samples inside both meshes in their final order, surface points unset.
    samples: Vec<IntersectionSample>,
    host_columns: u64,
}

impl<'a> SweepSamples<'a> {
    pub(super) fn new(
        worlds: [World<'a>; 2],
        plan: Plan,
        parts: Vec<Part>,
        host_columns: u64,
    ) -> Self {
        let samples = sorted_samples(&parts, &plan.lattice);
        Self {
            worlds,
            plan,
            parts,
            samples,
            host_columns,
        }
    }

    /// The lattice.
    pub fn lattice(&self) -> &Lattice {
        &self.plan.lattice
    }

    /// Number of samples whose depths are wanted (those inside both meshes; none when
    /// [`super::ImageSpaceOptions::depths`] is off).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no sample wants depths.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cells of the samples whose depths are wanted, in the order
    /// [`SweepSamples::finish`] takes their surface points.
    pub fn cells(&self) -> Vec<[u32; 3]> {
        self.samples.iter().map(|s| s.cell).collect()
    }

    /// The nearest point of `side`'s surface to the sample of `cell` (the exact minimum over
    /// all faces, smallest face id among equal distances): what a backend must return.
    pub fn surface_point(&self, side: Side, cell: [u32; 3]) -> SurfacePoint {
        let w = &self.worlds[side as usize];
        surface_point(w, self.plan.lattice.center(cell), &[], &mut Vec::new())
    }

    /// The result. `near`: the nearest points of A's and of B's surface to every sample of
    /// [`SweepSamples::cells`] (same order), computed by a backend; an entry whose face is
    /// [`UNDECIDED_FACE`] (or no face of the mesh) is computed here. Without `near` the CPU
    /// computes every depth. Errors when a slice has the wrong length.
    pub fn finish(
        mut self,
        near: Option<[&[SurfacePoint]; 2]>,
    ) -> Result<SweepOutcome, ImageSpaceError> {
        let lattice = self.plan.lattice;
        let n = self.len();
        let host_depths = match near {
            None => {
                let sf = surfaces(&self.worlds[0], &self.worlds[1], n > 0, &self.plan.jobs);
                if let Some(sf) = &sf {
                    fill_depths(sf, &lattice, &mut self.samples);
                }
                2 * n as u64
            }
            Some(near) => {
                for got in near {
                    if got.len() != n {
                        return Err(ImageSpaceError::BadDepths {
                            expected: n as u64,
                            got: got.len() as u64,
                        });
                    }
                }
                // Runs of samples in parallel, each with its slice of the given points.
                const RUN: usize = 4096;
                let worlds = &self.worlds;
                self.samples
                    .par_chunks_mut(RUN)
                    .enumerate()
                    .map(|(r, run)| fill_given(worlds, near, r * RUN, run))
                    .sum()
            }
        };
        let intersection = self.plan.finish(&self.parts, self.samples);
        Ok(SweepOutcome {
            intersection,
            host_depths,
            host_columns: self.host_columns,
        })
    }
}

/// Copies the given surface points of `samples` (from index `at` of `near`), computing the
/// undecided ones; returns how many were computed.
fn fill_given(
    worlds: &[World<'_>; 2],
    near: [&[SurfacePoint]; 2],
    at: usize,
    samples: &mut [IntersectionSample],
) -> u64 {
    let mut stack = Vec::new();
    let mut host = 0u64;
    for (i, s) in samples.iter_mut().enumerate() {
        for (side, w) in worlds.iter().enumerate() {
            let mut q = near[side][at + i];
            if q.face == UNDECIDED_FACE || q.face as usize >= w.faces.len() {
                q = surface_point(w, s.position, &[], &mut stack);
                host += 1;
            }
            if side == 0 {
                s.a = q;
            } else {
                s.b = q;
            }
        }
    }
    host
}
