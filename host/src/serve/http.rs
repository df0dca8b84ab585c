//! MCP over Streamable HTTP over the one start-up ([`super::run`]); the endpoint, its limits
//! and its probes are [`crate::http`]'s.

use std::{sync::Arc, time::Duration};

use anyhow::{Context as _, Result, anyhow};

use super::{Index, Stop, Transport};
use crate::http::{HttpConfig, HttpState, check_listen, parse_listen, router, with_limits};
use crate::http_auth::Authenticator;

/// `serve --http`: listen on `server.listen`, answer `/healthz` at once and `/mcp` once the
/// index is built; a stop signal drains ([`super::drain`]: `/readyz` 503 for
/// `server.shutdown_delay_seconds`), then stops accepting and lets requests in flight finish.
pub struct Http {
    config: HttpConfig,
    replica: String,
    auth: Option<Arc<Authenticator>>,
    listener: Option<tokio::net::TcpListener>,
}

impl Http {
    /// Serve with `config` (flags applied) behind `auth`, when configured.
    pub fn new(config: HttpConfig, auth: Option<Arc<Authenticator>>) -> Self {
        Self {
            config,
            replica: String::new(),
            auth,
            listener: None,
        }
    }

    /// Session ids start with `replica` (see [`crate::http::sessions`]).
    pub fn with_replica(mut self, replica: &str) -> Self {
        self.replica = replica.to_owned();
        self
    }
}

impl Transport for Http {
    fn public(&self) -> bool {
        parse_listen(&self.config.listen).is_ok_and(|a| !a.ip().to_canonical().is_loopback())
    }

    /// Checks the address (a non-loopback one needs authentication or `public_without_auth`,
    /// [`check_listen`]), then binds it.
    fn prepare(&mut self) -> Result<()> {
        let listen = &self.config.listen;
        let addr = parse_listen(listen).with_context(|| format!("--http {listen:?}"))?;
        let auth_configured = self.auth.as_ref().is_some_and(|a| a.is_configured());
        check_listen(addr, auth_configured, self.config.public_without_auth)?;
        if !addr.ip().to_canonical().is_loopback() && !auth_configured {
            tracing::warn!(
                "serving {addr} WITHOUT authentication: anyone who can reach it can use it"
            );
        }
        let std = std::net::TcpListener::bind(addr)
            .with_context(|| format!("cannot listen on {addr}"))?;
        std.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(std)?;
        let local = listener.local_addr()?;
        tracing::info!("listening on http://{local}/mcp (health: /healthz, readiness: /readyz)");
        self.listener = Some(listener);
        Ok(())
    }

    async fn serve(mut self, index: Index, stop: Stop) -> Result<()> {
        let listener = self
            .listener
            .take()
            .context("the HTTP transport was not prepared")?;
        let state = HttpState::for_replica(self.config, &self.replica);
        let app = with_limits(router(&state, self.auth), &state);
        // The index is built while /healthz already answers (and /readyz says 503).
        let failed = {
            let state = state.clone();
            async move {
                match index.await {
                    Ok(Ok(built)) => {
                        // (installed first: `/mcp` and `/readyz` answer once the line is out)
                        let _ = state.server.set(built.server.clone());
                        built.serving("ready");
                        std::future::pending().await
                    }
                    Ok(Err(e)) => e,
                    Err(_) => anyhow!("the index build stopped"),
                }
            }
        };
        let mut failure = None;
        let delay = Duration::from_secs(state.config.shutdown_delay_seconds);
        let shutdown = async {
            tokio::select! {
                () = super::drain::drain(stop, &state.draining, delay) => {}
                e = failed => failure = Some(e),
            }
        };
        crate::http::serve(listener, app, state.clone(), shutdown).await;
        tracing::info!("http: stopped");
        failure.map_or(Ok(()), Err)
    }
}
