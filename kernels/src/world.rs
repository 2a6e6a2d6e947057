//! Many bodies in one device query (`kernels/cuda/world.cu`): every body's resident tree joins
//! one world numbering, the broad phase over the bodies' root boxes runs on the device, and one
//! balanced traversal serves every overlapping body pair — a frame of hundreds of small bodies
//! is a handful of launches and one host synchronisation, where per-pair calls would leave the
//! GPU idle between launches (gProximity §6 names this as its limit). The CPU twin is
//! `gprox_query::broad_phase::try_collide_many`; the contact sets are the same.

use gprox_bvh::Aabb;
use gprox_geometry::tri_distance::triangle_distance;
use gprox_geometry::tri_tri::triangles_intersect;
use gprox_query::broad_phase::{ManyContacts, ObjectPairContacts};

use crate::balance::{BalanceOptions, BalanceStats, Traversal, WorldSetup, AABB_STRIDE};
use crate::collide::{check_margin, world_pair, GpuCollideOptions, ResidentObject};
use crate::device::{Device, DeviceBuffer};
use crate::error::{CudaError, Result};
use crate::kernel::Kernel;
use crate::params::{WorldBody, WorldBodyBoxesParams, BALANCE_WORLD, PAIR_UNDECIDED};

impl Device {
    /// Every intersecting triangle pair between every two of `bodies` (or pairs within
    /// `opts.margin`), grouped by body pair `(a < b)` as the CPU's `try_collide_many`: broad
    /// phase, traversal and triangle tests on the device, one host synchronisation in the
    /// common case.
    ///
    /// ```
    /// use gprox_cuda::{Device, GpuCollideOptions, ResidentMesh, ResidentObject};
    /// use gprox_geometry::{glam::Vec3, scene::torus, transform::Pose64};
    /// use gprox_geometry::glam::Affine3A;
    /// let d = Device::emulated();
    /// let mesh = torus(1.0, 0.3, 12, 6).unwrap();
    /// let r = ResidentMesh::new(&d, &mesh, &gprox_bvh::lbvh::build(&mesh)).unwrap();
    /// let at = |x: f32| Pose64::from_affine(&Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)));
    /// // Bodies 0 and 1 overlap; body 2 is far away.
    /// let bodies = [at(0.0), at(0.5), at(9.0)].map(|p| ResidentObject::new(&r, &mesh, p));
    /// let many = d.collide_world(&bodies, &GpuCollideOptions::default()).unwrap();
    /// assert_eq!(many.object_pairs.len(), 1);
    /// assert_eq!((many.object_pairs[0].a, many.object_pairs[0].b), (0, 1));
    /// ```
    pub fn collide_world(
        &self,
        bodies: &[ResidentObject<'_>],
        opts: &GpuCollideOptions,
    ) -> Result<ManyContacts> {
        let balance = BalanceOptions {
            initial_result_capacity: opts.initial_capacity.max(1),
            ..BalanceOptions::default()
        };
        Ok(self.collide_world_balanced(bodies, opts, &balance)?.0)
    }

    /// [`Device::collide_world`] with explicit tuning of the balanced traversal.
    pub fn collide_world_balanced(
        &self,
        bodies: &[ResidentObject<'_>],
        opts: &GpuCollideOptions,
        balance: &BalanceOptions,
    ) -> Result<(ManyContacts, BalanceStats)> {
        check_margin(opts.margin)?;
        // The table holds the bodies with faces (others touch nothing), in input order.
        let mut table: Vec<WorldBody> = Vec::with_capacity(bodies.len());
        let mut index: Vec<u32> = Vec::with_capacity(bodies.len());
        let mut total = 0u64;
        for (i, b) in bodies.iter().enumerate() {
            b.check("body")?;
            let leaves = b.resident.leaf_count();
            if leaves == 0 {
                continue;
            }
            let r = b.resident;
            table.push(WorldBody {
                pose: b.pose,
                nodes: r.nodes.device_ptr(),
                positions: r.mesh.positions.device_ptr(),
                faces: r.mesh.faces.device_ptr(),
                base: total as u32,
                leaves,
            });
            index.push(i as u32);
            total += 2 * leaves as u64 - 1;
            if total > u32::MAX as u64 / 2 {
                return Err(CudaError::TooLarge {
                    what: "nodes of a world query",
                    count: total as usize,
                    max: u32::MAX as usize / 2,
                });
            }
        }
        let none = (ManyContacts::default(), BalanceStats::default());
        if table.len() < 2 {
            return Ok(none);
        }
        let count = table.len() as u32;
        // The body table is what moves each frame (poses): one upload into a pooled buffer.
        let words: &[u32] = bytemuck::cast_slice(&table);
        let mut table_buf = self.lease::<DeviceBuffer<u32>>("world.bodies", words.len())?;
        table_buf.write_prefix(words)?;
        let boxes = self.lease::<DeviceBuffer<Aabb>>("world.boxes", total as usize)?;
        let bp = WorldBodyBoxesParams {
            bodies: table_buf.device_ptr(),
            boxes: boxes.device_ptr(),
            margin: opts.margin * 0.5,
            count,
            total: total as u32,
        };
        // SAFETY: the table holds `count` bodies of resident trees (live for this call) whose
        // world indices cover `0..total`; boxes holds `total` boxes.
        unsafe {
            self.launch(
                Kernel::WorldBodyBoxes,
                self.blocks_for(total as usize).min(self.finish_blocks()),
                self.block_size(),
                &bp,
            )?
        };
        let t = Traversal {
            nodes_a: 0,
            nodes_b: 0,
            boxes_a: [boxes.device_ptr(); 2],
            boxes_b: [boxes.device_ptr(); 2],
            box_stride: AABB_STRIDE,
            leaves_a: 0,
            leaves_b: 0,
            faces: 0,
            flags: BALANCE_WORLD,
            min_separation: 0.0,
            triangles: None,
            world: Some(WorldSetup {
                bodies: table_buf.device_ptr(),
                count,
                test: opts.margin == 0.0,
            }),
        };
        let run = self.run_traversal(&t, balance)?;
        // Group by body pair; decide what the device left undecided (or, with a margin, every
        // pair by its distance).
        let mut records: Vec<([u32; 2], [u32; 2])> = Vec::with_capacity(run.contacts.len());
        for [bi, fa, bj, fb] in run.contacts {
            let (a, b) = (index[bi as usize], index[bj as usize]);
            let pair = [fa & !PAIR_UNDECIDED, fb];
            let keep = if opts.margin > 0.0 || fa & PAIR_UNDECIDED != 0 {
                let (ta, tb) = world_pair(&bodies[a as usize], &bodies[b as usize], pair);
                if opts.margin > 0.0 {
                    triangle_distance(&ta, &tb).distance <= opts.margin
                } else {
                    triangles_intersect(&ta, &tb)
                }
            } else {
                true
            };
            if keep {
                records.push(([a, b], pair));
            }
        }
        records.sort_unstable();
        records.dedup();
        let mut many = ManyContacts::default();
        for (bodies_ab, pair) in records {
            match many.object_pairs.last_mut() {
                Some(last) if [last.a, last.b] == bodies_ab => last.pairs.push(pair),
                _ => many.object_pairs.push(ObjectPairContacts {
                    a: bodies_ab[0],
                    b: bodies_ab[1],
                    pairs: vec![pair],
                }),
            }
            many.total += 1;
        }
        Ok((many, run.stats))
    }
}
