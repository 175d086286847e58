//! The page's script and stylesheet, compiled into the binary (no build
//! step, nothing from a CDN), served with an ETag so a browser asks again
//! cheaply and gets 304 while the binary is the same.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The assets: name, content type, bytes.
pub const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
];

/// The ETag of an asset's bytes (a hash: the same bytes, the same tag).
pub fn etag(body: &str) -> String {
    format!("\"{:016x}\"", crate::index::state::fnv1a(body.as_bytes()))
}

/// `GET /assets/NAME`.
pub async fn serve(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(&(_, kind, body)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return super::app::not_found().await;
    };
    let tag = etag(body);
    let cached = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut resp = if cached {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, kind)], body).into_response()
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}
