//! The axum layer: the bearer token of a request, then the scopes its body needs, then the
//! route; and the protected resource metadata routes.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, Uri, header},
    middleware::Next,
    response::{IntoResponse as _, Response},
    routing::get,
};

use super::{Authenticator, Refusal};
use crate::http_body::{BodyReader, RpcCall};

/// Wrap every route of `router` (the MCP endpoint at `/mcp`) with the bearer/JWT check and the
/// scope checks, and add `GET /.well-known/oauth-protected-resource` (and the path-suffixed
/// form RFC 9728 gives for the resource URL, e.g. `.../mcp`) when OAuth is on. Routes merged
/// after this call (e.g. `/healthz`) stay open. The body of a POST is read by `body` once the
/// token is accepted (so a stranger's body is never read), and handed on with its
/// [`RpcCall`] (the server's `/mcp` gate shares the reader and does not read it again).
pub fn apply(router: Router, auth: Arc<Authenticator>, body: BodyReader) -> Router {
    // A route layer: unknown paths stay 404, only the routes given are behind the check.
    let protected = router.route_layer(axum::middleware::from_fn_with_state(
        (auth.clone(), body),
        check,
    ));
    let Some(oauth) = &auth.oauth else {
        return protected;
    };
    let mut metadata = Router::new();
    for path in &oauth.metadata_paths {
        metadata = metadata.route(path, get(serve_metadata));
    }
    protected.merge(metadata.with_state(auth))
}

async fn serve_metadata(State(auth): State<Arc<Authenticator>>) -> Response {
    match auth.resource_metadata() {
        Some(m) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            m.to_string(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The middleware: token, then scopes (from the classified body of a POST), then the inner
/// route.
async fn check(
    State((auth, body)): State<(Arc<Authenticator>, BodyReader)>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let token = match bearer_token(request.headers(), request.uri()) {
        Ok(Some(token)) => token,
        Ok(None) => {
            return auth.refuse(&Refusal::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a bearer token is required",
            ));
        }
        Err(refusal) => {
            (auth.log)(&format!(
                "auth: {method} {path} refused: {}",
                refusal.description
            ));
            return auth.refuse(&refusal);
        }
    };
    let identity = match auth.authenticate(&token).await {
        Ok(identity) => identity,
        Err(refusal) => {
            (auth.log)(&format!("auth: {method} {path} refused: {refusal}"));
            return auth.refuse(&refusal);
        }
    };
    drop(token);
    let mut request = match body.read(request).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    // A JSON-RPC body needs the scopes of its calls; the discovery index and its files (GET)
    // read skills.
    let needed = match request.extensions().get::<RpcCall>() {
        Some(call) => Some(auth.required_scopes(call)),
        None if path.starts_with(crate::mcp::discovery::PREFIX) => {
            Some(std::iter::once(auth.scopes.read.clone()).collect())
        }
        None => None,
    };
    if let Some(needed) = needed {
        let missing: Vec<&str> = needed
            .iter()
            .filter(|s| !identity.has(s))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            (auth.log)(&format!(
                "auth: {method} {path} refused for {}: missing scope {}",
                identity.subject.escape_debug(),
                missing.join(" ")
            ));
            let mut refusal = Refusal::new(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "the token lacks a scope this request needs",
            );
            refusal.scope = Some(needed.into_iter().collect::<Vec<_>>().join(" "));
            return auth.refuse(&refusal);
        }
    }
    request.extensions_mut().insert(identity.clone());
    let mut response = next.run(request).await;
    response.extensions_mut().insert(identity);
    response
}

/// The bearer token of a request: `Ok(None)` without one (or with another scheme), a 400
/// refusal for two `Authorization` headers or a token in the query string (which the MCP
/// specification forbids: URLs end up in logs).
pub(crate) fn bearer_token(headers: &HeaderMap, uri: &Uri) -> Result<Option<String>, Refusal> {
    if let Some(query) = uri.query()
        && query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "tokens are accepted only in the Authorization header",
        ));
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "more than one Authorization header",
        ));
    }
    let Ok(value) = value.to_str() else {
        return Err(Refusal::invalid_token("malformed Authorization header"));
    };
    let value = value.trim();
    let Some((scheme, token)) = value.split_once(' ') else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    if token.is_empty() {
        return Ok(None);
    }
    Ok(Some(token.to_owned()))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn token(values: &[&str], uri: &str) -> Result<Option<String>, Refusal> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        bearer_token(&headers, &uri.parse().unwrap())
    }

    #[test]
    fn the_bearer_token_comes_from_one_authorization_header() {
        assert_eq!(token(&["Bearer abc"], "/mcp"), Ok(Some("abc".into())));
        assert_eq!(token(&["bearer   abc  "], "/mcp"), Ok(Some("abc".into())));
        // None, another scheme, an empty token: no token (401 unauthorized).
        assert_eq!(token(&[], "/mcp"), Ok(None));
        assert_eq!(token(&["Basic dXNlcjpwdw=="], "/mcp"), Ok(None));
        assert_eq!(token(&["Bearer"], "/mcp"), Ok(None));
        assert_eq!(token(&["Bearer  "], "/mcp"), Ok(None));
        // Other query parameters are fine.
        assert_eq!(
            token(&["Bearer abc"], "/mcp?x=access_tokens"),
            Ok(Some("abc".into()))
        );
    }

    #[test]
    fn two_headers_or_a_token_in_the_query_are_refused() {
        let r = token(&["Bearer a", "Bearer b"], "/mcp").unwrap_err();
        assert_eq!(
            (r.status, r.code),
            (StatusCode::BAD_REQUEST, "invalid_request")
        );
        let r = token(&["Bearer a"], "/mcp?x=1&access_token=a").unwrap_err();
        assert_eq!(
            (r.status, r.code),
            (StatusCode::BAD_REQUEST, "invalid_request")
        );
        let r = token(&[], "/mcp?access_token").unwrap_err();
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
    }
}
