//! Stop signals and the drain of an HTTP replica.
//!
//! [`stop_signal`] resolves on SIGINT or SIGTERM; [`super::run`] turns it into the transport's
//! `Stop`. Over HTTP, [`drain`] sits between that signal and closing the listener: `/readyz`
//! answers 503 for `server.shutdown_delay_seconds` while every request is still served, which
//! is what a load balancer (or Kubernetes removing the pod from its endpoints) needs to stop
//! sending new requests before the listener goes away. Then [`crate::http::serve`] stops
//! accepting, lets the requests in flight finish within `server.shutdown_grace_seconds`, and
//! [`super::run`] flushes usage and returns (exit 0).

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use super::Stop;

/// Resolves on SIGINT or (Unix) SIGTERM, naming it.
pub async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// Waits for `stop`, then marks the replica `draining` (so `/readyz` answers 503) and keeps
/// serving for `delay`; a second stop signal ends the delay at once. Returns when the listener
/// should close.
pub async fn drain(stop: Stop, draining: &AtomicBool, delay: Duration) {
    stop.await;
    draining.store(true, Ordering::SeqCst);
    if delay.is_zero() {
        return;
    }
    tracing::info!(
        "draining: /readyz answers 503 for {} s while requests are still served",
        delay.as_secs()
    );
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        signal = stop_signal() => tracing::info!("{signal} again; closing the listener now"),
    }
}
