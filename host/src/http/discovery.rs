//! `GET /.well-known/agent-skills/index.json` and the files its entries name
//! ([`crate::mcp::discovery`] builds both for the caller's view; this serves the bytes). The
//! routes sit beside `/mcp`, behind the same `Host`/`Origin` guard and, when authentication is
//! configured, the same token check, needing the read scope. Without authentication the caller
//! is the one `/mcp` sees ([`crate::access::of_http`]): the local operator on loopback.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse as _, Response},
    routing::get,
};

use super::HttpState;
use crate::http_auth::Identity;
use crate::mcp::{SkillsServer, discovery};

/// The discovery routes, for [`super::router`] to put behind its guard and authentication.
pub(super) fn routes(state: &Arc<HttpState>) -> Router {
    Router::new()
        .route(discovery::INDEX_PATH, get(index))
        .route(&format!("{}{{*rest}}", discovery::FILES_PATH), get(file))
        .with_state(state.clone())
}

fn not_ready() -> Response {
    let mut r = (StatusCode::SERVICE_UNAVAILABLE, "not ready: indexing\n").into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The server and the caller of `request`; `None` while the index is not built yet.
fn server_and_caller(
    state: &HttpState,
    request: &Request,
) -> Option<(SkillsServer, crate::runtime::Caller)> {
    let server = state.server.get().cloned()?;
    let caller = crate::access::of_http(
        request.extensions().get::<Identity>(),
        &server.access(),
        server.services().public_http,
    );
    Some((server, caller))
}

async fn index(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let Some((server, caller)) = server_and_caller(&state, &request) else {
        return not_ready();
    };
    let Ok(built) =
        tokio::task::spawn_blocking(move || discovery::index(&server.view_for(&caller))).await
    else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "building the index failed\n",
        )
            .into_response();
    };
    let etag = HeaderValue::from_str(&built.etag).unwrap_or(HeaderValue::from_static("\"\""));
    // A client that has these bytes already gets a 304 (one small request per refresh).
    let fresh = request
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == built.etag || tag.trim() == "*");
    let cache = HeaderValue::from_static("private, no-cache");
    if fresh {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, etag), (header::CACHE_CONTROL, cache)],
        )
            .into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::ETAG, etag),
            (header::CACHE_CONTROL, cache),
        ],
        built.json.clone(),
    )
        .into_response()
}

async fn file(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let Some((server, caller)) = server_and_caller(&state, &request) else {
        return not_ready();
    };
    let rest = request
        .uri()
        .path()
        .strip_prefix(discovery::FILES_PATH)
        .unwrap_or_default()
        .to_owned();
    let found =
        tokio::task::spawn_blocking(move || discovery::file(&server.view_for(&caller), &rest))
            .await
            .ok()
            .flatten();
    let Some(artifact) = found else {
        return (
            StatusCode::NOT_FOUND,
            "not found: no skill serves these bytes now; read the index again\n",
        )
            .into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(artifact.content_type()),
            ),
            // The digest is in the path: these bytes never change.
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=31536000, immutable"),
            ),
        ],
        artifact.bytes,
    )
        .into_response()
}
