//! The approval routes of `hak serve` and `hak mcp --listen`: the calls parked on a
//! needs-approval verdict, and the decisions that wake one. Parking, timeouts, limits and the
//! quorum are [`crate::approvals`]'s; who is asking is [`super::auth`]'s; here is only HTTP.
//! The admin and the `[[approvers]]` (each by their own bearer key) may list and decide; the
//! approver is the one the key names (`admin` for the admin token), never a name in the body.
//! - `GET /v1/approvals` → `{"approvals": [{id, plugin, policyName, tool, stage, message,
//!   code, details, agent, context, normalisedParams, facts, askedAt, expiresAt, quorum,
//!   approvedBy}]}`
//! - `POST /v1/approvals/{id}/approve` and `.../deny`, body `{"note": "…"}` (optional) →
//!   `{"id", "decision", "by", "approvedBy", "quorum"}` (`decision`: `approved` once the
//!   quorum is met, `awaiting` while more approvers must approve, `denied`); 404 when no call
//!   waits under that id, 409 when this approver already approved it.

use super::openapi::{ApprovalDecided, ApprovalsBody, ErrorBody};
use super::{error, Admin};
use crate::approvals::{DecideError, Decided};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use std::sync::Arc;

/// Why (optional).
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    /// Not taken: the approver is who the bearer key names. Refused when given.
    #[schema(ignore)]
    by: Option<serde_json::Value>,
    /// A note for the agent and the log.
    note: Option<String>,
}

/// The approvals routes' check: the admin or an approver, nobody else.
pub(super) async fn require_approver(
    State(app): State<Arc<Admin>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if app.callers.may_see_approvals(request.headers()) {
        next.run(request).await
    } else {
        let (status, why) = app.callers.refusal();
        error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
            why,
        )
    }
}

/// The calls awaiting approval, oldest first.
#[utoipa::path(
    get,
    path = "/v1/approvals",
    tag = "admin",
    responses(
        (status = 200, description = "The calls awaiting a decision", body = ApprovalsBody),
        (status = 401, description = "The approvals routes need the admin token or an approver's key", body = ErrorBody),
    ),
    security((), ("admin_token" = []), ("approver_key" = []))
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
        (status = 200, description = "Approved: the call goes on once the quorum has approved", body = ApprovalDecided),
        (status = 400, description = "The body is not a decision", body = ErrorBody),
        (status = 401, description = "The approvals routes need the admin token or an approver's key", body = ErrorBody),
        (status = 403, description = "The admin token does not approve here ([approvals] admin_approves = false)", body = ErrorBody),
        (status = 404, description = "No call awaits approval under this id", body = ErrorBody),
        (status = 409, description = "This approver already approved the call", body = ErrorBody),
    ),
    security((), ("admin_token" = []), ("approver_key" = []))
)]
pub(super) async fn approve(
    State(app): State<Arc<Admin>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    decide(&app, &id, true, &headers, &body)
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
        (status = 401, description = "The approvals routes need the admin token or an approver's key", body = ErrorBody),
        (status = 403, description = "The admin token does not approve here ([approvals] admin_approves = false)", body = ErrorBody),
        (status = 404, description = "No call awaits approval under this id", body = ErrorBody),
        (status = 409, description = "This approver already approved the call", body = ErrorBody),
    ),
    security((), ("admin_token" = []), ("approver_key" = []))
)]
pub(super) async fn deny(
    State(app): State<Arc<Admin>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    decide(&app, &id, false, &headers, &body)
}

fn decide(app: &Admin, id: &str, approve: bool, headers: &HeaderMap, body: &str) -> Response {
    let by = match app.callers.approver(headers) {
        Ok(by) => by,
        Err((status, why)) => {
            return error(
                StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
                why,
            )
        }
    };
    let body: DecisionBody = if body.trim().is_empty() {
        DecisionBody::default()
    } else {
        match serde_json::from_str(body) {
            Ok(b) => b,
            Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid decision: {e}")),
        }
    };
    if body.by.is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid decision: `by` is not taken: the approver is who the bearer key names",
        );
    }
    if body.note.as_ref().is_some_and(|n| n.len() > 4096) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid decision: `note` is at most 4096 bytes",
        );
    }
    let decided = app
        .registry
        .host()
        .approvals()
        .decide(id, approve, &by, "admin-api", body.note);
    let (decision, view) = match decided {
        Ok(Decided::Final(view)) if approve => ("approved", view),
        Ok(Decided::Final(view)) => ("denied", view),
        Ok(Decided::Counted(view)) => ("awaiting", view),
        Err(e @ DecideError::AlreadyApproved(_)) => {
            return error(StatusCode::CONFLICT, e.to_string())
        }
        Err(e) => return error(StatusCode::NOT_FOUND, e.to_string()),
    };
    tracing::info!(approval = id, by = %by, "call {decision} through the admin API");
    Json(ApprovalDecided {
        id: id.to_owned(),
        decision: decision.to_owned(),
        by: by.to_string(),
        approved_by: view.approved_by,
        quorum: view.quorum,
    })
    .into_response()
}
