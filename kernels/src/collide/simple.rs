//! Collision through the simple traversal kernel (`collide.cu`: one thread per front pair, no
//! work balancing), kept beside the balanced default as its cross-check: one-off uploads,
//! level-by-level fronts with a host round trip each, the triangle-pair kernel and the exact
//! host test for what it leaves undecided. Same pair sets as [`Device::collide_all`].

use gprox_bvh::{Aabb, BvhNode};
use gprox_geometry::transform::{transform_triangle, Pose64};
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;

use super::{check_margin, check_object, CollisionObject, GpuCollideOptions};
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::{CollideParams, TRI_INTERSECT, TRI_UNDECIDED};

/// A node-pair buffer with its capacity in pairs.
struct PairBuffer {
    buf: DeviceBuffer<u32>,
    capacity: usize,
}

impl Device {
    /// [`Device::collide_all`] through the simple traversal kernel (`collide.cu`: one thread
    /// per front pair, no work balancing). Same results.
    pub fn collide_all_simple(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
    ) -> Result<Vec<[u32; 2]>> {
        check_margin(opts.margin)?;
        let na = check_object(a, "a")?;
        let nb = check_object(b, "b")?;
        if na == 0 || nb == 0 {
            return Ok(Vec::new());
        }
        let nodes_a = self.upload(&a.bvh.nodes)?;
        let nodes_b = self.upload(&b.bvh.nodes)?;
        let boxes_a = self.world_boxes(&nodes_a, &a.pose, opts.margin * 0.5)?;
        let boxes_b = self.world_boxes(&nodes_b, &b.pose, opts.margin * 0.5)?;
        let (candidates, count) = self.traverse(
            [&nodes_a, &nodes_b],
            [&boxes_a, &boxes_b],
            opts.initial_capacity.max(1),
        )?;
        self.finish_pairs(a, b, opts, &candidates, count)
    }

    /// Decides the `count` candidate pairs: the triangle-pair kernel, then the exact host test
    /// for what it leaves undecided (or the distance test with a margin); sorted, deduplicated.
    fn finish_pairs(
        &self,
        a: &CollisionObject<'_>,
        b: &CollisionObject<'_>,
        opts: &GpuCollideOptions,
        candidates: &DeviceBuffer<u32>,
        count: u32,
    ) -> Result<Vec<[u32; 2]>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let pairs = candidates.download_prefix(2 * count as usize)?;
        // Margin 0: the kernel's certified answers stand, undecided pairs get the exact test.
        // Margin > 0: every candidate gets the CPU's distance test (no GPU distance kernel yet),
        // so the kernel is skipped and every pair counts as undecided.
        let status = if opts.margin > 0.0 {
            vec![TRI_UNDECIDED; count as usize]
        } else {
            let mesh_a = self.upload_mesh(a.mesh)?;
            let mesh_b = self.upload_mesh(b.mesh)?;
            self.tri_pairs(&mesh_a, &a.pose, &mesh_b, &b.pose, candidates, count)?
                .download_prefix(count as usize)?
        };

        let mut out: Vec<[u32; 2]> = Vec::new();
        for (pair, &s) in pairs.chunks_exact(2).zip(&status) {
            let world = || {
                (
                    transform_triangle(&a.pose, a.mesh.triangle(pair[0] as usize)),
                    transform_triangle(&b.pose, b.mesh.triangle(pair[1] as usize)),
                )
            };
            let keep = if opts.margin > 0.0 {
                let (ta, tb) = world();
                triangle_distance(&ta, &tb).distance <= opts.margin
            } else if s == TRI_UNDECIDED {
                let (ta, tb) = world();
                triangles_intersect(&ta, &tb)
            } else {
                s == TRI_INTERSECT
            };
            if keep {
                out.push([pair[0], pair[1]]);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Conservative world boxes of every node of a tree under `pose`, widened by `margin` (half
    /// the query's margin: both sides are widened).
    fn world_boxes(
        &self,
        nodes: &DeviceBuffer<BvhNode>,
        pose: &Pose64,
        margin: f64,
    ) -> Result<DeviceBuffer<Aabb>> {
        let boxes = self.alloc_zeros::<Aabb>(nodes.len())?;
        self.world_boxes_into(nodes, pose, margin, &boxes)?;
        Ok(boxes)
    }

    /// The BVTT traversal from the root pair: candidate face pairs and their count.
    fn traverse(
        &self,
        nodes: [&DeviceBuffer<BvhNode>; 2],
        boxes: [&DeviceBuffer<Aabb>; 2],
        initial_capacity: usize,
    ) -> Result<(DeviceBuffer<u32>, u32)> {
        // Fronts at least this large descend depth-first (one thread per pair, local stacks);
        // smaller ones expand one level, to spread the work over more threads first.
        let depth_first_from = self.block_size() as usize * if self.is_emulated() { 1 } else { 32 };
        let mut pair_capacity = initial_capacity;
        loop {
            let pairs = self.alloc_zeros::<u32>(2 * pair_capacity)?;
            let mut counters = self.alloc_zeros::<u32>(2)?;
            let mut front_in = PairBuffer {
                buf: self.upload(&[0u32, 0u32])?,
                capacity: 1,
            };
            let mut front_count = 1usize;
            let mut front_out = PairBuffer {
                buf: self.alloc_zeros::<u32>(2 * initial_capacity)?,
                capacity: initial_capacity,
            };
            let mut needed = 0u32;
            while front_count > 0 {
                let next = loop {
                    counters.write(&[needed, 0])?;
                    let p = CollideParams {
                        nodes_a: nodes[0].device_ptr(),
                        nodes_b: nodes[1].device_ptr(),
                        boxes_a: boxes[0].device_ptr(),
                        boxes_b: boxes[1].device_ptr(),
                        front_in: front_in.buf.device_ptr(),
                        front_out: front_out.buf.device_ptr(),
                        pairs: pairs.device_ptr(),
                        counters: counters.device_ptr(),
                        front_count: front_count as u32,
                        front_capacity: front_out.capacity as u32,
                        pair_capacity: pair_capacity as u32,
                        depth_first: (front_count >= depth_first_from) as u32,
                    };
                    // SAFETY: node/box buffers cover both trees (validated), the fronts and the
                    // pair buffer hold their capacities, counters 2 entries.
                    unsafe {
                        self.launch(
                            Kernel::Collide,
                            self.blocks_for(front_count),
                            self.block_size(),
                            &p,
                        )?
                    };
                    let c = counters.download()?;
                    if c[0] < needed {
                        return Err(CudaError::TooLarge {
                            what: "candidate pairs",
                            count: u32::MAX as usize + 1,
                            max: u32::MAX as usize,
                        });
                    }
                    if c[1] as usize > front_out.capacity {
                        // The front overflowed: grow it and repeat this launch from the same
                        // counters (the pairs it wrote are written again at the same places).
                        front_out = PairBuffer {
                            buf: self.alloc_zeros::<u32>(2 * c[1] as usize)?,
                            capacity: c[1] as usize,
                        };
                        continue;
                    }
                    needed = c[0];
                    break c[1] as usize;
                };
                std::mem::swap(&mut front_in, &mut front_out);
                front_count = next;
            }
            if needed as usize <= pair_capacity {
                return Ok((pairs, needed));
            }
            // The candidate buffer overflowed: rerun with the size the kernel counted.
            pair_capacity = needed as usize;
        }
    }
}
