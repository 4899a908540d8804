//! The kill switch's admin routes ([`crate::pause`]; the host does the pausing): what holds,
//! pause, resume. Here is only HTTP.
//! - `GET /v1/pause` → `{"paused": bool, "pause": {reason, by, at, atMs} | null}`
//! - `POST /v1/pause`, body `{"reason": "…"}` (required) → the same; 503 when this process is
//!   paused but the state store did not record it (other replicas and a restart do not see it)
//! - `POST /v1/resume` → the same; 503 when the store did not record the resume (still paused)

use super::openapi::{ErrorBody, PauseBody};
use super::{error, Admin};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

/// Why hak is paused.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// What the agents are told (at most 1,024 characters kept).
    reason: String,
}

/// Who changes the switch: the admin token's holder.
const BY: &str = "admin";

fn state(app: &Admin) -> PauseBody {
    let pause = app.registry.host().paused().map(|p| (*p).clone());
    PauseBody {
        paused: pause.is_some(),
        pause,
    }
}

/// Whether hak is paused, and why.
#[utoipa::path(
    get,
    path = "/v1/pause",
    tag = "admin",
    responses(
        (status = 200, description = "The kill switch", body = PauseBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn show(State(app): State<Arc<Admin>>) -> Response {
    Json(state(&app)).into_response()
}

/// Pause: every tool that changes the ledger is blocked at once with the reason (queries
/// still answer), calls parked for approval are denied; kept in the state store.
#[utoipa::path(
    post,
    path = "/v1/pause",
    tag = "admin",
    request_body(content = PauseRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Paused, and recorded in the state store", body = PauseBody),
        (status = 400, description = "No reason given", body = ErrorBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 503, description = "Paused on this process only: the state store did not record it", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn pause(State(app): State<Arc<Admin>>, body: String) -> Response {
    let request: PauseRequest = match serde_json::from_str(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("invalid pause: {e} (body: {{\"reason\": \"…\"}})"),
            )
        }
    };
    if request.reason.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "invalid pause: `reason` is empty");
    }
    let host = app.registry.host().clone();
    let done = tokio::task::spawn_blocking(move || {
        host.pause(request.reason.trim(), BY)
            .map(|_| ())
            .map_err(|(_, e)| e)
    })
    .await;
    match done {
        Ok(Ok(())) => Json(state(&app)).into_response(),
        Ok(Err(e)) => error(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Resume: recorded in the state store first, then calls run again.
#[utoipa::path(
    post,
    path = "/v1/resume",
    tag = "admin",
    responses(
        (status = 200, description = "Resumed", body = PauseBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 503, description = "Still paused: the state store did not record the resume", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn resume(State(app): State<Arc<Admin>>) -> Response {
    let host = app.registry.host().clone();
    match tokio::task::spawn_blocking(move || host.resume(BY)).await {
        Ok(Ok(())) => Json(state(&app)).into_response(),
        Ok(Err(e)) => error(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
