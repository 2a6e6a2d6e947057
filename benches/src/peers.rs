//! Reference results and peer timings from `shared/peers/results/<scene>.json`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

/// One frame's reference result for a query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RefFrame {
    /// Intersecting triangle pairs (collide-all / collide-any records carry it).
    pub count: Option<u64>,
    /// Whether the surfaces intersect.
    pub collide: Option<bool>,
    /// Minimum distance (distance queries).
    pub distance: Option<f64>,
    /// Time of impact (ccd).
    pub toi: Option<f64>,
    /// Colliding object pairs `[i, j]` (for `pairs: "all"`).
    pub object_pairs: Option<Vec<[u32; 2]>>,
}

impl RefFrame {
    /// The reference as a frame record (timings zero) of frame `frame`.
    pub fn to_record(&self, frame: usize) -> crate::report::FrameRecord {
        crate::report::FrameRecord {
            frame,
            count: self.count,
            collide: self.collide,
            distance: self.distance,
            toi: self.toi,
            object_pairs: self.object_pairs.clone(),
            ..Default::default()
        }
    }
}

/// A peer's medians for one query target.
#[derive(Clone, Debug, Serialize)]
pub struct PeerTiming {
    /// Peer name (`coal`, `parry3d-f64`, ...).
    pub peer: String,
    /// Median per-frame query time (ms).
    pub median_query_ms: f64,
    /// Median per-frame update time (ms).
    pub median_update_ms: f64,
    /// Whether the peer's results disagreed with the reference on some frame.
    pub disagrees: bool,
}

/// Reference frames and peer timings of one (query kind, target).
#[derive(Clone, Debug, Default)]
pub struct PeerQuery {
    /// Reference results by frame index (from the `ref` peer: the brute-force numpy oracle).
    pub reference: BTreeMap<usize, RefFrame>,
    /// Timings of every peer (the oracle `ref` excluded).
    pub peers: Vec<PeerTiming>,
}

/// All queries of one scene's result file, keyed by (kind, target).
#[derive(Clone, Debug, Default)]
pub struct PeerResults {
    /// Keyed by `(kind, target)`, target as in the file (`"a|b"`, `"all"`, an object name).
    pub queries: BTreeMap<(String, String), PeerQuery>,
}

impl PeerResults {
    /// Reads `results/<scene>.json`; `Ok(None)` when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
        let root: Value =
            serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
        let mut out = Self::default();
        for q in root["queries"].as_array().into_iter().flatten() {
            let (Some(kind), Some(target)) = (q["kind"].as_str(), q["target"].as_str()) else {
                continue;
            };
            let disagreeing: Vec<&str> = q["disagreements"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d["peer"].as_str())
                .collect();
            let mut pq = PeerQuery::default();
            for run in q["runs"].as_array().into_iter().flatten() {
                let peer = run["peer"].as_str().unwrap_or("?");
                if peer == "ref" {
                    for f in run["frames"].as_array().into_iter().flatten() {
                        let Some(frame) = f["frame"].as_u64() else {
                            continue;
                        };
                        let object_pairs = f["object_pairs"].as_array().map(|a| {
                            a.iter()
                                .filter_map(|p| {
                                    let p = p.as_array()?;
                                    Some([p.first()?.as_u64()? as u32, p.get(1)?.as_u64()? as u32])
                                })
                                .collect()
                        });
                        pq.reference.insert(
                            frame as usize,
                            RefFrame {
                                count: f["count"].as_u64(),
                                collide: f["collide"].as_bool(),
                                distance: f["distance"].as_f64(),
                                toi: f["toi"].as_f64(),
                                object_pairs,
                            },
                        );
                    }
                    continue;
                }
                let s = &run["summary"];
                let (Some(mq), mu) = (
                    s["median_query_ms"].as_f64(),
                    s["median_update_ms"].as_f64().unwrap_or(0.0),
                ) else {
                    continue;
                };
                pq.peers.push(PeerTiming {
                    peer: peer.to_string(),
                    median_query_ms: mq,
                    median_update_ms: mu,
                    disagrees: disagreeing.contains(&peer),
                });
            }
            out.queries
                .insert((kind.to_string(), target.to_string()), pq);
        }
        Ok(Some(out))
    }

    /// The entry of `(kind, target)`, if the file has it.
    pub fn get(&self, kind: &str, target: &str) -> Option<&PeerQuery> {
        self.queries.get(&(kind.to_string(), target.to_string()))
    }
}
