//! Tests: common.
//!
//! Small helpers shared by the test modules: fixture trees in temp dirs, the real binary, the
//! bundled skills folder, a catalog over some roots.

#![allow(dead_code)]

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use skills_mcp::usage::{Location, Store};
use tempfile::TempDir;

use skills_mcp::catalog::{Catalog, CatalogOptions, RootSpec};

/// The repository's bundled `skills/` folder.
pub fn bundled_skills() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills")
}

/// The repository's `tests/fixtures` folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A temp dir holding `files` (`(relative path, contents)`); parents are created.
pub fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write_files(dir.path(), files);
    dir
}

/// Write `files` below `root`, creating parents.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create parents");
        std::fs::write(&path, contents).expect("write fixture file");
    }
}

/// A hierarchical skill file: frontmatter with `description` and `keywords`, then `body`.
pub fn skill_md(description: &str, keywords: &[&str], body: &str) -> String {
    let keywords = keywords
        .iter()
        .map(|k| format!("  - {k}\n"))
        .collect::<String>();
    format!("---\ndescription: {description}\nkeywords:\n{keywords}---\n{body}\n")
}

/// An Agent Skills `SKILL.md`: `name` and `description`, then `body`.
pub fn agent_skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

/// A small tree with both shapes, inheritance, an asset override and a script.
pub fn sample_tree() -> tempfile::TempDir {
    tree(&[
        (
            "_root.md",
            &skill_md("Global rules", &["global"], "Be careful."),
        ),
        (
            "ui/_index.md",
            &skill_md("User interface rules", &["ui", "interface"], "UI rules."),
        ),
        (
            "ui/react/_index.md",
            "---\ndescription: React rules\nkeywords: [react]\nassets:\n  - file: assets/base.tsx\n    description: Base component\n    type: template\n---\nReact rules.\n",
        ),
        (
            "ui/react/_index/assets/base.tsx",
            "export const Base = 1;\n",
        ),
        (
            "ui/react/auth.md",
            "---\ndescription: React authentication components\nkeywords: [react, auth, login]\nassets:\n  - file: assets/base.tsx\n    description: Base with auth\n    type: template\n  - file: assets/logo.png\n    description: Logo\n    type: image\nscripts:\n  - file: scripts/check.sh\n    description: Check the config\n    execution: server\n    args:\n      - name: env_file\n        description: The env file\n---\nAuth rules.\n",
        ),
        (
            "ui/react/auth/assets/base.tsx",
            "export const AuthBase = 2;\n",
        ),
        ("ui/react/auth/assets/logo.png", "\u{89}PNG fake"),
        ("ui/react/auth/scripts/check.sh", "#!/bin/sh\necho ok\n"),
        (
            "tools/pdf/SKILL.md",
            &agent_skill_md(
                "pdf",
                "Extract text and tables from PDF files",
                "Use pdftotext.",
            ),
        ),
        ("tools/pdf/references/notes.md", "Some notes.\n"),
    ])
}

/// Catalog options for tests (defaults; the compiled engine is shared by the process).
pub fn options() -> CatalogOptions {
    CatalogOptions::default()
}

/// A catalog over `roots` with test options.
pub fn catalog(roots: &[&Path]) -> Catalog {
    Catalog::open(roots.iter().map(|r| RootSpec::new(*r)).collect(), options())
        .expect("open the catalog")
}

/// The real `skills-mcp` binary, with no roots from the environment, no index cache (the
/// index-cache tests turn it on in a folder of their own) and its usage store below the test
/// build's folder.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
    cmd.env_remove("SKILLS_DIR")
        .env("SKILLS_MCP_INDEX_CACHE", "off")
        // Usage is recorded under the test build's folder, not the tester's home.
        .env(
            "XDG_STATE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("state"),
        )
        .stdin(Stdio::null());
    cmd
}

/// The real binary as a stdio MCP server for an rmcp client (`TokioChildProcess`): [`bin`]'s
/// isolation, run in `home`, which is also its `HOME` and holds its usage store (`home/state`).
pub fn stdio_server(home: &Path) -> tokio::process::Command {
    let mut cmd = bin();
    cmd.current_dir(home)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"));
    tokio::process::Command::from(cmd)
}

/// Run the binary with `args` and return its output.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run skills-mcp")
}

/// Run the binary with `args` and `stdin`.
pub fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    use std::io::Write as _;
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skills-mcp");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for skills-mcp")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout parsed as JSON (panics with both streams when it is not).
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n--- stdout\n{}\n--- stderr\n{}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Assert the exit code, showing both streams when it differs.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

// ---- system services: PostgreSQL, nginx, a registry, skopeo ----

/// A system service some tests need. The README's test command runs on a machine with only what
/// the README asks for: a test whose service is missing is skipped ALOUD (a line on the real
/// stderr, and a summary when the test binary exits), and fails instead when `CI` is set, so CI
/// always runs it (`.ci/run` installs every service).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// PostgreSQL 15 or later, found by `pg_config` (its `--bindir` holds `initdb`, `pg_ctl`).
    Postgres,
    /// nginx (`nginx`).
    Nginx,
    /// Debian's docker-registry (`docker-registry`, the CNCF distribution registry).
    Registry,
    /// skopeo (`skopeo`).
    Skopeo,
}

/// The environment variable naming the folders [`require_service`] searches instead of `PATH`
/// and the system `sbin` folders. For testing the helper itself (tests/install.rs runs this
/// binary with it pointing at an empty folder); it can only make a service missing, and a
/// missing service fails the run when `CI` is set.
pub const SERVICE_PATH_VAR: &str = "SKILLS_MCP_TEST_SERVICE_PATH";

impl Service {
    pub const ALL: [Service; 4] = [
        Service::Postgres,
        Service::Nginx,
        Service::Registry,
        Service::Skopeo,
    ];

    /// What it is called in messages.
    pub fn name(self) -> &'static str {
        match self {
            Service::Postgres => "PostgreSQL 15 or later",
            Service::Nginx => "nginx",
            Service::Registry => "docker-registry",
            Service::Skopeo => "skopeo",
        }
    }

    /// The program the service is found by.
    pub fn program(self) -> &'static str {
        match self {
            Service::Postgres => "pg_config",
            Service::Nginx => "nginx",
            Service::Registry => "docker-registry",
            Service::Skopeo => "skopeo",
        }
    }

    /// The Debian package that installs it (what `.ci/run` installs).
    pub fn package(self) -> &'static str {
        match self {
            Service::Postgres => "postgresql",
            Service::Nginx => "nginx-light",
            Service::Registry => "docker-registry",
            Service::Skopeo => "skopeo",
        }
    }

    /// The program folder when the service is usable here, else why not.
    pub fn find(self) -> Result<PathBuf, String> {
        let program = find_program(self.program())
            .ok_or_else(|| format!("no `{}` on the search path", self.program()))?;
        match self {
            Service::Postgres => postgres_bindir(&program),
            _ => Ok(program.parent().map(Path::to_path_buf).unwrap_or_default()),
        }
    }
}

/// The service's program folder (PostgreSQL's `pg_config --bindir`; the folder holding `nginx`,
/// `docker-registry`, `skopeo`) when it is installed. When it is missing: outside CI, writes
/// `SKIPPED <test>: <why>; install: <command>` to the real stderr (not the test harness's
/// captured one) and returns None; with `CI` set, panics with that message.
///
/// `let Some(bin) = common::require_service(common::Service::Registry, "oci_push_pull") else { return; };`
pub fn require_service(service: Service, test: &str) -> Option<PathBuf> {
    let why = match service.find() {
        Ok(dir) => return Some(dir),
        Err(why) => why,
    };
    let line = format!(
        "SKIPPED {test}: {} is needed ({why}); install: apt-get install {}",
        service.name(),
        service.package()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{line} (CI is set: a missing service fails the run)");
    }
    skipped(test, service, &line);
    None
}

/// Every folder [`require_service`] looks in, in order.
fn search_path() -> Vec<PathBuf> {
    if let Some(dirs) = std::env::var_os(SERVICE_PATH_VAR) {
        return std::env::split_paths(&dirs).collect();
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // nginx is in /usr/sbin, which is not on a Debian user's PATH.
    for sbin in ["/usr/local/sbin", "/usr/sbin", "/sbin"] {
        if !dirs.iter().any(|d| d == Path::new(sbin)) {
            dirs.push(sbin.into());
        }
    }
    dirs
}

/// The first executable file `name` in [`search_path`].
fn find_program(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    search_path()
        .into_iter()
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// PostgreSQL's program folder by `pg_config`: version 15 or later, its `--bindir` holding the
/// server's tools, and (as root, since `initdb` refuses root) a `postgres` user to run them.
pub fn postgres_bindir(pg_config: &Path) -> Result<PathBuf, String> {
    let out = Command::new(pg_config)
        .args(["--version", "--bindir"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{} does not run: {e}", pg_config.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(version), Some(bindir)) = (lines.next(), lines.next()) else {
        return Err(format!(
            "{} --version --bindir answered {:?}{}",
            pg_config.display(),
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    };
    let major: Option<u32> = version
        .strip_prefix("PostgreSQL ")
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|m| m.parse().ok());
    match major {
        Some(m) if m >= 15 => {}
        _ => return Err(format!("{} says {version:?}", pg_config.display())),
    }
    let bindir = PathBuf::from(bindir.trim());
    for tool in ["initdb", "pg_ctl", "postgres"] {
        if !bindir.join(tool).is_file() {
            return Err(format!(
                "{} names {}, which has no `{tool}` (only the client library is installed)",
                pg_config.display(),
                bindir.display()
            ));
        }
    }
    if rustix::process::geteuid().is_root()
        && !Command::new("id")
            .args(["-u", "postgres"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    {
        return Err("running as root, and there is no `postgres` user to run initdb as".into());
    }
    Ok(bindir)
}

/// The tests skipped so far, printed again when the test binary exits.
static SKIPPED: std::sync::Mutex<Vec<(String, Service)>> = std::sync::Mutex::new(Vec::new());

/// Writes `line` to the real stderr (the harness captures only `eprint!`) and keeps the skip for
/// the summary printed at exit.
fn skipped(test: &str, service: Service, line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
    let mut all = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if all.is_empty() {
        // SAFETY: `atexit` takes a plain function, registered once; `print_skipped` does not
        // unwind (it neither panics nor calls anything that may: a poisoned lock is taken as
        // is, and a failed write is ignored).
        #[allow(unsafe_code)]
        unsafe {
            libc::atexit(print_skipped);
        }
    }
    all.push((test.to_owned(), service));
}

/// At exit, after the harness's `test result:` line: the skipped tests again, and one command
/// that installs what they need.
extern "C" fn print_skipped() {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let mut all = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out = format!(
        "\nSKIPPED {} test(s) for want of a system service (with CI set they fail instead):\n",
        all.len()
    );
    let mut packages: Vec<&str> = Vec::new();
    for (test, service) in all.iter() {
        let _ = writeln!(out, "  {test}: needs {}", service.name());
        if !packages.contains(&service.package()) {
            packages.push(service.package());
        }
    }
    packages.sort_unstable();
    let _ = writeln!(out, "install: apt-get install {}", packages.join(" "));
    let _ = std::io::stderr().write_all(out.as_bytes());
}

/// A PostgreSQL cluster of its own in a temporary folder, on a loopback port (as root through
/// `runuser -u postgres`, since `initdb` refuses root); stopped on drop. The usage-store tests
/// and the fleet test write to it. `bin` is [`require_service`]'s folder for
/// [`Service::Postgres`].
pub struct Pg {
    dir: TempDir,
    port: u16,
    bin: PathBuf,
}

pub const PG_PASSWORD: &str = "usage-secret";

impl Pg {
    pub fn start(bin: &Path) -> Pg {
        let dir = TempDir::new().unwrap();
        if rustix::process::geteuid().is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(ok.success());
        }
        std::fs::write(dir.path().join("pw"), PG_PASSWORD).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let pg = Pg {
            dir,
            port,
            bin: bin.to_path_buf(),
        };
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--pwfile",
                &pg.path("pw"),
                "--no-sync",
            ],
        );
        pg.up();
        pg
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    pub fn data(&self) -> String {
        self.path("data")
    }

    /// A PostgreSQL tool, as the `postgres` user when we are root (`initdb` refuses root).
    pub fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if rustix::process::geteuid().is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    pub fn run(&self, tool: &str, args: &[&str]) {
        let out = self
            .command(tool)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &self.path("log"),
                "-w",
                "start",
            ],
        );
    }

    pub fn down(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    pub fn url(&self) -> String {
        format!(
            "postgres://postgres:{PG_PASSWORD}@127.0.0.1:{}/postgres?sslmode=disable",
            self.port
        )
    }

    /// Rows per replica id of `skill_served`, and the total.
    pub fn served(&self) -> (Vec<(String, i64)>, i64) {
        let mut store = Store::open(&Location::Postgres(self.url())).unwrap();
        let rows = store
            .query(
                "SELECT replica_id, COUNT(*) FROM usage_events WHERE type = 'skill_served' GROUP BY replica_id ORDER BY 1",
                &[],
            )
            .unwrap();
        let per: Vec<(String, i64)> = rows.iter().map(|r| (r[0].text(), r[1].int())).collect();
        let total = per.iter().map(|(_, n)| n).sum();
        (per, total)
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Runs `cmd` (a tool a fixture needs: openssl, skopeo, git, the binary) and returns its stdout;
/// panics with the command and its stderr unless it exits 0.
#[track_caller]
pub fn succeed(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// An ECDSA P-256 key pair in `dir` as openssl writes it: `<name>.key` (private, PKCS#8 PEM)
/// and `<name>.pub` (public, SPKI PEM).
pub fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    succeed(
        Command::new("openssl")
            .args(["genpkey", "-algorithm", "EC"])
            .args(["-pkeyopt", "ec_paramgen_curve:P-256", "-out"])
            .arg(&private),
    );
    succeed(
        Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(&private)
            .arg("-out")
            .arg(&public),
    );
    (private, public)
}

/// A name part no earlier call returned (the clock, and a counter for calls within one tick):
/// for fresh files and folders.
pub fn unique_suffix() -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{nanos:x}-{call}")
}

/// Runs git for a fixture (identity and defaults from the environment, never the global config).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = succeed(
        Command::new("git")
            .args(["-c", "init.defaultBranch=main"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .env("GIT_TERMINAL_PROMPT", "0"),
    );
    String::from_utf8_lossy(&out).trim().to_owned()
}

/// One OCI source of `config` as a replica serves it: snapshots below `content`, fetches given
/// 10 s, tokens read through `env` (`|_| None`: anonymous).
pub fn oci_replica(
    config: skills_mcp::sources::oci::OciSourceConfig,
    content: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> std::sync::Arc<skills_mcp::sources::Sources> {
    use skills_mcp::sources::{GitConfig, SourceConfig, Sources};
    let sources = Sources::new(
        &[SourceConfig::Oci {
            config,
            insecure_registries: Vec::new(),
        }],
        &GitConfig {
            content_dir: content.to_path_buf(),
            timeout_seconds: 10,
        },
        env,
    )
    .unwrap();
    std::sync::Arc::new(sources)
}

/// A bare remote and a working clone that pushes to it.
pub struct Remote {
    pub tmp: TempDir,
}

impl Remote {
    pub fn new() -> Self {
        let tmp = TempDir::new().unwrap();
        git(tmp.path(), &["init", "--quiet", "--bare", "remote.git"]);
        git(tmp.path(), &["init", "--quiet", "work"]);
        let r = Self { tmp };
        git(
            &r.work(),
            &["remote", "add", "origin", r.bare().to_str().unwrap()],
        );
        r
    }

    pub fn bare(&self) -> PathBuf {
        self.tmp.path().join("remote.git")
    }

    pub fn work(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    pub fn url(&self) -> String {
        format!("file://{}", self.bare().display())
    }

    /// Writes files, commits and pushes; returns the new commit.
    pub fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (path, content) in files {
            let p = self.work().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        git(&self.work(), &["add", "-A"]);
        git(&self.work(), &["commit", "--quiet", "-m", message]);
        git(
            &self.work(),
            &["push", "--quiet", "--force", "origin", "HEAD:main"],
        );
        git(&self.bare(), &["update-server-info"]);
        git(&self.work(), &["rev-parse", "HEAD"])
    }

    pub fn remove(&self, path: &str, message: &str) -> String {
        git(&self.work(), &["rm", "--quiet", "-r", path]);
        git(&self.work(), &["commit", "--quiet", "-m", message]);
        git(&self.work(), &["push", "--quiet", "origin", "HEAD:main"]);
        git(&self.work(), &["rev-parse", "HEAD"])
    }
}

/// A `docker-registry` on 127.0.0.1 (Debian's, distribution 2.8; the path of
/// `require_service(Service::Registry, ..)`), stopped on drop; its storage outlives a restart.
pub struct Registry {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    bin: PathBuf,
    /// More configuration (YAML, top-level sections such as `auth:`).
    extra: String,
}

impl Registry {
    pub fn start(bin_dir: &Path, dir: &Path) -> Self {
        Self::start_with(bin_dir, dir, "")
    }

    /// A registry whose configuration ends with `extra` (e.g. an `auth: token:` section).
    pub fn start_with(bin_dir: &Path, dir: &Path, extra: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut r = Registry {
            dir: dir.to_path_buf(),
            port,
            child: None,
            bin: bin_dir.join("docker-registry"),
            extra: extra.to_owned(),
        };
        r.restart();
        r
    }

    pub fn restart(&mut self) {
        let config = self.dir.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{}\n{}",
                self.dir.join("storage").display(),
                self.port,
                self.extra
            ),
        )
        .unwrap();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("registry.log"))
            .unwrap();
        let child = Command::new(&self.bin)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start docker-registry");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = write!(s, "GET /v2/ HTTP/1.0\r\n\r\n");
                let mut line = String::new();
                let _ = std::io::BufReader::new(s).read_line(&mut line);
                // 401: a registry with authentication configured is up too.
                if line.contains("200") || line.contains("401") {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Requests the registry logged so far whose line contains `needle`.
    pub fn requests(&self, needle: &str) -> usize {
        std::fs::read_to_string(self.dir.join("registry.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"GET ") && l.contains(needle))
            .count()
    }

    /// The stored data file of `digest`.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}
