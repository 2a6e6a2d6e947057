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
        let (records, stats) = self.world_contacts(bodies, None, opts, balance)?;
        let mut many = ManyContacts::default();
        for ([a, b], pair) in records {
            match many.object_pairs.last_mut() {
                Some(last) if [last.a, last.b] == [a, b] => last.pairs.push(pair),
                _ => many.object_pairs.push(ObjectPairContacts {
                    a,
                    b,
                    pairs: vec![pair],
                }),
            }
            many.total += 1;
        }
        Ok((many, stats))
    }

    /// Many independent pair queries in one batch: for each `(a, b)` of `pairs`, every
    /// `[face of a, face of b]` that intersects (or lies within `opts.margin`), sorted — what
    /// [`Device::collide_all_resident`] answers for that pair alone. One world of `2 ×
    /// pairs.len()` bodies, one traversal serving every pair, one host synchronisation: small
    /// models fill the GPU together where one launch each would leave it idle.
    ///
    /// ```
    /// use gprox_cuda::{Device, GpuCollideOptions, ResidentMesh, ResidentObject};
    /// use gprox_geometry::{glam::{Affine3A, Vec3}, scene::torus, transform::Pose64};
    /// let d = Device::emulated();
    /// let mesh = torus(1.0, 0.3, 12, 6).unwrap();
    /// let r = ResidentMesh::new(&d, &mesh, &gprox_bvh::lbvh::build(&mesh)).unwrap();
    /// let at = |x: f32| ResidentObject::new(
    ///     &r, &mesh, Pose64::from_affine(&Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))));
    /// let pairs = [(at(0.0), at(0.5)), (at(0.0), at(9.0))];
    /// let found = d.collide_batch(&pairs, &GpuCollideOptions::default()).unwrap();
    /// assert!(!found[0].is_empty() && found[1].is_empty());
    /// assert_eq!(found[0], d.collide_all_resident(&pairs[0].0, &pairs[0].1, &Default::default()).unwrap());
    /// ```
    pub fn collide_batch(
        &self,
        pairs: &[(ResidentObject<'_>, ResidentObject<'_>)],
        opts: &GpuCollideOptions,
    ) -> Result<Vec<Vec<[u32; 2]>>> {
        let balance = BalanceOptions {
            initial_result_capacity: opts.initial_capacity.max(1),
            ..BalanceOptions::default()
        };
        Ok(self.collide_batch_balanced(pairs, opts, &balance)?.0)
    }

    /// [`Device::collide_batch`] with explicit tuning of the balanced traversal.
    pub fn collide_batch_balanced(
        &self,
        pairs: &[(ResidentObject<'_>, ResidentObject<'_>)],
        opts: &GpuCollideOptions,
        balance: &BalanceOptions,
    ) -> Result<(Vec<Vec<[u32; 2]>>, BalanceStats)> {
        // Body 2k is pair k's first object, body 2k + 1 its second.
        let bodies: Vec<ResidentObject<'_>> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
        let list: Vec<[u32; 2]> = (0..pairs.len() as u32)
            .map(|k| [2 * k, 2 * k + 1])
            .collect();
        let (records, stats) = self.world_contacts(&bodies, Some(&list), opts, balance)?;
        let mut out = vec![Vec::new(); pairs.len()];
        for ([a, _], pair) in records {
            out[a as usize / 2].push(pair);
        }
        Ok((out, stats))
    }

    /// The contacts of a world query over `bodies`: between every two of them, or between the
    /// body pairs of `list` (`[i, j]` with `i < j`, input indices); sorted `([body a, body b],
    /// [face a, face b])` records, each decided (undecided pairs get the exact host test, or
    /// with a margin every pair its distance).
    fn world_contacts(
        &self,
        bodies: &[ResidentObject<'_>],
        list: Option<&[[u32; 2]]>,
        opts: &GpuCollideOptions,
        balance: &BalanceOptions,
    ) -> Result<(WorldRecords, BalanceStats)> {
        check_margin(opts.margin)?;
        // The table holds the bodies with faces (others touch nothing), in input order.
        let mut table: Vec<WorldBody> = Vec::with_capacity(bodies.len());
        let mut index: Vec<u32> = Vec::with_capacity(bodies.len());
        let mut slot: Vec<Option<u32>> = vec![None; bodies.len()];
        let mut total = 0u64;
        for (i, b) in bodies.iter().enumerate() {
            b.check("body")?;
            let leaves = b.resident.leaf_count();
            if leaves == 0 {
                continue;
            }
            let r = b.resident;
            slot[i] = Some(table.len() as u32);
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
        // The listed pairs between bodies with faces, in table indices.
        let listed: Option<Vec<[u32; 2]>> = list.map(|l| {
            l.iter()
                .filter_map(|&[i, j]| Some([slot[i as usize]?, slot[j as usize]?]))
                .collect()
        });
        let none = (Vec::new(), BalanceStats::default());
        if table.len() < 2 || listed.as_ref().is_some_and(Vec::is_empty) {
            return Ok(none);
        }
        let count = table.len() as u32;
        // The body table (and a pair list) is what moves each frame: uploads into pooled
        // buffers.
        let words: &[u32] = bytemuck::cast_slice(&table);
        let mut table_buf = self.lease::<DeviceBuffer<u32>>("world.bodies", words.len())?;
        table_buf.write_prefix(words)?;
        let list_words: &[u32] = listed.as_deref().map_or(&[], bytemuck::cast_slice);
        let mut list_buf = self.lease::<DeviceBuffer<u32>>("world.list", list_words.len())?;
        list_buf.write_prefix(list_words)?;
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
                list: listed
                    .as_ref()
                    .map(|l| (list_buf.device_ptr(), l.len() as u32)),
            }),
        };
        let run = self.run_traversal(&t, balance)?;
        // Decide what the device left undecided (or, with a margin, every pair by its
        // distance).
        let mut records: WorldRecords = Vec::with_capacity(run.contacts.len());
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
        Ok((records, run.stats))
    }
}

/// Decided contacts of a world query: `([body a, body b], [face a, face b])`, sorted.
type WorldRecords = Vec<([u32; 2], [u32; 2])>;
