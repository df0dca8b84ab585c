//! Skills from git repositories: clone, fetch, recover, periodic refresh, with the system git (seed 004 section 9).
