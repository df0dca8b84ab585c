//! Who a request comes from, for the events it causes: the authenticated subject of an HTTP
//! request ([`crate::http_auth::Identity`]), set around a tool call and read when an event is
//! tracked (in the call's task, or in the blocking thread it hands engine work to). stdio and
//! unauthenticated HTTP have no subject.

use std::cell::RefCell;
use std::future::Future;

tokio::task_local! {
    static SUBJECT: Option<String>;
}

thread_local! {
    static BLOCKING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with `subject` as the current subject.
pub async fn scope<F: Future>(subject: Option<String>, f: F) -> F::Output {
    SUBJECT.scope(subject, f).await
}

/// Runs the blocking `f` with `subject` as the current subject of this thread.
pub fn in_blocking<T>(subject: Option<String>, f: impl FnOnce() -> T) -> T {
    let before = BLOCKING.with(|b| b.replace(subject));
    let out = f();
    BLOCKING.with(|b| *b.borrow_mut() = before);
    out
}

/// The current subject, if any.
pub fn current() -> Option<String> {
    BLOCKING
        .with(|b| b.borrow().clone())
        .or_else(|| SUBJECT.try_with(Clone::clone).ok().flatten())
}

/// The subject of an rmcp request: the [`crate::http_auth::Identity`] the authentication
/// middleware put in the HTTP request's extensions.
pub fn of_request(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<crate::http_auth::Identity>())
        .map(|identity| identity.subject.clone())
}
