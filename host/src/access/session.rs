//! A session (the older protocol revisions' `Mcp-Session-Id`) belongs to the identity that
//! opened it: the same session id presented by another identity is answered 404, exactly as
//! an unknown session (the client starts a new one; nothing says the session exists).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{Request, State},
    http::{Method, StatusCode},
    middleware::Next,
    response::{IntoResponse as _, Response},
};

use crate::http_auth::Identity;
use sha2::{Digest as _, Sha256};

/// The header naming a session.
const SESSION_HEADER: &str = "mcp-session-id";
/// Most sessions remembered; beyond, the oldest owners are forgotten (their sessions then
/// answer 404 to everyone, and the clients start new ones).
const MAX_SESSIONS: usize = 100_000;

/// Who opened each session.
#[derive(Default, Clone)]
pub struct SessionOwners(Arc<Mutex<Owners>>);

#[derive(Default)]
struct Owners {
    by_session: HashMap<String, (u64, Owner)>,
    next: u64,
}

/// The identity a session is bound to: the SHA-256 of everything the view depends on (its
/// kind, subject, groups and scopes; `-` for a request without one, no authentication), so
/// that a session costs the same memory whatever its token holds.
type Owner = [u8; 32];

fn owner(request: &Request) -> Owner {
    let text = match request.extensions().get::<Identity>() {
        Some(i) => format!(
            "{:?}\n{}\n{:?}\n{:?}\n{:?}",
            i.kind, i.subject, i.sub, i.groups, i.scopes
        ),
        None => "-".into(),
    };
    Sha256::digest(text.as_bytes()).into()
}

/// The layer: a request naming a session of another identity is refused (404); a response
/// that opens a session records its owner; a session deleted is forgotten.
pub async fn bind(State(owners): State<SessionOwners>, request: Request, next: Next) -> Response {
    let who = owner(&request);
    let presented = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &presented {
        let guard = owners.0.lock().unwrap_or_else(|e| e.into_inner());
        // Every session opened here was recorded below, so an id without an owner is unknown
        // or forgotten (over MAX_SESSIONS): 404 as well, never a session open to any identity.
        match guard.by_session.get(id) {
            Some((_, o)) if *o == who => {}
            Some(_) => {
                drop(guard);
                tracing::warn!(
                    "a session was presented by another identity than the one that opened it; refused (404)"
                );
                return (StatusCode::NOT_FOUND, "session not found\n").into_response();
            }
            None => {
                drop(guard);
                return (StatusCode::NOT_FOUND, "session not found\n").into_response();
            }
        }
    }
    let deleting = request.method() == Method::DELETE;
    let response = next.run(request).await;
    // The lock is taken only by a request that closes or opens a session (a stateless request
    // passes without it).
    match (&presented, response.headers().get(SESSION_HEADER)) {
        (Some(id), _) if deleting && response.status().is_success() => {
            let mut guard = owners.0.lock().unwrap_or_else(|e| e.into_inner());
            guard.by_session.remove(id);
        }
        (None, Some(opened)) => {
            if let Ok(id) = opened.to_str() {
                let mut guard = owners.0.lock().unwrap_or_else(|e| e.into_inner());
                guard.next += 1;
                let n = guard.next;
                guard.by_session.insert(id.to_owned(), (n, who));
                if guard.by_session.len() > MAX_SESSIONS {
                    let cut = n.saturating_sub(MAX_SESSIONS as u64 / 2);
                    guard.by_session.retain(|_, (k, _)| *k > cut);
                }
            }
        }
        _ => {}
    }
    response
}
