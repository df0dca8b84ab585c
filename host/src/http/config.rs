//! The `server` section of the configuration (how `serve` listens), the flags that override it
//! and the address rules. [`crate::config`] embeds the section; it checks itself here.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// The `server` section of the configuration: how `serve` listens. Only the operator sets it
/// (`--config FILE` and flags); a root's `config.yaml` cannot (its `server` section is ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    /// `stdio` (the default) or `http`.
    pub transport: Transport,
    /// Address `serve --http` listens on when no ADDR is given.
    pub listen: String,
    /// `Host` header values accepted at `/mcp` (names, or `name:port`); `"*"` accepts any.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted at `/mcp` (`scheme://host[:port|:*]`); any other is 403. A
    /// request without `Origin` (not from a browser) is accepted.
    pub allowed_origins: Vec<String>,
    /// Allow listening on a non-loopback address without authentication (open to everyone).
    pub public_without_auth: bool,
    /// Largest request body, in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// Seconds to read a request and produce its response head (504 beyond).
    pub request_timeout_seconds: u64,
    /// Most requests handled at once; beyond, 503 at once (never a queue).
    pub max_in_flight: usize,
    /// Seconds a connection may take to send a request's headers, or stay idle between
    /// requests, before it is closed.
    pub header_read_timeout_seconds: u64,
    /// Seconds a shutdown waits for requests in flight.
    pub shutdown_grace_seconds: u64,
    /// Seconds between the stop signal and closing the listener: `/readyz` answers 503 while
    /// requests are still served, so a load balancer takes the replica out first (the drain).
    pub shutdown_delay_seconds: u64,
    /// Sessions and SSE streams for clients older than 2026-07-28 (`initialize` clients). Off:
    /// every request is answered statelessly (any replica can answer any request), and such
    /// clients get no list-changed notifications.
    pub sessions: bool,
    /// Where `GET /metrics` is served (Prometheus text format), on a listener of its own, with
    /// either transport; empty: not served. A port alone is loopback. See docs/operations.md.
    pub metrics_listen: String,
    /// File whose first line is the bearer token `/metrics` asks for (empty: see
    /// `metrics_token_env`).
    pub metrics_token_file: String,
    /// Environment variable holding that token when no file is given (unset or empty: open).
    pub metrics_token_env: String,
}

/// How `serve` speaks MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Http,
}

/// The default listening address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            transport: Transport::Stdio,
            listen: DEFAULT_LISTEN.into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ]
            .map(String::from)
            .to_vec(),
            public_without_auth: false,
            max_body_bytes: 1 << 20,
            request_timeout_seconds: 30,
            max_in_flight: 256,
            header_read_timeout_seconds: 10,
            shutdown_grace_seconds: 10,
            shutdown_delay_seconds: 5,
            sessions: true,
            metrics_listen: String::new(),
            metrics_token_file: String::new(),
            metrics_token_env: "SKILLS_MCP_METRICS_TOKEN".into(),
        }
    }
}

impl crate::config::check::Section for HttpConfig {
    fn check(&self, c: &mut crate::config::check::Checks) {
        if let Err(e) = parse_listen(&self.listen) {
            c.need(
                false,
                "server.listen",
                format!("{:?}", self.listen),
                &e.to_string(),
            );
        }
        if !self.metrics_listen.trim().is_empty()
            && let Err(e) = crate::telemetry::listener::parse_metrics_listen(&self.metrics_listen)
        {
            c.need(
                false,
                "server.metrics_listen",
                format!("{:?}", self.metrics_listen),
                &e.to_string(),
            );
        }
        c.at_least(
            "server.max_body_bytes",
            self.max_body_bytes as u64,
            1024,
            "a whole number of bytes, at least 1024",
        );
        c.within(
            "server.request_timeout_seconds",
            self.request_timeout_seconds,
            1..=3600,
            "a whole number of seconds from 1 to 3600",
        );
        c.within(
            "server.max_in_flight",
            self.max_in_flight,
            1..=65_536,
            "a whole number of requests from 1 to 65536",
        );
        c.within(
            "server.header_read_timeout_seconds",
            self.header_read_timeout_seconds,
            1..=3600,
            "a whole number of seconds from 1 to 3600",
        );
        c.within(
            "server.shutdown_grace_seconds",
            self.shutdown_grace_seconds,
            0..=3600,
            "a whole number of seconds from 0 to 3600",
        );
        c.within(
            "server.shutdown_delay_seconds",
            self.shutdown_delay_seconds,
            0..=3600,
            "a whole number of seconds from 0 to 3600",
        );
        c.need(
            !self.allowed_hosts.is_empty(),
            "server.allowed_hosts",
            "[]",
            "host names (\"*\" accepts any Host)",
        );
        for origin in &self.allowed_origins {
            let ok = origin == "null"
                || origin
                    .split_once("://")
                    .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty());
            c.need(
                ok,
                "server.allowed_origins",
                format!("{origin:?}"),
                "origins such as \"https://app.example.com\" or \"http://localhost:*\"",
            );
        }
    }
}

/// What `serve --http` was asked on the command line (flags win over the `server` section).
#[derive(Debug, Clone, Default)]
pub struct HttpFlags {
    /// `--http ADDR` (the configured `server.listen` when `None`).
    pub listen: Option<String>,
    /// `--public-without-auth`.
    pub public_without_auth: bool,
    /// `--allowed-host` (added to the configured ones).
    pub allowed_hosts: Vec<String>,
    /// `--allowed-origin` (added to the configured ones).
    pub allowed_origins: Vec<String>,
    /// `--shutdown-delay SECONDS`.
    pub shutdown_delay_seconds: Option<u64>,
}

impl HttpFlags {
    /// The configuration with these flags applied.
    pub fn apply(&self, config: &HttpConfig) -> HttpConfig {
        let mut c = config.clone();
        if let Some(listen) = &self.listen {
            c.listen = listen.clone();
        }
        c.public_without_auth |= self.public_without_auth;
        if let Some(delay) = self.shutdown_delay_seconds {
            c.shutdown_delay_seconds = delay;
        }
        c.allowed_hosts.extend(self.allowed_hosts.iter().cloned());
        c.allowed_origins
            .extend(self.allowed_origins.iter().cloned());
        c
    }
}

/// `ADDR` as a socket address: `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT` or `:PORT` (loopback).
pub fn parse_listen(addr: &str) -> Result<SocketAddr> {
    let addr = addr.trim();
    if let Ok(a) = addr.parse::<SocketAddr>() {
        return Ok(a);
    }
    let port = addr
        .strip_prefix("localhost:")
        .or_else(|| addr.strip_prefix(':'));
    if let Some(port) = port
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    bail!("an address such as 127.0.0.1:8080, [::1]:8080, localhost:8080 or :8080")
}

/// Whether the server may listen on `addr`: a loopback address always; any other only when
/// authentication is configured or the operator opened the server to everyone.
pub fn check_listen(
    addr: SocketAddr,
    auth_configured: bool,
    public_without_auth: bool,
) -> Result<()> {
    if addr.ip().to_canonical().is_loopback() || auth_configured || public_without_auth {
        return Ok(());
    }
    bail!(
        "refusing to listen on {addr}: it is not a loopback address and no authentication is \
         configured, so anyone who can reach it could use this server. Listen on 127.0.0.1 \
         (behind a reverse proxy that authenticates), configure authentication, or pass \
         --public-without-auth (server.public_without_auth: true) to serve everyone"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::check::{Checks, Section};

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_listen(":8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(
            parse_listen("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(parse_listen("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert!(parse_listen("example.com:80").is_err());
        assert!(parse_listen("127.0.0.1").is_err());
    }

    #[test]
    fn only_loopback_listens_without_auth() {
        let public: SocketAddr = "0.0.0.0:80".parse().unwrap();
        assert!(check_listen(public, false, false).is_err());
        assert!(check_listen(public, true, false).is_ok());
        assert!(check_listen(public, false, true).is_ok());
        assert!(check_listen("127.0.0.1:80".parse().unwrap(), false, false).is_ok());
    }

    #[test]
    fn the_section_checks_itself() {
        let mut c = Checks::default();
        HttpConfig::default().check(&mut c);
        assert!(c.into_vec().is_empty());
        let bad = HttpConfig {
            listen: "nowhere".into(),
            max_body_bytes: 10,
            shutdown_delay_seconds: 3601,
            allowed_hosts: vec![],
            allowed_origins: vec!["x".into()],
            ..HttpConfig::default()
        };
        let mut c = Checks::default();
        bad.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(
            keys,
            [
                "server.listen",
                "server.max_body_bytes",
                "server.shutdown_delay_seconds",
                "server.allowed_hosts",
                "server.allowed_origins"
            ]
        );
    }

    #[test]
    fn flags_win_and_add() {
        let flags = HttpFlags {
            listen: Some(":1".into()),
            public_without_auth: true,
            allowed_hosts: vec!["a.example".into()],
            allowed_origins: vec![],
            shutdown_delay_seconds: Some(0),
        };
        let c = flags.apply(&HttpConfig::default());
        assert_eq!(c.listen, ":1");
        assert_eq!(c.shutdown_delay_seconds, 0);
        assert!(c.public_without_auth);
        assert_eq!(
            c.allowed_hosts.last().map(String::as_str),
            Some("a.example")
        );
    }
}
