//! Sessions of older (`initialize`) clients whose id names the replica that owns them.
//!
//! A session lives in the process that created it. Behind a load balancer with several
//! replicas, its requests must reach that process: [`ReplicaSessions`] is rmcp's
//! [`LocalSessionManager`] with one difference, the id it hands out is `{replica}.{uuid}`, so a
//! proxy can route on the `Mcp-Session-Id` prefix (deploy/nginx/nginx.conf does, with a `map`).
//! A request for a session this process does not hold (the replica restarted, or the proxy sent
//! it elsewhere) gets rmcp's 404, after which the client initializes again.

use futures_core::Stream;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::{
        WorkerTransport,
        common::server_side_http::{ServerSseMessage, SessionId, session_id},
        streamable_http_server::{
            SessionManager,
            session::local::{
                LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
                create_local_session,
            },
        },
    },
};

/// rmcp's local sessions, with ids prefixed by the replica id.
#[derive(Debug, Default)]
pub struct ReplicaSessions {
    /// `{replica}.` (empty: plain uuids).
    prefix: String,
    local: LocalSessionManager,
}

impl ReplicaSessions {
    /// Sessions whose ids start with `replica` and a dot (see [`session_prefix`]).
    pub fn new(replica: &str) -> Self {
        Self {
            prefix: session_prefix(replica),
            local: LocalSessionManager::default(),
        }
    }

    /// A new session id: the prefix, then a random uuid.
    fn new_id(&self) -> SessionId {
        format!("{}{}", self.prefix, session_id()).into()
    }
}

/// `{replica}.` for a session id: only ASCII letters, digits, `-` and `_` are kept (a header
/// value a proxy can match with `^[A-Za-z0-9_-]+\.`), at most 63 of them; empty when nothing
/// is left.
pub fn session_prefix(replica: &str) -> String {
    let kept: String = replica
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(63)
        .collect();
    if kept.is_empty() {
        kept
    } else {
        format!("{kept}.")
    }
}

impl SessionManager for ReplicaSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    /// As [`LocalSessionManager::create_session`], with the replica's id.
    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let id = self.new_id();
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        self.local.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_keeps_what_a_proxy_can_match() {
        assert_eq!(session_prefix("r1"), "r1.");
        assert_eq!(session_prefix(" pod-7_a.b\n"), "pod-7_ab.");
        assert_eq!(session_prefix("..."), "");
        assert_eq!(session_prefix(&"x".repeat(100)).len(), 64);
    }

    #[tokio::test]
    async fn a_new_session_id_starts_with_the_replica() {
        let sessions = ReplicaSessions::new("r2");
        let (id, _transport) = sessions.create_session().await.unwrap();
        let (replica, rest) = id.split_once('.').unwrap();
        assert_eq!(replica, "r2");
        assert_eq!(rest.len(), 36, "{id}");
        assert!(sessions.has_session(&id).await.unwrap());
        assert!(!sessions.has_session(&"r2.gone".into()).await.unwrap());
        sessions.close_session(&id).await.unwrap();
        assert!(!sessions.has_session(&id).await.unwrap());
    }
}
