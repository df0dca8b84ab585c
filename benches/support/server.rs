//! A running `skills-mcp serve` on stdio, for the benches that measure the real binary
//! (`memory`, `perf_report`): JSON-RPC lines written to its stdin, its answers and its log
//! read line by line, its memory read from `/proc`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running `skills-mcp ... serve` on stdio.
pub struct Server {
    pub child: Child,
    stdin: ChildStdin,
    /// Its stdout (the protocol), line by line.
    pub lines: mpsc::Receiver<String>,
    /// Its stderr (the log), line by line.
    pub log: mpsc::Receiver<String>,
}

impl Server {
    /// Spawn `cmd` (the binary with its arguments, `serve` included) with piped stdio.
    pub fn spawn(mut cmd: Command) -> std::io::Result<Self> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let lines = lines_of(child.stdout.take().expect("stdout"));
        let log = lines_of(child.stderr.take().expect("stderr"));
        let stdin = child.stdin.take().expect("stdin");
        Ok(Self {
            child,
            stdin,
            lines,
            log,
        })
    }

    /// `initialize` as client `name`, wait for its answer, then `notifications/initialized`.
    pub fn initialize(&mut self, name: &str, timeout: Duration) -> Result<(), String> {
        self.send(&[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "0"}}}),
        ])
        .map_err(|e| format!("write: {e}"))?;
        self.answer(1, timeout).ok_or("no initialize answer")?;
        self.send(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})])
            .map_err(|e| format!("write: {e}"))
    }

    /// Write `messages`, one a line, at once.
    pub fn send(&mut self, messages: &[Value]) -> std::io::Result<()> {
        let mut text = String::new();
        for m in messages {
            text.push_str(&m.to_string());
            text.push('\n');
        }
        self.stdin.write_all(text.as_bytes())?;
        self.stdin.flush()
    }

    /// The answer to `id` within `timeout` (answers to other ids are dropped).
    pub fn answer(&self, id: u64, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.lines.recv_timeout(left).ok()?;
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v.get("id").and_then(Value::as_u64) == Some(id)
            {
                return Some(v);
            }
        }
    }

    /// A `tools/call` request.
    pub fn call(id: u64, tool: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})
    }

    /// The first log line for which `pick` gives a value, within `timeout`.
    pub fn find_in_log<T>(
        &self,
        timeout: Duration,
        mut pick: impl FnMut(&str) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.log.recv_timeout(left).ok()?;
            if let Some(v) = pick(&line) {
                return Some(v);
            }
        }
    }

    /// `VmRSS` and `VmHWM` (peak) of the server, in kB (Linux; 0 when unreadable).
    pub fn status_kb(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Resident kB of the largest anonymous mapping: the engine's linear memory (wasmtime
    /// maps each guest memory on its own), which never shrinks, so it holds the build's peak.
    pub fn guest_kb(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", self.child.id())).ok()?;
        let mut best = None;
        let mut anon = false;
        for line in smaps.lines() {
            let mut f = line.split_whitespace();
            let first = f.next().unwrap_or("");
            if first.contains('-') && !first.ends_with(':') {
                // A mapping header: address range, perms, offset, dev, inode, [path].
                anon = f.nth(4).is_none();
            } else if first == "Rss:" && anon {
                let kb: u64 = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                best = best.max(Some(kb));
            }
        }
        best
    }

    /// Close its stdin and wait up to 5 s for it to end; kill it otherwise.
    pub fn stop(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of `stream`, read on a thread of their own.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
