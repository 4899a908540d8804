//! The decision log's admin route of `hak serve`: the recent calls as the log wrote them,
//! newest first, filtered. Keeping the recent lines is the log's business
//! ([`crate::observe::decisions`]); here is only HTTP.
//! - `GET /v1/decisions?outcome=&verdict=&plugin=&tool=&agent=&limit=` → `{"enabled", "path",
//!   "decisions": [line, …]}`; `enabled` is false (and the list empty) without `[decisions]`.

use super::openapi::{DecisionsBody, ErrorBody};
use super::{error, Admin};
use crate::observe::decisions::DecisionFilter;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The recent calls of the decision log, newest first.
#[utoipa::path(
    get,
    path = "/v1/decisions",
    operation_id = "list_decisions",
    tag = "admin",
    params(DecisionFilter),
    responses(
        (status = 200, description = "The recent calls (at most the last 1,000 written) that match, newest first", body = DecisionsBody),
        (status = 400, description = "A filter that is not one", body = ErrorBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn list(
    State(app): State<Arc<Admin>>,
    filter: Result<Query<DecisionFilter>, QueryRejection>,
) -> Response {
    let Query(filter) = match filter {
        Ok(filter) => filter,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    let log = app.registry.host().decision_log();
    Json(DecisionsBody {
        enabled: log.is_some(),
        path: log.map(|l| l.path().display().to_string()),
        decisions: log.map(|l| l.recent(&filter)).unwrap_or_default(),
    })
    .into_response()
}
