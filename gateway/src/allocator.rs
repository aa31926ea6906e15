//! The process's allocator: mimalloc, called through its plain entry points whenever the
//! alignment asked for is one every mimalloc block has anyway.
//!
//! The `mimalloc` crate sends every request to `mi_malloc_aligned`. In mimalloc 3 that path
//! has a fast case only for blocks of at most 1 KiB whose size class has a free block at hand;
//! everything else (a hyper read buffer, a grown `Vec`, a rehashed map, a refill of an empty
//! size class) goes through its generic path, which for a size that is not a power of two
//! over-allocates by the alignment and aligns the pointer by hand: 19 such allocations per
//! proxied call, about 2% of the gateway's instructions (docs/benchmarks.md, "SSE answers on kept connections").
//! mimalloc 2 treated alignments up to 16 as natural; 3 no longer does. Rust's own `System`
//! allocator uses the same rule as here: `malloc` serves any alignment up to the platform's
//! minimum that is not larger than the size.

// An allocator is unsafe code by definition; this module holds nothing else.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every mimalloc block of at least this size has (`MI_MAX_ALIGN_SIZE`); a
/// smaller block is aligned to its size class, a multiple of the word size.
const NATURAL_ALIGN: usize = 16;

pub struct Mimalloc;

/// Whether plain `mi_malloc(size)` already returns memory aligned for `layout`.
fn natural(align: usize, size: usize) -> bool {
    align <= NATURAL_ALIGN && align <= size
}

// SAFETY: every pointer handed out comes from mimalloc with at least the layout's alignment
// (plain calls only where `natural` holds, aligned calls otherwise) and goes back to `mi_free`
// or mimalloc's realloc, which accept any mimalloc pointer.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation functions take any size and alignment.
        unsafe {
            if natural(layout.align(), layout.size()) {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if natural(layout.align(), layout.size()) {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator; the new block keeps the layout's alignment.
        unsafe {
            if natural(layout.align(), new_size) {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size up to a few pages and past mimalloc's small, medium and large classes, with
    /// every alignment from 1 to 4 KiB: each block is aligned as asked, writable over its whole
    /// size, keeps its bytes through a realloc, and zeroed blocks are zero.
    #[test]
    fn blocks_have_the_alignment_asked_for_and_survive_realloc() {
        let a = Mimalloc;
        let sizes = (1..=300).chain((301..20_000).step_by(97)).chain([
            65_536,
            65_537,
            300_000,
            2 << 20,
            (4 << 20) + 24,
        ]);
        for size in sizes {
            for shift in 0..=12 {
                let align = 1usize << shift;
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; each block is used within its size and freed once.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    std::ptr::write_bytes(p, 0xA5, size);
                    let grown = size + size / 2 + 1;
                    let q = a.realloc(p, layout, grown);
                    assert_eq!(
                        q as usize % align,
                        0,
                        "realloc {size}->{grown} align {align}"
                    );
                    assert_eq!(*q, 0xA5);
                    assert_eq!(*q.add(size - 1), 0xA5);
                    a.dealloc(q, Layout::from_size_align(grown, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed size {size} align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
