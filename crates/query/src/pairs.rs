//! Canonical order of face-pair lists: every query returns its `[a, b]` pairs sorted
//! lexicographically.

/// Sorts `pairs` lexicographically (as `sort_unstable` on `[u32; 2]`), comparing each pair as
/// one `u64` key `a · 2³² + b` — one comparison instead of two per step.
#[inline]
pub(crate) fn sort_pairs(pairs: &mut [[u32; 2]]) {
    pairs.sort_unstable_by_key(|p| ((p[0] as u64) << 32) | p[1] as u64);
}

/// Below this many keys [`sort_keys`] uses a comparison sort (the radix passes' fixed costs
/// then dominate).
const RADIX_MIN: usize = 2048;
/// Most bits per radix pass: 4,096 counters stay in the first-level cache.
const MAX_DIGIT: u32 = 12;

/// Sorts `keys` ascending: for long lists least-significant-digit radix passes over the bits the
/// keys use (as few passes of at most 12 bits as cover them, of equal widths: 3 passes for
/// keys below `2^36`), each a count, a prefix sum and a stable scatter into `scratch` (its
/// allocation is kept); `sort_unstable` for short lists. Same result either way.
pub(crate) fn sort_keys(keys: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let n = keys.len();
    if n < RADIX_MIN {
        keys.sort_unstable();
        return;
    }
    let bits = 64 - keys.iter().fold(0u64, |a, &k| a | k).leading_zeros();
    if bits == 0 {
        // All zero: already sorted.
        return;
    }
    let passes = bits.div_ceil(MAX_DIGIT);
    let digit = bits.div_ceil(passes);
    let mask = (1u64 << digit) - 1;
    // Every slot is written by each pass's scatter: only the length matters.
    scratch.truncate(n);
    scratch.resize(n, 0);
    let mut counts = [0u32; 1 << MAX_DIGIT];
    for pass in 0..passes {
        let shift = pass * digit;
        let counts = &mut counts[..1 << digit];
        counts.fill(0);
        for &k in keys.iter() {
            counts[((k >> shift) & mask) as usize] += 1;
        }
        let mut start = 0;
        for c in counts.iter_mut() {
            (*c, start) = (start, start + *c);
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & mask) as usize;
            scratch[counts[d] as usize] = k;
            counts[d] += 1;
        }
        std::mem::swap(keys, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::{sort_keys, sort_pairs};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_order_as_lexicographic_sort(mut v in prop::collection::vec(any::<[u32; 2]>(), 0..200)) {
            let mut want = v.clone();
            want.sort_unstable();
            sort_pairs(&mut v);
            prop_assert_eq!(v, want);
        }

        /// Radix passes (long lists, keys of 1 to 64 bits) and the comparison sort (short
        /// lists) give `sort_unstable`'s order.
        #[test]
        fn sort_keys_is_sort_unstable(
            n in prop_oneof![0usize..100, 2048usize..6000],
            bits in 1u32..=64,
            seed in any::<u64>(),
        ) {
            let mut x = seed | 1;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let mut keys: Vec<u64> = (0..n)
                .map(|_| {
                    // xorshift64*, then only the low `bits` bits, with repeats.
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    (x.wrapping_mul(0x2545_f491_4f6c_dd1d) & mask) >> (x % 3)
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys, &mut Vec::new());
            prop_assert_eq!(keys, want);
        }
    }
}
