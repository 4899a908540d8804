//! The approval routes of `hak serve` (admin): the calls parked on a needs-approval verdict,
//! and the decision that wakes one. Parking, timeouts and limits are [`crate::approvals`]'s;
//! here is only HTTP.
//! - `GET /v1/approvals` → `{"approvals": [{id, plugin, policyName, tool, stage, message,
//!   code, details, agent, context, normalisedParams, facts, askedAt, expiresAt}]}`
//! - `POST /v1/approvals/{id}/approve` and `.../deny`, body `{"by": "alice", "note": "…"}`
//!   (both optional; `by` defaults to `admin`) → `{"id", "decision", "by"}`, 404 when no call
//!   waits under that id.

use super::openapi::{ApprovalDecided, ApprovalsBody, ErrorBody};
use super::{error, Admin};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

/// Who decides, and why (both optional).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    /// The approver's name, kept in the decision log (default `admin`).
    by: Option<String>,
    /// A note for the agent and the log.
    note: Option<String>,
}

/// The calls awaiting approval, oldest first.
#[utoipa::path(
    get,
    path = "/v1/approvals",
    tag = "admin",
    responses(
        (status = 200, description = "The calls awaiting a decision", body = ApprovalsBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn list(State(app): State<Arc<Admin>>) -> Response {
    let pending = app.registry.host().approvals().pending();
    Json(ApprovalsBody {
        approvals: pending
            .into_iter()
            .map(|p| serde_json::to_value(p).unwrap_or_default())
            .collect(),
    })
    .into_response()
}

/// Approve a parked call: its chain goes on.
#[utoipa::path(
    post,
    path = "/v1/approvals/{id}/approve",
    tag = "admin",
    params(("id" = String, Path, description = "The approval id (GET /v1/approvals)")),
    request_body(content = Option<DecisionBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Approved; the call goes on", body = ApprovalDecided),
        (status = 400, description = "The body is not a decision", body = ErrorBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 404, description = "No call awaits approval under this id", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn approve(
    State(app): State<Arc<Admin>>,
    Path(id): Path<String>,
    body: String,
) -> Response {
    decide(&app, &id, true, &body)
}

/// Deny a parked call: it ends blocked, with the policy's reason and the note.
#[utoipa::path(
    post,
    path = "/v1/approvals/{id}/deny",
    tag = "admin",
    params(("id" = String, Path, description = "The approval id (GET /v1/approvals)")),
    request_body(content = Option<DecisionBody>, content_type = "application/json"),
    responses(
        (status = 200, description = "Denied; the call ends blocked", body = ApprovalDecided),
        (status = 400, description = "The body is not a decision", body = ErrorBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 404, description = "No call awaits approval under this id", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
pub(super) async fn deny(
    State(app): State<Arc<Admin>>,
    Path(id): Path<String>,
    body: String,
) -> Response {
    decide(&app, &id, false, &body)
}

fn decide(app: &Admin, id: &str, approve: bool, body: &str) -> Response {
    let body: DecisionBody = if body.trim().is_empty() {
        DecisionBody::default()
    } else {
        match serde_json::from_str(body) {
            Ok(b) => b,
            Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid decision: {e}")),
        }
    };
    let by = body
        .by
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "admin".to_owned());
    if by.len() > 256 || body.note.as_ref().is_some_and(|n| n.len() > 4096) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid decision: `by` is at most 256 bytes, `note` at most 4096",
        );
    }
    match app
        .registry
        .host()
        .approvals()
        .decide(id, approve, &by, "admin-api", body.note)
    {
        Ok(_) => {
            let decision = if approve { "approved" } else { "denied" };
            tracing::info!(approval = id, by = %by, "call {decision} through the admin API");
            Json(ApprovalDecided {
                id: id.to_owned(),
                decision: decision.to_owned(),
                by,
            })
            .into_response()
        }
        Err(e) => error(StatusCode::NOT_FOUND, e.to_string()),
    }
}
