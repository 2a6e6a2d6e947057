//! RSS trees with eight volumes per node in lanes ([`crate::lane_tree`]), for the wide distance
//! query: one node's eight slot volumes are bounded against one volume of the other tree (mapped
//! into the node's frame) in f64 SIMD lanes ([`bounds`]), bit for bit the scalar
//! [`Rss::distance_lower_bound`] of each pair (the core of [`crate::rss_pair`]).

use glam::{DMat3, DVec2, DVec3};
use wide::f64x4;

use crate::bounding_volume::BoundingVolume;
use crate::lane_tree::{LaneNode, LaneTree, LANES};
use crate::rss::Rss;
use crate::rss_pair::{gaps, F64Lanes, RssLanes, V3};

/// One node: its eight slots' volumes in lanes (unused slots hold the whole node's volume and
/// [`EMPTY`](crate::wide::EMPTY)), 1,088 bytes.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideRssNode {
    /// Rectangle centres: `center[c][s]` is coordinate `c` of slot `s`.
    pub center: [[f64; LANES]; 3],
    /// Frames: `axes[3 * i + c][s]` is coordinate `c` of axis `i` (two rectangle axes, then the
    /// normal) of slot `s`.
    pub axes: [[f64; LANES]; 9],
    /// Half side lengths: `half[i][s]` along axis `i`.
    pub half: [[f64; LANES]; 2],
    /// Sweep radii.
    pub radius: [f64; LANES],
    /// The slot's [`BoundingVolume::size`] (the traversal descends the larger volume).
    pub size: [f64; LANES],
    /// Child slots: a node index, `LEAF_BIT | face`, or [`EMPTY`](crate::wide::EMPTY) (as
    /// [`Wide8Node`](crate::wide::Wide8Node)).
    pub children: [u32; LANES],
}

impl LaneNode for WideRssNode {
    type Bv = Rss;

    fn with_children(children: [u32; LANES]) -> Self {
        Self {
            center: [[0.0; LANES]; 3],
            axes: [[0.0; LANES]; 9],
            half: [[0.0; LANES]; 2],
            radius: [0.0; LANES],
            size: [0.0; LANES],
            children,
        }
    }

    fn set_slot(&mut self, s: usize, b: &Rss) {
        let cols = [b.axes.x_axis, b.axes.y_axis, b.axes.z_axis];
        for c in 0..3 {
            self.center[c][s] = b.center[c];
            for (i, col) in cols.iter().enumerate() {
                self.axes[3 * i + c][s] = col[c];
            }
        }
        self.half[0][s] = b.half_lengths.x;
        self.half[1][s] = b.half_lengths.y;
        self.radius[s] = b.radius;
        self.size[s] = b.size();
    }

    #[inline]
    fn children(&self) -> &[u32; LANES] {
        &self.children
    }
}

/// An RSS tree in eight-volume lanes, with the binary tree it was collapsed from.
pub type WideRssTree = LaneTree<WideRssNode>;

/// The volume of slot `s` of `n`.
#[inline]
pub fn slot(n: &WideRssNode, s: usize) -> Rss {
    let col = |i: usize| DVec3::new(n.axes[3 * i][s], n.axes[3 * i + 1][s], n.axes[3 * i + 2][s]);
    Rss {
        center: DVec3::new(n.center[0][s], n.center[1][s], n.center[2][s]),
        axes: DMat3::from_cols(col(0), col(1), col(2)),
        half_lengths: DVec2::new(n.half[0][s], n.half[1][s]),
        radius: n.radius[s],
    }
}

/// Slots `from .. from + L::WIDTH` of `n` in the lanes of `L`.
#[inline(always)]
fn chunk<L: F64Lanes>(n: &WideRssNode, from: usize) -> RssLanes<L> {
    let l = |x: &[f64; LANES]| L::load(&x[from..]);
    let v = |k: usize| V3 {
        x: l(&n.axes[k]),
        y: l(&n.axes[k + 1]),
        z: l(&n.axes[k + 2]),
    };
    RssLanes {
        center: V3 {
            x: l(&n.center[0]),
            y: l(&n.center[1]),
            z: l(&n.center[2]),
        },
        axes: [v(0), v(3), v(6)],
        hx: l(&n.half[0]),
        hy: l(&n.half[1]),
        radius: l(&n.radius),
    }
}

/// [`bounds`] on lanes `L`, `L::WIDTH` slots at a time.
#[inline(always)]
fn bounds_lanes<L: F64Lanes>(n: &WideRssNode, o: &Rss) -> [f64; LANES] {
    let ol = RssLanes::splat(o);
    let mut out = [0.0; LANES];
    for from in (0..LANES).step_by(L::WIDTH) {
        gaps(&chunk::<L>(n, from), &ol).store(&mut out[from..]);
    }
    out.map(|g| g.max(0.0))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn bounds_avx2(n: &WideRssNode, o: &Rss) -> [f64; LANES] {
    bounds_lanes::<crate::rss_pair::Avx4>(n, o)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn bounds_avx512(n: &WideRssNode, o: &Rss) -> [f64; LANES] {
    bounds_lanes::<crate::rss_pair::Avx8>(n, o)
}

/// `slot(n, s).distance_lower_bound(o)` for every slot `s` of `n`, bit for bit: the bounds of
/// one node's eight volumes against one volume in the same frame (all eight in one AVX-512
/// register when the CPU has AVX-512F, four at a time on AVX registers when it has AVX2, else
/// on portable lanes; the same bits every way).
#[inline]
pub fn bounds(n: &WideRssNode, o: &Rss) -> [f64; LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { bounds_avx512(n, o) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { bounds_avx2(n, o) };
        }
    }
    bounds_lanes::<f64x4>(n, o)
}

/// [`bounds`] on the portable lanes only (to check the AVX paths against).
pub fn bounds_portable(n: &WideRssNode, o: &Rss) -> [f64; LANES] {
    bounds_lanes::<f64x4>(n, o)
}

/// [`bounds`] on every path this CPU can run (portable, AVX2, AVX-512F, those it has), to
/// check each against the others.
pub fn bounds_every_path(n: &WideRssNode, o: &Rss) -> Vec<[f64; LANES]> {
    let mut out = vec![bounds_portable(n, o)];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            out.push(unsafe { bounds_avx2(n, o) });
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            out.push(unsafe { bounds_avx512(n, o) });
        }
    }
    out
}
