//! Temporal coherence across a context's queries: for each ordered pair of models and query
//! kind, what the last query found — the witness face pair of an early-out collision query or
//! a distance query, tried first by the next query of the same kind (see
//! `Context::collide_any`, `Context::distance`), or that the pair was apart, which makes the
//! next collision query of a rigid pair prove it apart on the OBB trees
//! ([`crate::CollisionTree::Auto`]).
//!
//! A witness is only ever a hint — it is tested exactly under the new poses and positions —
//! so a stale one (the models moved far, deformed, or the pair is new) costs one triangle test
//! and never changes whether a contact is found or the distance; the tree a query runs on
//! never changes its answer either.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use gprox_query::collide::Witness;

use crate::Model;

/// Pairs remembered before the memory is cleared (a bound for contexts that create models
/// without end).
const CAPACITY: usize = 1 << 14;

/// The query a witness belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A touching pair of `collide_any`.
    CollideAny,
    /// The first pair of `collide_all`.
    CollideAll,
    /// The closest pair of `distance`.
    Distance,
}

/// A query kind and the ids of its two models.
type Key = (Kind, u64, u64);

/// What the last query of every (kind, model, model) found: a witness (its faces, and for
/// collide-any the leaves that hold them), or `None` (apart).
#[derive(Debug, Default)]
pub(crate) struct Witnesses {
    pairs: Mutex<HashMap<Key, Option<Witness>>>,
    /// How many pairs the last `collide_all` of each (model, model) found.
    counts: Mutex<HashMap<(u64, u64), usize>>,
}

impl Witnesses {
    /// What the last query of `kind` for `a` against `b` found: `None` when there was none,
    /// `Some(None)` when it found them apart, else `Some(witness)`.
    pub(crate) fn last(&self, kind: Kind, a: &Model, b: &Model) -> Option<Option<Witness>> {
        let pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        pairs.get(&(kind, a.id(), b.id())).copied()
    }

    /// The last witness of `kind` for `a` against `b`, if any.
    pub(crate) fn get(&self, kind: Kind, a: &Model, b: &Model) -> Option<Witness> {
        self.last(kind, a, b).flatten()
    }

    /// Whether the last query of `kind` found `a` and `b` apart.
    pub(crate) fn apart(&self, kind: Kind, a: &Model, b: &Model) -> bool {
        self.last(kind, a, b) == Some(None)
    }

    /// Remembers what a query of `kind` found: a witness, or `None` (apart).
    pub(crate) fn set(&self, kind: Kind, a: &Model, b: &Model, found: Option<Witness>) {
        let mut pairs = self.pairs.lock().unwrap_or_else(|e| e.into_inner());
        let key = (kind, a.id(), b.id());
        if pairs.len() >= CAPACITY && !pairs.contains_key(&key) {
            pairs.clear();
        }
        pairs.insert(key, found);
    }
}

impl Witnesses {
    /// How many pairs the last `collide_all` of `a` against `b` found, if there was one.
    pub(crate) fn count(&self, a: &Model, b: &Model) -> Option<usize> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(&(a.id(), b.id())).copied()
    }

    /// Remembers how many pairs a `collide_all` of `a` against `b` found.
    pub(crate) fn set_count(&self, a: &Model, b: &Model, n: usize) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let key = (a.id(), b.id());
        if counts.len() >= CAPACITY && !counts.contains_key(&key) {
            counts.clear();
        }
        counts.insert(key, n);
    }
}

/// A process-wide unique id for a new model (clones get their own).
pub(crate) fn next_model_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
