//! Running the system `git`: no stdin and no prompt, a timeout, credentials only in the child's
//! environment (never on its command line, never in `.git/config`), every surfaced message redacted.
//!
//! A token reaches git as `http.<origin>/.extraHeader = Authorization: Basic ...` through
//! `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`: environment variables are not
//! visible to other users in `ps` (unlike `-c` arguments), git does not write them anywhere, and the
//! header is scoped to the scheme, host and port of the source so it is not sent elsewhere.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow};
use base64::Engine as _;

/// Variables of the server's environment that would redirect git to another repository.
const CLEARED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// A secret string: its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct Secret(Arc<str>);

impl Secret {
    pub(crate) fn new(s: impl Into<Arc<str>>) -> Self {
        Self(s.into())
    }
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Removes secrets from text meant for a log, an error or a response.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<Secret>,
}

impl Redactor {
    fn add(&mut self, secret: &str) {
        // Very short strings would redact ordinary words; tokens are long.
        if secret.len() >= 4 && !self.secrets.iter().any(|s| s.expose() == secret) {
            self.secrets.push(Secret::new(secret));
        }
    }

    /// The text with every known secret and every URL password replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = strip_url_passwords(text);
        for s in &self.secrets {
            if out.contains(s.expose()) {
                out = out.replace(s.expose(), "***");
            }
        }
        out
    }
}

/// Replaces `user:password@` in every `scheme://user:password@host` of `text` by `***@`.
pub(crate) fn strip_url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) if authority[..at].contains(':') => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// A source URL split into what may be shown and what must not.
#[derive(Debug, Clone)]
pub(crate) struct PreparedUrl {
    /// The URL without a password: safe for command lines, logs and `.git/config`.
    pub(crate) clean: String,
    /// `scheme://host[:port]/` of an http(s) URL: the scope of the auth header.
    pub(crate) http_origin: Option<String>,
    /// `user:password` taken out of an http(s) URL.
    pub(crate) userinfo: Option<Secret>,
}

/// Splits credentials out of an http(s) URL; other URLs pass unchanged.
pub(crate) fn prepare_url(url: &str) -> PreparedUrl {
    let lower = url.to_ascii_lowercase();
    let scheme_len = if lower.starts_with("https://") {
        8
    } else if lower.starts_with("http://") {
        7
    } else {
        return PreparedUrl {
            clean: url.to_owned(),
            http_origin: None,
            userinfo: None,
        };
    };
    let (scheme, rest) = url.split_at(scheme_len);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    // A user name alone is not a secret and stays in the URL; `user:password` moves to a header.
    let (kept_user, secret) = match userinfo {
        Some(u) if u.contains(':') => (None, Some(Secret::new(u))),
        Some(u) => (Some(u), None),
        None => (None, None),
    };
    let clean = match kept_user {
        Some(u) => format!("{scheme}{u}@{host}{path}"),
        None => format!("{scheme}{host}{path}"),
    };
    PreparedUrl {
        clean,
        http_origin: Some(format!("{}{}/", scheme.to_ascii_lowercase(), host)),
        userinfo: secret,
    }
}

/// How git commands of one source are run.
#[derive(Debug, Clone)]
pub(crate) struct GitRunner {
    /// `(config key, header value)` given to git through its environment.
    auth: Option<(String, Secret)>,
    redactor: Redactor,
    timeout: Duration,
}

impl GitRunner {
    /// A runner for a source at `url`, with an optional token (`x-access-token` basic auth, as
    /// GitHub expects) that wins over credentials found in the URL.
    pub(crate) fn new(url: &PreparedUrl, token: Option<&str>, timeout: Duration) -> Self {
        let mut redactor = Redactor::default();
        let basic = match (token, &url.userinfo) {
            (Some(t), _) => {
                redactor.add(t);
                Some(format!("x-access-token:{t}"))
            }
            (None, Some(userinfo)) => {
                redactor.add(userinfo.expose());
                if let Some((_, password)) = userinfo.expose().split_once(':') {
                    redactor.add(password);
                }
                Some(userinfo.expose().to_owned())
            }
            (None, None) => None,
        };
        let auth = match (basic, &url.http_origin) {
            (Some(basic), Some(origin)) => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(basic.as_bytes());
                redactor.add(&encoded);
                redactor.add(&basic);
                Some((
                    format!("http.{origin}.extraHeader"),
                    Secret::new(format!("Authorization: Basic {encoded}")),
                ))
            }
            // A token only applies to http(s); ssh and file URLs use their own means.
            _ => None,
        };
        Self {
            auth,
            redactor,
            timeout,
        }
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The command that runs `git args...`: what will be executed, inspectable (tests check that no
    /// secret is on its command line).
    pub(crate) fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> std::process::Command {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args);
        for var in CLEARED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_HTTP_LOW_SPEED_LIMIT", "1000")
            .env("GIT_HTTP_LOW_SPEED_TIME", "60");
        if let Some((key, value)) = &self.auth {
            // Append to configuration the user may already pass this way.
            let n = std::env::var("GIT_CONFIG_COUNT")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            cmd.env("GIT_CONFIG_COUNT", (n + 1).to_string())
                .env(format!("GIT_CONFIG_KEY_{n}"), key)
                .env(format!("GIT_CONFIG_VALUE_{n}"), value.expose());
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs `git args...` (with extra environment variables) and returns its stdout; `what` names
    /// the operation in the error, which carries git's redacted stderr.
    pub(crate) async fn run<S: AsRef<OsStr>>(
        &self,
        what: &str,
        args: &[S],
        env: &[(&str, &OsStr)],
    ) -> Result<String> {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(true);
        let child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow!("{what}: the `git` command was not found; install git to use git sources")
            } else {
                anyhow!("{what}: could not start git: {e}")
            }
        })?;
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(out) => out.map_err(|e| anyhow!("{what}: waiting for git: {e}"))?,
            // Dropping the future drops the child, which kills it (kill_on_drop).
            Err(_) => {
                return Err(anyhow!(
                    "{what}: git did not finish within {}s and was stopped",
                    self.timeout.as_secs()
                ));
            }
        };
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let detail = last_lines(&self.redactor.redact(&stderr), 6);
        let status = match output.status.code() {
            Some(code) => format!("exit code {code}"),
            None => "killed by a signal".to_owned(),
        };
        Err(if detail.is_empty() {
            anyhow!("{what}: git failed ({status})")
        } else {
            anyhow!("{what}: git failed ({status}): {detail}")
        })
    }
}

/// The last `n` non-empty lines of `text`, joined with ` | `.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// `--git-dir=<path>` as one argument.
pub(crate) fn git_dir_arg(path: &Path) -> OsString {
    let mut arg = OsString::from("--git-dir=");
    arg.push(path);
    arg
}

/// `--work-tree=<path>` as one argument.
pub(crate) fn work_tree_arg(path: &Path) -> OsString {
    let mut arg = OsString::from("--work-tree=");
    arg.push(path);
    arg
}
