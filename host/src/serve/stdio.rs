//! MCP on stdin/stdout over the one start-up ([`super::run`]).

use std::time::Duration;

use anyhow::{Result, anyhow};

use super::{Index, Stop, Transport};

/// MCP on stdin/stdout: every line passes the JSON-RPC front ([`crate::jsonrpc`]) before rmcp
/// reads it; serving ends when the client closes stdin or at a stop signal.
pub struct Stdio;

impl Transport for Stdio {
    async fn serve(self, index: Index, stop: Stop) -> Result<()> {
        let built = index
            .await
            .map_err(|_| anyhow!("the index build stopped"))??;
        built.serving("serving MCP on stdio");
        let server = built.server;
        // Bad input gets one answer the client can match; over-long lines are skipped, not
        // buffered.
        let (transport, copied) = crate::jsonrpc::serve_stdio();
        let served = tokio::select! {
            served = server.serve_transport(transport) => served,
            () = stop => Ok(()),
        };
        // What rmcp wrote last reaches stdout before the process ends.
        let _ = tokio::time::timeout(Duration::from_secs(2), copied).await;
        served
    }
}
