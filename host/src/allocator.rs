//! The binary's allocator is mimalloc (`main.rs`); what the server asks of it beyond `alloc`.

/// Give the memory freed so far back to the system now. mimalloc purges freed pages lazily,
/// on a later allocation: a server idle after a burst of rebuilds would otherwise keep their
/// freed pages resident. Forced: this thread's pages are collected and every arena's pending
/// purges done at once (a few milliseconds; called once per rebuild, never per request).
pub fn release_freed() {
    // SAFETY: `mi_collect` takes no pointer and only walks mimalloc's own state; it is safe to
    // call from any thread at any time (also when mimalloc is not the global allocator: then
    // it has nothing to collect).
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(true)
    };
}
