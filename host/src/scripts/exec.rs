//! Spawning a planned script: no shell, its own process group, stdin closed, output capped,
//! SIGTERM then SIGKILL to the whole group on timeout.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::watch;

use super::cascade::{ScriptError, ScriptPlan};

/// How long output is still read once every process of the group has been killed (a process
/// that left the group may hold the pipes open; it does not hold the response).
const DRAIN: Duration = Duration::from_millis(1000);
/// Exit code reported for a run killed at its timeout.
pub const TIMEOUT_EXIT_CODE: i32 = 137;
pub(crate) const TIMEOUT_MARKER: &str = "\n[skills-mcp] Script killed: timeout exceeded.";

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub timeout: Duration,
    pub grace: Duration,
    pub max_output: usize,
}

/// One captured stream.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// At most `max_output` bytes.
    pub bytes: Vec<u8>,
    /// Bytes read in all (kept or discarded).
    pub total: u64,
}

impl Captured {
    pub fn truncated(&self) -> bool {
        self.total > self.bytes.len() as u64
    }

    /// The text, lossily decoded, with the truncation marker when bytes were discarded.
    pub fn text(&self, max_output: usize) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.truncated() {
            text.push_str(&format!(
                "\n[skills-mcp] Output truncated at {max_output} bytes."
            ));
        }
        text
    }
}

/// What happened to the process.
#[derive(Debug)]
pub(crate) struct Finished {
    pub exit_code: i32,
    pub timed_out: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
}

/// Signals the script's process group; on drop (the request was cancelled, or a panic),
/// SIGKILLs it so nothing outlives the run.
struct Group(Option<Pid>);

impl Group {
    /// `true` when at least one process received it.
    fn signal(&self, sig: Signal) -> bool {
        self.0
            .is_some_and(|pgid| kill_process_group(pgid, sig).is_ok())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal(Signal::KILL);
    }
}

fn exit_code(status: &ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|sig| 128 + sig))
        .unwrap_or(-1)
}

/// Open the planned script through its root's sandbox (cap-std: no `..`, no absolute path, no
/// symlink leads out of the root) and check that it is a regular file. What the runner is then
/// given is this open file (`/proc/self/fd/N`), so swapping a folder or the file for a symlink
/// after the checks cannot make it run anything else.
fn open_script(plan: &ScriptPlan) -> Result<std::fs::File, ScriptError> {
    let missing = |why: String| ScriptError::FileMissing {
        file: plan.file.clone(),
        path: PathBuf::from(format!("{} ({why})", plan.script_path.display())),
    };
    let rel = plan
        .script_path
        .strip_prefix(&plan.root_dir)
        .map_err(|_| missing("not inside its root".into()))?;
    let root = cap_std::fs::Dir::open_ambient_dir(&plan.root_dir, cap_std::ambient_authority())
        .map_err(|e| missing(format!("cannot open its root: {e}")))?;
    let file = root
        .open(rel)
        .map_err(|e| missing(format!("cannot open it inside its root: {e}")))?;
    let meta = file.metadata().map_err(|e| missing(e.to_string()))?;
    if !meta.is_file() {
        return Err(missing("not a regular file".into()));
    }
    Ok(file.into_std())
}

/// Let the child inherit one descriptor (every descriptor of the server is close-on-exec).
///
/// SAFETY: the closure runs in the forked child before `exec`; it calls only `fcntl`, which is
/// async-signal-safe, allocates nothing, and touches only the descriptor number it captured,
/// which the parent keeps open until the spawn returns.
#[allow(unsafe_code)]
fn inherit_fd(command: &mut Command, fd: std::os::fd::RawFd) {
    // SAFETY: see above.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A private folder (0700, removed on drop) holding one symlink named like the script
/// (`check.ts`) to `/proc/self/fd/N`: resolved by the runner, it is the runner's own descriptor
/// N, the file opened through the sandbox, while the runner still sees the script's name and
/// extension (which some runners, `tsx` for one, go by).
struct Alias(PathBuf);

impl Alias {
    fn new(plan: &ScriptPlan, fd: std::os::fd::RawFd) -> Result<(Self, PathBuf), ScriptError> {
        use std::os::unix::fs::DirBuilderExt as _;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "skills-mcp-run-{}-{}-{nanos:x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| ScriptError::SpawnFailed(format!("{}: {e}", dir.display())))?;
        let alias = Self(dir);
        let name = plan
            .script_path
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("script"));
        let link = alias.0.join(name);
        std::os::unix::fs::symlink(format!("/proc/self/fd/{fd}"), &link)
            .map_err(|e| ScriptError::SpawnFailed(format!("{}: {e}", link.display())))?;
        Ok((alias, link))
    }
}

impl Drop for Alias {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) async fn execute(plan: &ScriptPlan, limits: Limits) -> Result<Finished, ScriptError> {
    use std::os::fd::AsRawFd as _;
    let script = open_script(plan)?;
    let (_alias, link) = Alias::new(plan, script.as_raw_fd())?;
    let mut command = Command::new(&plan.program);
    inherit_fd(&mut command, script.as_raw_fd());
    command
        .args(&plan.program_args)
        .arg(&link)
        .current_dir(&plan.cwd)
        .env_clear()
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);

    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + limits.timeout);
    let mut child = command
        .spawn()
        .map_err(|e| ScriptError::SpawnFailed(format!("{}: {e}", plan.program.display())))?;
    // The child has its own copy of the descriptor now.
    drop(script);
    // The child leads its own group: its pid is the group id.
    let group = Group(child.id().and_then(|id| Pid::from_raw(id as i32)));

    let (stop_tx, stop_rx) = watch::channel(false);
    let stdout = child
        .stdout
        .take()
        .map(|r| tokio::spawn(capture(r, limits.max_output, stop_rx.clone())));
    let stderr = child
        .stderr
        .take()
        .map(|r| tokio::spawn(capture(r, limits.max_output, stop_rx.clone())));
    drop(stop_rx);

    let (status, timed_out) = tokio::select! {
        status = child.wait() => (status, false),
        () = tokio::time::sleep_until(deadline) => {
            group.signal(Signal::TERM);
            let status = match tokio::time::timeout(limits.grace, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    group.signal(Signal::KILL);
                    child.wait().await
                }
            };
            (status, true)
        }
    };
    // Whatever the leader left behind in its group dies with it.
    group.signal(Signal::KILL);
    let status = status.map_err(|e| ScriptError::SpawnFailed(format!("waiting for it: {e}")))?;

    // Read what is left in the pipes; a process that escaped the group and still holds them
    // open only delays the answer by DRAIN.
    let readers = async {
        let out = match stdout {
            Some(task) => task.await.unwrap_or_default(),
            None => Captured::default(),
        };
        let err = match stderr {
            Some(task) => task.await.unwrap_or_default(),
            None => Captured::default(),
        };
        (out, err)
    };
    tokio::pin!(readers);
    let (stdout, stderr) = tokio::select! {
        captured = &mut readers => captured,
        () = tokio::time::sleep(DRAIN) => {
            let _ = stop_tx.send(true);
            readers.await
        }
    };

    Ok(Finished {
        exit_code: if timed_out {
            TIMEOUT_EXIT_CODE
        } else {
            exit_code(&status)
        },
        timed_out,
        stdout,
        stderr,
        duration: started.elapsed(),
    })
}

/// Keep the first `cap` bytes of `reader`, read and discard the rest, until end of file or
/// `stop` (memory stays at `cap` plus one buffer, however much is written).
async fn capture<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    mut stop: watch::Receiver<bool>,
) -> Captured {
    let mut captured = Captured {
        bytes: Vec::with_capacity(cap.min(64 * 1024)),
        total: 0,
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            read = reader.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    captured.total += n as u64;
                    let room = cap.saturating_sub(captured.bytes.len());
                    captured.bytes.extend_from_slice(&buf[..n.min(room)]);
                }
            },
        }
    }
    captured
}
