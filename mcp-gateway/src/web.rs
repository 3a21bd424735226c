//! What every web surface of the gateway shares: the answer to a refused
//! request, and the same-origin check of a posted form.

use axum::Json;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use neotoma_core::NeotomaError;

/// An HTTP answer carrying the error envelope, for what is refused before
/// MCP sees the request.
pub fn refuse(status: StatusCode, error: NeotomaError) -> Response {
    (status, Json(error.envelope(None))).into_response()
}

/// Whether a form was posted from this server's own pages: a browser says
/// where it was posted from (Origin), which must be this host. Requests
/// without Origin (not from a browser's cross-site form) pass.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    url::Url::parse(origin).is_ok_and(|o| {
        let authority = match o.port() {
            Some(p) => format!("{}:{p}", o.host_str().unwrap_or_default()),
            None => o.host_str().unwrap_or_default().to_string(),
        };
        host == Some(authority.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn writes_from_another_origin_are_refused() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(!same_origin(&h));
    }
}
