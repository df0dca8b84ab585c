//! The `Host` and `Origin` checks of every browser-reachable endpoint: the HTTP server's `/mcp`
//! and the editor's (`skills-mcp editor`). One layer, so both refuse the same way.
//!
//! - `Host` must name an allowed host (`name`, or `name:port` for that port only; `"*"` accepts
//!   any): a page that rebinds its own DNS name to 127.0.0.1 still sends its own name, and is
//!   refused (403). A `Host` that is not an authority is 400.
//! - `Origin`, when a browser sends one, must be an allowed origin (`scheme://host[:port]`,
//!   `:*` for any port; an entry without a port matches any port, as rmcp's did; `null`
//!   matches `null`): another site's page is refused (403). A request without `Origin` (not
//!   from a browser, or a same-origin GET) is accepted.
//!
//! Refusals are marked `Refused("host_origin")` for the metrics, and logged at warning level.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, StatusCode, Uri, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::telemetry::metrics::Refused;

/// The allowed `Host` and `Origin` values, parsed once.
#[derive(Debug, Clone)]
pub struct Guard {
    /// `None`: any host (`"*"`).
    hosts: Option<Vec<Authority>>,
    origins: Vec<AllowedOrigin>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AllowedPort {
    /// `:*`, or no port in the entry.
    Any,
    Exact(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum AllowedOrigin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: AllowedPort,
    },
}

impl Guard {
    /// A guard over `hosts` (names or `name:port`; `"*"` accepts any) and `origins`
    /// (`scheme://host[:port|:*]` or `null`). Entries that do not parse match nothing (the
    /// configuration's checks report them).
    pub fn new(hosts: &[String], origins: &[String]) -> Self {
        let hosts = if hosts.iter().any(|h| h.trim() == "*") {
            None
        } else {
            Some(hosts.iter().filter_map(|h| parse_allowed_host(h)).collect())
        };
        let origins = origins
            .iter()
            .filter_map(|o| parse_allowed_origin(o))
            .collect();
        Self { hosts, origins }
    }

    /// `Ok` when the request may go on; else the status and message of the refusal.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = match headers.get(header::HOST) {
            Some(value) => value
                .to_str()
                .ok()
                .and_then(|s| axum::http::uri::Authority::try_from(s).ok())
                .map(|a| authority(a.host(), a.port_u16()))
                .ok_or_else(|| {
                    refuse(StatusCode::BAD_REQUEST, "Bad Request: invalid Host header")
                })?,
            None => uri
                .authority()
                .map(|a| authority(a.host(), a.port_u16()))
                .ok_or_else(|| {
                    refuse(StatusCode::BAD_REQUEST, "Bad Request: missing Host header")
                })?,
        };
        if !self.host_allowed(&host) {
            tracing::warn!(
                "http: refused a request with Host \"{}\" (possible DNS rebinding)",
                crate::logsafe::Escaped(&host.host)
            );
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            ));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin
            .to_str()
            .ok()
            .and_then(parse_origin)
            .ok_or_else(|| refuse(StatusCode::FORBIDDEN, "Forbidden: invalid Origin header"))?;
        if !self.origin_allowed(&origin) {
            tracing::warn!("http: refused a request from a foreign Origin (cross-site)");
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed",
            ));
        }
        Ok(())
    }

    fn host_allowed(&self, host: &Authority) -> bool {
        let Some(hosts) = &self.hosts else {
            return true;
        };
        hosts
            .iter()
            .any(|a| a.host == host.host && a.port.is_none_or(|p| host.port == Some(p)))
    }

    fn origin_allowed(&self, origin: &Origin) -> bool {
        self.origins.iter().any(|allowed| match (allowed, origin) {
            (AllowedOrigin::Null, Origin::Null) => true,
            (
                AllowedOrigin::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => {
                scheme == s
                    && host == h
                    && match port {
                        AllowedPort::Any => true,
                        AllowedPort::Exact(want) => p.or_else(|| default_port(s)) == Some(*want),
                    }
            }
            _ => false,
        })
    }
}

/// The layer: `axum::middleware::from_fn_with_state(guard, guard::layer)`.
pub async fn layer(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match guard.check(request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(Refusal(status, message)) => {
            let mut r = (status, format!("{message}\n")).into_response();
            r.extensions_mut().insert(Refused("host_origin"));
            r
        }
    }
}

/// Why [`Guard::check`] refused a request: the status (403, or 400 for a malformed `Host`) and
/// the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal(pub StatusCode, pub &'static str);

fn refuse(status: StatusCode, message: &'static str) -> Refusal {
    Refusal(status, message)
}

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn authority(host: &str, port: Option<u16>) -> Authority {
    Authority {
        host: normalize_host(host),
        port,
    }
}

fn parse_allowed_host(allowed: &str) -> Option<Authority> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    Some(match axum::http::uri::Authority::try_from(allowed) {
        Ok(a) => authority(a.host(), a.port_u16()),
        // `::1` alone is not an authority.
        Err(_) => authority(allowed, None),
    })
}

fn parse_origin(value: &str) -> Option<Origin> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let uri = Uri::try_from(value).ok()?;
    let a = uri.authority()?;
    Some(Origin::Tuple {
        scheme: uri.scheme_str()?.to_ascii_lowercase(),
        host: normalize_host(a.host()),
        port: a.port_u16(),
    })
}

fn parse_allowed_origin(value: &str) -> Option<AllowedOrigin> {
    let value = value.trim();
    let (base, any_port) = match value.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (value, false),
    };
    Some(match parse_origin(base)? {
        Origin::Null if !any_port => AllowedOrigin::Null,
        Origin::Null => return None,
        Origin::Tuple { scheme, host, port } => AllowedOrigin::Tuple {
            scheme,
            host,
            port: match (port, any_port) {
                (Some(_), true) => return None,
                (Some(p), false) => AllowedPort::Exact(p),
                (None, _) => AllowedPort::Any,
            },
        },
    })
}

/// The port a scheme implies when an origin omits it (RFC 6454).
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    fn status(g: &Guard, host: &str, origin: Option<&str>) -> u16 {
        match g.check(&Uri::from_static("/mcp"), &headers(host, origin)) {
            Ok(()) => 200,
            Err(r) => r.0.as_u16(),
        }
    }

    #[test]
    fn hosts_and_origins() {
        let d = crate::http::HttpConfig::default();
        let g = Guard::new(&d.allowed_hosts, &d.allowed_origins);
        assert_eq!(status(&g, "127.0.0.1:8080", None), 200);
        assert_eq!(status(&g, "LOCALHOST", None), 200);
        assert_eq!(status(&g, "[::1]:9", Some("http://[::1]:9")), 200);
        assert_eq!(
            status(&g, "localhost:1", Some("http://localhost:3000")),
            200
        );
        assert_eq!(status(&g, "evil.example.com", None), 403);
        assert_eq!(
            status(&g, "127.0.0.1", Some("http://evil.example.com")),
            403
        );
        assert_eq!(status(&g, "127.0.0.1", Some("not an origin")), 403);
        assert_eq!(status(&g, "bad host/", None), 400);

        // Exact ports: the editor's own origin only.
        let hosts = ["127.0.0.1:5000".to_string()];
        let origins = ["http://127.0.0.1:5000".to_string()];
        let g = Guard::new(&hosts, &origins);
        assert_eq!(
            status(&g, "127.0.0.1:5000", Some("http://127.0.0.1:5000")),
            200
        );
        assert_eq!(status(&g, "127.0.0.1:5001", None), 403);
        assert_eq!(
            status(&g, "127.0.0.1:5000", Some("http://127.0.0.1:5001")),
            403
        );
        assert_eq!(
            status(&g, "127.0.0.1:5000", Some("https://127.0.0.1:5000")),
            403
        );
        assert_eq!(status(&g, "127.0.0.1:5000", Some("null")), 403);

        let any = Guard::new(&["*".to_string()], &["null".to_string()]);
        assert_eq!(status(&any, "anything.example", Some("null")), 200);
        assert_eq!(
            status(&any, "anything.example", Some("http://a.example")),
            403
        );
        assert_eq!(
            Guard::new(&[], &["http://a.example:443:*".into()]).origins,
            []
        );
    }
}
