//! Process hardening at start-up: what a child (a skill's script, git) can learn about the
//! server.
//!
//! The server reads secrets from its environment (`GITHUB_TOKEN`, the `token_env` of each git
//! source, whatever the operator passes through) and keeps the ones it uses in memory. Linux
//! shows a process's original environment block in `/proc/PID/environ` (removing a variable
//! does not erase it there) and its memory in `/proc/PID/mem`, to any process of the same user
//! while the process is dumpable, and to root through `CAP_SYS_PTRACE` in any case. So, before
//! anything else runs:
//!
//! - the server marks itself non-dumpable (`PR_SET_DUMPABLE 0`): `/proc/PID/environ`, `mem`,
//!   `fd/`, `maps` and `ptrace` are then refused to every process without `CAP_SYS_PTRACE`,
//!   the server's own children included (and no core dump holds a secret);
//! - it removes from its capability bounding set the capabilities that read another process's
//!   memory: `CAP_SYS_PTRACE`, `CAP_SYS_RAWIO` (`/dev/mem`, `/proc/kcore`), `CAP_SYS_MODULE`,
//!   `CAP_SYS_ADMIN`, `CAP_BPF`, `CAP_PERFMON`, and clears its ambient set. The bounding set
//!   passes to every child and never grows again, so even a script the server starts as root
//!   cannot regain them. Without the right to change it (a server not run as root) this step
//!   is skipped: such a server has none of these capabilities to hand down anyway.
//!
//! Scripts' own environment is cleared besides ([`crate::scripts`]).

/// The capabilities no child of the server may hold (numbers from `linux/capability.h`).
const DROPPED: [(u32, &str); 6] = [
    (19, "CAP_SYS_PTRACE"),
    (17, "CAP_SYS_RAWIO"),
    (16, "CAP_SYS_MODULE"),
    (21, "CAP_SYS_ADMIN"),
    (39, "CAP_BPF"),
    (38, "CAP_PERFMON"),
];

/// Harden this process; call first thing in `main`, before any thread starts (capability sets
/// are per thread and copied to the threads started later). Failures are warnings: the server
/// serves either way.
pub fn at_start() {
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!("could not make the process non-dumpable: {e}");
    }
    let mut refused = Vec::new();
    for (cap, name) in DROPPED {
        // 1: in the set; 0: not in it; -1: a kernel that does not know this capability.
        if prctl::capbset_read(cap) == 1 && prctl::capbset_drop(cap) != 0 {
            refused.push(name);
        }
    }
    if !refused.is_empty() && rustix::process::geteuid().is_root() {
        tracing::warn!(
            "could not drop {} from the capability bounding set",
            refused.join(", ")
        );
    }
    prctl::clear_ambient();
}

/// The three `prctl` calls, the only unsafe code of the host besides loading the compiled
/// engine.
///
/// SAFETY (all three): `prctl` with these options takes only integer arguments, reads and
/// writes no memory of ours, and changes only this thread's capability sets; it cannot break
/// any invariant of Rust code. It is called before any other thread exists.
#[allow(unsafe_code)]
mod prctl {
    use libc::{PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_CAPBSET_DROP, PR_CAPBSET_READ};

    /// `prctl` is variadic: every argument is passed as the full `unsigned long` the kernel
    /// reads (unused ones must be 0 for `PR_CAP_AMBIENT`).
    const ZERO: libc::c_ulong = 0;

    pub fn capbset_read(cap: u32) -> i32 {
        // SAFETY: see the module docs.
        unsafe { libc::prctl(PR_CAPBSET_READ, libc::c_ulong::from(cap), ZERO, ZERO, ZERO) }
    }

    pub fn capbset_drop(cap: u32) -> i32 {
        // SAFETY: see the module docs.
        unsafe { libc::prctl(PR_CAPBSET_DROP, libc::c_ulong::from(cap), ZERO, ZERO, ZERO) }
    }

    pub fn clear_ambient() {
        let clear_all = PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        // SAFETY: see the module docs.
        let _ = unsafe { libc::prctl(PR_CAP_AMBIENT, clear_all, ZERO, ZERO, ZERO) };
    }
}
