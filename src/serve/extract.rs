//! What a handler takes from the request line: the query string and the
//! session id of the path, each read whole or refused with `400` and what
//! was wrong, in the API's JSON (`{"error": "..."}`) under `/api/` and as
//! text on a page. A value a client sends is never trusted to be well
//! formed: a negative or 20-digit number, `NaN`, a parameter given twice,
//! bytes that are not UTF-8 all end here, before any handler runs.

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

/// The query string's parameters, read into `T`.
pub struct Args<T>(pub T);

/// The `{id}` of the path, percent-decoded (any string).
pub struct Id(pub String);

/// A refusal of a request that cannot be read: JSON under `/api/`, text
/// elsewhere.
pub fn bad_request(path: &str, message: &str) -> Response {
    if path.starts_with("/api/") {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({ "error": message })),
        )
            .into_response()
    } else {
        (StatusCode::BAD_REQUEST, format!("pi-index: {message}\n")).into_response()
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Args<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        match Query::<T>::try_from_uri(&parts.uri) {
            Ok(Query(t)) => Ok(Args(t)),
            Err(e) => {
                let text = e.body_text();
                let why = text
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&text);
                Err(bad_request(
                    parts.uri.path(),
                    &format!(
                        "the query string cannot be read ({}): numbers are whole numbers of 0 or more, and each parameter is given once",
                        crate::search::query::shown(why).trim_matches('"')
                    ),
                ))
            }
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(id)) => Ok(Id(id)),
            Err(_) => Err(bad_request(
                parts.uri.path(),
                "the session id in the path cannot be read (it must be UTF-8, percent-encoded)",
            )),
        }
    }
}
