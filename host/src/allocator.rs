//! The binary's allocator is mimalloc (`main.rs`); what the server asks of it beyond `alloc`,
//! and what else it gives back to the system once it is done with it.

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

/// Unmap the pages of read-only file mappings (the binary's code and constants, the compiled
/// engine's code, the shared libraries) that this process has touched so far; what runs again
/// is mapped again from the page cache on its next use (a minor fault, no disk read). Each
/// fault maps the 64 KiB around the page it needs (the kernel's fault-around), so the code that
/// ran once, at start-up (argument parsing, configuration, the engine's set-up, the index
/// restore) stayed resident beside what serving runs: about 15 MB of the stdio server's peak.
/// The pages stay in the page cache, shared with every other process of the same binary.
///
/// Only mappings that cannot be written and hold no private copy of a page are dropped: their
/// contents are exactly the file's, so dropping them changes nothing but residency. Linux
/// only (elsewhere a no-op); best effort (an unreadable `/proc` drops nothing).
pub fn release_clean_file_pages() {
    #[cfg(target_os = "linux")]
    {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return;
        };
        for (start, end) in clean_file_mappings(&smaps) {
            // SAFETY: `start..end` is a whole mapping of this process (page-aligned, from the
            // kernel's own list) that is read-only (it can never gain a private copy of a page)
            // and had no private copy when listed: every page in it is the file's page, so
            // MADV_DONTNEED only unmaps it and the next access maps the same bytes back. No
            // Rust object owns these pages' contents (they are code and constants of files).
            #[allow(unsafe_code)]
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            };
        }
    }
}

/// One mapping of `/proc/self/smaps`, as far as [`clean_file_mappings`] reads it.
struct Mapping {
    start: usize,
    end: usize,
    /// Readable, not writable, backed by a file.
    read_only_file: bool,
    rss_kb: u64,
    /// Pages copied on write (`None`: the field was not there).
    anonymous_kb: Option<u64>,
}

impl Mapping {
    /// Parse a mapping's first line: `start-end perms offset device inode [path]`.
    fn header(line: &str) -> Option<Self> {
        let mut fields = line.split_ascii_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        let perms = fields.next()?.as_bytes();
        let inode = fields.nth(2)?;
        let path = fields.next().unwrap_or("");
        Some(Self {
            start,
            end,
            read_only_file: perms.first() == Some(&b'r')
                && perms.get(1) == Some(&b'-')
                && inode != "0"
                && path.starts_with('/'),
            rss_kb: 0,
            anonymous_kb: None,
        })
    }

    fn clean(&self) -> bool {
        self.read_only_file && self.rss_kb > 0 && self.anonymous_kb == Some(0)
    }
}

/// The address ranges of the readable, not writable, file-backed mappings in `smaps` (the
/// text of `/proc/self/smaps`) that have resident pages and no page copied on write.
fn clean_file_mappings(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        let mut fields = line.split_ascii_whitespace();
        let kb = |f: &mut std::str::SplitAsciiWhitespace| f.next()?.parse::<u64>().ok();
        match fields.next() {
            Some("Rss:") => {
                if let Some(m) = current.as_mut() {
                    m.rss_kb = kb(&mut fields).unwrap_or(0);
                }
            }
            Some("Anonymous:") => {
                if let Some(m) = current.as_mut() {
                    m.anonymous_kb = kb(&mut fields);
                }
            }
            Some(first) if !first.ends_with(':') => {
                if let Some(m) = Mapping::header(line) {
                    out.extend(
                        current
                            .replace(m)
                            .filter(Mapping::clean)
                            .map(|m| (m.start, m.end)),
                    );
                }
            }
            _ => {}
        }
    }
    out.extend(current.filter(Mapping::clean).map(|m| (m.start, m.end)));
    out
}

#[cfg(test)]
mod tests {
    use super::clean_file_mappings;

    #[test]
    fn only_read_only_file_mappings_without_private_copies() {
        let smaps = "\
55d0a0000000-55d0a0100000 r--p 00000000 fd:01 123 /usr/bin/skills-mcp
Rss:                 512 kB
Anonymous:             0 kB
VmFlags: rd mr mw me dw sd
55d0a0100000-55d0a0900000 r-xp 00100000 fd:01 123 /usr/bin/skills-mcp
Size:               8192 kB
Rss:                4096 kB
Anonymous:             0 kB
55d0a0900000-55d0a0a00000 r--p 00900000 fd:01 123 /usr/bin/skills-mcp
Rss:                  64 kB
Anonymous:            64 kB
55d0a0a00000-55d0a0a10000 rw-p 00a00000 fd:01 123 /usr/bin/skills-mcp
Rss:                  64 kB
Anonymous:            12 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0 
Rss:                1024 kB
Anonymous:          1024 kB
7f0000200000-7f0000300000 r-xp 00000000 fd:01 456 /cache/engine.cwasm
Rss:                   0 kB
Anonymous:             0 kB
7f0000300000-7f0000400000 r--p 00000000 00:00 0 [vvar]
Rss:                   4 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r-xp 00000000 fd:01 789 /usr/lib/libc.so.6
Rss:                 900 kB
Anonymous:             0 kB
";
        assert_eq!(
            clean_file_mappings(smaps),
            vec![
                (0x55d0a0000000, 0x55d0a0100000),
                (0x55d0a0100000, 0x55d0a0900000),
                (0x7f0000400000, 0x7f0000500000),
            ]
        );
    }
}
