//! Why a request is refused, and the answer: status, `WWW-Authenticate` challenge, a JSON body
//! with a fixed description (never a token).

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse as _, Response},
};
use serde_json::json;

use super::Authenticator;

impl Authenticator {
    /// `WWW-Authenticate` for a refusal.
    fn challenge(&self, error: Option<(&str, &str)>, scope: Option<&str>) -> String {
        let mut parts = Vec::new();
        match &self.oauth {
            Some(o) => parts.push(format!("resource_metadata=\"{}\"", o.metadata_url)),
            None => parts.push("realm=\"skills-mcp\"".to_string()),
        }
        if let Some((code, description)) = error {
            parts.push(format!("error=\"{code}\""));
            parts.push(format!("error_description=\"{description}\""));
        }
        if let Some(scope) = scope {
            parts.push(format!("scope=\"{scope}\""));
        }
        format!("Bearer {}", parts.join(", "))
    }

    pub(super) fn refuse(&self, refusal: &Refusal) -> Response {
        let mut response = (
            refusal.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json!({"error": refusal.code, "error_description": refusal.description}).to_string(),
        )
            .into_response();
        let challenge = match refusal.status {
            StatusCode::UNAUTHORIZED if refusal.code == "unauthorized" => {
                Some(self.challenge(None, None))
            }
            StatusCode::UNAUTHORIZED => {
                Some(self.challenge(Some((refusal.code, refusal.description)), None))
            }
            StatusCode::FORBIDDEN => Some(self.challenge(
                Some((refusal.code, refusal.description)),
                refusal.scope.as_deref(),
            )),
            StatusCode::BAD_REQUEST => {
                Some(self.challenge(Some((refusal.code, refusal.description)), None))
            }
            _ => None,
        };
        if let Some(c) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, c);
        }
        // Counted with the request by the HTTP limits layer.
        let reason = match refusal.status {
            StatusCode::FORBIDDEN => "scope",
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            StatusCode::SERVICE_UNAVAILABLE => "auth_unavailable",
            _ => "auth",
        };
        response
            .extensions_mut()
            .insert(crate::telemetry::metrics::Refused(reason));
        if refusal.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        }
        response
    }
}

/// Why a request is refused (status, OAuth error code, a fixed description; never a token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    /// `unauthorized` (no token), `invalid_token`, `invalid_request`, `insufficient_scope`,
    /// `request_too_large`, `temporarily_unavailable`.
    pub code: &'static str,
    pub description: &'static str,
    /// The scopes needed (for `insufficient_scope`).
    pub scope: Option<String>,
}

impl Refusal {
    pub(super) fn new(status: StatusCode, code: &'static str, description: &'static str) -> Self {
        Self {
            status,
            code,
            description,
            scope: None,
        }
    }
    pub(super) fn invalid_token(description: &'static str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_token", description)
    }
    pub(super) fn unavailable(description: &'static str) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            description,
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.description
        )
    }
}
