//! Temporal coherence across a context's queries: the witness face pair that the last
//! early-out collision query or distance query found for each ordered pair of models, tried
//! first by the next query of the same kind (see `Context::collide_any`, `Context::distance`).
//!
//! A witness is only ever a hint — it is tested exactly under the new poses and positions —
//! so a stale one (the models moved far, deformed, or the pair is new) costs one triangle test
//! and never changes whether a contact is found or the distance.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::Model;

/// Pairs remembered before the memory is cleared (a bound for contexts that create models
/// without end).
const CAPACITY: usize = 1 << 14;

/// The query a witness belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A touching pair of `collide_any`.
    CollideAny,
    /// The closest pair of `distance`.
    Distance,
}

/// The last witness of every (kind, model, model).
#[derive(Debug, Default)]
pub(crate) struct Witnesses {
    pairs: Mutex<HashMap<(Kind, u64, u64), [u32; 2]>>,
}

impl Witnesses {
    /// The last witness of `kind` for `a` against `b`, if any.
    pub(crate) fn get(&self, kind: Kind, a: &Model, b: &Model) -> Option<[u32; 2]> {
        let pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        pairs.get(&(kind, a.id(), b.id())).copied()
    }

    /// Remembers `found` (or forgets the pair's witness when there is none).
    pub(crate) fn set(&self, kind: Kind, a: &Model, b: &Model, found: Option<[u32; 2]>) {
        let mut pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        let key = (kind, a.id(), b.id());
        match found {
            Some(w) => {
                if pairs.len() >= CAPACITY && !pairs.contains_key(&key) {
                    pairs.clear();
                }
                pairs.insert(key, w);
            }
            None => {
                pairs.remove(&key);
            }
        }
    }
}

/// A process-wide unique id for a new model (clones get their own).
pub(crate) fn next_model_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
