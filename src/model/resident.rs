//! A model's copies on a device: mesh and LBVH for the collision queries, the RSS tree and
//! mesh for distance.

use std::sync::Arc;

use gprox_cuda::distance::ResidentDistanceMesh;
use gprox_cuda::{Device, ResidentMesh};

use super::Model;
use crate::Error;

/// A model's copy on one device, at one version of its positions.
#[derive(Debug)]
pub(super) struct Resident {
    device: u64,
    version: u64,
    mesh: Arc<ResidentMesh>,
}

impl Model {
    /// The model's copy on `device`, current with its positions: made on first use (an
    /// upload of mesh and tree), brought up to date by uploading the positions and refitting
    /// on the device when the host positions moved since.
    pub(crate) fn resident(&self, device: &Device) -> Result<Arc<ResidentMesh>, Error> {
        let mut slot = self.resident.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = slot.as_mut().filter(|r| r.device == device.id()) {
            if r.version != self.version {
                match Arc::get_mut(&mut r.mesh) {
                    Some(m) => m.update(self.mesh.positions())?,
                    // Still in use by a query on another thread: a fresh copy for this one.
                    None => r.mesh = Arc::new(ResidentMesh::new(device, &self.mesh, &self.bvh)?),
                }
                r.version = self.version;
            }
            return Ok(r.mesh.clone());
        }
        // The host tree's shape with the current positions: upload, then a device refit if
        // its boxes are stale.
        let mut mesh = ResidentMesh::new(device, &self.mesh, &self.bvh)?;
        if self.stale {
            mesh.update(self.mesh.positions())?;
        }
        let mesh = Arc::new(mesh);
        *slot = Some(Resident {
            device: device.id(),
            version: self.version,
            mesh: mesh.clone(),
        });
        Ok(mesh)
    }

    /// The distance query's copy on `device` (8-wide RSS tree and mesh), current with the
    /// positions: made on first use and after the positions moved.
    pub(crate) fn resident_distance(
        &self,
        device: &Device,
    ) -> Result<Arc<ResidentDistanceMesh>, Error> {
        let mut slot = self
            .resident_distance
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((d, v, r)) = slot.as_ref() {
            if *d == device.id() && *v == self.version {
                return Ok(r.clone());
            }
        }
        let tree = self.distance_tree()?;
        let r = Arc::new(ResidentDistanceMesh::new(device, &self.mesh, tree.tree())?);
        *slot = Some((device.id(), self.version, r.clone()));
        Ok(r)
    }
}
