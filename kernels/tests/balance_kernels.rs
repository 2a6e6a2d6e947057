//! The balancing kernels alone (`gprox_balance_scan`, `gprox_balance_spread`) against a host
//! computation: prefix sums, even shares, and every work item moved to its place in the even
//! distribution (the concatenation of the queues is preserved, nothing lost or duplicated), and
//! the device-side end test (done when nothing is left, overflow when shares outgrow the
//! regions).

use gprox_cuda::params::{
    BalanceScanParams, BalanceSpreadParams, BALANCE_COUNTERS, BC_ACTIVE, BC_DONE, BC_IDLE,
    BC_OVERFLOW, BC_REMAINING,
};
use gprox_cuda::{Device, Kernel};
use proptest::prelude::*;

/// Work queues, one per task.
type Queues = Vec<Vec<[u32; 2]>>;
/// What [`balance`] returns: offsets, shares, output queues, counters.
type Balanced = (Vec<u32>, Vec<u32>, Queues, Vec<u32>);

/// Runs scan + spread on queues `queues` (one Vec of items per task) in regions of `extra`
/// pairs beyond the even share (and at least the longest queue), asking for `headroom` pairs
/// of room beyond a share; returns (offsets, shares, output queues, counters).
fn balance(queues: &[Vec<[u32; 2]>], extra: u32, headroom: u32) -> Balanced {
    let d = Device::for_tests();
    let tasks = queues.len() as u32;
    let total: u32 = queues.iter().map(|q| q.len() as u32).sum();
    let longest = queues.iter().map(Vec::len).max().unwrap_or(0) as u32;
    let stride = longest.max(total.div_ceil(tasks) + extra).max(1);
    let mut work = vec![0u32; 2 * (tasks * stride) as usize];
    for (t, q) in queues.iter().enumerate() {
        for (i, item) in q.iter().enumerate() {
            let at = 2 * (t * stride as usize + i);
            work[at] = item[0];
            work[at + 1] = item[1];
        }
    }
    let counts: Vec<u32> = queues.iter().map(|q| q.len() as u32).collect();
    let work_in = d.upload(&work).unwrap();
    let counts_in = d.upload(&counts).unwrap();
    let offsets = d.alloc_zeros::<u32>(tasks as usize + 1).unwrap();
    let counts_out = d.alloc_zeros::<u32>(tasks as usize).unwrap();
    let mut c0 = vec![0u32; BALANCE_COUNTERS];
    c0[BC_IDLE] = 7;
    let counters = d.upload(&c0).unwrap();
    let s = BalanceScanParams {
        counts_in: counts_in.device_ptr(),
        offsets: offsets.device_ptr(),
        counts_out: counts_out.device_ptr(),
        counters: counters.device_ptr(),
        tasks,
        stride,
        headroom,
        pad: 0,
    };
    // SAFETY: counts hold `tasks` entries, offsets `tasks + 1`, counters BALANCE_COUNTERS.
    unsafe {
        d.launch(Kernel::BalanceScan, 1, d.block_size(), &s)
            .unwrap()
    };
    let work_out = d.alloc_zeros::<u32>(2 * (tasks * stride) as usize).unwrap();
    let sp = BalanceSpreadParams {
        work_in: work_in.device_ptr(),
        offsets: offsets.device_ptr(),
        work_out: work_out.device_ptr(),
        counters: counters.device_ptr(),
        tasks,
        stride,
    };
    // SAFETY: offsets come from the scan of these queues; the scan checked that every share
    // fits a region (else it set the done flag and the spread returns at once). Two blocks: the
    // grid-stride loop covers any total.
    unsafe {
        d.launch(Kernel::BalanceSpread, 2, d.block_size(), &sp)
            .unwrap()
    };
    let shares = counts_out.download().unwrap();
    let out = work_out.download().unwrap();
    let queues_out = shares
        .iter()
        .enumerate()
        .map(|(t, &n)| {
            (0..n as usize)
                .map(|i| {
                    let at = 2 * (t * stride as usize + i);
                    [out[at], out[at + 1]]
                })
                .collect()
        })
        .collect();
    (
        offsets.download().unwrap(),
        shares,
        queues_out,
        counters.download().unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn scan_and_spread_balance_evenly_and_keep_every_item(
        sizes in prop::collection::vec(prop_oneof![2 => Just(0usize), 3 => 0usize..12, 1 => 0usize..80], 1..70),
        extra in 0u32..3,
        headroom in 0u32..3,
    ) {
        // Distinct items: (task, index) pairs.
        let queues: Queues = sizes
            .iter()
            .enumerate()
            .map(|(t, &n)| (0..n as u32).map(|i| [t as u32, i]).collect())
            .collect();
        let (offsets, shares, out, counters) = balance(&queues, extra, headroom);
        let tasks = queues.len() as u64;
        let total: u64 = sizes.iter().sum::<usize>() as u64;
        let longest = *sizes.iter().max().unwrap() as u64;
        let stride = longest.max(total.div_ceil(tasks) + extra as u64).max(1);
        let overflow = total.div_ceil(tasks) + headroom as u64 > stride;
        prop_assert_eq!(counters[BC_OVERFLOW] != 0, overflow);
        prop_assert_eq!(counters[BC_DONE] != 0, overflow || total == 0);
        prop_assert_eq!(counters[BC_ACTIVE] as u64, total.min(tasks));
        let mut acc = 0u32;
        for (t, q) in queues.iter().enumerate() {
            prop_assert_eq!(offsets[t], acc);
            acc += q.len() as u32;
        }
        prop_assert_eq!(offsets[queues.len()], acc);
        prop_assert_eq!(counters[BC_REMAINING] as u64, total);
        prop_assert_eq!(counters[BC_IDLE], 0);
        if overflow {
            // The queues stay where they are; the host grows the regions and reruns.
            return Ok(());
        }
        // Shares differ by at most one and sum to the total.
        let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
        prop_assert!(hi - lo <= 1);
        prop_assert_eq!(shares.iter().map(|&s| s as u64).sum::<u64>(), total);
        prop_assert_eq!(*hi as u64, total.div_ceil(tasks));
        // The concatenation of the queues is preserved.
        let before: Vec<[u32; 2]> = queues.concat();
        let after: Vec<[u32; 2]> = out.concat();
        prop_assert_eq!(after, before);
    }
}
