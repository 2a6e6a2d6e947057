//! Stable radix sort of `(u64 code, u32 index)` pairs: LBVH spec step 4.
//!
//! The CPU twin of the GPU radix-sort kernel (`kernels/cuda/radix_sort.cu`), which sorts
//! least-significant digit first. Here the digits go the other way: large inputs first split on
//! their 8 highest varying bits (one parallel counting pass: every chunk counts its digits, a
//! scan over (digit, chunk) gives each chunk its output ranges, every chunk scatters in order),
//! then every bucket is sorted on its own, in parallel and in cache, by a most-significant-digit
//! recursion ([`sort_bucket`]) that ends in insertion sorts. Every step is stable, so sorting
//! codes that carry their primitive index gives exactly the order by `(code, index)` — the same
//! result as the GPU's all-LSD sort.

use rayon::prelude::*;

/// Bits per pass.
pub const RADIX_BITS: u32 = 8;
const BUCKETS: usize = 1 << RADIX_BITS;
const MASK: u64 = (BUCKETS - 1) as u64;
/// Below this many keys the sort runs on one thread.
const PAR_MIN: usize = 1 << 15;

/// Sorts `codes` carrying their positions: returns the sorted codes and, for each sorted slot,
/// the index of the code it came from. Equal codes keep index order, so the result is the order
/// by `(code, index)`.
///
/// ```
/// use gprox_bvh::sort::sort_codes;
/// let (codes, order) = sort_codes(&[5, 1, 5, 0]);
/// assert_eq!(codes, vec![0, 1, 5, 5]);
/// assert_eq!(order, vec![3, 1, 0, 2]);
/// ```
pub fn sort_codes(codes: &[u64]) -> (Vec<u64>, Vec<u32>) {
    sort_codes_owned(codes.to_vec())
}

/// [`sort_codes`] sorting the given vector in place.
pub(crate) fn sort_codes_owned(mut keys: Vec<u64>) -> (Vec<u64>, Vec<u32>) {
    let n = keys.len();
    let mut values: Vec<u32> = crate::alloc::with_capacity(n);
    if n < PAR_MIN {
        values.extend(0..n as u32);
    } else {
        values.par_extend((0..n as u32).into_par_iter().with_min_len(1 << 14));
    }
    sort_pairs(&mut keys, &mut values);
    (keys, values)
}

/// Sorts `keys` ascending, stably, applying the same permutation to `values`.
///
/// # Panics
/// If the two slices differ in length (a caller bug, not user data).
pub fn sort_pairs(keys: &mut [u64], values: &mut [u32]) {
    assert_eq!(keys.len(), values.len(), "sort_pairs: length mismatch");
    let n = keys.len();
    if n < 2 {
        return;
    }
    let mut tmp_keys: Vec<u64> = crate::alloc::zeroed(n);
    let mut tmp_values: Vec<u32> = crate::alloc::zeroed(n);
    if n < PAR_MIN {
        sort_bucket(keys, values, &mut tmp_keys, &mut tmp_values, true);
        return;
    }
    let first = keys[0];
    let varying = keys
        .par_chunks(PAR_MIN)
        .map(|c| c.iter().fold(0u64, |acc, &k| acc | (k ^ first)))
        .reduce(|| 0, |a, b| a | b);
    if varying == 0 {
        return;
    }
    // Split on the 8 highest varying bits into the scratch arrays, ...
    let shift = (u64::BITS - varying.leading_zeros()).saturating_sub(RADIX_BITS);
    let chunk_len = n.div_ceil(rayon::current_num_threads().clamp(1, 64));
    let counts = split_pass(
        keys,
        values,
        &mut tmp_keys,
        &mut tmp_values,
        shift,
        chunk_len,
    );
    // ... then sort every bucket on the bits below, back into `keys` / `values`.
    let mut jobs = Vec::with_capacity(BUCKETS);
    let (mut k, mut v) = (&mut keys[..], &mut values[..]);
    let (mut tk, mut tv) = (&mut tmp_keys[..], &mut tmp_values[..]);
    for &c in &counts {
        let (k0, k1) = std::mem::take(&mut k).split_at_mut(c);
        let (v0, v1) = std::mem::take(&mut v).split_at_mut(c);
        let (tk0, tk1) = std::mem::take(&mut tk).split_at_mut(c);
        let (tv0, tv1) = std::mem::take(&mut tv).split_at_mut(c);
        (k, v, tk, tv) = (k1, v1, tk1, tv1);
        if c > 0 {
            jobs.push((tk0, tv0, k0, v0));
        }
    }
    jobs.into_par_iter().for_each(|(tk, tv, k, v)| {
        // Sort (tk, tv) with (k, v) as scratch, the result landing in (k, v).
        sort_bucket(tk, tv, k, v, false);
    });
}

/// Bits where some key differs from the first.
fn varying_bits(keys: &[u64]) -> u64 {
    let first = keys[0];
    keys.iter().fold(0u64, |acc, &k| acc | (k ^ first))
}

#[inline]
fn digit(k: u64, shift: u32) -> usize {
    ((k >> shift) & MASK) as usize
}

/// Buckets at most this long are finished by insertion sort.
const SMALL: usize = 32;

/// Sequential stable sort of `(keys, values)`, most significant digit first, using `(tk, tv)`
/// (same lengths) as scratch; the result ends in `(keys, values)` when `in_place`, else in
/// `(tk, tv)`. Every level splits on the 8 highest bits that vary within the bucket (one
/// counting pass into the other buffer) and sorts each sub-bucket the same way (by then it is in
/// cache), asking for the result in whichever buffer this level must deliver it: the levels
/// alternate buffers, and only buckets that end early (at most [`SMALL`] keys, sorted by
/// insertion, or all keys equal) are copied, once. At most eight levels.
fn sort_bucket(
    keys: &mut [u64],
    values: &mut [u32],
    tk: &mut [u64],
    tv: &mut [u32],
    in_place: bool,
) {
    let done = |keys: &[u64], values: &[u32], tk: &mut [u64], tv: &mut [u32]| {
        if !in_place {
            tk.copy_from_slice(keys);
            tv.copy_from_slice(values);
        }
    };
    if keys.len() <= SMALL {
        insertion_sort(keys, values);
        return done(keys, values, tk, tv);
    }
    let varying = varying_bits(keys);
    if varying == 0 {
        return done(keys, values, tk, tv);
    }
    let shift = (u64::BITS - varying.leading_zeros()).saturating_sub(RADIX_BITS);
    let mut offset = [0u32; BUCKETS];
    for &x in keys.iter() {
        offset[digit(x, shift)] += 1;
    }
    let mut sum = 0;
    for o in offset.iter_mut() {
        (*o, sum) = (sum, sum + *o);
    }
    for (&x, &y) in keys.iter().zip(values.iter()) {
        let d = digit(x, shift);
        let at = offset[d] as usize;
        tk[at] = x;
        tv[at] = y;
        offset[d] += 1;
    }
    // `offset[d]` is now the end of bucket d; the data is in (tk, tv).
    let mut start = 0;
    for &end in &offset {
        let r = start..end as usize;
        start = end as usize;
        if r.is_empty() {
            continue;
        }
        sort_bucket(
            &mut tk[r.clone()],
            &mut tv[r.clone()],
            &mut keys[r.clone()],
            &mut values[r],
            !in_place,
        );
    }
}

/// Stable insertion sort of a short bucket.
fn insertion_sort(keys: &mut [u64], values: &mut [u32]) {
    for i in 1..keys.len() {
        let (k, v) = (keys[i], values[i]);
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            values[j] = values[j - 1];
            j -= 1;
        }
        keys[j] = k;
        values[j] = v;
    }
}

/// Output slices of one chunk: for every digit, where its keys and values go.
type ChunkOut<'o> = (Vec<&'o mut [u64]>, Vec<&'o mut [u32]>);

/// Parallel stable counting pass on the digit at `shift` from `(keys, values)` into
/// `(out_keys, out_values)`, the input split into chunks of `chunk_len`. Returns the number of
/// keys per digit.
fn split_pass(
    keys: &[u64],
    values: &[u32],
    out_keys: &mut [u64],
    out_values: &mut [u32],
    shift: u32,
    chunk_len: usize,
) -> Vec<usize> {
    // 1. Per-chunk histograms.
    let hists: Vec<[usize; BUCKETS]> = keys
        .par_chunks(chunk_len)
        .map(|c| {
            let mut h = [0usize; BUCKETS];
            for &k in c {
                h[digit(k, shift)] += 1;
            }
            h
        })
        .collect();
    // 2. Output ranges in (digit, chunk) order; hand each chunk its slice for every digit.
    let mut outs: Vec<ChunkOut<'_>> = hists.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut totals = vec![0usize; BUCKETS];
    let (mut rest_k, mut rest_v) = (out_keys, out_values);
    for (d, total) in totals.iter_mut().enumerate() {
        for (c, h) in hists.iter().enumerate() {
            let (k, rk) = std::mem::take(&mut rest_k).split_at_mut(h[d]);
            let (v, rv) = std::mem::take(&mut rest_v).split_at_mut(h[d]);
            outs[c].0.push(k);
            outs[c].1.push(v);
            (rest_k, rest_v) = (rk, rv);
            *total += h[d];
        }
    }
    // 3. Scatter every chunk in order (stable).
    let jobs: Vec<_> = keys
        .chunks(chunk_len)
        .zip(values.chunks(chunk_len))
        .zip(outs)
        .collect();
    jobs.into_par_iter()
        .for_each(|((in_k, in_v), (mut dk, mut dv))| {
            let mut cursor = [0usize; BUCKETS];
            for (&k, &v) in in_k.iter().zip(in_v) {
                let d = digit(k, shift);
                let at = cursor[d];
                dk[d][at] = k;
                dv[d][at] = v;
                cursor[d] = at + 1;
            }
        });
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(codes: &[u64]) -> (Vec<u64>, Vec<u32>) {
        let mut p: Vec<(u64, u32)> = codes.iter().copied().zip(0..).collect();
        p.sort();
        p.into_iter().unzip()
    }

    #[test]
    fn matches_sort_by_code_then_index() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in [0usize, 1, 2, 7, 300, 5000, 70_000, 200_000] {
            for spread in [0u32, 1, 2] {
                let codes: Vec<u64> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        match spread {
                            // Few distinct high digits, many duplicates.
                            0 => (x & 0x7000_0000_0000_00ff) >> (x % 3),
                            1 => x >> 1,
                            _ => x % 1000,
                        }
                    })
                    .collect();
                assert_eq!(sort_codes(&codes), reference(&codes), "n = {n}");
            }
        }
    }
}
