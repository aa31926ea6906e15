//! Giving freed memory back to the system after the large, short-lived bursts of allocations
//! the gateway makes: building the ONNX session of the embedding model, reading a large
//! catalog. Both allocators keep what was freed for reuse: glibc (ONNX Runtime's C++ side)
//! about 65 MB of graph-optimisation temporaries, mimalloc (the Rust side) about 60 MB around
//! the model bytes. An idle gateway with the model went from 279 MB to 217 MB RSS with glibc's
//! trim, and lower with mimalloc's collect as well (docs/benchmarks.md). mimalloc is also told
//! to purge freed pages at once. The project denies unsafe code; these three calls are the
//! exception: neither allocator offers a safe wrapper, and none of the calls takes a pointer.

/// mimalloc's `mi_option_purge_delay`: the same index in its v2 and v3 headers; the Rust
/// bindings do not name it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc hand freed pages back at once instead of after a delay that only elapses
/// when the same thread allocates again: after a large catalog was read, idle worker threads
/// kept ~68 MB of freed memory (10k tools, docs/benchmarks.md). Throughput was unchanged.
/// `MIMALLOC_PURGE_DELAY` in the environment still decides when it is set.
#[allow(unsafe_code)]
pub fn purge_freed_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: mi_option_set stores an integer option; no pointers, no preconditions.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

/// Returns free memory both allocators hold to the system. Call after a burst, not in a loop.
#[allow(unsafe_code)]
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim walks glibc's own heaps; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
    // SAFETY: mi_collect only frees what mimalloc itself holds unused; no preconditions.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}
