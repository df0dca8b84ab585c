// The binary's allocator. Under HTTP load glibc's malloc took 12% of the server's CPU (most of
// it consolidating its fast bins whenever a block of 1 KiB or more was asked for); with
// mimalloc the server spends 15-25 µs less a search (docs/performance.md, "Search at scale").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of mimalloc's `mi_option_e` (not exported by `libmimalloc-sys`).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> std::process::ExitCode {
    // Freed memory goes back to the OS after 100 ms instead of mimalloc's 1 s (10 s for large
    // blocks), so the buffers of an index load are not resident beside the index; the
    // operator's MIMALLOC_PURGE_DELAY still decides when set. Set before any thread starts.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: one thread runs yet, and the option exists in mimalloc 2 and 3 alike.
        #[allow(unsafe_code)]
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 100)
        };
    }
    skills_mcp::cli::main()
}
