//! `--metrics-listen ADDR` (`server.metrics_listen`): `GET /metrics` on a listener of its own,
//! whatever the MCP transport, optionally behind a bearer token of its own
//! (`server.metrics_token_file`, or the variable named by `server.metrics_token_env`).
//!
//! ADDR is a port (`9464`, `:9464`: loopback), `IP:PORT` or `localhost:PORT`; an address that
//! is not loopback is used because the operator wrote it (a warning says so when no token
//! guards it). Nothing a skill or a client sends reaches this listener's configuration.

use std::{net::SocketAddr, sync::Arc};

use anyhow::{Context as _, Result, bail};
use axum::{
    Router,
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode, Uri, header},
    response::{IntoResponse, Response},
    routing::get,
};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::http::HttpConfig;

/// Shortest metrics token accepted.
const MIN_TOKEN_LEN: usize = 16;

/// The address of `metrics_listen`: a bare port means loopback.
pub fn parse_metrics_listen(addr: &str) -> Result<SocketAddr> {
    let addr = addr.trim();
    let with_host = if addr.parse::<u16>().is_ok() {
        format!(":{addr}")
    } else {
        addr.to_owned()
    };
    crate::http::parse_listen(&with_host)
        .map_err(|_| anyhow::anyhow!("a port (9464, :9464: loopback) or {}", listen_forms()))
}

fn listen_forms() -> &'static str {
    "an address such as 127.0.0.1:9464, [::1]:9464 or localhost:9464"
}

/// The metrics token, when one is configured: the first line of `metrics_token_file`, else
/// the variable `metrics_token_env` (read from `env`, or this process's environment).
pub fn load_token(
    config: &HttpConfig,
    env: Option<&std::collections::HashMap<String, String>>,
) -> Result<Option<String>> {
    let file = config.metrics_token_file.trim();
    let token = if !file.is_empty() {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading server.metrics_token_file {file}"))?;
        Some((
            text.lines().next().unwrap_or("").trim().to_owned(),
            file.to_owned(),
        ))
    } else if !config.metrics_token_env.is_empty() {
        let value = match env {
            Some(env) => env.get(&config.metrics_token_env).cloned(),
            None => std::env::var(&config.metrics_token_env).ok(),
        };
        value
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(|v| (v, format!("${}", config.metrics_token_env)))
    } else {
        None
    };
    match token {
        None => Ok(None),
        Some((t, from)) => {
            if t.len() < MIN_TOKEN_LEN || !t.bytes().all(|b| b.is_ascii_graphic()) {
                bail!(
                    "the metrics token of {from} must be at least {MIN_TOKEN_LEN} printable \
                     characters without spaces"
                );
            }
            Ok(Some(t))
        }
    }
}

struct Guard {
    /// SHA-256 of the token; `None`: open.
    hash: Option<[u8; 32]>,
}

/// Bind `metrics_listen` and serve `/metrics` on the current tokio runtime until the process
/// ends. Returns the bound address.
pub fn start(config: &HttpConfig) -> Result<SocketAddr> {
    let listen = &config.metrics_listen;
    let addr =
        parse_metrics_listen(listen).with_context(|| format!("--metrics-listen {listen:?}"))?;
    let token = load_token(config, None)?;
    if !addr.ip().to_canonical().is_loopback() && token.is_none() {
        tracing::warn!(
            "metrics on {addr} WITHOUT a token: anyone who can reach it can read them \
             (server.metrics_token_file or ${} sets one)",
            config.metrics_token_env
        );
    }
    let std = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot listen on {addr} for metrics"))?;
    std.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(std)?;
    let local = listener.local_addr()?;
    let guard = Arc::new(Guard {
        hash: token.map(|t| Sha256::digest(t.as_bytes()).into()),
    });
    let app = Router::new()
        .route("/metrics", get(scrape))
        .with_state(guard);
    tracing::info!("metrics on http://{local}/metrics");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!("metrics listener stopped: {e}");
        }
    });
    Ok(local)
}

async fn scrape(State(guard): State<Arc<Guard>>, headers: HeaderMap, uri: Uri) -> Response {
    if let Some(hash) = &guard.hash {
        // (the MCP endpoint's reading of the header: scheme in any case, one header only)
        let given = crate::http_auth::middleware::bearer_token(&headers, &uri)
            .ok()
            .flatten()
            .map(|t| <[u8; 32]>::from(Sha256::digest(t.as_bytes())));
        if !given.is_some_and(|g| bool::from(g.ct_eq(hash))) {
            let mut r = (StatusCode::UNAUTHORIZED, "a bearer token is needed\n").into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"metrics\""),
            );
            return r;
        }
    }
    let body = super::metrics().encode();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(prometheus_client::encoding::prometheus_text::CONTENT_TYPE),
        )],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_is_loopback() {
        assert_eq!(
            parse_metrics_listen("9464").unwrap().to_string(),
            "127.0.0.1:9464"
        );
        assert_eq!(
            parse_metrics_listen(":9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(
            parse_metrics_listen("0.0.0.0:9464").unwrap().to_string(),
            "0.0.0.0:9464"
        );
        assert!(parse_metrics_listen("example.com:1").is_err());
    }

    #[test]
    fn the_token_comes_from_the_variable_and_must_be_long() {
        let config = HttpConfig {
            metrics_token_env: "T".into(),
            ..HttpConfig::default()
        };
        let env = std::collections::HashMap::from([("T".to_string(), "short".to_string())]);
        assert!(load_token(&config, Some(&env)).is_err());
        let env = std::collections::HashMap::from([(
            "T".to_string(),
            "a-long-enough-token-1".to_string(),
        )]);
        assert_eq!(
            load_token(&config, Some(&env)).unwrap().as_deref(),
            Some("a-long-enough-token-1")
        );
        let env = std::collections::HashMap::new();
        assert_eq!(load_token(&config, Some(&env)).unwrap(), None);
    }
}
