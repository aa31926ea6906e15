//! Giving freed memory back to the system after the large, short-lived bursts of allocations
//! the gateway makes: building the ONNX session of the embedding model, reading a large
//! catalog. Both allocators keep what was freed for reuse: glibc (ONNX Runtime's C++ side)
//! about 65 MB of graph-optimisation temporaries, mimalloc (the Rust side) about 60 MB around
//! the model bytes. An idle gateway with the model went from 279 MB to 217 MB RSS with glibc's
//! trim, and lower with mimalloc's collect as well (docs/benchmarks.md). mimalloc is also told
//! to purge freed pages at once during such bursts, and after a delay while serving; glibc is
//! kept to one arena. The project denies unsafe code; these calls are the exception: neither
//! allocator offers a safe wrapper, and none of the calls takes a pointer.

/// mimalloc's `mi_option_purge_delay`: the same index in its v2 and v3 headers; the Rust
/// bindings do not name it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// While serving, freed pages are handed back only after they stayed unused this long. With
/// no delay every page a call's buffers emptied was returned (`madvise`) and faulted in again
/// by the next call: against the microsecond fixture, 64 sessions, the gateway spent 0.113–0.139
/// ms of CPU per call with no delay and 0.084–0.112 ms with 1 s (docs/benchmarks.md).
const SERVING_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Bursts running now (see [`Burst`]); the lock also orders the option changes.
static BURSTS: std::sync::Mutex<Bursts> = std::sync::Mutex::new(Bursts(0));

/// How many bursts run; says which delay to set when one begins or ends.
struct Bursts(usize);

impl Bursts {
    /// The delay to set now, if it changes.
    fn begin(&mut self) -> Option<std::ffi::c_long> {
        self.0 += 1;
        (self.0 == 1).then_some(0)
    }

    fn end(&mut self) -> Option<std::ffi::c_long> {
        self.0 -= 1;
        (self.0 == 0).then_some(SERVING_PURGE_DELAY_MS)
    }
}

/// Whether the operator chose the delay (`MIMALLOC_PURGE_DELAY`): then it is never changed.
fn chosen_by_environment() -> bool {
    static CHOSEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| std::env::var_os("MIMALLOC_PURGE_DELAY").is_some())
}

#[allow(unsafe_code)]
fn set_purge_delay(ms: Option<std::ffi::c_long>) {
    let Some(ms) = ms else { return };
    if chosen_by_environment() {
        return;
    }
    // SAFETY: mi_option_set stores an integer option; no pointers, no preconditions.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms);
    }
}

/// Sets the serving delay; call once at start, before the first burst.
pub fn purge_freed_when_serving() {
    let bursts = BURSTS.lock().unwrap();
    if bursts.0 == 0 {
        set_purge_delay(Some(SERVING_PURGE_DELAY_MS));
    }
}

/// Held while a large, short-lived burst of allocations runs (a catalog read, indexing, the
/// model's session): freed pages are handed back at once meanwhile. With the serving delay,
/// worker threads that went idle after reading a 10k-tool catalog kept ~22 MB of freed memory
/// (the delay elapses only when the same thread allocates again; docs/benchmarks.md).
pub struct Burst(());

impl Burst {
    pub fn begin() -> Self {
        let mut bursts = BURSTS.lock().unwrap();
        set_purge_delay(bursts.begin());
        Burst(())
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        let mut bursts = BURSTS.lock().unwrap();
        set_purge_delay(bursts.end());
    }
}

/// Puts every thread's glibc allocations in one arena, unless the operator chose a number
/// (`MALLOC_ARENA_MAX`, which glibc reads itself). Only C code allocates there: ONNX Runtime's
/// sessions and inferences, SQLite. Each thread that ran an inference had its own arena, and
/// what stayed in them after the trim differed from run to run: with 10k tools indexed the
/// gateway's RSS was 195–243 MB, with one arena 178–204 MB, indexing as fast
/// (docs/benchmarks.md, "One glibc arena"). Call at start, before the model is loaded.
#[allow(unsafe_code)]
pub fn one_glibc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt sets an integer tunable of glibc's allocator; no pointers.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// Above this size glibc serves an allocation with its own mapping, returned when freed.
/// glibc's default starts at 128 KiB and rises to the largest block freed so far (up to 32 MiB),
/// after which ONNX Runtime's inference buffers (a few MiB each while indexing) came from the
/// heap, and a batch of long texts left it fragmented: indexing 10k tools with two sessions
/// peaked at 346–445 MB. Fixed at 2 MiB: 339–361 MB, as fast (docs/benchmarks.md, "glibc's
/// thresholds").
const MMAP_THRESHOLD: std::ffi::c_int = 2 << 20;

/// Free memory at the heap's top that glibc keeps instead of returning. Fixing the mmap
/// threshold also fixes this one at its 128 KiB default, and giving back and faulting in the
/// heap's top after every inference made indexing 17% slower.
const TRIM_THRESHOLD: std::ffi::c_int = 32 << 20;

/// Fixes glibc's mmap and trim thresholds ([`MMAP_THRESHOLD`], [`TRIM_THRESHOLD`]) unless the
/// operator set either (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`, or
/// `GLIBC_TUNABLES`, which glibc reads itself). Call at start, before the model is loaded.
#[allow(unsafe_code)]
pub fn glibc_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if !operator_set_thresholds(|name| std::env::var(name).ok()) {
        // SAFETY: mallopt sets integer tunables of glibc's allocator; no pointers.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}

/// Whether the environment (read through `var`) already sets glibc's thresholds.
fn operator_set_thresholds(var: impl Fn(&str) -> Option<String>) -> bool {
    var("MALLOC_MMAP_THRESHOLD_").is_some()
        || var("MALLOC_TRIM_THRESHOLD_").is_some()
        || var("GLIBC_TUNABLES").is_some_and(|t| t.contains("threshold"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operators_thresholds_are_left_alone() {
        let env = crate::testing::env_of;
        assert!(!operator_set_thresholds(env(&[])));
        assert!(!operator_set_thresholds(env(&[(
            "GLIBC_TUNABLES",
            "glibc.malloc.arena_max=2"
        )])));
        assert!(operator_set_thresholds(env(&[(
            "MALLOC_MMAP_THRESHOLD_",
            "131072"
        )])));
        assert!(operator_set_thresholds(env(&[(
            "MALLOC_TRIM_THRESHOLD_",
            "0"
        )])));
        assert!(operator_set_thresholds(env(&[(
            "GLIBC_TUNABLES",
            "glibc.malloc.mmap_threshold=65536"
        )])));
    }

    #[test]
    fn freed_pages_go_back_at_once_until_the_last_burst_ends() {
        let mut b = Bursts(0);
        assert_eq!(b.begin(), Some(0));
        assert_eq!(b.begin(), None, "already at once");
        assert_eq!(b.end(), None, "another burst still runs");
        assert_eq!(b.end(), Some(SERVING_PURGE_DELAY_MS));
        assert_eq!(b.begin(), Some(0));
    }
}
