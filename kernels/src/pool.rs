//! The per-device pool of work buffers: queries lease buffers by name and return them when done,
//! so a scene's frames after the first allocate nothing on the device. Buffers grow (by half
//! again, at least to the size asked for) and are never shrunk while the device lives.

use std::any::Any;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use bytemuck::Pod;

use crate::device::{Device, DeviceBuffer, MappedBuffer};
use crate::error::Result;

/// Idle buffers by name (a [`DeviceBuffer`] or [`MappedBuffer`] of one element type each).
#[derive(Default)]
pub(crate) struct Pool {
    idle: Mutex<HashMap<&'static str, Box<dyn Any + Send>>>,
}

impl Pool {
    fn take<B: 'static>(&self, name: &'static str) -> Option<B> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let b = idle.remove(name)?;
        b.downcast::<B>().ok().map(|b| *b)
    }

    fn put<B: Any + Send>(&self, name: &'static str, b: B) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        // Of two buffers of one name (two queries at once) the one put back last stays.
        idle.insert(name, Box::new(b));
    }
}

/// Capacity to allocate when `len` elements are needed and `old` were there: half again as
/// many as needed once a buffer has grown, so a slowly growing scene reallocates rarely.
fn grown(len: usize, old: usize) -> usize {
    if old == 0 {
        len.max(1)
    } else {
        len.max(old + old / 2)
    }
}

/// Something a lease can hold: a device buffer or mapped host memory.
pub(crate) trait Poolable: Any + Send + Sized {
    /// Elements it holds.
    fn capacity(&self) -> usize;
    /// A new one of `len` elements.
    fn allocate(device: &Device, len: usize) -> Result<Self>;
}

impl<T: Pod + Send> Poolable for DeviceBuffer<T> {
    fn capacity(&self) -> usize {
        self.len()
    }
    fn allocate(device: &Device, len: usize) -> Result<Self> {
        device.alloc_zeros(len)
    }
}

impl<T: Pod + Send> Poolable for MappedBuffer<T> {
    fn capacity(&self) -> usize {
        self.len()
    }
    fn allocate(device: &Device, len: usize) -> Result<Self> {
        device.alloc_mapped(len)
    }
}

/// A buffer leased from the device's pool; it goes back to the pool when dropped. Its contents
/// are whatever the last user left (kernels initialise what they read).
pub(crate) struct Lease<B: Poolable> {
    buf: Option<B>,
    name: &'static str,
    device: Device,
}

impl<B: Poolable> Deref for Lease<B> {
    type Target = B;
    fn deref(&self) -> &B {
        self.buf
            .as_ref()
            .expect("a lease holds its buffer until dropped")
    }
}

impl<B: Poolable> DerefMut for Lease<B> {
    fn deref_mut(&mut self) -> &mut B {
        self.buf
            .as_mut()
            .expect("a lease holds its buffer until dropped")
    }
}

impl<B: Poolable> Drop for Lease<B> {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.device.pool.put(self.name, b);
        }
    }
}

impl Device {
    /// Leases the pool's buffer `name` with room for at least `len` elements, allocating (grown)
    /// only when the pooled one is missing or too small.
    pub(crate) fn lease<B: Poolable>(&self, name: &'static str, len: usize) -> Result<Lease<B>> {
        let old = self.pool.take::<B>(name);
        let buf = match old {
            Some(b) if b.capacity() >= len.max(1) => b,
            other => {
                let old_len = other.as_ref().map_or(0, |b| b.capacity());
                drop(other);
                B::allocate(self, grown(len, old_len))?
            }
        };
        Ok(Lease {
            buf: Some(buf),
            name,
            device: self.clone(),
        })
    }

    /// A number the pool remembers between queries under `name` (e.g. how many traversal rounds
    /// the last query took), `default` the first time.
    pub(crate) fn hint(&self, name: &'static str, default: u32) -> u32 {
        let v = self.pool.take::<u32>(name).unwrap_or(default);
        self.pool.put(name, v);
        v
    }

    /// Stores a number for [`Device::hint`].
    pub(crate) fn set_hint(&self, name: &'static str, value: u32) {
        self.pool.put(name, value);
    }
}
