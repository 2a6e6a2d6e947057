//! Optional per-frame truth a scene may carry for its queries (exact answers from an
//! independent computation), for benchmark harnesses to check their results against.
//!
//! In `scene.json`:
//!
//! ```text
//! "truth": {
//!   "collide-all": {"torusA|torusB": {"count": [296, 164, ...], "collide": [true, ...]}},
//!   "distance":    {"a|b": {"distance": [0.0211, ...]}},
//!   "ccd":         {"cloth": {"toi": [1.0, 0.42, ...]}}
//! },
//! "exact_distance_per_frame": [0.0211, ...]
//! ```
//!
//! `truth` maps a query kind and a target label (`"a|b"` for a pair, the object's name for a
//! single-object query, `"all"` for `pairs: "all"`) to per-frame arrays, one entry per frame
//! (`toi`: per step, the last frame may be left out; 1 means no contact in the step). The older
//! `exact_distance_per_frame` key is the distance truth of every distance target.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Per-frame truth of one query target; each array has one entry per frame.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truth {
    /// Intersecting triangle pairs.
    #[serde(default)]
    pub count: Option<Vec<u64>>,
    /// Whether anything intersects.
    #[serde(default)]
    pub collide: Option<Vec<bool>>,
    /// Minimum distance.
    #[serde(default)]
    pub distance: Option<Vec<f64>>,
    /// Earliest time of impact of the step from this frame to the next (1: none).
    #[serde(default)]
    pub toi: Option<Vec<f64>>,
}

impl Truth {
    /// The length of each array given, with its name.
    pub(super) fn lengths(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        [
            ("count", self.count.as_ref().map(Vec::len)),
            ("collide", self.collide.as_ref().map(Vec::len)),
            ("distance", self.distance.as_ref().map(Vec::len)),
            ("toi", self.toi.as_ref().map(Vec::len)),
        ]
        .into_iter()
        .filter_map(|(k, n)| Some((k, n?)))
    }
}

/// Every truth of a scene.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneTruth {
    /// By query kind, then target label.
    pub by_target: BTreeMap<String, BTreeMap<String, Truth>>,
    /// `exact_distance_per_frame`: the distance of every distance target.
    pub distance_per_frame: Option<Vec<f64>>,
}

impl SceneTruth {
    /// Sets the truth of the target `label` of the query `kind` (built-in scenes' own truth).
    pub fn set(&mut self, kind: &str, label: &str, truth: Truth) {
        self.by_target
            .entry(kind.into())
            .or_default()
            .insert(label.into(), truth);
    }

    /// Sets only the per-frame collision flags of the target `label` of the query `kind`.
    pub fn set_collide(&mut self, kind: &str, label: &str, per_frame: Vec<bool>) {
        let truth = Truth {
            collide: Some(per_frame),
            ..Default::default()
        };
        self.set(kind, label, truth);
    }

    /// The truth of the target `label` of the query `kind` (as spelled in `scene.json`), if
    /// the scene has any.
    pub fn get(&self, kind: &str, label: &str) -> Option<Truth> {
        if let Some(t) = self.by_target.get(kind).and_then(|m| m.get(label)) {
            return Some(t.clone());
        }
        let d = self
            .distance_per_frame
            .as_ref()
            .filter(|_| kind == "distance")?;
        Some(Truth {
            distance: Some(d.clone()),
            ..Default::default()
        })
    }

    /// Whether the scene carries no truth at all.
    pub fn is_empty(&self) -> bool {
        self.by_target.is_empty() && self.distance_per_frame.is_none()
    }
}
