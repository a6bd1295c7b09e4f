//! What the long-running server asks of its process: an allocator that gives memory back,
//! and as many file descriptors as it is allowed.
//!
//! glibc's malloc raises its mmap threshold to the size of the largest block freed, so
//! after one key check (argon2id works in 19 MiB) such blocks come from the heap of
//! whichever thread ran it and stay there: each wrong key sent in an inclusion request
//! left the resolver some 19 MiB larger. A fixed threshold keeps large blocks in mmap
//! (given back when freed), two arenas bound the per-thread heaps, and
//! [`give_back_memory`] returns what a burst of connections freed.

/// Blocks of this size or more are mapped on their own and unmapped when freed.
#[cfg(target_env = "gnu")]
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;
/// Heaps malloc keeps for the threads (tokio's workers and the blocking pool).
#[cfg(target_env = "gnu")]
const ARENAS: libc::c_int = 2;

/// Sets the allocator up for a long-running server; call before any thread starts.
pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets malloc's parameters; no thread allocates yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}

/// Returns to the system the memory freed inside malloc's heaps.
pub fn give_back_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim is thread-safe and only releases free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Raises the soft limit of open files to the hard one; returns the limit now.
pub fn raise_open_files() -> u64 {
    ibi::process::raise_open_files(u64::MAX).unwrap_or(u64::MAX)
}
