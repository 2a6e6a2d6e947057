//! Allocation of the builders' large arrays (codes, sort scratch, nodes: tens of MB for a
//! million triangles).
//!
//! Fresh memory is mapped 4 KiB at a time on first touch, and on a virtual machine each of those
//! page faults costs microseconds: for a 1M-triangle LBVH, faulting in the arrays took as long
//! as building them. On Linux, arrays of at least [`HUGE_MIN_BYTES`] ask for transparent huge
//! pages (`madvise(MADV_HUGEPAGE)`, honoured when THP is in `madvise` or `always` mode), which
//! cuts the faults 512-fold. Elsewhere, or when the kernel declines, they are ordinary vectors.

/// Arrays at least this large ask for huge pages.
pub const HUGE_MIN_BYTES: usize = 4 << 20;

/// An empty vector with room for `capacity` elements, its buffer advised to use huge pages
/// (fill it with `par_extend` so the threads share the page faults).
pub fn with_capacity<T>(capacity: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(capacity);
    advise_huge(v.as_mut_ptr().cast(), capacity * std::mem::size_of::<T>());
    v
}

/// `len` zeroed elements straight from the allocator (large ones are fresh, untouched pages),
/// advised to use huge pages before anything touches them.
pub fn zeroed<T: bytemuck::Zeroable>(len: usize) -> Vec<T> {
    let mut v: Vec<T> = bytemuck::allocation::zeroed_vec(len);
    advise_huge(v.as_mut_ptr().cast(), len * std::mem::size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    const PAGE: usize = 4096;
    if bytes < HUGE_MIN_BYTES {
        return;
    }
    // madvise wants a page-aligned start; the allocator's pointer sits just past a header.
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + bytes) / PAGE * PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside one live allocation owned by the caller's vector;
        // MADV_HUGEPAGE only changes how the kernel backs those pages, never their contents or
        // validity, and a failure (e.g. THP disabled) leaves ordinary pages.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}
